"""IoT devices domain: tool count, device-type/offline/range/lock/alarm/vacuum/scene/
automation failures (state unchanged), time-driven state (automations, temperatures, batteries,
vacuum runs, exit delay, energy), replay determinism."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from servers import PAPER_TOOL_COUNTS
from servers.iot_devices import domain
from servers.kit import DomainRuntime
from tests.servers.harness import assert_replays_alike, fails, new_sid, ok


class World:
    """The guaranteed archetypes of a seeded world, found through the discovery tools."""

    def __init__(self, rt: DomainRuntime, sid: str, seed: int) -> None:
        self.homes = {h["kind"]: h for h in ok(rt, sid, seed, "iot_devices_list_homes", {})}
        self.devices = ok(rt, sid, seed, "iot_devices_list_devices", {})

    def home(self, kind: str) -> str:
        return self.homes[kind]["home_id"]

    def dev(self, kind: str, dtype: str, name: str | None = None, **state: Any) -> dict[str, Any]:
        for d in self.devices:
            if d["home_id"] != self.home(kind) or d["type"] != dtype or (name is not None and d["name"] != name):
                continue
            if all(d["state"].get(k) == v if k in d["state"] else d.get(k) == v for k, v in state.items()):
                return d
        raise AssertionError(f"no {dtype} {name} {state} in the {kind}")

    def room(self, kind: str, name: str | None = None, floor: int | None = None) -> dict[str, Any]:
        return next(r for r in self.homes[kind]["rooms"]
                    if (name is None or r["name"] == name) and (floor is None or r["floor"] == floor))

    def scene(self, kind: str, name: str) -> dict[str, Any]:
        return next(sc for sc in self.homes[kind]["scenes"] if sc["name"] == name)

    def automation(self, kind: str, name: str) -> dict[str, Any]:
        return next(a for a in self.homes[kind]["automations"] if a["name"] == name)


def status(rt: DomainRuntime, sid: str, seed: int, device_id: str) -> dict[str, Any]:
    return ok(rt, sid, seed, "get_smart_device_status", {"device_id": device_id})


# ---------------------------------------------------------------- (1) tool count, (2) smoke coverage
def test_exactly_twenty_five_user_tools_and_named_discovery(rt: DomainRuntime) -> None:
    assert len(domain.user_tools) == PAPER_TOOL_COUNTS["iot_devices"] == 25
    assert len(rt.table.openai_tools()) == 25
    discovery = [s.name for s in domain.tools.values() if s.kind == "discovery"]
    assert 2 <= len(discovery) <= 4 and all(n.startswith("iot_devices_") for n in discovery)
    declared = [s for s in domain.user_tools if s.consumes or s.produces or s.requires]
    assert len(declared) >= 0.8 * len(domain.user_tools)
    assert rt.table.sensitive_params("unlock_smart_lock") == ["code"]
    assert rt.table.sensitive_params("manage_lock_access_code") == ["code"]
    assert rt.table.sensitive_params("set_home_security_mode") == ["code"]
    assert rt.table.schemas["unlock_smart_lock"]["properties"]["code"]["pattern"] == r"^\d{4,8}$"


def test_world_archetypes_exist_for_many_seeds(rt: DomainRuntime) -> None:
    for seed in range(10):
        w = World(rt, new_sid(), seed)
        assert set(w.homes) == {"house", "cabin", "apartment"} and 80 <= len(w.devices) <= 130
        w.dev("house", "plug", online=False)
        w.dev("house", "contact_sensor", "Living Room Window", open=True)
        w.dev("house", "contact_sensor", "Back Door", open=True)
        w.dev("house", "robot_vacuum", status="docked")
        w.dev("cabin", "lock", jammed=True)
        w.dev("cabin", "robot_vacuum", status="stuck")
        w.dev("cabin", "motion_sensor", online=False)
        w.dev("cabin", "water_heater", mode="vacation")
        w.dev("apartment", "thermostat", mode="off")
        w.dev("apartment", "robot_vacuum", bin_level=100)
        w.dev("apartment", "camera", privacy_mode=True)
        assert len(w.dev("apartment", "lock", "Front Door Lock")["state"]["codes"]) == 6
        assert not any(d["state"]["open"] for d in w.devices
                       if d["home_id"] == w.home("apartment") and d["type"] == "contact_sensor")
        assert w.homes["cabin"]["security_mode"] == "away"


# ---------------------------------------------------------------- (3) failure rules leave state alone
def test_unknown_ids_offline_and_unsupported(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    w = World(rt, sid, seed)
    fails(rt, sid, seed, "get_smart_device_status", {"device_id": "DEV-9999"}, "unknown device_id")
    fails(rt, sid, seed, "get_home_energy_usage", {"home_id": "HOME-99"}, "unknown home_id")
    fails(rt, sid, seed, "list_smart_devices", {"room_id": "RM-9999"}, "unknown room_id")
    fails(rt, sid, seed, "activate_home_scene", {"scene_id": "SCN-9999"}, "unknown scene_id")
    fails(rt, sid, seed, "update_home_automation", {"automation_id": "AUT-9999", "enabled": False},
          "unknown automation_id")
    tv = w.dev("house", "plug", online=False)
    fails(rt, sid, seed, "switch_smart_device_power", {"device_id": tv["device_id"], "on": True}, "is offline",
          "no Wi-Fi")
    thermo = w.dev("house", "thermostat")
    fails(rt, sid, seed, "switch_smart_device_power", {"device_id": thermo["device_id"], "on": False},
          "does not support switching power", "set_thermostat_mode")
    motion = w.dev("house", "motion_sensor")
    fails(rt, sid, seed, "set_blind_position", {"device_id": motion["device_id"], "position": 10},
          "does not support a position", "sensors only report")
    porch = w.dev("house", "light", "Porch Light")
    fails(rt, sid, seed, "adjust_smart_light", {"device_id": porch["device_id"], "brightness": 50},
          "does not support dimming", "brightness")
    white = w.dev("house", "light", "Primary Bedroom Ceiling Light")
    fails(rt, sid, seed, "adjust_smart_light", {"device_id": white["device_id"], "color": "red"},
          "does not support colors", "white-only")
    fails(rt, sid, seed, "adjust_smart_light", {"device_id": white["device_id"], "color_temperature_k": 3000},
          "white color temperatures")
    color = w.dev("house", "light", "Living Room Ceiling Light")
    fails(rt, sid, seed, "adjust_smart_light", {"device_id": color["device_id"], "color_temperature_k": 9000},
          "out of range", "2000-6500 K")
    fails(rt, sid, seed, "adjust_smart_light", {"device_id": color["device_id"], "color": "red",
                                                "color_temperature_k": 3000}, "not both")
    fails(rt, sid, seed, "adjust_smart_light", {"device_id": color["device_id"]}, "give a brightness")
    cam = w.dev("house", "camera", "Backyard Camera")
    fails(rt, sid, seed, "set_camera_settings", {"device_id": cam["device_id"], "recording": True},
          "continuous recording", "battery cameras")
    heater = w.dev("apartment", "water_heater")
    fails(rt, sid, seed, "set_water_heater", {"device_id": heater["device_id"], "mode": "heat_pump"},
          "heat-pump mode")
    off_light = next(d for d in w.devices if d["type"] == "light" and d["online"] and not d["state"]["on"])
    fails(rt, sid, seed, "switch_smart_device_power", {"device_id": off_light["device_id"], "on": False},
          "already off")
    blind = w.dev("house", "blind")
    fails(rt, sid, seed, "set_blind_position", {"device_id": blind["device_id"],
                                                "position": blind["state"]["position"]}, "already at position")


def test_climate_ranges_and_modes(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    w = World(rt, sid, seed)
    thermo = w.dev("house", "thermostat")
    lo, hi = thermo["limits"]["min_c"], thermo["limits"]["max_c"]
    fails(rt, sid, seed, "set_thermostat_temperature", {"device_id": thermo["device_id"], "temperature": hi + 5},
          "out of range", f"{lo:g}-{hi:g} °C")
    fails(rt, sid, seed, "set_thermostat_temperature", {"device_id": thermo["device_id"], "temperature": 100,
                                                        "unit": "F"}, "out of range", "°F")
    fails(rt, sid, seed, "set_thermostat_mode", {"device_id": thermo["device_id"], "mode": "cool"}, "already in cool")
    off = w.dev("apartment", "thermostat")
    fails(rt, sid, seed, "set_thermostat_temperature", {"device_id": off["device_id"], "temperature": 21},
          "is off", "set_thermostat_mode")
    ok(rt, sid, seed, "set_thermostat_mode", {"device_id": off["device_id"], "mode": "eco"})
    fails(rt, sid, seed, "set_thermostat_temperature", {"device_id": off["device_id"], "temperature": 21},
          "eco mode")
    heater = w.dev("apartment", "water_heater")
    fails(rt, sid, seed, "set_water_heater", {"device_id": heater["device_id"], "temperature": 70}, "out of range",
          "40-65 °C")
    fails(rt, sid, seed, "set_water_heater", {"device_id": heater["device_id"]}, "give a mode")
    vacation = w.dev("cabin", "water_heater")
    fails(rt, sid, seed, "set_water_heater", {"device_id": vacation["device_id"], "temperature": 50},
          "vacation mode", "temperature")
    fails(rt, sid, seed, "set_water_heater", {"device_id": vacation["device_id"], "mode": "vacation"},
          "already in vacation")
    out = ok(rt, sid, seed, "set_water_heater", {"device_id": vacation["device_id"], "mode": "electric",
                                                 "temperature": 122, "unit": "F"})
    assert out["state"]["mode"] == "electric" and out["state"]["target_c"] == 50.0


def test_locks_and_access_codes(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    w = World(rt, sid, seed)
    front = w.dev("house", "lock", "Front Door Lock")
    fid = front["device_id"]
    codes = front["state"]["codes"]
    wrong = next(c for c in ("1234", "0000", "98765") if c not in {x["code"] for x in codes})
    fails(rt, sid, seed, "unlock_smart_lock", {"device_id": fid, "code": wrong}, "incorrect code", "code")
    fails(rt, sid, seed, "lock_smart_lock", {"device_id": fid}, "already locked")
    back = w.dev("house", "lock", "Back Door Lock")
    fails(rt, sid, seed, "lock_smart_lock", {"device_id": back["device_id"]}, "door is open", "Back Door")
    jammed = w.dev("cabin", "lock", jammed=True)
    fails(rt, sid, seed, "lock_smart_lock", {"device_id": jammed["device_id"]}, "jammed")
    fails(rt, sid, seed, "unlock_smart_lock", {"device_id": jammed["device_id"],
                                               "code": jammed["state"]["codes"][0]["code"]}, "jammed")
    guest = codes[1]
    fails(rt, sid, seed, "manage_lock_access_code", {"device_id": fid, "action": "add", "code_name": guest["name"],
                                                     "code": "24681357"}, "already has a code named")
    fails(rt, sid, seed, "manage_lock_access_code", {"device_id": fid, "action": "add", "code_name": "Nanny",
                                                     "code": guest["code"]}, "already in use")
    fails(rt, sid, seed, "manage_lock_access_code", {"device_id": fid, "action": "add", "code_name": "Nanny"},
          "give the 4-8 digit code")
    fails(rt, sid, seed, "manage_lock_access_code", {"device_id": fid, "action": "remove", "code_name": "Owner"},
          "owner code cannot be removed")
    fails(rt, sid, seed, "manage_lock_access_code", {"device_id": fid, "action": "remove", "code_name": "Santa"},
          "no access code named 'Santa'")
    fails(rt, sid, seed, "manage_lock_access_code", {"device_id": fid, "action": "remove",
                                                     "code_name": guest["name"], "code": guest["code"]},
          "leave code out")
    full = w.dev("apartment", "lock", "Front Door Lock")
    fails(rt, sid, seed, "manage_lock_access_code", {"device_id": full["device_id"], "action": "add",
                                                     "code_name": "Nanny", "code": "24681357"},
          "at most 6 access codes")
    ok(rt, sid, seed, "manage_lock_access_code", {"device_id": full["device_id"], "action": "remove",
                                                  "code_name": full["state"]["codes"][-1]["name"].upper()})
    out = ok(rt, sid, seed, "manage_lock_access_code", {"device_id": full["device_id"], "action": "add",
                                                        "code_name": "Nanny", "code": "24681357"})
    assert "Nanny" in out["state"]["access_codes"] and "24681357" not in str(out)
    opened = ok(rt, sid, seed, "unlock_smart_lock", {"device_id": full["device_id"], "code": "24681357"})
    assert opened["state"]["locked"] is False
    fails(rt, sid, seed, "unlock_smart_lock", {"device_id": full["device_id"], "code": "24681357"},
          "already unlocked")
    history = ok(rt, sid, seed, "get_device_sensor_history", {"device_id": full["device_id"], "kind": "event"})
    assert history["entries"][0]["value"] == "unlocked with code 'Nanny'"


def test_alarm_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    w = World(rt, sid, seed)
    house, cabin, apt = w.home("house"), w.home("cabin"), w.home("apartment")
    fails(rt, sid, seed, "set_home_security_mode", {"home_id": house, "mode": "away"}, "cannot arm away",
          "Living Room Window", "Back Door")
    text = fails(rt, sid, seed, "set_home_security_mode", {"home_id": house, "mode": "home"}, "cannot arm home",
                 "Back Door")
    assert "Window" not in text  # home mode guards the doors only
    fails(rt, sid, seed, "set_home_security_mode", {"home_id": cabin, "mode": "disarmed"}, "give the alarm code")
    code = w.homes["cabin"]["security_code"]
    wrong = "1111" if code != "1111" else "2222"
    fails(rt, sid, seed, "set_home_security_mode", {"home_id": cabin, "mode": "disarmed", "code": wrong},
          "incorrect alarm code")
    fails(rt, sid, seed, "set_home_security_mode", {"home_id": cabin, "mode": "away", "code": code}, "already away")
    fails(rt, sid, seed, "set_home_security_mode", {"home_id": apt, "mode": "disarmed"}, "already disarmed")
    ok(rt, sid, seed, "set_home_security_mode", {"home_id": cabin, "mode": "disarmed", "code": code})
    out = ok(rt, sid, seed, "set_home_security_mode", {"home_id": apt, "mode": "night"})
    assert out["state"] == "armed"
    cam = w.dev("apartment", "camera", privacy_mode=True)
    fails(rt, sid, seed, "set_camera_settings", {"device_id": cam["device_id"], "recording": True},
          "privacy mode", "recording")
    fails(rt, sid, seed, "set_camera_settings", {"device_id": cam["device_id"]}, "give recording")
    out = ok(rt, sid, seed, "set_camera_settings", {"device_id": cam["device_id"], "recording": True,
                                                    "privacy_mode": False})
    assert out["state"]["recording"] and not out["state"]["privacy_mode"]


def test_vacuum_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 4
    w = World(rt, sid, seed)
    stuck, full = w.dev("cabin", "robot_vacuum"), w.dev("apartment", "robot_vacuum")
    vac = w.dev("house", "robot_vacuum")
    fails(rt, sid, seed, "start_vacuum_cleaning", {"device_id": stuck["device_id"]}, "is stuck")
    fails(rt, sid, seed, "send_vacuum_to_dock", {"device_id": stuck["device_id"]}, "is stuck")
    fails(rt, sid, seed, "start_vacuum_cleaning", {"device_id": full["device_id"]}, "bin is full")
    fails(rt, sid, seed, "start_vacuum_cleaning", {"device_id": vac["device_id"]}, "battery", "pick fewer rooms")
    fails(rt, sid, seed, "send_vacuum_to_dock", {"device_id": vac["device_id"]}, "already docked")
    upstairs = w.room("house", floor=2)
    fails(rt, sid, seed, "start_vacuum_cleaning", {"device_id": vac["device_id"], "room_ids": [upstairs["room_id"]]},
          "cannot take the stairs", "room_ids")
    elsewhere = w.room("cabin", "Kitchen")
    fails(rt, sid, seed, "start_vacuum_cleaning", {"device_id": vac["device_id"], "room_ids": [elsewhere["room_id"]]},
          "is not a room of", "room_ids")
    fails(rt, sid, seed, "start_vacuum_cleaning", {"device_id": vac["device_id"], "room_ids": []}, "empty")
    kitchen = w.room("house", "Kitchen")
    run = ok(rt, sid, seed, "start_vacuum_cleaning", {"device_id": vac["device_id"], "room_ids": [kitchen["room_id"]]})
    assert run["state"]["status"] == "cleaning" and run["state"]["cleaning_rooms"] == ["Kitchen"]
    fails(rt, sid, seed, "start_vacuum_cleaning", {"device_id": vac["device_id"]}, "already cleaning")
    back = ok(rt, sid, seed, "send_vacuum_to_dock", {"device_id": vac["device_id"]})
    assert back["state"]["status"] == "returning"
    fails(rt, sid, seed, "send_vacuum_to_dock", {"device_id": vac["device_id"]}, "already returning")


def test_scene_and_automation_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 5
    w = World(rt, sid, seed)
    house = w.home("house")
    lamp = w.dev("house", "light", "Living Room Ceiling Light")
    tv = w.dev("house", "plug", online=False)
    cabin_light = next(d for d in w.devices if d["home_id"] == w.home("cabin") and d["type"] == "light")
    fails(rt, sid, seed, "save_home_scene", {"home_id": house, "name": "movie night", "device_ids": [lamp["device_id"]]},
          "already has a scene named")
    fails(rt, sid, seed, "save_home_scene", {"home_id": house, "name": "Mixed",
                                             "device_ids": [cabin_light["device_id"]]}, "belongs to")
    fails(rt, sid, seed, "save_home_scene", {"home_id": house, "name": "Dark", "device_ids": [tv["device_id"]]},
          "is offline", "device_ids")
    sensor = w.dev("house", "motion_sensor")
    fails(rt, sid, seed, "save_home_scene", {"home_id": house, "name": "Odd", "device_ids": [sensor["device_id"]]},
          "does not support scenes")
    fails(rt, sid, seed, "save_home_scene", {"home_id": house, "name": "Empty", "device_ids": []}, "at least one")
    many = [d["device_id"] for d in w.devices][:31]
    fails(rt, sid, seed, "save_home_scene", {"home_id": house, "name": "All", "device_ids": many}, "at most 30")
    fails(rt, sid, seed, "activate_home_scene", {"scene_id": w.scene("house", "TV Time")["scene_id"]},
          "none of the devices", "offline")
    blind = w.dev("house", "blind")
    base = {"home_id": house, "name": "Evening", "time": "19:00"}
    fails(rt, sid, seed, "create_home_automation", {**base, "name": "morning lights", "device_id": blind["device_id"],
                                                    "device_action": "close"}, "already has an automation named")
    fails(rt, sid, seed, "create_home_automation", base, "either a scene_id")
    fails(rt, sid, seed, "create_home_automation", {**base, "scene_id": w.scene("house", "Movie Night")["scene_id"],
                                                    "device_id": blind["device_id"]}, "either a scene_id")
    fails(rt, sid, seed, "create_home_automation", {**base, "scene_id": w.scene("house", "Movie Night")["scene_id"],
                                                    "device_action": "close"}, "only goes with device_id")
    fails(rt, sid, seed, "create_home_automation", {**base, "device_id": blind["device_id"], "device_action": "lock"},
          "does not apply", "device_action")
    fails(rt, sid, seed, "create_home_automation", {**base, "device_id": blind["device_id"]}, "device_action")
    fails(rt, sid, seed, "create_home_automation", {**base, "scene_id": w.scene("cabin", "Arrival")["scene_id"]},
          "belongs to")
    fails(rt, sid, seed, "create_home_automation", {**base, "device_id": cabin_light["device_id"],
                                                    "device_action": "turn_on"}, "belongs to")
    fails(rt, sid, seed, "create_home_automation", {**base, "time": "25:00", "device_id": blind["device_id"],
                                                    "device_action": "close"}, "time")
    morning = w.automation("house", "Morning Lights")
    aid = morning["automation_id"]
    fails(rt, sid, seed, "update_home_automation", {"automation_id": aid, "enabled": True, "time": morning["time"]},
          "nothing to change")
    fails(rt, sid, seed, "update_home_automation", {"automation_id": aid, "days": []}, "cannot be empty")
    fails(rt, sid, seed, "update_home_automation", {"automation_id": aid, "name": "GOOD NIGHT"}, "already has")
    made = ok(rt, sid, seed, "create_home_automation", {**base, "days": ["sat", "mon", "sat"],
                                                        "device_id": blind["device_id"], "device_action": "close"})
    assert made["days"] == ["mon", "sat"] and made["next_run_at"] == "2026-06-01T19:00:00+00:00"


# ---------------------------------------------------------------- (4) time-driven state
def test_automation_runs_vacuum_which_cleans_and_docks(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    w = World(rt, sid, seed)
    vac = w.dev("house", "robot_vacuum")
    auto = w.automation("house", "Vacuum While at Work")
    assert auto["next_run_at"] == "2026-06-01T10:00:00+00:00"
    ok(rt, sid, seed, "iot_devices_session_advance_clock", {"minutes": 61})
    running = status(rt, sid, seed, vac["device_id"])
    assert running["state"]["status"] == "cleaning" and running["battery_percent"] < 100
    ok(rt, sid, seed, "iot_devices_session_advance_clock", {"minutes": 180})
    done = status(rt, sid, seed, vac["device_id"])
    assert done["state"]["status"] == "docked" and done["state"]["bin_level_percent"] == 0  # auto-empty dock
    listed = ok(rt, sid, seed, "list_home_automations", {"home_id": w.home("house")})
    ran = next(a for a in listed if a["automation_id"] == auto["automation_id"])
    assert ran["last_result"] == "ok" and ran["next_run_at"] == "2026-06-02T10:00:00+00:00"
    events = ok(rt, sid, seed, "get_device_sensor_history", {"device_id": vac["device_id"], "metric": "vacuum"})
    assert [e["source"] for e in events["entries"]][-1] == f"automation:{auto['automation_id']}"
    # a paused automation does not run
    ok(rt, sid, seed, "update_home_automation", {"automation_id": auto["automation_id"], "enabled": False})
    ok(rt, sid, seed, "iot_devices_session_advance_clock", {"minutes": 24 * 60})
    assert status(rt, sid, seed, vac["device_id"])["state"]["status"] == "docked"


def test_thermostat_drifts_to_setpoint_and_readings_accumulate(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    w = World(rt, sid, seed)
    thermo = w.dev("apartment", "thermostat")
    start = status(rt, sid, seed, thermo["device_id"])["state"]["current_c"]
    ok(rt, sid, seed, "set_thermostat_mode", {"device_id": thermo["device_id"], "mode": "cool"})
    out = ok(rt, sid, seed, "set_thermostat_temperature", {"device_id": thermo["device_id"], "temperature": 20})
    assert out["state"]["hvac_action"] == "cooling"
    before = ok(rt, sid, seed, "get_device_sensor_history", {"device_id": thermo["device_id"], "kind": "reading"})
    ok(rt, sid, seed, "iot_devices_session_advance_clock", {"minutes": 60})
    mid = status(rt, sid, seed, thermo["device_id"])["state"]
    assert mid["current_c"] == pytest.approx(max(20.0, start - 2.0), abs=0.2)
    ok(rt, sid, seed, "iot_devices_session_advance_clock", {"minutes": 300})
    end = status(rt, sid, seed, thermo["device_id"])["state"]
    assert end["current_c"] == 20.0 and end["hvac_action"] == "idle"
    after = ok(rt, sid, seed, "get_device_sensor_history", {"device_id": thermo["device_id"], "kind": "reading"})
    assert after["total"] == before["total"] + 6 and after["entries"][0]["value"] == 20.0


def test_batteries_die_and_plugs_meter_energy(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    w = World(rt, sid, seed)
    dying = min((d for d in w.devices if d["online"] and d["battery_percent"] is not None
                 and d["type"] != "robot_vacuum"), key=lambda d: d["battery_percent"])
    assert dying["battery_percent"] < 1
    kettle = next(d for d in w.devices if d["type"] == "plug" and d["online"] and not d["state"]["on"])
    ok(rt, sid, seed, "switch_smart_device_power", {"device_id": kettle["device_id"], "on": True})
    before = status(rt, sid, seed, kettle["device_id"])["state"]["energy_today_kwh"]
    ok(rt, sid, seed, "iot_devices_session_advance_clock", {"minutes": 60})
    after = status(rt, sid, seed, kettle["device_id"])["state"]["energy_today_kwh"]
    assert after == pytest.approx(before + kettle["state"]["rated_w"] / 1000 * 61 / 60, abs=0.01)
    moved = ok(rt, sid, seed, "iot_devices_session_advance_clock", {"minutes": 6 * 24 * 60})
    dead = status(rt, sid, seed, dying["device_id"])
    assert dead["online"] is False and dead["offline_reason"] == "battery depleted" and dead["battery_percent"] == 0
    offline = ok(rt, sid, seed, "list_smart_devices", {"online": False, "limit": 200})
    assert dying["device_id"] in {d["device_id"] for d in offline["devices"]}
    # the day rolled over: today's energy restarted at midnight (one more minute for the status call)
    clock = datetime.fromisoformat(moved["now"]) + timedelta(minutes=1)
    since_midnight = (clock - clock.replace(hour=0, minute=0)).total_seconds() / 3600
    assert status(rt, sid, seed, kettle["device_id"])["state"]["energy_today_kwh"] == pytest.approx(
        kettle["state"]["rated_w"] / 1000 * since_midnight, abs=0.01)


def test_away_mode_exit_delay(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    w = World(rt, sid, seed)
    apt = w.home("apartment")
    out = ok(rt, sid, seed, "set_home_security_mode", {"home_id": apt, "mode": "away"})
    assert out["state"] == "arming"
    ok(rt, sid, seed, "iot_devices_session_advance_clock", {"minutes": 1})
    assert ok(rt, sid, seed, "get_home_security_status", {"home_id": apt})["state"] == "armed"
    code = w.homes["apartment"]["security_code"]
    fails(rt, sid, seed, "set_home_security_mode", {"home_id": apt, "mode": "home"}, "give the alarm code")
    ok(rt, sid, seed, "set_home_security_mode", {"home_id": apt, "mode": "home", "code": code})


def test_replay_gives_identical_state_and_reset_restores(rt: DomainRuntime) -> None:
    assert_replays_alike(rt, 4, [("iot_devices_session_advance_clock", {"minutes": 2 * 24 * 60})])


# ---------------------------------------------------------------- (5) determinism, reads
def test_reads_filter_and_page(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 5
    w = World(rt, sid, seed)
    house = w.home("house")
    everything = ok(rt, sid, seed, "list_smart_devices", {"home_id": house, "limit": 200})
    page = ok(rt, sid, seed, "list_smart_devices", {"home_id": house, "limit": 5, "offset": 5})
    assert page["devices"] == everything["devices"][5:10] and page["total"] == everything["total"]
    lights = ok(rt, sid, seed, "list_smart_devices", {"device_type": "light", "query": "ceiling", "limit": 200})
    assert lights["devices"] and all(d["type"] == "light" and "Ceiling" in d["name"] for d in lights["devices"])
    low = ok(rt, sid, seed, "list_smart_devices", {"low_battery": True, "limit": 200})
    assert all(d["battery_percent"] is not None and d["battery_percent"] <= 20 for d in low["devices"])
    room = w.room("house", "Kitchen")
    in_room = ok(rt, sid, seed, "list_smart_devices", {"room_id": room["room_id"]})
    assert {d["room"] for d in in_room["devices"]} == {"Kitchen"}
    homes = ok(rt, sid, seed, "list_smart_homes", {})
    assert sum(h["device_count"] for h in homes) == len(w.devices)
    sensor = w.dev("house", "climate_sensor")
    hist = ok(rt, sid, seed, "get_device_sensor_history", {"device_id": sensor["device_id"],
                                                           "metric": "humidity_percent", "limit": 5})
    assert len(hist["entries"]) == 5 and all(e["metric"] == "humidity_percent" for e in hist["entries"])
    since = ok(rt, sid, seed, "get_device_sensor_history", {"device_id": sensor["device_id"],
                                                            "since": "2026-06-01T06:00:00Z"})
    assert all(e["at"] >= "2026-06-01T06:00" for e in since["entries"]) and since["total"] == 6
    energy = ok(rt, sid, seed, "get_home_energy_usage", {"home_id": house})
    assert energy["total_draw_w"] == pytest.approx(sum(c["draw_w"] for c in energy["consumers"]))
    kinds = {r["value"] for r in ok(rt, sid, seed, "iot_devices_get_unique_values", {"field": "home_kind"})}
    assert kinds == {"house", "cabin", "apartment"}
