"""Marketplace discovery tools (hidden from the model): the live entities synthesis grounds requests in,
including what a member would know about themself (username, the card's security code) and the seller-only
facts (reserve prices, pending offers)."""

from __future__ import annotations

from typing import Literal

from servers.kit import discovery, value_counts
from servers.marketplace.state import (
    MarketplaceState,
    active_listing_count,
    card_problem,
    feedback_summary,
    listing_row,
    order_row,
)


@discovery(produces=("member_id",))
def marketplace_list_members(s: MarketplaceState, city: str | None = None) -> list:
    """Every member with username, name, city, feedback, card on file (last 4, security code, expiry,
    whether it is expired), selling limit and current active listings.

    Args:
        city: Only members in this city.
    """
    return [{"member_id": m.member_id, "username": m.username, "name": m.name, "email": m.email, "city": m.city,
             "member_since": m.member_since, **feedback_summary(m), "card_brand": m.card_brand,
             "card_last4": m.card_last4, "card_cvv": m.card_cvv, "card_expires": m.card_expires,
             "card_expired": card_problem(s, m) is not None, "selling_limit": m.selling_limit,
             "active_listings": active_listing_count(s, m.member_id)}
            for m in s.members.values() if city is None or m.city == city]


@discovery(produces=("listing_id", "offer_id"))
def marketplace_list_all_listings(
    s: MarketplaceState, status: Literal["active", "sold", "unsold", "ended"] | None = None,
    listing_format: Literal["auction", "fixed_price"] | None = None,
) -> list:
    """Every listing with seller-only facts: reserve price, high bidder, buyer, pending offers (id, buyer,
    amount, expiry) and whether it was relisted.

    Args:
        status: Only listings in this status.
        listing_format: Only auctions or only fixed-price listings.
    """
    out = []
    for x in s.listings.values():
        if (status is not None and x.status != status) or (listing_format is not None
                                                           and x.listing_format != listing_format):
            continue
        out.append({**listing_row(s, x), "seller_id": x.seller_id, "price": x.price,
                    "reserve_price": x.reserve_price, "high_bid": x.high_bid,
                    "high_bidder": s.members[x.high_bidder_id].username if x.high_bidder_id else None,
                    "buyer": s.members[x.buyer_id].username if x.buyer_id else None, "order_id": x.order_id,
                    "relisted_as": x.relisted_as, "created_at": x.created_at,
                    "pending_offers": [{"offer_id": o.offer_id, "buyer": s.members[o.buyer_id].username,
                                        "amount": o.amount, "expires_at": o.expires_at}
                                       for o in s.offers.values()
                                       if o.listing_id == x.listing_id and o.status == "pending"]})
    return out


@discovery(produces=("order_id",))
def marketplace_list_all_orders(
    s: MarketplaceState, status: Literal["paid", "shipped", "delivered"] | None = None,
) -> list:
    """Every order with buyer, seller, fulfilment stage and which sides already left feedback.

    Args:
        status: Only orders in this fulfilment status.
    """
    return [order_row(s, o) for o in s.orders.values() if status is None or o.status == status]


@discovery
def marketplace_get_unique_values(
    s: MarketplaceState,
    field: Literal["category", "condition", "listing_format", "listing_status", "city", "order_status",
                   "carrier", "offer_status"],
) -> list:
    """Distinct values of a categorical field with their counts.

    Args:
        field: Which field to enumerate.
    """
    if field == "listing_status":
        values = [x.status for x in s.listings.values()]
    elif field == "order_status":
        values = [o.status for o in s.orders.values()]
    elif field == "carrier":
        values = [o.carrier for o in s.orders.values() if o.carrier]
    elif field == "offer_status":
        values = [o.status for o in s.offers.values()]
    else:
        values = [getattr(x, field) for x in s.listings.values()]
    return value_counts(values)
