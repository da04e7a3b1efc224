"""Maps place tools: geocoding both ways, place search (text and nearby), details, opening status
and reviews."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field

from servers.kit import IsoDateTime, Text, ToolError, iso, new_id, now, tool
from servers.kit.geo import haversine_km
from servers.maps.geocoding import check_coverage, geocode, reverse_geocode, tokens
from servers.maps.hours import zone
from servers.maps.state import (
    Category,
    MapsState,
    Place,
    Review,
    city_named,
    details,
    get_place,
    opening,
    resolve_point,
    seed_of,
    status_of,
    summary,
)

Latitude = Annotated[float, Field(ge=-90, le=90)]
Longitude = Annotated[float, Field(ge=-180, le=180)]
Limit = Annotated[int, Field(ge=1, le=50)]
Offset = Annotated[int, Field(ge=0, le=1000)]
Rating = Annotated[float, Field(ge=1, le=5)]
Stars = Annotated[int, Field(ge=1, le=5)]
PriceLevel = Annotated[int, Field(ge=1, le=4)]
Cuisine = Literal["american", "chinese", "indian", "italian", "japanese", "korean", "mediterranean", "mexican",
                  "pizza", "thai", "vegan", "vietnamese"]
MAX_RADIUS_M = 25_000


@tool(consumes=("address",), produces=("coordinates", "place_id"), read_only=True)
def geocode_address(s: MapsState, address: str) -> dict:
    """Turn a street address (or the name of a place) into map coordinates and a full formatted address.
    Give house number, street and city; a partial address that fits several locations is refused as
    ambiguous and the candidates are listed.

    Args:
        address: The address to look up, e.g. "412 Oak Street, Boston" or "Daily Grind, Chicago".
    """
    return geocode(seed_of(s), address, "address").view()


@tool(consumes=("coordinates",), produces=("address", "place_id"), read_only=True)
def reverse_geocode_coordinates(s: MapsState, latitude: Latitude, longitude: Longitude) -> dict:
    """Find the street address at a pair of coordinates (the nearest known address within 250 metres).

    Args:
        latitude: Latitude in decimal degrees.
        longitude: Longitude in decimal degrees.
    """
    entry, metres = reverse_geocode(seed_of(s), latitude, longitude)
    return {**entry.view(), "distance_m": round(metres)}


def _rank(words: set[str], p: Place) -> int | None:
    name = set(tokens(p.name))
    kind = set(tokens(" ".join([p.category.replace("_", " "), p.cuisine or "", *(t.replace("_", " ") for t in p.tags)])))
    where = set(tokens(f"{p.formatted_address} {p.category}"))
    score = 0
    for w in words:
        if w in name:
            score += 3
        elif w in kind:
            score += 2
        elif w in where:
            score += 1
        else:
            return None
    return score


@tool(produces=("place_id",), read_only=True)
def search_map_places(s: MapsState, query: str | None = None, city: str | None = None,
                      category: Category | None = None, cuisine: Cuisine | None = None,
                      min_rating: Rating | None = None, max_price_level: PriceLevel | None = None,
                      open_now: bool = False,
                      sort_by: Literal["relevance", "rating", "review_count", "name"] = "relevance",
                      limit: Limit = 10, offset: Offset = 0) -> dict:
    """Search businesses and points of interest by words (name, kind of place, cuisine, street) with
    optional filters; results are paginated.

    Args:
        query: Words to look for, e.g. "sushi", "pharmacy Oak Street" or a business name.
        city: Only places in this city.
        category: Only places of this category.
        cuisine: Only restaurants serving this cuisine.
        min_rating: Only places rated at least this (1-5).
        max_price_level: Only places at or below this price level (1 = cheap, 4 = expensive).
        open_now: Only places open at the current time.
        sort_by: Order of results: relevance, rating, review_count or name.
        limit: Maximum number of results.
        offset: Number of results to skip (for the next page).
    """
    in_city = city_named(city) if city is not None else None
    words = {w for w in tokens(query or "") if w not in ("in", "the", "near", "at", "of", "and", "&")}
    rows: list[tuple[int, dict]] = []
    for p in s.places.values():
        if (in_city and p.city != in_city) or (category and p.category != category) \
                or (cuisine and p.cuisine != cuisine) or (min_rating and p.rating < min_rating) \
                or (max_price_level and (p.price_level or 0) > max_price_level):
            continue
        score = _rank(words, p) if words else 0
        if score is None:
            continue
        row = summary(s, p)
        if open_now and not row["open_now"]:
            continue
        rows.append((score, row))
    keys = {"relevance": lambda r: (-r[0], -r[1]["rating"], r[1]["name"]),
            "rating": lambda r: (-r[1]["rating"], -r[1]["review_count"], r[1]["name"]),
            "review_count": lambda r: (-r[1]["review_count"], r[1]["name"]),
            "name": lambda r: (r[1]["name"], r[1]["city"])}
    rows.sort(key=keys[sort_by])
    page = [r for _, r in rows[offset:offset + limit]]
    nxt = offset + limit if offset + limit < len(rows) else None
    return {"total": len(rows), "offset": offset, "next_offset": nxt, "results": page}


@tool(consumes=("coordinates",), produces=("place_id",), read_only=True)
def find_nearby_places(s: MapsState, near: str | None = None, latitude: Latitude | None = None,
                       longitude: Longitude | None = None, radius_m: Annotated[int, Field(ge=10, le=100_000)] = 1000,
                       category: Category | None = None, open_now: bool = False, min_rating: Rating | None = None,
                       limit: Limit = 10) -> dict:
    """List places within a radius of a location, nearest first. The centre is either an address, place
    name, place id, "home"/"work", or a latitude/longitude pair. The search radius is at most 25 km.

    Args:
        near: Centre of the search as text (address, place name, place id, "home" or "work").
        latitude: Latitude of the centre (use together with longitude instead of near).
        longitude: Longitude of the centre (use together with latitude instead of near).
        radius_m: Search radius in metres (at most 25000).
        category: Only places of this category.
        open_now: Only places open at the current time.
        min_rating: Only places rated at least this (1-5).
        limit: Maximum number of results.
    """
    if near is not None and (latitude is not None or longitude is not None):
        raise ToolError("give either near or latitude/longitude, not both", field="near")
    if near is not None:
        centre = resolve_point(s, near, "near")
        lat, lon, label = centre.latitude, centre.longitude, centre.label
    elif latitude is not None and longitude is not None:
        check_coverage(latitude, longitude, "latitude")
        lat, lon, label = latitude, longitude, f"{latitude},{longitude}"
    elif latitude is not None or longitude is not None:
        raise ToolError("latitude and longitude must be given together", field="longitude" if latitude else "latitude")
    else:
        raise ToolError("say where to search: give near (an address or place) or latitude and longitude",
                        field="near")
    if radius_m > MAX_RADIUS_M:
        raise ToolError(f"radius too large: radius_m {radius_m} exceeds the {MAX_RADIUS_M} m (25 km) limit of a "
                        "nearby search; narrow the radius or search a whole city with search_map_places",
                        field="radius_m")
    rows = []
    for p in s.places.values():
        d = haversine_km(lat, lon, p.latitude, p.longitude) * 1000
        if d > radius_m or (category and p.category != category) or (min_rating and p.rating < min_rating):
            continue
        row = summary(s, p, (lat, lon))
        if open_now and not row["open_now"]:
            continue
        rows.append(row)
    rows.sort(key=lambda r: (r["distance_m"], r["name"]))
    return {"centre": {"name": label, "latitude": lat, "longitude": lon}, "radius_m": radius_m,
            "total": len(rows), "results": rows[:limit]}


@tool(consumes=("place_id",), produces=("address", "coordinates"), read_only=True)
def get_map_place_details(s: MapsState, place_id: str) -> dict:
    """Everything about one place: address, coordinates, phone, website, weekly opening hours, whether
    it is open now, rating, tags, and whether you saved or reviewed it.

    Args:
        place_id: The place's id (PLC-...).
    """
    return details(s, get_place(s, place_id))


@tool(consumes=("place_id",), read_only=True)
def check_place_open_status(s: MapsState, place_id: str, at: IsoDateTime | None = None) -> dict:
    """Check whether a place is open now or at a given time, and when it next opens or closes.
    A time without a UTC offset is read as the place's local time.

    Args:
        place_id: The place's id (PLC-...).
        at: When to check, e.g. 2026-06-05T20:00 (local time of the place); omit for right now.
    """
    p = get_place(s, place_id)
    when = now(s)
    if at is not None:
        try:
            parsed = datetime.fromisoformat(at.replace("Z", "+00:00"))
        except ValueError:
            raise ToolError(f"invalid at '{at}': expected YYYY-MM-DDTHH:MM", field="at") from None
        when = parsed if parsed.tzinfo else parsed.replace(tzinfo=zone(p.city))
    state = opening(s, p, when)
    return {"place_id": p.place_id, "name": p.name, "checked_at": iso(when.astimezone(zone(p.city))), **state}


@tool(consumes=("place_id",), produces=("review_id",), read_only=True)
def list_map_place_reviews(s: MapsState, place_id: str,
                           sort_by: Literal["newest", "highest", "lowest"] = "newest",
                           min_rating: Stars | None = None, limit: Limit = 10) -> dict:
    """Read the reviews people left for a place, with its overall rating.

    Args:
        place_id: The place's id (PLC-...).
        sort_by: newest first, highest rated first or lowest rated first.
        min_rating: Only reviews with at least this many stars.
        limit: Maximum number of reviews.
    """
    p = get_place(s, place_id)
    rows = [r for r in s.reviews.values() if r.place_id == p.place_id and (min_rating is None or r.rating >= min_rating)]
    order = {"newest": lambda r: (r.created_at, r.review_id), "highest": lambda r: (r.rating, r.created_at),
             "lowest": lambda r: (-r.rating, r.created_at)}[sort_by]
    rows.sort(key=order, reverse=True)
    return {"place_id": p.place_id, "name": p.name, "rating": p.rating, "review_count": p.review_count,
            "reviews": rows[:limit]}


@tool(consumes=("place_id",), produces=("review_id",), establishes=("place_reviewed",))
def write_map_place_review(s: MapsState, place_id: str, rating: Stars, text: Text) -> dict:
    """Post your review of a place (1-5 stars and a few words); it updates the place's average rating.
    You can review each place once, and not a place that has closed for good.

    Args:
        place_id: The place's id (PLC-...).
        rating: Stars from 1 (poor) to 5 (excellent).
        text: What you want to say about the place (at least 10 characters).
    """
    p = get_place(s, place_id)
    if status_of(s, p) == "permanently_closed":
        raise ToolError(f"{p.name} is permanently closed; reviews are no longer accepted", field="place_id",
                        code="precondition")
    mine = next((r for r in s.reviews.values() if r.place_id == p.place_id and r.by_you), None)
    if mine is not None:
        raise ToolError(f"you already reviewed {p.name} ({mine.review_id}, {mine.rating} stars); each place "
                        "can be reviewed once", field="place_id", code="duplicate")
    if len(text.strip()) < 10:
        raise ToolError("review text is too short: write at least 10 characters", field="text")
    rid = new_id(s.counters, "REV", width=5)
    review = s.reviews.put(rid, Review(rid, p.place_id, s.account.get().user_name, rating, text.strip(),
                                       iso(now(s)), by_you=True))
    place = s.places.edit(p.place_id)
    place.rating = round((place.rating * place.review_count + rating) / (place.review_count + 1), 1)
    place.review_count += 1
    return {"review": review, "place": summary(s, place)}
