"""Smart-home state: homes with rooms, devices of many types, scenes, time-based automations and a
device history (sensor readings and events), plus the shared rule helpers.

Continuous quantities are stored as anchors and computed for any instant (see ``dynamics``): a
thermostat keeps the temperature it had when its mode or setpoint last changed and drifts from
there; batteries drain linearly from their last reading; metered plugs integrate their draw. So
time moves state without rewriting every record each minute, and replays are exact.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from servers.kit import Cell, Counters, State, Table, ToolError, iso, new_id, now, require

DEVICE_TYPES = ("light", "plug", "thermostat", "lock", "camera", "blind", "climate_sensor", "motion_sensor",
                "contact_sensor", "smoke_detector", "leak_sensor", "robot_vacuum", "water_heater")
SENSOR_TYPES = ("climate_sensor", "motion_sensor", "contact_sensor", "smoke_detector", "leak_sensor")
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


@dataclass
class Home:
    home_id: str
    name: str
    kind: str  # house | cabin | apartment
    address: str
    owner_name: str
    ambient_c: float  # where indoor temperature settles with heating/cooling off
    security_code: str  # alarm panel code (needed to disarm or change an armed mode)
    security_mode: str = "disarmed"  # disarmed | home | away | night
    security_state: str = "disarmed"  # disarmed | arming | armed
    armed_at: str | None = None  # when the exit delay ends (arming) / ended (armed)


@dataclass
class Room:
    room_id: str
    home_id: str
    name: str
    floor: int
    area_m2: int
    offset_c: float  # how much warmer/colder than the thermostat reading


@dataclass
class Device:
    device_id: str
    home_id: str
    room_id: str
    name: str
    type: str
    manufacturer: str
    model: str
    capabilities: list[str]
    limits: dict[str, Any]
    online: bool
    last_changed_at: str
    state: dict[str, Any]
    offline_reason: str | None = None
    offline_since: str | None = None
    battery: float | None = None  # percent at ``battery_at`` (None: mains powered)
    battery_at: str | None = None


@dataclass
class Scene:
    scene_id: str
    home_id: str
    name: str
    settings: list[dict[str, Any]]  # [{"device_id": ..., "settings": {...}}] captured when saved
    created_at: str
    last_activated_at: str | None = None


@dataclass
class Automation:
    automation_id: str
    home_id: str
    name: str
    time: str  # HH:MM, home time
    days: list[str]
    enabled: bool
    created_at: str
    scene_id: str | None = None
    device_id: str | None = None
    device_action: str | None = None  # turn_on | turn_off | lock | start_cleaning | open | close
    last_run_at: str | None = None
    last_result: str | None = None


@dataclass
class HistoryEntry:
    entry_id: str
    device_id: str
    at: str
    kind: str  # reading | event
    metric: str
    value: Any
    source: str  # sensor | user | scene:<id> | automation:<id> | system


class IotState(State):
    homes: Table[Home]
    rooms: Table[Room]
    devices: Table[Device]
    scenes: Table[Scene]
    automations: Table[Automation]
    history: Table[HistoryEntry]
    counters: Cell[Counters]


# ---------------------------------------------------------------- lookups
def get_home(s: IotState, home_id: str, field: str = "home_id") -> Home:
    return require(s.homes, home_id.strip(), field, shown=home_id, hint=" (list_smart_homes lists the homes)")


def get_room(s: IotState, room_id: str, field: str = "room_id") -> Room:
    return require(s.rooms, room_id.strip(), field, shown=room_id,
                   hint=" (list_smart_homes lists each home's rooms)")


def get_device(s: IotState, device_id: str, field: str = "device_id") -> Device:
    return require(s.devices, device_id.strip(), field, shown=device_id,
                   hint=" (list_smart_devices lists the devices)")


def get_scene(s: IotState, scene_id: str, field: str = "scene_id") -> Scene:
    return require(s.scenes, scene_id.strip(), field, shown=scene_id, hint=" (list_home_scenes lists them)")


def get_automation(s: IotState, automation_id: str) -> Automation:
    return require(s.automations, automation_id.strip(), "automation_id", shown=automation_id,
                   hint=" (list_home_automations lists them)")


# ---------------------------------------------------------------- rule helpers
#: What to use instead when a power/position/mode command hits a device type that does not take it
#: (shared by the device commands in ``rules`` and ``climate``).
POWER_HINTS = {
    "thermostat": "use set_thermostat_mode with mode 'off' instead", "lock": "use lock_smart_lock or unlock_smart_lock",
    "camera": "use set_camera_settings (privacy_mode) instead", "blind": "use set_blind_position instead",
    "robot_vacuum": "use start_vacuum_cleaning or send_vacuum_to_dock", "water_heater": "use set_water_heater instead",
}
SENSOR_HINT = "sensors only report readings"


def no_change(strict: bool, message: str, field: str) -> None:
    """Refuse a command asking for the state a device is already in, when ``strict`` (a tool call);
    scenes and automations apply leniently and simply skip it."""
    if strict:
        raise ToolError(message, field=field, code="no_change")


def unsupported(d: Device, what: str, hint: str = "", field: str = "device_id") -> ToolError:
    extra = f"; {hint}" if hint else ""
    return ToolError(f"{d.name} ({d.device_id}) is a {d.type.replace('_', ' ')} ({d.manufacturer} {d.model}) and "
                     f"does not support {what}{extra}", field=field, code="unsupported")


def need_type(d: Device, kinds: tuple[str, ...], what: str, hint: str = "", field: str = "device_id") -> None:
    if d.type not in kinds:
        raise unsupported(d, what, hint, field)


def need_online(d: Device, field: str = "device_id") -> None:
    if not d.online:
        raise ToolError(f"{d.name} ({d.device_id}) is offline since {d.offline_since} ({d.offline_reason}); it "
                        "cannot take commands until it reconnects", field=field, code="device_offline")


def to_celsius(value: float, unit: str) -> float:
    return round((value - 32) * 5 / 9, 1) if unit == "F" else round(value, 1)


def to_fahrenheit(celsius: float) -> float:
    return round(celsius * 9 / 5 + 32, 1)


def need_range(d: Device, celsius: float, given: float, unit: str, field: str) -> None:
    lo, hi = d.limits["min_c"], d.limits["max_c"]
    if not lo <= celsius <= hi:
        shown = f"{to_fahrenheit(lo):g}-{to_fahrenheit(hi):g} °F" if unit == "F" else f"{lo:g}-{hi:g} °C"
        raise ToolError(f"{given:g} °{unit} is out of range for {d.name} ({d.model}): it accepts {shown}",
                        field=field, code="out_of_range")


def log(s: IotState, device_id: str, kind: str, metric: str, value: Any, source: str, at: str | None = None) -> None:
    eid = new_id(s.counters, "EVT", 6)
    s.history.put(eid, HistoryEntry(eid, device_id, at or iso(now(s)), kind, metric, value, source))


def touch(s: IotState, d: Device, at: str | None = None) -> Device:
    """A session copy of ``d`` with ``last_changed_at`` set (the caller mutates it)."""
    rec = s.devices.edit(d.device_id)
    rec.last_changed_at = at or iso(now(s))
    return rec
