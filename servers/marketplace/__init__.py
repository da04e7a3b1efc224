"""Marketplace: an eBay-like marketplace where members buy and sell — auctions with reserve prices and
end times, fixed-price listings that may accept offers, orders that are shipped and delivered, and
feedback that builds every member's seller rating. Items are located in the shared cities.

Time drives the lifecycle (``on_time``): when a listing's end time passes, an auction with bids whose
reserve is met is sold to the high bidder (an order is created and the card on file charged), otherwise
it closes unsold (reserve not met / no bids), and a fixed-price listing closes unsold; unanswered offers
expire 48 hours after they were made (or when their listing closes); shipped orders are delivered when
the carrier's transit time has passed.

Failure rules (each names the argument at fault; a failed call changes nothing):

* unknown listing_id / offer_id / order_id, unknown member username (seller, bidder, buyer, author, member),
  unknown city;
* bids: only on auctions; not on an auction that has ended; not on your own listing; not while already the
  highest bidder; at least the starting price, or the current bid plus the bid increment (bid too low);
  the bidder's card must not be expired;
* buy it now: not on auctions; not an item already sold; not a listing that is no longer active; not your
  own listing; the card must not be expired; the card security code must match;
* offers: only on fixed-price listings that accept offers and are active; not on your own listing; card
  not expired; below the asking price but at least half of it; one pending offer per buyer and listing; at
  most 3 offers per buyer and listing;
* answering an offer: only the listing's seller; not an expired offer; not an offer already accepted or
  declined; only while the listing is active;
* creating a listing: not beyond the seller's active-listing limit; auctions run 1/3/5/7/10 days, take no
  offers, and a reserve must be at least the starting price; fixed-price listings have no reserve;
* revising a price: only the seller; only an active listing; not an auction that has bids; not the same
  price; an auction's start price not above its reserve;
* ending early: only the seller; only an active listing; not an auction that has bids;
* relisting: only the seller; only unsold or ended listings (not active, not sold); not twice; not beyond
  the selling limit; auction durations as above;
* shipping: only the order's seller; only a paid order (not twice);
* feedback: only the order's buyer or seller; once per side (no feedback twice); within 60 days of the
  order; buyers only after delivery; sellers only positive.
"""

from servers.kit import Domain
from servers.marketplace import discovery, tools_buying, tools_listings, tools_orders
from servers.marketplace.state import MarketplaceState, on_time
from servers.marketplace.world import generate

domain = Domain(
    "marketplace", MarketplaceState, generate,
    description=(
        "An online marketplace of members who buy and sell: search listings, bid on auctions, buy fixed-price "
        "items now or send offers, answer offers as a seller, create, reprice, end and relist listings, ship "
        "sold orders and leave feedback. Auctions close on their end time (sold to the high bidder if the "
        "reserve is met), offers expire after 48 hours, shipped orders arrive after the carrier's transit time."
    ),
    modules=(tools_listings, tools_buying, tools_orders, discovery),
    on_time=on_time,
)

__all__ = ["MarketplaceState", "discovery", "domain", "generate", "tools_buying", "tools_listings", "tools_orders"]
