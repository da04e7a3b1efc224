"""The session clock of the IoT domain (``on_time``): what happens as time passes.

Exit delays end, vacuums finish and dock, batteries die, automations run their scene or device
action, and sensors report hourly readings. It sits above ``rules`` and ``scenes`` (an automation
applies a scene, a scene sets devices through the commands of ``rules`` and ``climate``), so that
those modules never import each other in a circle.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from servers.iot_devices import dynamics as dyn
from servers.iot_devices import rules
from servers.iot_devices.scenes import apply_scene
from servers.iot_devices.state import Automation, Device, IotState, log, touch
from servers.kit import ToolError, iso


def run_automation(s: IotState, a: Automation, t: datetime) -> None:
    source = f"automation:{a.automation_id}"
    try:
        if a.scene_id:
            result = apply_scene(s, s.scenes[a.scene_id], t, source)
            skipped = [x for x in result if x["result"] != "applied"]
            outcome = "ok" if not skipped else f"partial: {len(skipped)} device(s) skipped"
        else:
            rules.run_device_action(s, s.devices[a.device_id], a.device_action or "", t, source)
            outcome = "ok"
    except ToolError as exc:
        outcome = f"failed: {exc}"
    rec = s.automations.edit(a.automation_id)
    rec.last_run_at, rec.last_result = iso(t), outcome


def _events(s: IotState, t: datetime, after: datetime) -> list[tuple[datetime, int, str]]:
    out: list[tuple[datetime, int, str]] = []
    hour = t.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    keep_from = (after - timedelta(days=7)).replace(minute=0, second=0, microsecond=0)
    hour = max(hour, keep_from + timedelta(hours=1)) if keep_from > t else hour
    if hour <= after:
        out.append((hour, 3, "hour"))
    for home in s.homes.values():
        if home.security_state == "arming" and home.armed_at and t < dyn.at(home.armed_at) <= after:
            out.append((dyn.at(home.armed_at), 0, home.home_id))
    for d in s.devices.values():
        end = d.state.get("phase_ends_at") if d.type == "robot_vacuum" else None
        if end and t < dyn.at(end) <= after:
            out.append((dyn.at(end), 1, d.device_id))
        dead = dyn.depletion_time(d)
        if dead is not None and t < dead <= after:
            out.append((dead, 1, d.device_id))
    for a in s.automations.values():
        when = rules.next_run(a, t)
        if when is not None and when <= after:
            out.append((when, 2, a.automation_id))
    return out


def _device_due(s: IotState, d: Device, t: datetime) -> None:
    dead = dyn.depletion_time(d)
    if dead is not None and dead <= t:
        rec = touch(s, d, iso(t))
        rec.battery, rec.battery_at = 0.0, iso(t)
        rec.online, rec.offline_reason, rec.offline_since = False, "battery depleted", iso(t)
        if rec.type == "robot_vacuum":
            rec.state.update(status="stuck", error="battery depleted away from the dock")
        log(s, rec.device_id, "event", "connectivity", "offline: battery depleted", "system", iso(t))
        return
    end = d.state.get("phase_ends_at")
    if d.type == "robot_vacuum" and end and dyn.at(end) <= t:
        rec = touch(s, d, iso(t))
        dyn.reanchor_battery(rec, t)
        if rec.state["status"] == "cleaning":
            rules.finish_cleaning(s, rec, t, partial=False)
        else:
            emptied = "auto_empty" in rec.capabilities
            rec.state.update(status="docked", rooms=[], phase_ends_at=None,
                             bin_level=0 if emptied else rec.state["bin_level"])
            log(s, rec.device_id, "event", "vacuum", "docked" + (", bin emptied" if emptied else ""), "system",
                iso(t))


def _hourly(s: IotState, t: datetime) -> None:
    for d in s.devices.values():
        if not d.online or d.type not in ("climate_sensor", "thermostat"):
            continue
        if d.type == "thermostat":
            log(s, d.device_id, "reading", "temperature_c", dyn.thermostat_now(s, d, t)[0], "sensor", iso(t))
            continue
        log(s, d.device_id, "reading", "temperature_c", dyn.room_temperature(s, s.rooms[d.room_id], t), "sensor",
            iso(t))
        wobble = (t.hour + int(d.device_id[-2:])) % 5 - 2
        log(s, d.device_id, "reading", "humidity_percent", d.state["humidity"] + wobble, "sensor", iso(t))


def on_time(s: IotState, before: datetime, after: datetime) -> None:
    """Advance every due thing in time order: exit delays end, vacuums finish and dock, batteries die,
    automations run at their times, and sensors report hourly readings."""
    t = before
    while True:
        events = _events(s, t, after)
        if not events:
            return
        t = min(e[0] for e in events)
        for _, kind, key in sorted(e for e in events if e[0] == t):
            if kind == 0:
                home = s.homes.edit(key)
                home.security_state = "armed"
            elif kind == 1:
                _device_due(s, s.devices[key], t)
            elif kind == 2:
                run_automation(s, s.automations[key], t)
            else:
                _hourly(s, t)
