"""Retail chain state: stores in several cities, the product catalog, per-store inventory and prices,
pickup reservations, transfers between stores, supplier restocks and pickup sales.

Prices are integer hundredths of the store's local currency (``*_cents``; yen prices are whole yen, so
multiples of 100). Store hours are local to the store's time zone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from servers.kit import Cell, Counters, State, Table, ToolError, require

ReservationStatus = Literal["preparing", "ready", "picked_up", "cancelled", "expired"]
Category = Literal["Electronics", "Home", "Kitchen", "Toys & Games", "Outdoor", "Apparel", "Beauty", "Office"]
ACTIVE_RESERVATION: tuple[str, ...] = ("preparing", "ready")

FX_PER_USD: dict[str, float] = {"USD": 1.0, "CAD": 1.37, "GBP": 0.79, "EUR": 0.92, "JPY": 157.0, "AUD": 1.51}
CURRENCY_OF_COUNTRY: dict[str, str] = {"US": "USD", "CA": "CAD", "GB": "GBP", "FR": "EUR", "DE": "EUR", "JP": "JPY",
                                       "AU": "AUD"}
PICKUP_PREP_MINUTES = 60
PICKUP_HOLD_HOURS = 48
NEW_LISTING_CAPACITY = 40  # shelf space a store gives a product it receives for the first time


@dataclass
class Store:
    store_id: str
    name: str
    city: str
    region: str
    country: str
    timezone: str
    currency: str
    address: str
    phone: str
    lat: float
    lon: float
    format: str  # flagship | standard | express
    hours: dict[str, list[str] | None]  # "mon" -> ["09:00", "21:00"], None = closed all day
    pickup_enabled: bool
    manager: str
    reopens_on: str | None = None  # temporarily closed (renovation) until this local date


@dataclass
class Product:
    sku: str
    name: str
    category: str
    brand: str
    list_price_usd_cents: int
    unit_cost_usd_cents: int
    lead_time_days: int  # supplier delivery time for restocks
    supplier: str
    max_per_customer: int | None = None  # limited items: most units one customer may hold in pickups
    discontinued: bool = False


@dataclass
class Inventory:
    store_id: str
    sku: str
    on_hand: int
    reserved: int  # held for active pickup reservations (part of on_hand)
    price_cents: int  # this store's shelf price, local currency
    capacity: int  # shelf + backroom space for the product
    reorder_point: int
    aisle: str
    last_received: str | None = None

    @property
    def available(self) -> int:
        return self.on_hand - self.reserved


@dataclass
class Reservation:
    reservation_id: str
    store_id: str
    sku: str
    quantity: int
    unit_price_cents: int  # locked when reserved
    currency: str
    customer_name: str
    customer_phone: str
    pickup_code: str  # 6 digits, sent to the customer; needed at the counter
    status: str
    created_at: str
    ready_at: str
    expires_at: str
    closed_at: str | None = None


@dataclass
class Transfer:
    transfer_id: str
    sku: str
    from_store_id: str
    to_store_id: str
    quantity: int
    status: str  # in_transit | received
    requested_at: str
    eta: str
    received_at: str | None = None
    note: str = ""


@dataclass
class Restock:
    restock_id: str
    store_id: str
    sku: str
    quantity: int
    supplier: str
    status: str  # ordered | delivered
    ordered_at: str
    eta: str
    delivered_at: str | None = None


@dataclass
class Sale:
    sale_id: str
    reservation_id: str
    store_id: str
    sku: str
    quantity: int
    unit_price_cents: int
    total_cents: int
    currency: str
    customer_name: str
    sold_at: str


class RetailChainState(State):
    stores: Table[Store]
    products: Table[Product]
    inventory: Table[Inventory]
    reservations: Table[Reservation]
    transfers: Table[Transfer]
    restocks: Table[Restock]
    sales: Table[Sale]
    counters: Cell[Counters]


# ---------------------------------------------------------------- money in local currency
def local_cents(usd_cents: int, currency: str, *, retail: bool) -> int:
    """Convert a USD amount; retail prices end in .99 (yen: whole tens), costs are exact to the unit."""
    amount = usd_cents * FX_PER_USD[currency] / 100
    if currency == "JPY":
        return round(amount / 10) * 1000 if retail else round(amount) * 100
    return int(amount) * 100 + 99 if retail else round(amount * 100)


def money(cents: int) -> float:
    return round(cents / 100, 2)


def digits(phone: str) -> str:
    return "".join(ch for ch in phone if ch.isdigit())


def inv_key(store_id: str, sku: str) -> str:
    return f"{store_id}/{sku}"


# ---------------------------------------------------------------- lookups naming the argument at fault
def get_store(s: RetailChainState, store_id: str, field: str = "store_id") -> Store:
    return require(s.stores, store_id, field)


def get_product(s: RetailChainState, sku: str) -> Product:
    return require(s.products, sku.strip().upper(), "sku")


def stocked(s: RetailChainState, store: Store, product: Product, field: str = "store_id") -> Inventory:
    """The store's inventory line for the product, or a 'wrong store' error pointing at stores that have it."""
    inv = s.inventory.get(inv_key(store.store_id, product.sku))
    if inv is None:
        nearby = [st.name for st in s.stores.values() if st.city == store.city and st.store_id != store.store_id
                  and (other := s.inventory.get(inv_key(st.store_id, product.sku))) and other.available > 0]
        hint = f"; in {store.city} it is available at {', '.join(nearby)}" if nearby else ""
        raise ToolError(f"{store.name} ({store.store_id}) does not carry {product.name} ({product.sku}){hint}",
                        field=field, code="wrong_store")
    return inv


def incoming(s: RetailChainState, store_id: str, sku: str) -> int:
    """Units on their way to the store (transfers in transit and open supplier restocks)."""
    return (sum(t.quantity for t in s.transfers.values()
                if t.status == "in_transit" and t.to_store_id == store_id and t.sku == sku)
            + sum(r.quantity for r in s.restocks.values()
                  if r.status == "ordered" and r.store_id == store_id and r.sku == sku))
