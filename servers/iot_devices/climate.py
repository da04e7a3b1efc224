"""Thermostat, water-heater and camera commands (shared by the tools and by scenes)."""

from __future__ import annotations

from datetime import datetime

from servers.iot_devices import dynamics as dyn
from servers.iot_devices.state import (
    POWER_HINTS,
    SENSOR_HINT,
    Device,
    IotState,
    log,
    need_online,
    need_range,
    need_type,
    no_change,
    touch,
    unsupported,
)
from servers.kit import ToolError, iso

HEATER_TEMP_MODES = ("eco", "electric", "heat_pump")


def set_thermostat_mode(s: IotState, d: Device, mode: str, t: datetime, source: str, strict: bool = True) -> Device:
    need_type(d, ("thermostat",), "heating/cooling modes", POWER_HINTS.get(d.type, SENSOR_HINT), "device_id")
    need_online(d)
    if d.state["mode"] == mode:
        no_change(strict, f"{d.name} is already in {mode} mode", "mode")
        return d
    rec = touch(s, d, iso(t))
    dyn.reanchor_climate(s, rec, t)
    rec.state["mode"] = mode
    log(s, rec.device_id, "event", "mode", mode, source, iso(t))
    return rec


def set_thermostat_target(s: IotState, d: Device, celsius: float, given: float, unit: str, t: datetime,
                          source: str, strict: bool = True) -> Device:
    need_type(d, ("thermostat",), "a target temperature", "" if d.type != "water_heater" else
              "use set_water_heater", "device_id")
    need_online(d)
    mode = d.state["mode"]
    if mode == "off":
        raise ToolError(f"{d.name} is off; set a mode (heat, cool or auto) with set_thermostat_mode first",
                        field="device_id", code="precondition")
    if mode == "eco":
        raise ToolError(f"{d.name} is in eco mode, which manages its own setpoints ({dyn.ECO_BAND[0]:g}-"
                        f"{dyn.ECO_BAND[1]:g} °C); switch to heat, cool or auto first", field="device_id",
                        code="precondition")
    need_range(d, celsius, given, unit, "temperature")
    if d.state["target_c"] == celsius:
        no_change(strict, f"{d.name} is already set to {celsius:g} °C", "temperature")
        return d
    rec = touch(s, d, iso(t))
    dyn.reanchor_climate(s, rec, t)
    rec.state["target_c"] = celsius
    log(s, rec.device_id, "event", "target_c", celsius, source, iso(t))
    return rec


def set_water_heater(s: IotState, d: Device, mode: str | None, celsius: float | None, given: float | None,
                     unit: str, t: datetime, source: str) -> Device:
    need_type(d, ("water_heater",), "water-heater settings", POWER_HINTS.get(d.type, SENSOR_HINT))
    need_online(d)
    if mode is None and celsius is None:
        raise ToolError("give a mode or a temperature to change", field="mode")
    if mode == "heat_pump" and "heat_pump" not in d.capabilities:
        raise unsupported(d, "heat-pump mode", "it is a plain electric tank", "mode")
    new_mode = mode or d.state["mode"]
    if celsius is not None:
        if new_mode not in HEATER_TEMP_MODES:
            raise ToolError(f"in {new_mode} mode the heater holds its own temperature; choose mode eco, electric"
                            + (" or heat_pump" if "heat_pump" in d.capabilities else "") + " to set one",
                            field="temperature", code="precondition")
        need_range(d, celsius, given if given is not None else celsius, unit, "temperature")
    if new_mode == d.state["mode"] and (celsius is None or celsius == d.state["target_c"]):
        raise ToolError(f"{d.name} is already in {new_mode} mode at {d.state['target_c']:g} °C", field="mode",
                        code="no_change")
    rec = touch(s, d, iso(t))
    dyn.reanchor_climate(s, rec, t)
    rec.state["mode"] = new_mode
    if celsius is not None:
        rec.state["target_c"] = celsius
    log(s, rec.device_id, "event", "water_heater", {"mode": new_mode, "target_c": rec.state["target_c"]}, source,
        iso(t))
    return rec


def set_camera(s: IotState, d: Device, t: datetime, source: str, recording: bool | None = None,
               motion_detection: bool | None = None, privacy_mode: bool | None = None,
               strict: bool = True) -> Device:
    need_type(d, ("camera",), "camera settings", POWER_HINTS.get(d.type, SENSOR_HINT))
    need_online(d)
    if recording is None and motion_detection is None and privacy_mode is None:
        raise ToolError("give recording, motion_detection or privacy_mode to change", field="recording")
    st = d.state
    privacy = st["privacy_mode"] if privacy_mode is None else privacy_mode
    if recording and privacy:
        raise ToolError(f"{d.name} is in privacy mode, so it cannot record; turn privacy_mode off first",
                        field="recording", code="precondition")
    if recording and d.limits.get("battery_powered"):
        raise unsupported(d, "continuous recording", "battery cameras only record motion clips "
                          "(motion_detection)", "recording")
    wanted = {k: v for k, v in (("recording", recording), ("motion_detection", motion_detection),
                                ("privacy_mode", privacy_mode)) if v is not None}
    if privacy:
        wanted["recording"] = False
    if all(st[k] == v for k, v in wanted.items()):
        no_change(strict, f"{d.name} already has these settings", "recording")
        return d
    rec = touch(s, d, iso(t))
    rec.state.update(wanted)
    log(s, rec.device_id, "event", "camera", wanted, source, iso(t))
    return rec
