"""Retail chain tools for stores and stock lookups: finding stores, products, where a product is in
stock, a store's inventory report, and setting a store's shelf price."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from servers.kit import Money, ToolError, now, tool
from servers.retail_chain.rules import distance_km, store_clock
from servers.retail_chain.state import (
    Category,
    RetailChainState,
    Store,
    get_product,
    get_store,
    incoming,
    inv_key,
    local_cents,
    money,
    stocked,
)


def store_view(s: RetailChainState, st: Store) -> dict[str, Any]:
    return {"store_id": st.store_id, "name": st.name, "city": st.city, "country": st.country,
            "address": st.address, "phone": st.phone, "format": st.format, "currency": st.currency,
            "pickup_available": st.pickup_enabled, **store_clock(st, now(s))}


def _city(s: RetailChainState, city: str) -> str:
    served = sorted({st.city for st in s.stores.values()})
    match = next((c for c in served if c.lower() == city.strip().lower()), None)
    if match is None:
        raise ToolError(f"no Brightmart stores in '{city}'; cities served: {', '.join(served)}", field="city",
                        code="not_found")
    return match


@tool(produces=("store_id",), read_only=True)
def find_retail_stores(s: RetailChainState, city: str | None = None, open_now: bool | None = None,
                       offers_pickup: bool | None = None, carries_sku: str | None = None) -> list:
    """Find Brightmart stores, optionally in one city, open right now, offering in-store pickup, or
    carrying a given product, with address, local time, today's hours and when they next open.

    Args:
        city: City name, e.g. Chicago.
        open_now: true for only stores open at this moment (local time), false for only closed ones.
        offers_pickup: true for only stores that offer buy-online-pick-up-in-store.
        carries_sku: Only stores that carry this product SKU (in stock or not), e.g. BM-12345.
    """
    name = _city(s, city) if city else None
    product = get_product(s, carries_sku) if carries_sku else None
    rows = []
    for st in s.stores.values():
        if (name and st.city != name) or (offers_pickup is not None and st.pickup_enabled != offers_pickup):
            continue
        if product and inv_key(st.store_id, product.sku) not in s.inventory:
            continue
        view = store_view(s, st)
        if open_now is None or view["open_now"] == open_now:
            rows.append(view)
    return rows


@tool(produces=("sku",), consumes=("store_id",), read_only=True)
def search_retail_products(s: RetailChainState, query: str | None = None, category: Category | None = None,
                           store_id: str | None = None, in_stock_only: bool = False,
                           sort_by: Literal["name", "price_low", "price_high"] = "name",
                           limit: Annotated[int, Field(ge=1, le=50)] = 20,
                           offset: Annotated[int, Field(ge=0, le=500)] = 0) -> dict:
    """Search the product catalog by words in the name or brand and by category. With a store, only
    what that store carries, at its own price and with the units available there; without one, list
    prices in US dollars and the chain-wide units available.

    Args:
        query: Words in the product name or brand (case-insensitive), e.g. "air fryer".
        category: Only this department.
        store_id: Show this store's assortment, prices and stock, e.g. ST-104.
        in_stock_only: Only products with at least one unit available (at the store, or anywhere).
        sort_by: name (A-Z), price_low or price_high.
        limit: Most results to return.
        offset: Results to skip, for paging.
    """
    store = get_store(s, store_id) if store_id else None
    words = (query or "").lower().split()
    rows = []
    for p in s.products.values():
        text = f"{p.name} {p.brand}".lower()
        if any(w not in text for w in words) or (category and p.category != category):
            continue
        row: dict[str, Any] = {"sku": p.sku, "name": p.name, "brand": p.brand, "category": p.category,
                               "discontinued": p.discontinued, "limit_per_customer": p.max_per_customer}
        if store is not None:
            inv = s.inventory.get(inv_key(store.store_id, p.sku))
            if inv is None:
                continue
            row.update(price=money(inv.price_cents), currency=store.currency, available=inv.available,
                       aisle=inv.aisle)
        else:
            row.update(price=money(p.list_price_usd_cents), currency="USD",
                       available=sum(i.available for i in s.inventory.values() if i.sku == p.sku))
        if not in_stock_only or row["available"] > 0:
            rows.append(row)
    if sort_by == "name":
        rows.sort(key=lambda r: (r["name"], r["sku"]))
    else:
        rows.sort(key=lambda r: (r["price"] if sort_by == "price_low" else -r["price"], r["sku"]))
    return {"total": len(rows), "offset": offset, "results": rows[offset:offset + limit]}


@tool(consumes=("sku", "store_id"), produces=("store_id",), read_only=True)
def check_sku_availability(s: RetailChainState, sku: str, city: str | None = None, near_store_id: str | None = None,
                           min_quantity: Annotated[int, Field(ge=1, le=500)] = 1) -> dict:
    """See which stores have a product available right now (units not already held for pickups), with
    each store's price and whether it is open; optionally within one city, or nearest first to a store.

    Args:
        sku: The product SKU, e.g. BM-12345.
        city: Only stores in this city.
        near_store_id: Sort by distance from this store and show the distance in km, e.g. ST-101.
        min_quantity: Only stores with at least this many units available.
    """
    product = get_product(s, sku)
    name = _city(s, city) if city else None
    origin = get_store(s, near_store_id, "near_store_id") if near_store_id else None
    rows = []
    for st in s.stores.values():
        inv = s.inventory.get(inv_key(st.store_id, product.sku))
        if inv is None or inv.available < min_quantity or (name and st.city != name):
            continue
        clock = store_clock(st, now(s))
        rows.append({"store_id": st.store_id, "name": st.name, "city": st.city, "available": inv.available,
                     "price": money(inv.price_cents), "currency": st.currency, "open_now": clock["open_now"],
                     "pickup_available": st.pickup_enabled and not clock["temporarily_closed_until"],
                     "distance_km": distance_km(origin, st) if origin else None})
    if origin:
        rows.sort(key=lambda r: (r["distance_km"], r["store_id"]))
    else:
        rows.sort(key=lambda r: (-r["available"], r["store_id"]))
    return {"sku": product.sku, "name": product.name, "discontinued": product.discontinued,
            "total_available": sum(r["available"] for r in rows), "stores": rows}


@tool(consumes=("store_id",), produces=("sku", "transfer_id", "restock_id"), read_only=True)
def get_store_inventory_report(s: RetailChainState, store_id: str, category: Category | None = None,
                               low_stock_only: bool = False,
                               limit: Annotated[int, Field(ge=1, le=200)] = 50) -> dict:
    """A store's stock sheet: per product the units on hand, held for pickups, available, on the way,
    shelf capacity, reorder point and price, plus the transfers and supplier restocks heading there.

    Args:
        store_id: The store, e.g. ST-104.
        category: Only this department.
        low_stock_only: Only products at or below their reorder point (counting units on the way).
        limit: Most product lines to return.
    """
    store = get_store(s, store_id)
    lines = []
    for inv in s.inventory.values():
        if inv.store_id != store.store_id:
            continue
        p = s.products[inv.sku]
        coming = incoming(s, store.store_id, p.sku)
        low = inv.available + coming <= inv.reorder_point
        if (category and p.category != category) or (low_stock_only and not low):
            continue
        lines.append({"sku": p.sku, "name": p.name, "category": p.category, "on_hand": inv.on_hand,
                      "reserved": inv.reserved, "available": inv.available, "incoming": coming,
                      "capacity": inv.capacity, "reorder_point": inv.reorder_point, "needs_reorder": low,
                      "price": money(inv.price_cents), "aisle": inv.aisle, "discontinued": p.discontinued})
    lines.sort(key=lambda r: (r["available"], r["sku"]) if low_stock_only else (r["category"], r["name"]))
    inbound = [{"transfer_id": t.transfer_id, "sku": t.sku, "quantity": t.quantity, "from_store_id": t.from_store_id,
                "eta": t.eta} for t in s.transfers.values() if t.status == "in_transit" and t.to_store_id == store_id]
    inbound += [{"restock_id": r.restock_id, "sku": r.sku, "quantity": r.quantity, "supplier": r.supplier,
                 "eta": r.eta} for r in s.restocks.values() if r.status == "ordered" and r.store_id == store_id]
    return {"store": store_view(s, store), "currency": store.currency, "lines": len(lines),
            "items": lines[:limit], "inbound": inbound}


@tool(consumes=("store_id", "sku"))
def update_store_price(s: RetailChainState, store_id: str, sku: str, price: Money) -> dict:
    """Set one store's shelf price for a product it carries, in the store's local currency. The price
    must stay between the item's cost and its list price; pickups already reserved keep their price.

    Args:
        store_id: The store, e.g. ST-104.
        sku: The product SKU, e.g. BM-12345.
        price: New shelf price in the store's currency (yen prices are whole yen).
    """
    store = get_store(s, store_id)
    product = get_product(s, sku)
    inv = stocked(s, store, product)
    cents = round(price * 100)
    if store.currency == "JPY" and cents % 100:
        raise ToolError("yen prices are whole yen: drop the decimals", field="price")
    cost = local_cents(product.unit_cost_usd_cents, store.currency, retail=False)
    ceiling = local_cents(product.list_price_usd_cents, store.currency, retail=True)
    if cents < cost:
        raise ToolError(f"price {price:.2f} {store.currency} is below the item's cost of {cost / 100:.2f} "
                        f"{store.currency}; pricing under cost is not allowed", field="price", code="below_cost")
    if cents > ceiling:
        raise ToolError(f"price {price:.2f} {store.currency} is above the list price of {ceiling / 100:.2f} "
                        f"{store.currency}; stores may only mark down", field="price", code="above_list_price")
    if cents == inv.price_cents:
        raise ToolError(f"{product.name} already costs {price:.2f} {store.currency} at {store.name}", field="price",
                        code="unchanged")
    old = inv.price_cents
    s.inventory.edit(inv_key(inv.store_id, inv.sku)).price_cents = cents
    return {"store_id": store.store_id, "sku": product.sku, "name": product.name, "currency": store.currency,
            "old_price": money(old), "price": money(cents), "list_price": money(ceiling),
            "discount_percent": round((ceiling - cents) * 100 / ceiling, 1)}
