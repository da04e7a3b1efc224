"""Vehicle tools: cabin climate, windows, trunk, lights and EV charging.

Mode gates: AC, defrost and seat heaters need the engine running (EVs may precondition from the
battery while parked); the setpoint must be 16–30 °C (61–86 °F); windows and headlights need accessory
power; the trunk opens only in park on an unlocked vehicle; charging is for EVs parked with the cable
connected, below the charge limit.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import Field

from servers.kit import ToolError, now, tool
from servers.vehicle.state import (
    DOORS,
    KWH_PER_KM,
    MAX_FAN_SPEED,
    MAX_TEMP_C,
    MAX_TEMP_F,
    MIN_TEMP_C,
    MIN_TEMP_F,
    Vehicle,
    VehicleState,
    climate_view,
    end_session,
    get_vehicle,
    need_ev,
    need_park,
    need_power,
    precondition,
    range_km,
    start_session,
)

FanSpeed = Annotated[int, Field(ge=0, le=MAX_FAN_SPEED)]
SeatHeat = Annotated[int, Field(ge=0, le=3)]
Percent = Annotated[int, Field(ge=0, le=100)]
ChargeLimit = Annotated[int, Field(ge=50, le=100)]
Temperature = Annotated[float, Field(ge=-60, le=140)]  # schema bound; the setpoint rule (16-30 C / 61-86 F) is ours
WindowOrAll = Literal["driver", "front_passenger", "rear_left", "rear_right", "all"]


def _climate_powered(v: Vehicle) -> bool:
    return v.ignition == "on" or (v.powertrain == "electric" and v.energy_percent > 0)


@tool(consumes=("vehicle_id",), requires=("engine_on",))
def set_cabin_climate(s: VehicleState, vehicle_id: str, temperature: Temperature | None = None,
                      unit: Literal["C", "F"] | None = None, fan_speed: FanSpeed | None = None,
                      ac_on: bool | None = None, defrost_front: bool | None = None,
                      defrost_rear: bool | None = None, driver_seat_heat: SeatHeat | None = None,
                      passenger_seat_heat: SeatHeat | None = None) -> dict:
    """Adjust the cabin climate. Temperature and fan can be preset any time; the AC, defrosters and seat
    heaters need the engine running (electric vehicles can run them from the battery while parked).

    Args:
        vehicle_id: The vehicle's id.
        temperature: Cabin setpoint, 16-30 in Celsius or 61-86 in Fahrenheit (in `unit`, or the vehicle's
            current display unit when `unit` is omitted).
        unit: Temperature unit for `temperature`; also becomes the vehicle's display unit.
        fan_speed: Blower level from 0 (off) to 7.
        ac_on: Turn the air conditioning on or off.
        defrost_front: Turn the windshield defroster on or off.
        defrost_rear: Turn the rear-window defroster on or off.
        driver_seat_heat: Driver seat heater level, 0 (off) to 3.
        passenger_seat_heat: Front passenger seat heater level, 0 (off) to 3.
    """
    v = get_vehicle(s, vehicle_id)
    given = (temperature, unit, fan_speed, ac_on, defrost_front, defrost_rear, driver_seat_heat,
             passenger_seat_heat)
    if all(x is None for x in given):
        raise ToolError("nothing to change: give at least one climate setting", field="temperature")
    display = unit or v.climate.unit
    celsius = None
    if temperature is not None:
        lo, hi = (MIN_TEMP_C, MAX_TEMP_C) if display == "C" else (MIN_TEMP_F, MAX_TEMP_F)
        if not lo <= temperature <= hi:
            raise ToolError(f"temperature {temperature:g} {display} is out of range ({lo:g}-{hi:g} {display})",
                            field="temperature")
        celsius = temperature if display == "C" else (temperature - 32) * 5 / 9
        celsius = round(celsius * 2) / 2  # the climate unit works in 0.5 °C steps
    powered = [name for name, on in (("air conditioning", ac_on), ("front defroster", defrost_front),
                                     ("rear defroster", defrost_rear),
                                     ("seat heater", (driver_seat_heat or 0) + (passenger_seat_heat or 0) > 0))
               if on]
    if powered and not _climate_powered(v):
        raise precondition(f"cannot turn on the {powered[0]}: the engine must be running "
                           f"(ignition is {v.ignition}); call start_engine first")
    if ac_on and fan_speed == 0:
        raise ToolError("the air conditioning needs the fan running: fan_speed must be at least 1",
                        field="fan_speed")
    v = s.vehicles.edit(vehicle_id)
    c = v.climate
    c.unit = display
    if celsius is not None:
        c.temperature_c = celsius
    if fan_speed is not None:
        c.fan_speed = fan_speed
        if fan_speed == 0:
            c.ac_on = False  # no airflow, no AC
    for attr, value in (("ac_on", ac_on), ("defrost_front", defrost_front), ("defrost_rear", defrost_rear)):
        if value is not None:
            setattr(c, attr, value)
    if (c.ac_on or c.defrost_front) and c.fan_speed == 0:
        c.fan_speed = 2  # the system brings the blower up on its own
    for seat, level in (("driver", driver_seat_heat), ("front_passenger", passenger_seat_heat)):
        if level is not None:
            c.seat_heat[seat] = level
    return {"vehicle_id": vehicle_id, "climate": climate_view(v)}


@tool(consumes=("vehicle_id",), requires=("accessory_power",))
def set_vehicle_window(s: VehicleState, vehicle_id: str, window: WindowOrAll, open_percent: Percent
                       ) -> dict:
    """Open, vent or close a window (or all four). Needs accessory power: ignition in accessory or on.

    Args:
        vehicle_id: The vehicle's id.
        window: Which window, or all to move every window.
        open_percent: How far open: 0 closes the window, 100 opens it fully.
    """
    v = get_vehicle(s, vehicle_id)
    need_power(v, "move the windows")
    targets = list(DOORS) if window == "all" else [window]
    if all(v.windows_open_percent[w] == open_percent for w in targets):
        state = "closed" if open_percent == 0 else f"{open_percent}% open"
        raise ToolError(f"the {window} window{'s are' if window == 'all' else ' is'} already {state}",
                        field="open_percent", code="illegal_state")
    v = s.vehicles.edit(vehicle_id)
    for w in targets:
        v.windows_open_percent[w] = open_percent
    return {"vehicle_id": vehicle_id, "windows_open_percent": dict(v.windows_open_percent)}


@tool(consumes=("vehicle_id",), requires=("vehicle_parked", "doors_unlocked"),
             establishes=("trunk_closed",))
def operate_trunk(s: VehicleState, vehicle_id: str, action: Literal["open", "close"]) -> dict:
    """Open or close the power trunk / tailgate. Opening needs the vehicle in park and unlocked.

    Args:
        vehicle_id: The vehicle's id.
        action: open or close.
    """
    v = get_vehicle(s, vehicle_id)
    if v.trunk_open == (action == "open"):
        raise ToolError(f"the trunk of {vehicle_id} is already {'open' if v.trunk_open else 'closed'}",
                        field="action", code="illegal_state")
    if action == "open":
        need_park(v, "open the trunk")
        if all(v.doors_locked.values()):
            raise precondition(f"cannot open the trunk: {vehicle_id} is locked; unlock it first "
                               "(unlock_vehicle_doors)")
    s.vehicles.edit(vehicle_id).trunk_open = action == "open"
    return {"vehicle_id": vehicle_id, "trunk_open": action == "open"}


@tool(consumes=("vehicle_id",), requires=("accessory_power",))
def set_vehicle_lights(s: VehicleState, vehicle_id: str, headlights: Literal["off", "on", "auto"] | None = None,
                       hazards_on: bool | None = None) -> dict:
    """Set the headlight mode and/or the hazard lights. Hazards work any time; headlights on or auto need
    accessory power (ignition in accessory or on).

    Args:
        vehicle_id: The vehicle's id.
        headlights: Headlight mode.
        hazards_on: Turn the hazard warning lights on or off.
    """
    v = get_vehicle(s, vehicle_id)
    if headlights is None and hazards_on is None:
        raise ToolError("nothing to change: give headlights and/or hazards_on", field="headlights")
    if headlights in ("on", "auto") and headlights != v.headlights:
        need_power(v, f"switch the headlights {headlights}")
    if (headlights is None or headlights == v.headlights) and (hazards_on is None or hazards_on == v.hazards_on):
        raise ToolError(f"lights of {vehicle_id} are already set that way (headlights {v.headlights}, "
                        f"hazards {'on' if v.hazards_on else 'off'})", field="headlights", code="illegal_state")
    v = s.vehicles.edit(vehicle_id)
    if headlights is not None:
        v.headlights = headlights
    if hazards_on is not None:
        v.hazards_on = hazards_on
    return {"vehicle_id": vehicle_id, "headlights": v.headlights, "hazards_on": v.hazards_on}


def minutes_to_limit(v: Vehicle) -> int:
    assert v.charging is not None
    kwh = (v.charging.charge_limit_percent - v.energy_percent) / 100 * v.full_range_km * KWH_PER_KM
    return max(0, math.ceil(kwh / v.charging.charger_kw * 60))


@tool(consumes=("vehicle_id",), requires=("electric_vehicle", "vehicle_parked", "plugged_in"))
def control_ev_charging(s: VehicleState, vehicle_id: str, action: Literal["start", "stop", "release_cable"],
                        charge_limit_percent: ChargeLimit | None = None) -> dict:
    """Start or stop charging an electric vehicle, or release the charging cable lock so it can be
    unplugged. Charging needs the vehicle in park with the cable connected and the battery below the
    charge limit.

    Args:
        vehicle_id: The vehicle's id.
        action: start charging, stop charging, or release_cable (unlocks the connector; stop charging first).
        charge_limit_percent: With start: charge up to this battery level (50-100%); default: the current limit.
    """
    v = get_vehicle(s, vehicle_id)
    ch = need_ev(v, f"{action.replace('_', ' ')} charging")
    if charge_limit_percent is not None and action != "start":
        raise ToolError("charge_limit_percent only applies with action start", field="charge_limit_percent")
    if action == "stop":
        if not ch.charging:
            raise ToolError(f"{vehicle_id} is not charging", field="action", code="illegal_state")
        v = s.vehicles.edit(vehicle_id)
        end_session(v)
        return {"vehicle_id": vehicle_id, "charging": False, "battery_percent": v.energy_percent}
    if not ch.plugged_in:
        raise precondition(f"{vehicle_id} is not plugged in: connect the charging cable at a charger first")
    if action == "release_cable":
        if ch.charging:
            raise precondition("cannot release the cable while charging: stop charging first", field="action")
        v = s.vehicles.edit(vehicle_id)
        assert v.charging is not None
        v.charging.plugged_in = False
        return {"vehicle_id": vehicle_id, "plugged_in": False}
    if ch.charging:
        raise ToolError(f"{vehicle_id} is already charging", field="action", code="illegal_state")
    need_park(v, "start charging")
    limit = ch.charge_limit_percent if charge_limit_percent is None else charge_limit_percent
    if v.energy_percent >= limit:
        raise ToolError(f"battery is at {v.energy_percent:g}%, already at or above the charge limit of "
                        f"{limit}%", field="charge_limit_percent", code="illegal_state")
    v = s.vehicles.edit(vehicle_id)
    assert v.charging is not None
    v.charging.charge_limit_percent = limit
    start_session(v, now(s))
    return {"vehicle_id": vehicle_id, "charging": True, "battery_percent": v.energy_percent,
            "charge_limit_percent": limit, "charger_kw": v.charging.charger_kw,
            "estimated_minutes_to_limit": minutes_to_limit(v), "range_km": range_km(v)}
