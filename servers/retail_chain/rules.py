"""Retail chain rules shared by the tools: local store hours, temporary closures, transit times, and
the clock hook that moves pickups, transfers and restocks along.

``on_time`` runs whenever the session clock moves. In table key order it marks pickup reservations
ready once their preparation is done, expires ready reservations whose hold ran out (their units go
back on the shelf), receives transfers whose truck arrived (creating the product line at a store that
did not carry it yet) and delivers supplier restocks that are due. Every record changes at its own
due time, so one long advance equals many short ones.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from servers.kit import ToolError, iso
from servers.kit.geo import haversine_km
from servers.retail_chain.state import (
    NEW_LISTING_CAPACITY,
    Inventory,
    RetailChainState,
    Store,
    inv_key,
    local_cents,
)

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def local_time(store: Store, t: datetime) -> datetime:
    return t.astimezone(ZoneInfo(store.timezone))


def temporarily_closed(store: Store, t: datetime) -> bool:
    return store.reopens_on is not None and local_time(store, t).date().isoformat() < store.reopens_on


def _window(store: Store, day: datetime) -> tuple[datetime, datetime] | None:
    hours = store.hours.get(DAYS[day.weekday()])
    if not hours:
        return None
    start = day.replace(hour=0, minute=0, second=0, microsecond=0)
    oh, om = map(int, hours[0].split(":"))
    ch, cm = map(int, hours[1].split(":"))
    return start + timedelta(hours=oh, minutes=om), start + timedelta(hours=ch, minutes=cm)


def is_open(store: Store, t: datetime) -> bool:
    if temporarily_closed(store, t):
        return False
    lt = local_time(store, t)
    window = _window(store, lt)
    return window is not None and window[0] <= lt < window[1]


def next_opening(store: Store, t: datetime) -> datetime | None:
    """The next time the store opens its doors after ``t`` (None if not within two weeks)."""
    lt = local_time(store, t)
    for offset in range(15):
        day = lt + timedelta(days=offset)
        window = _window(store, day)
        if window is None:
            continue
        opens = window[0] if offset else max(window[0], lt)
        if opens >= window[1] or (offset == 0 and lt >= window[1]):
            continue
        if store.reopens_on is not None and opens.date().isoformat() < store.reopens_on:
            continue
        return opens.astimezone(UTC)
    return None


def hours_today(store: Store, t: datetime) -> str:
    hours = store.hours.get(DAYS[local_time(store, t).weekday()])
    return f"{hours[0]}-{hours[1]}" if hours else "closed"


def store_clock(store: Store, t: datetime) -> dict[str, Any]:
    nxt = None if is_open(store, t) else next_opening(store, t)
    return {"open_now": is_open(store, t), "local_time": local_time(store, t).strftime("%a %H:%M"),
            "hours_today": hours_today(store, t), "next_opening": iso(nxt) if nxt else None,
            "next_opening_local": local_time(store, nxt).strftime("%a %H:%M") if nxt else None,
            "temporarily_closed_until": store.reopens_on if temporarily_closed(store, t) else None}


def need_not_closed_down(store: Store, t: datetime, field: str = "store_id") -> None:
    if temporarily_closed(store, t):
        raise ToolError(f"{store.name} ({store.store_id}) is temporarily closed for renovation until "
                        f"{store.reopens_on}; choose another store", field=field, code="store_closed")


def need_open(store: Store, t: datetime, action: str) -> None:
    need_not_closed_down(store, t)
    if not is_open(store, t):
        nxt = next_opening(store, t)
        when = f"; it opens {local_time(store, nxt).strftime('%a %H:%M')} local time" if nxt else ""
        raise ToolError(f"cannot {action}: {store.name} is closed now ({local_time(store, t).strftime('%a %H:%M')} "
                        f"in {store.city}, hours today {hours_today(store, t)}){when}", field="store_id",
                        code="store_closed")


def distance_km(a: Store, b: Store) -> float:
    return round(haversine_km(a.lat, a.lon, b.lat, b.lon), 1)


def transit_hours(a: Store, b: Store) -> int:
    """Same city: a 3-hour van run; otherwise 4 hours of handling plus the road at 70 km/h."""
    if a.city == b.city:
        return 3
    return 4 + math.ceil(distance_km(a, b) / 70)


# ---------------------------------------------------------------- the clock hook
def on_time(s: RetailChainState, before: datetime, after: datetime) -> None:
    stamp = iso(after)
    for res in list(s.reservations.values()):
        if res.status == "preparing" and res.ready_at <= stamp:
            s.reservations.edit(res.reservation_id).status = "ready"
            res = s.reservations[res.reservation_id]
        if res.status == "ready" and res.expires_at <= stamp:
            edited = s.reservations.edit(res.reservation_id)
            edited.status, edited.closed_at = "expired", res.expires_at
            s.inventory.edit(inv_key(res.store_id, res.sku)).reserved -= res.quantity
    for tr in list(s.transfers.values()):
        if tr.status == "in_transit" and tr.eta <= stamp:
            edited = s.transfers.edit(tr.transfer_id)
            edited.status, edited.received_at = "received", tr.eta
            receive(s, tr.to_store_id, tr.sku, tr.quantity, tr.eta)
    for rs in list(s.restocks.values()):
        if rs.status == "ordered" and rs.eta <= stamp:
            edited = s.restocks.edit(rs.restock_id)
            edited.status, edited.delivered_at = "delivered", rs.eta
            receive(s, rs.store_id, rs.sku, rs.quantity, rs.eta)


def receive(s: RetailChainState, store_id: str, sku: str, quantity: int, when: str) -> None:
    key = inv_key(store_id, sku)
    if key in s.inventory:
        inv = s.inventory.edit(key)
    else:  # first delivery of a product this store did not carry: list it at the chain's list price
        store, product = s.stores[store_id], s.products[sku]
        inv = s.inventory.put(key, Inventory(store_id, sku, 0, 0,
                                             local_cents(product.list_price_usd_cents, store.currency, retail=True),
                                             NEW_LISTING_CAPACITY, 3, "new arrivals"))
    inv.on_hand += quantity
    inv.last_received = when
