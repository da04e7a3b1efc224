"""Travel booking: flights between the kit's airports, hotels in its cities, traveller profiles and
trip itineraries that group flight bookings and hotel stays — a booking state machine on the
session clock (all times UTC).

Flight bookings move held → ticketed (paid, e-tickets issued) → checked_in → completed; a hold lapses
30 minutes after it was made (→ expired, seats released); a ticketed booking nobody checked in for
becomes a no_show when the flight leaves; cancelled is terminal. Hotel reservations move confirmed →
in_stay (15:00 on the check-in day) → completed (11:00 on check-out); cancelled is terminal. Fare
classes carry rules: basic_economy (nothing back on cancel, no changes, no seat selection), economy
(cancel → travel credit minus $100 per passenger, change fee $75), premium_economy (refund minus $50,
free changes), business (full refund, free changes).

Failure rules (each a ToolError naming the argument; the call changes nothing):
- unknown flight_id / booking_id / traveller_id / hotel_id / reservation_id / itinerary_id /
  payment_card_id, unknown airport or city;
- a date in the past (departure_date, check_in, passport_expiry), or more than 330 days ahead;
- check_out not after check_in, or a stay of more than 30 nights;
- holding a flight that departed or departs within 60 minutes; a traveller listed twice or already
  booked on that flight; a fare class sold out (or fewer seats left than travellers);
- an international flight for a traveller whose passport expires before the trip;
- confirming a booking that is not held (the hold expired, already ticketed, cancelled);
- a card that belongs to nobody on the booking, an expired card, a wrong card_security_code, asking
  for travel credit the lead traveller does not have;
- seat selection on basic economy, for someone not on the booking, outside the fare's cabin, on a
  taken seat or the passenger's current seat, or within 45 minutes of departure;
- check-in before it opens (24 h before departure) or after it closes (45 min before), on a booking
  that is not ticketed, or with a last name that matches no passenger (name mismatch);
- changing a booking that is not ticketed (held, checked in, departed as a no-show, cancelled), on
  basic economy, to the same flight and fare, to another route, to a flight too close to departure,
  into basic economy, or into a sold-out fare;
- cancelling a flight booking after departure, or one already cancelled/expired/completed/no-show;
- a hotel room type the hotel does not have, more guests than the room sleeps, a room sold out on any
  night of the stay (room unavailable for the dates);
- modifying or cancelling a hotel reservation whose stay started, ended or was cancelled; a
  modification that changes nothing;
- updating a profile with nothing to change, a new passport number without its expiry, an expiry
  that is not in the future, a loyalty airline without its number (or the reverse);
- a second itinerary with the same name for the same lead traveller; an empty profile search.

Cross-domain: cities, airport codes and coordinates come from ``servers.kit.geo`` (maps, food
delivery and retail use the same cities). Modules: ``state`` (records, lookups), ``rules`` (fare
rules, seat maps, clock hook, views), ``world`` (the seeded world), ``tools_flights`` (10 tools),
``tools_hotels`` (5), ``tools_trips`` (5) and ``discovery`` (hidden).
"""

from servers.kit import Domain
from servers.travel_booking import discovery, tools_flights, tools_hotels, tools_trips
from servers.travel_booking.rules import on_time
from servers.travel_booking.state import TravelState
from servers.travel_booking.world import generate

DESCRIPTION = (
    "A travel agency account: search flights between major airports and hotels in major cities, hold and "
    "ticket fares for saved travellers, pick seats, check in online from 24 hours before departure, change "
    "or cancel under each fare's rules, book and change hotel rooms, and keep each trip's flights and stays "
    "together in an itinerary."
)

domain = Domain("travel_booking", TravelState, generate, description=DESCRIPTION,
                modules=(tools_flights, tools_hotels, tools_trips, discovery), on_time=on_time)

__all__ = ["domain"]
