"""Fare rules, seat maps, time windows, the clock hook and the JSON views tools return."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from servers.kit import ToolError, iso, now
from servers.travel_booking.state import (
    ACTIVE_FLIGHT_STATUSES,
    AIRPORTS,
    COUNTRY_OF_AIRPORT,
    Flight,
    FlightBooking,
    Hotel,
    HotelReservation,
    Itinerary,
    TravelState,
    full_name,
)

HOLD_MINUTES = 30
BOOKING_CLOSES = timedelta(minutes=60)  # no new holds within an hour of departure
CHECK_IN_OPENS = timedelta(hours=24)
CHECK_IN_CLOSES = timedelta(minutes=45)
HOTEL_CHECK_IN = time(15, 0)
HOTEL_CHECK_OUT = time(11, 0)
FREE_HOTEL_CANCEL = timedelta(hours=48)


@dataclass(frozen=True)
class FareRule:
    cabin: str
    refundable: bool  # cancellation returns money to the card (else travel credit or nothing)
    cancel_value: str  # refund | credit | none
    cancel_fee: float  # per passenger
    changeable: bool
    change_fee: float  # per passenger
    seat_selection: bool  # seats can be picked before check-in
    checked_bags: int


FARE_CLASSES = ("basic_economy", "economy", "premium_economy", "business")
FARE_RULES: dict[str, FareRule] = {
    "basic_economy": FareRule("economy", False, "none", 0.0, False, 0.0, False, 0),
    "economy": FareRule("economy", False, "credit", 100.0, True, 75.0, True, 1),
    "premium_economy": FareRule("premium", True, "refund", 50.0, True, 0.0, True, 2),
    "business": FareRule("business", True, "refund", 0.0, True, 0.0, True, 2),
}
CABIN_SEATS: dict[str, tuple[range, str]] = {  # cabin -> (rows, seat letters)
    "business": (range(1, 4), "ACDF"),
    "premium": (range(7, 10), "ABCDEF"),
    "economy": (range(12, 36), "ABCDEF"),
}
AIRLINES: dict[str, str] = {
    "NS": "Northstar Airlines", "BF": "Bluefin Air", "MR": "Meridian Airways", "CJ": "Cascade Jet",
    "SL": "Solaris Airlines",
}
TICKET_PREFIX = {"NS": "817", "BF": "624", "MR": "455", "CJ": "390", "SL": "271"}


def money(x: float) -> float:
    return round(x + 0.0, 2)


def dt(text: str) -> datetime:
    return datetime.fromisoformat(text)


def cabin_seats(cabin: str) -> list[str]:
    rows, letters = CABIN_SEATS[cabin]
    return [f"{r}{c}" for r in rows for c in letters]


def seat_kind(seat: str, cabin: str) -> str:
    letter = seat[-1]
    letters = CABIN_SEATS[cabin][1]
    if letter in (letters[0], letters[-1]):
        return "window"
    if cabin == "business" or letter in "CD":
        return "aisle"
    return "middle"


def taken_seats(s: TravelState, flight: Flight, *, except_booking: str | None = None) -> set[str]:
    seats = set(flight.blocked_seats)
    for b in s.flight_bookings.values():
        if b.flight_id == flight.flight_id and b.status in ACTIVE_FLIGHT_STATUSES and b.booking_id != except_booking:
            seats.update(p.seat for p in b.passengers if p.seat)
    return seats


def flight_status(flight: Flight, at: datetime) -> str:
    depart, arrive = dt(flight.depart_at), dt(flight.arrive_at)
    if at >= arrive:
        return "arrived"
    if at >= depart:
        return "departed"
    if at >= depart - CHECK_IN_CLOSES:
        return "boarding"
    return "scheduled"


def is_international(flight: Flight) -> bool:
    return COUNTRY_OF_AIRPORT[flight.origin] != COUNTRY_OF_AIRPORT[flight.destination]


def hotel_check_in_at(day: str) -> datetime:
    return datetime.combine(date.fromisoformat(day), HOTEL_CHECK_IN, tzinfo=UTC)


def hotel_check_out_at(day: str) -> datetime:
    return datetime.combine(date.fromisoformat(day), HOTEL_CHECK_OUT, tzinfo=UTC)


def nights(check_in: date, check_out: date) -> list[str]:
    return [(check_in + timedelta(days=i)).isoformat() for i in range((check_out - check_in).days)]


def rooms_left(hotel: Hotel, room_type: str, night: str) -> int:
    rt = hotel.rooms[room_type]
    return rt.total_rooms - rt.booked.get(night, 0)


def release_rooms(hotel: Hotel, r: HotelReservation) -> None:
    """Give a reservation's nights back to the (already edited) hotel record."""
    rt = hotel.rooms[r.room_type]
    for night in nights(date.fromisoformat(r.check_in), date.fromisoformat(r.check_out)):
        left = rt.booked.get(night, 0) - 1
        if left > 0:
            rt.booked[night] = left
        else:
            rt.booked.pop(night, None)


