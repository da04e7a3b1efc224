"""Closed-form device physics: what a device reads at any instant, from its last anchor.

- Thermostats move the indoor temperature towards their setpoint at 2 °C/h while heating or cooling
  and drift towards the home's ambient temperature at 0.5 °C/h otherwise.
- Water heaters heat their tank (electric 12 °C/h, heat pump / eco 6 °C/h) and lose 0.5 °C/h.
- Batteries drain linearly (sensors, locks, cameras: per day; robot vacuums: per minute while
  running, and they charge on the dock).
- Metered plugs integrate their appliance's draw into kWh.

Whenever a command changes a driver (mode, setpoint, on/off, vacuum phase), the tool re-anchors the
record at the current instant first, so the history before the change is kept exactly.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from servers.iot_devices import data
from servers.iot_devices.state import Device, Home, IotState, Room
from servers.kit import iso

ACTIVE_RATE = 2.0  # °C per hour while heating/cooling
PASSIVE_RATE = 0.5  # °C per hour drift
ECO_BAND = (16.0, 28.0)
HEATER_RATE = {"electric": 12.0, "heat_pump": 6.0, "eco": 6.0}
ECO_MAX_C = 50.0
VACATION_C = 15.0
VACUUM_CHARGE = 1.5  # % per minute on the dock
VACUUM_DRAIN = 0.5  # % per minute while cleaning or returning
VACUUM_IDLE_DRAIN = 0.02  # % per minute while stuck off the dock
MIN_VACUUM_START = 20.0


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def hours(since: str, t: datetime) -> float:
    return max(0.0, (t - at(since)).total_seconds() / 3600)


def approach(c0: float, goal: float, rate_per_hour: float, h: float) -> float:
    step = rate_per_hour * h
    if abs(goal - c0) <= step:
        return goal
    return c0 + step if goal > c0 else c0 - step


# ---------------------------------------------------------------- thermostat
def thermostat_drive(home: Home, st: dict[str, Any], c0: float) -> tuple[float, float, str]:
    """(goal, rate °C/h, hvac action) for a thermostat that reads ``c0`` at its anchor."""
    mode, target, amb = st["mode"], st["target_c"], home.ambient_c
    if mode == "off":
        return amb, PASSIVE_RATE, "off"
    if mode == "eco":
        lo, hi = ECO_BAND
        if c0 < lo:
            return lo, ACTIVE_RATE, "heating"
        if c0 > hi:
            return hi, ACTIVE_RATE, "cooling"
        return min(max(amb, lo), hi), PASSIVE_RATE, "idle"
    if mode in ("heat", "auto") and c0 < target - 0.05:
        return target, ACTIVE_RATE, "heating"
    if mode in ("cool", "auto") and c0 > target + 0.05:
        return target, ACTIVE_RATE, "cooling"
    if mode == "heat":
        return max(target, amb), PASSIVE_RATE, "idle"
    if mode == "cool":
        return min(target, amb), PASSIVE_RATE, "idle"
    return target, PASSIVE_RATE, "idle"


def thermostat_now(s: IotState, d: Device, t: datetime) -> tuple[float, str]:
    """(current °C, hvac action) of thermostat ``d`` at ``t``."""
    st = d.state
    goal, rate, action = thermostat_drive(s.homes[d.home_id], st, st["anchor_c"])
    current = approach(st["anchor_c"], goal, rate, hours(st["anchor_at"], t))
    if action in ("heating", "cooling") and abs(current - goal) < 0.05:
        action = "idle"
    return round(current, 1), action


def home_thermostat(s: IotState, home_id: str) -> Device | None:
    return next((d for d in s.devices.values() if d.home_id == home_id and d.type == "thermostat"), None)


def room_temperature(s: IotState, room: Room, t: datetime) -> float:
    thermo = home_thermostat(s, room.home_id)
    base = thermostat_now(s, thermo, t)[0] if thermo is not None else s.homes[room.home_id].ambient_c
    return round(base + room.offset_c, 1)


# ---------------------------------------------------------------- water heater
def heater_drive(st: dict[str, Any]) -> tuple[float, float]:
    mode = st["mode"]
    if mode == "off":
        return 20.0, PASSIVE_RATE
    if mode == "vacation":
        return VACATION_C, PASSIVE_RATE
    goal = min(st["target_c"], ECO_MAX_C) if mode == "eco" else st["target_c"]
    return goal, HEATER_RATE[mode] if st["anchor_c"] < goal else PASSIVE_RATE


def heater_now(d: Device, t: datetime) -> tuple[float, bool]:
    """(tank °C, heating?) of water heater ``d`` at ``t``."""
    st = d.state
    goal, rate = heater_drive(st)
    tank = approach(st["anchor_c"], goal, rate, hours(st["anchor_at"], t))
    return round(tank, 1), rate > PASSIVE_RATE and tank < goal - 0.05


def reanchor_climate(s: IotState, d: Device, t: datetime) -> None:
    """Fix a thermostat's or water heater's current reading as its new anchor (``d`` is a session copy)."""
    if d.type == "thermostat":
        d.state["anchor_c"] = thermostat_now(s, d, t)[0]
    else:
        d.state["anchor_c"] = heater_now(d, t)[0]
    d.state["anchor_at"] = iso(t)


# ---------------------------------------------------------------- batteries
def battery_rate(d: Device) -> float:
    """Percent per minute (negative: draining)."""
    if d.type == "robot_vacuum":
        status = d.state["status"]
        if status == "docked":
            return VACUUM_CHARGE
        return -VACUUM_DRAIN if status in ("cleaning", "returning") else -VACUUM_IDLE_DRAIN
    return -data.BATTERY_DRAIN_PER_DAY.get(d.type, 0.0) / 1440


def battery_now(d: Device, t: datetime) -> float | None:
    if d.battery is None or d.battery_at is None:
        return None
    if not d.online:
        return round(d.battery, 1)
    value = d.battery + battery_rate(d) * hours(d.battery_at, t) * 60
    return round(min(100.0, max(0.0, value)), 1)


def reanchor_battery(d: Device, t: datetime) -> None:
    if d.battery is not None:
        d.battery = battery_now(d, t)
        d.battery_at = iso(t)


def depletion_time(d: Device) -> datetime | None:
    """When a draining, online battery device reaches 0 %."""
    if d.battery is None or d.battery_at is None or not d.online:
        return None
    rate = battery_rate(d)
    if rate >= 0:
        return None
    return at(d.battery_at) + timedelta(minutes=d.battery / -rate)


# ---------------------------------------------------------------- metered plugs and power draw
def _midnight(t: datetime) -> datetime:
    return datetime(t.year, t.month, t.day, tzinfo=UTC)


def plug_total_kwh(d: Device, t: datetime) -> float:
    st = d.state
    if not st["on"]:
        return st["kwh"]
    return st["kwh"] + st["rated_w"] / 1000 * hours(st["anchor_at"], t)


def plug_today_kwh(d: Device, t: datetime) -> float:
    st = d.state
    start = st["day_start_kwh"] if st["day"] == t.date().isoformat() else plug_total_kwh(d, _midnight(t))
    return round(plug_total_kwh(d, t) - start, 3)


def reanchor_plug(d: Device, t: datetime) -> None:
    st = d.state
    if st["day"] != t.date().isoformat():
        st["day_start_kwh"] = round(plug_total_kwh(d, _midnight(t)), 4)
        st["day"] = t.date().isoformat()
    st["kwh"] = round(plug_total_kwh(d, t), 4)
    st["anchor_at"] = iso(t)


def power_draw_w(s: IotState, d: Device, t: datetime) -> float:
    """Instantaneous draw in watts of the devices that matter for the energy view."""
    if not d.online:
        return 0.0
    st = d.state
    if d.type == "light":
        return round(d.limits.get("watts", 9) * (st.get("brightness") or 100) / 100, 1) if st["on"] else 0.0
    if d.type == "plug":
        return float(st["rated_w"]) if st["on"] else 0.0
    if d.type == "thermostat":
        return 3500.0 if thermostat_now(s, d, t)[1] in ("heating", "cooling") else 0.0
    if d.type == "water_heater":
        heating = heater_now(d, t)[1]
        return (4500.0 if st["mode"] == "electric" else 1200.0) if heating else 0.0
    if d.type == "robot_vacuum":
        return 60.0 if st["status"] == "docked" and (battery_now(d, t) or 0) < 100 else 0.0
    return 0.0
