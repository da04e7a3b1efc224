"""The seeded geography both maps and food delivery stand on: businesses and home addresses.

:func:`seed_geography` is a pure, cached function of the seed (it draws from its own random source,
never from a domain's), so the maps world and the food-delivery world built for the same seed agree
on every restaurant's name, address, coordinates and opening hours, and on every customer's address.
Nothing here starts a server or touches session state.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import timedelta
from functools import lru_cache

from servers.kit.fake import REFERENCE_DATE
from servers.kit.geo import CITIES, City
from servers.maps import data
from servers.maps.hours import Hours


@dataclass(frozen=True)
class GeoBusiness:
    place_id: str
    name: str
    category: str
    cuisine: str | None
    address: str  # street line: "412 Oak Street"
    city: str
    formatted_address: str
    latitude: float
    longitude: float
    phone: str
    website: str
    rating: float
    review_count: int
    price_level: int | None
    hours: Hours
    tags: tuple[str, ...]
    status: str  # operational | temporarily_closed | permanently_closed
    closed_until: str | None  # ISO date a temporary closure ends


@dataclass(frozen=True)
class GeoHome:
    address_id: str
    address: str
    city: str
    formatted_address: str
    latitude: float
    longitude: float
    suburb: bool  # far from the centre (outside most delivery radii)


@dataclass(frozen=True)
class Geography:
    businesses: tuple[GeoBusiness, ...]
    homes: tuple[GeoHome, ...]
    twin_line: str  # a street line that exists in two cities (the guaranteed ambiguous address)


HOMES_PER_CITY = 6  # five near the centre, one in the suburbs


def format_address(line: str, city: City) -> str:
    if city.country in ("US", "CA"):
        return f"{line}, {city.name}, {city.region}"
    if city.country == "AU":
        return f"{line}, {city.name} {city.region}"
    return f"{line}, {city.name}"


def _line(rng: random.Random, city: City, street: str | None = None) -> str:
    street = street or rng.choice(data.STREETS[city.country])
    if city.country == "JP":
        return f"{rng.randint(1, 4)}-{rng.randint(1, 25)}-{rng.randint(1, 20)} {street}"
    if city.country == "DE":
        return f"{street} {rng.randint(1, 180)}"
    return f"{rng.randint(1, 980)} {street}"


def _point(rng: random.Random, city: City, lo_km: float, hi_km: float) -> tuple[float, float]:
    r, theta = rng.uniform(lo_km, hi_km), rng.uniform(0, 2 * math.pi)
    lat = city.lat + r * math.cos(theta) / 111.0
    lon = city.lon + r * math.sin(theta) / (111.0 * math.cos(math.radians(city.lat)))
    return round(lat, 5), round(lon, 5)


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in text.lower()).strip("-").replace("--", "-")


_RADIUS = {"restaurant": (0.3, 3.5), "cafe": (0.2, 3.0), "bakery": (0.3, 3.5), "bar": (0.3, 3.0),
           "pharmacy": (0.3, 4.0), "fuel_station": (2.0, 6.0), "ev_charging": (1.0, 5.0), "hotel": (0.2, 3.0),
           "museum": (0.3, 4.0), "supermarket": (0.5, 4.5), "park": (1.0, 5.0)}
_PRICE = {"restaurant": (1, 4), "cafe": (1, 2), "bakery": (1, 2), "bar": (2, 3), "hotel": (2, 4)}


def _business_name(rng: random.Random, category: str, city: City, cuisine: str | None) -> str:
    if cuisine is not None:
        prefixes, suffixes = data.CUISINES[cuisine]
        return f"{rng.choice(prefixes)} {rng.choice(suffixes)}"
    return rng.choice(data.NAMES[category]).replace("{city}", city.name)


@lru_cache(maxsize=32)
def seed_geography(seed: int) -> Geography:
    """Every city's 22 businesses and 6 home addresses for ``seed`` (deterministic, cached).

    Archetypes in every seed: each city has one restaurant open 24 hours (so some restaurant is open
    whatever the hour), one home in the suburbs, one museum temporarily closed for the next two
    days somewhere, one permanently closed café or bar, and one street line shared by homes in two
    different US cities (geocoding it without a city is ambiguous).
    """
    rng = random.Random(f"maps-geography:{seed}")
    businesses: list[GeoBusiness] = []
    homes: list[GeoHome] = []
    cuisines = sorted(data.CUISINES)
    lines: dict[str, set[str]] = {c.name: set() for c in CITIES}

    def fresh_line(city: City, street: str | None = None) -> str:
        for _ in range(50):
            line = _line(rng, city, street)
            if line not in lines[city.name]:
                lines[city.name].add(line)
                return line
        raise RuntimeError("could not find a free street address")  # pragma: no cover

    n = 0
    for city in CITIES:
        names: set[str] = set()
        all_day = rng.randrange(7)  # which restaurant of this city never closes
        r_index = 0
        for category, count in data.CATEGORY_PLAN:
            for _ in range(count):
                n += 1
                cuisine = None
                if category == "restaurant":  # two of each city's restaurants serve a locally popular cuisine
                    cuisine = rng.choice(data.LOCAL_CUISINES[city.country] if r_index < 2 else cuisines)
                name = _business_name(rng, category, city, cuisine)
                while name in names:
                    name = _business_name(rng, category, city, cuisine)
                    if name in names and rng.random() < 0.3:
                        name = f"{name} {rng.choice(data.STREETS[city.country]).split()[0]}"
                names.add(name)
                line = fresh_line(city)
                lat, lon = _point(rng, city, *_RADIUS[category])
                if category == "restaurant" and r_index == all_day:
                    hours = data.ALL_DAY_RESTAURANT
                else:
                    hours = rng.choice(data.HOURS[category])
                if category == "restaurant":
                    r_index += 1
                lo_hi = _PRICE.get(category)
                tags = tuple(sorted(rng.sample(data.TAGS[category], k=rng.randint(1, min(3, len(data.TAGS[category]))))))
                businesses.append(GeoBusiness(
                    place_id=f"PLC-{n:04d}", name=name, category=category, cuisine=cuisine, address=line,
                    city=city.name, formatted_address=format_address(line, city), latitude=lat, longitude=lon,
                    phone=f"{data.DIAL[city.name]}{rng.randint(0, 9999):04d}",
                    website=f"https://{_slug(name)}-{_slug(city.name)}.example.com",
                    rating=round(rng.uniform(3.2, 4.9), 1), review_count=rng.randint(12, 2400),
                    price_level=rng.randint(*lo_hi) if lo_hi else None, hours={d: list(v) for d, v in hours.items()},
                    tags=tags, status="operational", closed_until=None,
                ))
    # closures: one museum closed for two days, one cafe or bar gone for good
    museums = [i for i, b in enumerate(businesses) if b.category == "museum"]
    gone = [i for i, b in enumerate(businesses) if b.category in ("cafe", "bar")]
    i = rng.choice(museums)
    until = (REFERENCE_DATE + timedelta(days=2)).date().isoformat()
    businesses[i] = _replace(businesses[i], status="temporarily_closed", closed_until=until)
    j = rng.choice(gone)
    businesses[j] = _replace(businesses[j], status="permanently_closed")

    us = [c for c in CITIES if c.country == "US"]
    twin_cities = rng.sample(us, 2)
    twin_street = rng.choice(data.US_STREETS)
    twin_line = ""
    for _ in range(50):
        twin_line = _line(rng, twin_cities[0], twin_street)
        if all(twin_line not in lines[c.name] for c in twin_cities):
            break
    h = 0
    for city in CITIES:
        for k in range(HOMES_PER_CITY):
            h += 1
            suburb = k == HOMES_PER_CITY - 1
            if k == 0 and city in twin_cities:
                line = twin_line
                lines[city.name].add(line)
            else:
                line = fresh_line(city)
            lat, lon = _point(rng, city, 12.0, 14.0) if suburb else _point(rng, city, 0.4, 3.0)
            homes.append(GeoHome(f"ADR-{h:04d}", line, city.name, format_address(line, city), lat, lon, suburb))
    return Geography(tuple(businesses), tuple(homes), twin_line)


def _replace(b: GeoBusiness, **changes: object) -> GeoBusiness:
    from dataclasses import replace

    return replace(b, **changes)  # type: ignore[arg-type]
