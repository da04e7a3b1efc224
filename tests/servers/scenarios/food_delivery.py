"""Food-delivery smoke scenario: a customer picks an open restaurant that delivers home, fills and
edits a cart, applies a promo, checks out, tracks and tips, then changes their mind and cancels; a
second customer rates a recent delivery and gets a refund for a missing dish; accounts gain an
address and gift-card credit — succeeding once with every user-visible tool.

``call(name, args)`` performs a tool call on one session, asserts it did not return an error, and
returns the decoded JSON result.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]
REF = "2026-06-01T09:00:00+00:00"


def _required_choices(item: dict[str, Any]) -> list[str]:
    return [g["options"][0]["name"] for g in item["choices"] if g["required"]]


async def smoke(call: Call) -> None:
    customers = await call("food_delivery_list_customers", {})
    cust = next(c for c in customers if c["cart_restaurant_id"] is None and not c["orders"]
                and "FREEDEL" not in c["used_promos"])
    cid = cust["customer_id"]
    profile = await call("get_food_customer_profile", {"customer_id": cid})
    home = next(a for a in profile["addresses"] if a["label"] == "Home")

    found = await call("search_food_restaurants", {"delivery_address_id": home["address_id"], "open_now": True,
                                                   "sort_by": "rating"})
    rest = found["results"][0]
    menu = await call("get_restaurant_menu", {"restaurant_id": rest["restaurant_id"]})
    dishes = [i for i in menu["items"] if i["available"]]
    main, extra = dishes[0], dishes[1]
    need = max(rest["min_order"], 15.0) + 1
    qty = min(20, math.ceil(need / main["price"]))
    await call("add_item_to_food_cart", {"customer_id": cid, "item_id": main["item_id"], "quantity": qty,
                                         "options": _required_choices(main), "special_instructions": "no onions"})
    cart = await call("add_item_to_food_cart", {"customer_id": cid, "item_id": extra["item_id"],
                                                "options": _required_choices(extra)})
    line = cart["lines"][-1]["line_id"]
    await call("update_food_cart_item", {"customer_id": cid, "line_id": line, "quantity": 2})
    await call("apply_food_promo_code", {"customer_id": cid, "promo_code": "FREEDEL"})
    cart = await call("view_food_cart", {"customer_id": cid, "delivery_address_id": home["address_id"]})
    assert cart["meets_minimum_order"] and cart["delivery_address"]["in_delivery_radius"] and cart["discount"] > 0

    order = await call("place_food_order", {"customer_id": cid, "delivery_address_id": home["address_id"],
                                            "tip": 3.0, "use_wallet_credit": True})
    oid = order["order_id"]
    tracked = await call("track_food_order", {"order_id": oid})
    assert tracked["status"] in {"placed", "accepted"}
    await call("add_food_order_tip", {"order_id": oid, "amount": 1.5})
    history = await call("list_food_orders", {"customer_id": cid})
    assert history[0]["order_id"] == oid
    cancelled = await call("cancel_food_order", {"order_id": oid, "reason": "ordered_by_mistake"})
    assert cancelled["status"] == "cancelled"

    # start again, then think better of it
    await call("add_item_to_food_cart", {"customer_id": cid, "item_id": extra["item_id"],
                                         "options": _required_choices(extra)})
    await call("clear_food_cart", {"customer_id": cid})

    # a customer whose dinner arrived recently rates it and reports a missing dish
    recent = next(o for c in customers for o in c["orders"]
                  if o["status"] == "delivered" and not o["rated"] and o["delivered_at"] > "2026-05-31T09:00")
    await call("rate_food_order", {"order_id": recent["order_id"], "restaurant_rating": 4, "courier_rating": 5,
                                   "comment": "Tasty, but a side was missing."})
    detail = await call("track_food_order", {"order_id": recent["order_id"]})
    await call("report_missing_food_items", {"order_id": recent["order_id"],
                                             "line_ids": [detail["lines"][-1]["line_id"]],
                                             "details": "The last dish was not in the bag."})

    # accounts: a new address (a neighbour's, which the map knows) and a gift card
    other = next(a for c in customers if c["customer_id"] != cid and c["addresses"]
                 for a in c["addresses"] if a["address"].split(", ")[1] == home["address"].split(", ")[1])
    await call("add_food_delivery_address", {"customer_id": cid, "address": other["address"], "label": "Friend's place",
                                             "dropoff_instructions": "leave with the doorman"})
    holder, card = next((c, g) for c in customers for g in c["gift_cards"] if not g["redeemed"] and not g["expired"])
    await call("redeem_food_gift_card", {"customer_id": holder["customer_id"], "gift_code": card["code"]})
