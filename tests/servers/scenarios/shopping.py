"""Shopping smoke scenario: a realistic session that succeeds with every user-visible tool once.

A customer who has not used the welcome coupon saves a new address and card, browses the catalog,
fills the cart (one plain item, one sized item), plays with the coupon and the wishlist, compares
shipping, checks out, then cancels that fresh order; finally an eligible delivered order from the
seed world is tracked and partly returned.

``call(name, args)`` performs a tool call on one session, asserts it did not return an error, and
returns the decoded JSON result.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]
RETURN_CUTOFF = "2026-05-02"  # delivered on/after this date is still inside the 30-day window


async def smoke(call: Call) -> None:
    coupons = await call("shopping_list_coupons", {"usable_only": True})
    welcome = next(c for c in coupons if c["category"] is None and c["min_order"] == 0)
    customers = await call("shopping_search_customers", {})
    cid = next(c["customer_id"] for c in customers if c["customer_id"] not in welcome["used_by"])

    profile = await call("get_shopper_profile", {"customer_id": cid})
    assert profile["addresses"], "every customer has at least one saved address"
    address = await call("add_shipping_address", {
        "customer_id": cid, "recipient_name": profile["name"], "street": "742 Evergreen Terrace Apt 3",
        "city": "Springfield", "state": "OR", "zip_code": "97477", "make_default": True})
    card = await call("add_shopper_payment_card", {
        "customer_id": cid, "card_number": "4111111111111111", "exp_month": 9, "exp_year": 2029,
        "security_code": "737"})
    assert card["brand"] == "visa" and card["last4"] == "1111"

    found = await call("search_catalog", {"in_stock_only": True, "sort_by": "rating", "limit": 50})
    plain = None
    for row in found["products"]:
        if row["sizes"]:
            continue
        details = await call("get_catalog_product", {"product_id": row["product_id"]})
        if details["units_in_stock"] >= 2 and details["max_per_order"] >= 2:
            plain = details
            break
    assert plain is not None, "the catalog has an in-stock unsized product"
    await call("list_product_reviews", {"product_id": plain["product_id"], "sort_by": "highest", "limit": 5})
    clothes = await call("search_catalog", {"category": "apparel", "in_stock_only": True})
    sized = clothes["products"][0]

    await call("clear_shopping_cart", {"customer_id": cid})
    await call("add_to_shopping_cart", {"customer_id": cid, "product_id": plain["product_id"], "quantity": 1})
    sized_details = await call("get_catalog_product", {"product_id": sized["product_id"]})
    size = sized_details["available_sizes"][0]
    await call("add_to_shopping_cart", {"customer_id": cid, "product_id": sized["product_id"], "size": size})
    await call("update_shopping_cart_quantity", {"customer_id": cid, "product_id": plain["product_id"],
                                                 "quantity": 2})
    cart = await call("view_shopping_cart", {"customer_id": cid})
    assert cart["item_count"] == 3 and not cart["warnings"]

    await call("apply_cart_coupon", {"customer_id": cid, "coupon_code": welcome["code"]})
    await call("remove_cart_coupon", {"customer_id": cid})
    await call("remove_from_shopping_cart", {"customer_id": cid, "product_id": sized["product_id"]})
    cart = await call("apply_cart_coupon", {"customer_id": cid, "coupon_code": welcome["code"].lower()})
    assert cart["discount"] > 0

    wishlist = await call("view_wishlist", {"customer_id": cid})
    saved = {i["product_id"] for i in wishlist["items"]}
    wish = next(r["product_id"] for r in found["products"] if r["product_id"] not in saved)
    await call("add_to_wishlist", {"customer_id": cid, "product_id": wish})
    await call("remove_from_wishlist", {"customer_id": cid, "product_id": wish})

    quote = await call("estimate_cart_shipping", {"customer_id": cid, "address_id": address["address_id"]})
    method = "express" if any(o["shipping_method"] == "express" and o["available"] for o in quote["options"]) \
        else "standard"
    order = await call("checkout_shopping_cart", {
        "customer_id": cid, "address_id": address["address_id"], "payment_method_id": card["payment_method_id"],
        "shipping_method": method})
    assert order["status"] == "placed" and order["coupon_code"] == welcome["code"]
    history = await call("list_shop_orders", {"customer_id": cid, "status": "placed"})
    assert order["order_id"] in {o["order_id"] for o in history["orders"]}
    await call("get_shop_order_details", {"order_id": order["order_id"]})
    cancelled = await call("cancel_shop_order", {"order_id": order["order_id"], "reason": "changed_mind"})
    assert cancelled["refund_amount"] == order["total"]

    delivered = await call("shopping_list_all_orders", {"status": "delivered"})
    target, item = next(
        (o, i) for o in delivered if o["delivered_on"] >= RETURN_CUTOFF
        for i in o["items"] if i["returnable"] and i["returned_quantity"] < i["quantity"])
    tracking = await call("track_shop_order", {"order_id": target["order_id"]})
    assert tracking["status"] == "delivered"
    ret = await call("return_shop_order_items", {"order_id": target["order_id"], "product_ids": [item["product_id"]],
                                                 "reason": "defective"})
    assert ret["refund_amount"] > 0
