"""Marketplace tools for orders after the sale: listing purchases and sales, shipping, feedback."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.kit import Text, ToolError, iso, new_id, now, tool
from servers.marketplace.data import Carrier
from servers.marketplace.state import (
    FEEDBACK_WINDOW,
    Feedback,
    MarketplaceState,
    feedback_summary,
    get_member,
    get_order,
    order_row,
    ship,
    when,
)

Limit = Annotated[int, Field(ge=1, le=50)]
Tracking = Annotated[str, Field(min_length=8, max_length=34, pattern=r"^[A-Za-z0-9]+$")]
FeedbackText = Annotated[Text, Field(min_length=1, max_length=500)]


@tool(consumes=("member_id",), produces=("order_id",), read_only=True)
def list_marketplace_orders(
    s: MarketplaceState, member: str, role: Literal["buyer", "seller"] = "buyer",
    status: Literal["paid", "shipped", "delivered"] | None = None, limit: Limit = 20,
) -> dict:
    """List a member's marketplace orders, newest first: what they bought, or (role seller) what they
    sold, with payment, shipping and feedback status.

    Args:
        member: The member's username (or member id).
        role: "buyer" for purchases, "seller" for sales.
        status: Only orders in this fulfilment status (paid = waiting to be shipped).
        limit: How many orders to return.
    """
    m = get_member(s, member, "member")
    key = "buyer_id" if role == "buyer" else "seller_id"
    rows = [o for o in s.orders.values() if getattr(o, key) == m.member_id and (status is None or o.status == status)]
    rows.sort(key=lambda o: (o.created_at, o.order_id), reverse=True)
    return {"member": m.username, "role": role, "total": len(rows), "orders": [order_row(s, o) for o in rows[:limit]]}


@tool(consumes=("order_id", "member_id"), requires=("order_paid",), establishes=("order_shipped",))
def ship_marketplace_order(s: MarketplaceState, order_id: str, seller: str, carrier: Carrier,
                           tracking_number: Tracking) -> dict:
    """Mark a paid order you sold as shipped, with the carrier and tracking number; the buyer gets a
    delivery estimate from the carrier's transit time. Only the seller can ship, and only once.

    Args:
        order_id: The order to ship, e.g. ORD-0012.
        seller: Your username (or member id); you must be the order's seller.
        carrier: The shipping carrier.
        tracking_number: The carrier's tracking number (letters and digits).
    """
    o = get_order(s, order_id)
    m = get_member(s, seller, "seller")
    if o.seller_id != m.member_id:
        raise ToolError(f"{m.username} is not the seller of order {o.order_id}; only the seller ships it",
                        field="seller", code="forbidden")
    if o.status != "paid":
        raise ToolError(f"order {o.order_id} is already {o.status} ({o.carrier} {o.tracking_number})",
                        field="order_id", code="illegal_state")
    rec = s.orders.edit(o.order_id)
    ship(rec, carrier, tracking_number.upper(), now(s))
    return order_row(s, rec)


@tool(consumes=("order_id", "member_id"), requires=("order_shipped",), produces=("feedback_id",))
def leave_marketplace_feedback(
    s: MarketplaceState, order_id: str, author: str, rating: Literal["positive", "neutral", "negative"],
    comment: FeedbackText,
) -> dict:
    """Rate the other party of an order. Buyers rate the seller once the item is delivered; sellers rate
    the buyer any time after payment but may only leave positive feedback. One feedback per side, within
    60 days of the order.

    Args:
        order_id: The order the feedback is about.
        author: Your username (or member id): the order's buyer or seller.
        rating: Your rating of the other party.
        comment: A short public comment about the transaction.
    """
    o = get_order(s, order_id)
    m = get_member(s, author, "author")
    if m.member_id == o.buyer_id:
        role, recipient_id = "buyer", o.seller_id
    elif m.member_id == o.seller_id:
        role, recipient_id = "seller", o.buyer_id
    else:
        raise ToolError(f"{m.username} is neither the buyer nor the seller of order {o.order_id}", field="author",
                        code="forbidden")
    if role in o.feedback_ids:
        raise ToolError(f"{m.username} already left feedback for order {o.order_id} "
                        f"({s.feedback[o.feedback_ids[role]].rating}); feedback cannot be left twice",
                        field="order_id", code="duplicate")
    at = now(s)
    if at - when(o.created_at) > FEEDBACK_WINDOW:
        raise ToolError(f"the feedback window for order {o.order_id} closed 60 days after the order "
                        f"({o.created_at})", field="order_id", code="expired")
    if role == "buyer" and o.status != "delivered":
        raise ToolError(f"order {o.order_id} is {o.status}, not delivered yet; buyers can rate the seller once "
                        "the item arrives", field="order_id", code="illegal_state")
    if role == "seller" and rating != "positive":
        raise ToolError("sellers can only leave positive feedback for buyers", field="rating", code="forbidden")
    fid = new_id(s.counters, "FBK")
    s.feedback.put(fid, Feedback(fid, o.order_id, m.member_id, recipient_id, role, rating, comment.strip(), iso(at)))
    s.orders.edit(o.order_id).feedback_ids[role] = fid
    rec = s.members.edit(recipient_id)
    setattr(rec, f"{rating}_count", getattr(rec, f"{rating}_count") + 1)
    return {"feedback_id": fid, "order_id": o.order_id, "from": m.username, "to": rec.username, "rating": rating,
            "comment": comment.strip(), "left_at": iso(at), "recipient_feedback": feedback_summary(rec)}
