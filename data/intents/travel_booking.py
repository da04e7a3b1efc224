"""Travel booking: how users ask (format: data/intents/__init__.py)."""

from __future__ import annotations

SELF: tuple[str, ...] = ()
SPOKEN: tuple[str, ...] = ("booking_id", "reservation_id")

BANK: dict[str, dict[str, list[str]]] = {
    "search_flights": {
        "ask": [
            "find me a flight from {origin} to {destination} on {departure_date}",
            "what can {passengers} of us fly from {origin} to {destination} on {departure_date}",
            "I want a {fare_class} ticket {origin} to {destination} on {departure_date}, nothing over ${max_price}",
            "cheapest way to get from {origin} to {destination} on {departure_date}?",
        ],
        "vague": ["I need to fly out next week", "can you look up some flights for me"],
    },
    "get_flight_details": {
        "ask": [
            "what are the fare options on {flight_id}",
            "tell me the times and prices for {flight_id}, and which fares I can get my money back on",
            "how many business seats are left on {flight_id}",
        ],
        "vague": ["tell me more about that flight", "what do the fares on that one include"],
    },
    "get_flight_seat_map": {
        "ask": [
            "which {cabin} seats are still open on {flight_id}",
            "are there any window seats left on {flight_id}",
            "let me see where I could sit on {flight_id}",
        ],
        "vague": ["where can I sit", "what seats are left"],
    },
    "hold_flight_fare": {
        "ask": [
            "hold a {fare_class} seat on {flight_id} for {traveller_ids}",
            "put {traveller_ids} on {flight_id} in {fare_class} but don't charge anything yet",
            "save {fare_class} seats on {flight_id} for {traveller_ids} under our trip {itinerary_id}",
        ],
        "vague": ["grab that flight before it sells out", "save me a seat on that one"],
    },
    "confirm_flight_booking": {
        "ask": [
            "pay for {booking_id} with my card {payment_card_id}, the code on the back is {card_security_code}",
            "go ahead and ticket {booking_id} on {payment_card_id}; CVV {card_security_code}",
            "use up my travel credit on {booking_id} and put the rest on {payment_card_id} "
            "(security code {card_security_code})",
        ],
        "vague": ["let's pay for the flight", "make the flight booking final"],
    },
    "get_flight_booking": {
        "ask": [
            "what's going on with booking {booking_id}",
            "pull up my flight reservation {booking_id}",
            "did {booking_id} get ticketed yet",
        ],
        "vague": ["check on my flight booking", "where are we with my flight"],
    },
    "select_flight_seat": {
        "ask": [
            "put {traveller_id} in {seat} on booking {booking_id}",
            "I'd like seat {seat} for {traveller_id} on {booking_id}",
            "move {traveller_id} over to {seat} on reservation {booking_id}",
        ],
        "vague": ["I want a different seat", "can I get a window seat"],
    },
    "check_in_flight_booking": {
        "ask": [
            "check me in for {booking_id}, my last name is {last_name}",
            "I'm {last_name} on booking {booking_id}, check us in",
            "get me boarding passes for {booking_id} under {last_name}",
        ],
        "vague": ["check me in for my flight", "I need my boarding pass"],
    },
    "change_flight_booking": {
        "ask": [
            "move booking {booking_id} onto {new_flight_id}",
            "switch {booking_id} to the {new_flight_id} flight instead",
            "rebook {booking_id} on {new_flight_id} and bump it to {fare_class}",
        ],
        "vague": ["I need to fly on a different day", "can I change my flight"],
    },
    "cancel_flight_booking": {
        "ask": [
            "cancel booking {booking_id}",
            "I can't make it anymore, cancel my flight {booking_id}",
            "drop {booking_id} and tell me what I get back",
        ],
        "vague": ["I want to cancel my flight", "call off the flight"],
    },
    "search_hotels": {
        "ask": [
            "find a hotel in {city} from {check_in} to {check_out}",
            "where can {guests} of us stay in {city} between {check_in} and {check_out}",
            "show me {min_stars}-star places in {city} under ${max_nightly_rate} a night, {check_in} to {check_out}",
        ],
        "vague": ["I need somewhere to stay", "find me a hotel"],
    },
    "get_hotel_room_availability": {
        "ask": [
            "what rooms does {hotel_id} have free from {check_in} to {check_out}",
            "is there a room at {hotel_id} for {guests} people between {check_in} and {check_out}",
            "how much would {hotel_id} come to for {check_in} through {check_out}",
        ],
        "vague": ["what kinds of rooms do they have", "is that hotel free those nights"],
    },
    "book_hotel_room": {
        "ask": [
            "book a {room_type} at {hotel_id} from {check_in} to {check_out} for {traveller_id} on card "
            "{payment_card_id}",
            "get {traveller_id} a {room_type} room at {hotel_id}, arriving {check_in} and leaving {check_out}, "
            "guaranteed with {payment_card_id}",
            "reserve {hotel_id} for {guests} guests, {check_in} to {check_out}, {room_type}, in {traveller_id}'s "
            "name with card {payment_card_id}, and add it to trip {itinerary_id}",
        ],
        "vague": ["book me that hotel", "lock in a room there"],
    },
    "modify_hotel_reservation": {
        "ask": [
            "push the checkout on {reservation_id} to {check_out}",
            "upgrade hotel reservation {reservation_id} to a {room_type}",
            "move {reservation_id} so I arrive {check_in} and leave {check_out}",
        ],
        "vague": ["I need to change my hotel dates", "can I stay an extra night"],
    },
    "cancel_hotel_reservation": {
        "ask": [
            "cancel hotel reservation {reservation_id}",
            "I won't need the room anymore, cancel {reservation_id}",
            "drop the hotel booking {reservation_id} and tell me if there's a fee",
        ],
        "vague": ["cancel my hotel", "I don't need the room"],
    },
    "find_traveller_profiles": {
        "ask": [
            "look up the traveller {query}",
            "find {query} in our travellers",
            "what do we have on file for {query}",
        ],
        "vague": ["pull up my profile", "who do we have saved as travellers"],
    },
    "update_traveller_profile": {
        "ask": [
            "I renewed my passport: {traveller_id} now has {passport_number}, good until {passport_expiry}",
            "add frequent flyer number {loyalty_number} with {loyalty_airline} for {traveller_id}",
            "change {traveller_id}'s phone to {phone} and email to {email}",
        ],
        "vague": ["my passport details changed", "fix my travel profile"],
    },
    "create_trip_itinerary": {
        "ask": [
            "start a new trip called {name} for {lead_traveller_id}",
            "set up a plan named {name} under {lead_traveller_id}",
            "make a trip {name} for {lead_traveller_id} and jot down {notes}",
        ],
        "vague": ["I'm planning a trip", "let's start planning a getaway"],
    },
    "list_trip_itineraries": {
        "ask": [
            "what trips does {traveller_id} have",
            "show me {traveller_id}'s {status} trips",
            "list every trip we've got planned",
        ],
        "vague": ["what trips do I have", "show my travel plans"],
    },
    "get_trip_itinerary": {
        "ask": [
            "walk me through trip {itinerary_id}",
            "what's booked for {itinerary_id} so far",
            "show everything on {itinerary_id} and flag anything that looks off",
        ],
        "vague": ["what's on my itinerary", "show me my trip"],
    },
}

