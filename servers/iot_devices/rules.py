"""Device commands shared by the tools, scenes and automations (the clock lives in ``clock``).

Every command checks its rules and raises :class:`ToolError` naming the argument at fault. Tools call
them ``strict`` (asking for the state a device is already in is refused, so the model learns to read
first); scenes and automations call them lenient (a no-op is fine) and record skipped devices.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from servers.iot_devices import dynamics as dyn
from servers.iot_devices.state import (
    POWER_HINTS,
    SENSOR_HINT,
    WEEKDAYS,
    Automation,
    Device,
    IotState,
    log,
    need_online,
    need_type,
    no_change,
    touch,
    unsupported,
)
from servers.kit import ToolError, iso

EXIT_DELAY = timedelta(minutes=2)
RETURN_MINUTES = 3
M2_PER_MINUTE = 1.5
RESERVE_PERCENT = 10.0


# ---------------------------------------------------------------- switches, lights, blinds
def set_power(s: IotState, d: Device, on: bool, t: datetime, source: str, strict: bool = True) -> Device:
    need_type(d, ("light", "plug"), "switching power", POWER_HINTS.get(d.type, SENSOR_HINT))
    need_online(d)
    if d.state["on"] == on:
        no_change(strict, f"{d.name} is already {'on' if on else 'off'}", "on")
        return d
    rec = touch(s, d, iso(t))
    if rec.type == "plug":
        dyn.reanchor_plug(rec, t)
    rec.state["on"] = on
    log(s, rec.device_id, "event", "power", "on" if on else "off", source, iso(t))
    return rec


def set_light(s: IotState, d: Device, t: datetime, source: str, brightness: int | None = None,
              color: str | None = None, kelvin: int | None = None, strict: bool = True) -> Device:
    need_type(d, ("light",), "light settings", SENSOR_HINT if d.type not in ("plug",) else "it only switches on/off")
    need_online(d)
    if brightness is None and color is None and kelvin is None:
        raise ToolError("give a brightness, a color or a color_temperature_k to change", field="brightness")
    if color is not None and kelvin is not None:
        raise ToolError("a light shows either a color or a white color temperature, not both", field="color")
    if brightness is not None and "dimmable" not in d.capabilities:
        raise unsupported(d, "dimming", "it only switches on/off (switch_smart_device_power)", "brightness")
    if color is not None and "color" not in d.capabilities:
        raise unsupported(d, "colors", "it is a white-only light", "color")
    if kelvin is not None:
        if "tunable_white" not in d.capabilities:
            raise unsupported(d, "white color temperatures", "", "color_temperature_k")
        lo, hi = d.limits["min_kelvin"], d.limits["max_kelvin"]
        if not lo <= kelvin <= hi:
            raise ToolError(f"{kelvin} K is out of range for {d.name} ({d.model}): it accepts {lo}-{hi} K",
                            field="color_temperature_k", code="out_of_range")
    st = d.state
    wanted = {"on": True, **({"brightness": brightness} if brightness is not None else {}),
              **({"color": color, "color_temperature_k": None} if color is not None else {}),
              **({"color_temperature_k": kelvin, "color": None} if kelvin is not None else {})}
    if "tunable_white" not in d.capabilities:
        wanted.pop("color_temperature_k", None)
    if "color" not in d.capabilities:
        wanted.pop("color", None)
    if all(st.get(k) == v for k, v in wanted.items()):
        no_change(strict, f"{d.name} already has these settings", "brightness")
        return d
    rec = touch(s, d, iso(t))
    rec.state.update(wanted)
    log(s, rec.device_id, "event", "light", {k: v for k, v in wanted.items() if v is not None}, source, iso(t))
    return rec


def set_blind(s: IotState, d: Device, position: int, t: datetime, source: str, strict: bool = True) -> Device:
    need_type(d, ("blind",), "a position", POWER_HINTS.get(d.type, SENSOR_HINT))
    need_online(d)
    if d.state["position"] == position:
        no_change(strict, f"{d.name} is already at position {position}", "position")
        return d
    rec = touch(s, d, iso(t))
    rec.state["position"] = position
    log(s, rec.device_id, "event", "position", position, source, iso(t))
    return rec


# ---------------------------------------------------------------- locks
def lock(s: IotState, d: Device, t: datetime, source: str, strict: bool = True) -> Device:
    need_type(d, ("lock",), "locking")
    need_online(d)
    if d.state["jammed"]:
        raise ToolError(f"{d.name} is jammed: the bolt could not move last time; check the door by hand",
                        field="device_id", code="jammed")
    door = s.devices.get(d.state.get("door_sensor_id") or "")
    if door is not None and door.state["open"]:
        raise ToolError(f"{door.name} reports the door is open; close it before locking {d.name}",
                        field="device_id", code="door_open")
    if d.state["locked"]:
        no_change(strict, f"{d.name} is already locked", "device_id")
        return d
    rec = touch(s, d, iso(t))
    rec.state["locked"] = True
    log(s, rec.device_id, "event", "lock", "locked", source, iso(t))
    return rec


# ---------------------------------------------------------------- vacuums
def start_cleaning(s: IotState, d: Device, room_ids: list[str] | None, t: datetime, source: str) -> Device:
    need_type(d, ("robot_vacuum",), "cleaning")
    need_online(d)
    st = d.state
    if st["status"] == "stuck":
        raise ToolError(f"{d.name} is stuck ({st['error']}); free it and put it back on its dock first",
                        field="device_id", code="vacuum_stuck")
    if st["status"] in ("cleaning", "returning"):
        raise ToolError(f"{d.name} is already {st['status']} (until {st['phase_ends_at']})", field="device_id",
                        code="busy")
    if st["bin_level"] >= 100:
        raise ToolError(f"{d.name}'s dust bin is full; empty it by hand before the next run", field="device_id",
                        code="bin_full")
    home_rooms = [r for r in s.rooms.values() if r.home_id == d.home_id]
    floor = s.rooms[d.room_id].floor
    if room_ids is None:
        rooms = [r for r in home_rooms if r.floor == floor]
    else:
        rooms = []
        for rid in dict.fromkeys(r.strip() for r in room_ids):
            room = s.rooms.get(rid)
            if room is None or room.home_id != d.home_id:
                raise ToolError(f"room '{rid}' is not a room of {s.homes[d.home_id].name}", field="room_ids",
                                code="not_found")
            if room.floor != floor:
                raise ToolError(f"{room.name} is on floor {room.floor} but {d.name} docks on floor {floor}; robot "
                                "vacuums cannot take the stairs", field="room_ids", code="unreachable")
            rooms.append(room)
        if not rooms:
            raise ToolError("room_ids is empty; leave it out to clean the whole floor", field="room_ids")
    area = sum(r.area_m2 for r in rooms)
    minutes = math.ceil(area / M2_PER_MINUTE)
    battery = dyn.battery_now(d, t) or 0.0
    needed = round((minutes + RETURN_MINUTES) * dyn.VACUUM_DRAIN + RESERVE_PERCENT, 1)
    if battery < dyn.MIN_VACUUM_START or battery < needed:
        raise ToolError(f"{d.name}'s battery is at {battery:g}%; cleaning {area} m² needs about {needed:g}%. Let it "
                        "charge on the dock or pick fewer rooms", field="room_ids" if room_ids else "device_id",
                        code="battery_low")
    rec = touch(s, d, iso(t))
    dyn.reanchor_battery(rec, t)
    rec.state.update(status="cleaning", rooms=[r.room_id for r in rooms], phase_ends_at=iso(t + timedelta(
        minutes=minutes)), error=None)
    log(s, rec.device_id, "event", "vacuum", f"cleaning {area} m²", source, iso(t))
    return rec


def dock(s: IotState, d: Device, t: datetime, source: str) -> Device:
    need_type(d, ("robot_vacuum",), "docking")
    need_online(d)
    status = d.state["status"]
    if status == "stuck":
        raise ToolError(f"{d.name} is stuck ({d.state['error']}) and cannot drive back; free it by hand",
                        field="device_id", code="vacuum_stuck")
    if status in ("docked", "returning"):
        raise ToolError(f"{d.name} is already {status}", field="device_id", code="no_change")
    rec = touch(s, d, iso(t))
    dyn.reanchor_battery(rec, t)
    finish_cleaning(s, rec, t, partial=True)
    return rec


def finish_cleaning(s: IotState, d: Device, t: datetime, partial: bool) -> None:
    """Cleaning ends (done or recalled): dust goes into the bin, the vacuum heads home (docking
    now, or the clock when a run's time is up)."""
    st = d.state
    area = sum(s.rooms[r].area_m2 for r in st["rooms"])
    if partial and st["phase_ends_at"]:
        planned = math.ceil(area / M2_PER_MINUTE)
        left = max(0.0, (dyn.at(st["phase_ends_at"]) - t).total_seconds() / 60)
        area = round(area * (1 - left / planned)) if planned else 0
    st["bin_level"] = min(100, st["bin_level"] + math.ceil(area / 4))
    st.update(status="returning", phase_ends_at=iso(t + timedelta(minutes=RETURN_MINUTES)))
    log(s, d.device_id, "event", "vacuum", f"returning to dock after {area} m²", "system", iso(t))


# ---------------------------------------------------------------- automations
def action_fits(d: Device, action: str) -> bool:
    return {"turn_on": ("light", "plug"), "turn_off": ("light", "plug"), "lock": ("lock",),
            "start_cleaning": ("robot_vacuum",), "open": ("blind",), "close": ("blind",)}[action].__contains__(d.type)


def run_device_action(s: IotState, d: Device, action: str, t: datetime, source: str) -> None:
    if action in ("turn_on", "turn_off"):
        set_power(s, d, action == "turn_on", t, source, strict=False)
    elif action == "lock":
        lock(s, d, t, source, strict=False)
    elif action == "start_cleaning":
        start_cleaning(s, d, None, t, source)
    else:
        set_blind(s, d, 100 if action == "open" else 0, t, source, strict=False)


def next_run(a: Automation, after: datetime) -> datetime | None:
    """The first run strictly after ``after`` (None when disabled)."""
    if not a.enabled:
        return None
    hh, mm = (int(x) for x in a.time.split(":"))
    for offset in range(8):
        day = after + timedelta(days=offset)
        when = day.replace(hour=hh, minute=mm, second=0, microsecond=0)
        if when > after and WEEKDAYS[when.weekday()] in a.days:
            return when
    return None


def settings_of(d: Device) -> dict[str, Any]:
    """What a scene captures of a device (its current settings)."""
    st = d.state
    if d.type == "light":
        keys = ["on"] + [k for k, cap in (("brightness", "dimmable"), ("color", "color"),
                                          ("color_temperature_k", "tunable_white")) if cap in d.capabilities]
        return {k: st[k] for k in keys}
    if d.type == "plug":
        return {"on": st["on"]}
    if d.type == "blind":
        return {"position": st["position"]}
    if d.type == "thermostat":
        return {"mode": st["mode"], "target_c": st["target_c"]}
    if d.type == "lock":
        return {"locked": True}
    if d.type == "camera":
        return {"privacy_mode": st["privacy_mode"], "motion_detection": st["motion_detection"]}
    raise unsupported(d, "scenes", "scenes hold lights, plugs, blinds, thermostats, locks and cameras",
                      "device_ids")
