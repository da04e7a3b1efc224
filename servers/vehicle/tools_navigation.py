"""Vehicle tools: destination search, route guidance and driving a route.

A destination can be set any time (it is just a plan), but guidance starts only with the engine
running, and a route can only be driven in drive with the parking brake released and enough range.
Driving a route moves the session clock on by the trip time, so EVs charging elsewhere gain charge
meanwhile (the domain's ``on_time`` hook runs for the trip).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from pydantic import Field

from servers.kit import ToolError, iso, new_id, tool
from servers.kit.clock import spend
from servers.vehicle.state import (
    Navigation,
    Place,
    PlaceCategory,
    Trip,
    Vehicle,
    VehicleState,
    eta_minutes,
    get_vehicle,
    navigation_view,
    need_engine_on,
    precondition,
    range_km,
    road_distance_km,
)

Limit = Annotated[int, Field(ge=1, le=50)]
OIL_KM_PER_PERCENT = 150


def _resolve_place(s: VehicleState, destination: str) -> Place:
    """A place id, an exact name, or a name fragment matching exactly one known place."""
    text = destination.strip()
    place = s.places.get(text.upper())
    if place is not None:
        return place
    needle = text.lower()
    exact = [p for p in s.places.values() if p.name.lower() == needle]
    if exact:
        return exact[0]
    partial = [p for p in s.places.values() if needle and needle in p.name.lower()]
    if len(partial) == 1:
        return partial[0]
    if partial:
        names = ", ".join(f"{p.name} ({p.place_id})" for p in partial[:5])
        raise ToolError(f"destination '{destination}' is ambiguous: {names}", field="destination",
                        code="ambiguous")
    raise ToolError(f"unknown destination '{destination}': not a known place (use search_navigation_places)",
                    field="destination", code="not_found")


@tool(produces=("place_id",), read_only=True)
def search_navigation_places(s: VehicleState, query: str | None = None, category: PlaceCategory | None = None,
                             vehicle_id: str | None = None, limit: Limit = 10) -> list:
    """Search the navigation system's known places by name and/or category. With a vehicle, results are
    sorted by road distance from it and include the ETA and whether its current range reaches them.

    Args:
        query: Case-insensitive part of the place name or address.
        category: Only places of this category.
        vehicle_id: Measure distances from this vehicle's current location.
        limit: Maximum number of places to return.
    """
    v = get_vehicle(s, vehicle_id) if vehicle_id is not None else None
    needle = (query or "").strip().lower()
    rows = []
    for p in s.places.values():
        if category is not None and p.category != category:
            continue
        if needle and needle not in p.name.lower() and needle not in p.address.lower():
            continue
        row: dict = {"place_id": p.place_id, "name": p.name, "category": p.category, "address": p.address}
        if v is not None:
            dist = 0.0 if p.place_id == v.location_place_id else road_distance_km(s.places[v.location_place_id], p)
            row.update(distance_km=dist, eta_minutes=eta_minutes(dist) if dist else 0,
                       reachable_on_current_range=dist <= range_km(v))
        rows.append(row)
    rows.sort(key=lambda r: (r["distance_km"], r["name"]) if v is not None else (r["name"], r["place_id"]))
    return rows[:limit]


@tool(consumes=("vehicle_id", "place_id"), establishes=("destination_set",))
def set_vehicle_destination(s: VehicleState, vehicle_id: str, destination: str) -> dict:
    """Set (or replace) the navigation destination and compute the route; works with the engine off.
    Active guidance reroutes to the new destination.

    Args:
        vehicle_id: The vehicle's id.
        destination: A known place: its place id (e.g. PLC-0004) or its name.
    """
    v = get_vehicle(s, vehicle_id)
    place = _resolve_place(s, destination)
    if place.place_id == v.location_place_id:
        raise ToolError(f"{vehicle_id} is already at {place.name}", field="destination", code="illegal_state")
    dist = road_distance_km(s.places[v.location_place_id], place)
    v = s.vehicles.edit(vehicle_id)
    v.navigation = Navigation(place.place_id, dist, eta_minutes(dist), v.navigation.guidance_active)
    reachable = dist <= range_km(v)
    out = {"vehicle_id": vehicle_id, **navigation_view(s, v), "range_km": range_km(v),
           "reachable_on_current_range": reachable}
    if not reachable:
        out["warning"] = f"route is {dist:g} km but the estimated range is {range_km(v)} km: refuel or charge first"
    return out


@tool(consumes=("vehicle_id",), requires=("engine_on", "destination_set"),
             establishes=("navigation_active",))
def start_route_guidance(s: VehicleState, vehicle_id: str) -> dict:
    """Start turn-by-turn guidance to the destination that is set. Needs the engine running.

    Args:
        vehicle_id: The vehicle's id.
    """
    v = get_vehicle(s, vehicle_id)
    if v.navigation.destination_place_id is None:
        raise precondition(f"no destination set for {vehicle_id}: call set_vehicle_destination first")
    if v.navigation.guidance_active:
        raise ToolError(f"guidance is already active in {vehicle_id}", field="vehicle_id", code="illegal_state")
    need_engine_on(v, "start route guidance")
    v = s.vehicles.edit(vehicle_id)
    v.navigation.guidance_active = True
    return {"vehicle_id": vehicle_id, **navigation_view(s, v)}


@tool(consumes=("vehicle_id",), requires=("destination_set",))
def cancel_route_guidance(s: VehicleState, vehicle_id: str) -> dict:
    """Cancel the route: clear the destination and stop any active guidance.

    Args:
        vehicle_id: The vehicle's id.
    """
    v = get_vehicle(s, vehicle_id)
    if v.navigation.destination_place_id is None:
        raise ToolError(f"{vehicle_id} has no route to cancel", field="vehicle_id", code="illegal_state")
    cancelled = navigation_view(s, v)
    s.vehicles.edit(vehicle_id).navigation = Navigation()
    return {"vehicle_id": vehicle_id, "cancelled": cancelled, "navigation": navigation_view(s, s.vehicles[vehicle_id])}


def _arrive(v: Vehicle, dest: str, dist: float, used: float) -> None:
    v.odometer_km = round(v.odometer_km + dist, 1)
    v.energy_percent = round(max(0.0, v.energy_percent - used), 1)
    if v.maintenance.oil_life_percent is not None:
        v.maintenance.oil_life_percent = max(0, v.maintenance.oil_life_percent - int(dist // OIL_KM_PER_PERCENT))
    v.location_place_id = dest
    v.speed_kmh = 0
    v.cruise.enabled, v.cruise.target_speed_kmh = False, None
    v.navigation = Navigation()


@tool(consumes=("vehicle_id",), produces=("trip_id",),
             requires=("engine_on", "gear_drive", "parking_brake_released", "navigation_active"))
def drive_active_route(s: VehicleState, vehicle_id: str) -> dict:
    """Drive the active guided route to its destination. Needs guidance active, drive selected, the
    parking brake released and enough range. On arrival the vehicle is stopped (still in drive), the
    route is cleared, and odometer, fuel or battery and the clock advance.

    Args:
        vehicle_id: The vehicle's id.
    """
    v = get_vehicle(s, vehicle_id)
    nav = v.navigation
    if nav.destination_place_id is None or not nav.guidance_active:
        raise precondition(f"no active route guidance in {vehicle_id}: set a destination and call "
                           "start_route_guidance first")
    need_engine_on(v, "drive the route")
    if v.gear != "drive":
        raise precondition(f"cannot drive the route in {v.gear}: shift into drive first (shift_gear)")
    if v.parking_brake_engaged:
        raise precondition("cannot drive with the parking brake engaged: release it first (set_parking_brake)")
    dist = road_distance_km(s.places[v.location_place_id], s.places[nav.destination_place_id])
    if dist > range_km(v):
        fuel = "charge" if v.powertrain == "electric" else "refuel"
        raise ToolError(f"insufficient range: the route is {dist:g} km but {vehicle_id} has about "
                        f"{range_km(v)} km left; {fuel} first", field="vehicle_id", code="insufficient_range")
    minutes = eta_minutes(dist)
    used = round(dist / v.full_range_km * 100, 1)
    origin, dest = v.location_place_id, nav.destination_place_id
    departed, arrived = (iso(t) for t in spend(s, timedelta(minutes=minutes)))
    v = s.vehicles.edit(vehicle_id)
    _arrive(v, dest, dist, used)
    tid = new_id(s.counters, "TRP")
    s.trips.put(tid, Trip(tid, vehicle_id, origin, dest, dist, minutes, used, departed, arrived))
    return {"trip_id": tid, "vehicle_id": vehicle_id, "arrived_at_place": s.places[dest].name,
            "distance_km": dist, "duration_minutes": minutes, "arrived_at": arrived,
            "energy_used_percent": used, "range_km": range_km(v), "odometer_km": v.odometer_km,
            "gear": v.gear, "speed_kmh": 0}
