"""Hidden discovery tools: the live entities synthesis grounds requests in (travellers with the
passport and card details a user would know, bookings by status, flights by route) and the values of
categorical fields."""

from __future__ import annotations

from typing import Literal

from servers.kit import IsoDate, discovery, now, value_counts
from servers.travel_booking.rules import AIRLINES, CHECK_IN_OPENS, dt, flight_status, itinerary_status
from servers.travel_booking.state import AIRPORTS, TravelState, full_name


@discovery(produces=("traveller_id", "payment_card_id"))
def travel_booking_list_travellers(s: TravelState, name: str | None = None) -> list:
    """Every traveller with full passport and loyalty details, cards (with security codes, which the
    cardholder would know), travel credit, and the ids of their itineraries and bookings.

    Args:
        name: Case-insensitive part of the traveller's name; omit to list everyone.
    """
    needle = (name or "").lower()
    d = now(s).date().isoformat()
    out = []
    for t in s.travellers.values():
        if needle not in full_name(t).lower():
            continue
        out.append({
            "traveller_id": t.traveller_id, "name": full_name(t), "first_name": t.first_name,
            "last_name": t.last_name, "email": t.email, "phone": t.phone, "nationality": t.nationality,
            "passport_number": t.passport_number, "passport_expiry": t.passport_expiry,
            "passport_valid": t.passport_expiry > d, "loyalty_numbers": dict(t.loyalty_numbers),
            "travel_credit": t.travel_credit,
            "cards": [{"payment_card_id": c.card_id, "brand": c.brand, "last4": c.last4, "expiry": c.expiry,
                       "security_code": c.security_code, "expired": c.expiry < d[:7]}
                      for c in s.cards.values() if c.traveller_id == t.traveller_id],
            "itinerary_ids": [i.itinerary_id for i in s.itineraries.values() if i.lead_traveller_id == t.traveller_id],
            "flight_booking_ids": [b.booking_id for b in s.flight_bookings.values()
                                   if any(p.traveller_id == t.traveller_id for p in b.passengers)],
            "hotel_reservation_ids": [r.reservation_id for r in s.hotel_reservations.values()
                                      if r.traveller_id == t.traveller_id],
        })
    return out


@discovery(produces=("booking_id", "reservation_id", "itinerary_id"))
def travel_booking_list_bookings(s: TravelState, status: str | None = None) -> dict:
    """Every flight booking and hotel reservation with what a traveller would know about it (route,
    flight number, dates, passengers' last names, status), plus every itinerary.

    Args:
        status: Only bookings/reservations in this status (e.g. ticketed, held, confirmed, in_stay).
    """
    at = now(s)
    flights = []
    for b in s.flight_bookings.values():
        if status is not None and b.status != status:
            continue
        f = s.flights[b.flight_id]
        flights.append({
            "booking_id": b.booking_id, "itinerary_id": b.itinerary_id, "status": b.status,
            "fare_class": b.fare_class, "flight_id": f.flight_id, "flight_number": f.flight_number,
            "origin": f.origin, "destination": f.destination, "depart_at": f.depart_at,
            "check_in_open": dt(f.depart_at) - CHECK_IN_OPENS <= at < dt(f.depart_at),
            "passengers": [{"traveller_id": p.traveller_id, "name": full_name(s.travellers[p.traveller_id]),
                            "last_name": s.travellers[p.traveller_id].last_name, "seat": p.seat}
                           for p in b.passengers],
            "payment_card_id": b.card_id, "hold_expires_at": b.hold_expires_at if b.status == "held" else None,
        })
    hotels = []
    for r in s.hotel_reservations.values():
        if status is not None and r.status != status:
            continue
        h = s.hotels[r.hotel_id]
        hotels.append({"reservation_id": r.reservation_id, "itinerary_id": r.itinerary_id, "status": r.status,
                       "hotel_id": h.hotel_id, "hotel_name": h.name, "city": h.city, "room_type": r.room_type,
                       "check_in": r.check_in, "check_out": r.check_out, "traveller_id": r.traveller_id,
                       "guest_name": full_name(s.travellers[r.traveller_id]), "payment_card_id": r.card_id})
    itineraries = [{"itinerary_id": i.itinerary_id, "name": i.name, "lead_traveller_id": i.lead_traveller_id,
                    "status": itinerary_status(s, i)} for i in s.itineraries.values()]
    return {"flight_bookings": flights, "hotel_reservations": hotels, "itineraries": itineraries}


@discovery(produces=("flight_id",))
def travel_booking_list_flights(s: TravelState, origin: str | None = None, destination: str | None = None,
                                departure_date: IsoDate | None = None) -> list:
    """Scheduled flights (compact): number, route, times, status and seats left per fare class.

    Args:
        origin: Only flights from this airport code.
        destination: Only flights to this airport code.
        departure_date: Only flights leaving on this day (UTC), YYYY-MM-DD.
    """
    at = now(s)
    return [{"flight_id": f.flight_id, "flight_number": f.flight_number, "airline": AIRLINES[f.airline_code],
             "origin": f.origin, "origin_city": AIRPORTS[f.origin], "destination": f.destination,
             "destination_city": AIRPORTS[f.destination], "depart_at": f.depart_at, "arrive_at": f.arrive_at,
             "status": flight_status(f, at),
             "seats_left": {c: x.seats_left for c, x in f.fares.items()},
             "prices": {c: x.price for c, x in f.fares.items()}}
            for f in s.flights.values()
            if (origin is None or f.origin == origin.upper()) and (destination is None or f.destination ==
                                                                    destination.upper())
            and (departure_date is None or f.depart_at.startswith(departure_date))]


@discovery
def travel_booking_get_unique_values(s: TravelState, field: Literal[
        "airport", "route", "airline", "flight_number", "fare_class", "booking_status", "hotel_city", "hotel_name",
        "room_type", "reservation_status", "itinerary_status", "nationality", "card_brand"]) -> list:
    """Distinct values of a categorical field with their counts.

    Args:
        field: Which field to summarise.
    """
    values = {
        "airport": lambda: [f.origin for f in s.flights.values()],
        "route": lambda: [f"{f.origin}-{f.destination}" for f in s.flights.values()],
        "airline": lambda: [AIRLINES[f.airline_code] for f in s.flights.values()],
        "flight_number": lambda: [f.flight_number for f in s.flights.values()],
        "fare_class": lambda: [b.fare_class for b in s.flight_bookings.values()],
        "booking_status": lambda: [b.status for b in s.flight_bookings.values()],
        "hotel_city": lambda: [h.city for h in s.hotels.values()],
        "hotel_name": lambda: [h.name for h in s.hotels.values()],
        "room_type": lambda: [r for h in s.hotels.values() for r in h.rooms],
        "reservation_status": lambda: [r.status for r in s.hotel_reservations.values()],
        "itinerary_status": lambda: [itinerary_status(s, i) for i in s.itineraries.values()],
        "nationality": lambda: [t.nationality for t in s.travellers.values()],
        "card_brand": lambda: [c.brand for c in s.cards.values()],
    }[field]()
    return value_counts(values)
