"""Vehicle domain: tool count, mode-gated failures (state unchanged), workflows."""

from __future__ import annotations

from typing import Any

from servers import PAPER_TOOL_COUNTS
from servers.kit import DomainRuntime
from servers.vehicle import domain
from servers.vehicle.state import KWH_PER_KM
from tests.servers.harness import fails, new_sid, ok, snapshot


def fleet(rt: DomainRuntime, sid: str, seed: int) -> list[dict[str, Any]]:
    return ok(rt, sid, seed, "vehicle_list_fleet", {})


def pick(rows: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    """The guaranteed archetypes of every seeded world."""
    preds = {
        "ready": lambda v: v["powertrain"] != "electric" and v["ignition"] == "off" and v["all_doors_locked"]
        and v["energy_percent"] >= 50,
        "empty": lambda v: v["energy_percent"] == 0,
        "ev_plugged": lambda v: v["plugged_in"] and not v["charging"] and v["energy_percent"] < 70
        and v["ignition"] == "off",
        "ev_low": lambda v: v["powertrain"] == "electric" and not v["plugged_in"] and 0 < v["energy_percent"] < 15
        and v["ignition"] == "off",
    }
    return next(v for v in rows if preds[kind](v))


# ---------------------------------------------------------------- (1) tool count, (2) smoke coverage
def test_exactly_twenty_user_tools_and_named_discovery(rt: DomainRuntime) -> None:
    assert len(domain.user_tools) == PAPER_TOOL_COUNTS["vehicle"] == 20
    assert len(rt.table.openai_tools()) == 20
    discovery = [s.name for s in domain.tools.values() if s.kind == "discovery"]
    assert 2 <= len(discovery) <= 4 and all(n.startswith("vehicle_") for n in discovery)
    assert all(s.consumes or s.produces or s.requires for s in domain.user_tools)
    assert rt.table.sensitive_params("unlock_vehicle_doors") == ["security_pin"]


def test_world_archetypes_exist_for_many_seeds() -> None:
    for seed in range(12):
        rows = domain.new_world(seed).snapshot()["vehicles"]
        kinds = [(v["powertrain"], v["energy_percent"], (v["charging"] or {}).get("plugged_in")) for v in rows.values()]
        assert any(e == 0 for _, e, _ in kinds)
        assert any(p == "electric" and plug for p, _, plug in kinds)
        assert 7 <= len(rows) <= 10


# ---------------------------------------------------------------- (3) realistic failures leave state alone
def test_failures_on_a_parked_car(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    rows = fleet(rt, sid, seed)
    car, empty, ev_low = pick(rows, "ready"), pick(rows, "empty"), pick(rows, "ev_low")
    vid = car["vehicle_id"]
    bad_pin = "0000" if car["remote_pin"] != "0000" else "1111"
    fails(rt, sid, seed, "get_vehicle_status", {"vehicle_id": "VEH-9999"}, "unknown vehicle_id")
    fails(rt, sid, seed, "start_engine", {"vehicle_id": empty["vehicle_id"]}, "fuel tank is empty")
    fails(rt, sid, seed, "shift_gear", {"vehicle_id": vid, "gear": "drive"}, "engine must be running")
    fails(rt, sid, seed, "set_parking_brake", {"vehicle_id": vid, "engaged": False}, "engine must be running")
    fails(rt, sid, seed, "set_parking_brake", {"vehicle_id": vid, "engaged": True}, "already engaged")
    fails(rt, sid, seed, "set_vehicle_speed", {"vehicle_id": vid, "speed_kmh": 30}, "engine must be running")
    fails(rt, sid, seed, "unlock_vehicle_doors", {"vehicle_id": vid, "security_pin": bad_pin},
          "incorrect security_pin", "remote-access PIN")
    fails(rt, sid, seed, "lock_vehicle_doors", {"vehicle_id": vid}, "already locked")
    fails(rt, sid, seed, "operate_trunk", {"vehicle_id": vid, "action": "open"}, "is locked", "unlock")
    fails(rt, sid, seed, "operate_trunk", {"vehicle_id": vid, "action": "close"}, "already closed")
    fails(rt, sid, seed, "set_vehicle_window", {"vehicle_id": vid, "window": "all", "open_percent": 50},
          "ignition is off")
    fails(rt, sid, seed, "set_vehicle_lights", {"vehicle_id": vid, "headlights": "on"}, "ignition is off")
    fails(rt, sid, seed, "set_cabin_climate", {"vehicle_id": vid, "temperature": 35, "unit": "C"},
          "out of range", "16-30 C")
    fails(rt, sid, seed, "set_cabin_climate", {"vehicle_id": vid, "temperature": 90, "unit": "F"},
          "out of range", "61-86 F")
    fails(rt, sid, seed, "set_cabin_climate", {"vehicle_id": vid, "ac_on": True}, "engine must be running")
    fails(rt, sid, seed, "set_cabin_climate", {"vehicle_id": vid}, "nothing to change")
    fails(rt, sid, seed, "control_ev_charging", {"vehicle_id": vid, "action": "start"},
          "not an electric vehicle")
    fails(rt, sid, seed, "control_ev_charging", {"vehicle_id": ev_low["vehicle_id"], "action": "start"},
          "not plugged in")
    fails(rt, sid, seed, "set_vehicle_destination", {"vehicle_id": vid, "destination": "Atlantis Resort"},
          "unknown destination", "destination")
    fails(rt, sid, seed, "set_vehicle_destination", {"vehicle_id": vid, "destination": car["location_place_id"]},
          "already at")
    fails(rt, sid, seed, "start_route_guidance", {"vehicle_id": vid}, "no destination set")
    fails(rt, sid, seed, "cancel_route_guidance", {"vehicle_id": vid}, "no route to cancel")
    fails(rt, sid, seed, "drive_active_route", {"vehicle_id": vid}, "no active route guidance")
    fails(rt, sid, seed, "stop_engine", {"vehicle_id": vid}, "engine must be running")
    fails(rt, sid, seed, "set_cruise_control", {"vehicle_id": vid, "enabled": False}, "not on")
    fails(rt, sid, seed, "list_connected_vehicles", {"owner_name": "Nobody Atall"}, "no vehicle owner")
    # a destination can be planned with the engine off, but guidance needs it running
    place = ok(rt, sid, seed, "search_navigation_places", {"vehicle_id": vid, "category": "restaurant"})[0]
    ok(rt, sid, seed, "set_vehicle_destination", {"vehicle_id": vid, "destination": place["place_id"]})
    fails(rt, sid, seed, "start_route_guidance", {"vehicle_id": vid}, "engine must be running")


def test_failures_while_driving(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    car = pick(fleet(rt, sid, seed), "ready")
    v = {"vehicle_id": car["vehicle_id"]}
    ok(rt, sid, seed, "start_engine", v)
    fails(rt, sid, seed, "start_engine", v, "already running")
    fails(rt, sid, seed, "shift_gear", {**v, "gear": "drive"}, "parking brake is engaged")
    fails(rt, sid, seed, "shift_gear", {**v, "gear": "park"}, "already in park", "gear")
    fails(rt, sid, seed, "set_vehicle_speed", {**v, "speed_kmh": 30}, "shift into drive")
    ok(rt, sid, seed, "set_parking_brake", {**v, "engaged": False})
    ok(rt, sid, seed, "shift_gear", {**v, "gear": "reverse"})
    fails(rt, sid, seed, "set_vehicle_speed", {**v, "speed_kmh": 30}, "reverse is limited to 15")
    fails(rt, sid, seed, "set_cruise_control", {**v, "enabled": True}, "only works in drive")
    ok(rt, sid, seed, "shift_gear", {**v, "gear": "drive"})
    ok(rt, sid, seed, "set_vehicle_speed", {**v, "speed_kmh": 25})
    fails(rt, sid, seed, "set_cruise_control", {**v, "enabled": True}, "at least 40 km/h")
    fails(rt, sid, seed, "shift_gear", {**v, "gear": "park"}, "bring the vehicle to a stop")
    fails(rt, sid, seed, "shift_gear", {**v, "gear": "reverse"}, "bring the vehicle to a stop")
    fails(rt, sid, seed, "set_parking_brake", {**v, "engaged": True}, "stop first")
    fails(rt, sid, seed, "unlock_vehicle_doors", {**v, "security_pin": car["remote_pin"]}, "must be stopped in park")
    fails(rt, sid, seed, "operate_trunk", {**v, "action": "open"}, "must be stopped in park")
    fails(rt, sid, seed, "stop_engine", v, "must be stopped in park")
    ok(rt, sid, seed, "set_vehicle_speed", {**v, "speed_kmh": 100})
    ok(rt, sid, seed, "set_cruise_control", {**v, "enabled": True})
    fails(rt, sid, seed, "set_cruise_control", {**v, "enabled": True}, "already holding 100")
    fails(rt, sid, seed, "set_cruise_control", {**v, "enabled": False, "target_speed_kmh": 90},
          "only applies when enabling")
    out = ok(rt, sid, seed, "set_vehicle_speed", {**v, "speed_kmh": 80})
    assert out["cruise_control_cancelled"] is True
    assert ok(rt, sid, seed, "get_vehicle_status", v)["cruise_control"] == {"enabled": False, "target_speed_kmh": None}


def test_range_trunk_and_cable_gates(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    rows = fleet(rt, sid, seed)
    ev_low, ev, car = pick(rows, "ev_low"), pick(rows, "ev_plugged"), pick(rows, "ready")
    far = next(p for p in ok(rt, sid, seed, "vehicle_list_places", {"category": "park"})
               if abs(p["x_km"]) + abs(p["y_km"]) > 150)
    low = {"vehicle_id": ev_low["vehicle_id"]}
    ok(rt, sid, seed, "start_engine", low)
    dest = ok(rt, sid, seed, "set_vehicle_destination", {**low, "destination": far["name"]})
    assert dest["reachable_on_current_range"] is False and "warning" in dest
    ok(rt, sid, seed, "start_route_guidance", low)
    fails(rt, sid, seed, "start_route_guidance", low, "already active")
    fails(rt, sid, seed, "drive_active_route", low, "shift into drive")
    ok(rt, sid, seed, "set_parking_brake", {**low, "engaged": False})
    ok(rt, sid, seed, "shift_gear", {**low, "gear": "drive"})
    fails(rt, sid, seed, "drive_active_route", low, "insufficient range", "charge first")
    # a plugged-in EV cannot leave park; the cable only releases once charging stopped
    e = {"vehicle_id": ev["vehicle_id"]}
    ok(rt, sid, seed, "start_engine", e)
    ok(rt, sid, seed, "set_parking_brake", {**e, "engaged": False})
    fails(rt, sid, seed, "shift_gear", {**e, "gear": "drive"}, "charging cable is still connected")
    ok(rt, sid, seed, "control_ev_charging", {**e, "action": "start"})
    fails(rt, sid, seed, "control_ev_charging", {**e, "action": "start"}, "already charging")
    fails(rt, sid, seed, "control_ev_charging", {**e, "action": "release_cable"}, "stop charging first")
    fails(rt, sid, seed, "control_ev_charging", {**e, "action": "stop", "charge_limit_percent": 90},
          "only applies with action start")
    ok(rt, sid, seed, "control_ev_charging", {**e, "action": "stop"})
    fails(rt, sid, seed, "control_ev_charging", {**e, "action": "stop"}, "is not charging")
    if ev["energy_percent"] >= 50:
        fails(rt, sid, seed, "control_ev_charging", {**e, "action": "start", "charge_limit_percent": 50},
              "at or above the charge limit")
    ok(rt, sid, seed, "control_ev_charging", {**e, "action": "release_cable"})
    ok(rt, sid, seed, "shift_gear", {**e, "gear": "drive"})
    # an open trunk blocks locking and driving
    c = {"vehicle_id": car["vehicle_id"]}
    ok(rt, sid, seed, "unlock_vehicle_doors", {**c, "security_pin": car["remote_pin"], "doors": ["driver"]})
    fails(rt, sid, seed, "unlock_vehicle_doors", {**c, "security_pin": car["remote_pin"], "doors": ["driver"]},
          "already unlocked")
    ok(rt, sid, seed, "operate_trunk", {**c, "action": "open"})
    fails(rt, sid, seed, "lock_vehicle_doors", c, "trunk is open")
    ok(rt, sid, seed, "start_engine", c)
    ok(rt, sid, seed, "set_parking_brake", {**c, "engaged": False})
    fails(rt, sid, seed, "shift_gear", {**c, "gear": "drive"}, "trunk is open")
    fails(rt, sid, seed, "set_cabin_climate", {**c, "ac_on": True, "fan_speed": 0}, "fan_speed")


# ---------------------------------------------------------------- (4) multi-step workflows
def test_drive_workflow_moves_the_car_and_charges_an_ev_meanwhile(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    rows = fleet(rt, sid, seed)
    car, ev = pick(rows, "ready"), pick(rows, "ev_plugged")
    v = {"vehicle_id": car["vehicle_id"]}
    before = ok(rt, sid, seed, "get_vehicle_status", v)
    ok(rt, sid, seed, "control_ev_charging", {"vehicle_id": ev["vehicle_id"], "action": "start"})
    airport = ok(rt, sid, seed, "search_navigation_places", {**v, "category": "airport"})[0]
    ok(rt, sid, seed, "set_vehicle_destination", {**v, "destination": airport["name"].lower()})
    ok(rt, sid, seed, "start_engine", v)
    ok(rt, sid, seed, "start_route_guidance", v)
    ok(rt, sid, seed, "set_parking_brake", {**v, "engaged": False})
    ok(rt, sid, seed, "shift_gear", {**v, "gear": "drive"})
    trip = ok(rt, sid, seed, "drive_active_route", v)
    after = ok(rt, sid, seed, "get_vehicle_status", v)
    assert after["location"]["place_id"] == airport["place_id"]
    assert after["odometer_km"] == round(before["odometer_km"] + airport["distance_km"], 1)
    assert after["fuel_percent"] < before["fuel_percent"] and after["speed_kmh"] == 0
    assert after["navigation"]["destination_place_id"] is None and after["as_of"] > before["as_of"]
    snap = rt.call("vehicle_session_snapshot", {}, sid, seed).json()
    assert snap["trips"][trip["trip_id"]]["to_place_id"] == airport["place_id"]
    ev_after = snap["vehicles"][ev["vehicle_id"]]
    assert ev_after["energy_percent"] > ev["energy_percent"]
    # the round trip back home is planned from the new location
    home = ok(rt, sid, seed, "set_vehicle_destination", {**v, "destination": before["location"]["place_id"]})
    assert home["distance_km"] == airport["distance_km"] and home["guidance_active"] is False


def test_climate_units_and_engine_off_side_effects(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 4
    car = pick(fleet(rt, sid, seed), "ready")
    v = {"vehicle_id": car["vehicle_id"]}
    ok(rt, sid, seed, "start_engine", v)
    out = ok(rt, sid, seed, "set_cabin_climate", {**v, "temperature": 72, "unit": "F", "ac_on": True,
                                                 "passenger_seat_heat": 3, "defrost_rear": True})
    assert out["climate"]["temperature"] == 72 and out["climate"]["unit"] == "F" and out["climate"]["fan_speed"] >= 1
    assert rt.call("vehicle_session_snapshot", {}, sid, seed).json()["vehicles"][v["vehicle_id"]]["climate"][
        "temperature_c"] == 22.0
    ok(rt, sid, seed, "stop_engine", {**v, "keep_accessory_power": True})
    status = ok(rt, sid, seed, "get_vehicle_status", v)
    assert status["ignition"] == "accessory" and status["climate"]["ac_on"] is False
    assert status["climate"]["seat_heat"]["front_passenger"] == 0 and status["climate"]["temperature"] == 72
    ok(rt, sid, seed, "set_vehicle_window", {**v, "window": "all", "open_percent": 100})  # accessory power suffices
    fails(rt, sid, seed, "set_vehicle_window", {**v, "window": "rear_left", "open_percent": 100}, "already 100% open")
    ok(rt, sid, seed, "set_vehicle_lights", {**v, "hazards_on": True})
    fails(rt, sid, seed, "set_vehicle_lights", {**v, "hazards_on": True}, "already set")


# ---------------------------------------------------------------- (5) determinism
def test_unique_values_and_owner_search(rt: DomainRuntime) -> None:
    sid = new_sid()
    cats = {r["value"] for r in ok(rt, sid, 0, "vehicle_get_unique_values", {"field": "place_category"})}
    assert {"home", "charging_station", "airport"} <= cats
    owners = ok(rt, sid, 0, "vehicle_search_owners", {})
    assert all(o["vehicle_ids"] for o in owners)


# ---------------------------------------------------------------- (6) the session clock
def test_charging_follows_the_clock_and_stops_at_the_limit(rt: DomainRuntime) -> None:
    snaps = []
    for _ in range(2):  # the same calls replayed on a fresh session give the same state
        sid, seed = new_sid(), 0
        ev = pick(fleet(rt, sid, seed), "ev_plugged")
        e = {"vehicle_id": ev["vehicle_id"]}
        start = ok(rt, sid, seed, "control_ev_charging", {**e, "action": "start", "charge_limit_percent": 90})
        v = domain.new_world(seed).snapshot()["vehicles"][ev["vehicle_id"]]
        rate = v["charging"]["charger_kw"] / 60 / (v["full_range_km"] * KWH_PER_KM) * 100  # % per minute
        ok(rt, sid, seed, "vehicle_session_advance_clock", {"minutes": 59})
        level = ok(rt, sid, seed, "get_vehicle_status", e)["battery_percent"]  # one hour after the start
        assert level == round(min(90.0, start["battery_percent"] + 60 * rate), 1)
        assert ok(rt, sid, seed, "get_vehicle_status", e)["charging"]["charging"] is True
        ok(rt, sid, seed, "vehicle_session_advance_clock", {"minutes": start["estimated_minutes_to_limit"]})
        status = ok(rt, sid, seed, "get_vehicle_status", e)
        assert status["battery_percent"] == 90 and status["charging"]["charging"] is False
        fails(rt, sid, seed, "control_ev_charging", {**e, "action": "stop"}, "is not charging")
        fails(rt, sid, seed, "control_ev_charging", {**e, "action": "start"}, "at or above the charge limit of 90%")
        snaps.append(snapshot(rt, sid, seed))
    assert snaps[0] == snaps[1]


def test_stopping_keeps_the_charge_gained_so_far(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    ev = pick(fleet(rt, sid, seed), "ev_plugged")
    e = {"vehicle_id": ev["vehicle_id"]}
    ok(rt, sid, seed, "control_ev_charging", {**e, "action": "start"})
    ok(rt, sid, seed, "vehicle_session_advance_clock", {"minutes": 30})
    stopped = ok(rt, sid, seed, "control_ev_charging", {**e, "action": "stop"})
    assert stopped["battery_percent"] > ev["energy_percent"]
    ok(rt, sid, seed, "vehicle_session_advance_clock", {"minutes": 120})
    assert ok(rt, sid, seed, "get_vehicle_status", e)["battery_percent"] == stopped["battery_percent"]


# ---------------------------------------------------------------- layout: listing order and tool modules
USER_TOOL_ORDER = [
    "list_connected_vehicles", "get_vehicle_status", "lock_vehicle_doors", "unlock_vehicle_doors",
    "start_engine", "stop_engine", "shift_gear", "set_parking_brake", "set_vehicle_speed",
    "set_cruise_control", "set_cabin_climate", "set_vehicle_window", "operate_trunk", "set_vehicle_lights",
    "control_ev_charging", "search_navigation_places", "set_vehicle_destination", "start_route_guidance",
    "cancel_route_guidance", "drive_active_route",
]


def test_user_tool_order_is_pinned() -> None:
    """The listing order the model sees is pinned (where each tool lives is checked for every domain
    by ``test_contract``)."""
    assert [t.name for t in domain.user_tools] == USER_TOOL_ORDER
