"""Geocoding over the seeded geography: address text → one known address, and back.

Matching is token based, the way people type addresses: case, accents, commas and common
abbreviations (``St`` → ``Street``, ``Ave`` → ``Avenue``, ``Str.`` → ``Straße``) do not matter, and a
query matches a known address when every word of the query appears in it (its street line, city,
region, country, or the business at that address). One match is an answer; several are an
ambiguous address (the message lists candidates and asks for the house number and city); none is an
address not found. Food delivery geocodes customer addresses with these same functions, so an
address either domain accepts resolves to the same coordinates in both.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from servers.kit import ToolError
from servers.kit.geo import CITIES, CITY_BY_NAME, haversine_km
from servers.maps.data import COUNTRY_ALIASES
from servers.maps.geography import seed_geography

_ABBR = {"st": "street", "ave": "avenue", "av": "avenue", "rd": "road", "blvd": "boulevard", "dr": "drive",
         "ln": "lane", "pl": "place", "sq": "square", "pkwy": "parkway", "w": "west", "e": "east",
         "str": "strasse"}
_STOP = {"in", "at", "near", "the", "of", "and", "&", "-"}
_PUNCT = re.compile(r"[,.;:'\u2019\"()#/!?]")
REVERSE_MAX_M = 250.0
COVERAGE_KM = 60.0


def tokens(text: str) -> list[str]:
    """Normalised words of an address or query."""
    folded = unicodedata.normalize("NFKD", text.replace("ß", "ss").replace("ẞ", "ss"))
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch)).lower()
    out: list[str] = []
    for raw in _PUNCT.sub(" ", folded).split():
        parts = [p for p in raw.split("-") if p] if any(c.isalpha() for c in raw) and "-" in raw else [raw]
        for p in parts:
            p = _ABBR.get(p, p)
            if p.endswith("str") and len(p) > 5:
                p = p[:-3] + "strasse"
            out.append(p)
    return out


@dataclass(frozen=True)
class GeoEntry:
    """One geocodable address: a business's or a home's."""

    kind: str  # business | residential
    address_id: str | None
    place_id: str | None
    name: str | None
    address: str
    city: str
    formatted_address: str
    latitude: float
    longitude: float
    words: frozenset[str]

    def view(self) -> dict:
        city = CITY_BY_NAME[self.city]
        return {"formatted_address": self.formatted_address, "street": self.address, "city": self.city,
                "region": city.region, "country": city.country, "latitude": self.latitude,
                "longitude": self.longitude, "location_type": self.kind, "place_id": self.place_id,
                "place_name": self.name, "address_id": self.address_id}


def _words(*parts: str | None) -> frozenset[str]:
    return frozenset(w for p in parts if p for w in tokens(p))


@lru_cache(maxsize=32)
def address_book(seed: int) -> tuple[GeoEntry, ...]:
    """Every geocodable address of ``seed``'s world (businesses first, then homes)."""
    geo = seed_geography(seed)
    out: list[GeoEntry] = []
    for b in geo.businesses:
        city = CITY_BY_NAME[b.city]
        out.append(GeoEntry("business", None, b.place_id, b.name, b.address, b.city, b.formatted_address,
                            b.latitude, b.longitude,
                            _words(b.name, b.formatted_address, city.region) | set(COUNTRY_ALIASES[city.country])))
    for h in geo.homes:
        city = CITY_BY_NAME[h.city]
        out.append(GeoEntry("residential", h.address_id, None, None, h.address, h.city, h.formatted_address,
                            h.latitude, h.longitude,
                            _words(h.formatted_address, city.region) | set(COUNTRY_ALIASES[city.country])))
    return tuple(out)


def matches(seed: int, query: str) -> list[GeoEntry]:
    wanted = {w for w in tokens(query) if w not in _STOP}
    if not wanted:
        return []
    return [e for e in address_book(seed) if wanted <= e.words]


def geocode(seed: int, query: str, field: str) -> GeoEntry:
    """The single known address ``query`` names, or a ToolError (not found / ambiguous)."""
    found = matches(seed, query)
    if len(found) == 1:
        return found[0]
    if not found:
        raise ToolError(
            f"address not found: nothing matches '{query}'; give a street address with house number, street "
            "and city (e.g. '412 Oak Street, Boston') or the exact name of a place", field=field, code="not_found")
    shown = "; ".join(f"{e.name + ', ' if e.name else ''}{e.formatted_address}" for e in found[:5])
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    raise ToolError(
        f"ambiguous address '{query}': {len(found)} matches ({shown}{more}); be more specific — add the house "
        "number and the city", field=field, code="ambiguous")


def nearest_city(lat: float, lon: float) -> tuple[str, float]:
    best = min(CITIES, key=lambda c: haversine_km(lat, lon, c.lat, c.lon))
    return best.name, haversine_km(lat, lon, best.lat, best.lon)


def check_coverage(lat: float, lon: float, field: str) -> str:
    """The covered city a coordinate lies in, or a ToolError."""
    city, km = nearest_city(lat, lon)
    if km > COVERAGE_KM:
        raise ToolError(
            f"({lat}, {lon}) is outside the map's coverage: the nearest covered city is {city}, {km:.0f} km away "
            f"(covered cities: {', '.join(c.name for c in CITIES)})", field=field, code="not_found")
    return city


def reverse_geocode(seed: int, lat: float, lon: float, field: str = "latitude") -> tuple[GeoEntry, float]:
    """The known address nearest to a coordinate (within 250 m) and its distance in metres."""
    check_coverage(lat, lon, field)
    best = min(address_book(seed), key=lambda e: haversine_km(lat, lon, e.latitude, e.longitude))
    metres = haversine_km(lat, lon, best.latitude, best.longitude) * 1000
    if metres > REVERSE_MAX_M:
        raise ToolError(
            f"address not found: no street address within {REVERSE_MAX_M:.0f} m of ({lat}, {lon}); the nearest "
            f"known address is {best.formatted_address}, {metres / 1000:.2f} km away", field=field,
            code="not_found")
    return best, metres
