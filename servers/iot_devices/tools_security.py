"""Locks, access codes and the alarm system."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.iot_devices import rules
from servers.iot_devices.state import IotState, get_device, get_home, log, need_online, need_type, touch
from servers.iot_devices.views import device_view, security_view
from servers.kit import Name, Sensitive, ToolError, iso, now, tool

Code = Annotated[Sensitive, Field(pattern=r"^\d{4,8}$")]


@tool(consumes=("device_id",), establishes=("door_locked",))
def lock_smart_lock(s: IotState, device_id: str) -> dict:
    """Lock a smart door lock. The door must be closed and the lock must not be jammed.

    Args:
        device_id: The lock.
    """
    t = now(s)
    d = rules.lock(s, get_device(s, device_id), t, "user")
    return device_view(s, d, t)


@tool(consumes=("device_id",), requires=("door_locked",))
def unlock_smart_lock(s: IotState, device_id: str, code: Code) -> dict:
    """Unlock a smart door lock remotely with one of its access codes (the owner's or a guest's).

    Args:
        device_id: The lock.
        code: An access code programmed on this lock (4-8 digits).
    """
    d = get_device(s, device_id)
    need_type(d, ("lock",), "unlocking")
    need_online(d)
    match = next((c for c in d.state["codes"] if c["code"] == code), None)
    if match is None:
        raise ToolError(f"incorrect code for {d.name}; use one of the access codes programmed on this lock",
                        field="code", code="wrong_code")
    if d.state["jammed"]:
        raise ToolError(f"{d.name} is jammed: the bolt could not move last time; check the door by hand",
                        field="device_id", code="jammed")
    if not d.state["locked"]:
        raise ToolError(f"{d.name} is already unlocked", field="device_id", code="no_change")
    t = now(s)
    rec = touch(s, d, iso(t))
    rec.state["locked"] = False
    log(s, rec.device_id, "event", "lock", f"unlocked with code '{match['name']}'", "user", iso(t))
    return device_view(s, rec, t)


@tool(consumes=("device_id",))
def manage_lock_access_code(
    s: IotState,
    device_id: str,
    action: Literal["add", "remove"],
    code_name: Name,
    code: Code | None = None,
) -> dict:
    """Add a named access code to a smart lock (for a guest, a cleaner, a dog walker...) or remove one by
    its name. Each lock has a limited number of code slots; the owner code cannot be removed.

    Args:
        device_id: The lock.
        action: add or remove.
        code_name: The name the code is stored under, e.g. "Dog Walker".
        code: The new code (4-8 digits); required when adding.
    """
    d = get_device(s, device_id)
    need_type(d, ("lock",), "access codes")
    need_online(d)
    codes = d.state["codes"]
    name = code_name.strip()
    existing = next((c for c in codes if c["name"].lower() == name.lower()), None)
    t = now(s)
    if action == "remove":
        if code is not None:
            raise ToolError("leave code out when removing; codes are removed by their name", field="code")
        if existing is None:
            raise ToolError(f"{d.name} has no access code named '{name}' (it has: "
                            f"{', '.join(c['name'] for c in codes)})", field="code_name", code="not_found")
        if existing["role"] == "owner":
            raise ToolError("the owner code cannot be removed; add a new code first if it was compromised",
                            field="code_name", code="forbidden")
        rec = touch(s, d, iso(t))
        rec.state["codes"] = [c for c in codes if c["name"] != existing["name"]]
        log(s, d.device_id, "event", "access_code", f"removed '{existing['name']}'", "user", iso(t))
        return device_view(s, rec, t)
    if code is None:
        raise ToolError("give the 4-8 digit code to add", field="code")
    if existing is not None:
        raise ToolError(f"{d.name} already has a code named '{existing['name']}'; remove it first or pick another "
                        "name", field="code_name", code="duplicate")
    if any(c["code"] == code for c in codes):
        raise ToolError(f"that code is already in use on {d.name}; choose a different code", field="code",
                        code="duplicate")
    if len(codes) >= d.limits["max_codes"]:
        raise ToolError(f"{d.name} holds at most {d.limits['max_codes']} access codes and all slots are used; "
                        "remove one first", field="device_id", code="limit_exceeded")
    rec = touch(s, d, iso(t))
    rec.state["codes"].append({"name": name, "code": code, "role": "guest"})
    log(s, d.device_id, "event", "access_code", f"added '{name}'", "user", iso(t))
    return device_view(s, rec, t)


@tool(consumes=("home_id",), produces=("device_id",), read_only=True)
def get_home_security_status(s: IotState, home_id: str) -> dict:
    """A home's alarm system: its mode (disarmed, home, away, night) and whether it is arming or armed,
    plus open doors and windows, unlocked locks, smoke or leak alarms, offline sensors and cameras.

    Args:
        home_id: The home.
    """
    return security_view(s, get_home(s, home_id), now(s))


@tool(consumes=("home_id",), establishes=("alarm_armed",))
def set_home_security_mode(
    s: IotState,
    home_id: str,
    mode: Literal["disarmed", "home", "away", "night"],
    code: Code | None = None,
) -> dict:
    """Arm or disarm a home's alarm system. Away and night modes need every door and window closed,
    home mode every door; away mode arms after a 2-minute exit delay. Disarming or switching an armed
    system to another mode needs the alarm code.

    Args:
        home_id: The home.
        mode: disarmed, home (perimeter only), away (everything) or night.
        code: The alarm panel code (4-8 digits); required to disarm or change an armed mode.
    """
    home = get_home(s, home_id)
    t = now(s)
    if home.security_mode == mode:
        raise ToolError(f"{home.name}'s alarm is already {mode} ({home.security_state})", field="mode",
                        code="no_change")
    if home.security_mode != "disarmed":
        if code is None:
            raise ToolError(f"{home.name}'s alarm is armed ({home.security_mode}); give the alarm code to disarm or "
                            "change it", field="code", code="code_required")
        if code != home.security_code:
            raise ToolError(f"incorrect alarm code for {home.name}", field="code", code="wrong_code")
    if mode != "disarmed":
        contacts = [d for d in s.devices.values() if d.home_id == home.home_id and d.type == "contact_sensor"
                    and d.online and d.state["open"] and (mode != "home" or d.state["opening"] == "door")]
        if contacts:
            names = ", ".join(f"{d.name} ({d.device_id})" for d in contacts)
            raise ToolError(f"cannot arm {mode}: {names} {'is' if len(contacts) == 1 else 'are'} open; close "
                            f"{'it' if len(contacts) == 1 else 'them'} first", field="mode", code="open_contact")
    rec = s.homes.edit(home.home_id)
    rec.security_mode = mode
    if mode == "disarmed":
        rec.security_state, rec.armed_at = "disarmed", None
    elif mode == "away":
        rec.security_state, rec.armed_at = "arming", iso(t + rules.EXIT_DELAY)
    else:
        rec.security_state, rec.armed_at = "armed", iso(t)
    return security_view(s, rec, t)

