"""Route math: road distance per mode, deterministic traffic from the local clock hour, and the
feasibility rules (no route across continents, walking/cycling distance limits, transit only inside
one metro area, origin and destination must differ)."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from servers.kit import ToolError, iso
from servers.kit.geo import CITY_BY_NAME, haversine_km
from servers.maps.data import CONTINENT
from servers.maps.hours import local_time
from servers.maps.state import Point

ROAD_FACTOR = {"drive": 1.3, "walk": 1.2, "bike": 1.25, "transit": 1.35}
SPEED_KMH = {"walk": 4.8, "bike": 15.0, "transit": 22.0, "drive": 34.0}
HIGHWAY_KMH = 95.0
MAX_KM = {"walk": 25.0, "bike": 80.0}
SAME_POINT_M = 25.0
MODES = ("drive", "transit", "bike", "walk")


def traffic(local: datetime) -> tuple[str, float]:
    """(label, slowdown factor) for driving at a local time: weekday rush hours are heavy."""
    h, weekend = local.hour, local.weekday() >= 5
    if not weekend and (7 <= h < 10 or 16 <= h < 19):
        return "heavy", 1.7
    if 10 <= h < 16 or (weekend and 11 <= h < 20) or (not weekend and 19 <= h < 21):
        return "moderate", 1.25
    return "light", 1.0


def _headway(local: datetime) -> int:
    h = local.hour
    if 7 <= h < 10 or 16 <= h < 19:
        return 6
    if 6 <= h < 22:
        return 10
    return 30


def _compass(a: Point, b: Point) -> str:
    dy = b.latitude - a.latitude
    dx = (b.longitude - a.longitude) * math.cos(math.radians(a.latitude))
    deg = (math.degrees(math.atan2(dx, dy)) + 360) % 360
    return ("north", "northeast", "east", "southeast", "south", "southwest", "west", "northwest")[
        int((deg + 22.5) // 45) % 8]


def plan(a: Point, b: Point, mode: str, depart: datetime) -> dict:
    """One route (distance, duration, arrival, steps) or a ToolError naming why none exists."""
    straight = haversine_km(a.latitude, a.longitude, b.latitude, b.longitude)
    if straight * 1000 < SAME_POINT_M:
        raise ToolError(f"origin and destination are the same location ({b.label}); pick a different destination",
                        field="destination")
    ca, cb = CITY_BY_NAME[a.city], CITY_BY_NAME[b.city]
    cont_a, cont_b = CONTINENT[ca.country], CONTINENT[cb.country]
    verb = {"drive": "driving", "walk": "walking", "bike": "cycling", "transit": "transit"}[mode]
    if cont_a != cont_b:
        raise ToolError(
            f"no {verb} route between {a.city} ({cont_a}) and {b.city} ({cont_b}): they are on different "
            "continents; book a flight instead", field="destination", code="no_route")
    km = round(straight * ROAD_FACTOR[mode], 1)
    if mode in MAX_KM and km > MAX_KM[mode]:
        raise ToolError(
            f"too far for a {verb} route: {km} km ({verb} routes are limited to {MAX_KM[mode]:.0f} km); use "
            "mode drive or transit", field="mode", code="no_route")
    if mode == "transit" and a.city != b.city:
        raise ToolError(
            f"no transit route between {a.city} and {b.city}: transit covers one metro area; use mode drive",
            field="mode", code="no_route")
    local = local_time(depart, a.city)
    label: str | None = None
    if mode == "drive":
        label, factor = traffic(local)
        city_km, highway_km = min(km, 30.0), max(0.0, km - 30.0)
        minutes = city_km / SPEED_KMH["drive"] * 60 * factor + highway_km / HIGHWAY_KMH * 60 * (1 + (factor - 1) / 4) + 3
    elif mode == "transit":
        minutes = _headway(local) / 2 + km / SPEED_KMH["transit"] * 60 + 5
    else:
        minutes = km / SPEED_KMH[mode] * 60
    minutes = max(1, math.ceil(minutes))
    arrive = depart + timedelta(minutes=minutes)
    heading = _compass(a, b)
    steps = [f"Head {heading} from {a.label}"]
    if mode == "transit":
        steps += [f"Walk to the nearest stop and board (a departure about every {_headway(local)} min)",
                  f"Ride {km:.1f} km toward {b.city}"]
    elif km > 30:
        steps += [f"Take the highway {heading} for {max(0.0, km - 30):.0f} km", f"Continue {min(km, 30):.1f} km on city streets"]
    else:
        steps += [f"Continue {km:.1f} km {heading}"]
    steps.append(f"Arrive at {b.label}")
    return {
        "mode": mode, "origin": a.view(), "destination": b.view(), "distance_km": km,
        "duration_minutes": minutes, "traffic": label,
        "depart_at": iso(local), "arrive_at": iso(local_time(arrive, b.city)), "steps": steps,
    }
