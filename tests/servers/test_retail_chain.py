"""Retail chain domain: tool count, every failure rule (state unchanged), location-scoped
workflows with the clock (pickups ready/expired, transfers received, restocks delivered)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from servers import PAPER_TOOL_COUNTS
from servers.kit import DomainRuntime
from servers.retail_chain import domain
from tests.servers.harness import assert_replays_alike, fails, new_sid, ok, state_of


def stores(rt: DomainRuntime, sid: str, seed: int, city: str) -> dict[str, dict[str, Any]]:
    """The city's stores by format (New York: flagship, standard, express; London: standard, flagship)."""
    return {st["format"]: st for st in ok(rt, sid, seed, "find_retail_stores", {"city": city})}


def stock(rt: DomainRuntime, sid: str, seed: int, store_id: str) -> dict[str, dict[str, Any]]:
    return {r["sku"]: r for r in ok(rt, sid, seed, "retail_chain_list_stock", {"store_id": store_id})}


def wrong_store_product(rt: DomainRuntime, sid: str, seed: int) -> tuple[dict[str, Any], dict[str, Any], str]:
    ny = stores(rt, sid, seed, "New York")
    flag, std = stock(rt, sid, seed, ny["flagship"]["store_id"]), stock(rt, sid, seed, ny["standard"]["store_id"])
    sku = next(k for k, r in flag.items() if k not in std and r["available"] >= 10 and not r["discontinued"])
    return ny["flagship"], ny["standard"], sku


# ---------------------------------------------------------------- (1) tool count, (2) smoke coverage
def test_eleven_user_tools_discovery_and_sensitive_code(rt: DomainRuntime) -> None:
    assert len(domain.user_tools) == PAPER_TOOL_COUNTS["retail_chain"] == 11
    assert len(rt.table.openai_tools()) == 11
    discovery = [s.name for s in domain.tools.values() if s.kind == "discovery"]
    assert 2 <= len(discovery) <= 4 and all(n.startswith("retail_chain_") for n in discovery)
    assert all(s.consumes or s.produces or s.requires for s in domain.user_tools)
    assert rt.table.sensitive_params("complete_store_pickup") == ["pickup_code"]
    assert rt.table.schemas["update_store_price"]["properties"]["price"].get("x-money") is True


def test_world_archetypes_exist_for_many_seeds() -> None:
    for seed in range(12):
        snap = domain.new_world(seed).snapshot()
        by_city: dict[str, list[str]] = {}
        for st in snap["stores"].values():
            by_city.setdefault(st["city"], []).append(st["format"])
        assert by_city["New York"] == ["flagship", "standard", "express"] and len(by_city["London"]) == 2
        assert len(by_city) >= 7 and len(snap["stores"]) >= 12 and len(snap["inventory"]) >= 300
        assert sum(st["reopens_on"] is not None for st in snap["stores"].values()) == 1
        assert sum(p["discontinued"] for p in snap["products"].values()) == 1
        assert any(p["max_per_customer"] == 2 for p in snap["products"].values())
        statuses = {r["status"] for r in snap["reservations"].values()}
        assert {"ready", "preparing", "expired", "picked_up"} <= statuses
        assert sum(t["status"] == "in_transit" for t in snap["transfers"].values()) == 2
        assert sum(r["status"] == "ordered" for r in snap["restocks"].values()) == 2
        for inv in snap["inventory"].values():
            assert 0 <= inv["reserved"] <= inv["on_hand"] <= inv["capacity"]


