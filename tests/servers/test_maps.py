"""Maps domain: tool count, failure rules (message names the rule, state unchanged),
clock-driven opening state, routing and traffic, saved places and lists."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from servers import PAPER_TOOL_COUNTS
from servers.kit import DomainRuntime
from servers.kit.geo import CITIES
from servers.maps import domain
from servers.maps.geography import seed_geography
from tests.servers.harness import advance, assert_replays_alike, fails, new_sid, ok


def places(rt: DomainRuntime, sid: str, seed: int, **filters: Any) -> list[dict[str, Any]]:
    return ok(rt, sid, seed, "maps_list_places", filters)


def account(rt: DomainRuntime, sid: str, seed: int) -> dict[str, Any]:
    return ok(rt, sid, seed, "maps_get_account", {})


# ---------------------------------------------------------------- (1) tool count, (2) smoke coverage
def test_exactly_sixteen_user_tools_and_named_discovery(rt: DomainRuntime) -> None:
    assert len(domain.user_tools) == PAPER_TOOL_COUNTS["maps"] == 16
    assert len(rt.table.openai_tools()) == 16
    disc = [s.name for s in domain.tools.values() if s.kind == "discovery"]
    assert 2 <= len(disc) <= 4 and all(n.startswith("maps_") for n in disc)
    declared = [s for s in domain.user_tools if s.consumes or s.produces or s.requires]
    assert len(declared) >= 0.8 * len(domain.user_tools)
    assert all(rt.table.sensitive_params(s.name) == [] for s in domain.user_tools)  # no secrets in maps
    reads = [s for s in domain.user_tools if s.read_only]
    assert len(reads) >= 9  # mostly read-only lookups


def test_world_shape_for_many_seeds() -> None:
    for seed in range(10):
        snap = domain.new_world(seed).snapshot()
        by_city: dict[str, int] = {}
        for p in snap["places"].values():
            by_city[p["city"]] = by_city.get(p["city"], 0) + 1
        assert set(by_city) == {c.name for c in CITIES} and min(by_city.values()) >= 20
        statuses = [p["status"] for p in snap["places"].values()]
        assert statuses.count("temporarily_closed") == 1 and statuses.count("permanently_closed") == 1
        all_day = {p["city"] for p in snap["places"].values()
                   if p["category"] == "restaurant" and p["hours"]["mon"] == ["00:00-24:00"]}
        assert len(all_day) == len(CITIES)
        assert len(snap["saved"]) == 5 and len(snap["lists"]) == 2
        assert sum(r["by_you"] for r in snap["reviews"].values()) == 2


# ---------------------------------------------------------------- (3) failures leave state alone
def test_geocoding_not_found_and_ambiguous(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    geo = seed_geography(seed)
    twins = [h for h in geo.homes if h.address == geo.twin_line]
    assert len({h.city for h in twins}) == 2
    fails(rt, sid, seed, "geocode_address", {"address": "12 Nowhere Lane, Atlantis"}, "address not found", "address")
    text = fails(rt, sid, seed, "geocode_address", {"address": geo.twin_line}, "ambiguous address",
                 "add the house number and the city")
    assert all(h.city in text for h in twins)
    one = ok(rt, sid, seed, "geocode_address", {"address": f"{geo.twin_line}, {twins[1].city}"})
    assert (one["latitude"], one["longitude"]) == (twins[1].latitude, twins[1].longitude)
    # abbreviations and case do not matter
    home = next(h for h in geo.homes if h.address.endswith(" Street") and h.city == "Boston")
    short = home.address.replace(" Street", " st").lower() + ", boston"
    assert ok(rt, sid, seed, "geocode_address", {"address": short})["address_id"] == home.address_id
    chain = [p["name"] for p in places(rt, sid, seed, category="pharmacy")]
    repeated = next(n for n in chain if chain.count(n) > 1)
    fails(rt, sid, seed, "geocode_address", {"address": repeated}, "ambiguous address")
    fails(rt, sid, seed, "get_map_route", {"origin": "home", "destination": geo.twin_line}, "ambiguous address",
          "destination")
    # reverse geocoding: no address close by, and outside every covered city
    c = CITIES[0]
    far = ok(rt, sid, seed, "reverse_geocode_coordinates", {"latitude": home.latitude, "longitude": home.longitude})
    assert far["address_id"] == home.address_id and far["distance_m"] == 0
    fails(rt, sid, seed, "reverse_geocode_coordinates", {"latitude": round(c.lat + 0.3, 4), "longitude": c.lon},
          "address not found", "within 250 m")
    fails(rt, sid, seed, "reverse_geocode_coordinates", {"latitude": 0.0, "longitude": 0.0},
          "outside the map's coverage")


def test_unknown_ids_and_cities(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    for name in ("get_map_place_details", "check_place_open_status", "list_map_place_reviews", "save_map_place",
                 "remove_saved_map_place"):
        fails(rt, sid, seed, name, {"place_id": "PLC-9999"}, "unknown place_id 'PLC-9999'")
    fails(rt, sid, seed, "get_map_place_lists", {"list_id": "LST-0999"}, "unknown list_id")
    fails(rt, sid, seed, "add_place_to_map_list", {"list_id": "LST-0999", "place_id": "PLC-0001"}, "unknown list_id")
    fails(rt, sid, seed, "search_map_places", {"city": "Atlantis"}, "unknown city 'Atlantis'", "Tokyo")
    fails(rt, sid, seed, "list_saved_map_places", {"city": "Gotham"}, "unknown city")
    fails(rt, sid, seed, "get_map_route", {"origin": "PLC-9999", "destination": "home"}, "unknown origin", "PLC-9999")
    fails(rt, sid, seed, "get_map_route", {"origin": "95.5,10.0", "destination": "home"}, "invalid coordinates")
    fails(rt, sid, seed, "check_place_open_status", {"place_id": "PLC-0001", "at": "2026-13-45T10:00"}, "invalid at")
    fails(rt, sid, seed, "get_map_route", {"origin": "home", "destination": "work", "depart_at": "2026-02-30T08:00"},
          "invalid depart_at")


def test_route_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    rows = places(rt, sid, seed)
    ny = next(p for p in rows if p["city"] == "New York")
    paris = next(p for p in rows if p["city"] == "Paris")
    boston = next(p for p in rows if p["city"] == "Boston")
    fails(rt, sid, seed, "get_map_route", {"origin": ny["place_id"], "destination": paris["place_id"], "mode": "drive"},
          "no driving route", "different continents", "book a flight")
    fails(rt, sid, seed, "compare_route_travel_modes", {"origin": ny["place_id"], "destination": paris["place_id"]},
          "different continents")
    fails(rt, sid, seed, "get_map_route", {"origin": ny["place_id"], "destination": boston["place_id"], "mode": "walk"},
          "too far for a walking route", "25 km")
    fails(rt, sid, seed, "get_map_route", {"origin": ny["place_id"], "destination": boston["place_id"], "mode": "bike"},
          "too far for a cycling route", "80 km")
    fails(rt, sid, seed, "get_map_route",
          {"origin": ny["place_id"], "destination": boston["place_id"], "mode": "transit"},
          "no transit route between New York and Boston")
    fails(rt, sid, seed, "get_map_route", {"origin": ny["place_id"], "destination": ny["address"]},
          "origin and destination are the same")
    fails(rt, sid, seed, "get_map_route", {"origin": "home", "destination": "work", "depart_at": "2026-05-30T08:00"},
          "is in the past", "depart_at")
    # New York to Boston by car is fine; the comparison explains why the other modes cannot do it
    road = ok(rt, sid, seed, "get_map_route", {"origin": ny["place_id"], "destination": boston["place_id"]})
    assert 250 < road["distance_km"] < 400 and road["duration_minutes"] > 150
    modes = ok(rt, sid, seed, "compare_route_travel_modes", {"origin": ny["place_id"], "destination": boston["place_id"]})
    assert modes["fastest_mode"] == "drive"
    assert {o["mode"]: o["available"] for o in modes["options"]} == {
        "drive": True, "transit": False, "bike": False, "walk": False}


def test_nearby_search_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    fails(rt, sid, seed, "find_nearby_places", {"near": "home", "radius_m": 30000}, "radius too large", "radius_m")
    fails(rt, sid, seed, "find_nearby_places", {}, "say where to search", "near")
    fails(rt, sid, seed, "find_nearby_places", {"latitude": 40.71}, "latitude and longitude must be given together")
    fails(rt, sid, seed, "find_nearby_places", {"near": "home", "latitude": 40.7, "longitude": -74.0},
          "either near or latitude/longitude")
    fails(rt, sid, seed, "find_nearby_places", {"latitude": 0.0, "longitude": 0.0}, "outside the map's coverage")
    out = ok(rt, sid, seed, "find_nearby_places", {"near": "home", "radius_m": 25000, "limit": 50})
    dist = [r["distance_m"] for r in out["results"]]
    assert dist == sorted(dist) and all(d <= 25000 for d in dist) and out["total"] >= 20


def test_saved_places_and_lists_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 4
    acct = account(rt, sid, seed)
    saved = acct["saved_places"][0]
    labelled = next(p for p in acct["saved_places"] if p["label"])
    fresh = [p for p in places(rt, sid, seed, city=acct["home"]["city"]) if not p["saved"]]
    fails(rt, sid, seed, "save_map_place", {"place_id": saved["place_id"]}, "already in your saved places")
    fails(rt, sid, seed, "save_map_place", {"place_id": fresh[0]["place_id"], "label": labelled["label"].upper()},
          "label", "already used")
    fails(rt, sid, seed, "remove_saved_map_place", {"place_id": fresh[0]["place_id"]}, "not in your saved places")
    existing = acct["lists"][0]
    fails(rt, sid, seed, "create_map_place_list", {"name": existing["name"].lower()}, "already have a list named")
    fails(rt, sid, seed, "add_place_to_map_list", {"list_id": existing["list_id"], "place_id": existing["place_ids"][0]},
          "already on the list")
    for k in range(18):
        ok(rt, sid, seed, "create_map_place_list", {"name": f"Plan {k}"})
    fails(rt, sid, seed, "create_map_place_list", {"name": "One too many"}, "20 lists", "maximum")
    lid = ok(rt, sid, seed, "get_map_place_lists", {})[-1]["list_id"]
    everything = places(rt, sid, seed)
    for p in everything[:50]:
        ok(rt, sid, seed, "add_place_to_map_list", {"list_id": lid, "place_id": p["place_id"]})
    fails(rt, sid, seed, "add_place_to_map_list", {"list_id": lid, "place_id": everything[50]["place_id"]},
          "is full", "50 places")


def test_review_rules_and_rating_update(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 5
    acct = account(rt, sid, seed)
    mine = acct["reviews"][0]
    gone = places(rt, sid, seed, category=None)
    closed = next(p for p in gone if p["status"] == "permanently_closed")
    fails(rt, sid, seed, "write_map_place_review", {"place_id": mine["place_id"], "rating": 4, "text": "Again, great!"},
          "already reviewed")
    fails(rt, sid, seed, "write_map_place_review", {"place_id": closed["place_id"], "rating": 2, "text": "Gone now, sadly."},
          "permanently closed")
    target = next(p for p in gone if p["status"] == "operational" and p["place_id"] != mine["place_id"])
    fails(rt, sid, seed, "write_map_place_review", {"place_id": target["place_id"], "rating": 5, "text": "ok"},
          "too short", "text")
    before = ok(rt, sid, seed, "get_map_place_details", {"place_id": target["place_id"]})
    out = ok(rt, sid, seed, "write_map_place_review", {"place_id": target["place_id"], "rating": 1,
                                                       "text": "Cold food and a long wait."})
    after = ok(rt, sid, seed, "get_map_place_details", {"place_id": target["place_id"]})
    assert after["review_count"] == before["review_count"] + 1
    expected = round((before["rating"] * before["review_count"] + 1) / (before["review_count"] + 1), 1)
    assert after["rating"] == expected and after["your_review"]["review_id"] == out["review"]["review_id"]
    newest = ok(rt, sid, seed, "list_map_place_reviews", {"place_id": target["place_id"], "limit": 1})
    assert newest["reviews"][0]["by_you"] is True


# ---------------------------------------------------------------- (4) the clock: opening state, closures, traffic
def test_opening_state_follows_the_clock_and_the_time_zone(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    closed = next(p for p in places(rt, sid, seed, city="Chicago")
                  if p["status"] == "operational" and not p["open_now"] and p["opens_at"])
    state = ok(rt, sid, seed, "check_place_open_status", {"place_id": closed["place_id"]})
    assert state["open_now"] is False and state["opens_at"] == closed["opens_at"]
    now = datetime.fromisoformat(state["local_time"])
    wait = math.ceil((datetime.fromisoformat(closed["opens_at"]) - now).total_seconds() / 60)
    advance(rt, sid, seed, wait)
    state = ok(rt, sid, seed, "check_place_open_status", {"place_id": closed["place_id"]})
    assert state["open_now"] is True and state["closes_at"] is not None
    # the same instant is evening in Tokyo: an explicit local time is read in the place's zone
    tokyo = next(p for p in places(rt, sid, seed, city="Tokyo", category="museum") if p["status"] == "operational")
    late = ok(rt, sid, seed, "check_place_open_status", {"place_id": tokyo["place_id"], "at": "2026-06-03T23:30"})
    assert late["open_now"] is False and late["checked_at"].endswith("+09:00")


def test_temporary_closure_ends_when_the_clock_reaches_its_date(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    museum = next(p for p in places(rt, sid, seed) if p["status"] == "temporarily_closed")
    info = ok(rt, sid, seed, "get_map_place_details", {"place_id": museum["place_id"]})
    assert info["opening"]["reopens_on"] == "2026-06-03" and info["open_now"] is False
    advance(rt, sid, seed, 3 * 24 * 60)
    info = ok(rt, sid, seed, "get_map_place_details", {"place_id": museum["place_id"]})
    assert info["status"] == "operational"
    assert ok(rt, sid, seed, "maps_get_unique_values", {"field": "status"}) == [
        {"value": "operational", "count": len(places(rt, sid, seed)) - 1},
        {"value": "permanently_closed", "count": 1}]


def test_traffic_depends_on_the_local_hour(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    rush = ok(rt, sid, seed, "get_map_route", {"origin": "home", "destination": "work", "depart_at": "2026-06-02T08:15"})
    night = ok(rt, sid, seed, "get_map_route", {"origin": "home", "destination": "work", "depart_at": "2026-06-02T23:15"})
    walk = ok(rt, sid, seed, "get_map_route", {"origin": "home", "destination": "work", "mode": "walk"})
    assert rush["traffic"] == "heavy" and night["traffic"] == "light"
    assert rush["duration_minutes"] > night["duration_minutes"] and rush["distance_km"] == night["distance_km"]
    assert walk["traffic"] is None and walk["duration_minutes"] > night["duration_minutes"]
    assert rush["depart_at"].startswith("2026-06-02T08:15")


def test_replaying_the_same_calls_gives_the_same_state(rt: DomainRuntime) -> None:
    assert_replays_alike(rt, 3, [("maps_session_advance_clock", {"minutes": 90})])


# ---------------------------------------------------------------- (5) determinism, discovery
def test_discovery_and_search(rt: DomainRuntime) -> None:
    sid = new_sid()
    cats = {r["value"] for r in ok(rt, sid, 0, "maps_get_unique_values", {"field": "category"})}
    assert {"restaurant", "cafe", "pharmacy", "fuel_station", "hotel", "museum"} <= cats
    addrs = ok(rt, sid, 0, "maps_list_addresses", {"kind": "residential"})
    assert len(addrs) == 6 * len(CITIES) and sum(a["ambiguous_without_city"] for a in addrs) == 2
    page1 = ok(rt, sid, 0, "search_map_places", {"city": "london", "sort_by": "name", "limit": 5})
    page2 = ok(rt, sid, 0, "search_map_places", {"city": "London", "sort_by": "name", "limit": 5, "offset": 5})
    assert page1["total"] == 22 and page1["next_offset"] == 5
    assert [p["name"] for p in page1["results"] + page2["results"]] == sorted(
        p["name"] for p in page1["results"] + page2["results"])
    top = ok(rt, sid, 0, "search_map_places", {"category": "hotel", "sort_by": "rating", "min_rating": 4.0})
    assert all(p["rating"] >= 4.0 and p["category"] == "hotel" for p in top["results"])
    ratings = [p["rating"] for p in top["results"]]
    assert ratings == sorted(ratings, reverse=True)
