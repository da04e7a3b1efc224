"""Shopping domain: tool surface, state-dependent failures, workflows."""

from __future__ import annotations

from datetime import date
from itertools import count
from typing import Any

from servers.kit import DomainRuntime, snapshot_json
from servers.shopping import domain
from servers.shopping.state import Product, ShoppingState

RT = DomainRuntime(domain)
_SESSIONS = count()


class Session:
    """One fresh session on a seed world, with helpers for succeeding and failing calls."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.sid = f"test-{next(_SESSIONS)}"

    @property
    def world(self) -> ShoppingState:
        return RT.sessions.world(self.seed)  # type: ignore[return-value]

    def ok(self, name: str, args: dict[str, Any]) -> Any:
        out = RT.call(name, args, self.sid, self.seed)
        assert not out.is_error, out.text
        return out.json()

    def snapshot(self) -> str:
        return snapshot_json(self.ok("shopping_session_snapshot", {}))

    def fail(self, name: str, args: dict[str, Any], *needles: str) -> str:
        """The call fails, its message names the rule/field, and the session state is untouched."""
        before = self.snapshot()
        out = RT.call(name, args, self.sid, self.seed)
        assert out.is_error, f"{name} unexpectedly succeeded: {out.text}"
        for needle in needles:
            assert needle in out.text, f"{needle!r} not in {out.text!r}"
        assert self.snapshot() == before, f"{name} changed state although it failed"
        return out.text

    # -- entity pickers (read the seed world; never rely on specific generated ids) ----------
    def products(self, **filters: Any) -> list[Product]:
        return [p for p in self.world.products.values() if all(getattr(p, k) == v for k, v in filters.items())]

    def plain_in_stock(self, min_units: int = 2) -> Product:
        return next(p for p in self.products(sizes=[], bulky=False)
                    if p.stock >= min_units and p.max_per_order >= min_units)

    def empty_cart_customer(self, avoid_coupon: str | None = "WELCOME10") -> str:
        for c in self.world.customers.values():
            cart = self.world.carts.get(c.customer_id)
            coupon = self.world.coupons.get(avoid_coupon) if avoid_coupon else None
            if (cart is None or not cart.items) and (coupon is None or c.customer_id not in coupon.used_by):
                return c.customer_id
        raise AssertionError("no customer with an empty cart")

    def usable_card(self, cid: str) -> str:
        return next(p.payment_method_id for p in self.world.payment_methods.values()
                    if p.customer_id == cid and (p.exp_year, p.exp_month) >= (2026, 6))

    def address(self, cid: str, *, remote: bool = False) -> str:
        return next(a.address_id for a in self.world.addresses.values()
                    if a.customer_id == cid and (a.state in ("AK", "HI")) == remote)


# ---------------------------------------------------------------- (1) tool surface
def test_exactly_23_user_tools_and_a_few_discovery_tools() -> None:
    assert len(domain.user_tools) == 23
    discovery = [t.name for t in domain.tools.values() if t.kind == "discovery"]
    assert 2 <= len(discovery) <= 4 and all(n.startswith("shopping_") for n in discovery)
    from servers.banking import domain as banking

    assert not set(domain.tools) & set(banking.tools)
    for spec in domain.user_tools:
        assert spec.consumes or spec.produces, f"{spec.name} declares no entity types"
        schema = RT.table.schemas[spec.name]
        for pname, prop in schema["properties"].items():
            assert prop.get("description"), f"{spec.name}.{pname} is undocumented"
    assert RT.table.sensitive_params("add_shopper_payment_card") == ["card_number", "security_code"]


# ---------------------------------------------------------------- (3) failures leave state untouched
def test_catalog_and_cart_failures() -> None:
    s = Session()
    cid = s.empty_cart_customer()
    sold_out = s.products(stock=0)[0]
    s.fail("add_to_shopping_cart", {"customer_id": cid, "product_id": sold_out.product_id,
                                    **({"size": sold_out.sizes[0]} if sold_out.sizes else {})}, "out of stock")
    low = next(p for p in s.products(sizes=[]) if 0 < p.stock < p.max_per_order)
    s.fail("add_to_shopping_cart", {"customer_id": cid, "product_id": low.product_id, "quantity": low.stock + 1},
           f"only {low.stock} unit(s)", "in stock")
    limited = next(p for p in s.products(sizes=[], max_per_order=2) if p.stock >= 3)
    s.fail("add_to_shopping_cart", {"customer_id": cid, "product_id": limited.product_id, "quantity": 3},
           "limited to 2 per order")
    s.fail("add_to_shopping_cart", {"customer_id": cid, "product_id": low.product_id, "quantity": 0}, "quantity")
    s.fail("add_to_shopping_cart", {"customer_id": cid, "product_id": "PRD-9999"}, "unknown product_id")
    shirt = next(p for p in s.products(category="apparel") if p.stock > 0)
    s.fail("add_to_shopping_cart", {"customer_id": cid, "product_id": shirt.product_id}, "give a size")
    s.fail("add_to_shopping_cart", {"customer_id": cid, "product_id": shirt.product_id, "size": "XXXL"},
           "size 'XXXL' does not exist")
    s.fail("add_to_shopping_cart", {"customer_id": cid, "product_id": low.product_id, "size": "M"}, "omit size")
    s.fail("update_shopping_cart_quantity", {"customer_id": cid, "product_id": low.product_id, "quantity": 1},
           "not in customer")
    s.fail("remove_from_shopping_cart", {"customer_id": cid, "product_id": low.product_id}, "not in customer")
    s.fail("remove_cart_coupon", {"customer_id": cid}, "no coupon applied")
    s.fail("search_catalog", {"min_price": 50, "max_price": 10}, "max_price")
    s.fail("view_shopping_cart", {"customer_id": "CUS-9999"}, "unknown customer_id")
    wished = next(w for w in s.world.wishlists.values() if w.items)
    s.fail("add_to_wishlist", {"customer_id": wished.customer_id, "product_id": wished.items[0].product_id},
           "already in")
    s.fail("remove_from_wishlist", {"customer_id": cid, "product_id": sold_out.product_id}, "not in")


def test_coupon_failures() -> None:
    s = Session()
    cid = s.empty_cart_customer()
    s.fail("apply_cart_coupon", {"customer_id": cid, "coupon_code": "WELCOME10"}, "cart is empty")
    cheap = next(p for p in s.products(sizes=[], bulky=False) if p.stock > 0 and p.price < 40
                 and p.category not in ("books", "apparel"))
    s.ok("add_to_shopping_cart", {"customer_id": cid, "product_id": cheap.product_id})
    s.fail("apply_cart_coupon", {"customer_id": cid, "coupon_code": "NOPE"}, "unknown coupon_code")
    s.fail("apply_cart_coupon", {"customer_id": cid, "coupon_code": "SPRING15"}, "expired on")
    s.fail("apply_cart_coupon", {"customer_id": cid, "coupon_code": "SAVE20"}, "minimum of 100.00")
    s.fail("apply_cart_coupon", {"customer_id": cid, "coupon_code": "BOOKWORM20"}, "only applies to books")
    s.fail("apply_cart_coupon", {"customer_id": cid, "coupon_code": "FLASH50"}, "usage limit")
    used = s.world.coupons["WELCOME10"].used_by[0]
    s.ok("add_to_shopping_cart", {"customer_id": used, "product_id": cheap.product_id})
    if s.world.carts[used].coupon_code:
        s.ok("remove_cart_coupon", {"customer_id": used})
    s.fail("apply_cart_coupon", {"customer_id": used, "coupon_code": "WELCOME10"}, "once per customer")
    s.ok("apply_cart_coupon", {"customer_id": cid, "coupon_code": "welcome10"})
    s.fail("apply_cart_coupon", {"customer_id": cid, "coupon_code": "WELCOME10"}, "already applied")
    s.fail("apply_cart_coupon", {"customer_id": cid, "coupon_code": "BOOKWORM20"}, "only one coupon")


def test_checkout_failures() -> None:
    s = Session()
    cid = s.empty_cart_customer()
    addr, card = s.address(cid), s.usable_card(cid)
    args = {"customer_id": cid, "address_id": addr, "payment_method_id": card}
    s.fail("checkout_shopping_cart", args, "cart is empty")
    item = s.plain_in_stock()
    s.ok("add_to_shopping_cart", {"customer_id": cid, "product_id": item.product_id})
    other = next(a for a in s.world.addresses.values() if a.customer_id != cid)
    s.fail("checkout_shopping_cart", {**args, "address_id": other.address_id}, "not one of", "address_id")
    s.fail("checkout_shopping_cart", {**args, "address_id": "ADR-9999"}, "unknown address_id")
    s.fail("estimate_cart_shipping", {"customer_id": cid, "address_id": other.address_id}, "address_id")
    s.fail("checkout_shopping_cart", {**args, "payment_method_id": "PM-9999"}, "unknown payment_method_id")
    foreign_pm = next(p for p in s.world.payment_methods.values() if p.customer_id != cid)
    s.fail("checkout_shopping_cart", {**args, "payment_method_id": foreign_pm.payment_method_id}, "does not belong",
           "payment_method_id")
    s.fail("checkout_shopping_cart", {**args, "shipping_method": "carrier_pigeon"}, "shipping_method")
    hi = s.ok("add_shipping_address", {"customer_id": cid, "recipient_name": "Kai", "street": "1 Aloha Way",
                                       "city": "Honolulu", "state": "HI", "zip_code": "96815"})
    s.fail("checkout_shopping_cart", {**args, "address_id": hi["address_id"], "shipping_method": "overnight"},
           "overnight shipping is not available to HI")
    stale_pm = next(p for p in s.world.payment_methods.values() if (p.exp_year, p.exp_month) < (2026, 6))
    s2 = Session()
    s2.ok("clear_shopping_cart", {"customer_id": stale_pm.customer_id})
    s2.ok("add_to_shopping_cart", {"customer_id": stale_pm.customer_id, "product_id": item.product_id})
    s2.fail("checkout_shopping_cart", {"customer_id": stale_pm.customer_id,
                                       "address_id": s2.address(stale_pm.customer_id),
                                       "payment_method_id": stale_pm.payment_method_id}, "expired")
    desk = next((p for p in s.products(bulky=True) if p.stock > 0), None)
    if desk is not None:
        s.ok("add_to_shopping_cart", {"customer_id": cid, "product_id": desk.product_id})
        s.fail("checkout_shopping_cart", {**args, "shipping_method": "overnight"}, "oversized")


def test_stale_cart_coupon_minimum_and_stock_race() -> None:
    s = Session()
    cid = s.empty_cart_customer()
    item = next(p for p in s.products(sizes=[], bulky=False) if 60 <= p.price < 100 and p.stock >= 2
                and p.max_per_order >= 2)
    s.ok("add_to_shopping_cart", {"customer_id": cid, "product_id": item.product_id, "quantity": 2})
    s.ok("apply_cart_coupon", {"customer_id": cid, "coupon_code": "SAVE20"})
    cart = s.ok("update_shopping_cart_quantity", {"customer_id": cid, "product_id": item.product_id, "quantity": 1})
    assert cart["discount"] == 0 and any("minimum" in w for w in cart["warnings"])
    s.fail("checkout_shopping_cart", {"customer_id": cid, "address_id": s.address(cid),
                                      "payment_method_id": s.usable_card(cid)}, "SAVE20", "minimum")
    # two shoppers want the last units: whoever checks out first wins
    last = next(p for p in s.products(sizes=[], bulky=False) if 1 <= p.stock <= 3)
    others = [c for c in s.world.customers if c != cid and not s.world.carts[c].items]
    buyer, loser = others[0], others[1]
    for who in (buyer, loser):
        s.ok("add_to_shopping_cart", {"customer_id": who, "product_id": last.product_id, "quantity": last.stock})
    s.ok("checkout_shopping_cart", {"customer_id": buyer, "address_id": s.address(buyer),
                                    "payment_method_id": s.usable_card(buyer)})
    s.fail("checkout_shopping_cart", {"customer_id": loser, "address_id": s.address(loser),
                                      "payment_method_id": s.usable_card(loser)}, "out of stock")
    assert s.ok("view_shopping_cart", {"customer_id": loser})["warnings"]


def test_order_lifecycle_failures() -> None:
    s = Session()
    orders = list(s.world.orders.values())
    shipped = next(o for o in orders if o.status == "shipped")
    s.fail("cancel_shop_order", {"order_id": shipped.order_id, "reason": "changed_mind"}, "already shipped")
    cancelled = next(o for o in orders if o.status == "cancelled")
    s.fail("cancel_shop_order", {"order_id": cancelled.order_id, "reason": "other"}, "already cancelled")
    s.fail("return_shop_order_items", {"order_id": shipped.order_id, "product_ids": [shipped.items[0].product_id],
                                       "reason": "defective"}, "only delivered orders")
    old = next(o for o in orders if o.status == "delivered" and o.delivered_on and o.delivered_on < "2026-05-02")
    s.fail("return_shop_order_items", {"order_id": old.order_id, "product_ids": [old.items[0].product_id],
                                       "reason": "defective"}, "return window closed")
    recent = [o for o in orders if o.status == "delivered" and o.delivered_on and o.delivered_on >= "2026-05-02"]
    target = recent[0]
    s.fail("return_shop_order_items", {"order_id": target.order_id, "product_ids": ["PRD-9999"],
                                       "reason": "defective"}, "not part of order", "product_ids")
    done = next((r for r in s.world.returns.values()
                 if (s.world.orders[r.order_id].delivered_on or "") >= "2026-05-02"), None)
    if done is not None:  # a return from the seed world (test_return_is_recorded... covers a fresh one)
        s.fail("return_shop_order_items", {"order_id": done.order_id, "product_ids": [done.items[0].product_id],
                                           "reason": "changed_mind"}, "already been returned")
    s.fail("cancel_shop_order", {"order_id": "ORD-99999", "reason": "other"}, "unknown order_id")
    s.fail("track_shop_order", {"order_id": "ORD-99999"}, "unknown order_id")
    for seed in range(6):
        final = next((o, i) for o in Session(seed).world.orders.values() if o.status == "delivered"
                     and o.delivered_on and o.delivered_on >= "2026-05-02" for i in o.items if not i.returnable)
        if final:
            Session(seed).fail("return_shop_order_items", {"order_id": final[0].order_id,
                                                           "product_ids": [final[1].product_id],
                                                           "reason": "changed_mind"}, "cannot be returned")
            break


def test_account_failures() -> None:
    s = Session()
    cid = s.empty_cart_customer()
    card = {"customer_id": cid, "card_number": "4111111111111112", "exp_month": 5, "exp_year": 2030,
            "security_code": "123"}
    s.fail("add_shopper_payment_card", card, "checksum", "card_number")
    s.fail("add_shopper_payment_card", {**card, "card_number": "4111111111111111", "exp_month": 5,
                                        "exp_year": 2026}, "expired in 05/2026")
    s.fail("add_shopper_payment_card", {**card, "card_number": "378282246310005"}, "4-digit security code")
    s.fail("add_shopper_payment_card", {**card, "card_number": "41111111"}, "card_number")
    s.ok("add_shopper_payment_card", {**card, "card_number": "4111111111111111"})
    s.fail("add_shopper_payment_card", {**card, "card_number": "4111111111111111"}, "already saved")
    addr = {"customer_id": cid, "recipient_name": "Ana", "street": "9 Calle Luna", "city": "San Juan",
            "state": "PR", "zip_code": "00901"}
    s.fail("add_shipping_address", addr, "not a US state code", "state")
    existing = next(a for a in s.world.addresses.values() if a.customer_id == cid)
    s.fail("add_shipping_address", {**addr, "state": "TX", "street": existing.street, "zip_code": existing.zip_code},
           "already saved")
    s.fail("add_shopper_payment_card", {**card, "card_number": "3530111333300000"}, "not a Visa", "card_number")
    s.fail("add_shipping_address", {**addr, "state": "TX", "street": "   "}, "must not be empty", "street")
    saved = sum(1 for a in s.world.addresses.values() if a.customer_id == cid)
    for n in range(6 - saved):
        s.ok("add_shipping_address", {**addr, "state": "TX", "street": f"{n + 1} Elm St", "zip_code": "73301"})
    s.fail("add_shipping_address", {**addr, "state": "TX", "street": "99 Elm St", "zip_code": "73301"},
           "already has 6 saved addresses")


# ---------------------------------------------------------------- (4) workflows
def test_checkout_then_cancel_moves_stock_coupon_and_cart() -> None:
    s = Session(3)
    cid = s.empty_cart_customer()
    item = s.plain_in_stock()
    before_stock = item.stock
    welcome_uses = s.world.coupons["WELCOME10"].times_used
    s.ok("add_to_shopping_cart", {"customer_id": cid, "product_id": item.product_id, "quantity": 2})
    cart = s.ok("apply_cart_coupon", {"customer_id": cid, "coupon_code": "WELCOME10"})
    assert cart["discount"] == round(cart["subtotal"] * 0.10, 2)
    order = s.ok("checkout_shopping_cart", {"customer_id": cid, "address_id": s.address(cid),
                                            "payment_method_id": s.usable_card(cid)})
    assert order["total"] == round(cart["total_before_shipping"] + order["shipping_cost"], 2)
    assert s.ok("get_catalog_product", {"product_id": item.product_id})["units_in_stock"] == before_stock - 2
    assert s.ok("view_shopping_cart", {"customer_id": cid})["items"] == []
    snap = s.ok("shopping_session_snapshot", {})
    assert snap["coupons"]["WELCOME10"]["times_used"] == welcome_uses + 1
    assert cid in snap["coupons"]["WELCOME10"]["used_by"]
    listed = s.ok("list_shop_orders", {"customer_id": cid})["orders"]
    assert listed[0]["order_id"] == order["order_id"] and listed[0]["status"] == "placed"
    s.ok("cancel_shop_order", {"order_id": order["order_id"], "reason": "ordered_by_mistake"})
    assert s.ok("get_catalog_product", {"product_id": item.product_id})["units_in_stock"] == before_stock
    assert s.ok("track_shop_order", {"order_id": order["order_id"]})["status"] == "cancelled"
    assert s.ok("shopping_session_snapshot", {})["coupons"]["WELCOME10"]["times_used"] == welcome_uses
    s.ok("add_to_shopping_cart", {"customer_id": cid, "product_id": item.product_id})
    s.ok("apply_cart_coupon", {"customer_id": cid, "coupon_code": "WELCOME10"})  # released by the cancel


def test_return_is_recorded_on_the_order() -> None:
    s = Session(1)
    order = next(o for o in s.world.orders.values() if o.status == "delivered" and o.delivered_on
                 and o.delivered_on >= "2026-05-02" and any(i.returnable and not i.returned_quantity for i in o.items))
    item = next(i for i in order.items if i.returnable and not i.returned_quantity)
    ret = s.ok("return_shop_order_items", {"order_id": order.order_id, "product_ids": [item.product_id],
                                           "reason": "wrong_size"})
    assert ret["refund_amount"] > 0 and ret["items"][0]["quantity"] == item.quantity
    details = s.ok("get_shop_order_details", {"order_id": order.order_id})
    line = next(i for i in details["items"] if i["product_id"] == item.product_id)
    assert line["returned_quantity"] == line["quantity"]
    assert ret["return_id"] in {r["return_id"] for r in details["returns"]}
    s.fail("return_shop_order_items", {"order_id": order.order_id, "product_ids": [item.product_id],
                                       "reason": "wrong_size"}, "already been returned")
    s.ok("shopping_session_reset", {})
    assert s.snapshot() == snapshot_json(s.world.snapshot())


def test_search_filters_and_sizes() -> None:
    s = Session()
    res = s.ok("search_catalog", {"category": "shoes", "max_price": 150, "in_stock_only": True,
                                  "sort_by": "price_low_to_high", "limit": 50})
    prices = [p["price"] for p in res["products"]]
    assert prices == sorted(prices) and all(p <= 150 for p in prices)
    assert all(p["category"] == "shoes" and p["in_stock"] for p in res["products"])
    shoe = s.ok("get_catalog_product", {"product_id": res["products"][0]["product_id"]})
    size = shoe["available_sizes"][0]
    cid = s.empty_cart_customer()
    s.ok("add_to_shopping_cart", {"customer_id": cid, "product_id": shoe["product_id"], "size": size})
    cart = s.ok("add_to_shopping_cart", {"customer_id": cid, "product_id": shoe["product_id"], "size": size})
    assert cart["items"][0]["quantity"] == 2 and cart["items"][0]["size"] == size
    brand = s.world.products[shoe["product_id"]].brand
    assert all(p["brand"] == brand for p in s.ok("search_catalog", {"brand": brand.upper()})["products"])


# ---------------------------------------------------------------- (6) the session clock
def _advance(s: Session, days: int = 0, minutes: int = 0) -> None:
    s.ok("shopping_session_advance_clock", {"minutes": days * 24 * 60 + minutes})


def test_orders_ship_and_arrive_as_the_clock_moves() -> None:
    snaps = []
    for _ in range(2):  # the same calls replayed on a fresh session give the same state
        s = Session(0)
        cid = s.empty_cart_customer()
        item = s.plain_in_stock()
        s.ok("add_to_shopping_cart", {"customer_id": cid, "product_id": item.product_id})
        order = s.ok("checkout_shopping_cart", {"customer_id": cid, "address_id": s.address(cid),
                                                "payment_method_id": s.usable_card(cid), "shipping_method": "express"})
        oid, eta = order["order_id"], order["estimated_delivery"]
        assert eta == "2026-06-04"  # placed Monday 2026-06-01, ships Tuesday, two business days in transit
        _advance(s, minutes=600)  # later the same day: nothing moves
        assert s.ok("track_shop_order", {"order_id": oid})["status"] == "placed"
        _advance(s, days=1)  # Tuesday: the nightly scan ships it
        shipped = s.ok("get_shop_order_details", {"order_id": oid})
        assert shipped["status"] == "shipped" and shipped["shipped_on"] == "2026-06-02" and shipped["tracking_number"]
        s.fail("cancel_shop_order", {"order_id": oid, "reason": "changed_mind"}, "already shipped")
        s.fail("return_shop_order_items", {"order_id": oid, "product_ids": [item.product_id], "reason": "defective"},
               "only delivered orders")
        _advance(s, days=1)
        assert s.ok("track_shop_order", {"order_id": oid})["status"] == "shipped"
        _advance(s, days=1)  # Thursday 2026-06-04: delivered on its estimated date
        track = s.ok("track_shop_order", {"order_id": oid})
        assert track["status"] == "delivered" and track["delivered_on"] == "2026-06-04"
        assert [e["event"] for e in track["events"]][-1] == "Delivered"
        snaps.append(s.snapshot())
        _advance(s, days=31)  # the 30-day return window closed on 2026-07-04
        s.fail("return_shop_order_items", {"order_id": oid, "product_ids": [item.product_id], "reason": "defective"},
               "return window closed")
    assert snaps[0] == snaps[1]


def test_seed_orders_progress_too_and_a_long_jump_ships_and_delivers() -> None:
    s = Session(1)
    placed = [o for o in s.world.orders.values() if o.status == "placed"]
    shipped = [o for o in s.world.orders.values() if o.status == "shipped"]
    assert placed and shipped
    _advance(s, days=20)
    now = {o["order_id"]: o for o in s.ok("shopping_list_all_orders", {})}
    for o in [*placed, *shipped]:
        assert now[o.order_id]["status"] == "delivered", o.order_id
        assert now[o.order_id]["delivered_on"] == o.estimated_delivery
        assert now[o.order_id]["shipped_on"] <= now[o.order_id]["delivered_on"]
    cancelled = [o for o in s.world.orders.values() if o.status == "cancelled"]
    assert all(now[o.order_id]["status"] == "cancelled" for o in cancelled)


def test_coupons_and_cards_expire_as_the_clock_moves() -> None:
    s = Session(0)
    cid = s.empty_cart_customer()
    item = s.plain_in_stock()
    coupon = s.world.coupons["WELCOME10"]
    s.ok("add_to_shopping_cart", {"customer_id": cid, "product_id": item.product_id})
    s.ok("apply_cart_coupon", {"customer_id": cid, "coupon_code": "WELCOME10"})
    card = s.ok("add_shopper_payment_card", {"customer_id": cid, "card_number": "4111111111111111",
                                             "exp_month": 6, "exp_year": 2026, "security_code": "737"})
    listed = {c["code"]: c for c in s.ok("shopping_list_coupons", {})}
    assert listed["WELCOME10"]["expired"] is False
    days = (date.fromisoformat(coupon.expires_on) - date(2026, 6, 1)).days + 1
    _advance(s, days=days)
    listed = {c["code"]: c for c in s.ok("shopping_list_coupons", {})}
    assert listed["WELCOME10"]["expired"] is True
    cart = s.ok("view_shopping_cart", {"customer_id": cid})
    assert cart["discount"] == 0 and any("expired on" in w for w in cart["warnings"])
    s.fail("checkout_shopping_cart", {"customer_id": cid, "address_id": s.address(cid),
                                      "payment_method_id": s.usable_card(cid)}, "expired on", "coupon_code")
    s.ok("remove_cart_coupon", {"customer_id": cid})
    s.fail("apply_cart_coupon", {"customer_id": cid, "coupon_code": "WELCOME10"}, "expired on")
    s.fail("checkout_shopping_cart", {"customer_id": cid, "address_id": s.address(cid),
                                      "payment_method_id": card["payment_method_id"]}, "expired", "payment_method_id")


# ---------------------------------------------------------------- layout: listing order and tool modules
USER_TOOL_ORDER = [
    "get_shopper_profile", "add_shipping_address", "add_shopper_payment_card", "add_to_shopping_cart",
    "update_shopping_cart_quantity", "remove_from_shopping_cart", "view_shopping_cart",
    "clear_shopping_cart", "apply_cart_coupon", "remove_cart_coupon", "estimate_cart_shipping",
    "checkout_shopping_cart", "search_catalog", "get_catalog_product", "list_product_reviews",
    "view_wishlist", "add_to_wishlist", "remove_from_wishlist", "list_shop_orders",
    "get_shop_order_details", "track_shop_order", "cancel_shop_order", "return_shop_order_items",
]


def test_user_tool_order_is_pinned() -> None:
    """The listing order the model sees is pinned (where each tool lives is checked for every domain
    by ``test_contract``)."""
    assert [t.name for t in domain.user_tools] == USER_TOOL_ORDER
