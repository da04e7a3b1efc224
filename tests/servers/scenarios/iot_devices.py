"""IoT devices smoke scenario: an owner tidies up the house (lights, blinds, camera, climate, hot
water, a quick vacuum run, locks and a guest code), saves and replays scenes, schedules an
automation, checks history and energy, and arms the apartment's alarm — succeeding once with every
user-visible tool.

``call(name, args)`` performs a tool call on one session (over whatever transport the harness
chose), asserts it did not return an error, and returns the decoded JSON result.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


async def smoke(call: Call) -> None:
    homes = await call("list_smart_homes", {})
    house = next(h for h in homes if h["kind"] == "house")
    apartment = next(h for h in homes if h["kind"] == "apartment")
    hid = house["home_id"]
    secrets = {d["device_id"]: d for d in await call("iot_devices_list_devices", {"home_id": hid})}

    async def find(device_type: str, home_id: str = hid, **kw: Any) -> list[dict[str, Any]]:
        out = await call("list_smart_devices", {"home_id": home_id, "device_type": device_type, **kw})
        return out["devices"]

    # Lights: switch one on, give the color light in the living room a color.
    lamp = next(d for d in await find("light", online=True) if d["summary"] == "off")
    await call("switch_smart_device_power", {"device_id": lamp["device_id"], "on": True})
    color = next(d for d in await find("light") if "color" in secrets[d["device_id"]]["capabilities"])
    await call("adjust_smart_light", {"device_id": color["device_id"], "brightness": 35, "color": "blue"})

    # Blinds half open, the indoor camera into privacy mode.
    blinds = (await find("blind"))[0]
    position = 30 if secrets[blinds["device_id"]]["state"]["position"] != 30 else 70
    await call("set_blind_position", {"device_id": blinds["device_id"], "position": position})
    camera = next(d for d in await find("camera") if d["name"] == "Living Room Camera")
    await call("set_camera_settings", {"device_id": camera["device_id"], "privacy_mode": True})

    # Climate: auto mode at 70 °F, hot water on eco at 48 °C.
    thermostat = (await find("thermostat"))[0]
    await call("set_thermostat_mode", {"device_id": thermostat["device_id"], "mode": "auto"})
    fahrenheit = 70 if secrets[thermostat["device_id"]]["state"]["target_c"] != 21.0 else 74
    await call("set_thermostat_temperature", {"device_id": thermostat["device_id"], "temperature": fahrenheit,
                                              "unit": "F"})
    heater = (await find("water_heater"))[0]
    await call("set_water_heater", {"device_id": heater["device_id"], "mode": "eco", "temperature": 48})

    # A quick vacuum run of the living room, then call it back.
    vacuum = (await find("robot_vacuum"))[0]
    status = await call("get_smart_device_status", {"device_id": vacuum["device_id"]})
    await call("start_vacuum_cleaning", {"device_id": vacuum["device_id"], "room_ids": [status["room"]["room_id"]]})
    await call("send_vacuum_to_dock", {"device_id": vacuum["device_id"]})

    # Locks: let a plumber in through the front door, give them a code, lock up again.
    locks = await find("lock")
    front = next(d for d in locks if d["name"] == "Front Door Lock")
    owner = next(c for c in secrets[front["device_id"]]["state"]["codes"] if c["role"] == "owner")
    await call("unlock_smart_lock", {"device_id": front["device_id"], "code": owner["code"]})
    await call("manage_lock_access_code", {"device_id": front["device_id"], "action": "add",
                                           "code_name": "Plumber", "code": "48213579"})
    await call("lock_smart_lock", {"device_id": front["device_id"]})

    # Scenes and automations.
    scenes = await call("list_home_scenes", {"home_id": hid})
    saved = await call("save_home_scene", {"home_id": hid, "name": "Reading Corner",
                                           "device_ids": [lamp["device_id"], blinds["device_id"]]})
    assert len(saved["devices"]) == 2
    movie = next(sc for sc in scenes if sc["name"] == "Movie Night")
    applied = await call("activate_home_scene", {"scene_id": movie["scene_id"]})
    assert any(r["result"] == "applied" for r in applied["devices"])
    await call("create_home_automation", {"home_id": hid, "name": "Evening Blinds", "time": "19:30",
                                          "days": ["mon", "tue", "wed", "thu", "fri"],
                                          "device_id": blinds["device_id"], "device_action": "close"})
    automations = await call("list_home_automations", {"home_id": hid})
    morning = next(a for a in automations if a["name"] == "Morning Lights")
    await call("update_home_automation", {"automation_id": morning["automation_id"], "enabled": False})

    # History and energy.
    sensor = (await find("climate_sensor"))[0]
    history = await call("get_device_sensor_history", {"device_id": sensor["device_id"], "metric": "temperature_c"})
    assert history["entries"]
    energy = await call("get_home_energy_usage", {"home_id": hid})
    assert energy["total_draw_w"] > 0

    # Leaving the apartment: everything is closed, so the alarm can be armed away.
    security = await call("get_home_security_status", {"home_id": apartment["home_id"]})
    assert not security["open_doors_and_windows"]
    await call("set_home_security_mode", {"home_id": apartment["home_id"], "mode": "away"})
