"""Flight tools: search, seat maps, holds, ticketing, seats, check-in, changes and cancellations."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Literal

from pydantic import Field

from servers.kit import IsoDate, Money, Name, Sensitive, ToolError, iso, new_id, now, tool
from servers.travel_booking.rules import (
    BOOKING_CLOSES,
    CABIN_SEATS,
    CHECK_IN_CLOSES,
    CHECK_IN_OPENS,
    FARE_RULES,
    HOLD_MINUTES,
    TICKET_PREFIX,
    booking_view,
    cabin_seats,
    dt,
    flight_view,
    is_international,
    money,
    release_seats,
    require_status,
    seat_kind,
    taken_seats,
)
from servers.travel_booking.state import (
    ACTIVE_FLIGHT_STATUSES,
    AIRPORTS,
    FlightBooking,
    Itinerary,
    Passenger,
    TravelState,
    card_for,
    full_name,
    future_date,
    get_booking,
    get_flight,
    get_itinerary,
    get_traveller,
    resolve_airport,
)

FareClass = Literal["basic_economy", "economy", "premium_economy", "business"]
Cabin = Literal["economy", "premium", "business"]
Passengers = Annotated[int, Field(ge=1, le=9)]
SeatCode = Annotated[str, Field(pattern=r"^[0-9]{1,2}[A-Fa-f]$")]
SecurityCode = Annotated[Sensitive, Field(pattern=r"^[0-9]{3,4}$")]
TravellerIds = Annotated[list[str], Field(min_length=1, max_length=9)]


@tool(produces=("flight_id",), read_only=True)
def search_flights(s: TravelState, origin: str, destination: str, departure_date: IsoDate,
                   passengers: Passengers = 1, fare_class: FareClass | None = None, max_price: Money | None = None,
                   sort_by: Literal["departure", "price", "duration"] = "departure") -> list:
    """Find scheduled flights between two airports on one day (UTC), with each fare class's price per
    passenger and seats left. The date must be today or later; flights that already left that day are
    listed with their status but cannot be booked.

    Args:
        origin: Departure airport code (e.g. BOS) or city name.
        destination: Arrival airport code or city name.
        departure_date: Day of departure, YYYY-MM-DD.
        passengers: How many seats are needed; fares with fewer seats left show as unavailable.
        fare_class: Only flights where this fare class has enough seats.
        max_price: Only flights whose price per passenger (in the chosen fare class, else the cheapest
            available one) is at most this many USD.
        sort_by: Order of results: departure time, price or flight duration.
    """
    o, d = resolve_airport(origin, "origin"), resolve_airport(destination, "destination")
    if o == d:
        raise ToolError("origin and destination are the same airport", field="destination")
    day = future_date(s, departure_date, "departure_date").isoformat()
    at = now(s)
    rows = []
    for f in s.flights.values():
        if f.origin != o or f.destination != d or not f.depart_at.startswith(day):
            continue
        view = flight_view(s, f, passengers=passengers)
        bookable = at < dt(f.depart_at) - BOOKING_CLOSES
        open_fares = [(c, x["price"]) for c, x in view["fares"].items() if x["available"]]
        if fare_class is not None:
            open_fares = [(c, p) for c, p in open_fares if c == fare_class]
            if not open_fares:
                continue
        cheapest = min(open_fares, key=lambda cp: cp[1]) if open_fares else None
        if max_price is not None and (cheapest is None or cheapest[1] > max_price):
            continue
        view["bookable"] = bookable
        view["cheapest_available"] = {"fare_class": cheapest[0], "price": cheapest[1]} if cheapest else None
        rows.append(view)
    keys = {"departure": lambda r: r["depart_at"], "duration": lambda r: (r["duration_minutes"], r["depart_at"]),
            "price": lambda r: (r["cheapest_available"]["price"] if r["cheapest_available"] else 1e12, r["depart_at"])}
    return sorted(rows, key=keys[sort_by])


@tool(consumes=("flight_id",), read_only=True)
def get_flight_details(s: TravelState, flight_id: str) -> dict:
    """One flight's schedule, status, aircraft, and every fare class with its price, seats left and
    fare rules (refunds, change fees, seat selection, bags).

    Args:
        flight_id: The flight, as returned by search_flights.
    """
    f = get_flight(s, flight_id)
    view = flight_view(s, f, rules=True)
    view["bookable"] = now(s) < dt(f.depart_at) - BOOKING_CLOSES
    view["check_in_opens_at"] = iso(dt(f.depart_at) - CHECK_IN_OPENS)
    return view


@tool(consumes=("flight_id",), produces=("seat",), read_only=True)
def get_flight_seat_map(s: TravelState, flight_id: str, cabin: Cabin = "economy") -> dict:
    """The free seats of one cabin on a flight (with window/aisle/middle position) and how many are taken.

    Args:
        flight_id: The flight.
        cabin: Which cabin: economy (basic economy and economy fares), premium (premium economy) or business.
    """
    f = get_flight(s, flight_id)
    taken = taken_seats(s, f)
    seats = cabin_seats(cabin)
    rows, letters = CABIN_SEATS[cabin]
    free = [{"seat": x, "position": seat_kind(x, cabin)} for x in seats if x not in taken]
    return {"flight_id": f.flight_id, "flight_number": f.flight_number, "cabin": cabin,
            "rows": f"{rows.start}-{rows.stop - 1}", "seat_letters": letters, "free_seats": free,
            "free_count": len(free), "taken_count": len(seats) - len(free)}


@tool(consumes=("flight_id", "traveller_id", "itinerary_id"), produces=("booking_id", "itinerary_id"),
      establishes=("booking_held",))
def hold_flight_fare(s: TravelState, flight_id: str, fare_class: FareClass, traveller_ids: TravellerIds,
                     itinerary_id: str | None = None) -> dict:
    """Hold seats in one fare class on a flight for one or more travellers, for 30 minutes at the current
    price; nothing is charged until the hold is confirmed with confirm_flight_booking. International
    flights need every traveller's passport to be valid on the travel date. Without an itinerary a new
    one is created for the trip.

    Args:
        flight_id: The flight to hold.
        fare_class: Fare class to hold seats in.
        traveller_ids: The travellers flying (traveller ids from find_traveller_profiles), lead traveller first.
        itinerary_id: Existing trip itinerary to add the booking to.
    """
    f = get_flight(s, flight_id)
    at = now(s)
    depart = dt(f.depart_at)
    if at >= depart:
        raise ToolError(f"flight {f.flight_number} already departed at {f.depart_at}; pick a later flight",
                        field="flight_id", code="departed")
    if at >= depart - BOOKING_CLOSES:
        raise ToolError(f"flight {f.flight_number} departs at {f.depart_at}; booking closes 60 minutes before "
                        "departure", field="flight_id", code="too_late")
    if len(set(traveller_ids)) != len(traveller_ids):
        raise ToolError("a traveller is listed twice", field="traveller_ids")
    people = [get_traveller(s, t, "traveller_ids") for t in traveller_ids]
    for b in s.flight_bookings.values():
        if b.flight_id == f.flight_id and b.status in ACTIVE_FLIGHT_STATUSES:
            dup = [p.traveller_id for p in b.passengers if p.traveller_id in traveller_ids]
            if dup:
                raise ToolError(f"{full_name(s.travellers[dup[0]])} is already booked on this flight "
                                f"(booking {b.booking_id})", field="traveller_ids", code="duplicate")
    if is_international(f):
        arrival = f.arrive_at[:10]
        for t in people:
            if t.passport_expiry < arrival:
                raise ToolError(
                    f"passport of {full_name(t)} expires {t.passport_expiry}, before this international trip on "
                    f"{f.depart_at[:10]}; record a valid passport with update_traveller_profile first",
                    field="traveller_ids", code="passport_invalid")
    fare = f.fares[fare_class]
    if fare.seats_left < len(people):
        what = "is sold out" if fare.seats_left == 0 else f"has only {fare.seats_left} seat(s) left"
        raise ToolError(f"{fare_class} {what} on flight {f.flight_number} ({f.depart_at}); pick another fare "
                        "class or flight", field="fare_class", code="sold_out")
    if itinerary_id is not None:
        it = s.itineraries.edit(get_itinerary(s, itinerary_id).itinerary_id)
    else:
        iid = new_id(s.counters, "ITN")
        it = s.itineraries.put(iid, Itinerary(iid, f"Trip to {AIRPORTS[f.destination]}", people[0].traveller_id,
                                              "", iso(at)))
    s.flights.edit(f.flight_id).fares[fare_class].seats_left -= len(people)
    bid = new_id(s.counters, "FBK")
    expires = min(at + timedelta(minutes=HOLD_MINUTES), depart - BOOKING_CLOSES)
    b = s.flight_bookings.put(bid, FlightBooking(
        bid, it.itinerary_id, f.flight_id, fare_class, [Passenger(t.traveller_id) for t in people], "held", iso(at),
        iso(expires), money(fare.price * len(people)), history=[f"{iso(at)} fare held"]))
    it.flight_booking_ids.append(bid)
    return booking_view(s, b)


@tool(consumes=("booking_id", "payment_card_id"), requires=("booking_held",), establishes=("booking_ticketed",))
def confirm_flight_booking(s: TravelState, booking_id: str, payment_card_id: str, card_security_code: SecurityCode,
                           use_travel_credit: bool = False) -> dict:
    """Pay for a held flight booking and issue the e-tickets. Only works while the hold is still valid;
    the card must belong to one of the booking's travellers and not be expired.

    Args:
        booking_id: The held booking.
        payment_card_id: Card on file to charge (see find_traveller_profiles).
        card_security_code: The 3- or 4-digit security code printed on that card.
        use_travel_credit: Spend the lead traveller's travel credit first and charge only the rest.
    """
    b = get_booking(s, booking_id)
    require_status(b, ("held",), "confirm")
    owners = [p.traveller_id for p in b.passengers]
    card = card_for(s, payment_card_id, owners, now(s))
    if card_security_code != card.security_code:
        raise ToolError(f"card_security_code does not match card {card.card_id} ({card.brand} ending {card.last4})",
                        field="card_security_code", code="wrong_security_code")
    b = s.flight_bookings.edit(booking_id)
    credit = 0.0
    if use_travel_credit:
        lead = s.travellers.edit(b.passengers[0].traveller_id)
        credit = min(lead.travel_credit, b.fare_total)
        if credit <= 0:
            raise ToolError(f"{full_name(lead)} has no travel credit; confirm without use_travel_credit",
                            field="use_travel_credit", code="no_credit")
        lead.travel_credit = money(lead.travel_credit - credit)
    f = s.flights[b.flight_id]
    for p in b.passengers:
        p.ticket_number = f"{TICKET_PREFIX[f.airline_code]}{new_id(s.counters, 'TKT', 10)[4:]}"
    b.status, b.card_id, b.hold_expires_at = "ticketed", card.card_id, None
    b.credit_applied = money(credit)
    b.amount_paid = money(b.fare_total - credit)
    b.history.append(f"{iso(now(s))} paid {b.amount_paid:.2f} (credit {credit:.2f}) and ticketed")
    return booking_view(s, b)


@tool(consumes=("booking_id",), read_only=True)
def get_flight_booking(s: TravelState, booking_id: str) -> dict:
    """A flight booking: status (held, ticketed, checked_in, completed, no_show, cancelled, expired), the
    flight, passengers with seats and ticket numbers, payments, fare rules and the check-in window.

    Args:
        booking_id: The booking (e.g. FBK-0003).
    """
    return booking_view(s, get_booking(s, booking_id))


@tool(consumes=("booking_id", "traveller_id", "seat"), requires=("booking_held",))
def select_flight_seat(s: TravelState, booking_id: str, traveller_id: str, seat: SeatCode) -> dict:
    """Pick or change one passenger's seat on a held, ticketed or checked-in booking, in the cabin of its
    fare. Not included in basic economy (seats are given at check-in); closes 45 minutes before departure.

    Args:
        booking_id: The booking.
        traveller_id: The passenger getting the seat.
        seat: Seat such as 14C (row number and letter), free on get_flight_seat_map.
    """
    b = get_booking(s, booking_id)
    require_status(b, ("held", "ticketed", "checked_in"), "select a seat")
    rule = FARE_RULES[b.fare_class]
    if not rule.seat_selection:
        raise ToolError("basic_economy fares do not include seat selection; a seat is assigned at check-in",
                        field="booking_id", code="not_allowed")
    f = s.flights[b.flight_id]
    if now(s) >= dt(f.depart_at) - CHECK_IN_CLOSES:
        raise ToolError(f"seat changes closed 45 minutes before the {f.depart_at} departure", field="booking_id",
                        code="too_late")
    idx = next((i for i, p in enumerate(b.passengers) if p.traveller_id == traveller_id), None)
    if idx is None:
        raise ToolError(f"traveller {traveller_id} is not a passenger on booking {b.booking_id}",
                        field="traveller_id", code="not_found")
    seat = seat.upper()
    if seat not in cabin_seats(rule.cabin):
        rows, letters = CABIN_SEATS[rule.cabin]
        raise ToolError(f"seat {seat} is not in the {rule.cabin} cabin of this fare (rows {rows.start}-"
                        f"{rows.stop - 1}, seats {letters})", field="seat")
    if b.passengers[idx].seat == seat:
        raise ToolError(f"{seat} is already this passenger's seat", field="seat")
    if seat in taken_seats(s, f):
        raise ToolError(f"seat {seat} is already taken; pick a free seat from get_flight_seat_map", field="seat",
                        code="seat_taken")
    b = s.flight_bookings.edit(booking_id)
    b.passengers[idx].seat = seat
    b.history.append(f"{iso(now(s))} seat {seat} for {traveller_id}")
    return booking_view(s, b)


@tool(consumes=("booking_id",), requires=("booking_ticketed",), establishes=("checked_in",))
def check_in_flight_booking(s: TravelState, booking_id: str, last_name: Name) -> dict:
    """Check in every passenger of a ticketed booking and get boarding passes; passengers without a seat
    get one. Online check-in opens 24 hours before departure and closes 45 minutes before it; the last
    name must be that of a passenger on the booking.

    Args:
        booking_id: The booking (confirmation) number.
        last_name: Last name of one passenger, as on the passport.
    """
    b = get_booking(s, booking_id)
    require_status(b, ("ticketed",), "check in")
    names = [s.travellers[p.traveller_id].last_name for p in b.passengers]
    if last_name.strip().lower() not in [n.lower() for n in names]:
        raise ToolError(f"passenger name mismatch: no passenger on booking {b.booking_id} has the last name "
                        f"'{last_name}'", field="last_name", code="name_mismatch")
    f = s.flights[b.flight_id]
    at, depart = now(s), dt(f.depart_at)
    if at < depart - CHECK_IN_OPENS:
        raise ToolError(f"too early: check-in opens at {iso(depart - CHECK_IN_OPENS)}, 24 hours before the "
                        f"{f.depart_at} departure (now {iso(at)})", field="booking_id", code="check_in_not_open")
    if at >= depart - CHECK_IN_CLOSES:
        raise ToolError(f"check-in closed at {iso(depart - CHECK_IN_CLOSES)}, 45 minutes before departure",
                        field="booking_id", code="check_in_closed")
    b = s.flight_bookings.edit(booking_id)
    taken = taken_seats(s, f)
    free = [x for x in reversed(cabin_seats(FARE_RULES[b.fare_class].cabin)) if x not in taken]
    passes = []
    gate = f"{'ABCDE'[int(f.flight_number.split()[1]) % 5]}{int(f.flight_number.split()[1]) % 30 + 1}"
    for n, p in enumerate(b.passengers):
        if p.seat is None:
            p.seat = free.pop(0)
        p.checked_in = True
        t = s.travellers[p.traveller_id]
        passes.append({"passenger": full_name(t), "seat": p.seat, "ticket_number": p.ticket_number,
                       "flight_number": f.flight_number, "gate": gate, "boarding_group": 1 + n % 3 + (
                           0 if b.fare_class == "business" else 2),
                       "boarding_at": iso(depart - timedelta(minutes=40))})
    b.status = "checked_in"
    b.history.append(f"{iso(at)} checked in")
    return {**booking_view(s, b), "boarding_passes": passes}


@tool(consumes=("booking_id", "flight_id"), requires=("booking_ticketed",))
def change_flight_booking(s: TravelState, booking_id: str, new_flight_id: str,
                          fare_class: FareClass | None = None) -> dict:
    """Move a ticketed booking to another flight on the same route, before departure and before check-in.
    The fare's change fee per passenger plus any fare increase is charged to the booking's card; a
    cheaper new fare is refunded (refundable fares) or returned as travel credit. Basic economy cannot be
    changed.

    Args:
        booking_id: The ticketed booking.
        new_flight_id: The flight to move to (same origin and destination).
        fare_class: Fare class on the new flight; defaults to the current one.
    """
    b = get_booking(s, booking_id)
    require_status(b, ("ticketed",), "change")
    old, at = s.flights[b.flight_id], now(s)  # ticketed implies not yet departed (see rules.on_time)
    rule = FARE_RULES[b.fare_class]
    if not rule.changeable:
        raise ToolError("basic_economy fares cannot be changed; cancel and book again instead", field="booking_id",
                        code="not_changeable")
    new = get_flight(s, new_flight_id, "new_flight_id")
    cls = fare_class or b.fare_class
    if new.flight_id == old.flight_id and cls == b.fare_class:
        raise ToolError("the booking is already on this flight in this fare class", field="new_flight_id")
    if (new.origin, new.destination) != (old.origin, old.destination):
        raise ToolError(f"flight {new.flight_number} flies {new.origin}-{new.destination}, a different route from "
                        f"{old.origin}-{old.destination}; changes must keep the route", field="new_flight_id")
    if at >= dt(new.depart_at) - BOOKING_CLOSES:
        raise ToolError(f"flight {new.flight_number} departs at {new.depart_at} and can no longer be booked",
                        field="new_flight_id", code="too_late")
    if cls == "basic_economy":
        raise ToolError("a booking cannot be changed into basic_economy", field="fare_class")
    n = len(b.passengers)
    if new.fares[cls].seats_left < n:
        raise ToolError(f"{cls} is sold out on flight {new.flight_number} for {n} passenger(s)", field="fare_class",
                        code="sold_out")
    fee = money(rule.change_fee * n)
    new_total = money(new.fares[cls].price * n)
    diff = money(new_total - b.fare_total)
    release_seats(s, b)
    s.flights.edit(new.flight_id).fares[cls].seats_left -= n
    b = s.flight_bookings.edit(booking_id)
    charged = money(fee + max(diff, 0.0))
    refund = credit = 0.0
    if diff < 0:
        if FARE_RULES[b.fare_class].refundable:
            refund = -diff
        else:
            credit = -diff
            lead = s.travellers.edit(b.passengers[0].traveller_id)
            lead.travel_credit = money(lead.travel_credit + credit)
    for p in b.passengers:
        p.seat = None
    b.flight_id, b.fare_class, b.fare_total = new.flight_id, cls, new_total
    b.amount_paid = money(b.amount_paid + charged)
    b.fees_charged = money(b.fees_charged + fee)
    b.refunded = money(b.refunded + refund)
    b.credit_issued = money(b.credit_issued + credit)
    b.history.append(f"{iso(at)} changed to {new.flight_number} {new.depart_at} ({cls}); charged {charged:.2f}")
    return {**booking_view(s, b), "change": {"change_fee": fee, "fare_difference": diff, "charged": charged,
                                             "refunded": money(refund), "travel_credit": money(credit)}}


@tool(consumes=("booking_id",), requires=("booking_held",))
def cancel_flight_booking(s: TravelState, booking_id: str) -> dict:
    """Cancel a flight booking before departure and release its seats. A held fare is simply released.
    A ticketed one follows its fare rules: refundable fares go back to the card minus the cancellation
    fee, economy becomes travel credit minus the fee, basic economy returns nothing.

    Args:
        booking_id: The booking to cancel.
    """
    b = get_booking(s, booking_id)
    require_status(b, ("held", "ticketed", "checked_in"), "cancel")
    f, at = s.flights[b.flight_id], now(s)
    if at >= dt(f.depart_at):
        raise ToolError(f"flight {f.flight_number} departed at {f.depart_at}; a booking cannot be cancelled after "
                        "departure", field="booking_id", code="after_departure")
    release_seats(s, b)
    b = s.flight_bookings.edit(booking_id)
    refund = credit = fee = 0.0
    if b.status != "held":
        rule = FARE_RULES[b.fare_class]
        fee = min(rule.cancel_fee * len(b.passengers), b.amount_paid + b.credit_applied)
        if rule.cancel_value == "refund":
            refund = max(0.0, b.amount_paid - fee)
            credit = b.credit_applied - max(0.0, fee - b.amount_paid)
        elif rule.cancel_value == "credit":
            credit = b.amount_paid + b.credit_applied - fee
        else:
            fee = b.amount_paid + b.credit_applied  # basic economy: the whole fare is kept
        if credit > 0:
            lead = s.travellers.edit(b.passengers[0].traveller_id)
            lead.travel_credit = money(lead.travel_credit + credit)
    for p in b.passengers:
        p.seat, p.checked_in = None, False
    b.status = "cancelled"
    b.refunded, b.credit_issued = money(b.refunded + refund), money(b.credit_issued + credit)
    b.fees_charged = money(b.fees_charged + fee)
    b.history.append(f"{iso(at)} cancelled; refunded {refund:.2f}, travel credit {credit:.2f}")
    return {**booking_view(s, b), "cancellation": {"fee": money(fee), "refunded": money(refund),
                                                   "travel_credit": money(credit)}}