# ---------------------------------------------------------------- (3) failure rules leave state alone
def test_unknown_ids_and_cities(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    london = stores(rt, sid, seed, "London")["standard"]
    sku = next(iter(stock(rt, sid, seed, london["store_id"])))
    fails(rt, sid, seed, "get_store_inventory_report", {"store_id": "ST-999"}, "unknown store_id 'ST-999'")
    fails(rt, sid, seed, "check_sku_availability", {"sku": "BM-00000"}, "unknown sku 'BM-00000'")
    fails(rt, sid, seed, "cancel_store_pickup", {"reservation_id": "PU-9999"}, "unknown reservation_id")
    fails(rt, sid, seed, "find_retail_stores", {"city": "Madrid"}, "no Brightmart stores in 'Madrid'", "London")
    fails(rt, sid, seed, "check_sku_availability", {"sku": sku, "city": "Atlantis"}, "cities served", "city")
    fails(rt, sid, seed, "request_stock_transfer", {"sku": sku, "from_store_id": london["store_id"],
                                                    "to_store_id": "ST-999", "quantity": 1}, "unknown to_store_id")


def test_stock_at_the_wrong_store(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    flag, std, sku = wrong_store_product(rt, sid, seed)
    text = fails(rt, sid, seed, "reserve_for_store_pickup", {"store_id": std["store_id"], "sku": sku, "quantity": 1,
                                                             "customer_name": "Ana Ruiz",
                                                             "customer_phone": "+1 212 555 0100"},
                 "does not carry", "store_id")
    assert flag["name"] in text  # the message points at the New York store that has it
    fails(rt, sid, seed, "update_store_price", {"store_id": std["store_id"], "sku": sku, "price": 10},
          "does not carry")
    fails(rt, sid, seed, "submit_restock_request", {"store_id": std["store_id"], "sku": sku, "quantity": 5},
          "does not carry")
    fails(rt, sid, seed, "request_stock_transfer", {"sku": sku, "from_store_id": std["store_id"],
                                                    "to_store_id": flag["store_id"], "quantity": 1},
          "does not carry", "from_store_id")


def test_closed_stores_and_pickup_counters(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    ny = stores(rt, sid, seed, "New York")
    shut = next(st for st in ok(rt, sid, seed, "retail_chain_list_stores", {}) if st["temporarily_closed_until"])
    sku = next(iter(stock(rt, sid, seed, shut["store_id"])))
    person = {"customer_name": "Li Wei", "customer_phone": "+1 617 555 0101"}
    fails(rt, sid, seed, "reserve_for_store_pickup", {"store_id": shut["store_id"], "sku": sku, "quantity": 1,
                                                      **person}, "temporarily closed for renovation")
    fails(rt, sid, seed, "submit_restock_request", {"store_id": shut["store_id"], "sku": sku, "quantity": 1},
          "temporarily closed")
    other = next(st for st in ok(rt, sid, seed, "retail_chain_list_stores", {})
                 if st["country"] == shut["country"] and st["store_id"] != shut["store_id"])
    fails(rt, sid, seed, "request_stock_transfer", {"sku": sku, "from_store_id": shut["store_id"],
                                                    "to_store_id": other["store_id"], "quantity": 1},
          "temporarily closed", "from_store_id")
    express = ny["express"]
    xsku = next(k for k, r in stock(rt, sid, seed, express["store_id"]).items() if r["available"] > 0)
    fails(rt, sid, seed, "reserve_for_store_pickup", {"store_id": express["store_id"], "sku": xsku, "quantity": 1,
                                                      **person}, "express store without a pickup counter")
    # a ready pickup at the New York flagship cannot be collected at 05:00 local time
    ready = next(r for r in ok(rt, sid, seed, "retail_chain_list_reservations", {"status": "ready"})
                 if r["store_id"] == ny["flagship"]["store_id"])
    fails(rt, sid, seed, "complete_store_pickup", {"reservation_id": ready["reservation_id"],
                                                   "pickup_code": ready["pickup_code"]},
          "is closed now", "hours today 08:00-22:00", "opens Mon 08:00")


def test_reservation_quantity_limits_and_codes(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    london = stores(rt, sid, seed, "London")["standard"]
    lines = stock(rt, sid, seed, london["store_id"])
    console = next(r for r in lines.values() if r["limit_per_customer"] == 2)
    plain = next(r for r in lines.values() if not r["limit_per_customer"] and r["available"] >= 2)
    person = {"customer_name": "Sam Okafor", "customer_phone": "+44 20 7946 0958"}
    ok(rt, sid, seed, "reserve_for_store_pickup", {"store_id": london["store_id"], "sku": console["sku"],
                                                   "quantity": 1, **person})
    ok(rt, sid, seed, "reserve_for_store_pickup", {"store_id": london["store_id"], "sku": console["sku"],
                                                   "quantity": 1, **person})
    fails(rt, sid, seed, "reserve_for_store_pickup", {"store_id": london["store_id"], "sku": console["sku"],
                                                      "quantity": 1, **person, "customer_phone": "+442079460958"},
          "limited to 2 per customer", "already holds 2")
    # more than available: the message names what is held and where else to look
    ok(rt, sid, seed, "reserve_for_store_pickup", {"store_id": london["store_id"], "sku": console["sku"],
                                                   "quantity": 2, "customer_name": "Kim Lee",
                                                   "customer_phone": "+44 20 7946 0001"})
    left = stock(rt, sid, seed, london["store_id"])[console["sku"]]["available"]
    fails(rt, sid, seed, "reserve_for_store_pickup", {"store_id": london["store_id"], "sku": console["sku"],
                                                      "quantity": left + 1, "customer_name": "Jo Park",
                                                      "customer_phone": "+44 20 7946 0002"},
          f"only {left} of", "held for other pickups", "quantity")
    res = ok(rt, sid, seed, "reserve_for_store_pickup", {"store_id": london["store_id"], "sku": plain["sku"],
                                                         "quantity": 1, **person})
    wrong = "000000" if res["pickup_code"] != "000000" else "111111"
    fails(rt, sid, seed, "complete_store_pickup", {"reservation_id": res["reservation_id"],
                                                   "pickup_code": res["pickup_code"]}, "still being prepared")
    ok(rt, sid, seed, "retail_chain_session_advance_clock", {"minutes": 60})
    fails(rt, sid, seed, "complete_store_pickup", {"reservation_id": res["reservation_id"], "pickup_code": wrong},
          "incorrect pickup_code")
    ok(rt, sid, seed, "complete_store_pickup", {"reservation_id": res["reservation_id"],
                                                "pickup_code": res["pickup_code"]})
    fails(rt, sid, seed, "complete_store_pickup", {"reservation_id": res["reservation_id"],
                                                   "pickup_code": res["pickup_code"]}, "already picked up")
    fails(rt, sid, seed, "cancel_store_pickup", {"reservation_id": res["reservation_id"]}, "already picked up")


def test_transfer_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 4
    ny, london = stores(rt, sid, seed, "New York"), stores(rt, sid, seed, "London")
    flag = ny["flagship"]
    lines = stock(rt, sid, seed, flag["store_id"])
    line = next(r for r in lines.values() if r["reserved"] > 0)
    t = {"sku": line["sku"], "from_store_id": flag["store_id"]}
    fails(rt, sid, seed, "request_stock_transfer", {**t, "to_store_id": flag["store_id"], "quantity": 1},
          "are the same store", "to_store_id")
    fails(rt, sid, seed, "request_stock_transfer", {**t, "to_store_id": london["standard"]["store_id"],
                                                    "quantity": 1}, "transfers stay within one country")
    fails(rt, sid, seed, "request_stock_transfer", {**t, "to_store_id": ny["standard"]["store_id"],
                                                    "quantity": line["available"] + 1},
          f"{line['reserved']} of them are held for pickups", f"at most {line['available']}")
    std_lines = stock(rt, sid, seed, ny["standard"]["store_id"])
    full = next((r for k, r in std_lines.items() if k in lines and lines[k]["available"] >= 1
                 and r["capacity"] - r["on_hand"] < lines[k]["available"]), None)
    assert full is not None
    room = full["capacity"] - full["on_hand"]
    fails(rt, sid, seed, "request_stock_transfer", {"sku": full["sku"], "from_store_id": flag["store_id"],
                                                    "to_store_id": ny["standard"]["store_id"], "quantity": room + 1},
          "has room for", "quantity")


def test_restock_and_price_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 5
    ny, london = stores(rt, sid, seed, "New York"), stores(rt, sid, seed, "London")
    gone = next(r for r in stock(rt, sid, seed, london["standard"]["store_id"]).values() if r["discontinued"])
    fails(rt, sid, seed, "submit_restock_request", {"store_id": london["standard"]["store_id"], "sku": gone["sku"],
                                                    "quantity": 1}, "is discontinued")
    flag = ny["flagship"]["store_id"]
    report = ok(rt, sid, seed, "get_store_inventory_report", {"store_id": flag, "limit": 200})
    pending = next(x for x in report["inbound"] if "restock_id" in x)
    fails(rt, sid, seed, "submit_restock_request", {"store_id": flag, "sku": pending["sku"], "quantity": 1},
          f"restock {pending['restock_id']}", "already on order")
    item = next(r for r in report["items"] if not r["discontinued"] and r["sku"] not in
                {x["sku"] for x in report["inbound"]})
    room = item["capacity"] - item["on_hand"] - item["incoming"]
    fails(rt, sid, seed, "submit_restock_request", {"store_id": flag, "sku": item["sku"], "quantity": room + 1},
          f"has room for {room} more")
    fails(rt, sid, seed, "update_store_price", {"store_id": flag, "sku": item["sku"], "price": 0.5},
          "below the item's cost")
    fails(rt, sid, seed, "update_store_price", {"store_id": flag, "sku": item["sku"], "price": 9999},
          "above the list price")
    fails(rt, sid, seed, "update_store_price", {"store_id": flag, "sku": item["sku"], "price": item["price"]},
          "already costs")
    out = ok(rt, sid, seed, "update_store_price", {"store_id": flag, "sku": item["sku"],
                                                   "price": round(item["price"] * 0.9, 2)})
    assert out["old_price"] == item["price"] and out["discount_percent"] > 0


def test_yen_prices_are_whole() -> None:
    for seed in range(12):
        snap = domain.new_world(seed).snapshot()
        tokyo = next((st for st in snap["stores"].values() if st["currency"] == "JPY"), None)
        if tokyo:
            break
    assert tokyo is not None
    rt, sid = DomainRuntime(domain), new_sid()
    line = next(r for r in stock(rt, sid, seed, tokyo["store_id"]).values())
    fails(rt, sid, seed, "update_store_price", {"store_id": tokyo["store_id"], "sku": line["sku"],
                                                "price": round(line["price"] * 0.9) + 0.5}, "whole yen")


# ---------------------------------------------------------------- (4) workflows with the clock
def test_pickup_hold_expires_and_units_return_to_the_shelf(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    ny = stores(rt, sid, seed, "New York")
    res = next(r for r in ok(rt, sid, seed, "retail_chain_list_reservations", {"status": "ready"})
               if r["store_id"] == ny["flagship"]["store_id"])
    line = stock(rt, sid, seed, res["store_id"])[res["sku"]]
    ok(rt, sid, seed, "retail_chain_session_advance_clock", {"minutes": 85})
    assert ok(rt, sid, seed, "list_store_pickups", {"customer_phone": res["customer_phone"]})[0]["status"] == "ready"
    ok(rt, sid, seed, "retail_chain_session_advance_clock", {"minutes": 5})
    mine = ok(rt, sid, seed, "list_store_pickups", {"customer_phone": res["customer_phone"], "status": "expired"})
    assert mine[0]["reservation_id"] == res["reservation_id"] and mine[0]["closed_at"] == res["hold_expires_at"]
    after = stock(rt, sid, seed, res["store_id"])[res["sku"]]
    assert after["available"] == line["available"] + res["quantity"] and after["on_hand"] == line["on_hand"]
    fails(rt, sid, seed, "complete_store_pickup", {"reservation_id": res["reservation_id"],
                                                   "pickup_code": res["pickup_code"]}, "expired at", "new reservation")
    fails(rt, sid, seed, "cancel_store_pickup", {"reservation_id": res["reservation_id"]}, "expired")


def test_reservation_at_a_closed_store_is_ready_an_hour_after_opening(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    flag = stores(rt, sid, seed, "New York")["flagship"]
    line = next(r for r in stock(rt, sid, seed, flag["store_id"]).values()
                if r["available"] >= 2 and not r["limit_per_customer"])
    res = ok(rt, sid, seed, "reserve_for_store_pickup", {"store_id": flag["store_id"], "sku": line["sku"],
                                                         "quantity": 2, "customer_name": "Dana Cole",
                                                         "customer_phone": "+1 (212) 555-0142"})
    assert res["ready_at"] == "2026-06-01T13:00:00+00:00"  # opens 08:00 New York (12:00 UTC) + 1 hour
    assert stock(rt, sid, seed, flag["store_id"])[line["sku"]]["available"] == line["available"] - 2
    ok(rt, sid, seed, "retail_chain_session_advance_clock", {"minutes": 3 * 60 + 30})  # 12:3x UTC, open, preparing
    fails(rt, sid, seed, "complete_store_pickup", {"reservation_id": res["reservation_id"],
                                                   "pickup_code": res["pickup_code"]}, "still being prepared")
    ok(rt, sid, seed, "retail_chain_session_advance_clock", {"minutes": 30})
    sale = ok(rt, sid, seed, "complete_store_pickup", {"reservation_id": res["reservation_id"],
                                                       "pickup_code": res["pickup_code"]})
    assert sale["total"] == round(2 * line["price"], 2) and sale["currency"] == "USD"
    after = stock(rt, sid, seed, flag["store_id"])[line["sku"]]
    assert after["on_hand"] == line["on_hand"] - 2 and after["reserved"] == line["reserved"]


def test_transfer_to_a_store_that_lacked_the_product_lists_it_on_arrival(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    flag, std, sku = wrong_store_product(rt, sid, seed)
    before = stock(rt, sid, seed, flag["store_id"])[sku]
    tr = ok(rt, sid, seed, "request_stock_transfer", {"sku": sku, "from_store_id": flag["store_id"],
                                                      "to_store_id": std["store_id"], "quantity": 4})
    sent = datetime.fromisoformat(tr["requested_at"])
    assert tr["status"] == "in_transit" and tr["eta"] == (sent + timedelta(hours=3)).isoformat()
    assert stock(rt, sid, seed, flag["store_id"])[sku]["on_hand"] == before["on_hand"] - 4
    inbound = ok(rt, sid, seed, "get_store_inventory_report", {"store_id": std["store_id"]})["inbound"]
    assert tr["transfer_id"] in {x.get("transfer_id") for x in inbound}
    ok(rt, sid, seed, "retail_chain_session_advance_clock", {"minutes": 3 * 60})
    line = stock(rt, sid, seed, std["store_id"])[sku]
    assert line["on_hand"] == 4 and line["capacity"] == 40
    seen = ok(rt, sid, seed, "check_sku_availability", {"sku": sku, "city": "New York"})
    assert std["store_id"] in {r["store_id"] for r in seen["stores"]}
    snap = state_of(rt, sid, seed)
    assert snap["transfers"][tr["transfer_id"]]["received_at"] == tr["eta"]


def test_seeded_shipments_and_a_new_restock_arrive_on_time(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    snap = state_of(rt, sid, seed)
    moving = [t for t in snap["transfers"].values() if t["status"] == "in_transit"]
    report = ok(rt, sid, seed, "get_store_inventory_report", {"store_id": moving[0]["from_store_id"], "limit": 200})
    item = next(r for r in report["items"] if not r["discontinued"] and r["capacity"] - r["on_hand"] - r["incoming"] >= 3
                and r["sku"] not in {x["sku"] for x in report["inbound"]})
    order = ok(rt, sid, seed, "submit_restock_request", {"store_id": moving[0]["from_store_id"], "sku": item["sku"],
                                                         "quantity": 3})
    ok(rt, sid, seed, "retail_chain_session_advance_clock", {"minutes": 7 * 24 * 60})
    after = state_of(rt, sid, seed)
    for t in moving:
        assert after["transfers"][t["transfer_id"]]["status"] == "received"
    assert after["restocks"][order["restock_id"]]["status"] == "delivered"
    assert all(r["status"] != "ordered" for r in after["restocks"].values())
    assert all(r["status"] not in ("ready", "preparing") for r in after["reservations"].values())
    due = [*moving, *(r for r in snap["restocks"].values() if r["status"] == "ordered"),
           after["restocks"][order["restock_id"]]]
    for key in {f"{x.get('to_store_id', x.get('store_id'))}/{x['sku']}" for x in due}:
        arrived = sum(x["quantity"] for x in due if f"{x.get('to_store_id', x.get('store_id'))}/{x['sku']}" == key)
        had = snap["inventory"].get(key, {"on_hand": 0})["on_hand"]
        assert after["inventory"][key]["on_hand"] == had + arrived, key


# ---------------------------------------------------------------- (5) replay, reset, determinism
def test_replaying_the_same_calls_gives_the_same_state(rt: DomainRuntime) -> None:
    assert_replays_alike(rt, 4)


def test_unique_values_and_filters(rt: DomainRuntime) -> None:
    sid = new_sid()
    cities = {r["value"] for r in ok(rt, sid, 0, "retail_chain_get_unique_values", {"field": "city"})}
    assert {"New York", "London"} <= cities
    open_now = ok(rt, sid, 0, "find_retail_stores", {"open_now": True})
    assert open_now and all(st["open_now"] for st in open_now) and not any(st["city"] == "New York" for st in open_now)
    found = ok(rt, sid, 0, "search_retail_products", {"category": "Kitchen", "sort_by": "price_high"})
    prices = [r["price"] for r in found["results"]]
    assert prices == sorted(prices, reverse=True) and all(r["category"] == "Kitchen" for r in found["results"])
