"""Food-delivery order tools: checkout, tracking, history, cancellation, tips, ratings and refunds for
missing items. Order stages advance with the session clock (see ``state.advance_orders``)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field

from servers.food_delivery.menus import COURIERS
from servers.food_delivery.state import (
    CANCELLABLE,
    RATING_WINDOW,
    REPORT_WINDOW,
    TIP_WINDOW,
    FoodState,
    Order,
    OrderLine,
    OrderRating,
    Refund,
    check_promo,
    get_address,
    get_customer,
    get_order,
    get_restaurant,
    money,
    need_in_radius,
    need_open,
    order_summary,
    order_view,
    plan_timeline,
    refund,
    service_fee,
    subtotal,
)
from servers.kit import Money, Text, ToolError, iso, new_id, now, tool

Stars = Annotated[int, Field(ge=1, le=5)]
Limit = Annotated[int, Field(ge=1, le=50)]
Status = Literal["placed", "accepted", "preparing", "picked_up", "delivered", "cancelled"]


@tool(consumes=("customer_id", "address_id"), produces=("order_id",), requires=("cart_nonempty",),
      establishes=("order_placed",))
def place_food_order(s: FoodState, customer_id: str, delivery_address_id: str, tip: Money | None = None,
                     use_wallet_credit: bool = False, dropoff_instructions: Text | None = None) -> dict:
    """Check out the customer's cart: the restaurant must be open now, the subtotal must reach its minimum
    order, the address must be inside its delivery radius and any promo code must still be valid. The card
    on file pays whatever wallet credit does not cover.

    Args:
        customer_id: The customer's id (CUS-...).
        delivery_address_id: Which saved address to deliver to (FDA-...).
        tip: Tip for the courier.
        use_wallet_credit: Pay with wallet credit first.
        dropoff_instructions: Notes for the courier for this order.
    """
    c = get_customer(s, customer_id)
    addr = get_address(s, c, delivery_address_id)
    cart = s.carts.get(c.customer_id)
    if cart is None:
        raise ToolError(f"{c.name}'s cart is empty: add dishes before checking out", field="customer_id",
                        code="precondition")
    r = get_restaurant(s, cart.restaurant_id)
    need_open(s, r)
    sub = subtotal(cart.lines)
    if sub < r.min_order:
        raise ToolError(f"minimum order not met: {r.name} needs at least ${r.min_order:.2f} and the cart is "
                        f"${sub:.2f}; add ${r.min_order - sub:.2f} more", field=None, code="minimum_order")
    km = need_in_radius(r, addr)
    discount = 0.0
    if cart.promo_code is not None:
        try:
            discount = check_promo(s, c, cart, s.promos[cart.promo_code], field=None)
        except ToolError as exc:
            raise ToolError(f"{exc} — remove it (apply_food_promo_code without a code) or apply another code",
                            field=None, code=exc.code) from None
    fee = r.delivery_fee
    svc = service_fee(sub)
    tip_amount = money(tip or 0.0)
    total = money(sub + fee + svc - discount + tip_amount)
    wallet = money(min(c.wallet_balance, total)) if use_wallet_credit else 0.0
    n = s.counters.get().next.get("FDO", 1)
    oid = new_id(s.counters, "FDO")
    lines = [OrderLine(f"L{k}", x.item_id, x.name, x.quantity, list(x.options), x.unit_price,
                       money(x.unit_price * x.quantity)) for k, x in enumerate(cart.lines, start=1)]
    o = s.orders.put(oid, Order(
        oid, c.customer_id, r.restaurant_id, addr.address_id, lines, sub, fee, svc, discount, cart.promo_code,
        tip_amount, total, wallet, money(total - wallet), "placed", plan_timeline(r, len(lines), km, now(s), n), km,
        COURIERS[n % len(COURIERS)], dropoff_instructions or addr.dropoff_instructions))
    cust = s.customers.edit(c.customer_id)
    cust.wallet_balance = money(cust.wallet_balance - wallet)
    if cart.promo_code is not None:
        cust.used_promos.append(cart.promo_code)
    s.carts.delete(c.customer_id)
    return order_view(s, o)


@tool(consumes=("order_id",), read_only=True)
def track_food_order(s: FoodState, order_id: str) -> dict:
    """Where an order is now: its stage, the time of each step, the courier and minutes until delivery.

    Args:
        order_id: The order's id (FDO-...).
    """
    return order_view(s, get_order(s, order_id))


@tool(consumes=("customer_id",), produces=("order_id",), read_only=True)
def list_food_orders(s: FoodState, customer_id: str, status: Status | None = None,
                     restaurant_id: str | None = None, limit: Limit = 10) -> list:
    """A customer's orders, newest first.

    Args:
        customer_id: The customer's id (CUS-...).
        status: Only orders in this stage.
        restaurant_id: Only orders from this restaurant (RST-...).
        limit: Maximum number of orders.
    """
    c = get_customer(s, customer_id)
    rid = get_restaurant(s, restaurant_id).restaurant_id if restaurant_id is not None else None
    rows = [o for o in s.orders.values() if o.customer_id == c.customer_id
            and (status is None or o.status == status) and (rid is None or o.restaurant_id == rid)]
    rows.sort(key=lambda o: (o.timeline["placed"], o.order_id), reverse=True)
    return [order_summary(s, o) for o in rows[:limit]]


@tool(consumes=("order_id",), requires=("order_placed",), establishes=("order_cancelled",))
def cancel_food_order(s: FoodState, order_id: str,
                      reason: Literal["changed_mind", "ordered_by_mistake", "taking_too_long", "wrong_address",
                                      "other"] = "changed_mind") -> dict:
    """Cancel an order and refund it in full. Only possible before the restaurant starts preparing it.

    Args:
        order_id: The order's id (FDO-...).
        reason: Why it is cancelled.
    """
    o = get_order(s, order_id)
    if o.status not in CANCELLABLE:
        why = {"preparing": f"{s.restaurants[o.restaurant_id].name} is already preparing it",
               "picked_up": "the courier has already picked it up",
               "delivered": "it was already delivered (report missing items instead)",
               "cancelled": "it is already cancelled"}[o.status]
        raise ToolError(f"order {o.order_id} can no longer be cancelled: {why}; cancelling is only possible "
                        "before preparation starts", field="order_id", code="illegal_transition")
    order = s.orders.edit(o.order_id)
    order.status, order.cancelled_at, order.cancel_reason = "cancelled", iso(now(s)), reason
    to_card = money(o.card_charged - sum(x.to_card for x in o.refunds))
    if o.wallet_used > 0:
        cust = s.customers.edit(o.customer_id)
        cust.wallet_balance = money(cust.wallet_balance + o.wallet_used)
    if o.promo_code is not None:
        cust = s.customers.edit(o.customer_id)
        cust.used_promos = [p for p in cust.used_promos if p != o.promo_code]
    order.refunds.append(Refund(new_id(s.counters, "RFD"), [x.line_id for x in o.lines], o.total, to_card,
                                o.wallet_used, "order cancelled", iso(now(s))))
    return order_view(s, order)


@tool(consumes=("order_id",), requires=("order_placed",))
def add_food_order_tip(s: FoodState, order_id: str, amount: Money) -> dict:
    """Add to the courier's tip on an order (charged to the card), up to 24 hours after delivery. The total
    tip cannot exceed the order's subtotal.

    Args:
        order_id: The order's id (FDO-...).
        amount: How much to add to the tip.
    """
    o = get_order(s, order_id)
    if o.status == "cancelled":
        raise ToolError(f"order {o.order_id} was cancelled; there is no delivery to tip", field="order_id",
                        code="illegal_transition")
    if o.status == "delivered" and now(s) - datetime.fromisoformat(o.timeline["delivered"]) > TIP_WINDOW:
        raise ToolError(f"tips can be added up to 24 hours after delivery; order {o.order_id} was delivered at "
                        f"{o.timeline['delivered']}", field="order_id", code="expired")
    if o.tip + amount > o.subtotal:
        raise ToolError(f"tip limit exceeded: the total tip (${o.tip + amount:.2f}) cannot exceed the subtotal "
                        f"(${o.subtotal:.2f})", field="amount", code="limit")
    order = s.orders.edit(o.order_id)
    order.tip = money(o.tip + amount)
    order.total = money(o.total + amount)
    order.card_charged = money(o.card_charged + amount)
    return order_view(s, order)


@tool(consumes=("order_id",), requires=("order_delivered",), establishes=("order_rated",))
def rate_food_order(s: FoodState, order_id: str, restaurant_rating: Stars, courier_rating: Stars | None = None,
                    comment: Text | None = None) -> dict:
    """Rate a delivered order (the food, and optionally the courier), once, within 7 days of delivery.

    Args:
        order_id: The order's id (FDO-...).
        restaurant_rating: Stars for the food, 1-5.
        courier_rating: Stars for the delivery, 1-5.
        comment: Anything you want to tell the restaurant.
    """
    o = get_order(s, order_id)
    if o.status != "delivered":
        raise ToolError(f"order {o.order_id} is {o.status.replace('_', ' ')}: only delivered orders can be rated",
                        field="order_id", code="illegal_transition")
    if o.rating is not None:
        raise ToolError(f"order {o.order_id} was already rated on {o.rating.rated_at[:10]}", field="order_id",
                        code="duplicate")
    if now(s) - datetime.fromisoformat(o.timeline["delivered"]) > RATING_WINDOW:
        raise ToolError(f"the rating window closed: orders can be rated within 7 days of delivery and "
                        f"{o.order_id} was delivered on {o.timeline['delivered'][:10]}", field="order_id",
                        code="expired")
    order = s.orders.edit(o.order_id)
    order.rating = OrderRating(restaurant_rating, courier_rating, comment, iso(now(s)))
    r = s.restaurants.edit(o.restaurant_id)
    r.rating = round((r.rating * r.rating_count + restaurant_rating) / (r.rating_count + 1), 1)
    r.rating_count += 1
    return order_view(s, order)


@tool(consumes=("order_id", "order_line_id"), requires=("order_delivered",), establishes=("refund_issued",))
def report_missing_food_items(s: FoodState, order_id: str,
                              line_ids: Annotated[list[str], Field(min_length=1, max_length=20)],
                              details: Text | None = None) -> dict:
    """Report dishes missing from a delivered order and get them refunded (to the card first, then to the
    wallet), within 48 hours of delivery. Each line can be refunded once.

    Args:
        order_id: The order's id (FDO-...).
        line_ids: The order lines that were missing (L1, L2, ... as shown on the order).
        details: What happened.
    """
    o = get_order(s, order_id)
    if o.status != "delivered":
        raise ToolError(f"order {o.order_id} is {o.status.replace('_', ' ')}: missing items can be reported only "
                        "after delivery", field="order_id", code="illegal_transition")
    if now(s) - datetime.fromisoformat(o.timeline["delivered"]) > REPORT_WINDOW:
        raise ToolError(f"the report window closed: missing items must be reported within 48 hours of delivery "
                        f"({o.order_id} was delivered on {o.timeline['delivered'][:10]})", field="order_id",
                        code="expired")
    wanted = []
    for raw in line_ids:
        key = raw.strip().upper()
        line = next((x for x in o.lines if x.line_id == key), None)
        if line is None:
            raise ToolError(f"order {o.order_id} has no line '{raw}' (lines: {', '.join(x.line_id for x in o.lines)})",
                            field="line_ids", code="not_found")
        if line.refunded:
            raise ToolError(f"line {line.line_id} ({line.name}) was already refunded", field="line_ids",
                            code="duplicate")
        if key in wanted:
            raise ToolError(f"line {key} is listed twice", field="line_ids")
        wanted.append(key)
    order = s.orders.edit(o.order_id)
    amount = money(sum(x.line_total for x in order.lines if x.line_id in wanted))
    for x in order.lines:
        if x.line_id in wanted:
            x.refunded = True
    to_card, to_wallet = refund(s, o, amount)
    rf = Refund(new_id(s.counters, "RFD"), wanted, amount, to_card, to_wallet, details or "missing items", iso(now(s)))
    order.refunds.append(rf)
    return {"order_id": o.order_id, "refund": rf, "refunded_lines": [x.name for x in order.lines if x.line_id in wanted]}
