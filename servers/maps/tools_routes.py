"""Maps routing tools: one route by a chosen mode, and every mode side by side."""

from __future__ import annotations

from datetime import datetime

from servers.kit import IsoDateTime, ToolError, now, tool
from servers.maps.hours import zone
from servers.maps.routing import MODES, plan
from servers.maps.state import MapsState, Mode, Point, resolve_point


def _departure(s: MapsState, origin: Point, depart_at: str | None) -> datetime:
    if depart_at is None:
        return now(s)
    try:
        parsed = datetime.fromisoformat(depart_at.replace("Z", "+00:00"))
    except ValueError:
        raise ToolError(f"invalid depart_at '{depart_at}': expected YYYY-MM-DDTHH:MM", field="depart_at") from None
    when = parsed if parsed.tzinfo else parsed.replace(tzinfo=zone(origin.city))
    if when < now(s).replace(second=0):
        current = now(s).astimezone(zone(origin.city)).replace(tzinfo=None).isoformat(timespec="minutes")
        raise ToolError(f"depart_at {depart_at} is in the past (it is now {current} in {origin.city}); give a "
                        "future time or omit it to leave now", field="depart_at")
    return when


@tool(consumes=("place_id", "address"), read_only=True)
def get_map_route(s: MapsState, origin: str, destination: str, mode: Mode = "drive",
                  depart_at: IsoDateTime | None = None) -> dict:
    """Directions from one location to another: distance, travel time, arrival time and steps. Driving
    times include traffic for the hour of departure. Locations can be addresses, place names, place ids,
    "home", "work" or "lat,lon".

    Args:
        origin: Where the trip starts.
        destination: Where the trip ends.
        mode: How to travel: drive, walk, bike or transit.
        depart_at: When to leave, e.g. 2026-06-02T08:30 (origin's local time); omit to leave now.
    """
    a = resolve_point(s, origin, "origin")
    b = resolve_point(s, destination, "destination")
    return plan(a, b, mode, _departure(s, a, depart_at))


@tool(consumes=("place_id", "address"), read_only=True)
def compare_route_travel_modes(s: MapsState, origin: str, destination: str,
                               depart_at: IsoDateTime | None = None) -> dict:
    """Compare driving, transit, cycling and walking between two locations and say which is fastest;
    modes that cannot make the trip are listed with the reason.

    Args:
        origin: Where the trip starts (address, place name, place id, "home", "work" or "lat,lon").
        destination: Where the trip ends (same forms as origin).
        depart_at: When to leave, e.g. 2026-06-02T08:30 (origin's local time); omit to leave now.
    """
    a = resolve_point(s, origin, "origin")
    b = resolve_point(s, destination, "destination")
    depart = _departure(s, a, depart_at)
    options, first_error = [], None
    for mode in MODES:
        try:
            r = plan(a, b, mode, depart)
        except ToolError as exc:
            if exc.field == "destination":  # same place, or another continent: no mode helps
                raise
            first_error = first_error or exc
            options.append({"mode": mode, "available": False, "reason": str(exc)})
            continue
        options.append({"mode": mode, "available": True, "distance_km": r["distance_km"],
                        "duration_minutes": r["duration_minutes"], "arrive_at": r["arrive_at"],
                        "traffic": r["traffic"]})
    usable = [o for o in options if o["available"]]
    fastest = min(usable, key=lambda o: (o["duration_minutes"], MODES.index(o["mode"])))
    return {"origin": a.view(), "destination": b.view(), "fastest_mode": fastest["mode"], "options": options}
