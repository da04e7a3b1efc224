"""Hotel tools: search by city and dates, room availability, booking, changes and cancellation."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from pydantic import Field

from servers.kit import IsoDate, Money, ToolError, iso, new_id, now, tool
from servers.travel_booking.rules import (
    FREE_HOTEL_CANCEL,
    hotel_check_in_at,
    money,
    nights,
    release_rooms,
    reservation_view,
    rooms_left,
)
from servers.travel_booking.state import (
    Hotel,
    HotelReservation,
    Itinerary,
    TravelState,
    card_for,
    get_hotel,
    get_itinerary,
    get_reservation,
    get_traveller,
    resolve_city,
    stay_dates,
)

RoomTypeName = Literal["standard", "deluxe", "suite", "family"]
Guests = Annotated[int, Field(ge=1, le=8)]


def _room_offer(hotel: Hotel, room: str, d_in: date, d_out: date, guests: int) -> dict:
    rt = hotel.rooms[room]
    stay = nights(d_in, d_out)
    left = min(rooms_left(hotel, room, n) for n in stay)
    sold_out = [n for n in stay if rooms_left(hotel, room, n) <= 0]
    return {"room_type": room, "capacity": rt.capacity, "nightly_rate": money(rt.nightly_rate),
            "total_price": money(rt.nightly_rate * len(stay)), "rooms_left": max(left, 0),
            "available": not sold_out and rt.capacity >= guests, "sold_out_nights": sold_out,
            "fits_guests": rt.capacity >= guests}


def _hotel_head(h: Hotel) -> dict:
    return {"hotel_id": h.hotel_id, "name": h.name, "city": h.city, "address": h.address, "stars": h.stars,
            "guest_rating": h.guest_rating, "amenities": list(h.amenities)}


@tool(produces=("hotel_id",), read_only=True)
def search_hotels(s: TravelState, city: str, check_in: IsoDate, check_out: IsoDate, guests: Guests = 1,
                  max_nightly_rate: Money | None = None, min_stars: Annotated[int, Field(ge=1, le=5)] | None = None,
                  sort_by: Literal["price", "rating", "stars"] = "price",
                  limit: Annotated[int, Field(ge=1, le=50)] = 20) -> list:
    """Hotels in a city with a room free for every night of the stay that fits the guests, with the
    cheapest such room and the stay's total. Check-in must be today or later and check-out after it.

    Args:
        city: City name (e.g. Chicago) or its airport code.
        check_in: Arrival date, YYYY-MM-DD.
        check_out: Departure date, YYYY-MM-DD (after check_in, at most 30 nights).
        guests: Number of guests sharing one room.
        max_nightly_rate: Only hotels whose cheapest fitting room costs at most this per night (USD).
        min_stars: Only hotels with at least this star rating.
        sort_by: Order: cheapest first, best guest rating first, or most stars first.
        limit: Maximum number of hotels.
    """
    name = resolve_city(city)
    d_in, d_out = stay_dates(s, check_in, check_out)
    rows = []
    for h in s.hotels.values():
        if h.city != name or (min_stars is not None and h.stars < min_stars):
            continue
        offers = [o for o in (_room_offer(h, r, d_in, d_out, guests) for r in h.rooms) if o["available"]]
        if not offers:
            continue
        best = min(offers, key=lambda o: o["nightly_rate"])
        if max_nightly_rate is not None and best["nightly_rate"] > max_nightly_rate:
            continue
        rows.append({**_hotel_head(h), "cheapest_room_type": best["room_type"],
                     "nightly_rate": best["nightly_rate"], "total_price": best["total_price"],
                     "available_room_types": [o["room_type"] for o in offers]})
    keys = {"price": lambda r: (r["nightly_rate"], r["hotel_id"]),
            "rating": lambda r: (-r["guest_rating"], r["hotel_id"]), "stars": lambda r: (-r["stars"], r["hotel_id"])}
    return sorted(rows, key=keys[sort_by])[:limit]


@tool(consumes=("hotel_id",), produces=("room_type",), read_only=True)
def get_hotel_room_availability(s: TravelState, hotel_id: str, check_in: IsoDate, check_out: IsoDate,
                                guests: Guests = 1) -> dict:
    """A hotel's details and, for each room type, capacity, nightly rate, rooms left over the stay, the
    nights it is sold out and the stay's total, plus the free-cancellation deadline.

    Args:
        hotel_id: The hotel.
        check_in: Arrival date, YYYY-MM-DD.
        check_out: Departure date, YYYY-MM-DD.
        guests: Number of guests sharing one room.
    """
    h = get_hotel(s, hotel_id)
    d_in, d_out = stay_dates(s, check_in, check_out)
    return {**_hotel_head(h), "check_in": d_in.isoformat(), "check_out": d_out.isoformat(),
            "nights": (d_out - d_in).days, "rooms": [_room_offer(h, r, d_in, d_out, guests) for r in h.rooms],
            "free_cancellation_until": iso(hotel_check_in_at(d_in.isoformat()) - FREE_HOTEL_CANCEL)}


def _check_room(h: Hotel, room_type: str, guests: int, d_in: date, d_out: date) -> None:
    if room_type not in h.rooms:
        raise ToolError(f"{h.name} has no {room_type} rooms; it offers: {', '.join(h.rooms)}", field="room_type",
                        code="not_found")
    rt = h.rooms[room_type]
    if guests > rt.capacity:
        raise ToolError(f"a {room_type} room sleeps at most {rt.capacity}; pick a larger room type", field="guests")
    full = [n for n in nights(d_in, d_out) if rooms_left(h, room_type, n) <= 0]
    if full:
        raise ToolError(f"room unavailable: {room_type} rooms at {h.name} are sold out on {', '.join(full)}; "
                        "try other dates or another room type", field="room_type", code="unavailable")


def _take_rooms(h: Hotel, room_type: str, d_in: date, d_out: date) -> None:
    rt = h.rooms[room_type]
    for n in nights(d_in, d_out):
        rt.booked[n] = rt.booked.get(n, 0) + 1
    rt.booked = dict(sorted(rt.booked.items()))


@tool(consumes=("hotel_id", "room_type", "traveller_id", "payment_card_id", "itinerary_id"),
      produces=("reservation_id", "itinerary_id"), establishes=("reservation_confirmed",))
def book_hotel_room(s: TravelState, hotel_id: str, room_type: RoomTypeName, check_in: IsoDate, check_out: IsoDate,
                    traveller_id: str, payment_card_id: str, guests: Guests = 1,
                    itinerary_id: str | None = None) -> dict:
    """Reserve one room for a stay, guaranteed with the guest's card (paid at the hotel). The room type
    must be free every night; check-in today or later, check-out after check-in. Free cancellation until
    48 hours before the 15:00 check-in. Without an itinerary a new one is created.

    Args:
        hotel_id: The hotel.
        room_type: Room type to book.
        check_in: Arrival date, YYYY-MM-DD.
        check_out: Departure date, YYYY-MM-DD.
        traveller_id: The guest the room is booked for.
        payment_card_id: The guest's card that guarantees the booking.
        guests: Number of guests in the room.
        itinerary_id: Existing trip itinerary to add the stay to.
    """
    h = get_hotel(s, hotel_id)
    d_in, d_out = stay_dates(s, check_in, check_out)
    guest = get_traveller(s, traveller_id)
    _check_room(h, room_type, guests, d_in, d_out)
    at = now(s)
    card = card_for(s, payment_card_id, [guest.traveller_id], at)
    if itinerary_id is not None:
        it = s.itineraries.edit(get_itinerary(s, itinerary_id).itinerary_id)
    else:
        iid = new_id(s.counters, "ITN")
        it = s.itineraries.put(iid, Itinerary(iid, f"Stay in {h.city}", guest.traveller_id, "", iso(at)))
    _take_rooms(s.hotels.edit(h.hotel_id), room_type, d_in, d_out)
    rate = h.rooms[room_type].nightly_rate
    rid = new_id(s.counters, "HRS")
    status = "in_stay" if at >= hotel_check_in_at(d_in.isoformat()) else "confirmed"
    r = s.hotel_reservations.put(rid, HotelReservation(
        rid, it.itinerary_id, h.hotel_id, room_type, guest.traveller_id, guests, d_in.isoformat(), d_out.isoformat(),
        rate, money(rate * (d_out - d_in).days), card.card_id, status, iso(at)))
    it.hotel_reservation_ids.append(rid)
    return reservation_view(s, r)


def _require_confirmed(r: HotelReservation, doing: str) -> None:
    if r.status != "confirmed":
        why = {"in_stay": "the stay has already started", "completed": "the stay is over",
               "cancelled": "it was cancelled"}[r.status]
        raise ToolError(f"cannot {doing} reservation {r.reservation_id}: {why}", field="reservation_id",
                        code="illegal_state")


@tool(consumes=("reservation_id", "room_type"), requires=("reservation_confirmed",))
def modify_hotel_reservation(s: TravelState, reservation_id: str, check_in: IsoDate | None = None,
                             check_out: IsoDate | None = None, room_type: RoomTypeName | None = None,
                             guests: Guests | None = None) -> dict:
    """Change the dates, room type or guest count of a confirmed hotel reservation (before the stay
    starts). The new combination must be available; the price is recalculated at the current rate.

    Args:
        reservation_id: The hotel reservation.
        check_in: New arrival date, YYYY-MM-DD.
        check_out: New departure date, YYYY-MM-DD.
        room_type: New room type.
        guests: New number of guests.
    """
    r = get_reservation(s, reservation_id)
    _require_confirmed(r, "modify")
    if check_in is None and check_out is None and room_type is None and guests is None:
        raise ToolError("nothing to change: give new dates, a room type or a guest count", field="reservation_id")
    new_in, new_out = check_in or r.check_in, check_out or r.check_out
    new_room, new_guests = room_type or r.room_type, guests or r.guests
    if (new_in, new_out, new_room, new_guests) == (r.check_in, r.check_out, r.room_type, r.guests):
        raise ToolError("the reservation already has these details", field="reservation_id")
    d_in, d_out = stay_dates(s, new_in, new_out)
    h = s.hotels.edit(r.hotel_id)
    release_rooms(h, r)
    _check_room(h, new_room, new_guests, d_in, d_out)
    _take_rooms(h, new_room, d_in, d_out)
    old_total = r.total_price
    r = s.hotel_reservations.edit(reservation_id)
    r.check_in, r.check_out, r.room_type, r.guests = d_in.isoformat(), d_out.isoformat(), new_room, new_guests
    r.nightly_rate = h.rooms[new_room].nightly_rate
    r.total_price = money(r.nightly_rate * (d_out - d_in).days)
    return {**reservation_view(s, r), "price_change": money(r.total_price - old_total)}


@tool(consumes=("reservation_id",), requires=("reservation_confirmed",))
def cancel_hotel_reservation(s: TravelState, reservation_id: str) -> dict:
    """Cancel a confirmed hotel reservation before the stay starts. Free until 48 hours before the
    15:00 check-in; after that the first night is charged to the card as a cancellation fee.

    Args:
        reservation_id: The hotel reservation.
    """
    r = get_reservation(s, reservation_id)
    _require_confirmed(r, "cancel")
    at = now(s)
    fee = r.nightly_rate if at > hotel_check_in_at(r.check_in) - FREE_HOTEL_CANCEL else 0.0
    release_rooms(s.hotels.edit(r.hotel_id), r)
    r = s.hotel_reservations.edit(reservation_id)
    r.status, r.cancellation_fee = "cancelled", money(fee)
    return reservation_view(s, r)
