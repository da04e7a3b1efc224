"""Retail chain tools for buy-online-pick-up-in-store: reserve, look up, collect and cancel pickups.

A reservation holds units at one store (they stop counting as available), is prepared for an hour of
opening time, then waits 48 hours at the counter before it expires and the units go back on the shelf
(``on_time``). Collecting needs the six-digit pickup code and the store to be open.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

from pydantic import Field

from servers.kit import Name, Phone, Sensitive, ToolError, iso, new_id, now, require, tool
from servers.retail_chain.rules import is_open, need_not_closed_down, need_open, next_opening
from servers.retail_chain.state import (
    ACTIVE_RESERVATION,
    PICKUP_HOLD_HOURS,
    PICKUP_PREP_MINUTES,
    Reservation,
    ReservationStatus,
    RetailChainState,
    Sale,
    digits,
    get_product,
    get_store,
    inv_key,
    money,
    stocked,
)

PickupCode = Annotated[Sensitive, Field(pattern=r"^\d{6}$")]


def reservation_view(s: RetailChainState, r: Reservation) -> dict[str, Any]:
    store, product = s.stores[r.store_id], s.products[r.sku]
    return {"reservation_id": r.reservation_id, "status": r.status, "store_id": r.store_id, "store_name": store.name,
            "city": store.city, "sku": r.sku, "product_name": product.name, "quantity": r.quantity,
            "unit_price": money(r.unit_price_cents), "total": money(r.unit_price_cents * r.quantity),
            "currency": r.currency, "customer_name": r.customer_name, "customer_phone": r.customer_phone,
            "created_at": r.created_at, "ready_at": r.ready_at, "hold_expires_at": r.expires_at,
            "closed_at": r.closed_at}


def _reservation(s: RetailChainState, reservation_id: str) -> Reservation:
    return require(s.reservations, reservation_id.strip().upper(), "reservation_id")


def _not_active(r: Reservation, action: str) -> ToolError:
    what = {"picked_up": f"was already picked up at {r.closed_at}", "cancelled": f"was cancelled at {r.closed_at}",
            "expired": f"expired at {r.expires_at} (not collected within {PICKUP_HOLD_HOURS} hours) and the items "
                       "went back on the shelf; make a new reservation"}[r.status]
    return ToolError(f"cannot {action} reservation {r.reservation_id}: it {what}", field="reservation_id",
                     code="expired" if r.status == "expired" else "illegal_transition")


@tool(consumes=("store_id", "sku"), produces=("reservation_id",), establishes=("pickup_reserved",))
def reserve_for_store_pickup(s: RetailChainState, store_id: str, sku: str,
                             quantity: Annotated[int, Field(ge=1, le=10)], customer_name: Name,
                             customer_phone: Phone) -> dict:
    """Hold units of a product at one store for a customer to collect. The store must offer pickup and
    have the units available; limited items have a per-customer cap. The result includes the pickup
    code the customer shows at the counter, when the order will be ready and how long it is held.

    Args:
        store_id: The store to collect from, e.g. ST-104.
        sku: The product SKU, e.g. BM-12345.
        quantity: Units to hold.
        customer_name: Who will collect.
        customer_phone: The customer's phone number (the pickup code is texted there).
    """
    store = get_store(s, store_id)
    product = get_product(s, sku)
    at = now(s)
    need_not_closed_down(store, at)
    if not store.pickup_enabled:
        raise ToolError(f"{store.name} is an express store without a pickup counter; choose a standard or "
                        "flagship store", field="store_id", code="pickup_unavailable")
    inv = stocked(s, store, product)
    if quantity > inv.available:
        others = sorted((i for i in s.inventory.values() if i.sku == product.sku and i.store_id != store.store_id
                         and s.stores[i.store_id].city == store.city and i.available >= quantity),
                        key=lambda i: -i.available)
        hint = "; " + ", ".join(f"{s.stores[i.store_id].name} has {i.available}" for i in others) if others else ""
        raise ToolError(f"only {inv.available} of {product.name} available at {store.name} "
                        f"({inv.on_hand} on hand, {inv.reserved} held for other pickups){hint}", field="quantity",
                        code="out_of_stock")
    if product.max_per_customer:
        held = sum(r.quantity for r in s.reservations.values() if r.status in ACTIVE_RESERVATION
                   and r.sku == product.sku and digits(r.customer_phone) == digits(customer_phone))
        if held + quantity > product.max_per_customer:
            raise ToolError(f"{product.name} is limited to {product.max_per_customer} per customer and this phone "
                            f"number already holds {held} in open pickups", field="quantity", code="limit_exceeded")
    start = at if is_open(store, at) else (next_opening(store, at) or at)
    ready = start + timedelta(minutes=PICKUP_PREP_MINUTES)
    rid = new_id(s.counters, "PU")
    code = f"{(int(digits(customer_phone)[-6:] or 0) * 7919 + int(rid[3:]) * 104729) % 1_000_000:06d}"
    res = s.reservations.put(rid, Reservation(
        rid, store.store_id, product.sku, quantity, inv.price_cents, store.currency, customer_name.strip(),
        customer_phone, code, "preparing", iso(at), iso(ready), iso(ready + timedelta(hours=PICKUP_HOLD_HOURS))))
    s.inventory.edit(inv_key(store.store_id, product.sku)).reserved += quantity
    return {**reservation_view(s, res), "pickup_code": code}


@tool(produces=("reservation_id",), consumes=("store_id",), read_only=True)
def list_store_pickups(s: RetailChainState, customer_phone: Phone | None = None, store_id: str | None = None,
                       status: ReservationStatus | None = None,
                       limit: Annotated[int, Field(ge=1, le=100)] = 20) -> list:
    """Look up pickup reservations by the customer's phone number and/or store, optionally only one
    status, newest first, with the product, price, readiness time and when the hold runs out.

    Args:
        customer_phone: The phone number the reservation was made with (any formatting).
        store_id: Only reservations at this store, e.g. ST-104.
        status: Only reservations in this state.
        limit: Most reservations to return.
    """
    if store_id:
        get_store(s, store_id)
    want = digits(customer_phone) if customer_phone else None
    rows = [r for r in s.reservations.values()
            if (want is None or digits(r.customer_phone) == want) and (store_id is None or r.store_id == store_id)
            and (status is None or r.status == status)]
    rows.sort(key=lambda r: (r.created_at, r.reservation_id), reverse=True)
    return [reservation_view(s, r) for r in rows[:limit]]


@tool(consumes=("reservation_id",), requires=("pickup_reserved",), produces=("sale_id",))
def complete_store_pickup(s: RetailChainState, reservation_id: str, pickup_code: PickupCode) -> dict:
    """Hand a ready pickup order to the customer at the store counter and record the sale. Needs the
    customer's six-digit pickup code, the order to be ready, and the store to be open now.

    Args:
        reservation_id: The pickup reservation, e.g. PU-0007.
        pickup_code: The six-digit code the customer received when reserving.
    """
    res = _reservation(s, reservation_id)
    if res.status not in ACTIVE_RESERVATION:
        raise _not_active(res, "complete")
    if pickup_code != res.pickup_code:
        raise ToolError(f"incorrect pickup_code for reservation {res.reservation_id}", field="pickup_code",
                        code="auth")
    at = now(s)
    if res.status == "preparing":
        raise ToolError(f"reservation {res.reservation_id} is still being prepared; it will be ready at "
                        f"{res.ready_at}", field="reservation_id", code="not_ready")
    store = s.stores[res.store_id]
    need_open(store, at, "hand over the pickup")
    edited = s.reservations.edit(res.reservation_id)
    edited.status, edited.closed_at = "picked_up", iso(at)
    inv = s.inventory.edit(inv_key(res.store_id, res.sku))
    inv.reserved -= res.quantity
    inv.on_hand -= res.quantity
    sid = new_id(s.counters, "SALE")
    sale = s.sales.put(sid, Sale(sid, res.reservation_id, res.store_id, res.sku, res.quantity, res.unit_price_cents,
                                 res.unit_price_cents * res.quantity, res.currency, res.customer_name, iso(at)))
    return {"sale_id": sid, "total": money(sale.total_cents), "currency": sale.currency,
            "reservation": reservation_view(s, edited)}


@tool(consumes=("reservation_id",), requires=("pickup_reserved",))
def cancel_store_pickup(s: RetailChainState, reservation_id: str) -> dict:
    """Cancel a pickup reservation that is still being prepared or waiting at the counter; its units go
    back to being available at the store.

    Args:
        reservation_id: The pickup reservation, e.g. PU-0007.
    """
    res = _reservation(s, reservation_id)
    if res.status not in ACTIVE_RESERVATION:
        raise _not_active(res, "cancel")
    edited = s.reservations.edit(res.reservation_id)
    edited.status, edited.closed_at = "cancelled", iso(now(s))
    s.inventory.edit(inv_key(res.store_id, res.sku)).reserved -= res.quantity
    inv = s.inventory[inv_key(res.store_id, res.sku)]
    return {**reservation_view(s, edited), "released_units": res.quantity, "now_available": inv.available}
