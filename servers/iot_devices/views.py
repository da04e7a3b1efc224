"""JSON views of homes and devices as the app shows them (computed for the session's current time)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from servers.iot_devices.dynamics import (
    battery_now,
    heater_now,
    plug_today_kwh,
    plug_total_kwh,
    power_draw_w,
    room_temperature,
    thermostat_now,
)
from servers.iot_devices.state import Automation, Device, Home, IotState, Scene, to_fahrenheit

COMMANDS: dict[str, tuple[str, ...]] = {
    "light": ("switch_smart_device_power", "adjust_smart_light"),
    "plug": ("switch_smart_device_power",),
    "thermostat": ("set_thermostat_mode", "set_thermostat_temperature"),
    "lock": ("lock_smart_lock", "unlock_smart_lock", "manage_lock_access_code"),
    "camera": ("set_camera_settings",),
    "blind": ("set_blind_position",),
    "robot_vacuum": ("start_vacuum_cleaning", "send_vacuum_to_dock"),
    "water_heater": ("set_water_heater",),
}


def state_view(s: IotState, d: Device, t: datetime) -> dict[str, Any]:
    st = d.state
    kind = d.type
    if kind == "light":
        out = {"on": st["on"]}
        if "dimmable" in d.capabilities:
            out["brightness"] = st["brightness"]
        if "color" in d.capabilities:
            out["color"] = st["color"]
        if "tunable_white" in d.capabilities:
            out["color_temperature_k"] = st["color_temperature_k"]
        return out
    if kind == "plug":
        return {"on": st["on"], "appliance": st["appliance"], "power_w": power_draw_w(s, d, t),
                "energy_today_kwh": plug_today_kwh(d, t), "energy_total_kwh": round(plug_total_kwh(d, t), 2)}
    if kind == "thermostat":
        current, action = thermostat_now(s, d, t)
        return {"mode": st["mode"], "target_c": st["target_c"], "target_f": to_fahrenheit(st["target_c"]),
                "current_c": current, "current_f": to_fahrenheit(current), "hvac_action": action,
                "humidity_percent": st["humidity"]}
    if kind == "lock":
        door = s.devices.get(st["door_sensor_id"]) if st.get("door_sensor_id") else None
        return {"locked": st["locked"], "jammed": st["jammed"],
                "door_open": door.state["open"] if door is not None else None,
                "access_codes": [c["name"] for c in st["codes"]]}
    if kind == "camera":
        return {"recording": st["recording"], "motion_detection": st["motion_detection"],
                "privacy_mode": st["privacy_mode"], "last_motion_at": st["last_motion_at"]}
    if kind == "blind":
        return {"position": st["position"], "description": "closed" if st["position"] == 0 else
                "fully open" if st["position"] == 100 else f"{st['position']}% open"}
    if kind == "climate_sensor":
        return {"temperature_c": room_temperature(s, s.rooms[d.room_id], t), "humidity_percent": st["humidity"]}
    if kind == "motion_sensor":
        return {"motion": st["motion"], "last_motion_at": st["last_motion_at"]}
    if kind == "contact_sensor":
        return {"open": st["open"], "opening": st["opening"], "last_opened_at": st["last_opened_at"]}
    if kind == "smoke_detector":
        return {"smoke": st["smoke"], "carbon_monoxide": st["co"]}
    if kind == "leak_sensor":
        return {"leak_detected": st["leak"]}
    if kind == "robot_vacuum":
        return {"status": st["status"], "bin_level_percent": st["bin_level"], "bin_full": st["bin_level"] >= 100,
                "cleaning_rooms": [s.rooms[r].name for r in st["rooms"]], "phase_ends_at": st["phase_ends_at"],
                "error": st["error"], "auto_empty_dock": "auto_empty" in d.capabilities}
    if kind == "water_heater":
        tank, heating = heater_now(d, t)
        return {"mode": st["mode"], "target_c": st["target_c"], "tank_c": tank, "heating": heating}
    return dict(st)


def summary(s: IotState, d: Device, t: datetime) -> str:
    """A few words the app shows under the device name."""
    if not d.online:
        return f"offline ({d.offline_reason})"
    v = state_view(s, d, t)
    kind = d.type
    if kind == "light":
        return ("on" + (f", {v['brightness']}%" if "brightness" in v else "")) if v["on"] else "off"
    if kind == "plug":
        return f"on, {v['power_w']:g} W" if v["on"] else "off"
    if kind == "thermostat":
        return f"{v['mode']}, set {v['target_c']:g} °C, now {v['current_c']:g} °C ({v['hvac_action']})"
    if kind == "lock":
        return "jammed" if v["jammed"] else "locked" if v["locked"] else "unlocked"
    if kind == "camera":
        return "privacy mode" if v["privacy_mode"] else "recording" if v["recording"] else "idle"
    if kind == "blind":
        return v["description"]
    if kind == "climate_sensor":
        return f"{v['temperature_c']:g} °C, {v['humidity_percent']}% RH"
    if kind == "motion_sensor":
        return "motion" if v["motion"] else "no motion"
    if kind == "contact_sensor":
        return "open" if v["open"] else "closed"
    if kind == "smoke_detector":
        return "ALARM" if v["smoke"] != "clear" or v["carbon_monoxide"] != "clear" else "clear"
    if kind == "leak_sensor":
        return "LEAK" if v["leak_detected"] else "dry"
    if kind == "robot_vacuum":
        return v["status"] + (" (bin full)" if v["bin_full"] else "")
    if kind == "water_heater":
        return f"{v['mode']}, tank {v['tank_c']:g} °C"
    return ""


def device_row(s: IotState, d: Device, t: datetime) -> dict[str, Any]:
    room = s.rooms[d.room_id]
    return {"device_id": d.device_id, "name": d.name, "type": d.type, "home_id": d.home_id,
            "room_id": d.room_id, "room": room.name, "online": d.online, "battery_percent": battery_now(d, t),
            "summary": summary(s, d, t)}


def device_view(s: IotState, d: Device, t: datetime) -> dict[str, Any]:
    room, home = s.rooms[d.room_id], s.homes[d.home_id]
    return {"device_id": d.device_id, "name": d.name, "type": d.type, "manufacturer": d.manufacturer,
            "model": d.model, "home": {"home_id": home.home_id, "name": home.name},
            "room": {"room_id": room.room_id, "name": room.name}, "online": d.online,
            "offline_since": d.offline_since, "offline_reason": d.offline_reason,
            "battery_percent": battery_now(d, t), "capabilities": list(d.capabilities), "limits": dict(d.limits),
            "state": state_view(s, d, t), "supported_commands": list(COMMANDS.get(d.type, ())),
            "last_changed_at": d.last_changed_at}


def security_view(s: IotState, home: Home, t: datetime) -> dict[str, Any]:
    devices = [d for d in s.devices.values() if d.home_id == home.home_id]
    contacts = [d for d in devices if d.type == "contact_sensor"]
    return {
        "home_id": home.home_id, "home": home.name, "mode": home.security_mode, "state": home.security_state,
        "armed_at": home.armed_at,
        "open_doors_and_windows": [{"device_id": d.device_id, "name": d.name, "opening": d.state["opening"]}
                                   for d in contacts if d.state["open"]],
        "unlocked_locks": [{"device_id": d.device_id, "name": d.name} for d in devices
                           if d.type == "lock" and not d.state["locked"]],
        "alarms": [{"device_id": d.device_id, "name": d.name, "summary": summary(s, d, t)} for d in devices
                   if d.type in ("smoke_detector", "leak_sensor") and summary(s, d, t) in ("ALARM", "LEAK")],
        "offline_sensors": [{"device_id": d.device_id, "name": d.name, "reason": d.offline_reason}
                            for d in devices if not d.online and d.type in ("contact_sensor", "motion_sensor",
                                                                            "smoke_detector", "leak_sensor",
                                                                            "camera", "lock")],
        "cameras": [{"device_id": d.device_id, "name": d.name, "recording": d.state["recording"],
                     "privacy_mode": d.state["privacy_mode"]} for d in devices if d.type == "camera"],
    }


def scene_view(s: IotState, sc: Scene) -> dict[str, Any]:
    return {"scene_id": sc.scene_id, "home_id": sc.home_id, "name": sc.name,
            "devices": [{"device_id": x["device_id"], "name": s.devices[x["device_id"]].name,
                         "settings": dict(x["settings"])} for x in sc.settings],
            "created_at": sc.created_at, "last_activated_at": sc.last_activated_at}


def automation_view(s: IotState, a: Automation, next_run: str | None) -> dict[str, Any]:
    target: dict[str, Any]
    if a.scene_id:
        target = {"scene_id": a.scene_id, "scene": s.scenes[a.scene_id].name}
    else:
        target = {"device_id": a.device_id, "device": s.devices[a.device_id].name, "action": a.device_action}
    return {"automation_id": a.automation_id, "home_id": a.home_id, "name": a.name, "time": a.time,
            "days": list(a.days), "enabled": a.enabled, "runs": target, "next_run_at": next_run,
            "last_run_at": a.last_run_at, "last_result": a.last_result}
