"""Marketplace domain: tool count, every failure rule (state unchanged), the auction /
offer / delivery lifecycle on the session clock, replay determinism."""

from __future__ import annotations

from typing import Any

import pytest

from servers import PAPER_TOOL_COUNTS
from servers.kit import DomainRuntime
from servers.kit.geo import CITY_BY_NAME
from servers.marketplace import domain
from tests.servers.harness import assert_replays_alike, fails, new_sid, ok


class World:
    """The guaranteed archetypes of a seeded world, read through the discovery tools."""

    def __init__(self, rt: DomainRuntime, sid: str, seed: int) -> None:
        self.members = ok(rt, sid, seed, "marketplace_list_members", {})
        self.listings = ok(rt, sid, seed, "marketplace_list_all_listings", {})
        self.orders = ok(rt, sid, seed, "marketplace_list_all_orders", {})
        self.by_name = {m["username"]: m for m in self.members}

    def listing(self, **want: Any) -> dict[str, Any]:
        return next(x for x in self.listings if all(x.get(k) == v for k, v in want.items()))

    def member_not(self, *names: str | None) -> dict[str, Any]:
        return next(m for m in self.members if not m["card_expired"] and m["username"] not in names
                    and m["selling_limit"] > 3)

    @property
    def limited(self) -> dict[str, Any]:
        return next(m for m in self.members if m["selling_limit"] == 3)

    @property
    def expired(self) -> dict[str, Any]:
        return next(m for m in self.members if m["card_expired"])

    def soon(self, reserve_met: bool) -> dict[str, Any]:
        return next(x for x in self.listings if x["status"] == "active" and x["listing_format"] == "auction"
                    and x["minutes_left"] < 200 and x["reserve_price"] is not None and x["bid_count"]
                    and x["reserve_met"] is reserve_met)

    @property
    def fresh_auction(self) -> dict[str, Any]:
        return next(x for x in self.listings if x["status"] == "active" and x["listing_format"] == "auction"
                    and not x["bid_count"] and x["reserve_price"] is None and x["minutes_left"] > 1440
                    and x["seller"] != self.limited["username"])

    @property
    def with_offers(self) -> dict[str, Any]:
        return next(x for x in self.listings if len(x["pending_offers"]) >= 2)

    def order(self, status: str, **want: Any) -> dict[str, Any]:
        return next(o for o in self.orders if o["status"] == status and all(o[k] == v for k, v in want.items()))


# ---------------------------------------------------------------- (1) tool count, (2) smoke coverage
def test_exactly_thirteen_user_tools_and_named_discovery(rt: DomainRuntime) -> None:
    assert len(domain.user_tools) == PAPER_TOOL_COUNTS["marketplace"] == 13
    assert len(rt.table.openai_tools()) == 13
    discovery = [s.name for s in domain.tools.values() if s.kind == "discovery"]
    assert 2 <= len(discovery) <= 4 and all(n.startswith("marketplace_") for n in discovery)
    assert all(s.consumes or s.produces or s.requires for s in domain.user_tools)
    assert rt.table.sensitive_params("buy_marketplace_listing") == ["card_cvv"]
    money = rt.table.schemas["place_auction_bid"]["properties"]["amount"]
    assert money.get("x-money") and money["minimum"] == 0.01


@pytest.mark.parametrize("seed", range(12))
def test_world_archetypes_exist_in_every_seed(rt: DomainRuntime, seed: int) -> None:
    w = World(rt, new_sid(), seed)
    assert w.limited["active_listings"] == 3 and w.expired
    assert w.soon(True) and w.soon(False) and w.fresh_auction
    assert min(o["expires_at"] for o in w.with_offers["pending_offers"]) <= "2026-06-01T10:00:00+00:00"
    assert w.listing(status="sold", listing_format="auction") and w.listing(status="unsold", listing_format="auction")
    assert w.listing(status="sold", listing_format="fixed_price") and w.listing(status="ended")
    assert w.order("paid") and w.order("shipped") and w.order("delivered", buyer_feedback_left=True)
    assert any(o["ordered_at"] < "2026-04-01" and not o["buyer_feedback_left"] for o in w.orders)
    assert 100 <= len(w.listings) <= 200 and 30 <= len(w.members) <= 60 and {x["city"] for x in w.listings} == set(CITY_BY_NAME)


