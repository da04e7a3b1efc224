"""Marketplace tools for browsing listings and for sellers' listing operations."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Literal

from pydantic import Field

from servers.kit import Money, Name, Text, ToolError, iso, new_id, now, tool
from servers.kit.geo import CITY_BY_NAME
from servers.marketplace.data import AUCTION_DURATIONS, Category, Condition, ListingFormat
from servers.marketplace.state import (
    Listing,
    MarketplaceState,
    active_listing_count,
    close_offers,
    current_price,
    feedback_summary,
    get_listing,
    get_member,
    listing_row,
    min_next_bid,
    need_active,
    need_seller,
)

Limit = Annotated[int, Field(ge=1, le=50)]
Offset = Annotated[int, Field(ge=0, le=1000)]
Days = Annotated[int, Field(ge=1, le=30)]
Description = Annotated[Text, Field(min_length=1, max_length=4000)]


def _city(name: str, field: str) -> str:
    for city in CITY_BY_NAME:
        if city.lower() == name.strip().lower():
            return city
    raise ToolError(f"unknown {field} '{name}': items can be located in {', '.join(CITY_BY_NAME)}",
                    field=field, code="not_found")


@tool(produces=("listing_id", "member_id"), read_only=True)
def search_marketplace_listings(
    s: MarketplaceState, query: str | None = None, category: Category | None = None,
    listing_format: ListingFormat | None = None, city: str | None = None, max_price: Money | None = None,
    seller: str | None = None, status: Literal["active", "sold", "unsold", "ended", "any"] = "active",
    sort: Literal["ending_soonest", "newly_listed", "price_low", "price_high", "most_bids"] = "ending_soonest",
    limit: Limit = 20, offset: Offset = 0,
) -> dict:
    """Search marketplace listings by keywords and filters; shows the current price, bids, time left and
    the seller's feedback score. Only live listings unless another status is asked for.

    Args:
        query: Words that must all appear in the title (case-insensitive).
        category: Only this category.
        listing_format: Only auctions or only fixed-price (buy it now) listings.
        city: Only items located in this city.
        max_price: Only listings whose current price is at most this amount.
        seller: Only listings of this seller (username or member id).
        status: Listing status to show; "any" shows all.
        sort: Result order.
        limit: How many listings to return.
        offset: How many matching listings to skip (for paging).
    """
    words = (query or "").lower().split()
    where = _city(city, "city") if city is not None else None
    seller_id = get_member(s, seller, "seller").member_id if seller is not None else None
    rows = [x for x in s.listings.values()
            if (status == "any" or x.status == status) and all(w in x.title.lower() for w in words)
            and (category is None or x.category == category)
            and (listing_format is None or x.listing_format == listing_format)
            and (where is None or x.city == where) and (seller_id is None or x.seller_id == seller_id)
            and (max_price is None or current_price(x) <= max_price)]
    keys = {
        "ending_soonest": lambda x: (x.end_time, x.listing_id),
        "newly_listed": lambda x: (x.created_at, x.listing_id),
        "price_low": lambda x: (current_price(x), x.listing_id),
        "price_high": lambda x: (-current_price(x), x.listing_id),
        "most_bids": lambda x: (-x.bid_count, x.end_time, x.listing_id),
    }
    rows.sort(key=keys[sort], reverse=sort == "newly_listed")
    return {"total": len(rows), "offset": offset,
            "listings": [listing_row(s, x) for x in rows[offset:offset + limit]]}


@tool(consumes=("listing_id",), produces=("offer_id", "member_id"), read_only=True)
def get_marketplace_listing(s: MarketplaceState, listing_id: str) -> dict:
    """Get one listing in full: description, price, minimum next bid, whether the reserve is met, recent
    bid history, offers waiting for the seller's answer, and the seller's feedback profile.

    Args:
        listing_id: The listing's id, e.g. LST-0042.
    """
    x = get_listing(s, listing_id)
    seller = s.members[x.seller_id]
    out = {**listing_row(s, x), "description": x.description, "created_at": x.created_at,
           "watchers": x.watchers, "ended_at": x.ended_at, "end_reason": x.end_reason,
           "relisted_as": x.relisted_as, "relisted_from": x.relisted_from,
           "seller_profile": {"username": seller.username, "member_since": seller.member_since,
                              **feedback_summary(seller)}}
    if x.listing_format == "auction":
        out["starting_price"] = x.price
        out["has_reserve"] = x.reserve_price is not None
        if x.status == "active":
            out["minimum_next_bid"] = min_next_bid(x)
        bids = sorted((b for b in s.bids.values() if b.listing_id == x.listing_id),
                      key=lambda b: (b.placed_at, b.bid_id), reverse=True)
        out["recent_bids"] = [{"bidder": s.members[b.bidder_id].username, "amount": b.amount,
                               "placed_at": b.placed_at} for b in bids[:10]]
        out["high_bidder"] = s.members[x.high_bidder_id].username if x.high_bidder_id else None
    else:
        out["pending_offers"] = [
            {"offer_id": o.offer_id, "buyer": s.members[o.buyer_id].username, "amount": o.amount,
             "message": o.message, "expires_at": o.expires_at}
            for o in s.offers.values() if o.listing_id == x.listing_id and o.status == "pending"]
    if x.buyer_id:
        out["buyer"] = s.members[x.buyer_id].username
        out["order_id"] = x.order_id
    return out


@tool(consumes=("member_id",), produces=("listing_id",), establishes=("listing_active",))
def create_marketplace_listing(
    s: MarketplaceState, seller: str, title: Name, description: Description, category: Category,
    condition: Condition, listing_format: ListingFormat, price: Money, duration_days: Days = 7,
    reserve_price: Money | None = None, accepts_offers: bool = False, shipping_cost: Money | None = None,
    city: str | None = None,
) -> dict:
    """List an item for sale, as an auction (price = starting bid) or at a fixed price. Auctions run 1, 3,
    5, 7 or 10 days and may have a reserve price; fixed-price listings may accept offers. Sellers cannot
    exceed their active-listing limit.

    Args:
        seller: Your marketplace username (or member id) as the seller.
        title: The item's title as buyers will see it.
        description: What the item is and its condition, in your own words.
        category: The category to list it in.
        condition: The item's condition.
        listing_format: "auction" to take bids, "fixed_price" to sell at a set price.
        price: Starting bid for an auction, or the asking price for a fixed-price listing.
        duration_days: How many days the listing runs.
        reserve_price: Auctions only: the lowest price you will sell for (hidden from bidders).
        accepts_offers: Fixed-price only: let buyers send offers below the asking price.
        shipping_cost: What the buyer pays for shipping; omit for free shipping.
        city: Where the item is located; defaults to your city.
    """
    m = get_member(s, seller, "seller")
    active = active_listing_count(s, m.member_id)
    if active >= m.selling_limit:
        raise ToolError(f"selling limit reached: {m.username} already has {active} active listings and the "
                        f"account's limit is {m.selling_limit}; end or sell a listing first", field="seller",
                        code="limit_exceeded")
    if listing_format == "auction":
        if duration_days not in AUCTION_DURATIONS:
            raise ToolError(f"auctions run 1, 3, 5, 7 or 10 days, not {duration_days}", field="duration_days")
        if accepts_offers:
            raise ToolError("accepts_offers applies to fixed-price listings only; auctions take bids",
                            field="accepts_offers")
        if reserve_price is not None and reserve_price < price:
            raise ToolError(f"reserve_price {reserve_price:.2f} is below the starting price {price:.2f}; set it "
                            "at or above the starting price", field="reserve_price")
    elif reserve_price is not None:
        raise ToolError("reserve_price applies to auctions only", field="reserve_price")
    at = now(s)
    lid = new_id(s.counters, "LST")
    x = Listing(listing_id=lid, seller_id=m.member_id, title=title.strip(), description=description.strip(),
                category=category, condition=condition, listing_format=listing_format,
                city=_city(city, "city") if city is not None else m.city, price=round(price, 2),
                reserve_price=reserve_price, accepts_offers=accepts_offers,
                shipping_cost=round(shipping_cost or 0.0, 2), created_at=iso(at),
                end_time=iso(at + timedelta(days=duration_days)), status="active")
    s.listings.put(lid, x)
    return get_marketplace_listing(s, lid)


@tool(consumes=("listing_id", "member_id"), requires=("listing_active",))
def revise_marketplace_listing_price(s: MarketplaceState, listing_id: str, seller: str, new_price: Money) -> dict:
    """Change the price of your live listing (the asking price, or an auction's starting bid). An auction
    that already has bids can no longer be revised.

    Args:
        listing_id: The listing to revise.
        seller: Your username (or member id); you must be the listing's seller.
        new_price: The new asking price or starting bid.
    """
    x = get_listing(s, listing_id)
    need_seller(x, get_member(s, seller, "seller"), "revise")
    need_active(s, x, "revise")
    if x.bid_count:
        raise ToolError(f"cannot revise {x.listing_id}: the auction already has {x.bid_count} bid(s); a listing "
                        "with bids keeps its price", field="listing_id", code="illegal_state")
    if round(new_price, 2) == x.price:
        raise ToolError(f"{x.listing_id} is already priced at {x.price:.2f}", field="new_price")
    if x.reserve_price is not None and new_price > x.reserve_price:
        raise ToolError(f"the starting bid cannot exceed the reserve price {x.reserve_price:.2f}",
                        field="new_price")
    old = x.price
    rec = s.listings.edit(x.listing_id)
    rec.price = round(new_price, 2)
    if rec.listing_format == "fixed_price":  # offers at or above the new price no longer make sense
        for oid, off in list(s.offers.items()):
            if off.listing_id == x.listing_id and off.status == "pending" and off.amount >= rec.price:
                o = s.offers.edit(oid)
                o.status, o.responded_at = "declined", iso(now(s))
    return {**listing_row(s, rec), "previous_price": old}


@tool(consumes=("listing_id", "member_id"), requires=("listing_active",), establishes=("listing_ended",))
def end_marketplace_listing_early(
    s: MarketplaceState, listing_id: str, seller: str,
    reason: Literal["item_lost_or_broken", "no_longer_available", "error_in_listing", "other"],
) -> dict:
    """End your live listing before its end time. Not possible once an auction has bids. Pending offers
    on it are declined.

    Args:
        listing_id: The listing to end.
        seller: Your username (or member id); you must be the listing's seller.
        reason: Why the listing is ended.
    """
    x = get_listing(s, listing_id)
    need_seller(x, get_member(s, seller, "seller"), "end")
    need_active(s, x, "end")
    if x.bid_count:
        raise ToolError(f"cannot end {x.listing_id} early: the auction has {x.bid_count} bid(s) and must run to "
                        "its end time", field="listing_id", code="illegal_state")
    at = now(s)
    rec = s.listings.edit(x.listing_id)
    rec.status, rec.ended_at, rec.end_reason = "ended", iso(at), reason
    close_offers(s, x.listing_id, at, "declined")
    return listing_row(s, rec)


@tool(consumes=("listing_id", "member_id"), requires=("listing_ended",), produces=("listing_id",),
      establishes=("listing_active",))
def relist_marketplace_listing(s: MarketplaceState, listing_id: str, seller: str, duration_days: Days = 7,
                               new_price: Money | None = None) -> dict:
    """Put an unsold or ended listing of yours back on sale as a new listing (same item, optionally a new
    price). Sold listings and listings already relisted cannot be relisted.

    Args:
        listing_id: The unsold or ended listing.
        seller: Your username (or member id); you must be the listing's seller.
        duration_days: How many days the new listing runs (auctions: 1, 3, 5, 7 or 10).
        new_price: A new asking price or starting bid; omit to keep the old one.
    """
    x = get_listing(s, listing_id)
    m = get_member(s, seller, "seller")
    need_seller(x, m, "relist")
    if x.status in ("active", "sold"):
        raise ToolError(f"cannot relist {x.listing_id}: it is {x.status}; only unsold or ended listings can be "
                        "relisted", field="listing_id", code="illegal_state")
    if x.relisted_as:
        raise ToolError(f"{x.listing_id} was already relisted as {x.relisted_as}", field="listing_id",
                        code="illegal_state")
    active = active_listing_count(s, m.member_id)
    if active >= m.selling_limit:
        raise ToolError(f"selling limit reached: {m.username} already has {active} active listings (limit "
                        f"{m.selling_limit})", field="seller", code="limit_exceeded")
    if x.listing_format == "auction" and duration_days not in AUCTION_DURATIONS:
        raise ToolError(f"auctions run 1, 3, 5, 7 or 10 days, not {duration_days}", field="duration_days")
    price = round(new_price, 2) if new_price is not None else x.price
    reserve = x.reserve_price
    if reserve is not None and price > reserve:
        reserve = price
    at = now(s)
    lid = new_id(s.counters, "LST")
    s.listings.put(lid, Listing(
        listing_id=lid, seller_id=x.seller_id, title=x.title, description=x.description, category=x.category,
        condition=x.condition, listing_format=x.listing_format, city=x.city, price=price, reserve_price=reserve,
        accepts_offers=x.accepts_offers, shipping_cost=x.shipping_cost, created_at=iso(at),
        end_time=iso(at + timedelta(days=duration_days)), status="active", relisted_from=x.listing_id))
    s.listings.edit(x.listing_id).relisted_as = lid
    return get_marketplace_listing(s, lid)
