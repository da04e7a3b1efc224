"""Travel booking domain: tool count, fare/hold/check-in/hotel failures (state
unchanged), clock-driven lifecycles, fare-rule money flows."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from servers import PAPER_TOOL_COUNTS
from servers.kit import DomainRuntime
from servers.travel_booking import domain
from tests.servers.harness import advance, assert_same_state_on_replay, fails, new_sid, ok

CLOCK = "travel_booking_session_advance_clock"


def bookings(rt: DomainRuntime, sid: str, seed: int, status: str | None = None) -> dict[str, Any]:
    return ok(rt, sid, seed, "travel_booking_list_bookings", {} if status is None else {"status": status})


def people(rt: DomainRuntime, sid: str, seed: int) -> list[dict[str, Any]]:
    return ok(rt, sid, seed, "travel_booking_list_travellers", {})


def good_card(p: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in p["cards"] if not c["expired"])


def flights(rt: DomainRuntime, sid: str, seed: int) -> list[dict[str, Any]]:
    return ok(rt, sid, seed, "travel_booking_list_flights", {})


def traveller_ok(rows: list[dict[str, Any]], *, busy: frozenset[str] | set[str] = frozenset()) -> dict[str, Any]:
    """A traveller with a passport valid well beyond the schedule and no travel credit."""
    return next(p for p in rows if p["passport_valid"] and p["passport_expiry"] > "2027-01-01"
                and p["traveller_id"] not in busy and p["travel_credit"] == 0)


def fresh_flight(rows: list[dict[str, Any]], cls: str = "economy", *, intl: bool | None = None,
                 lo: str = "2026-06-03", hi: str = "2026-06-10") -> dict[str, Any]:
    return next(f for f in rows if lo <= f["depart_at"][:10] <= hi and f["seats_left"][cls] >= 2
                and (intl is None or _intl(f) == intl))


_COUNTRY = {"YYZ": "CA", "LHR": "GB", "CDG": "FR", "BER": "DE", "HND": "JP", "SYD": "AU"}


def _intl(f: dict[str, Any]) -> bool:
    return _COUNTRY.get(f["origin"], "US") != _COUNTRY.get(f["destination"], "US")


def hold(rt: DomainRuntime, sid: str, seed: int, flight_id: str, cls: str, who: list[str]) -> dict[str, Any]:
    return ok(rt, sid, seed, "hold_flight_fare", {"flight_id": flight_id, "fare_class": cls, "traveller_ids": who})


def buy(rt: DomainRuntime, sid: str, seed: int, flight_id: str, cls: str, p: dict[str, Any]) -> dict[str, Any]:
    b = hold(rt, sid, seed, flight_id, cls, [p["traveller_id"]])
    card = good_card(p)
    return ok(rt, sid, seed, "confirm_flight_booking", {"booking_id": b["booking_id"],
                                                         "payment_card_id": card["payment_card_id"],
                                                         "card_security_code": card["security_code"]})


# ---------------------------------------------------------------- (1) tool count, (2) smoke coverage
def test_exactly_twenty_user_tools_and_named_discovery(rt: DomainRuntime) -> None:
    assert len(domain.user_tools) == PAPER_TOOL_COUNTS["travel_booking"] == 20
    assert len(rt.table.openai_tools()) == 20
    disc = [s.name for s in domain.tools.values() if s.kind == "discovery"]
    assert 2 <= len(disc) <= 4 and all(n.startswith("travel_booking_") for n in disc)
    declared = [s for s in domain.user_tools if s.consumes or s.produces or s.requires or s.establishes]
    assert len(declared) == 20
    sensitive = {s.name: rt.table.sensitive_params(s.name) for s in domain.user_tools}
    assert {k: v for k, v in sensitive.items() if v} == {"confirm_flight_booking": ["card_security_code"]}
    money = rt.table.schemas["search_flights"]["properties"]["max_price"]
    assert money.get("x-money") is True


def test_world_archetypes_exist_for_many_seeds() -> None:
    for seed in range(12):
        w = domain.new_world(seed).snapshot()
        fb, hr, fl = w["flight_bookings"], w["hotel_reservations"], w["flights"]
        statuses = {b["status"] for b in fb.values()}
        assert {"ticketed", "held", "expired", "cancelled", "completed"} <= statuses
        assert any(b["status"] == "ticketed" and fl[b["flight_id"]]["depart_at"] == "2026-06-01T16:30:00+00:00"
                   for b in fb.values())
        assert {b["fare_class"] for b in fb.values() if b["status"] == "ticketed"} >= {"basic_economy", "economy",
                                                                                        "business"}
        assert {"in_stay", "confirmed", "completed"} <= {r["status"] for r in hr.values()}
        assert any(r["check_in"] == "2026-06-02" and r["status"] == "confirmed" for r in hr.values())
        assert any(t["passport_expiry"] < "2026-06-01" for t in w["travellers"].values())
        assert any(c["expiry"] < "2026-06" for c in w["cards"].values())
        assert any(f["fares"]["business"]["seats_left"] == 0 and f["depart_at"] > "2026-06-02" for f in fl.values())
        assert any(rt_["booked"].get(d) == rt_["total_rooms"] for h in w["hotels"].values()
                   for rt_ in h["rooms"].values() for d in rt_["booked"])
        assert 200 <= len(fl) <= 320 and len(w["hotels"]) >= 40 and len(w["travellers"]) >= 20


# ---------------------------------------------------------------- (3) failures leave state alone
def test_unknown_ids_and_bad_dates(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    p = traveller_ok(people(rt, sid, seed))
    fails(rt, sid, seed, "get_flight_details", {"flight_id": "FLT-9999"}, "unknown flight_id")
    fails(rt, sid, seed, "get_flight_booking", {"booking_id": "FBK-9999"}, "unknown booking_id")
    fails(rt, sid, seed, "get_trip_itinerary", {"itinerary_id": "ITN-9999"}, "unknown itinerary_id")
    fails(rt, sid, seed, "cancel_hotel_reservation", {"reservation_id": "HRS-9999"}, "unknown reservation_id")
    fails(rt, sid, seed, "list_trip_itineraries", {"traveller_id": "TRV-9999"}, "unknown traveller_id")
    fails(rt, sid, seed, "get_hotel_room_availability", {"hotel_id": "HTL-9999", "check_in": "2026-06-10",
                                                         "check_out": "2026-06-12"}, "unknown hotel_id")
    fails(rt, sid, seed, "search_flights", {"origin": "Atlantis", "destination": "BOS",
                                            "departure_date": "2026-06-05"}, "unknown airport", "origin")
    fails(rt, sid, seed, "search_flights", {"origin": "BOS", "destination": "Boston",
                                            "departure_date": "2026-06-05"}, "same airport")
    fails(rt, sid, seed, "search_flights", {"origin": "BOS", "destination": "JFK", "departure_date": "2026-05-30"},
          "in the past", "departure_date")
    fails(rt, sid, seed, "search_hotels", {"city": "Gotham", "check_in": "2026-06-10", "check_out": "2026-06-12"},
          "no hotels in 'Gotham'")
    fails(rt, sid, seed, "search_hotels", {"city": "Paris", "check_in": "2026-05-20", "check_out": "2026-06-12"},
          "in the past", "check_in")
    fails(rt, sid, seed, "search_hotels", {"city": "Paris", "check_in": "2026-06-12", "check_out": "2026-06-10"},
          "must be after check_in", "check_out")
    fails(rt, sid, seed, "search_hotels", {"city": "Paris", "check_in": "2026-06-12", "check_out": "2026-07-30"},
          "at most 30 nights")
    fails(rt, sid, seed, "search_hotels", {"city": "Paris", "check_in": "2027-06-12", "check_out": "2027-06-14"},
          "330 days ahead")
    fails(rt, sid, seed, "book_hotel_room", {"hotel_id": "HTL-0001", "room_type": "standard", "check_in": "2026-06-12",
                                             "check_out": "2026-06-14", "traveller_id": p["traveller_id"],
                                             "payment_card_id": "CRD-9999"}, "unknown payment_card_id")


def test_hold_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    rows, fl = people(rt, sid, seed), flights(rt, sid, seed)
    p = traveller_ok(rows)
    gone = next(f for f in fl if f["status"] == "arrived")
    fails(rt, sid, seed, "hold_flight_fare", {"flight_id": gone["flight_id"], "fare_class": "economy",
                                              "traveller_ids": [p["traveller_id"]]}, "already departed")
    sold = next(f for f in fl if f["seats_left"]["business"] == 0 and f["depart_at"] > "2026-06-02")
    fails(rt, sid, seed, "hold_flight_fare", {"flight_id": sold["flight_id"], "fare_class": "business",
                                              "traveller_ids": [p["traveller_id"]]}, "sold out", "fare_class")
    few = next(f for f in fl if f["seats_left"]["premium_economy"] == 1 and f["depart_at"] > "2026-06-02")
    two = [p["traveller_id"], next(q for q in rows if q["traveller_id"] != p["traveller_id"])["traveller_id"]]
    fails(rt, sid, seed, "hold_flight_fare", {"flight_id": few["flight_id"], "fare_class": "premium_economy",
                                              "traveller_ids": two}, "only 1 seat(s) left")
    open_ = fresh_flight(fl)
    fails(rt, sid, seed, "hold_flight_fare", {"flight_id": open_["flight_id"], "fare_class": "economy",
                                              "traveller_ids": [p["traveller_id"], p["traveller_id"]]}, "listed twice")
    fails(rt, sid, seed, "hold_flight_fare", {"flight_id": open_["flight_id"], "fare_class": "economy",
                                              "traveller_ids": ["TRV-9999"]}, "unknown traveller_ids")
    fails(rt, sid, seed, "hold_flight_fare", {"flight_id": open_["flight_id"], "fare_class": "economy",
                                              "traveller_ids": [p["traveller_id"]], "itinerary_id": "ITN-0999"},
          "unknown itinerary_id")
    hold(rt, sid, seed, open_["flight_id"], "economy", [p["traveller_id"]])
    fails(rt, sid, seed, "hold_flight_fare", {"flight_id": open_["flight_id"], "fare_class": "premium_economy",
                                              "traveller_ids": [p["traveller_id"]]}, "already booked on this flight")
    # an expired passport blocks international flights, not domestic ones
    lapsed = next(q for q in rows if not q["passport_valid"])
    intl = fresh_flight(fl, intl=True)
    fails(rt, sid, seed, "hold_flight_fare", {"flight_id": intl["flight_id"], "fare_class": "economy",
                                              "traveller_ids": [lapsed["traveller_id"]]},
          "passport of", "update_traveller_profile", "traveller_ids")
    # bookings close 60 minutes before departure
    checkin = next(f for f in fl if f["depart_at"] == "2026-06-01T16:30:00+00:00")
    advance(rt, sid, seed, 7 * 60)
    fails(rt, sid, seed, "hold_flight_fare", {"flight_id": checkin["flight_id"], "fare_class": "economy",
                                              "traveller_ids": [p["traveller_id"]]}, "booking closes 60 minutes")


def test_payment_rules_and_hold_expiry(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    rows, fl = people(rt, sid, seed), flights(rt, sid, seed)
    p = traveller_ok(rows)
    other = next(q for q in rows if q["traveller_id"] != p["traveller_id"])
    f = fresh_flight(fl)
    b = hold(rt, sid, seed, f["flight_id"], "economy", [p["traveller_id"]])
    assert b["status"] == "held" and b["hold_expires_at"] is not None
    card = good_card(p)
    bad = "000" if card["security_code"] != "000" else "111"
    args = {"booking_id": b["booking_id"], "payment_card_id": card["payment_card_id"], "card_security_code": bad}
    fails(rt, sid, seed, "confirm_flight_booking", args, "card_security_code does not match")
    fails(rt, sid, seed, "confirm_flight_booking", {**args, "payment_card_id": good_card(other)["payment_card_id"],
                                                    "card_security_code": good_card(other)["security_code"]},
          "not a traveller on this booking", "payment_card_id")
    expired_owner = next(q for q in rows if any(c["expired"] for c in q["cards"]))
    eb = hold(rt, sid, seed, f["flight_id"], "economy", [expired_owner["traveller_id"]])
    dead = next(c for c in expired_owner["cards"] if c["expired"])
    fails(rt, sid, seed, "confirm_flight_booking", {"booking_id": eb["booking_id"],
                                                    "payment_card_id": dead["payment_card_id"],
                                                    "card_security_code": dead["security_code"]}, "expired")
    fails(rt, sid, seed, "confirm_flight_booking", {**args, "card_security_code": card["security_code"],
                                                    "use_travel_credit": True}, "no travel credit")
    seats = ok(rt, sid, seed, "get_flight_details", {"flight_id": f["flight_id"]})["fares"]["economy"]["seats_left"]
    advance(rt, sid, seed, 31)
    assert ok(rt, sid, seed, "get_flight_booking", {"booking_id": b["booking_id"]})["status"] == "expired"
    assert ok(rt, sid, seed, "get_flight_details", {"flight_id": f["flight_id"]})["fares"]["economy"][
        "seats_left"] == seats + 2  # both holds lapsed and gave their seats back
    fails(rt, sid, seed, "confirm_flight_booking", {**args, "card_security_code": card["security_code"]},
          "cannot confirm", "hold lapsed")


def test_seat_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    rows, fl = people(rt, sid, seed), flights(rt, sid, seed)
    p = traveller_ok(rows)
    f = fresh_flight(fl)
    b = buy(rt, sid, seed, f["flight_id"], "economy", p)
    arg = {"booking_id": b["booking_id"], "traveller_id": p["traveller_id"]}
    fails(rt, sid, seed, "select_flight_seat", {**arg, "seat": "2A"}, "not in the economy cabin", "seat")
    taken = next(x for x in (f"{r}{c}" for r in range(12, 36) for c in "ABCDEF")
                 if x not in {s["seat"] for s in ok(rt, sid, seed, "get_flight_seat_map",
                                                    {"flight_id": f["flight_id"]})["free_seats"]})
    fails(rt, sid, seed, "select_flight_seat", {**arg, "seat": taken}, "already taken", "seat")
    fails(rt, sid, seed, "select_flight_seat", {**arg, "traveller_id": "TRV-0999", "seat": "30A"},
          "not a passenger")
    free = ok(rt, sid, seed, "get_flight_seat_map", {"flight_id": f["flight_id"]})["free_seats"][0]["seat"]
    ok(rt, sid, seed, "select_flight_seat", {**arg, "seat": free.lower()})
    fails(rt, sid, seed, "select_flight_seat", {**arg, "seat": free}, "already this passenger's seat")
    assert free not in {s["seat"] for s in ok(rt, sid, seed, "get_flight_seat_map",
                                              {"flight_id": f["flight_id"]})["free_seats"]}
    basic = next(x for x in bookings(rt, sid, seed, "ticketed")["flight_bookings"]
                 if x["fare_class"] == "basic_economy")
    fails(rt, sid, seed, "select_flight_seat", {"booking_id": basic["booking_id"],
                                                "traveller_id": basic["passengers"][0]["traveller_id"],
                                                "seat": "30C"}, "do not include seat selection")
    today = next(x for x in bookings(rt, sid, seed, "ticketed")["flight_bookings"] if x["check_in_open"])
    advance(rt, sid, seed, 7 * 60 - 15)  # 15:45, 45 minutes before the 16:30 departure
    fails(rt, sid, seed, "select_flight_seat", {"booking_id": today["booking_id"],
                                                "traveller_id": today["passengers"][0]["traveller_id"],
                                                "seat": "35A"}, "seat changes closed")


def test_check_in_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 4
    booked = bookings(rt, sid, seed)["flight_bookings"]
    today = next(x for x in booked if x["status"] == "ticketed" and x["check_in_open"])
    later = next(x for x in booked if x["status"] == "ticketed" and not x["check_in_open"])
    held = next(x for x in booked if x["status"] == "held")
    fails(rt, sid, seed, "check_in_flight_booking", {"booking_id": later["booking_id"],
                                                     "last_name": later["passengers"][0]["last_name"]},
          "too early", "check-in opens at")
    fails(rt, sid, seed, "check_in_flight_booking", {"booking_id": today["booking_id"], "last_name": "Nobodyson"},
          "passenger name mismatch", "last_name")
    fails(rt, sid, seed, "check_in_flight_booking", {"booking_id": held["booking_id"],
                                                     "last_name": held["passengers"][0]["last_name"]},
          "is held", "confirm it")
    out = ok(rt, sid, seed, "check_in_flight_booking", {"booking_id": today["booking_id"],
                                                        "last_name": today["passengers"][0]["last_name"].upper()})
    assert out["status"] == "checked_in" and all(bp["seat"] for bp in out["boarding_passes"])
    assert len(out["boarding_passes"]) == len(today["passengers"])
    fails(rt, sid, seed, "check_in_flight_booking", {"booking_id": today["booking_id"],
                                                     "last_name": today["passengers"][0]["last_name"]},
          "already checked in")
    # a second ticketed booking on the same flight misses the 45-minute cut-off
    rows, fl = people(rt, sid, seed), flights(rt, sid, seed)
    flight = next(f for f in fl if f["depart_at"] == "2026-06-01T16:30:00+00:00")
    busy = {q["traveller_id"] for q in today["passengers"]}
    p = traveller_ok(rows, busy=busy)
    cls = next(c for c in ("economy", "premium_economy", "business") if flight["seats_left"][c] > 0)
    late = buy(rt, sid, seed, flight["flight_id"], cls, p)
    advance(rt, sid, seed, 7 * 60 - 14)
    fails(rt, sid, seed, "check_in_flight_booking", {"booking_id": late["booking_id"],
                                                     "last_name": p["last_name"]}, "check-in closed")


def test_change_and_cancel_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 5
    booked = bookings(rt, sid, seed)["flight_bookings"]
    fl = flights(rt, sid, seed)
    basic = next(x for x in booked if x["status"] == "ticketed" and x["fare_class"] == "basic_economy")
    other_route = next(f for f in fl if (f["origin"], f["destination"]) != (basic["origin"], basic["destination"])
                       and f["depart_at"] > "2026-06-03")
    fails(rt, sid, seed, "change_flight_booking", {"booking_id": basic["booking_id"],
                                                   "new_flight_id": other_route["flight_id"]}, "cannot be changed")
    eco = next(x for x in booked if x["status"] == "ticketed" and x["fare_class"] == "economy"
               and not x["check_in_open"])
    same = [f for f in fl if (f["origin"], f["destination"]) == (eco["origin"], eco["destination"])]
    wrong = next(f for f in fl if (f["origin"], f["destination"]) != (eco["origin"], eco["destination"])
                 and f["depart_at"] > "2026-06-03")
    fails(rt, sid, seed, "change_flight_booking", {"booking_id": eco["booking_id"],
                                                   "new_flight_id": wrong["flight_id"]}, "different route")
    fails(rt, sid, seed, "change_flight_booking", {"booking_id": eco["booking_id"],
                                                   "new_flight_id": eco["flight_id"]}, "already on this flight")
    gone = next(f for f in same if f["status"] != "scheduled")
    fails(rt, sid, seed, "change_flight_booking", {"booking_id": eco["booking_id"],
                                                   "new_flight_id": gone["flight_id"]}, "can no longer be booked")
    target = next(f for f in same if f["flight_id"] != eco["flight_id"] and f["depart_at"] > "2026-06-02")
    fails(rt, sid, seed, "change_flight_booking", {"booking_id": eco["booking_id"], "new_flight_id": target["flight_id"],
                                                   "fare_class": "basic_economy"}, "into basic_economy")
    sold = next((f for f in same if f["depart_at"] > "2026-06-02" and f["seats_left"]["business"] == 0), None)
    if sold is not None:
        fails(rt, sid, seed, "change_flight_booking", {"booking_id": eco["booking_id"],
                                                       "new_flight_id": sold["flight_id"], "fare_class": "business"},
              "sold out")
    held = next(x for x in booked if x["status"] == "held")
    fails(rt, sid, seed, "change_flight_booking", {"booking_id": held["booking_id"],
                                                   "new_flight_id": target["flight_id"]}, "is held")
    for status in ("cancelled", "completed", "expired"):
        x = next(b for b in booked if b["status"] == status)
        fails(rt, sid, seed, "cancel_flight_booking", {"booking_id": x["booking_id"]}, f"is {status}")
    # a checked-in passenger whose flight is in the air cannot cancel
    today = next(x for x in booked if x["status"] == "ticketed" and x["check_in_open"])
    ok(rt, sid, seed, "check_in_flight_booking", {"booking_id": today["booking_id"],
                                                  "last_name": today["passengers"][0]["last_name"]})
    advance(rt, sid, seed, 7 * 60 + 35)  # 16:35, five minutes after departure
    fails(rt, sid, seed, "cancel_flight_booking", {"booking_id": today["booking_id"]},
          "cannot be cancelled after departure")


def test_hotel_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    snap = rt.call("travel_booking_session_snapshot", {}, sid, seed).json()
    hotel_id, room, night = next((h["hotel_id"], name, d) for h in snap["hotels"].values()
                                 for name, r in h["rooms"].items() for d, n in r["booked"].items()
                                 if n == r["total_rooms"] and d > "2026-06-02")
    rows = people(rt, sid, seed)
    p = traveller_ok(rows)
    card = good_card(p)
    d_in = date.fromisoformat(night) - timedelta(days=1)
    base = {"hotel_id": hotel_id, "room_type": room, "check_in": d_in.isoformat(),
            "check_out": (d_in + timedelta(days=3)).isoformat(), "traveller_id": p["traveller_id"],
            "payment_card_id": card["payment_card_id"]}
    fails(rt, sid, seed, "book_hotel_room", base, "room unavailable", night, "room_type")
    avail = ok(rt, sid, seed, "get_hotel_room_availability", {"hotel_id": hotel_id, "check_in": base["check_in"],
                                                              "check_out": base["check_out"]})
    assert night in next(r for r in avail["rooms"] if r["room_type"] == room)["sold_out_nights"]
    plain = next(h for h in snap["hotels"].values() if "family" not in h["rooms"])
    fails(rt, sid, seed, "book_hotel_room", {**base, "hotel_id": plain["hotel_id"], "room_type": "family"},
          "has no family rooms", "room_type")
    fails(rt, sid, seed, "book_hotel_room", {**base, "room_type": "standard", "guests": 3}, "sleeps at most 2")
    other = next(q for q in rows if q["traveller_id"] != p["traveller_id"])
    fails(rt, sid, seed, "book_hotel_room", {**base, "check_in": "2026-08-01", "check_out": "2026-08-03",
                                             "payment_card_id": good_card(other)["payment_card_id"]},
          "not a traveller on this booking")
    stays = bookings(rt, sid, seed)["hotel_reservations"]
    in_stay = next(r for r in stays if r["status"] == "in_stay")
    done = next(r for r in stays if r["status"] == "completed")
    fails(rt, sid, seed, "cancel_hotel_reservation", {"reservation_id": in_stay["reservation_id"]},
          "stay has already started")
    fails(rt, sid, seed, "modify_hotel_reservation", {"reservation_id": in_stay["reservation_id"],
                                                      "check_out": "2026-06-20"}, "stay has already started")
    fails(rt, sid, seed, "cancel_hotel_reservation", {"reservation_id": done["reservation_id"]}, "stay is over")
    conf = next(r for r in stays if r["status"] == "confirmed")
    fails(rt, sid, seed, "modify_hotel_reservation", {"reservation_id": conf["reservation_id"]}, "nothing to change")
    fails(rt, sid, seed, "modify_hotel_reservation", {"reservation_id": conf["reservation_id"],
                                                      "check_in": conf["check_in"]}, "already has these details")
    fails(rt, sid, seed, "modify_hotel_reservation", {"reservation_id": conf["reservation_id"],
                                                      "check_out": conf["check_in"]}, "must be after check_in")


def test_profile_and_itinerary_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    p = traveller_ok(people(rt, sid, seed))
    t = {"traveller_id": p["traveller_id"]}
    fails(rt, sid, seed, "update_traveller_profile", t, "nothing to update")
    fails(rt, sid, seed, "update_traveller_profile", {**t, "passport_number": "X1234567"}, "needs its passport_expiry")
    fails(rt, sid, seed, "update_traveller_profile", {**t, "passport_number": "X1234567",
                                                      "passport_expiry": "2026-05-01"}, "not in the future")
    fails(rt, sid, seed, "update_traveller_profile", {**t, "loyalty_airline": "NS"}, "together", "loyalty_number")
    fails(rt, sid, seed, "find_traveller_profiles", {"query": "  "}, "query is empty")
    ok(rt, sid, seed, "create_trip_itinerary", {"name": "Lisbon offsite", "lead_traveller_id": p["traveller_id"]})
    fails(rt, sid, seed, "create_trip_itinerary", {"name": "lisbon OFFSITE", "lead_traveller_id": p["traveller_id"]},
          "already has an itinerary named")
    fails(rt, sid, seed, "create_trip_itinerary", {"name": "x", "lead_traveller_id": "TRV-0999"},
          "unknown lead_traveller_id")
    assert ok(rt, sid, seed, "find_traveller_profiles", {"query": "zzzz-nobody"}) == []


# ---------------------------------------------------------------- (4) workflows and the clock
def test_fare_rules_decide_what_comes_back(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    rows, fl = people(rt, sid, seed), flights(rt, sid, seed)
    free = [q for q in rows if q["passport_valid"] and q["passport_expiry"] > "2027-01-01" and q["travel_credit"] == 0]
    fare = {}
    for cls, q in zip(("economy", "business", "basic_economy"), free, strict=False):
        f = next(x for x in fl if "2026-06-04" <= x["depart_at"][:10] <= "2026-06-09" and x["seats_left"][cls] >= 1
                 and not _intl(x))
        fare[cls] = (buy(rt, sid, seed, f["flight_id"], cls, q), q, f)
    eco, q, f = fare["economy"]
    before = ok(rt, sid, seed, "get_flight_details", {"flight_id": f["flight_id"]})["fares"]["economy"]["seats_left"]
    out = ok(rt, sid, seed, "cancel_flight_booking", {"booking_id": eco["booking_id"]})
    assert out["cancellation"] == {"fee": 100.0, "refunded": 0.0,
                                   "travel_credit": round(eco["amount_paid"] - 100.0, 2)}
    assert ok(rt, sid, seed, "get_flight_details", {"flight_id": f["flight_id"]})["fares"]["economy"][
        "seats_left"] == before + 1
    profile = ok(rt, sid, seed, "find_traveller_profiles", {"query": q["name"]})[0]
    assert profile["travel_credit"] == round(eco["amount_paid"] - 100.0, 2)
    biz = ok(rt, sid, seed, "cancel_flight_booking", {"booking_id": fare["business"][0]["booking_id"]})
    assert biz["cancellation"]["refunded"] == fare["business"][0]["amount_paid"] and biz["refunded"] > 0
    basic = ok(rt, sid, seed, "cancel_flight_booking", {"booking_id": fare["basic_economy"][0]["booking_id"]})
    assert basic["cancellation"]["refunded"] == 0 and basic["cancellation"]["travel_credit"] == 0
    # the travel credit pays for the next trip
    g = next(x for x in fl if x["depart_at"][:10] == "2026-06-07" and x["seats_left"]["economy"] >= 1)
    b = hold(rt, sid, seed, g["flight_id"], "economy", [q["traveller_id"]])
    card = good_card(q)
    paid = ok(rt, sid, seed, "confirm_flight_booking", {"booking_id": b["booking_id"],
                                                        "payment_card_id": card["payment_card_id"],
                                                        "card_security_code": card["security_code"],
                                                        "use_travel_credit": True})
    used = min(profile["travel_credit"], paid["fare_total"])
    assert paid["travel_credit_applied"] == used and paid["amount_paid"] == round(paid["fare_total"] - used, 2)


def test_change_charges_fee_and_moves_seats(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    rows, fl = people(rt, sid, seed), flights(rt, sid, seed)
    p = traveller_ok(rows)
    first = next(f for f in fl if "2026-06-03" <= f["depart_at"][:10] <= "2026-06-06" and f["seats_left"]["economy"]
                 and not _intl(f))
    later = next(f for f in fl if (f["origin"], f["destination"]) == (first["origin"], first["destination"])
                 and f["depart_at"] > first["depart_at"] and f["seats_left"]["economy"])
    b = buy(rt, sid, seed, first["flight_id"], "economy", p)
    out = ok(rt, sid, seed, "change_flight_booking", {"booking_id": b["booking_id"], "new_flight_id": later["flight_id"]})
    diff = round(later["prices"]["economy"] - first["prices"]["economy"], 2)
    assert out["change"]["change_fee"] == 75.0 and out["change"]["fare_difference"] == diff
    assert out["change"]["charged"] == round(75.0 + max(diff, 0), 2)
    assert out["flight"]["flight_id"] == later["flight_id"] and out["amount_paid"] == round(
        b["amount_paid"] + out["change"]["charged"], 2)
    after = {f["flight_id"]: f for f in flights(rt, sid, seed)}
    assert after[first["flight_id"]]["seats_left"]["economy"] == first["seats_left"]["economy"]
    assert after[later["flight_id"]]["seats_left"]["economy"] == later["seats_left"]["economy"] - 1


def test_passport_fix_unblocks_an_international_hold(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 4
    rows, fl = people(rt, sid, seed), flights(rt, sid, seed)
    lapsed = next(q for q in rows if not q["passport_valid"])
    intl = fresh_flight(fl, intl=True)
    args = {"flight_id": intl["flight_id"], "fare_class": "economy", "traveller_ids": [lapsed["traveller_id"]]}
    fails(rt, sid, seed, "hold_flight_fare", args, "passport of")
    ok(rt, sid, seed, "update_traveller_profile", {"traveller_id": lapsed["traveller_id"],
                                                   "passport_number": "p7654321", "passport_expiry": "2034-04-30"})
    held = ok(rt, sid, seed, "hold_flight_fare", args)
    assert held["status"] == "held"
    prof = ok(rt, sid, seed, "find_traveller_profiles", {"query": lapsed["email"]})[0]
    assert prof["passport_valid"] and prof["passport_number"].endswith("321")


def _clock_day(rt: DomainRuntime, sid: str, seed: int) -> list[tuple[str, dict[str, Any]]]:
    """Check in this afternoon's flight, then let the day pass; returns the calls made."""
    calls: list[tuple[str, dict[str, Any]]] = []

    def do(name: str, args: dict[str, Any]) -> Any:
        calls.append((name, args))
        return ok(rt, sid, seed, name, args)

    booked = do("travel_booking_list_bookings", {})
    today = next(x for x in booked["flight_bookings"] if x["status"] == "ticketed" and x["check_in_open"])
    do("check_in_flight_booking", {"booking_id": today["booking_id"], "last_name": today["passengers"][0]["last_name"]})
    # someone else buys a seat on the same flight and never checks in
    busy = {q["traveller_id"] for q in today["passengers"]}
    p = traveller_ok(do("travel_booking_list_travellers", {}), busy=busy)
    flight = do("get_flight_details", {"flight_id": today["flight_id"]})
    cls = next(c for c in ("economy", "premium_economy", "business") if flight["fares"][c]["seats_left"] > 0)
    held = do("hold_flight_fare", {"flight_id": today["flight_id"], "fare_class": cls,
                                   "traveller_ids": [p["traveller_id"]]})
    card = good_card(p)
    do("confirm_flight_booking", {"booking_id": held["booking_id"], "payment_card_id": card["payment_card_id"],
                                  "card_security_code": card["security_code"]})
    do(CLOCK, {"minutes": 30 * 60})  # to 15:0x tomorrow
    return calls


