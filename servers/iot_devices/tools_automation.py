"""Scenes (saved device settings, applied together) and time-based automations."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.iot_devices import rules
from servers.iot_devices.scenes import apply_scene
from servers.iot_devices.state import (
    WEEKDAYS,
    Automation,
    IotState,
    Scene,
    get_automation,
    get_device,
    get_home,
    get_scene,
    need_online,
)
from servers.iot_devices.views import automation_view, scene_view
from servers.kit import Name, ToolError, iso, new_id, now, tool

Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
ClockTime = Annotated[str, Field(pattern=r"^([01]\d|2[0-3]):[0-5]\d$")]
DeviceAction = Literal["turn_on", "turn_off", "lock", "start_cleaning", "open", "close"]
MAX_SCENE_DEVICES = 30


def _name_taken(rows: list[str], name: str) -> bool:
    return name.strip().lower() in {r.strip().lower() for r in rows}


@tool(consumes=("home_id",), produces=("scene_id",), read_only=True)
def list_home_scenes(s: IotState, home_id: str) -> list:
    """List a home's scenes with the devices each one sets and the settings it applies.

    Args:
        home_id: The home.
    """
    home = get_home(s, home_id)
    return [scene_view(s, sc) for sc in s.scenes.values() if sc.home_id == home.home_id]


@tool(consumes=("home_id", "device_id"), produces=("scene_id",))
def save_home_scene(s: IotState, home_id: str, name: Name, device_ids: list[str]) -> dict:
    """Save a new scene from the current settings of some devices of one home (lights, plugs, blinds,
    thermostats, locks, cameras), to bring them all back later in one step. Scene names are unique
    within a home; a lock in a scene is always locked by it.

    Args:
        home_id: The home the scene belongs to.
        name: The scene's name, e.g. "Movie Night".
        device_ids: The devices whose current settings the scene captures (1-30 devices of this home).
    """
    home = get_home(s, home_id)
    title = name.strip()
    if _name_taken([sc.name for sc in s.scenes.values() if sc.home_id == home.home_id], title):
        raise ToolError(f"{home.name} already has a scene named '{title}'; pick another name", field="name",
                        code="duplicate")
    ids = list(dict.fromkeys(d.strip() for d in device_ids))
    if not ids:
        raise ToolError("a scene needs at least one device", field="device_ids")
    if len(ids) > MAX_SCENE_DEVICES:
        raise ToolError(f"a scene holds at most {MAX_SCENE_DEVICES} devices", field="device_ids",
                        code="limit_exceeded")
    items = []
    for did in ids:
        d = get_device(s, did, "device_ids")
        if d.home_id != home.home_id:
            raise ToolError(f"{d.name} ({d.device_id}) belongs to {s.homes[d.home_id].name}, not {home.name}",
                            field="device_ids")
        need_online(d, "device_ids")
        items.append({"device_id": d.device_id, "settings": rules.settings_of(d)})
    sid = new_id(s.counters, "SCN")
    sc = s.scenes.put(sid, Scene(sid, home.home_id, title, items, iso(now(s))))
    return scene_view(s, sc)


@tool(consumes=("scene_id",))
def activate_home_scene(s: IotState, scene_id: str) -> dict:
    """Apply a scene: every device in it goes back to the scene's settings. Devices that are offline or
    refuse (a jammed lock, an open door) are skipped and reported; the others still change.

    Args:
        scene_id: The scene to apply.
    """
    sc = get_scene(s, scene_id)
    results = apply_scene(s, sc, now(s), f"scene:{sc.scene_id}")
    if not any(r["result"] == "applied" for r in results):
        raise ToolError(f"none of the devices of scene '{sc.name}' could be set: "
                        + "; ".join(f"{r['name']}: {r['result']}" for r in results), field="scene_id",
                        code="device_offline")
    return {"scene_id": sc.scene_id, "name": sc.name, "activated_at": iso(now(s)), "devices": results}


@tool(consumes=("home_id",), produces=("automation_id",), read_only=True)
def list_home_automations(s: IotState, home_id: str, enabled: bool | None = None) -> list:
    """List a home's automations: when each runs, what it does, when it runs next and how its last run
    went.

    Args:
        home_id: The home.
        enabled: Only enabled (True) or only disabled (False) automations.
    """
    home = get_home(s, home_id)
    t = now(s)
    out = []
    for a in s.automations.values():
        if a.home_id == home.home_id and (enabled is None or a.enabled == enabled):
            nxt = rules.next_run(a, t)
            out.append(automation_view(s, a, iso(nxt) if nxt else None))
    return out


@tool(consumes=("home_id", "scene_id", "device_id"), produces=("automation_id",))
def create_home_automation(
    s: IotState,
    home_id: str,
    name: Name,
    time: ClockTime,
    days: list[Weekday] | None = None,
    scene_id: str | None = None,
    device_id: str | None = None,
    device_action: DeviceAction | None = None,
) -> dict:
    """Create a schedule that runs at a time of day on chosen weekdays and either applies a scene or does
    one thing to one device (turn a light or plug on/off, lock a door, start the vacuum, open or close
    blinds). Automation names are unique within a home; automations never unlock doors.

    Args:
        home_id: The home.
        name: The automation's name, e.g. "Morning Lights".
        time: Time of day as HH:MM (24-hour, home time).
        days: Weekdays to run on; leave out for every day.
        scene_id: The scene to apply (instead of device_id and device_action).
        device_id: The device to act on (with device_action).
        device_action: What to do to the device.
    """
    home = get_home(s, home_id)
    title = name.strip()
    if _name_taken([a.name for a in s.automations.values() if a.home_id == home.home_id], title):
        raise ToolError(f"{home.name} already has an automation named '{title}'; pick another name or update "
                        "that one", field="name", code="duplicate")
    if (scene_id is None) == (device_id is None):
        raise ToolError("give either a scene_id, or a device_id with a device_action", field="scene_id")
    if scene_id is not None:
        if device_action is not None:
            raise ToolError("device_action only goes with device_id", field="device_action")
        sc = get_scene(s, scene_id)
        if sc.home_id != home.home_id:
            raise ToolError(f"scene '{sc.name}' belongs to {s.homes[sc.home_id].name}, not {home.name}",
                            field="scene_id")
    else:
        d = get_device(s, device_id or "")
        if d.home_id != home.home_id:
            raise ToolError(f"{d.name} belongs to {s.homes[d.home_id].name}, not {home.name}", field="device_id")
        if device_action is None:
            raise ToolError("say what to do to the device (device_action)", field="device_action")
        if not rules.action_fits(d, device_action):
            raise ToolError(f"{d.name} is a {d.type.replace('_', ' ')}; '{device_action}' does not apply to it",
                            field="device_action", code="unsupported")
    chosen = sorted(set(days), key=WEEKDAYS.index) if days else list(WEEKDAYS)
    aid = new_id(s.counters, "AUT")
    a = s.automations.put(aid, Automation(aid, home.home_id, title, time, chosen, True, iso(now(s)),
                                          scene_id=scene_id.strip() if scene_id else None,
                                          device_id=device_id.strip() if device_id else None,
                                          device_action=device_action))
    nxt = rules.next_run(a, now(s))
    return automation_view(s, a, iso(nxt) if nxt else None)


@tool(consumes=("automation_id",))
def update_home_automation(
    s: IotState,
    automation_id: str,
    enabled: bool | None = None,
    time: ClockTime | None = None,
    days: list[Weekday] | None = None,
    name: Name | None = None,
) -> dict:
    """Pause or resume an automation, or change its time, weekdays or name.

    Args:
        automation_id: The automation.
        enabled: False to pause it, True to resume it.
        time: New time of day as HH:MM (24-hour, home time).
        days: New weekdays to run on.
        name: New name (unique within the home).
    """
    a = get_automation(s, automation_id)
    changes: dict[str, object] = {}
    if enabled is not None and enabled != a.enabled:
        changes["enabled"] = enabled
    if time is not None and time != a.time:
        changes["time"] = time
    if days is not None:
        if not days:
            raise ToolError("days cannot be empty; pause the automation instead (enabled false)", field="days")
        ordered = sorted(set(days), key=WEEKDAYS.index)
        if ordered != a.days:
            changes["days"] = ordered
    if name is not None and name.strip() != a.name:
        others = [x.name for x in s.automations.values() if x.home_id == a.home_id and x.automation_id != a.automation_id]
        if _name_taken(others, name):
            raise ToolError(f"this home already has an automation named '{name.strip()}'", field="name",
                            code="duplicate")
        changes["name"] = name.strip()
    if not changes:
        raise ToolError(f"nothing to change: '{a.name}' already has these settings", field="automation_id",
                        code="no_change")
    rec = s.automations.edit(a.automation_id)
    for k, v in changes.items():
        setattr(rec, k, v)
    nxt = rules.next_run(rec, now(s))
    return automation_view(s, rec, iso(nxt) if nxt else None)
