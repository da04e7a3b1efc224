"""Retail chain discovery tools (hidden from the model): enumerate the live world for query synthesis.

They expose what a synthesized user would know: store names and cities, what each store stocks and
at what price, and customers' pickup reservations with their names, phones and pickup codes.
"""

from __future__ import annotations

from typing import Literal

from servers.kit import discovery, now, value_counts
from servers.retail_chain.rules import store_clock
from servers.retail_chain.state import ReservationStatus, RetailChainState, money
from servers.retail_chain.tools_pickup import reservation_view


@discovery(produces=("store_id",))
def retail_chain_list_stores(s: RetailChainState, city: str | None = None) -> list:
    """Every store with city, country, currency, format, manager, weekly hours, pickup counter and
    whether it is open now.

    Args:
        city: Only stores in this city (exact name).
    """
    return [{"store_id": st.store_id, "name": st.name, "city": st.city, "country": st.country,
             "currency": st.currency, "format": st.format, "manager": st.manager, "address": st.address,
             "phone": st.phone, "hours": st.hours, "pickup_enabled": st.pickup_enabled,
             **store_clock(st, now(s)), "product_lines": sum(1 for i in s.inventory.values()
                                                              if i.store_id == st.store_id)}
            for st in s.stores.values() if city is None or st.city == city]


@discovery(produces=("sku",))
def retail_chain_list_stock(s: RetailChainState, store_id: str | None = None, sku: str | None = None,
                            min_available: int = 0) -> list:
    """Inventory lines (store x product) with product names, units on hand / held / available, shelf
    capacity and the store's price.

    Args:
        store_id: Only this store's lines.
        sku: Only this product's lines.
        min_available: Only lines with at least this many units available.
    """
    out = []
    for inv in s.inventory.values():
        if (store_id and inv.store_id != store_id) or (sku and inv.sku != sku) or inv.available < min_available:
            continue
        p, st = s.products[inv.sku], s.stores[inv.store_id]
        out.append({"store_id": st.store_id, "store_name": st.name, "city": st.city, "sku": p.sku,
                    "product_name": p.name, "category": p.category, "brand": p.brand, "on_hand": inv.on_hand,
                    "reserved": inv.reserved, "available": inv.available, "capacity": inv.capacity,
                    "price": money(inv.price_cents), "currency": st.currency, "discontinued": p.discontinued,
                    "limit_per_customer": p.max_per_customer})
    return out


@discovery(produces=("reservation_id",))
def retail_chain_list_reservations(s: RetailChainState, status: ReservationStatus | None = None) -> list:
    """Every pickup reservation with the customer's name, phone and pickup code.

    Args:
        status: Only reservations in this state.
    """
    return [{**reservation_view(s, r), "pickup_code": r.pickup_code} for r in s.reservations.values()
            if status is None or r.status == status]


@discovery
def retail_chain_get_unique_values(s: RetailChainState, field: Literal[
        "city", "country", "currency", "format", "category", "brand", "reservation_status", "transfer_status",
        "restock_status"]) -> list:
    """Distinct values of a categorical field with their counts.

    Args:
        field: Which field to enumerate.
    """
    if field in ("city", "country", "currency", "format"):
        values = [getattr(st, field) for st in s.stores.values()]
    elif field in ("category", "brand"):
        values = [getattr(p, field) for p in s.products.values()]
    elif field == "reservation_status":
        values = [r.status for r in s.reservations.values()]
    elif field == "transfer_status":
        values = [t.status for t in s.transfers.values()]
    else:
        values = [r.status for r in s.restocks.values()]
    return value_counts(values)