def test_clock_moves_bookings_through_their_lifecycle(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 5
    start = bookings(rt, sid, seed)
    calls = _clock_day(rt, sid, seed)
    end = bookings(rt, sid, seed)
    before = {b["booking_id"]: b for b in start["flight_bookings"]}
    after = {b["booking_id"]: b for b in end["flight_bookings"]}
    today = calls[1][1]["booking_id"]
    assert after[today]["status"] == "completed"
    held = next(b for b in before.values() if b["status"] == "held")
    assert after[held["booking_id"]]["status"] == "expired"
    no_show = next(name_args[1]["booking_id"] for name_args in calls if name_args[0] == "confirm_flight_booking")
    assert after[no_show]["status"] == "no_show"
    stays_before = {r["reservation_id"]: r for r in start["hotel_reservations"]}
    stays_after = {r["reservation_id"]: r for r in end["hotel_reservations"]}
    soon = next(r for r in stays_before.values() if r["check_in"] == "2026-06-02" and r["status"] == "confirmed")
    assert stays_after[soon["reservation_id"]]["status"] == "in_stay"
    # the same calls on a fresh session give the identical world
    assert_same_state_on_replay(rt, sid, seed, calls)


def test_hotel_cancellation_fee_follows_the_48_hour_window(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    stays = bookings(rt, sid, seed)["hotel_reservations"]
    soon = next(r for r in stays if r["status"] == "confirmed" and r["check_in"] == "2026-06-02")
    far = next(r for r in stays if r["status"] == "confirmed" and r["check_in"] >= "2026-06-04")
    out = ok(rt, sid, seed, "cancel_hotel_reservation", {"reservation_id": soon["reservation_id"]})
    assert out["status"] == "cancelled" and out["cancellation_fee"] == out["nightly_rate"] > 0
    out = ok(rt, sid, seed, "cancel_hotel_reservation", {"reservation_id": far["reservation_id"]})
    assert out["cancellation_fee"] == 0
    fails(rt, sid, seed, "cancel_hotel_reservation", {"reservation_id": far["reservation_id"]}, "was cancelled")
    it = ok(rt, sid, seed, "get_trip_itinerary", {"itinerary_id": far["itinerary_id"]})
    assert any(h["status"] == "cancelled" for h in it["hotels"])


def test_hotel_booking_consumes_inventory_and_modification_rebooks(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    p = traveller_ok(people(rt, sid, seed))
    hotel = ok(rt, sid, seed, "search_hotels", {"city": "Berlin", "check_in": "2026-06-20", "check_out": "2026-06-22"})[0]
    room = hotel["cheapest_room_type"]
    args = {"hotel_id": hotel["hotel_id"], "check_in": "2026-06-20", "check_out": "2026-06-22"}
    left = next(r for r in ok(rt, sid, seed, "get_hotel_room_availability", args)["rooms"] if r["room_type"] == room)
    res = ok(rt, sid, seed, "book_hotel_room", {**args, "room_type": room, "traveller_id": p["traveller_id"],
                                                "payment_card_id": good_card(p)["payment_card_id"]})
    assert res["total_price"] == round(left["nightly_rate"] * 2, 2) and res["itinerary_id"]
    now_left = next(r for r in ok(rt, sid, seed, "get_hotel_room_availability", args)["rooms"]
                    if r["room_type"] == room)["rooms_left"]
    assert now_left == left["rooms_left"] - 1
    moved = ok(rt, sid, seed, "modify_hotel_reservation", {"reservation_id": res["reservation_id"],
                                                          "check_in": "2026-07-20", "check_out": "2026-07-23"})
    assert moved["nights"] == 3 and moved["price_change"] == round(left["nightly_rate"], 2)
    again = next(r for r in ok(rt, sid, seed, "get_hotel_room_availability", args)["rooms"] if r["room_type"] == room)
    assert again["rooms_left"] == left["rooms_left"]
    trips = ok(rt, sid, seed, "list_trip_itineraries", {"traveller_id": p["traveller_id"], "status": "booked"})
    assert res["itinerary_id"] in {t["itinerary_id"] for t in trips}


# ---------------------------------------------------------------- (5) determinism and discovery
def test_unique_values_cover_the_kit_cities(rt: DomainRuntime) -> None:
    sid = new_sid()
    cities = {r["value"] for r in ok(rt, sid, 0, "travel_booking_get_unique_values", {"field": "hotel_city"})}
    assert len(cities) == 16 and {"London", "Tokyo", "Chicago"} <= cities
    classes = {r["value"] for r in ok(rt, sid, 0, "travel_booking_get_unique_values", {"field": "fare_class"})}
    assert {"economy", "business", "basic_economy"} <= classes


# ---------------------------------------------------------------- (6) the intent bank for synthesis
