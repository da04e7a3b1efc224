"""Shared geography: the cities every domain places things in, so worlds agree across servers.

Maps geocodes and routes within these cities; food delivery, retail stores, travel bookings and
marketplace sellers use the same names, airport codes and time zones. Coordinates are the real city
centres (public facts), so distances between domains' places are consistent.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class City:
    name: str
    region: str  # state / province code
    country: str  # ISO 3166-1 alpha-2
    lat: float
    lon: float
    timezone: str  # IANA name
    airport: str  # main IATA code


CITIES: tuple[City, ...] = (
    City("New York", "NY", "US", 40.7128, -74.0060, "America/New_York", "JFK"),
    City("Boston", "MA", "US", 42.3601, -71.0589, "America/New_York", "BOS"),
    City("Chicago", "IL", "US", 41.8781, -87.6298, "America/Chicago", "ORD"),
    City("Austin", "TX", "US", 30.2672, -97.7431, "America/Chicago", "AUS"),
    City("Denver", "CO", "US", 39.7392, -104.9903, "America/Denver", "DEN"),
    City("Seattle", "WA", "US", 47.6062, -122.3321, "America/Los_Angeles", "SEA"),
    City("San Francisco", "CA", "US", 37.7749, -122.4194, "America/Los_Angeles", "SFO"),
    City("Los Angeles", "CA", "US", 34.0522, -118.2437, "America/Los_Angeles", "LAX"),
    City("Miami", "FL", "US", 25.7617, -80.1918, "America/New_York", "MIA"),
    City("Atlanta", "GA", "US", 33.7490, -84.3880, "America/New_York", "ATL"),
    City("Toronto", "ON", "CA", 43.6532, -79.3832, "America/Toronto", "YYZ"),
    City("London", "ENG", "GB", 51.5074, -0.1278, "Europe/London", "LHR"),
    City("Paris", "IDF", "FR", 48.8566, 2.3522, "Europe/Paris", "CDG"),
    City("Berlin", "BE", "DE", 52.5200, 13.4050, "Europe/Berlin", "BER"),
    City("Tokyo", "13", "JP", 35.6762, 139.6503, "Asia/Tokyo", "HND"),
    City("Sydney", "NSW", "AU", -33.8688, 151.2093, "Australia/Sydney", "SYD"),
)

CITY_BY_NAME: dict[str, City] = {c.name: c for c in CITIES}


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance in km."""
    from math import asin, cos, radians, sin, sqrt

    dlat, dlon = radians(lat2 - lat1), radians(lon2 - lon1)
    a = sin(dlat / 2) ** 2 + cos(radians(lat1)) * cos(radians(lat2)) * sin(dlon / 2) ** 2
    return 2 * 6371.0 * asin(sqrt(a))
