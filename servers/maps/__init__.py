"""Maps: geocoding, place search, routing and a signed-in user's saved places, lists and reviews over
16 real cities (the shared :data:`servers.kit.geo.CITIES`), each with 22 businesses and points of
interest (restaurants, cafés, bakeries, bars, pharmacies, fuel and EV charging, hotels, museums,
supermarkets, parks) with street addresses, coordinates near the centre, ratings, price levels, tags
and weekly opening hours in local time, plus six home addresses per city. Mostly read-only lookups;
the writable state is the user's saved places, lists and reviews. Opening state follows the session
clock in each city's time zone; a temporarily closed place reopens on its date (computed lazily);
driving times follow deterministic traffic by local hour. Restaurants here are the food-delivery
restaurants of the same seed (same names, addresses, hours).

Failure rules (a failed call changes nothing):

* address not found — geocoding text that matches no known address or place; reverse geocoding a
  point with no address within 250 m; a point outside the covered cities;
* ambiguous address — text matching several addresses or places (e.g. a street line that exists in
  two cities, a chain's name) → the candidates are listed, add the house number and city;
* unknown place id / list id / city;
* no route: origin and destination on different continents (any mode, e.g. by car from New York to
  Paris); walking over 25 km or cycling over 80 km; transit between two cities; origin equals
  destination; departure time in the past;
* nearby search: radius over 25 km; no centre given; latitude without longitude (or both near and
  coordinates);
* saving a place that is already saved; a saved-place label already in use; removing a place that is
  not saved;
* lists: duplicate list name, more than 20 lists, a place already on the list, a list of 50 places;
* reviews: a second review of the same place, a review of a permanently closed place, review text
  under 10 characters.
"""

from servers.kit import Domain
from servers.maps import discovery, tools_places, tools_routes, tools_saved
from servers.maps.state import MapsState
from servers.maps.world import generate

domain = Domain("maps", MapsState, generate, description=(__doc__ or "").split("\n\n")[0],
                modules=(tools_places, tools_routes, tools_saved, discovery), on_time=None)

__all__ = ["domain"]
