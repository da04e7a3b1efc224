"""Applying a scene: each captured device is set back to its captured settings, leniently — a device
that is offline, jammed or otherwise refuses is skipped and reported, the rest still apply."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from servers.iot_devices import climate, rules
from servers.iot_devices.state import Device, IotState, Scene
from servers.kit import ToolError, iso


def apply_settings(s: IotState, d: Device, want: dict[str, Any], t: datetime, source: str) -> None:
    if d.type == "light":
        if not want["on"]:
            rules.set_power(s, d, False, t, source, strict=False)
            return
        extra = {k: want[k] for k in ("brightness", "color") if want.get(k) is not None}
        if want.get("color_temperature_k") is not None and want.get("color") is None:
            extra["kelvin"] = want["color_temperature_k"]
        if extra:
            rules.set_light(s, d, t, source, strict=False, **extra)
        else:
            rules.set_power(s, d, True, t, source, strict=False)
    elif d.type == "plug":
        rules.set_power(s, d, want["on"], t, source, strict=False)
    elif d.type == "blind":
        rules.set_blind(s, d, want["position"], t, source, strict=False)
    elif d.type == "thermostat":
        d = climate.set_thermostat_mode(s, d, want["mode"], t, source, strict=False)
        if want["mode"] not in ("off", "eco"):
            climate.set_thermostat_target(s, d, want["target_c"], want["target_c"], "C", t, source, strict=False)
    elif d.type == "lock":
        rules.lock(s, d, t, source, strict=False)
    elif d.type == "camera":
        climate.set_camera(s, d, t, source, privacy_mode=want["privacy_mode"],
                           motion_detection=want["motion_detection"], strict=False)


def apply_scene(s: IotState, sc: Scene, t: datetime, source: str) -> list[dict[str, Any]]:
    """Apply every device of the scene; returns one result per device (``applied`` or ``skipped: ...``)."""
    out = []
    for item in sc.settings:
        d = s.devices[item["device_id"]]
        try:
            apply_settings(s, d, item["settings"], t, source)
            result = "applied"
        except ToolError as exc:
            result = f"skipped: {exc}"
        out.append({"device_id": d.device_id, "name": d.name, "result": result})
    rec = s.scenes.edit(sc.scene_id)
    rec.last_activated_at = iso(t)
    return out