def release_seats(s: TravelState, b: FlightBooking) -> None:
    """Put a booking's seats back into its fare bucket (call before changing its status)."""
    flight = s.flights.edit(b.flight_id)
    flight.fares[b.fare_class].seats_left += len(b.passengers)


def require_status(b: FlightBooking, allowed: tuple[str, ...], doing: str) -> None:
    if b.status in allowed:
        return
    hints = {
        "held": "confirm it with confirm_flight_booking first",
        "expired": f"the hold lapsed at {b.hold_expires_at}; hold the fare again",
        "cancelled": "it was cancelled",
        "completed": "the trip is already flown",
        "no_show": "the flight left without the passengers (no-show)",
        "checked_in": "the passengers are already checked in",
        "ticketed": "it is already ticketed",
    }
    raise ToolError(f"cannot {doing}: booking {b.booking_id} is {b.status} ({hints.get(b.status, '')})",
                    field="booking_id", code="illegal_state")


# ---------------------------------------------------------------- the clock
def on_time(s: TravelState, before: datetime, after: datetime) -> None:
    """Holds lapse, flights leave (unchecked ticketed passengers become no-shows) and land (checked-in
    bookings complete); hotel stays begin at 15:00 on the check-in day and end at 11:00 on check-out."""
    for key in list(s.flight_bookings.keys()):
        b = s.flight_bookings[key]
        if b.status == "held" and b.hold_expires_at and dt(b.hold_expires_at) <= after:
            release_seats(s, b)
            e = s.flight_bookings.edit(key)
            e.status = "expired"
            e.history.append(f"{b.hold_expires_at} hold expired")
        elif b.status in ("ticketed", "checked_in"):
            flight = s.flights[b.flight_id]
            if b.status == "ticketed" and dt(flight.depart_at) <= after:
                e = s.flight_bookings.edit(key)
                e.status = "no_show"
                e.history.append(f"{flight.depart_at} departed without check-in (no-show)")
            elif b.status == "checked_in" and dt(flight.arrive_at) <= after:
                e = s.flight_bookings.edit(key)
                e.status = "completed"
                e.history.append(f"{flight.arrive_at} flight arrived")
    for key in list(s.hotel_reservations.keys()):
        r = s.hotel_reservations[key]
        if r.status == "confirmed" and hotel_check_in_at(r.check_in) <= after:
            r = s.hotel_reservations.edit(key)
            r.status = "in_stay"
        if r.status == "in_stay" and hotel_check_out_at(r.check_out) <= after:
            s.hotel_reservations.edit(key).status = "completed"


# ---------------------------------------------------------------- views
def rule_view(fare_class: str) -> dict:
    r = FARE_RULES[fare_class]
    return {"cabin": r.cabin, "refundable": r.refundable, "on_cancel": r.cancel_value,
            "cancel_fee_per_passenger": r.cancel_fee, "changeable": r.changeable,
            "change_fee_per_passenger": r.change_fee, "seat_selection": r.seat_selection,
            "checked_bags": r.checked_bags}


def flight_view(s: TravelState, f: Flight, *, passengers: int = 1, rules: bool = False) -> dict:
    at = now(s)
    fares = {}
    for cls, fare in f.fares.items():
        row = {"price": money(fare.price), "seats_left": fare.seats_left,
               "available": fare.seats_left >= passengers}
        if rules:
            row["rules"] = rule_view(cls)
        fares[cls] = row
    return {
        "flight_id": f.flight_id, "flight_number": f.flight_number, "airline": AIRLINES[f.airline_code],
        "origin": f.origin, "origin_city": AIRPORTS[f.origin], "destination": f.destination,
        "destination_city": AIRPORTS[f.destination], "depart_at": f.depart_at, "arrive_at": f.arrive_at,
        "duration_minutes": f.duration_minutes, "aircraft": f.aircraft, "international": is_international(f),
        "status": flight_status(f, at), "fares": fares,
    }


