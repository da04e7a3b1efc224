"""Marketplace smoke scenario: a buyer bids, buys and sends an offer that the seller accepts; the seller
ships an order, a buyer rates a delivered purchase, and a seller lists, reprices, ends and relists an item —
succeeding once with every user-visible tool.

``call(name, args)`` performs a tool call on one session (over whatever transport the harness chose),
asserts it did not return an error, and returns the decoded JSON result.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


async def smoke(call: Call) -> None:
    members = await call("marketplace_list_members", {})
    good = [m for m in members if not m["card_expired"]]

    # Browse live auctions and outbid the current high bidder on one that is not about to close.
    found = await call("search_marketplace_listings", {"listing_format": "auction", "sort": "most_bids",
                                                       "limit": 50})
    auction = next(x for x in found["listings"] if x["bid_count"] and x["minutes_left"] > 600)
    detail = await call("get_marketplace_listing", {"listing_id": auction["listing_id"]})
    bidder = next(m for m in good if m["username"] not in (detail["seller"], detail["high_bidder"]))
    bid = await call("place_auction_bid", {"listing_id": auction["listing_id"], "bidder": bidder["username"],
                                           "amount": detail["minimum_next_bid"]})
    assert bid["you_are_high_bidder"] and bid["minimum_next_bid"] > detail["minimum_next_bid"]

    # Buy a fixed-price item outright.
    fixed = await call("search_marketplace_listings", {"listing_format": "fixed_price", "sort": "price_low",
                                                       "limit": 50})
    item = next(x for x in fixed["listings"] if not x["accepts_offers"] and x["seller"] != bidder["username"])
    order = await call("buy_marketplace_listing", {"listing_id": item["listing_id"], "buyer": bidder["username"],
                                                   "card_cvv": bidder["card_cvv"]})
    assert order["status"] == "paid" and order["total"] == round(item["current_price"] + item["shipping_cost"], 2)

    # Offer below the asking price on another item; its seller accepts.
    item = next(x for x in fixed["listings"] if x["accepts_offers"] and x["seller"] != bidder["username"])
    offer = await call("make_marketplace_offer", {"listing_id": item["listing_id"], "buyer": bidder["username"],
                                                  "amount": round(item["current_price"] * 0.8, 2),
                                                  "message": "Could you do this price? I can pay right away."})
    answer = await call("respond_to_marketplace_offer", {"offer_id": offer["offer_id"], "seller": item["seller"],
                                                         "decision": "accept"})
    assert answer["order"]["item_price"] == offer["amount"]

    # The seller ships a paid order.
    sales = await call("list_marketplace_orders", {"member": item["seller"], "role": "seller", "status": "paid"})
    await call("ship_marketplace_order", {"order_id": sales["orders"][0]["order_id"], "seller": item["seller"],
                                          "carrier": "UPS", "tracking_number": "1Z999AA10123456784"})

    # A buyer rates a delivered purchase that has no feedback yet.
    orders = await call("marketplace_list_all_orders", {"status": "delivered"})
    rate = next(o for o in orders if not o["buyer_feedback_left"] and o["ordered_at"] >= "2026-04-15")
    await call("leave_marketplace_feedback", {"order_id": rate["order_id"], "author": rate["buyer"],
                                              "rating": "positive", "comment": "Exactly as described, thanks!"})

    # A seller lists an item, lowers the starting bid, ends the auction and relists it.
    seller = next(m for m in good if m["active_listings"] < m["selling_limit"] and m["username"] != bidder["username"])
    listing = await call("create_marketplace_listing", {
        "seller": seller["username"], "title": "Vintage Polaroid SX-70 Camera",
        "description": "Folding instant camera, tested with fresh film.\nLeather skins in good shape.",
        "category": "electronics", "condition": "used_good", "listing_format": "auction", "price": 120.0,
        "duration_days": 7, "reserve_price": 180.0, "shipping_cost": 12.5})
    await call("revise_marketplace_listing_price", {"listing_id": listing["listing_id"],
                                                    "seller": seller["username"], "new_price": 99.0})
    await call("end_marketplace_listing_early", {"listing_id": listing["listing_id"], "seller": seller["username"],
                                                 "reason": "error_in_listing"})
    again = await call("relist_marketplace_listing", {"listing_id": listing["listing_id"],
                                                      "seller": seller["username"], "duration_days": 5})
    assert again["relisted_from"] == listing["listing_id"] and again["status"] == "active"
