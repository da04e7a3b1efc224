"""Vehicle tools: fleet overview, door locks, ignition, gears, parking brake, speed and cruise control.

Mode gates (each failure names the rule and the tool that satisfies it):

* unlocking needs the vehicle stopped in park and the owner's remote-access PIN;
* locking needs the trunk closed;
* the engine starts only in park and with fuel / charge left, and stops only in park;
* leaving park needs the engine running, the parking brake released, the trunk closed and (EVs) the
  charging cable released; park and reverse need the vehicle stopped;
* the electronic parking brake releases only with the engine running and engages only when stopped;
* speed changes need drive or reverse (reverse at most 15 km/h) with the parking brake released;
* cruise control needs drive and at least 40 km/h.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from servers.kit import Sensitive, ToolError, tool
from servers.vehicle.state import (
    DOORS,
    MAX_CRUISE_KMH,
    MAX_REVERSE_KMH,
    MIN_CRUISE_KMH,
    Door,
    Gear,
    Powertrain,
    VehicleState,
    get_vehicle,
    need_engine_on,
    need_park,
    precondition,
    range_km,
    status_view,
)

Pin = Annotated[Sensitive, Field(pattern=r"^\d{4}$")]
Speed = Annotated[int, Field(ge=0, le=180)]
CruiseSpeed = Annotated[int, Field(ge=MIN_CRUISE_KMH, le=MAX_CRUISE_KMH)]


def _doors(doors: list[Door] | None) -> list[str]:
    return list(DOORS) if not doors else [d for d in DOORS if d in doors]


@tool(produces=("vehicle_id",), read_only=True)
def list_connected_vehicles(s: VehicleState, owner_name: str | None = None,
                            powertrain: Powertrain | None = None) -> list:
    """List the connected vehicles on the account with where they are and a one-line status.

    Args:
        owner_name: Only vehicles of owners whose name contains this text (case-insensitive).
        powertrain: Only vehicles with this powertrain.
    """
    owners = list(s.owners.values())
    if owner_name is not None:
        needle = owner_name.strip().lower()
        owners = [o for o in owners if needle in o.name.lower()]
        if not owners:
            raise ToolError(f"no vehicle owner matches '{owner_name}'", field="owner_name", code="not_found")
    names = {o.owner_id: o.name for o in owners}
    return [{"vehicle_id": v.vehicle_id, "nickname": v.nickname, "make": v.make, "model": v.model,
             "year": v.year, "color": v.color, "license_plate": v.license_plate, "powertrain": v.powertrain,
             "owner": names[v.owner_id], "location": s.places[v.location_place_id].name,
             "ignition": v.ignition, "gear": v.gear, "locked": all(v.doors_locked.values()),
             "range_km": range_km(v)}
            for v in s.vehicles.values()
            if v.owner_id in names and (powertrain is None or v.powertrain == powertrain)]


@tool(consumes=("vehicle_id",), read_only=True)
def get_vehicle_status(s: VehicleState, vehicle_id: str) -> dict:
    """Get a vehicle's full live status: location, locks, windows, ignition, gear, speed, fuel or battery
    and range, tires, lights, climate, cruise control, navigation, charging, maintenance and alerts.

    Args:
        vehicle_id: The vehicle's id, e.g. VEH-0003.
    """
    return status_view(s, get_vehicle(s, vehicle_id))


@tool(consumes=("vehicle_id",), establishes=("doors_locked",))
def lock_vehicle_doors(s: VehicleState, vehicle_id: str, doors: list[Door] | None = None) -> dict:
    """Lock some or all doors remotely. The trunk must be closed first.

    Args:
        vehicle_id: The vehicle's id.
        doors: Which doors to lock; omit to lock every door.
    """
    v = get_vehicle(s, vehicle_id)
    if v.trunk_open:
        raise precondition(f"cannot lock {vehicle_id}: the trunk is open; close it first (operate_trunk)")
    todo = [d for d in _doors(doors) if not v.doors_locked[d]]
    if not todo:
        raise ToolError(f"{', '.join(_doors(doors))} already locked on {vehicle_id}", field="doors",
                        code="illegal_state")
    v = s.vehicles.edit(vehicle_id)
    for d in todo:
        v.doors_locked[d] = True
    return {"vehicle_id": vehicle_id, "locked_now": todo, "doors_locked": dict(v.doors_locked)}


@tool(consumes=("vehicle_id",), requires=("vehicle_parked",), establishes=("doors_unlocked",))
def unlock_vehicle_doors(s: VehicleState, vehicle_id: str, security_pin: Pin, doors: list[Door] | None = None
                         ) -> dict:
    """Unlock some or all doors remotely. Only while the vehicle is stopped in park; needs the owner's
    4-digit remote-access PIN.

    Args:
        vehicle_id: The vehicle's id.
        security_pin: The owner's 4-digit remote-access PIN, as given by the owner.
        doors: Which doors to unlock; omit to unlock every door.
    """
    v = get_vehicle(s, vehicle_id)
    if s.owners[v.owner_id].remote_pin != security_pin:
        raise ToolError(f"incorrect security_pin: not the remote-access PIN of {vehicle_id}'s owner",
                        field="security_pin", code="auth")
    need_park(v, f"unlock {vehicle_id}")
    todo = [d for d in _doors(doors) if v.doors_locked[d]]
    if not todo:
        raise ToolError(f"{', '.join(_doors(doors))} already unlocked on {vehicle_id}", field="doors",
                        code="illegal_state")
    v = s.vehicles.edit(vehicle_id)
    for d in todo:
        v.doors_locked[d] = False
    return {"vehicle_id": vehicle_id, "unlocked_now": todo, "doors_locked": dict(v.doors_locked)}


@tool(consumes=("vehicle_id",), requires=("vehicle_parked",),
             establishes=("engine_on", "accessory_power"))
def start_engine(s: VehicleState, vehicle_id: str) -> dict:
    """Start the engine (EVs: switch to ready mode). Only in park, and only with fuel or charge left.

    Args:
        vehicle_id: The vehicle's id.
    """
    v = get_vehicle(s, vehicle_id)
    if v.ignition == "on":
        raise ToolError(f"the engine of {vehicle_id} is already running", field="vehicle_id", code="illegal_state")
    need_park(v, f"start {vehicle_id}")
    if v.energy_percent <= 0:
        what = "battery is depleted" if v.powertrain == "electric" else "fuel tank is empty"
        raise ToolError(f"cannot start {vehicle_id}: the {what}", field="vehicle_id", code="no_energy")
    v = s.vehicles.edit(vehicle_id)
    v.ignition = "on"
    return {"vehicle_id": vehicle_id, "ignition": "on", "gear": v.gear, "range_km": range_km(v)}


@tool(consumes=("vehicle_id",), requires=("engine_on", "vehicle_parked"), establishes=("engine_off", "accessory_power"))
def stop_engine(s: VehicleState, vehicle_id: str, keep_accessory_power: bool = False) -> dict:
    """Stop the engine. Only when stopped in park. Active route guidance pauses; on combustion and hybrid
    vehicles the AC, defrost and seat heaters switch off with the engine.

    Args:
        vehicle_id: The vehicle's id.
        keep_accessory_power: Leave the ignition in accessory mode so windows and lights keep working.
    """
    v = get_vehicle(s, vehicle_id)
    need_engine_on(v, f"stop the engine of {vehicle_id}")
    need_park(v, f"stop the engine of {vehicle_id}")
    v = s.vehicles.edit(vehicle_id)
    v.ignition = "accessory" if keep_accessory_power else "off"
    v.navigation.guidance_active = False
    if v.powertrain != "electric":
        c = v.climate
        c.ac_on = c.defrost_front = c.defrost_rear = False
        c.seat_heat = dict.fromkeys(c.seat_heat, 0)
    return {"vehicle_id": vehicle_id, "ignition": v.ignition, "gear": v.gear}


@tool(consumes=("vehicle_id",), requires=("engine_on", "parking_brake_released"),
             establishes=("gear_drive", "vehicle_parked"))
def shift_gear(s: VehicleState, vehicle_id: str, gear: Gear) -> dict:
    """Shift the transmission. Needs the engine running; park and reverse need the vehicle stopped; drive
    and reverse need the parking brake released and the trunk closed; an EV must have its charging cable
    released before leaving park.

    Args:
        vehicle_id: The vehicle's id.
        gear: The gear to select.
    """
    v = get_vehicle(s, vehicle_id)
    if v.gear == gear:
        raise ToolError(f"{vehicle_id} is already in {gear}", field="gear", code="illegal_state")
    need_engine_on(v, f"shift {vehicle_id} into {gear}")
    if gear in ("park", "reverse") and v.speed_kmh > 0:
        raise precondition(f"cannot shift into {gear} at {v.speed_kmh} km/h: bring the vehicle to a stop first "
                           "(set_vehicle_speed 0)", field="gear")
    if gear == "drive" and v.gear == "reverse" and v.speed_kmh > 0:
        raise precondition("cannot shift from reverse into drive while rolling backwards: stop first",
                           field="gear")
    if gear in ("drive", "reverse"):
        if v.parking_brake_engaged:
            raise precondition(f"cannot shift into {gear}: the parking brake is engaged; release it first "
                               "(set_parking_brake)", field="gear")
        if v.trunk_open:
            raise precondition(f"cannot shift into {gear}: the trunk is open; close it first (operate_trunk)",
                               field="gear")
    if v.gear == "park" and v.charging is not None and v.charging.plugged_in:
        raise precondition("cannot shift out of park: the charging cable is still connected; release it "
                           "first (control_ev_charging release_cable)", field="gear")
    v = s.vehicles.edit(vehicle_id)
    v.gear = gear
    if gear != "drive":
        v.cruise.enabled, v.cruise.target_speed_kmh = False, None
    return {"vehicle_id": vehicle_id, "gear": gear, "speed_kmh": v.speed_kmh}


@tool(consumes=("vehicle_id",), requires=("engine_on",), establishes=("parking_brake_released",))
def set_parking_brake(s: VehicleState, vehicle_id: str, engaged: bool) -> dict:
    """Engage or release the electronic parking brake. It engages only when the vehicle is stopped and
    releases only with the engine running.

    Args:
        vehicle_id: The vehicle's id.
        engaged: true to engage the parking brake, false to release it.
    """
    v = get_vehicle(s, vehicle_id)
    if v.parking_brake_engaged == engaged:
        state = "engaged" if engaged else "released"
        raise ToolError(f"the parking brake of {vehicle_id} is already {state}", field="engaged",
                        code="illegal_state")
    if engaged and v.speed_kmh > 0:
        raise precondition(f"cannot engage the parking brake at {v.speed_kmh} km/h: stop first", field="engaged")
    if not engaged:
        need_engine_on(v, "release the parking brake")
    s.vehicles.edit(vehicle_id).parking_brake_engaged = engaged
    return {"vehicle_id": vehicle_id, "parking_brake_engaged": engaged}


@tool(consumes=("vehicle_id",), requires=("engine_on", "gear_drive", "parking_brake_released"),
             establishes=("vehicle_moving",))
def set_vehicle_speed(s: VehicleState, vehicle_id: str, speed_kmh: Speed) -> dict:
    """Drive at a given speed (0 brings the vehicle to a stop). Needs the engine running, drive or reverse
    selected and the parking brake released; reverse is limited to 15 km/h. A speed other than the cruise
    target cancels cruise control, as braking or accelerating would.

    Args:
        vehicle_id: The vehicle's id.
        speed_kmh: Target speed in km/h.
    """
    v = get_vehicle(s, vehicle_id)
    need_engine_on(v, "drive")
    if v.gear not in ("drive", "reverse"):
        raise precondition(f"cannot drive {vehicle_id} in {v.gear}: shift into drive or reverse first "
                           "(shift_gear)")
    if v.parking_brake_engaged:
        raise precondition("cannot drive with the parking brake engaged: release it first (set_parking_brake)")
    if v.gear == "reverse" and speed_kmh > MAX_REVERSE_KMH:
        raise ToolError(f"reverse is limited to {MAX_REVERSE_KMH} km/h", field="speed_kmh")
    if speed_kmh > 0 and v.energy_percent <= 0:
        raise ToolError(f"{vehicle_id} is out of fuel or charge", field="vehicle_id", code="no_energy")
    v = s.vehicles.edit(vehicle_id)
    v.speed_kmh = speed_kmh
    cancelled = v.cruise.enabled and speed_kmh != v.cruise.target_speed_kmh
    if cancelled:
        v.cruise.enabled, v.cruise.target_speed_kmh = False, None
    return {"vehicle_id": vehicle_id, "speed_kmh": speed_kmh, "gear": v.gear,
            "cruise_control_cancelled": cancelled}


@tool(consumes=("vehicle_id",), requires=("engine_on", "gear_drive", "vehicle_moving"))
def set_cruise_control(s: VehicleState, vehicle_id: str, enabled: bool,
                       target_speed_kmh: CruiseSpeed | None = None) -> dict:
    """Turn cruise control on (or change its set speed) or off. It engages only in drive at 40 km/h or
    more and holds 40–160 km/h.

    Args:
        vehicle_id: The vehicle's id.
        enabled: true to engage or adjust cruise control, false to switch it off.
        target_speed_kmh: Speed to hold when enabling; defaults to the current speed.
    """
    v = get_vehicle(s, vehicle_id)
    if not enabled:
        if target_speed_kmh is not None:
            raise ToolError("target_speed_kmh only applies when enabling cruise control", field="target_speed_kmh")
        if not v.cruise.enabled:
            raise ToolError(f"cruise control is not on in {vehicle_id}", field="enabled", code="illegal_state")
        v = s.vehicles.edit(vehicle_id)
        v.cruise.enabled, v.cruise.target_speed_kmh = False, None
        return {"vehicle_id": vehicle_id, "cruise_control": "off", "speed_kmh": v.speed_kmh}
    if v.gear != "drive":
        raise precondition(f"cruise control only works in drive ({vehicle_id} is in {v.gear})")
    if v.speed_kmh < MIN_CRUISE_KMH:
        raise precondition(f"cruise control needs at least {MIN_CRUISE_KMH} km/h (current speed "
                           f"{v.speed_kmh} km/h); accelerate first (set_vehicle_speed)")
    target = v.speed_kmh if target_speed_kmh is None else target_speed_kmh
    if target > MAX_CRUISE_KMH:
        raise ToolError(f"cruise control holds at most {MAX_CRUISE_KMH} km/h", field="target_speed_kmh")
    if v.cruise.enabled and v.cruise.target_speed_kmh == target:
        raise ToolError(f"cruise control is already holding {target} km/h", field="target_speed_kmh",
                        code="illegal_state")
    v = s.vehicles.edit(vehicle_id)
    v.cruise.enabled, v.cruise.target_speed_kmh, v.speed_kmh = True, target, target
    return {"vehicle_id": vehicle_id, "cruise_control": "on", "target_speed_kmh": target, "speed_kmh": target}
