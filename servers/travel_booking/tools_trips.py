"""Traveller profiles and trip itineraries (which group flight bookings and hotel stays)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.kit import (
    EmailAddress,
    IsoDate,
    Name,
    Phone,
    Text,
    ToolError,
    iso,
    new_id,
    now,
    parse_date,
    today,
    tool,
)
from servers.travel_booking.rules import (
    AIRLINES,
    booking_view,
    dt,
    hotel_check_in_at,
    itinerary_summary,
    reservation_view,
)
from servers.travel_booking.state import (
    Itinerary,
    Traveller,
    TravelState,
    full_name,
    get_itinerary,
    get_traveller,
)

AirlineCode = Literal["NS", "BF", "MR", "CJ", "SL"]


def profile_view(s: TravelState, t: Traveller) -> dict:
    d = today(s).isoformat()
    return {
        "traveller_id": t.traveller_id, "name": full_name(t), "first_name": t.first_name, "last_name": t.last_name,
        "email": t.email, "phone": t.phone, "date_of_birth": t.date_of_birth, "nationality": t.nationality,
        "passport_number": "•" * (len(t.passport_number) - 3) + t.passport_number[-3:],
        "passport_expiry": t.passport_expiry, "passport_valid": t.passport_expiry > d,
        "loyalty_numbers": [{"airline": AIRLINES[k], "airline_code": k, "number": v}
                            for k, v in t.loyalty_numbers.items()],
        "travel_credit": t.travel_credit,
        "payment_cards": [{"payment_card_id": c.card_id, "brand": c.brand, "last4": c.last4, "expiry": c.expiry,
                           "expired": c.expiry < d[:7]}
                          for c in s.cards.values() if c.traveller_id == t.traveller_id],
    }


@tool(produces=("traveller_id", "payment_card_id"), read_only=True)
def find_traveller_profiles(s: TravelState, query: str) -> list:
    """Traveller profiles whose name or email contains the query: contact details, passport expiry,
    airline loyalty numbers, travel credit and the payment cards on file.

    Args:
        query: Part of a traveller's name or email address (case-insensitive).
    """
    needle = query.strip().lower()
    if not needle:
        raise ToolError("query is empty; give part of a name or email", field="query")
    return [profile_view(s, t) for t in s.travellers.values()
            if needle in full_name(t).lower() or needle in t.email.lower()][:20]


@tool(consumes=("traveller_id",), establishes=("passport_valid",))
def update_traveller_profile(s: TravelState, traveller_id: str,
                             passport_number: Annotated[str, Field(pattern=r"^[A-Za-z0-9]{6,9}$")] | None = None,
                             passport_expiry: IsoDate | None = None,
                             nationality: Annotated[str, Field(pattern=r"^[A-Z]{2}$")] | None = None,
                             loyalty_airline: AirlineCode | None = None,
                             loyalty_number: Annotated[str, Field(pattern=r"^[0-9]{6,12}$")] | None = None,
                             email: EmailAddress | None = None, phone: Phone | None = None) -> dict:
    """Update a traveller's passport, nationality, airline loyalty number or contact details. A new
    passport number needs its expiry date, and an expired passport cannot be saved.

    Args:
        traveller_id: The traveller.
        passport_number: New passport number (6-9 letters/digits).
        passport_expiry: Passport expiry date, YYYY-MM-DD (must be in the future).
        nationality: Two-letter country code of the passport (e.g. US, GB).
        loyalty_airline: Airline code of the frequent-flyer programme (give with loyalty_number).
        loyalty_number: Frequent-flyer member number for loyalty_airline.
        email: New email address.
        phone: New phone number.
    """
    t = get_traveller(s, traveller_id)
    given = [passport_number, passport_expiry, nationality, loyalty_airline, loyalty_number, email, phone]
    if all(v is None for v in given):
        raise ToolError("nothing to update: give at least one field", field="traveller_id")
    if passport_number is not None and passport_number.upper() != t.passport_number and passport_expiry is None:
        raise ToolError("a new passport_number needs its passport_expiry", field="passport_expiry")
    if passport_expiry is not None:
        d = parse_date(passport_expiry, "passport_expiry")
        if d <= today(s):
            raise ToolError(f"passport_expiry {passport_expiry} is not in the future; an expired passport cannot "
                            "be used for travel", field="passport_expiry", code="date_in_past")
    if (loyalty_airline is None) != (loyalty_number is None):
        raise ToolError("give loyalty_airline and loyalty_number together", field="loyalty_number")
    t = s.travellers.edit(traveller_id)
    if passport_number is not None:
        t.passport_number = passport_number.upper()
    if passport_expiry is not None:
        t.passport_expiry = passport_expiry
    if nationality is not None:
        t.nationality = nationality
    if loyalty_airline is not None and loyalty_number is not None:
        t.loyalty_numbers[loyalty_airline] = loyalty_number
        t.loyalty_numbers = dict(sorted(t.loyalty_numbers.items()))
    if email is not None:
        t.email = email.lower()
    if phone is not None:
        t.phone = phone
    return profile_view(s, t)


@tool(consumes=("traveller_id",), produces=("itinerary_id",))
def create_trip_itinerary(s: TravelState, name: Name, lead_traveller_id: str, notes: Text | None = None) -> dict:
    """Start a new trip itinerary for a traveller, to collect the trip's flight bookings and hotel stays.

    Args:
        name: Trip name, e.g. "Berlin conference".
        lead_traveller_id: The traveller who owns the trip.
        notes: Free-form notes for the trip.
    """
    lead = get_traveller(s, lead_traveller_id, "lead_traveller_id")
    for it in s.itineraries.values():
        if it.lead_traveller_id == lead.traveller_id and it.name.lower() == name.strip().lower():
            raise ToolError(f"{full_name(lead)} already has an itinerary named '{it.name}' ({it.itinerary_id})",
                            field="name", code="duplicate")
    iid = new_id(s.counters, "ITN")
    it = s.itineraries.put(iid, Itinerary(iid, name.strip(), lead.traveller_id, notes or "", iso(now(s))))
    return {**itinerary_summary(s, it), "notes": it.notes}


def _involves(s: TravelState, it: Itinerary, traveller_id: str) -> bool:
    if it.lead_traveller_id == traveller_id:
        return True
    if any(p.traveller_id == traveller_id for b in it.flight_booking_ids for p in s.flight_bookings[b].passengers):
        return True
    return any(s.hotel_reservations[r].traveller_id == traveller_id for r in it.hotel_reservation_ids)


@tool(consumes=("traveller_id",), produces=("itinerary_id",), read_only=True)
def list_trip_itineraries(s: TravelState, traveller_id: str | None = None,
                          status: Literal["planning", "booked", "in_progress", "completed"] | None = None,
                          limit: Annotated[int, Field(ge=1, le=100)] = 50) -> list:
    """Trip itineraries (lead traveller, status, start, number of bookings, total cost), earliest first;
    optionally only those a traveller takes part in, or only one status.

    Args:
        traveller_id: Only trips this traveller leads or travels on.
        status: Only trips in this state: planning (nothing booked), booked, in_progress or completed.
        limit: Maximum number of itineraries.
    """
    if traveller_id is not None:
        get_traveller(s, traveller_id)
    rows = []
    for it in s.itineraries.values():
        if traveller_id is not None and not _involves(s, it, traveller_id):
            continue
        row = itinerary_summary(s, it)
        if status is None or row["status"] == status:
            rows.append(row)
    rows.sort(key=lambda r: (r["starts_at"] or "9999", r["itinerary_id"]))
    return rows[:limit]


@tool(consumes=("itinerary_id",), produces=("booking_id", "reservation_id"), read_only=True)
def get_trip_itinerary(s: TravelState, itinerary_id: str) -> dict:
    """A trip itinerary in full: its flight bookings and hotel stays in time order, total cost, and
    warnings such as a hotel check-in that does not match the flight's arrival day.

    Args:
        itinerary_id: The itinerary.
    """
    it = get_itinerary(s, itinerary_id)
    flights = [booking_view(s, s.flight_bookings[b]) for b in it.flight_booking_ids]
    stays = [reservation_view(s, s.hotel_reservations[r]) for r in it.hotel_reservation_ids]
    flights.sort(key=lambda b: b["flight"]["depart_at"])
    stays.sort(key=lambda r: r["check_in"])
    warnings = []
    live = ("held", "ticketed", "checked_in")
    for r in stays:
        if r["status"] != "confirmed":
            continue
        inbound = [b for b in flights if b["status"] in live and b["flight"]["destination_city"] == r["city"]]
        if inbound and not any(b["flight"]["arrive_at"][:10] == r["check_in"] for b in inbound):
            warnings.append(f"hotel {r['reservation_id']} checks in on {r['check_in']} but no flight lands in "
                            f"{r['city']} that day")
    for b in flights:
        if b["status"] == "held":
            warnings.append(f"booking {b['booking_id']} is only held until {b['hold_expires_at']}")
    at = now(s)
    upcoming = [b["flight"]["depart_at"] for b in flights if b["status"] in live and dt(b["flight"]["depart_at"]) > at]
    upcoming += [iso(hotel_check_in_at(r["check_in"])) for r in stays if r["status"] == "confirmed"]
    return {**itinerary_summary(s, it), "notes": it.notes, "created_at": it.created_at,
            "next_event_at": min(upcoming) if upcoming else None, "flights": flights, "hotels": stays,
            "warnings": warnings}
