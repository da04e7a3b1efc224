"""The seeded marketplace world: ~36 members in the shared cities, ~120 listings (auctions and fixed
price, live and finished) with bid histories, offers, orders at every fulfilment stage and feedback.

Every seed contains the archetypes the failure rules need: a seller at their selling limit, a member
whose card expired, auctions about to close with the reserve met and not met, a fresh auction without
bids, a finished auction, sold / unsold / ended-early fixed-price listings, pending offers (one about
to expire), an unshipped order, one in transit, delivered orders with and without feedback and one
past the feedback window.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from servers.kit import Counters, Seeds, iso, new_id
from servers.kit.fake import REFERENCE_DATE
from servers.kit.geo import CITIES
from servers.marketplace.data import (
    AUCTION_DURATIONS,
    CONDITIONS,
    DESCRIPTION_DETAILS,
    DESCRIPTION_OPENERS,
    ITEMS,
    TRANSIT_DAYS,
)
from servers.marketplace.state import (
    OFFER_TTL,
    Bid,
    Feedback,
    Listing,
    MarketplaceState,
    Member,
    Offer,
    Order,
    bid_increment,
)

REF = REFERENCE_DATE
N_MEMBERS = 36
N_SELLERS = 22
_BRANDS = ("Visa", "Mastercard", "Amex", "Discover")
_FEEDBACK_TEXT = {
    "buyer": ("Item exactly as described, fast shipping. Thanks!", "Great seller, well packed.",
              "Arrived a bit late but in perfect shape.", "Smooth transaction, would buy again."),
    "seller": ("Prompt payment, great buyer.", "Pleasure to deal with, recommended.", "Quick payment, thank you!"),
}


class _World:
    def __init__(self, s: MarketplaceState, seeds: Seeds) -> None:
        self.s, self.seeds, self.rng = s, seeds, seeds.rng
        items = [(cat, *it) for cat, its in ITEMS.items() for it in its]
        self.rng.shuffle(items)
        self.items = iter(items)
        self.members: list[Member] = []
        self.cities = [c.name for c in CITIES]  # the first members (all sellers) cover every city
        self.rng.shuffle(self.cities)

    # -- members ------------------------------------------------------------------------------
    def member(self, i: int) -> Member:
        rng, fake = self.rng, self.seeds.fake
        name = fake.name()
        taken = {m.username for m in self.members}
        base = fake.user_name().lower()
        username = base if base not in taken else f"{base}{i}"
        positive = rng.choice((rng.randint(0, 40), rng.randint(40, 400), rng.randint(400, 2500)))
        return Member(
            member_id=f"MBR-{i:04d}", username=username, name=name,
            email=f"{username}@{rng.choice(('gmail.com', 'outlook.com', 'yahoo.com', 'icloud.com'))}",
            city=self.cities[i - 1] if i <= len(self.cities) else self.seeds.choice(CITIES).name, member_since=iso((REF - timedelta(days=rng.randint(60, 4000))).date()),
            positive_count=positive, neutral_count=rng.randint(0, positive // 40 + 1),
            negative_count=rng.randint(0, positive // 60 + 1), card_brand=self.seeds.choice(_BRANDS),
            card_last4=f"{rng.randint(0, 9999):04d}", card_cvv=f"{rng.randint(100, 999)}",
            card_expires=f"{rng.randint(2026, 2030)}-{rng.randint(1, 12):02d}", selling_limit=50,
        )

    def buyer_for(self, seller_id: str, avoid: str | None = None) -> Member:
        while True:
            m = self.seeds.choice(self.members)
            if m.member_id not in (seller_id, avoid):
                return m

    # -- listings -----------------------------------------------------------------------------
    def listing(self, seller: Member, fmt: str, created: datetime, end: datetime, *,
                accepts_offers: bool = False, reserve: bool | None = None) -> Listing:
        rng = self.rng
        cat, title, lo, hi = next(self.items)
        condition = self.seeds.choice(CONDITIONS[:4]) if rng.random() < 0.95 else "for_parts"
        value = self.seeds.money(lo, hi)
        price = round(value * rng.uniform(0.3, 0.7), 0) + 0.99 if fmt == "auction" else round(value, 0) - 0.01
        if reserve is None:
            reserve = fmt == "auction" and rng.random() < 0.35
        opener = self.seeds.choice(DESCRIPTION_OPENERS).format(title=title)
        lid = new_id(self.s.counters, "LST")
        x = Listing(
            listing_id=lid, seller_id=seller.member_id, title=title,
            description=f"{opener} {DESCRIPTION_DETAILS[condition]} Ships from {seller.city}.",
            category=cat, condition=condition, listing_format=fmt, city=seller.city, price=price,
            reserve_price=round(value * rng.uniform(0.8, 1.0), 0) if reserve else None,
            accepts_offers=accepts_offers and fmt == "fixed_price",
            shipping_cost=0.0 if rng.random() < 0.4 else self.seeds.money(5, 35),
            created_at=iso(created), end_time=iso(end), status="active", watchers=rng.randint(0, 45),
        )
        self.s.listings.put(lid, x)
        return x

    def bids(self, x: Listing, k: int, until: datetime, *, reach: float | None = None) -> None:
        """``k`` ascending bids between creation and ``until``; ``reach`` forces the last bid's amount."""
        rng = self.rng
        start = datetime.fromisoformat(x.created_at)
        span = max(60, int((until - start).total_seconds() // 60) - 1)
        times = sorted(rng.sample(range(1, span), min(k, span - 1)))
        amount, last = x.price, None
        for j, minute in enumerate(times):
            if j:
                amount = round(amount + bid_increment(amount) * rng.randint(1, 6), 2)
            if reach is not None and j == len(times) - 1:
                amount = max(amount, reach)
            bidder = self.buyer_for(x.seller_id, last)
            last = bidder.member_id
            bid_id = new_id(self.s.counters, "BID", 5)
            self.s.bids.put(bid_id, Bid(bid_id, x.listing_id, bidder.member_id, amount,
                                        iso(start + timedelta(minutes=minute))))
            x.high_bid, x.high_bidder_id, x.bid_count = amount, bidder.member_id, x.bid_count + 1

    def auction(self, seller: Member, end: datetime, *, days: int | None = None, reserve: bool | None = None
                ) -> Listing:
        days = days or self.seeds.choice(AUCTION_DURATIONS)
        created = end - timedelta(days=days)
        return self.listing(seller, "auction", created, end, reserve=reserve)

    def fixed(self, seller: Member, end: datetime, *, offers: bool | None = None) -> Listing:
        accepts = self.rng.random() < 0.5 if offers is None else offers
        return self.listing(seller, "fixed_price", end - timedelta(days=30), end, accepts_offers=accepts)

    # -- settlement ---------------------------------------------------------------------------
    def sell(self, x: Listing, buyer_id: str, price: float, source: str, at: datetime, *,
             stage: str | None = None, feedback: bool | None = None) -> Order:
        """Sell ``x`` at ``at``; the order progresses with its age unless ``stage`` forces one."""
        rng = self.rng
        oid = new_id(self.s.counters, "ORD")
        o = Order(order_id=oid, listing_id=x.listing_id, buyer_id=buyer_id, seller_id=x.seller_id,
                  item_price=round(price, 2), shipping_cost=x.shipping_cost, total=round(price + x.shipping_cost, 2),
                  source=source, status="paid", created_at=iso(at))
        x.status, x.buyer_id, x.order_id, x.ended_at = "sold", buyer_id, oid, iso(at)
        carrier = self.seeds.choice(tuple(TRANSIT_DAYS))
        shipped = at + timedelta(hours=rng.randint(6, 40))
        if stage != "paid" and shipped < REF:
            o.status, o.carrier, o.shipped_at = "shipped", carrier, iso(shipped)
            o.tracking_number = f"{carrier[:2].upper()}{rng.randint(10**9, 10**10 - 1)}"
            eta = shipped + timedelta(days=TRANSIT_DAYS[carrier])
            o.delivery_eta = iso(eta)
            if eta <= REF:
                o.status, o.delivered_at = "delivered", iso(eta)
        self.s.orders.put(oid, o)
        give = rng.random() < 0.5 if feedback is None else feedback
        if o.status == "delivered" and give:
            self.feedback(o, "buyer", datetime.fromisoformat(o.delivered_at or o.created_at) + timedelta(hours=5))
            if rng.random() < 0.6:
                self.feedback(o, "seller", datetime.fromisoformat(o.delivered_at or o.created_at)
                              + timedelta(hours=9))
        return o

    def feedback(self, o: Order, role: str, at: datetime) -> None:
        author, recipient = (o.buyer_id, o.seller_id) if role == "buyer" else (o.seller_id, o.buyer_id)
        rating = "positive" if role == "seller" or self.rng.random() < 0.85 else self.seeds.choice(
            ("neutral", "negative"))
        fid = new_id(self.s.counters, "FBK")
        comment = self.seeds.choice(_FEEDBACK_TEXT[role]) if rating == "positive" else "Item not as described."
        self.s.feedback.put(fid, Feedback(fid, o.order_id, author, recipient, role, rating, comment, iso(at)))
        o.feedback_ids[role] = fid
        m = self.s.members[recipient]
        setattr(m, f"{rating}_count", getattr(m, f"{rating}_count") + 1)

    def offer(self, x: Listing, amount_share: float, created: datetime, status: str = "pending") -> Offer:
        waiting = {o.buyer_id for o in self.s.offers.values() if o.listing_id == x.listing_id}
        buyer = self.buyer_for(x.seller_id)
        while buyer.member_id in waiting:
            buyer = self.buyer_for(x.seller_id)
        oid = new_id(self.s.counters, "OFR")
        off = Offer(offer_id=oid, listing_id=x.listing_id, buyer_id=buyer.member_id,
                    amount=round(x.price * amount_share, 0), message=self.seeds.choice(
                        ("Would you take this?", "Can pay right away.", "Best I can do, thanks!", "")),
                    status=status, created_at=iso(created), expires_at=iso(created + OFFER_TTL))
        if status != "pending":
            off.responded_at = iso(created + timedelta(hours=self.rng.randint(1, 40)))
        self.s.offers.put(oid, off)
        return off

    # -- the world ----------------------------------------------------------------------------
    def build(self) -> None:
        rng, s = self.rng, self.s
        for i in range(1, N_MEMBERS + 1):
            m = self.member(i)
            self.members.append(m)
            s.members.put(m.member_id, m)
        limited, expired = self.members[0], self.members[1]
        limited.selling_limit, limited.positive_count, limited.neutral_count, limited.negative_count = 3, 4, 0, 0
        expired.card_expires = f"{rng.choice((2025, 2026))}-{rng.randint(1, 4):02d}"
        sellers = self.members[1:N_SELLERS]

        def pick() -> Member:
            return self.seeds.choice(sellers)

        # archetypes -----------------------------------------------------------------------------
        for _ in range(3):  # a new seller at the selling limit
            self.fixed(limited, REF + timedelta(days=rng.randint(5, 25)))
        x = self.auction(pick(), REF + timedelta(minutes=rng.randint(80, 110)), reserve=True)
        self.bids(x, rng.randint(3, 6), REF, reach=x.reserve_price)  # closes soon, reserve met
        x = self.auction(pick(), REF + timedelta(minutes=rng.randint(140, 170)), reserve=True)
        self.bids(x, 2, REF)  # closes soon, reserve not met
        if (x.high_bid or 0) >= (x.reserve_price or 0):
            x.reserve_price = round((x.high_bid or 0) * 1.5, 0)
        self.auction(pick(), REF + timedelta(days=rng.randint(3, 6)), days=7, reserve=False)  # fresh, no bids
        x = self.auction(pick(), REF - timedelta(days=3), days=7, reserve=False)  # finished auction, sold
        self.bids(x, 4, REF - timedelta(days=3))
        self.sell(x, x.high_bidder_id or "", x.high_bid or x.price, "auction", REF - timedelta(days=3), stage="paid")
        x = self.auction(pick(), REF - timedelta(days=2), days=5, reserve=True)  # finished auction, unsold
        self.bids(x, 1, REF - timedelta(days=2))
        x.status, x.ended_at, x.end_reason = "unsold", x.end_time, "reserve not met"
        if (x.high_bid or 0) >= (x.reserve_price or 0):
            x.reserve_price = round((x.high_bid or 0) * 1.5, 0)
        x = self.fixed(pick(), REF + timedelta(days=rng.randint(8, 20)), offers=True)  # offers waiting
        self.offer(x, 0.8, REF - timedelta(hours=47))  # expires within the hour
        self.offer(x, 0.85, REF - timedelta(hours=rng.randint(2, 20)))
        self.offer(x, 0.6, REF - timedelta(days=4), "declined")
        x = self.fixed(pick(), REF + timedelta(days=rng.randint(5, 25)))  # sold, waiting to ship
        self.sell(x, self.buyer_for(x.seller_id).member_id, x.price, "buy_it_now", REF - timedelta(hours=6),
                  stage="paid")
        x = self.fixed(pick(), REF + timedelta(days=rng.randint(5, 25)))  # ended early by the seller
        x.status, x.ended_at, x.end_reason = "ended", iso(REF - timedelta(days=4)), "no_longer_available"
        x = self.fixed(pick(), REF + timedelta(days=10))  # in transit, delivered in about a day
        o = self.sell(x, self.buyer_for(x.seller_id).member_id, x.price, "buy_it_now", REF - timedelta(days=2),
                      stage="paid")
        o.status, o.carrier, o.tracking_number = "shipped", "FedEx", f"FE{rng.randint(10**9, 10**10 - 1)}"
        o.shipped_at, o.delivery_eta = iso(REF - timedelta(days=1)), iso(REF + timedelta(hours=rng.randint(20, 30)))
        for age, give in ((12, True), (9, False), (80, False)):  # delivered: rated, unrated, past the window
            x = self.fixed(pick(), REF - timedelta(days=age - 5))
            self.sell(x, self.buyer_for(x.seller_id).member_id, x.price, "buy_it_now",
                      REF - timedelta(days=age), feedback=give)
            if give and self.s.orders[x.order_id or ""].feedback_ids.get("buyer") is None:
                raise AssertionError("archetype order without buyer feedback")

        # the rest of the catalogue -------------------------------------------------------------
        for k in range(sum(len(v) for v in ITEMS.values()) - len(s.listings)):
            seller, roll = sellers[k] if k < len(sellers) else pick(), rng.random()  # every seller sells
            if roll < 0.42:  # live auction
                x = self.auction(seller, REF + timedelta(minutes=rng.randint(240, 10 * 1440)))
                if rng.random() < 0.6:
                    self.bids(x, rng.randint(1, 8), REF)
            elif roll < 0.78:  # live fixed price
                x = self.fixed(seller, REF + timedelta(days=rng.randint(1, 29), minutes=rng.randint(0, 1439)))
                if x.accepts_offers and rng.random() < 0.3:
                    self.offer(x, rng.uniform(0.6, 0.9), REF - timedelta(hours=rng.randint(1, 40)))
            elif roll < 0.88:  # finished auction
                end = REF - timedelta(days=rng.randint(1, 40), minutes=rng.randint(0, 1439))
                x = self.auction(seller, end)
                if rng.random() < 0.75:
                    self.bids(x, rng.randint(1, 8), end)
                if x.high_bidder_id and (x.reserve_price is None or (x.high_bid or 0) >= x.reserve_price):
                    self.sell(x, x.high_bidder_id, x.high_bid or x.price, "auction", end)
                else:
                    x.status, x.ended_at = "unsold", x.end_time
                    x.end_reason = "reserve not met" if x.bid_count else "no bids"
            else:  # finished fixed price: sold, or ended
                end = REF - timedelta(days=rng.randint(1, 40))
                x = self.fixed(seller, end + timedelta(days=rng.randint(0, 20)))
                if rng.random() < 0.7:
                    self.sell(x, self.buyer_for(x.seller_id).member_id, x.price, "buy_it_now", end)
                else:
                    x.status, x.ended_at, x.end_reason = "unsold", x.end_time, "listing duration ended"
                    if datetime.fromisoformat(x.end_time) > REF:
                        x.status, x.ended_at, x.end_reason = "ended", iso(end), "error_in_listing"


def generate(s: MarketplaceState, seeds: Seeds) -> None:
    s.counters.set(Counters())
    _World(s, seeds).build()