# ---------------------------------------------------------------- (3) failure rules leave state alone
def test_unknown_ids_and_filters(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    fails(rt, sid, seed, "get_marketplace_listing", {"listing_id": "LST-9999"}, "unknown listing_id")
    fails(rt, sid, seed, "respond_to_marketplace_offer", {"offer_id": "OFR-9999", "seller": "x", "decision": "accept"},
          "unknown offer_id")
    fails(rt, sid, seed, "ship_marketplace_order", {"order_id": "ORD-9999", "seller": "x", "carrier": "UPS",
                                                    "tracking_number": "1Z12345678"}, "unknown order_id")
    fails(rt, sid, seed, "list_marketplace_orders", {"member": "no_such_member_42"}, "unknown member")
    fails(rt, sid, seed, "search_marketplace_listings", {"seller": "no_such_member_42"}, "unknown seller")
    fails(rt, sid, seed, "search_marketplace_listings", {"city": "Atlantis"}, "unknown city", "Tokyo")
    got = ok(rt, sid, seed, "search_marketplace_listings", {"city": "tokyo", "status": "any", "limit": 50})
    assert got["total"] and all(x["city"] == "Tokyo" for x in got["listings"])
    cheap = ok(rt, sid, seed, "search_marketplace_listings", {"max_price": 100.0, "sort": "price_high"})["listings"]
    assert cheap and all(x["current_price"] <= 100 for x in cheap)
    assert [x["current_price"] for x in cheap] == sorted((x["current_price"] for x in cheap), reverse=True)


def test_bidding_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    w = World(rt, sid, seed)
    live = w.soon(True)
    seller, high = live["seller"], live["high_bidder"]
    bidder = w.member_not(seller, high)["username"]
    lid = live["listing_id"]
    fixed = w.listing(status="active", listing_format="fixed_price")["listing_id"]
    done = w.listing(status="sold", listing_format="auction")["listing_id"]
    fails(rt, sid, seed, "place_auction_bid", {"listing_id": fixed, "bidder": bidder, "amount": 5000.0},
          "fixed-price listing", "buy it now")
    fails(rt, sid, seed, "place_auction_bid", {"listing_id": done, "bidder": bidder, "amount": 5000.0},
          "has ended", "listing_id")
    fails(rt, sid, seed, "place_auction_bid", {"listing_id": lid, "bidder": seller, "amount": 9000.0},
          "cannot bid on", "bidder")
    fails(rt, sid, seed, "place_auction_bid", {"listing_id": lid, "bidder": high, "amount": 9000.0},
          "already the highest bidder")
    if w.expired["username"] not in (seller, high):
        fails(rt, sid, seed, "place_auction_bid", {"listing_id": lid, "bidder": w.expired["username"],
                                                   "amount": 9000.0}, "expired", "bidder")
    need = ok(rt, sid, seed, "get_marketplace_listing", {"listing_id": lid})["minimum_next_bid"]
    fails(rt, sid, seed, "place_auction_bid", {"listing_id": lid, "bidder": bidder, "amount": round(need - 0.01, 2)},
          "bid too low", f"at least {need:.2f}", "amount")
    fresh = w.fresh_auction
    fails(rt, sid, seed, "place_auction_bid", {"listing_id": fresh["listing_id"], "bidder": bidder,
                                               "amount": round(fresh["price"] - 0.01, 2)}, "starting price")
    ok(rt, sid, seed, "place_auction_bid", {"listing_id": lid, "bidder": bidder, "amount": need})
    # the increment applies to the new high bid; the previous high bidder may now bid again
    nxt = ok(rt, sid, seed, "get_marketplace_listing", {"listing_id": lid})
    assert nxt["high_bidder"] == bidder and nxt["minimum_next_bid"] > need and nxt["bid_count"] == live["bid_count"] + 1
    ok(rt, sid, seed, "place_auction_bid", {"listing_id": lid, "bidder": high, "amount": nxt["minimum_next_bid"]})


def test_buy_now_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    w = World(rt, sid, seed)
    item = next(x for x in w.listings if x["status"] == "active" and x["listing_format"] == "fixed_price"
                and x["seller"] != w.expired["username"])
    buyer = w.member_not(item["seller"])
    args = {"listing_id": item["listing_id"], "buyer": buyer["username"], "card_cvv": buyer["card_cvv"]}
    wrong = "0000" if buyer["card_cvv"] != "0000" else "1111"
    fails(rt, sid, seed, "buy_marketplace_listing", {**args, "listing_id": w.fresh_auction["listing_id"]},
          "is an auction", "place a bid")
    fails(rt, sid, seed, "buy_marketplace_listing",
          {**args, "listing_id": w.listing(status="sold", listing_format="fixed_price")["listing_id"]}, "already sold")
    fails(rt, sid, seed, "buy_marketplace_listing", {**args, "listing_id": w.listing(status="ended")["listing_id"]},
          "the listing is ended")
    fails(rt, sid, seed, "buy_marketplace_listing", {**args, "buyer": item["seller"]}, "cannot buy", "buyer")
    fails(rt, sid, seed, "buy_marketplace_listing", {**args, "buyer": w.expired["username"],
                                                     "card_cvv": w.expired["card_cvv"]}, "expired", "buyer")
    fails(rt, sid, seed, "buy_marketplace_listing", {**args, "card_cvv": wrong}, "incorrect card_cvv")
    order = ok(rt, sid, seed, "buy_marketplace_listing", {**args, "buyer": buyer["member_id"]})  # ids work too
    assert order["buyer"] == buyer["username"] and order["status"] == "paid"
    fails(rt, sid, seed, "buy_marketplace_listing", args, "already sold")
    mine = ok(rt, sid, seed, "list_marketplace_orders", {"member": buyer["username"], "status": "paid"})
    assert mine["orders"][0]["order_id"] == order["order_id"]


def test_offer_rules_and_answers(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    w = World(rt, sid, seed)
    item = w.with_offers
    lid, price, seller = item["listing_id"], item["price"], item["seller"]
    waiting = {o["buyer"] for o in item["pending_offers"]}
    buyer = w.member_not(seller, *waiting)["username"]
    no_offers = next(x for x in w.listings if x["status"] == "active" and x["listing_format"] == "fixed_price"
                     and not x["accepts_offers"])
    args = {"listing_id": lid, "buyer": buyer, "amount": round(price * 0.8, 2)}
    fails(rt, sid, seed, "make_marketplace_offer", {**args, "listing_id": no_offers["listing_id"]},
          "does not accept offers")
    fails(rt, sid, seed, "make_marketplace_offer", {**args, "listing_id": w.fresh_auction["listing_id"]},
          "does not accept offers", "auction")
    fails(rt, sid, seed, "make_marketplace_offer", {**args, "buyer": seller}, "cannot make an offer on")
    if w.expired["username"] != seller:
        fails(rt, sid, seed, "make_marketplace_offer", {**args, "buyer": w.expired["username"]}, "expired")
    fails(rt, sid, seed, "make_marketplace_offer", {**args, "amount": price}, "below the asking price")
    fails(rt, sid, seed, "make_marketplace_offer", {**args, "amount": round(price * 0.4, 2)}, "offer too low")
    fails(rt, sid, seed, "make_marketplace_offer", {**args, "buyer": sorted(waiting)[0]}, "already has a pending")
    first = ok(rt, sid, seed, "make_marketplace_offer", args)
    fails(rt, sid, seed, "respond_to_marketplace_offer", {"offer_id": first["offer_id"], "seller": buyer,
                                                          "decision": "accept"}, "not the seller")
    ok(rt, sid, seed, "respond_to_marketplace_offer", {"offer_id": first["offer_id"], "seller": seller,
                                                       "decision": "decline"})
    fails(rt, sid, seed, "respond_to_marketplace_offer", {"offer_id": first["offer_id"], "seller": seller,
                                                          "decision": "accept"}, "already declined")
    for _ in range(2):  # three offers per buyer and listing
        off = ok(rt, sid, seed, "make_marketplace_offer", args)
        ok(rt, sid, seed, "respond_to_marketplace_offer", {"offer_id": off["offer_id"], "seller": seller,
                                                           "decision": "decline"})
    fails(rt, sid, seed, "make_marketplace_offer", args, "offer limit reached")
    # accepting sells the item at the offer and declines the other offers
    best = max(item["pending_offers"], key=lambda o: o["expires_at"])
    out = ok(rt, sid, seed, "respond_to_marketplace_offer", {"offer_id": best["offer_id"], "seller": seller,
                                                             "decision": "accept"})
    assert out["order"]["item_price"] == best["amount"] and out["order"]["source"] == "offer"
    after = ok(rt, sid, seed, "get_marketplace_listing", {"listing_id": lid})
    assert after["status"] == "sold" and after["pending_offers"] == [] and after["buyer"] == best["buyer"]
    other = next(o for o in item["pending_offers"] if o["offer_id"] != best["offer_id"])
    fails(rt, sid, seed, "respond_to_marketplace_offer", {"offer_id": other["offer_id"], "seller": seller,
                                                          "decision": "accept"}, "already declined")
    fails(rt, sid, seed, "make_marketplace_offer", args, "the listing is sold")


def test_listing_creation_and_seller_operation_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 4
    w = World(rt, sid, seed)
    lim = w.limited["username"]
    new = {"seller": lim, "title": "Garmin inReach Mini 2", "description": "Satellite communicator, boxed.",
           "category": "electronics", "condition": "like_new", "listing_format": "fixed_price", "price": 250.0}
    fails(rt, sid, seed, "create_marketplace_listing", new, "selling limit reached", "seller")
    pro = w.member_not(lim)["username"]
    auction = {**new, "seller": pro, "listing_format": "auction", "price": 100.0}
    fails(rt, sid, seed, "create_marketplace_listing", {**auction, "duration_days": 4}, "1, 3, 5, 7 or 10 days")
    fails(rt, sid, seed, "create_marketplace_listing", {**auction, "accepts_offers": True}, "accepts_offers")
    fails(rt, sid, seed, "create_marketplace_listing", {**auction, "reserve_price": 50.0}, "below the starting price")
    fails(rt, sid, seed, "create_marketplace_listing", {**new, "seller": pro, "reserve_price": 300.0},
          "auctions only")
    fails(rt, sid, seed, "create_marketplace_listing", {**new, "seller": pro, "city": "Gotham"}, "unknown city")
    made = ok(rt, sid, seed, "create_marketplace_listing", {**auction, "reserve_price": 150.0, "city": "berlin"})
    assert made["city"] == "Berlin" and made["has_reserve"] and made["minimum_next_bid"] == 100.0
    lid = made["listing_id"]
    # revise: seller only, not the same price, not above the reserve
    fails(rt, sid, seed, "revise_marketplace_listing_price", {"listing_id": lid, "seller": lim, "new_price": 90.0},
          "not the seller")
    fails(rt, sid, seed, "revise_marketplace_listing_price", {"listing_id": lid, "seller": pro, "new_price": 100.0},
          "already priced at 100.00")
    fails(rt, sid, seed, "revise_marketplace_listing_price", {"listing_id": lid, "seller": pro, "new_price": 160.0},
          "reserve price")
    # a listing with bids keeps its price and runs to its end
    bidder = w.member_not(pro)["username"]
    ok(rt, sid, seed, "place_auction_bid", {"listing_id": lid, "bidder": bidder, "amount": 100.0})
    fails(rt, sid, seed, "revise_marketplace_listing_price", {"listing_id": lid, "seller": pro, "new_price": 90.0},
          "already has 1 bid")
    fails(rt, sid, seed, "end_marketplace_listing_early", {"listing_id": lid, "seller": pro, "reason": "other"},
          "must run to its end time")
    fails(rt, sid, seed, "end_marketplace_listing_early", {"listing_id": lid, "seller": bidder, "reason": "other"},
          "not the seller")
    fails(rt, sid, seed, "relist_marketplace_listing", {"listing_id": lid, "seller": pro}, "it is active")
    # finished listings: cannot end or revise, sold ones cannot be relisted
    sold = w.listing(status="sold", listing_format="fixed_price")
    fails(rt, sid, seed, "end_marketplace_listing_early", {"listing_id": sold["listing_id"], "seller": sold["seller"],
                                                           "reason": "other"}, "the listing is sold")
    fails(rt, sid, seed, "revise_marketplace_listing_price", {"listing_id": sold["listing_id"],
                                                              "seller": sold["seller"], "new_price": 5.0},
          "the listing is sold")
    fails(rt, sid, seed, "relist_marketplace_listing", {"listing_id": sold["listing_id"], "seller": sold["seller"]},
          "it is sold")
    unsold = w.listing(status="unsold", listing_format="auction")
    fails(rt, sid, seed, "relist_marketplace_listing", {"listing_id": unsold["listing_id"], "seller": unsold["seller"],
                                                        "duration_days": 2}, "1, 3, 5, 7 or 10 days")
    fails(rt, sid, seed, "relist_marketplace_listing", {"listing_id": unsold["listing_id"], "seller": pro}
          if unsold["seller"] != pro else {"listing_id": unsold["listing_id"], "seller": bidder}, "not the seller")
    again = ok(rt, sid, seed, "relist_marketplace_listing", {"listing_id": unsold["listing_id"],
                                                             "seller": unsold["seller"], "new_price": 10.0})
    assert again["relisted_from"] == unsold["listing_id"] and again["current_price"] == 10.0
    fails(rt, sid, seed, "relist_marketplace_listing", {"listing_id": unsold["listing_id"],
                                                        "seller": unsold["seller"]}, "already relisted")
    # the limited seller frees a slot by ending a listing, fills it, and cannot relist beyond the limit
    own = next(x for x in w.listings if x["seller"] == lim)
    ok(rt, sid, seed, "end_marketplace_listing_early", {"listing_id": own["listing_id"], "seller": lim,
                                                        "reason": "no_longer_available"})
    fails(rt, sid, seed, "end_marketplace_listing_early", {"listing_id": own["listing_id"], "seller": lim,
                                                           "reason": "other"}, "the listing is ended")
    ok(rt, sid, seed, "create_marketplace_listing", new)
    fails(rt, sid, seed, "relist_marketplace_listing", {"listing_id": own["listing_id"], "seller": lim},
          "selling limit reached")


def test_shipping_and_feedback_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 5
    w = World(rt, sid, seed)
    paid = w.order("paid")
    ship = {"order_id": paid["order_id"], "seller": paid["seller"], "carrier": "USPS",
            "tracking_number": "9400111899223344556677"}
    fails(rt, sid, seed, "ship_marketplace_order", {**ship, "seller": paid["buyer"]}, "not the seller of order")
    fails(rt, sid, seed, "ship_marketplace_order", {**ship, "order_id": w.order("shipped")["order_id"],
                                                    "seller": w.order("shipped")["seller"]}, "already shipped")
    stranger = w.member_not(paid["buyer"], paid["seller"])["username"]
    fb = {"order_id": paid["order_id"], "author": paid["buyer"], "rating": "positive", "comment": "Great!"}
    fails(rt, sid, seed, "leave_marketplace_feedback", {**fb, "author": stranger}, "neither the buyer nor the seller")
    fails(rt, sid, seed, "leave_marketplace_feedback", fb, "not delivered yet")
    fails(rt, sid, seed, "leave_marketplace_feedback", {**fb, "author": paid["seller"], "rating": "negative"},
          "only leave positive feedback", "rating")
    rated = w.order("delivered", buyer_feedback_left=True)
    fails(rt, sid, seed, "leave_marketplace_feedback", {**fb, "order_id": rated["order_id"], "author": rated["buyer"]},
          "already left feedback", "twice")
    old = next(o for o in w.orders if o["ordered_at"] < "2026-04-01" and not o["buyer_feedback_left"])
    fails(rt, sid, seed, "leave_marketplace_feedback", {**fb, "order_id": old["order_id"], "author": old["buyer"]},
          "feedback window", "closed")
    before = w.by_name[paid["buyer"]]["ratings"]["positive"]
    out = ok(rt, sid, seed, "leave_marketplace_feedback", {**fb, "author": paid["seller"]})
    assert out["recipient_feedback"]["ratings"]["positive"] == before + 1
    shipped = ok(rt, sid, seed, "ship_marketplace_order", ship)
    assert shipped["status"] == "shipped" and shipped["delivery_eta"] > shipped["shipped_at"]
    fails(rt, sid, seed, "ship_marketplace_order", ship, "already shipped")


# ---------------------------------------------------------------- (4) the lifecycle on the clock
def test_auctions_close_offers_expire_and_orders_arrive_on_time(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    w = World(rt, sid, seed)
    met, unmet, offers = w.soon(True), w.soon(False), w.with_offers
    expiring = min(offers["pending_offers"], key=lambda o: o["expires_at"])
    transit = w.order("shipped")
    paid = w.order("paid")
    ok(rt, sid, seed, "ship_marketplace_order", {"order_id": paid["order_id"], "seller": paid["seller"],
                                                 "carrier": "FedEx", "tracking_number": "794612345678"})
    fails(rt, sid, seed, "leave_marketplace_feedback", {"order_id": paid["order_id"], "author": paid["buyer"],
                                                        "rating": "positive", "comment": "ok"}, "not delivered yet")
    ok(rt, sid, seed, "marketplace_session_advance_clock", {"minutes": 200})
    sold = ok(rt, sid, seed, "get_marketplace_listing", {"listing_id": met["listing_id"]})
    assert sold["status"] == "sold" and sold["buyer"] == met["high_bidder"] and sold["ended_at"] == met["ends_at"]
    order = ok(rt, sid, seed, "list_marketplace_orders", {"member": met["high_bidder"]})["orders"][0]
    assert order["order_id"] == sold["order_id"] and order["source"] == "auction" and order["item_price"] == met["high_bid"]
    closed = ok(rt, sid, seed, "get_marketplace_listing", {"listing_id": unmet["listing_id"]})
    assert closed["status"] == "unsold" and closed["end_reason"] == "reserve not met" and "order_id" not in closed
    bidder = w.member_not(unmet["seller"], unmet["high_bidder"])["username"]
    fails(rt, sid, seed, "place_auction_bid", {"listing_id": unmet["listing_id"], "bidder": bidder,
                                               "amount": 99999.0}, "has ended")
    fails(rt, sid, seed, "respond_to_marketplace_offer", {"offer_id": expiring["offer_id"], "seller": offers["seller"],
                                                          "decision": "accept"}, "expired at")
    ok(rt, sid, seed, "relist_marketplace_listing", {"listing_id": unmet["listing_id"], "seller": unmet["seller"],
                                                     "duration_days": 3})
    # two days later the in-transit order has arrived, the FedEx one too (2-day transit)
    ok(rt, sid, seed, "marketplace_session_advance_clock", {"minutes": 2 * 1440})
    arrived = {o["order_id"]: o for o in ok(rt, sid, seed, "marketplace_list_all_orders", {"status": "delivered"})}
    assert transit["order_id"] in arrived and paid["order_id"] in arrived
    assert arrived[transit["order_id"]]["delivered_at"] == transit["delivery_eta"]
    ok(rt, sid, seed, "leave_marketplace_feedback", {"order_id": paid["order_id"], "author": paid["buyer"],
                                                     "rating": "neutral", "comment": "Took a while."})


def test_replaying_the_same_calls_gives_the_same_state(rt: DomainRuntime) -> None:
    assert_replays_alike(rt, 2, [("marketplace_session_advance_clock", {"minutes": 3 * 1440})])


# ---------------------------------------------------------------- (5) determinism and discovery
def test_unique_values(rt: DomainRuntime) -> None:
    sid = new_sid()
    formats = {r["value"]: r["count"] for r in ok(rt, sid, 0, "marketplace_get_unique_values",
                                                   {"field": "listing_format"})}
    assert set(formats) == {"auction", "fixed_price"} and sum(formats.values()) >= 100
    statuses = {r["value"] for r in ok(rt, sid, 0, "marketplace_get_unique_values", {"field": "listing_status"})}
    assert {"active", "sold", "unsold", "ended"} <= statuses
