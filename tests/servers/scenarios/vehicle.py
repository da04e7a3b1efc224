"""Vehicle smoke scenario: an owner gets their car ready, drives to a nearby place and parks, then sets
an EV charging — succeeding once with every user-visible tool.

``call(name, args)`` performs a tool call on one session (over whatever transport the harness
chose), asserts it did not return an error, and returns the decoded JSON result.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


async def smoke(call: Call) -> None:
    fleet = await call("vehicle_list_fleet", {})
    car = next(v for v in fleet if v["powertrain"] != "electric" and v["ignition"] == "off"
               and v["all_doors_locked"] and v["energy_percent"] >= 50 and not v["trunk_open"])
    vid = car["vehicle_id"]
    mine = await call("list_connected_vehicles", {"owner_name": car["owner_name"]})
    assert vid in {v["vehicle_id"] for v in mine}
    status = await call("get_vehicle_status", {"vehicle_id": vid})
    assert status["gear"] == "park" and status["ignition"] == "off"

    # Load the trunk, lock up, start the car and make the cabin comfortable.
    await call("unlock_vehicle_doors", {"vehicle_id": vid, "security_pin": car["remote_pin"]})
    await call("operate_trunk", {"vehicle_id": vid, "action": "open"})
    await call("operate_trunk", {"vehicle_id": vid, "action": "close"})
    await call("lock_vehicle_doors", {"vehicle_id": vid})
    await call("start_engine", {"vehicle_id": vid})
    await call("set_cabin_climate", {"vehicle_id": vid, "temperature": 22, "unit": "C", "fan_speed": 3,
                                     "ac_on": True, "driver_seat_heat": 2})
    await call("set_vehicle_window", {"vehicle_id": vid, "window": "driver", "open_percent": 20})
    await call("set_vehicle_lights", {"vehicle_id": vid, "headlights": "on"})

    # Navigate to the nearest reachable place that is not a private home, and drive there.
    places = await call("search_navigation_places", {"vehicle_id": vid, "limit": 50})
    dest = next(p for p in places if p["category"] != "home" and p["distance_km"] > 0 and p["reachable_on_current_range"])
    await call("set_vehicle_destination", {"vehicle_id": vid, "destination": dest["name"]})
    await call("start_route_guidance", {"vehicle_id": vid})
    await call("set_parking_brake", {"vehicle_id": vid, "engaged": False})
    await call("shift_gear", {"vehicle_id": vid, "gear": "drive"})
    await call("set_vehicle_speed", {"vehicle_id": vid, "speed_kmh": 60})
    await call("set_cruise_control", {"vehicle_id": vid, "enabled": True, "target_speed_kmh": 70})
    trip = await call("drive_active_route", {"vehicle_id": vid})
    after = await call("get_vehicle_status", {"vehicle_id": vid})
    assert after["location"]["place_id"] == dest["place_id"] and trip["distance_km"] == dest["distance_km"]
    await call("shift_gear", {"vehicle_id": vid, "gear": "park"})
    await call("stop_engine", {"vehicle_id": vid})

    # Plan the way home, then change one's mind.
    await call("set_vehicle_destination", {"vehicle_id": vid, "destination": status["location"]["place_id"]})
    await call("cancel_route_guidance", {"vehicle_id": vid})

    # Top up an electric vehicle that is parked with its cable connected.
    ev = next(v for v in fleet if v["plugged_in"] and not v["charging"] and v["energy_percent"] < 90)
    await call("control_ev_charging", {"vehicle_id": ev["vehicle_id"], "action": "start", "charge_limit_percent": 90})
