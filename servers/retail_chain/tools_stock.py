"""Retail chain tools for moving stock: transfers between stores and supplier restocks.

A transfer leaves the source at once (its units stop counting there) and is received at the
destination when the truck arrives (``on_time``); a restock arrives after the supplier's lead time.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

from pydantic import Field

from servers.kit import Text, ToolError, iso, new_id, now, tool
from servers.retail_chain.rules import distance_km, need_not_closed_down, transit_hours
from servers.retail_chain.state import (
    NEW_LISTING_CAPACITY,
    Restock,
    RetailChainState,
    Transfer,
    get_product,
    get_store,
    incoming,
    inv_key,
    stocked,
)

Units = Annotated[int, Field(ge=1, le=500)]


def _room(s: RetailChainState, store_id: str, sku: str) -> tuple[int, int, int]:
    """(capacity, on hand, on the way) for a product line at a store (capacity of a new line if none)."""
    inv = s.inventory.get(inv_key(store_id, sku))
    coming = incoming(s, store_id, sku)
    return (inv.capacity, inv.on_hand, coming) if inv else (NEW_LISTING_CAPACITY, 0, coming)


def _transfer_view(s: RetailChainState, t: Transfer) -> dict[str, Any]:
    src, dst = s.stores[t.from_store_id], s.stores[t.to_store_id]
    return {"transfer_id": t.transfer_id, "status": t.status, "sku": t.sku, "product_name": s.products[t.sku].name,
            "quantity": t.quantity, "from_store_id": src.store_id, "from_store": src.name,
            "to_store_id": dst.store_id, "to_store": dst.name, "distance_km": distance_km(src, dst),
            "requested_at": t.requested_at, "eta": t.eta, "received_at": t.received_at, "note": t.note}


@tool(consumes=("sku", "store_id"), produces=("transfer_id",))
def request_stock_transfer(s: RetailChainState, sku: str, from_store_id: str, to_store_id: str, quantity: Units,
                           note: Text | None = None) -> dict:
    """Send units of a product from one store to another store in the same country. Only units that
    are on hand and not held for pickups can leave, and the receiving store must have shelf room. The
    units arrive after the transit time (3 hours within a city, longer between cities).

    Args:
        sku: The product SKU, e.g. BM-12345.
        from_store_id: The store sending the units, e.g. ST-101.
        to_store_id: The store receiving them, e.g. ST-102.
        quantity: Units to send.
        note: Why the transfer is needed (shown to both stores).
    """
    product = get_product(s, sku)
    src = get_store(s, from_store_id, "from_store_id")
    dst = get_store(s, to_store_id, "to_store_id")
    if src.store_id == dst.store_id:
        raise ToolError("from_store_id and to_store_id are the same store; pick a different destination",
                        field="to_store_id", code="same_store")
    at = now(s)
    need_not_closed_down(src, at, "from_store_id")
    need_not_closed_down(dst, at, "to_store_id")
    if src.country != dst.country:
        raise ToolError(f"cannot transfer from {src.city} ({src.country}) to {dst.city} ({dst.country}): transfers "
                        "stay within one country; ask for a supplier restock at the destination instead",
                        field="to_store_id", code="cross_border")
    inv = stocked(s, src, product, "from_store_id")
    if quantity > inv.available:
        raise ToolError(f"cannot send {quantity}: {src.name} has {inv.on_hand} {product.name} on hand and "
                        f"{inv.reserved} of them are held for pickups, so at most {max(inv.available, 0)} can be "
                        "transferred", field="quantity", code="insufficient_stock")
    capacity, on_hand, coming = _room(s, dst.store_id, product.sku)
    if on_hand + coming + quantity > capacity:
        raise ToolError(f"{dst.name} has room for {max(0, capacity - on_hand - coming)} more {product.name} "
                        f"(capacity {capacity}, {on_hand} on hand, {coming} on the way)", field="quantity",
                        code="over_capacity")
    s.inventory.edit(inv_key(src.store_id, product.sku)).on_hand -= quantity
    tid = new_id(s.counters, "TRF")
    eta = at + timedelta(hours=transit_hours(src, dst))
    t = s.transfers.put(tid, Transfer(tid, product.sku, src.store_id, dst.store_id, quantity, "in_transit", iso(at),
                                      iso(eta), None, (note or "").strip()))
    return {**_transfer_view(s, t), "source_available_after": s.inventory[inv_key(src.store_id, product.sku)].available}


@tool(consumes=("store_id", "sku"), produces=("restock_id",))
def submit_restock_request(s: RetailChainState, store_id: str, sku: str, quantity: Units) -> dict:
    """Order more units of a product the store carries from the chain's supplier; they arrive after the
    supplier's lead time. Discontinued products cannot be reordered, one restock per product and store
    may be open at a time, and the order must fit the store's shelf capacity.

    Args:
        store_id: The store to restock, e.g. ST-104.
        sku: The product SKU, e.g. BM-12345.
        quantity: Units to order.
    """
    store = get_store(s, store_id)
    product = get_product(s, sku)
    need_not_closed_down(store, now(s))
    inv = stocked(s, store, product)
    if product.discontinued:
        raise ToolError(f"{product.name} ({product.sku}) is discontinued and cannot be reordered; sell through "
                        "the remaining stock or transfer it between stores", field="sku", code="discontinued")
    pending = next((r for r in s.restocks.values() if r.status == "ordered" and r.store_id == store.store_id
                    and r.sku == product.sku), None)
    if pending is not None:
        raise ToolError(f"restock {pending.restock_id} of {pending.quantity} {product.name} for {store.name} is "
                        f"already on order (due {pending.eta}); wait for it before ordering more", field="sku",
                        code="duplicate")
    coming = incoming(s, store.store_id, product.sku)
    if inv.on_hand + coming + quantity > inv.capacity:
        raise ToolError(f"{store.name} has room for {max(0, inv.capacity - inv.on_hand - coming)} more "
                        f"{product.name} (capacity {inv.capacity}, {inv.on_hand} on hand, {coming} on the way)",
                        field="quantity", code="over_capacity")
    at = now(s)
    rid = new_id(s.counters, "RST")
    eta = at + timedelta(days=product.lead_time_days)
    s.restocks.put(rid, Restock(rid, store.store_id, product.sku, quantity, product.supplier, "ordered", iso(at),
                                iso(eta)))
    return {"restock_id": rid, "status": "ordered", "store_id": store.store_id, "store_name": store.name,
            "sku": product.sku, "product_name": product.name, "quantity": quantity, "supplier": product.supplier,
            "ordered_at": iso(at), "eta": iso(eta), "on_hand": inv.on_hand, "capacity": inv.capacity}
