"""Marketplace state: members, listings (auctions and fixed price), bids, offers, orders, feedback — and
the shared rules (lookups that name the argument at fault, bid increments, closing auctions on time)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from servers.kit import Cell, Counters, State, Table, ToolError, iso, new_id, now, require
from servers.marketplace.data import TRANSIT_DAYS

OFFER_TTL = timedelta(hours=48)
FEEDBACK_WINDOW = timedelta(days=60)
MIN_OFFER_SHARE = 0.5  # sellers only see offers of at least half the asking price
MAX_OFFERS_PER_BUYER = 3  # per listing, like the big marketplaces


@dataclass
class Member:
    member_id: str
    username: str
    name: str
    email: str
    city: str
    member_since: str
    positive_count: int
    neutral_count: int
    negative_count: int
    card_brand: str
    card_last4: str
    card_cvv: str  # security code of the card on file (the buyer states it to pay)
    card_expires: str  # YYYY-MM
    selling_limit: int  # most listings the member may have active at once


@dataclass
class Listing:
    listing_id: str
    seller_id: str
    title: str
    description: str
    category: str
    condition: str
    listing_format: str  # auction | fixed_price
    city: str
    price: float  # fixed price, or an auction's starting bid
    reserve_price: float | None  # auctions only; hidden from buyers
    accepts_offers: bool  # fixed price only
    shipping_cost: float  # 0.0 = free shipping
    created_at: str
    end_time: str
    status: str  # active | sold | unsold | ended
    high_bid: float | None = None
    high_bidder_id: str | None = None
    bid_count: int = 0
    buyer_id: str | None = None
    order_id: str | None = None
    ended_at: str | None = None
    end_reason: str | None = None
    relisted_as: str | None = None
    relisted_from: str | None = None
    watchers: int = 0


@dataclass
class Bid:
    bid_id: str
    listing_id: str
    bidder_id: str
    amount: float
    placed_at: str


@dataclass
class Offer:
    offer_id: str
    listing_id: str
    buyer_id: str
    amount: float
    message: str
    status: str  # pending | accepted | declined | expired
    created_at: str
    expires_at: str
    responded_at: str | None = None


@dataclass
class Order:
    order_id: str
    listing_id: str
    buyer_id: str
    seller_id: str
    item_price: float
    shipping_cost: float
    total: float
    source: str  # buy_it_now | auction | offer
    status: str  # paid | shipped | delivered
    created_at: str
    carrier: str | None = None
    tracking_number: str | None = None
    shipped_at: str | None = None
    delivery_eta: str | None = None
    delivered_at: str | None = None
    feedback_ids: dict[str, str] = field(default_factory=dict)  # role (buyer|seller) -> feedback id


@dataclass
class Feedback:
    feedback_id: str
    order_id: str
    author_id: str
    recipient_id: str
    author_role: str  # buyer | seller
    rating: str  # positive | neutral | negative
    comment: str
    left_at: str


class MarketplaceState(State):
    members: Table[Member]
    listings: Table[Listing]
    bids: Table[Bid]
    offers: Table[Offer]
    orders: Table[Order]
    feedback: Table[Feedback]
    counters: Cell[Counters]


# ---------------------------------------------------------------- lookups
def when(text: str) -> datetime:
    return datetime.fromisoformat(text)


def get_member(s: MarketplaceState, ref: str, field: str) -> Member:
    """A member by id (MBR-0007) or username (case-insensitive)."""
    rec = s.members.get(ref)
    if rec is not None:
        return rec
    needle = ref.strip().lstrip("@").lower()
    for m in s.members.values():
        if m.username.lower() == needle:
            return m
    raise ToolError(f"unknown {field} '{ref}': no marketplace member has that username or member id",
                    field=field, code="not_found")


def get_listing(s: MarketplaceState, listing_id: str, field: str = "listing_id") -> Listing:
    return require(s.listings, listing_id.strip().upper(), field, shown=listing_id)


def get_order(s: MarketplaceState, order_id: str) -> Order:
    return require(s.orders, order_id.strip().upper(), "order_id", shown=order_id)


def get_offer(s: MarketplaceState, offer_id: str) -> Offer:
    return require(s.offers, offer_id.strip().upper(), "offer_id", shown=offer_id)


def need_seller(listing: Listing, member: Member, action: str) -> None:
    if listing.seller_id != member.member_id:
        raise ToolError(f"cannot {action} {listing.listing_id}: {member.username} is not the seller of this "
                        "listing; only the seller can do that", field="seller", code="forbidden")


def need_active(s: MarketplaceState, listing: Listing, action: str) -> None:
    if listing.status != "active":
        raise ToolError(f"cannot {action} {listing.listing_id}: the listing is {listing.status}"
                        + (" (already sold)" if listing.status == "sold" else "")
                        + (f"; it ended at {listing.ended_at}" if listing.ended_at else ""),
                        field="listing_id", code="illegal_state")


def card_problem(s: MarketplaceState, m: Member) -> str | None:
    year, month = (int(x) for x in m.card_expires.split("-"))
    today = now(s).date()
    if (year, month) < (today.year, today.month):
        return (f"the {m.card_brand} card ending {m.card_last4} on {m.username}'s account expired "
                f"{m.card_expires}; update the payment card before buying or bidding")
    return None


# ---------------------------------------------------------------- pricing
_INCREMENTS: tuple[tuple[float, float], ...] = (
    (1.0, 0.05), (5.0, 0.25), (25.0, 0.5), (100.0, 1.0), (250.0, 2.5), (500.0, 5.0), (1000.0, 10.0),
    (2500.0, 25.0), (5000.0, 50.0),
)


def bid_increment(price: float) -> float:
    """The minimum raise over the current high bid, by price band."""
    for bound, step in _INCREMENTS:
        if price < bound:
            return step
    return 100.0


def min_next_bid(listing: Listing) -> float:
    if listing.high_bid is None:
        return listing.price
    return round(listing.high_bid + bid_increment(listing.high_bid), 2)


def current_price(listing: Listing) -> float:
    return listing.high_bid if listing.high_bid is not None else listing.price


def feedback_summary(m: Member) -> dict[str, Any]:
    rated = m.positive_count + m.negative_count
    return {"feedback_score": m.positive_count - m.negative_count,
            "positive_percent": round(100.0 * m.positive_count / rated, 1) if rated else None,
            "ratings": {"positive": m.positive_count, "neutral": m.neutral_count, "negative": m.negative_count}}


def active_listing_count(s: MarketplaceState, member_id: str) -> int:
    return sum(1 for x in s.listings.values() if x.seller_id == member_id and x.status == "active")


# ---------------------------------------------------------------- views
def listing_row(s: MarketplaceState, x: Listing) -> dict[str, Any]:
    seller = s.members[x.seller_id]
    row: dict[str, Any] = {
        "listing_id": x.listing_id, "title": x.title, "category": x.category, "condition": x.condition,
        "listing_format": x.listing_format, "status": x.status, "current_price": current_price(x),
        "shipping_cost": x.shipping_cost, "city": x.city, "seller": seller.username,
        "seller_feedback_score": seller.positive_count - seller.negative_count, "ends_at": x.end_time,
    }
    if x.listing_format == "auction":
        row["bid_count"] = x.bid_count
        row["reserve_met"] = None if x.reserve_price is None else (x.high_bid or 0) >= x.reserve_price
    else:
        row["accepts_offers"] = x.accepts_offers
    if x.status == "active":
        row["minutes_left"] = max(0, int((when(x.end_time) - now(s)).total_seconds() // 60))
    return row


def order_row(s: MarketplaceState, o: Order) -> dict[str, Any]:
    return {
        "order_id": o.order_id, "listing_id": o.listing_id, "title": s.listings[o.listing_id].title,
        "buyer": s.members[o.buyer_id].username, "seller": s.members[o.seller_id].username,
        "item_price": o.item_price, "shipping_cost": o.shipping_cost, "total": o.total, "source": o.source,
        "status": o.status, "ordered_at": o.created_at, "carrier": o.carrier, "tracking_number": o.tracking_number,
        "shipped_at": o.shipped_at, "delivery_eta": o.delivery_eta, "delivered_at": o.delivered_at,
        "buyer_feedback_left": "buyer" in o.feedback_ids, "seller_feedback_left": "seller" in o.feedback_ids,
    }


# ---------------------------------------------------------------- state changes shared by tools and time
def create_order(s: MarketplaceState, listing: Listing, buyer_id: str, price: float, source: str,
                 at: datetime) -> Order:
    oid = new_id(s.counters, "ORD")
    order = Order(order_id=oid, listing_id=listing.listing_id, buyer_id=buyer_id, seller_id=listing.seller_id,
                  item_price=round(price, 2), shipping_cost=listing.shipping_cost,
                  total=round(price + listing.shipping_cost, 2), source=source, status="paid", created_at=iso(at))
    s.orders.put(oid, order)
    x = s.listings.edit(listing.listing_id)
    x.status, x.buyer_id, x.order_id, x.ended_at = "sold", buyer_id, oid, iso(at)
    close_offers(s, listing.listing_id, at, "declined")
    return order


def close_offers(s: MarketplaceState, listing_id: str, at: datetime, status: str) -> None:
    """Settle every pending offer of a listing that is no longer for sale."""
    for oid, off in list(s.offers.items()):
        if off.listing_id == listing_id and off.status == "pending":
            rec = s.offers.edit(oid)
            rec.status, rec.responded_at = status, iso(at)


def close_listing(s: MarketplaceState, listing: Listing) -> None:
    """A listing reached its end time: auctions sell to the high bidder if the reserve is met."""
    at = when(listing.end_time)
    if listing.listing_format == "auction" and listing.high_bidder_id is not None and (
            listing.reserve_price is None or (listing.high_bid or 0) >= listing.reserve_price):
        create_order(s, listing, listing.high_bidder_id, listing.high_bid or listing.price, "auction", at)
        return
    x = s.listings.edit(listing.listing_id)
    x.status, x.ended_at = "unsold", listing.end_time
    if listing.listing_format == "auction":
        x.end_reason = "reserve not met" if listing.bid_count else "no bids"
    else:
        x.end_reason = "listing duration ended"
    close_offers(s, listing.listing_id, at, "expired")


def on_time(s: MarketplaceState, before: datetime, after: datetime) -> None:
    """Close listings whose end time passed, expire unanswered offers, deliver shipped orders."""
    due = sorted((when(x.end_time), lid) for lid, x in s.listings.items()
                 if x.status == "active" and when(x.end_time) <= after)
    for _, lid in due:
        close_listing(s, s.listings[lid])
    for oid, off in list(s.offers.items()):
        if off.status == "pending" and when(off.expires_at) <= after:
            rec = s.offers.edit(oid)
            rec.status, rec.responded_at = "expired", off.expires_at
    for oid, o in list(s.orders.items()):
        if o.status == "shipped" and o.delivery_eta is not None and when(o.delivery_eta) <= after:
            rec = s.orders.edit(oid)
            rec.status, rec.delivered_at = "delivered", o.delivery_eta


def ship(order: Order, carrier: str, tracking: str, at: datetime) -> None:
    """Mark an (editable) order shipped with an ETA from the carrier's transit time."""
    order.status, order.carrier, order.tracking_number = "shipped", carrier, tracking
    order.shipped_at = iso(at)
    order.delivery_eta = iso(at + timedelta(days=TRANSIT_DAYS[carrier]))
