"""Marketplace tools for buyers (bids, buy it now, offers) and the seller's answer to an offer."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.kit import Money, Sensitive, Text, ToolError, iso, new_id, now, tool
from servers.marketplace.state import (
    MAX_OFFERS_PER_BUYER,
    MIN_OFFER_SHARE,
    OFFER_TTL,
    Bid,
    MarketplaceState,
    Member,
    Offer,
    bid_increment,
    card_problem,
    create_order,
    get_listing,
    get_member,
    get_offer,
    listing_row,
    min_next_bid,
    need_active,
    need_seller,
    order_row,
)

Cvv = Annotated[Sensitive, Field(pattern=r"^\d{3,4}$")]
OfferNote = Annotated[Text, Field(max_length=500)]


def _not_own(listing_seller: str, member_id: str, username: str, action: str, field: str) -> None:
    if listing_seller == member_id:
        raise ToolError(f"{username} is the seller of this listing and cannot {action} it", field=field,
                        code="forbidden")


def _card_ok(s: MarketplaceState, member: Member, field: str) -> None:
    problem = card_problem(s, member)
    if problem:
        raise ToolError(problem, field=field, code="payment_declined")


@tool(consumes=("listing_id", "member_id"), requires=("listing_active",), produces=("bid_id",),
      establishes=("bid_placed",))
def place_auction_bid(s: MarketplaceState, listing_id: str, bidder: str, amount: Money) -> dict:
    """Bid on a live auction. The bid must be at least the starting price, or beat the current high bid by
    the bid increment; sellers cannot bid on their own items. The winner is charged automatically when the
    auction ends with the reserve met.

    Args:
        listing_id: The auction listing to bid on.
        bidder: Your marketplace username (or member id).
        amount: Your bid.
    """
    x = get_listing(s, listing_id)
    m = get_member(s, bidder, "bidder")
    if x.listing_format != "auction":
        raise ToolError(f"{x.listing_id} is a fixed-price listing, not an auction: buy it now"
                        + (" or make an offer" if x.accepts_offers else ""), field="listing_id",
                        code="illegal_state")
    if x.status != "active":
        raise ToolError(f"the auction {x.listing_id} has ended ({x.status}, ended {x.ended_at or x.end_time}); "
                        "bids are no longer accepted", field="listing_id", code="auction_ended")
    _not_own(x.seller_id, m.member_id, m.username, "bid on", "bidder")
    _card_ok(s, m, "bidder")
    if x.high_bidder_id == m.member_id:
        raise ToolError(f"{m.username} is already the highest bidder on {x.listing_id} at {x.high_bid:.2f}",
                        field="bidder", code="illegal_state")
    minimum = min_next_bid(x)
    if round(amount, 2) < minimum:
        why = (f"the starting price is {x.price:.2f}" if x.high_bid is None else
               f"the current bid is {x.high_bid:.2f} and the increment is {bid_increment(x.high_bid):.2f}")
        raise ToolError(f"bid too low: {why}, so bid at least {minimum:.2f}", field="amount", code="bid_too_low")
    bid_id = new_id(s.counters, "BID", 5)
    s.bids.put(bid_id, Bid(bid_id, x.listing_id, m.member_id, round(amount, 2), iso(now(s))))
    rec = s.listings.edit(x.listing_id)
    rec.high_bid, rec.high_bidder_id, rec.bid_count = round(amount, 2), m.member_id, rec.bid_count + 1
    row = listing_row(s, rec)
    return {"bid_id": bid_id, "bidder": m.username, "amount": rec.high_bid, "you_are_high_bidder": True,
            "minimum_next_bid": min_next_bid(rec), "listing": row}


@tool(consumes=("listing_id", "member_id"), requires=("listing_active",), produces=("order_id",),
      establishes=("order_paid",))
def buy_marketplace_listing(s: MarketplaceState, listing_id: str, buyer: str, card_cvv: Cvv) -> dict:
    """Buy a fixed-price listing now at its asking price plus shipping, paying with the card on your
    account (confirm with the card's security code). Not for auctions, sold items or your own listings.

    Args:
        listing_id: The fixed-price listing to buy.
        buyer: Your marketplace username (or member id).
        card_cvv: The 3- or 4-digit security code of the card on your account.
    """
    x = get_listing(s, listing_id)
    m = get_member(s, buyer, "buyer")
    if x.listing_format == "auction":
        raise ToolError(f"{x.listing_id} is an auction: place a bid instead of buying it now",
                        field="listing_id", code="illegal_state")
    need_active(s, x, "buy")  # a sold item is no longer active
    _not_own(x.seller_id, m.member_id, m.username, "buy", "buyer")
    _card_ok(s, m, "buyer")
    if card_cvv != m.card_cvv:
        raise ToolError(f"incorrect card_cvv for the {m.card_brand} card ending {m.card_last4}", field="card_cvv",
                        code="auth")
    order = create_order(s, x, m.member_id, x.price, "buy_it_now", now(s))
    return order_row(s, order)


@tool(consumes=("listing_id", "member_id"), requires=("listing_active",), produces=("offer_id",),
      establishes=("offer_pending",))
def make_marketplace_offer(s: MarketplaceState, listing_id: str, buyer: str, amount: Money,
                           message: OfferNote | None = None) -> dict:
    """Send the seller an offer below the asking price on a fixed-price listing that accepts offers. The
    offer must be at least half the asking price, expires after 48 hours, and a buyer may make at most 3
    offers per listing, one pending at a time.

    Args:
        listing_id: The fixed-price listing.
        buyer: Your marketplace username (or member id).
        amount: The price you offer.
        message: An optional note to the seller.
    """
    x = get_listing(s, listing_id)
    m = get_member(s, buyer, "buyer")
    if x.listing_format != "fixed_price" or not x.accepts_offers:
        raise ToolError(f"{x.listing_id} does not accept offers"
                        + (" (it is an auction: place a bid)" if x.listing_format == "auction" else ""),
                        field="listing_id", code="illegal_state")
    need_active(s, x, "make an offer on")
    _not_own(x.seller_id, m.member_id, m.username, "make an offer on", "buyer")
    _card_ok(s, m, "buyer")
    if amount >= x.price:
        raise ToolError(f"an offer must be below the asking price {x.price:.2f}; buy it now instead",
                        field="amount")
    floor = round(x.price * MIN_OFFER_SHARE, 2)
    if amount < floor:
        raise ToolError(f"offer too low: the seller only considers offers of at least {floor:.2f} "
                        f"(half the asking price)", field="amount", code="offer_too_low")
    mine = [o for o in s.offers.values() if o.listing_id == x.listing_id and o.buyer_id == m.member_id]
    pending = [o for o in mine if o.status == "pending"]
    if pending:
        raise ToolError(f"{m.username} already has a pending offer {pending[0].offer_id} of "
                        f"{pending[0].amount:.2f} on {x.listing_id}; wait for the seller's answer",
                        field="listing_id", code="illegal_state")
    if len(mine) >= MAX_OFFERS_PER_BUYER:
        raise ToolError(f"offer limit reached: {m.username} already made {len(mine)} offers on {x.listing_id}",
                        field="listing_id", code="limit_exceeded")
    at = now(s)
    oid = new_id(s.counters, "OFR")
    off = Offer(offer_id=oid, listing_id=x.listing_id, buyer_id=m.member_id, amount=round(amount, 2),
                message=(message or "").strip(), status="pending", created_at=iso(at), expires_at=iso(at + OFFER_TTL))
    s.offers.put(oid, off)
    return {"offer_id": oid, "listing_id": x.listing_id, "title": x.title, "amount": off.amount,
            "asking_price": x.price, "status": "pending", "expires_at": off.expires_at}


@tool(consumes=("offer_id", "member_id"), requires=("offer_pending",), produces=("order_id",),
      establishes=("order_paid",))
def respond_to_marketplace_offer(s: MarketplaceState, offer_id: str, seller: str,
                                 decision: Literal["accept", "decline"]) -> dict:
    """Accept or decline a buyer's pending offer on your listing. Accepting sells the item at the offered
    price (the buyer's card is charged) and declines the other offers; expired offers cannot be answered.

    Args:
        offer_id: The offer, e.g. OFR-0003.
        seller: Your username (or member id); you must be the listing's seller.
        decision: "accept" or "decline".
    """
    off = get_offer(s, offer_id)
    x = s.listings[off.listing_id]
    need_seller(x, get_member(s, seller, "seller"), f"answer offer {off.offer_id} on")
    if off.status == "expired":
        raise ToolError(f"offer {off.offer_id} expired at {off.expires_at} without an answer; the buyer can "
                        "send a new offer", field="offer_id", code="expired")
    if off.status != "pending":
        raise ToolError(f"offer {off.offer_id} is already {off.status}"
                        + (f" (at {off.responded_at})" if off.responded_at else ""), field="offer_id",
                        code="illegal_state")
    at = now(s)  # a pending offer always belongs to an active listing: closing a listing settles its offers
    rec = s.offers.edit(off.offer_id)
    rec.status, rec.responded_at = ("accepted" if decision == "accept" else "declined"), iso(at)
    out: dict = {"offer_id": off.offer_id, "status": rec.status, "amount": off.amount,
                 "buyer": s.members[off.buyer_id].username, "listing_id": x.listing_id}
    if decision == "accept":  # the sale declines every other pending offer
        out["order"] = order_row(s, create_order(s, x, off.buyer_id, off.amount, "offer", at))
    return out
