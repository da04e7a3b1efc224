"""Smart-home reads (homes, devices, history, energy) and the simple actuators (power, lights, blinds,
cameras)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.iot_devices import climate, rules
from servers.iot_devices import dynamics as dyn
from servers.iot_devices.data import COLORS
from servers.iot_devices.state import (
    DEVICE_TYPES,
    IotState,
    get_device,
    get_home,
    get_room,
)
from servers.iot_devices.views import device_row, device_view, summary
from servers.kit import IsoDateTime, iso, now, parse_datetime, tool

Limit = Annotated[int, Field(ge=1, le=200)]
DeviceType = Literal["light", "plug", "thermostat", "lock", "camera", "blind", "climate_sensor", "motion_sensor",
                     "contact_sensor", "smoke_detector", "leak_sensor", "robot_vacuum", "water_heater"]
ColorName = Literal["red", "orange", "yellow", "green", "teal", "blue", "purple", "pink", "white", "warm_white"]
assert set(DeviceType.__args__) == set(DEVICE_TYPES)  # type: ignore[attr-defined]
assert set(ColorName.__args__) == set(COLORS)  # type: ignore[attr-defined]


@tool(produces=("home_id", "room_id"), read_only=True)
def list_smart_homes(s: IotState) -> list:
    """List your smart homes with their rooms (floor, size, temperature, device count), the alarm
    system's mode and how many devices are offline.
    """
    t = now(s)
    out = []
    for home in s.homes.values():
        devices = [d for d in s.devices.values() if d.home_id == home.home_id]
        rooms = [{"room_id": r.room_id, "name": r.name, "floor": r.floor, "area_m2": r.area_m2,
                  "temperature_c": dyn.room_temperature(s, r, t),
                  "device_count": sum(1 for d in devices if d.room_id == r.room_id)}
                 for r in s.rooms.values() if r.home_id == home.home_id]
        out.append({"home_id": home.home_id, "name": home.name, "kind": home.kind, "address": home.address,
                    "security": {"mode": home.security_mode, "state": home.security_state},
                    "device_count": len(devices), "offline_count": sum(1 for d in devices if not d.online),
                    "rooms": rooms})
    return out


@tool(consumes=("home_id", "room_id"), produces=("device_id",), read_only=True)
def list_smart_devices(
    s: IotState,
    home_id: str | None = None,
    room_id: str | None = None,
    device_type: DeviceType | None = None,
    online: bool | None = None,
    low_battery: bool = False,
    query: str | None = None,
    limit: Limit = 50,
    offset: Annotated[int, Field(ge=0, le=10_000)] = 0,
) -> dict:
    """Find devices by home, room, type, name or connectivity, sorted by home, room and name. Each row
    has a one-line summary of the device's state (on/off, locked, temperature...) and its battery.

    Args:
        home_id: Only devices of this home.
        room_id: Only devices in this room.
        device_type: Only devices of this type.
        online: True for reachable devices only, False for offline ones only.
        low_battery: Only battery devices at 20 % or less.
        query: Case-insensitive part of the device name.
        limit: Maximum number of devices to return.
        offset: Number of matching devices to skip (for paging).
    """
    if home_id is not None:
        get_home(s, home_id)
    if room_id is not None:
        get_room(s, room_id)
    t = now(s)
    needle = (query or "").strip().lower()
    rows = []
    for d in s.devices.values():
        if (home_id is not None and d.home_id != home_id.strip()) or (room_id is not None and d.room_id != room_id.strip()):
            continue
        if (device_type is not None and d.type != device_type) or (online is not None and d.online != online):
            continue
        battery = dyn.battery_now(d, t)
        if low_battery and (battery is None or battery > 20):
            continue
        if needle and needle not in d.name.lower():
            continue
        rows.append(d)
    rows.sort(key=lambda d: (d.home_id, s.rooms[d.room_id].name, d.name, d.device_id))
    return {"total": len(rows), "offset": offset, "devices": [device_row(s, d, t) for d in rows[offset:offset + limit]]}


@tool(consumes=("device_id",), read_only=True)
def get_smart_device_status(s: IotState, device_id: str) -> dict:
    """Everything about one device: model, room, connectivity, battery, capabilities and limits, its
    full current state and which commands it supports.

    Args:
        device_id: The device to show.
    """
    return device_view(s, get_device(s, device_id), now(s))


@tool(consumes=("device_id",), read_only=True)
def get_device_sensor_history(
    s: IotState,
    device_id: str,
    metric: str | None = None,
    since: IsoDateTime | None = None,
    kind: Literal["reading", "event"] | None = None,
    limit: Limit = 48,
) -> dict:
    """A device's history, newest first: sensor readings (hourly temperature and humidity) and events
    (switched on, locked, motion detected, door opened, went offline...) with who or what caused them.

    Args:
        device_id: The device whose history to show.
        metric: Only entries of this metric, e.g. temperature_c, humidity_percent, power, lock, contact.
        since: Only entries at or after this date-time (ISO 8601).
        kind: Only readings or only events.
        limit: Maximum number of entries to return.
    """
    d = get_device(s, device_id)
    start = parse_datetime(since, "since") if since else None
    rows = [h for h in s.history.values() if h.device_id == d.device_id
            and (metric is None or h.metric == metric.strip()) and (kind is None or h.kind == kind)
            and (start is None or dyn.at(h.at) >= start)]
    rows.sort(key=lambda h: (h.at, h.entry_id), reverse=True)
    return {"device_id": d.device_id, "name": d.name, "total": len(rows),
            "entries": [{"at": h.at, "kind": h.kind, "metric": h.metric, "value": h.value, "source": h.source}
                        for h in rows[:limit]]}


@tool(consumes=("home_id",), read_only=True)
def get_home_energy_usage(s: IotState, home_id: str) -> dict:
    """A home's electricity use right now: total draw in watts, the devices drawing power (largest
    first), the draw per room, and today's kWh of each metered plug.

    Args:
        home_id: The home to report on.
    """
    home = get_home(s, home_id)
    t = now(s)
    devices = [d for d in s.devices.values() if d.home_id == home.home_id]
    draws = [(dyn.power_draw_w(s, d, t), d) for d in devices]
    consumers = sorted(((w, d) for w, d in draws if w > 0), key=lambda x: (-x[0], x[1].device_id))
    rooms: dict[str, float] = {}
    for w, d in consumers:
        name = s.rooms[d.room_id].name
        rooms[name] = round(rooms.get(name, 0.0) + w, 1)
    plugs = [{"device_id": d.device_id, "name": d.name, "appliance": d.state["appliance"],
              "energy_today_kwh": dyn.plug_today_kwh(d, t), "online": d.online}
             for d in devices if d.type == "plug"]
    return {"home_id": home.home_id, "home": home.name, "as_of": iso(t),
            "total_draw_w": round(sum(w for w, _ in consumers), 1),
            "consumers": [{"device_id": d.device_id, "name": d.name, "draw_w": w, "summary": summary(s, d, t)}
                          for w, d in consumers],
            "draw_by_room_w": dict(sorted(rooms.items())),
            "metered_plugs": plugs, "plugs_today_kwh": round(sum(p["energy_today_kwh"] for p in plugs), 3)}


@tool(consumes=("device_id",), establishes=("device_on",))
def switch_smart_device_power(s: IotState, device_id: str, on: bool) -> dict:
    """Turn a light or a smart plug on or off. The device must be online; other device types have
    their own controls.

    Args:
        device_id: The light or plug to switch.
        on: True to turn it on, False to turn it off.
    """
    t = now(s)
    d = rules.set_power(s, get_device(s, device_id), on, t, "user")
    return device_view(s, d, t)


@tool(consumes=("device_id",), establishes=("device_on",))
def adjust_smart_light(
    s: IotState,
    device_id: str,
    brightness: Annotated[int, Field(ge=1, le=100)] | None = None,
    color: ColorName | None = None,
    color_temperature_k: Annotated[int, Field(ge=1000, le=10000)] | None = None,
) -> dict:
    """Change a light's brightness, color or white color temperature (the light turns on). What can be
    changed depends on the bulb: dimmable, color and tunable-white lights each support more; the
    supported color temperature range depends on the model.

    Args:
        device_id: The light to adjust.
        brightness: Brightness in percent (1-100).
        color: A color for color lights.
        color_temperature_k: White color temperature in kelvin (warm ~2700, daylight ~5000) for tunable lights.
    """
    t = now(s)
    d = rules.set_light(s, get_device(s, device_id), t, "user", brightness=brightness, color=color,
                        kelvin=color_temperature_k)
    return device_view(s, d, t)


@tool(consumes=("device_id",))
def set_blind_position(s: IotState, device_id: str, position: Annotated[int, Field(ge=0, le=100)]) -> dict:
    """Open, close or partly open motorized blinds, shades or curtains.

    Args:
        device_id: The blinds to move.
        position: 0 = fully closed, 100 = fully open.
    """
    t = now(s)
    d = rules.set_blind(s, get_device(s, device_id), position, t, "user")
    return device_view(s, d, t)


@tool(consumes=("device_id",))
def set_camera_settings(
    s: IotState,
    device_id: str,
    recording: bool | None = None,
    motion_detection: bool | None = None,
    privacy_mode: bool | None = None,
) -> dict:
    """Change a security camera's continuous recording, motion detection or privacy mode. A camera in
    privacy mode does not record; battery cameras only record motion clips.

    Args:
        device_id: The camera to change.
        recording: Continuous recording on or off.
        motion_detection: Motion alerts and clips on or off.
        privacy_mode: Privacy mode on (lens off, no recording) or off.
    """
    t = now(s)
    d = climate.set_camera(s, get_device(s, device_id), t, "user", recording=recording,
                           motion_detection=motion_detection, privacy_mode=privacy_mode)
    return device_view(s, d, t)
