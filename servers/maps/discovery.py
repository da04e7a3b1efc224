"""Maps discovery tools (hidden from the model): what synthesis samples to ground requests — places
with their addresses and opening state, every geocodable address (ambiguous ones flagged), the
signed-in user's account, and categorical values."""

from __future__ import annotations

from collections import Counter
from typing import Literal

from servers.kit import discovery, value_counts
from servers.maps.geocoding import address_book
from servers.maps.state import Category, MapsState, opening, seed_of, status_of


@discovery(produces=("place_id", "address", "coordinates"))
def maps_list_places(s: MapsState, city: str | None = None, category: Category | None = None) -> list:
    """Every place with address, coordinates, cuisine, rating, status and whether it is open right now.

    Args:
        city: Only places in this city (exact name).
        category: Only places of this category.
    """
    out = []
    for p in s.places.values():
        if (city is not None and p.city != city) or (category is not None and p.category != category):
            continue
        o = opening(s, p)
        out.append({"place_id": p.place_id, "name": p.name, "category": p.category, "cuisine": p.cuisine,
                    "address": p.formatted_address, "street": p.address, "city": p.city, "latitude": p.latitude,
                    "longitude": p.longitude, "rating": p.rating, "status": status_of(s, p),
                    "open_now": o["open_now"], "opens_at": o.get("opens_at"), "closes_at": o.get("closes_at"),
                    "saved": p.place_id in s.saved})
    return out


@discovery(produces=("address", "coordinates"))
def maps_list_addresses(s: MapsState, city: str | None = None,
                        kind: Literal["business", "residential"] | None = None) -> list:
    """Every geocodable address; ``ambiguous_without_city`` marks street lines that exist in two cities.

    Args:
        city: Only addresses in this city (exact name).
        kind: Only business or only residential addresses.
    """
    book = address_book(seed_of(s))
    lines = Counter(e.address for e in book)
    return [{**e.view(), "ambiguous_without_city": lines[e.address] > 1} for e in book
            if (city is None or e.city == city) and (kind is None or e.kind == kind)]


@discovery(produces=("place_id", "list_id", "review_id"))
def maps_get_account(s: MapsState) -> dict:
    """The signed-in user: name, home address, work place, saved places, lists and their own reviews."""
    acct = s.account.get()
    home = s.homes[acct.home_address_id]
    return {
        "user_name": acct.user_name, "email": acct.email, "home": home, "work": s.places[acct.work_place_id],
        "saved_places": [{"place_id": x.place_id, "name": s.places[x.place_id].name, "label": x.label,
                          "city": s.places[x.place_id].city} for x in s.saved.values()],
        "lists": [{"list_id": pl.list_id, "name": pl.name, "place_ids": [e.place_id for e in pl.entries]}
                  for pl in s.lists.values()],
        "reviews": [r for r in s.reviews.values() if r.by_you],
    }


@discovery
def maps_get_unique_values(s: MapsState, field: Literal["city", "category", "cuisine", "tag", "status",
                                                         "price_level"]) -> list:
    """Distinct values of a categorical place field with their counts.

    Args:
        field: Which field to enumerate.
    """
    places = list(s.places.values())
    if field == "tag":
        return value_counts(t for p in places for t in p.tags)
    if field == "status":
        return value_counts(status_of(s, p) for p in places)
    if field == "cuisine":
        return value_counts(p.cuisine for p in places if p.cuisine)
    if field == "price_level":
        return value_counts(p.price_level for p in places if p.price_level is not None)
    return value_counts(getattr(p, field) for p in places)