def booking_view(s: TravelState, b: FlightBooking) -> dict:
    f = s.flights[b.flight_id]
    depart = dt(f.depart_at)
    return {
        "booking_id": b.booking_id, "itinerary_id": b.itinerary_id, "status": b.status,
        "flight": {k: v for k, v in flight_view(s, f).items() if k != "fares"},
        "fare_class": b.fare_class, "fare_rules": rule_view(b.fare_class),
        "passengers": [{"traveller_id": p.traveller_id, "name": full_name(s.travellers[p.traveller_id]),
                        "seat": p.seat, "ticket_number": p.ticket_number, "checked_in": p.checked_in}
                       for p in b.passengers],
        "fare_total": money(b.fare_total), "amount_paid": money(b.amount_paid), "fees_charged": money(b.fees_charged),
        "travel_credit_applied": money(b.credit_applied), "refunded": money(b.refunded),
        "travel_credit_issued": money(b.credit_issued),
        "payment_card_id": b.card_id, "hold_expires_at": b.hold_expires_at if b.status == "held" else None,
        "check_in_opens_at": iso(depart - CHECK_IN_OPENS), "check_in_closes_at": iso(depart - CHECK_IN_CLOSES),
        "created_at": b.created_at, "history": list(b.history),
    }


def reservation_view(s: TravelState, r: HotelReservation) -> dict:
    h = s.hotels[r.hotel_id]
    free_until = hotel_check_in_at(r.check_in) - FREE_HOTEL_CANCEL
    return {
        "reservation_id": r.reservation_id, "itinerary_id": r.itinerary_id, "status": r.status,
        "hotel_id": h.hotel_id, "hotel_name": h.name, "city": h.city, "address": h.address,
        "room_type": r.room_type, "guests": r.guests, "traveller_id": r.traveller_id,
        "guest_name": full_name(s.travellers[r.traveller_id]), "check_in": r.check_in, "check_out": r.check_out,
        "nights": (date.fromisoformat(r.check_out) - date.fromisoformat(r.check_in)).days,
        "nightly_rate": money(r.nightly_rate), "total_price": money(r.total_price), "payment_card_id": r.card_id,
        "free_cancellation_until": iso(free_until), "cancellation_fee": money(r.cancellation_fee),
        "created_at": r.created_at,
    }


def itinerary_status(s: TravelState, it: Itinerary) -> str:
    flights = [s.flight_bookings[b].status for b in it.flight_booking_ids]
    stays = [s.hotel_reservations[r].status for r in it.hotel_reservation_ids]
    active = [x for x in flights + stays if x in ("held", "ticketed", "checked_in", "confirmed", "in_stay")]
    done = [x for x in flights + stays if x in ("completed", "no_show")]
    if any(x in ("checked_in", "in_stay") for x in active) or (active and done):
        return "in_progress"
    if active:
        return "booked"
    if done:
        return "completed"
    return "planning"


def itinerary_summary(s: TravelState, it: Itinerary) -> dict:
    lead = s.travellers[it.lead_traveller_id]
    starts: list[str] = []
    cost = 0.0
    for bid in it.flight_booking_ids:
        b = s.flight_bookings[bid]
        if b.status in ("held", "ticketed", "checked_in", "completed"):
            starts.append(s.flights[b.flight_id].depart_at)
        cost += b.amount_paid + b.credit_applied - b.refunded - b.credit_issued
    for rid in it.hotel_reservation_ids:
        r = s.hotel_reservations[rid]
        if r.status != "cancelled":
            starts.append(iso(hotel_check_in_at(r.check_in)))
            cost += r.total_price
        cost += r.cancellation_fee
    return {
        "itinerary_id": it.itinerary_id, "name": it.name, "lead_traveller_id": it.lead_traveller_id,
        "lead_traveller_name": full_name(lead), "status": itinerary_status(s, it),
        "starts_at": min(starts) if starts else None, "flight_bookings": len(it.flight_booking_ids),
        "hotel_reservations": len(it.hotel_reservation_ids), "total_cost": money(cost),
    }
