"""Orders after checkout: history, details, tracking, cancellation and returns.

Lifecycle: placed -> shipped -> delivered; a placed order can be cancelled (stock goes back, the card
is refunded, a coupon is released); once shipped it can only be returned after delivery, within 30
days, and only for returnable items.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Literal

from pydantic import Field

from servers.kit import ToolError, iso, new_id, require, today, tool
from servers.shopping.rules import get_customer
from servers.shopping.state import (
    RETURN_WINDOW_DAYS,
    TAX_RATE,
    Order,
    ReturnItem,
    ReturnRequest,
    ShoppingState,
)

OrderStatus = Literal["placed", "shipped", "delivered", "cancelled"]


def _order_row(o: Order) -> dict:
    return {"order_id": o.order_id, "status": o.status, "placed_on": o.placed_on, "total": o.total,
            "item_count": sum(i.quantity for i in o.items), "items": [i.name for i in o.items],
            "estimated_delivery": o.estimated_delivery, "delivered_on": o.delivered_on}


@tool(consumes=("customer_id",), produces=("order_id",), read_only=True)
def list_shop_orders(s: ShoppingState, customer_id: str, status: OrderStatus | None = None,
                     limit: Annotated[int, Field(ge=1, le=50)] = 20) -> dict:
    """List a customer's orders, newest first.

    Args:
        customer_id: The customer's id.
        status: Only orders in this status.
        limit: Maximum number of orders to return.
    """
    get_customer(s, customer_id)
    rows = [o for o in s.orders.values() if o.customer_id == customer_id and (status is None or o.status == status)]
    rows.sort(key=lambda o: (o.placed_on, o.order_id), reverse=True)
    return {"customer_id": customer_id, "orders": [_order_row(o) for o in rows[:limit]]}


@tool(consumes=("order_id",), produces=("product_id", "return_id"), read_only=True)
def get_shop_order_details(s: ShoppingState, order_id: str) -> dict:
    """Get everything about one order: items (with returned quantities), prices, coupon, shipping
    address, payment card, dates and any return requests.

    Args:
        order_id: The order id, e.g. ORD-00012.
    """
    o = require(s.orders, order_id, "order_id")
    pm = s.payment_methods.get(o.payment_method_id)
    return {**{k: v for k, v in o.__dict__.items()},
            "paid_with": f"{pm.brand} ending {pm.last4}" if pm else None,
            "returns": [r for r in s.returns.values() if r.order_id == order_id]}


@tool(consumes=("order_id",), read_only=True)
def track_shop_order(s: ShoppingState, order_id: str) -> dict:
    """Track an order's shipment: status, carrier, tracking number, estimated or actual delivery date
    and the shipment events so far.

    Args:
        order_id: The order id.
    """
    o = require(s.orders, order_id, "order_id")
    events = [{"date": o.placed_on, "event": "Order placed"}]
    if o.cancelled_on:
        events.append({"date": o.cancelled_on, "event": f"Order cancelled ({o.cancel_reason})"})
    if o.shipped_on:
        events.append({"date": o.shipped_on, "event": f"Shipped with {o.carrier}"})
        if o.status == "shipped":
            events.append({"date": today(s).isoformat(), "event": "In transit"})
    if o.delivered_on:
        events.append({"date": o.delivered_on, "event": "Delivered"})
    return {"order_id": order_id, "status": o.status, "carrier": o.carrier if o.shipped_on else None,
            "tracking_number": o.tracking_number, "shipping_method": o.shipping_method,
            "estimated_delivery": None if o.status in ("delivered", "cancelled") else o.estimated_delivery,
            "delivered_on": o.delivered_on, "ship_to": o.ship_to, "events": events}


@tool(consumes=("order_id",), requires=("order_not_shipped",))
def cancel_shop_order(s: ShoppingState, order_id: str,
                      reason: Literal["changed_mind", "found_better_price", "ordered_by_mistake",
                                      "shipping_too_slow", "other"]) -> dict:
    """Cancel an order that has not shipped yet: the full amount is refunded to the card, the items go
    back in stock and a coupon used on it can be used again.

    Args:
        order_id: The order id.
        reason: Why the customer is cancelling.
    """
    o = require(s.orders, order_id, "order_id")
    if o.status == "cancelled":
        raise ToolError(f"order {order_id} is already cancelled", field="order_id", code="illegal_state")
    if o.status in ("shipped", "delivered"):
        raise ToolError(f"order {order_id} already shipped on {o.shipped_on} and can no longer be cancelled; "
                        "request a return once it is delivered", field="order_id", code="illegal_state")
    for item in o.items:
        if item.product_id in s.products:
            product = s.products.edit(item.product_id)
            product.stock += item.quantity
            if item.size is not None:
                product.stock_by_size[item.size] = product.stock_by_size.get(item.size, 0) + item.quantity
    if o.coupon_code and o.coupon_code in s.coupons:
        coupon = s.coupons.edit(o.coupon_code)
        coupon.times_used = max(0, coupon.times_used - 1)
        coupon.used_by = [c for c in coupon.used_by if c != o.customer_id]
    o = s.orders.edit(order_id)
    o.status, o.cancelled_on, o.cancel_reason = "cancelled", today(s).isoformat(), reason
    return {"order_id": order_id, "status": o.status, "refund_amount": o.total, "cancelled_on": o.cancelled_on}


@tool(consumes=("order_id", "product_id"), produces=("return_id",), requires=("order_delivered",))
def return_shop_order_items(s: ShoppingState, order_id: str,
                            product_ids: Annotated[list[str], Field(min_length=1, max_length=20)],
                            reason: Literal["defective", "wrong_item", "wrong_size", "not_as_described",
                                            "changed_mind"]) -> dict:
    """Request a return of items from a delivered order (within 30 days of delivery; final-sale and
    grocery items cannot be returned). All remaining units of each listed product are returned and
    refunded to the original card, excluding shipping.

    Args:
        order_id: The order id.
        product_ids: The products of the order to send back.
        reason: Why the items are being returned.
    """
    o = require(s.orders, order_id, "order_id")
    if o.status != "delivered" or o.delivered_on is None:
        raise ToolError(f"order {order_id} is {o.status}; only delivered orders can be returned", field="order_id",
                        code="illegal_state")
    deadline = date.fromisoformat(o.delivered_on) + timedelta(days=RETURN_WINDOW_DAYS)
    if today(s) > deadline:
        raise ToolError(f"order {order_id} was delivered on {o.delivered_on}; the {RETURN_WINDOW_DAYS}-day return "
                        f"window closed on {iso(deadline)}", field="order_id", code="window_closed")
    wanted = list(dict.fromkeys(product_ids))
    for pid in wanted:
        lines = [i for i in o.items if i.product_id == pid]
        if not lines:
            raise ToolError(f"product_ids: {pid} is not part of order {order_id}", field="product_ids")
        if not any(i.returnable for i in lines):
            raise ToolError(f"{lines[0].name} ({pid}) is final sale and cannot be returned", field="product_ids",
                            code="not_returnable")
        if all(i.returned_quantity >= i.quantity for i in lines):
            raise ToolError(f"{lines[0].name} ({pid}) from order {order_id} has already been returned",
                            field="product_ids", code="already_returned")
    paid_share = (o.subtotal - o.discount) / o.subtotal if o.subtotal else 0.0
    o = s.orders.edit(order_id)
    returned: list[ReturnItem] = []
    refund = 0.0
    for item in o.items:
        left = item.quantity - item.returned_quantity
        if item.product_id in wanted and item.returnable and left > 0:
            returned.append(ReturnItem(item.product_id, item.size, left))
            refund += item.unit_price * left * paid_share * (1 + TAX_RATE)
            item.returned_quantity = item.quantity
    rid = new_id(s.counters, "RET-N")
    label = f"RMA{order_id[-5:].replace('-', '0')}{len(s.returns):03d}"
    return s.returns.put(rid, ReturnRequest(rid, order_id, o.customer_id, returned, reason, round(refund, 2),
                                            "requested", today(s).isoformat(), label))
