"""Retail chain smoke scenario: a shopper reserves an item at an open store and collects it an hour
later, changes their mind about a second one; the store manager marks a product down, sends spare
units to the sister store in town and orders a restock — succeeding once with every user-visible tool.

``call(name, args)`` performs a tool call on one session (over whatever transport the harness
chose), asserts it did not return an error, and returns the decoded JSON result.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


async def smoke(call: Call) -> None:
    open_stores = await call("find_retail_stores", {"open_now": True, "offers_pickup": True})
    store = next(st for st in open_stores if sum(o["city"] == st["city"] for o in open_stores) > 1)
    sid = store["store_id"]
    sister = next(st for st in await call("find_retail_stores", {"city": store["city"]})
                  if st["store_id"] != sid and st["temporarily_closed_until"] is None)

    # The shopper finds something in stock, checks it nearby, reserves it and collects it.
    found = await call("search_retail_products", {"store_id": sid, "in_stock_only": True, "sort_by": "price_low",
                                                  "limit": 50})
    item = next(p for p in found["results"] if p["available"] >= 3 and not p["limit_per_customer"])
    nearby = await call("check_sku_availability", {"sku": item["sku"], "near_store_id": sid})
    assert nearby["stores"][0]["store_id"] == sid
    phone = "+1 (415) 555-0199"
    res = await call("reserve_for_store_pickup", {"store_id": sid, "sku": item["sku"], "quantity": 1,
                                                  "customer_name": "Jordan Avery", "customer_phone": phone})
    assert res["status"] == "preparing"
    mine = await call("list_store_pickups", {"customer_phone": "14155550199"})
    assert [r["reservation_id"] for r in mine] == [res["reservation_id"]]
    await call("retail_chain_session_advance_clock", {"minutes": 61})
    sale = await call("complete_store_pickup", {"reservation_id": res["reservation_id"],
                                                "pickup_code": res["pickup_code"]})
    assert sale["reservation"]["status"] == "picked_up"
    second = await call("reserve_for_store_pickup", {"store_id": sid, "sku": item["sku"], "quantity": 1,
                                                     "customer_name": "Jordan Avery", "customer_phone": phone})
    await call("cancel_store_pickup", {"reservation_id": second["reservation_id"]})

    # The manager reviews the stock sheet, marks something down, rebalances and reorders.
    report = await call("get_store_inventory_report", {"store_id": sid, "limit": 200})
    lines = {r["sku"]: r for r in report["items"]}
    markdown = next(r for r in report["items"] if r["available"] > 0)
    await call("update_store_price", {"store_id": sid, "sku": markdown["sku"],
                                      "price": math.floor(markdown["price"] * 0.9)})
    sister_lines = {r["sku"]: r for r in (await call("get_store_inventory_report",
                                                      {"store_id": sister["store_id"], "limit": 200}))["items"]}
    move = next(r for r in report["items"] if r["available"] >= 3 and (
        r["sku"] not in sister_lines
        or sister_lines[r["sku"]]["capacity"] - sister_lines[r["sku"]]["on_hand"] - sister_lines[r["sku"]]["incoming"] >= 2))
    await call("request_stock_transfer", {"sku": move["sku"], "from_store_id": sid, "to_store_id": sister["store_id"],
                                          "quantity": 2, "note": "Sister store is short for the weekend."})
    pending = {x["sku"] for x in report["inbound"] if "restock_id" in x}
    reorder = next(r for sku, r in lines.items() if not r["discontinued"] and sku not in pending
                   and r["capacity"] - r["on_hand"] - r["incoming"] >= 5)
    await call("submit_restock_request", {"store_id": sid, "sku": reorder["sku"], "quantity": 5})
