"""Smart-home discovery tools (hidden from the model): the real homes, devices and secrets for synthesis.

They include what a user would know but the tools never reveal: the alarm panel codes and every
lock's access codes (a synthesized user states them when asking to unlock or disarm).
"""

from __future__ import annotations

from typing import Literal

from servers.iot_devices import dynamics as dyn
from servers.iot_devices.rules import next_run
from servers.iot_devices.state import IotState
from servers.iot_devices.views import automation_view, scene_view, summary
from servers.kit import discovery, iso, now, value_counts


@discovery(produces=("home_id", "room_id"))
def iot_devices_list_homes(s: IotState) -> list:
    """Every home with its owner, alarm code and mode, rooms, scenes and automations."""
    t = now(s)
    out = []
    for h in s.homes.values():
        out.append({
            "home_id": h.home_id, "name": h.name, "kind": h.kind, "address": h.address, "owner_name": h.owner_name,
            "security_code": h.security_code, "security_mode": h.security_mode, "security_state": h.security_state,
            "rooms": [{"room_id": r.room_id, "name": r.name, "floor": r.floor} for r in s.rooms.values()
                      if r.home_id == h.home_id],
            "scenes": [scene_view(s, sc) for sc in s.scenes.values() if sc.home_id == h.home_id],
            "automations": [automation_view(s, a, iso(n) if (n := next_run(a, t)) else None)
                            for a in s.automations.values() if a.home_id == h.home_id],
        })
    return out


@discovery(produces=("device_id",))
def iot_devices_list_devices(s: IotState, home_id: str | None = None) -> list:
    """Every device with home, room, model, capabilities, connectivity, battery, raw state (lock access
    codes included) and a one-line summary.

    Args:
        home_id: Only devices of this home.
    """
    t = now(s)
    return [{"device_id": d.device_id, "name": d.name, "type": d.type, "home_id": d.home_id,
             "room_id": d.room_id, "room": s.rooms[d.room_id].name, "manufacturer": d.manufacturer,
             "model": d.model, "capabilities": list(d.capabilities), "limits": dict(d.limits), "online": d.online,
             "offline_reason": d.offline_reason, "battery_percent": dyn.battery_now(d, t), "state": d.state,
             "summary": summary(s, d, t)}
            for d in s.devices.values() if home_id is None or d.home_id == home_id]


@discovery
def iot_devices_get_unique_values(
    s: IotState,
    field: Literal["device_type", "manufacturer", "model", "room_name", "home_kind", "security_mode",
                   "thermostat_mode", "vacuum_status", "plug_appliance"],
) -> list:
    """Distinct values of a categorical field with their counts.

    Args:
        field: Which field to enumerate.
    """
    devices = list(s.devices.values())
    values = {
        "device_type": lambda: [d.type for d in devices],
        "manufacturer": lambda: [d.manufacturer for d in devices],
        "model": lambda: [d.model for d in devices],
        "room_name": lambda: [r.name for r in s.rooms.values()],
        "home_kind": lambda: [h.kind for h in s.homes.values()],
        "security_mode": lambda: [h.security_mode for h in s.homes.values()],
        "thermostat_mode": lambda: [d.state["mode"] for d in devices if d.type == "thermostat"],
        "vacuum_status": lambda: [d.state["status"] for d in devices if d.type == "robot_vacuum"],
        "plug_appliance": lambda: [d.state["appliance"] for d in devices if d.type == "plug"],
    }[field]()
    return value_counts(values)