GOALS: list[dict[str, list[str]]] = [
    {"tools": ["search_flights", "hold_flight_fare", "confirm_flight_booking"],
     "ask": ["book me on the cheapest flight from {origin} to {destination} on {departure_date} and pay for it",
             "get me to {destination} on {departure_date} from {origin} and put it on my card"]},
    {"tools": ["check_in_flight_booking", "select_flight_seat"],
     "ask": ["check me in for this afternoon's flight and get me a window seat",
             "I'm flying later today, check me in and sort out a better seat"]},
    {"tools": ["get_trip_itinerary", "cancel_flight_booking", "cancel_hotel_reservation"],
     "ask": ["my trip is off, cancel the flight and the hotel", "we're not going anymore, undo everything on that trip"]},
    {"tools": ["search_hotels", "get_hotel_room_availability", "book_hotel_room"],
     "ask": ["find me a hotel in {city} for those nights and book the cheapest room",
             "I land in {city} on {check_in}, get me a room until {check_out}"]},
    {"tools": ["update_traveller_profile", "hold_flight_fare"],
     "ask": ["I've got my new passport, update it and hold that international flight for me",
             "fix my passport on file so I can book the overseas flight"]},
    {"tools": ["get_flight_booking", "search_flights", "change_flight_booking"],
     "ask": ["move my flight to the next day", "I need to leave a day later, switch my booking"]},
    {"tools": ["create_trip_itinerary", "hold_flight_fare", "book_hotel_room"],
     "ask": ["plan my {name} trip for me with a flight and a hotel",
             "set up my conference trip: flight there and three nights in a hotel"]},
]
