"""Travel booking smoke scenario: a traveller plans a trip — finds a flight, holds it, picks a seat,
pays, moves to a later flight, books and stretches a hotel stay, reviews the itinerary, saves a loyalty
number, then calls the trip off; meanwhile a colleague checks in for this afternoon's flight. Every
user-visible tool succeeds at least once; ids come from discovery and list calls.

``call(name, args)`` performs a tool call on one session, asserts it did not fail and returns the JSON.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import date, timedelta
from typing import Any

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


async def smoke(call: Call) -> None:
    people = await call("travel_booking_list_travellers", {})
    me = next(p for p in people if p["passport_expiry"] > "2027-06-01" and any(not c["expired"] for c in p["cards"]))
    card = next(c for c in me["cards"] if not c["expired"])
    found = await call("find_traveller_profiles", {"query": me["last_name"]})
    assert me["traveller_id"] in {p["traveller_id"] for p in found}

    # a route with two flights at least two days out, both with economy seats
    flights = await call("travel_booking_list_flights", {})
    soon = [f for f in flights if "2026-06-03" <= f["depart_at"][:10] <= "2026-06-09"
            and f["seats_left"]["economy"] >= 2]
    first = next(f for f in soon if any(g["flight_id"] != f["flight_id"] and g["origin"] == f["origin"]
                                        and g["destination"] == f["destination"] for g in soon))
    later = next(g for g in soon if g["flight_id"] != first["flight_id"] and g["origin"] == first["origin"]
                 and g["destination"] == first["destination"])

    trip = await call("create_trip_itinerary", {"name": f"{first['destination_city']} getaway",
                                                "lead_traveller_id": me["traveller_id"], "notes": "Aisle seats."})
    results = await call("search_flights", {"origin": first["origin"], "destination": first["destination_city"],
                                            "departure_date": first["depart_at"][:10], "fare_class": "economy"})
    assert first["flight_id"] in {r["flight_id"] for r in results}
    await call("get_flight_details", {"flight_id": first["flight_id"]})
    held = await call("hold_flight_fare", {"flight_id": first["flight_id"], "fare_class": "economy",
                                           "traveller_ids": [me["traveller_id"]],
                                           "itinerary_id": trip["itinerary_id"]})
    booking = held["booking_id"]
    seats = await call("get_flight_seat_map", {"flight_id": first["flight_id"], "cabin": "economy"})
    await call("select_flight_seat", {"booking_id": booking, "traveller_id": me["traveller_id"],
                                      "seat": seats["free_seats"][0]["seat"]})
    paid = await call("confirm_flight_booking", {"booking_id": booking, "payment_card_id": card["payment_card_id"],
                                                 "card_security_code": card["security_code"]})
    assert paid["status"] == "ticketed"
    await call("get_flight_booking", {"booking_id": booking})
    moved = await call("change_flight_booking", {"booking_id": booking, "new_flight_id": later["flight_id"]})
    assert moved["flight"]["flight_id"] == later["flight_id"]

    # a hotel for two nights from the new arrival day, then one more night
    arrive = moved["flight"]["arrive_at"][:10]
    out = (date.fromisoformat(arrive) + timedelta(days=2)).isoformat()
    hotels = await call("search_hotels", {"city": first["destination_city"], "check_in": arrive, "check_out": out})
    hotel = hotels[0]
    rooms = await call("get_hotel_room_availability", {"hotel_id": hotel["hotel_id"], "check_in": arrive,
                                                       "check_out": out})
    room = next(r for r in rooms["rooms"] if r["available"])
    stay = await call("book_hotel_room", {"hotel_id": hotel["hotel_id"], "room_type": room["room_type"],
                                          "check_in": arrive, "check_out": out, "traveller_id": me["traveller_id"],
                                          "payment_card_id": card["payment_card_id"],
                                          "itinerary_id": trip["itinerary_id"]})
    longer = (date.fromisoformat(out) + timedelta(days=1)).isoformat()
    avail = await call("get_hotel_room_availability", {"hotel_id": hotel["hotel_id"], "check_in": arrive,
                                                       "check_out": longer})
    free = next(r["room_type"] for r in avail["rooms"] if r["available"])
    await call("modify_hotel_reservation", {"reservation_id": stay["reservation_id"], "check_out": longer,
                                            "room_type": free})
    full = await call("get_trip_itinerary", {"itinerary_id": trip["itinerary_id"]})
    assert len(full["flights"]) == 1 and len(full["hotels"]) == 1
    mine = await call("list_trip_itineraries", {"traveller_id": me["traveller_id"]})
    assert trip["itinerary_id"] in {i["itinerary_id"] for i in mine}
    await call("update_traveller_profile", {"traveller_id": me["traveller_id"], "loyalty_airline": "NS",
                                            "loyalty_number": "480012345"})

    # a colleague on this afternoon's flight checks in online
    booked = await call("travel_booking_list_bookings", {"status": "ticketed"})
    today = next(b for b in booked["flight_bookings"] if b["check_in_open"])
    passes = await call("check_in_flight_booking", {"booking_id": today["booking_id"],
                                                    "last_name": today["passengers"][-1]["last_name"]})
    assert passes["status"] == "checked_in"

    # plans change: call the trip off
    await call("cancel_hotel_reservation", {"reservation_id": stay["reservation_id"]})
    gone = await call("cancel_flight_booking", {"booking_id": booking})
    assert gone["status"] == "cancelled"
