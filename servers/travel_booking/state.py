"""Travel booking records, the session state, and the lookups every tool shares.

All times are UTC ISO-8601 text; dates are ``YYYY-MM-DD``. Flight seat inventory lives on the flight
(``fares[fare_class].seats_left``); seat numbers taken by other travellers are the flight's
``blocked_seats`` plus the seats assigned on its active bookings (see :func:`taken_seats`). Hotel
inventory is the room type's ``total_rooms`` minus ``booked[date]`` for each night.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

from servers.kit import Cell, Counters, State, Table, ToolError, parse_date, require, today
from servers.kit.geo import CITIES

AIRPORTS: dict[str, str] = {c.airport: c.name for c in CITIES}
"""IATA code -> city name (the kit's shared city list)."""
COUNTRY_OF_AIRPORT: dict[str, str] = {c.airport: c.country for c in CITIES}
COUNTRY_OF_CITY: dict[str, str] = {c.name: c.country for c in CITIES}

ACTIVE_FLIGHT_STATUSES = ("held", "ticketed", "checked_in")
"""Bookings that occupy seats on their flight."""


@dataclass
class Fare:
    price: float  # per passenger, USD
    seats_left: int


@dataclass
class Flight:
    flight_id: str
    flight_number: str
    airline_code: str
    origin: str  # IATA
    destination: str
    depart_at: str  # UTC ISO
    arrive_at: str
    duration_minutes: int
    aircraft: str
    fares: dict[str, Fare]
    blocked_seats: list[str]  # seats sold to travellers outside this world


@dataclass
class PaymentCard:
    card_id: str
    traveller_id: str
    brand: str
    last4: str
    expiry: str  # YYYY-MM (valid through the end of that month)
    security_code: str  # what the cardholder reads off the back


@dataclass
class Traveller:
    traveller_id: str
    first_name: str
    last_name: str
    email: str
    phone: str
    date_of_birth: str
    nationality: str  # ISO country code
    passport_number: str
    passport_expiry: str  # YYYY-MM-DD
    loyalty_numbers: dict[str, str]  # airline code -> member number
    travel_credit: float  # USD, from cancelled non-refundable fares


@dataclass
class Passenger:
    traveller_id: str
    seat: str | None = None
    ticket_number: str | None = None
    checked_in: bool = False


@dataclass
class FlightBooking:
    booking_id: str
    itinerary_id: str
    flight_id: str
    fare_class: str
    passengers: list[Passenger]
    status: str  # held | ticketed | checked_in | completed | no_show | cancelled | expired
    created_at: str
    hold_expires_at: str | None
    fare_total: float  # what the fare costs for all passengers at the time of holding
    amount_paid: float = 0.0  # charged to the card (fare, change fees, fare differences)
    credit_applied: float = 0.0  # travel credit spent on this booking
    card_id: str | None = None
    refunded: float = 0.0
    credit_issued: float = 0.0
    fees_charged: float = 0.0
    history: list[str] = field(default_factory=list)


@dataclass
class RoomType:
    name: str  # standard | deluxe | suite | family
    capacity: int
    nightly_rate: float
    total_rooms: int
    booked: dict[str, int]  # date (night of) -> rooms taken


@dataclass
class Hotel:
    hotel_id: str
    name: str
    city: str
    address: str
    stars: int
    guest_rating: float
    amenities: list[str]
    rooms: dict[str, RoomType]


@dataclass
class HotelReservation:
    reservation_id: str
    itinerary_id: str
    hotel_id: str
    room_type: str
    traveller_id: str
    guests: int
    check_in: str  # date
    check_out: str
    nightly_rate: float
    total_price: float
    card_id: str
    status: str  # confirmed | in_stay | completed | cancelled
    created_at: str
    cancellation_fee: float = 0.0


@dataclass
class Itinerary:
    itinerary_id: str
    name: str
    lead_traveller_id: str
    notes: str
    created_at: str
    flight_booking_ids: list[str] = field(default_factory=list)
    hotel_reservation_ids: list[str] = field(default_factory=list)


class TravelState(State):
    travellers: Table[Traveller]
    cards: Table[PaymentCard]
    flights: Table[Flight]
    hotels: Table[Hotel]
    itineraries: Table[Itinerary]
    flight_bookings: Table[FlightBooking]
    hotel_reservations: Table[HotelReservation]
    counters: Cell[Counters]


# ---------------------------------------------------------------- lookups
def get_traveller(s: TravelState, traveller_id: str, field: str = "traveller_id") -> Traveller:
    return require(s.travellers, traveller_id, field)


def get_flight(s: TravelState, flight_id: str, field: str = "flight_id") -> Flight:
    return require(s.flights, flight_id, field)


def get_hotel(s: TravelState, hotel_id: str) -> Hotel:
    return require(s.hotels, hotel_id, "hotel_id")


def get_itinerary(s: TravelState, itinerary_id: str) -> Itinerary:
    return require(s.itineraries, itinerary_id, "itinerary_id")


def get_booking(s: TravelState, booking_id: str) -> FlightBooking:
    return require(s.flight_bookings, booking_id, "booking_id")


def get_reservation(s: TravelState, reservation_id: str) -> HotelReservation:
    return require(s.hotel_reservations, reservation_id, "reservation_id")


def full_name(t: Traveller) -> str:
    return f"{t.first_name} {t.last_name}"


def resolve_airport(code_or_city: str, field: str) -> str:
    """An IATA code from a code or a city name (case-insensitive)."""
    text = code_or_city.strip()
    if text.upper() in AIRPORTS:
        return text.upper()
    for code, city in AIRPORTS.items():
        if city.lower() == text.lower():
            return code
    known = ", ".join(f"{c} ({n})" for c, n in AIRPORTS.items())
    raise ToolError(f"unknown airport or city '{code_or_city}'; served airports: {known}", field=field,
                    code="not_found")


def resolve_city(name: str) -> str:
    for city in COUNTRY_OF_CITY:
        if city.lower() == name.strip().lower():
            return city
    code = name.strip().upper()
    if code in AIRPORTS:
        return AIRPORTS[code]
    raise ToolError(f"no hotels in '{name}'; cities with hotels: {', '.join(COUNTRY_OF_CITY)}", field="city",
                    code="not_found")


def future_date(s: TravelState, text: str, field: str, *, max_days: int = 330) -> date:
    """A date that is today or later (and not absurdly far ahead), or a ToolError naming ``field``."""
    d = parse_date(text, field)
    now = today(s)
    if d < now:
        raise ToolError(f"{field} {text} is in the past (today is {now.isoformat()}); pick a date from today on",
                        field=field, code="date_in_past")
    if (d - now).days > max_days:
        raise ToolError(f"{field} {text} is more than {max_days} days ahead; bookings open {max_days} days out",
                        field=field)
    return d


def stay_dates(s: TravelState, check_in: str, check_out: str) -> tuple[date, date]:
    """Validated (check_in, check_out): check-in today or later, check-out after it, at most 30 nights."""
    d_in = future_date(s, check_in, "check_in")
    d_out = parse_date(check_out, "check_out")
    if d_out <= d_in:
        raise ToolError(f"check_out {check_out} must be after check_in {check_in} (at least one night)",
                        field="check_out", code="check_out_before_check_in")
    if (d_out - d_in).days > 30:
        raise ToolError("a stay can be at most 30 nights; split longer stays into several reservations",
                        field="check_out")
    return d_in, d_out


def card_for(s: TravelState, card_id: str, owners: list[str], when: datetime) -> PaymentCard:
    """A card on file that belongs to one of ``owners`` and has not expired by ``when``."""
    card = require(s.cards, card_id, "payment_card_id")
    if card.traveller_id not in owners:
        holder = s.travellers[card.traveller_id]
        raise ToolError(
            f"card {card_id} belongs to {full_name(holder)}, who is not a traveller on this booking; "
            "use a card of one of the travellers", field="payment_card_id", code="not_owner")
    if card.expiry < f"{when.year:04d}-{when.month:02d}":
        raise ToolError(f"card {card_id} ({card.brand} ending {card.last4}) expired {card.expiry}; use another card",
                        field="payment_card_id", code="card_expired")
    return card
