"""Maps records (places, homes, reviews, the signed-in user's saved places and lists) and the shared
rules every tool applies: unknown place ids, a place's effective status and opening state at the
session's time, and how a route endpoint given as text is resolved."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from servers.kit import Cell, Counters, State, Table, ToolError, now, require
from servers.kit.geo import CITIES, CITY_BY_NAME, haversine_km
from servers.maps.data import CATEGORIES
from servers.maps.geocoding import check_coverage, geocode
from servers.maps.hours import local_time, open_state, weekly_display

Category = Literal[
    "restaurant", "cafe", "bakery", "bar", "pharmacy", "fuel_station", "ev_charging", "hotel", "museum",
    "supermarket", "park",
]
assert set(Category.__args__) == set(CATEGORIES)  # type: ignore[attr-defined]
Mode = Literal["drive", "walk", "bike", "transit"]


@dataclass
class Place:
    place_id: str
    name: str
    category: str
    cuisine: str | None
    address: str
    city: str
    formatted_address: str
    latitude: float
    longitude: float
    phone: str
    website: str
    rating: float
    review_count: int
    price_level: int | None
    hours: dict[str, list[str]]
    tags: list[str]
    status: str  # operational | temporarily_closed | permanently_closed
    closed_until: str | None


@dataclass
class Home:
    address_id: str
    address: str
    city: str
    formatted_address: str
    latitude: float
    longitude: float


@dataclass
class Review:
    review_id: str
    place_id: str
    author: str
    rating: int
    text: str
    created_at: str
    by_you: bool = False


@dataclass
class SavedPlace:
    place_id: str
    label: str | None
    note: str | None
    saved_at: str


@dataclass
class ListEntry:
    place_id: str
    note: str | None
    added_at: str


@dataclass
class PlaceList:
    list_id: str
    name: str
    description: str | None
    visibility: str  # private | shared
    created_at: str
    entries: list[ListEntry] = field(default_factory=list)


@dataclass
class Account:
    user_name: str
    email: str
    home_address_id: str
    work_place_id: str


@dataclass
class WorldInfo:
    seed: int


class MapsState(State):
    places: Table[Place]
    homes: Table[Home]
    reviews: Table[Review]
    saved: Table[SavedPlace]  # keyed by place_id
    lists: Table[PlaceList]
    account: Cell[Account]
    world: Cell[WorldInfo]
    counters: Cell[Counters]


MAX_LISTS = 20
MAX_LIST_ENTRIES = 50


def seed_of(s: MapsState) -> int:
    return s.world.get().seed


def get_place(s: MapsState, place_id: str, field: str = "place_id") -> Place:
    return require(s.places, place_id.strip().upper(), field)


def get_list(s: MapsState, list_id: str) -> PlaceList:
    return require(s.lists, list_id.strip().upper(), "list_id")


def city_named(name: str, field: str = "city") -> str:
    """The covered city called ``name`` (case-insensitive), or a ToolError listing the covered ones."""
    for c in CITIES:
        if c.name.lower() == name.strip().lower():
            return c.name
    raise ToolError(f"unknown city '{name}': the map covers {', '.join(c.name for c in CITIES)}", field=field,
                    code="not_found")


def status_of(s: MapsState, p: Place) -> str:
    """Operational, temporarily closed (until ``closed_until``, local date) or permanently closed."""
    if p.status == "temporarily_closed" and p.closed_until is not None \
            and local_time(now(s), p.city).date().isoformat() >= p.closed_until:
        return "operational"
    return p.status


def opening(s: MapsState, p: Place, at: datetime | None = None) -> dict:
    """Open/closed at ``at`` (UTC, default now) in the place's local time, with the next change."""
    local = local_time(at or now(s), p.city)
    status = status_of(s, p)
    if status == "permanently_closed":
        return {"open_now": False, "open_24_hours": False, "closes_at": None, "opens_at": None,
                "status": status, "local_time": local.isoformat()}
    if status == "temporarily_closed":
        return {"open_now": False, "open_24_hours": False, "closes_at": None, "opens_at": None,
                "status": status, "reopens_on": p.closed_until, "local_time": local.isoformat()}
    return {**open_state(p.hours, local), "status": status, "local_time": local.isoformat()}


def summary(s: MapsState, p: Place, origin: tuple[float, float] | None = None) -> dict:
    row = {"place_id": p.place_id, "name": p.name, "category": p.category, "cuisine": p.cuisine,
           "address": p.formatted_address, "city": p.city, "rating": p.rating, "review_count": p.review_count,
           "price_level": p.price_level, "status": status_of(s, p),
           "open_now": opening(s, p)["open_now"]}
    if origin is not None:
        row["distance_m"] = round(haversine_km(origin[0], origin[1], p.latitude, p.longitude) * 1000)
    return row


def details(s: MapsState, p: Place) -> dict:
    mine = next((r for r in s.reviews.values() if r.place_id == p.place_id and r.by_you), None)
    saved = s.saved.get(p.place_id)
    return {
        **summary(s, p), "phone": p.phone, "website": p.website, "latitude": p.latitude,
        "longitude": p.longitude, "tags": list(p.tags), "hours": weekly_display(p.hours),
        "timezone": CITY_BY_NAME[p.city].timezone, "opening": opening(s, p),
        "saved": saved is not None, "saved_label": saved.label if saved else None,
        "in_lists": [pl.name for pl in s.lists.values() if any(e.place_id == p.place_id for e in pl.entries)],
        "your_review": {"review_id": mine.review_id, "rating": mine.rating} if mine else None,
    }


@dataclass(frozen=True)
class Point:
    """A resolved route endpoint."""

    label: str
    latitude: float
    longitude: float
    city: str
    place_id: str | None = None

    def view(self) -> dict:
        return {"name": self.label, "latitude": self.latitude, "longitude": self.longitude, "city": self.city,
                "place_id": self.place_id}


_PLACE_ID = re.compile(r"^\s*PLC-\d+\s*$", re.IGNORECASE)
_COORDS = re.compile(r"^\s*(-?\d{1,2}(?:\.\d+)?)\s*,\s*(-?\d{1,3}(?:\.\d+)?)\s*$")


def resolve_point(s: MapsState, text: str, field: str) -> Point:
    """A place id, ``home`` / ``work``, ``"lat,lon"``, or an address / place name (geocoding rules)."""
    if _PLACE_ID.match(text):
        p = get_place(s, text, field)
        return Point(p.name, p.latitude, p.longitude, p.city, p.place_id)
    word = text.strip().lower()
    acct = s.account.get()
    if word in ("home", "my home"):
        h = s.homes[acct.home_address_id]
        return Point(f"Home ({h.formatted_address})", h.latitude, h.longitude, h.city)
    if word in ("work", "my work", "office"):
        p = s.places[acct.work_place_id]
        return Point(f"Work ({p.name})", p.latitude, p.longitude, p.city, p.place_id)
    m = _COORDS.match(text)
    if m:
        lat, lon = float(m.group(1)), float(m.group(2))
        if not (-90 <= lat <= 90 and -180 <= lon <= 180):
            raise ToolError(f"invalid coordinates '{text}': latitude must be -90..90 and longitude -180..180",
                            field=field)
        return Point(f"{lat},{lon}", lat, lon, check_coverage(lat, lon, field))
    e = geocode(seed_of(s), text, field)
    return Point(e.name or e.formatted_address, e.latitude, e.longitude, e.city, e.place_id)
