"""Thermostats, water heaters and robot vacuums: the devices whose state moves with time."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.iot_devices import climate, rules
from servers.iot_devices.state import IotState, get_device, to_celsius
from servers.iot_devices.views import device_view
from servers.kit import now, tool

Temperature = Annotated[float, Field(ge=-40, le=200)]
Unit = Literal["C", "F"]


def _half(celsius: float) -> float:
    return round(celsius * 2) / 2


@tool(consumes=("device_id",), establishes=("thermostat_active",))
def set_thermostat_mode(s: IotState, device_id: str, mode: Literal["off", "heat", "cool", "auto", "eco"]) -> dict:
    """Switch a thermostat between off, heat, cool, auto (heats or cools to the setpoint) and eco (wide
    energy-saving band). The room temperature then moves over time.

    Args:
        device_id: The thermostat.
        mode: The new mode.
    """
    t = now(s)
    d = climate.set_thermostat_mode(s, get_device(s, device_id), mode, t, "user")
    return device_view(s, d, t)


@tool(consumes=("device_id",), requires=("thermostat_active",))
def set_thermostat_temperature(s: IotState, device_id: str, temperature: Temperature, unit: Unit = "C") -> dict:
    """Set the temperature a thermostat heats or cools to (rounded to 0.5 °C). The thermostat must be in
    heat, cool or auto mode, and each model accepts its own range. The room reaches the setpoint
    gradually (about 2 °C per hour).

    Args:
        device_id: The thermostat.
        temperature: The target temperature.
        unit: C for Celsius or F for Fahrenheit.
    """
    t = now(s)
    celsius = _half(to_celsius(temperature, unit))
    d = climate.set_thermostat_target(s, get_device(s, device_id), celsius, temperature, unit, t, "user")
    return device_view(s, d, t)


@tool(consumes=("device_id",))
def set_water_heater(
    s: IotState,
    device_id: str,
    mode: Literal["off", "eco", "electric", "heat_pump", "vacation"] | None = None,
    temperature: Temperature | None = None,
    unit: Unit = "C",
) -> dict:
    """Change a water heater's mode and/or tank temperature. Vacation mode holds the tank at 15 °C until
    you switch back; eco caps it at 50 °C; heat-pump mode needs a hybrid heater. The tank heats up over
    time.

    Args:
        device_id: The water heater.
        mode: The new operating mode.
        temperature: The tank temperature to heat to (only in eco, electric or heat_pump mode).
        unit: C for Celsius or F for Fahrenheit.
    """
    t = now(s)
    celsius = _half(to_celsius(temperature, unit)) if temperature is not None else None
    d = climate.set_water_heater(s, get_device(s, device_id), mode, celsius, temperature, unit, t, "user")
    return device_view(s, d, t)


@tool(consumes=("device_id", "room_id"), establishes=("vacuum_cleaning",))
def start_vacuum_cleaning(s: IotState, device_id: str, room_ids: list[str] | None = None) -> dict:
    """Send a docked robot vacuum to clean some rooms, or its whole floor. It needs enough battery for the
    area, an emptied bin, and rooms on its own floor; when done it returns to the dock by itself.

    Args:
        device_id: The robot vacuum.
        room_ids: Rooms to clean (same home and floor as the dock); leave out to clean the whole floor.
    """
    t = now(s)
    d = rules.start_cleaning(s, get_device(s, device_id), room_ids, t, "user")
    return device_view(s, d, t)


@tool(consumes=("device_id",), requires=("vacuum_cleaning",))
def send_vacuum_to_dock(s: IotState, device_id: str) -> dict:
    """Stop a robot vacuum's cleaning run and send it back to its dock to charge.

    Args:
        device_id: The robot vacuum.
    """
    t = now(s)
    d = rules.dock(s, get_device(s, device_id), t, "user")
    return device_view(s, d, t)
