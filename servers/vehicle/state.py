"""Vehicle records, the session state and the shared rules: mode gates and how charging follows time.

Places lie on a km grid so routes have real distances, ETAs and energy costs.

The mode gates live here (``need_*`` helpers) so every tool enforces them the same way and the
error messages always name the rule that blocked the action and the tool that would satisfy it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from servers.kit import Cell, Counters, State, Table, ToolError, iso, now, require

Door = Literal["driver", "front_passenger", "rear_left", "rear_right"]
Gear = Literal["park", "reverse", "neutral", "drive"]
Powertrain = Literal["gasoline", "hybrid", "electric"]
PlaceCategory = Literal[
    "home", "office", "charging_station", "fuel_station", "restaurant", "shopping", "airport", "hospital",
    "park", "service_center",
]
DOORS: tuple[str, ...] = ("driver", "front_passenger", "rear_left", "rear_right")
TIRES: tuple[str, ...] = ("front_left", "front_right", "rear_left", "rear_right")
SEATS: tuple[str, ...] = ("driver", "front_passenger")

MIN_TEMP_C, MAX_TEMP_C = 16.0, 30.0
MIN_TEMP_F, MAX_TEMP_F = 61.0, 86.0
MAX_FAN_SPEED = 7
MAX_SPEED_KMH = 180
MAX_REVERSE_KMH = 15
MIN_CRUISE_KMH = 40
MAX_CRUISE_KMH = 160
ROAD_FACTOR = 1.3  # road distance / straight-line distance
KWH_PER_KM = 0.16  # battery size ≈ full range x average consumption
LOW_TIRE_MARGIN_KPA = 25


@dataclass
class Owner:
    owner_id: str
    name: str
    email: str
    phone: str
    home_place_id: str
    remote_pin: str  # 4-digit PIN the owner set for remote unlocking


@dataclass
class Place:
    place_id: str
    name: str
    category: str
    address: str
    x_km: float
    y_km: float


@dataclass
class Climate:
    temperature_c: float = 21.0
    unit: str = "C"  # display unit: C | F
    fan_speed: int = 0
    ac_on: bool = False
    defrost_front: bool = False
    defrost_rear: bool = False
    seat_heat: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SEATS, 0))


@dataclass
class Cruise:
    enabled: bool = False
    target_speed_kmh: int | None = None


@dataclass
class Navigation:
    destination_place_id: str | None = None
    distance_km: float | None = None
    eta_minutes: int | None = None
    guidance_active: bool = False


@dataclass
class Charging:
    plugged_in: bool = False
    charging: bool = False
    charge_limit_percent: int = 80
    charger_kw: float = 11.0
    session_started_at: str | None = None  # while charging: when this charging session began
    session_start_percent: float | None = None  # ... and the battery level then


@dataclass
class Maintenance:
    next_service_at_km: int
    oil_life_percent: int | None  # None for electric vehicles
    last_service_date: str


@dataclass
class Vehicle:
    vehicle_id: str
    vin: str
    owner_id: str
    make: str
    model: str
    year: int
    color: str
    license_plate: str
    nickname: str
    powertrain: str  # gasoline | hybrid | electric
    full_range_km: int  # range on a full tank / full battery
    location_place_id: str
    doors_locked: dict[str, bool]
    windows_open_percent: dict[str, int]
    trunk_open: bool
    ignition: str  # off | accessory | on (on = engine running / EV ready)
    gear: str  # park | reverse | neutral | drive
    speed_kmh: int
    parking_brake_engaged: bool
    energy_percent: float  # fuel level, or battery state of charge for EVs
    odometer_km: float
    tire_pressure_kpa: dict[str, int]
    recommended_tire_kpa: int
    headlights: str  # off | on | auto
    hazards_on: bool
    climate: Climate
    cruise: Cruise
    navigation: Navigation
    maintenance: Maintenance
    charging: Charging | None = None  # electric vehicles only


@dataclass
class Trip:
    trip_id: str
    vehicle_id: str
    from_place_id: str
    to_place_id: str
    distance_km: float
    duration_minutes: int
    energy_used_percent: float
    departed_at: str
    arrived_at: str


class VehicleState(State):
    owners: Table[Owner]
    places: Table[Place]
    vehicles: Table[Vehicle]
    trips: Table[Trip]
    counters: Cell[Counters]


# ---------------------------------------------------------------- shared helpers and mode gates
def get_vehicle(s: VehicleState, vehicle_id: str) -> Vehicle:
    return require(s.vehicles, vehicle_id, "vehicle_id")


def range_km(v: Vehicle) -> int:
    return int(v.full_range_km * v.energy_percent / 100)


def road_distance_km(a: Place, b: Place) -> float:
    return max(0.5, round(math.hypot(a.x_km - b.x_km, a.y_km - b.y_km) * ROAD_FACTOR, 1))


def eta_minutes(distance_km: float) -> int:
    """City streets average ~35 km/h, longer trips use highways at ~80 km/h, plus parking time."""
    avg = 35.0 if distance_km < 20 else 80.0
    return math.ceil(distance_km / avg * 60) + 3


def to_display(v: Vehicle, celsius: float) -> float:
    return round(celsius * 9 / 5 + 32) if v.climate.unit == "F" else celsius


def precondition(message: str, field: str = "vehicle_id") -> ToolError:
    return ToolError(message, field=field, code="precondition")


def need_engine_on(v: Vehicle, action: str) -> None:
    if v.ignition != "on":
        raise precondition(f"cannot {action}: the engine must be running (ignition is {v.ignition}); "
                           "call start_engine first")


def need_park(v: Vehicle, action: str) -> None:
    if v.gear != "park" or v.speed_kmh > 0:
        raise precondition(f"cannot {action}: the vehicle must be stopped in park (gear is {v.gear}, "
                           f"speed {v.speed_kmh} km/h)")


def need_power(v: Vehicle, action: str) -> None:
    """Windows and lights run on accessory power: ignition in accessory or on."""
    if v.ignition == "off":
        raise precondition(f"cannot {action}: the ignition is off; windows and lights need accessory power "
                           "(start the engine, or stop it with keep_accessory_power)")


def need_ev(v: Vehicle, action: str) -> Charging:
    if v.charging is None:
        raise precondition(f"cannot {action}: {v.vehicle_id} is a {v.powertrain} vehicle, not an electric vehicle")
    return v.charging


def alerts(v: Vehicle) -> list[str]:
    """Warnings the dashboard would show, derived from the current state."""
    out: list[str] = []
    fuel = "battery" if v.powertrain == "electric" else "fuel"
    if v.energy_percent <= 0:
        out.append(f"{fuel} empty")
    elif v.energy_percent < 15:
        out.append(f"low {fuel}: {range_km(v)} km range left")
    for tire, kpa in v.tire_pressure_kpa.items():
        if kpa < v.recommended_tire_kpa - LOW_TIRE_MARGIN_KPA:
            out.append(f"low tire pressure {tire}: {kpa} kPa (recommended {v.recommended_tire_kpa})")
    if v.odometer_km >= v.maintenance.next_service_at_km:
        out.append(f"service overdue since {v.maintenance.next_service_at_km} km")
    elif v.maintenance.next_service_at_km - v.odometer_km < 1000:
        out.append(f"service due at {v.maintenance.next_service_at_km} km")
    if v.maintenance.oil_life_percent is not None and v.maintenance.oil_life_percent < 15:
        out.append(f"oil life {v.maintenance.oil_life_percent}%")
    if v.trunk_open:
        out.append("trunk open")
    return out


def climate_view(v: Vehicle) -> dict[str, Any]:
    c = v.climate
    return {"temperature": to_display(v, c.temperature_c), "unit": c.unit, "fan_speed": c.fan_speed,
            "ac_on": c.ac_on, "defrost_front": c.defrost_front, "defrost_rear": c.defrost_rear,
            "seat_heat": dict(c.seat_heat)}


def navigation_view(s: VehicleState, v: Vehicle) -> dict[str, Any]:
    nav = v.navigation
    dest = s.places.get(nav.destination_place_id) if nav.destination_place_id else None
    return {"destination_place_id": nav.destination_place_id, "destination_name": dest.name if dest else None,
            "distance_km": nav.distance_km, "eta_minutes": nav.eta_minutes, "guidance_active": nav.guidance_active}


def status_view(s: VehicleState, v: Vehicle) -> dict[str, Any]:
    """Everything the owner app shows for one vehicle."""
    place = s.places[v.location_place_id]
    return {
        "vehicle_id": v.vehicle_id, "nickname": v.nickname, "make": v.make, "model": v.model, "year": v.year,
        "powertrain": v.powertrain, "location": {"place_id": place.place_id, "name": place.name},
        "ignition": v.ignition, "gear": v.gear, "speed_kmh": v.speed_kmh,
        "parking_brake_engaged": v.parking_brake_engaged,
        "doors_locked": dict(v.doors_locked), "windows_open_percent": dict(v.windows_open_percent),
        "trunk_open": v.trunk_open,
        ("battery_percent" if v.powertrain == "electric" else "fuel_percent"): v.energy_percent,
        "range_km": range_km(v), "odometer_km": v.odometer_km,
        "tire_pressure_kpa": dict(v.tire_pressure_kpa), "recommended_tire_kpa": v.recommended_tire_kpa,
        "headlights": v.headlights, "hazards_on": v.hazards_on,
        "climate": climate_view(v),
        "cruise_control": {"enabled": v.cruise.enabled, "target_speed_kmh": v.cruise.target_speed_kmh},
        "navigation": navigation_view(s, v),
        "charging": None if v.charging is None else {
            "plugged_in": v.charging.plugged_in, "charging": v.charging.charging,
            "charge_limit_percent": v.charging.charge_limit_percent, "charger_kw": v.charging.charger_kw},
        "maintenance": {"next_service_at_km": v.maintenance.next_service_at_km,
                        "oil_life_percent": v.maintenance.oil_life_percent,
                        "last_service_date": v.maintenance.last_service_date},
        "alerts": alerts(v),
        "as_of": iso(now(s)),
    }


# ---------------------------------------------------------------- time: charging follows the clock
def charge_rate_percent_per_minute(v: Vehicle) -> float:
    assert v.charging is not None
    return v.charging.charger_kw / 60 / (v.full_range_km * KWH_PER_KM) * 100


def progress_charging(s: VehicleState, before: datetime, after: datetime) -> None:
    """The domain's ``on_time`` hook: every charging EV gains energy at its charger's fixed kW rate.

    The level is computed from the session's start (``session_started_at`` / ``session_start_percent``)
    so it does not depend on how the time was split into calls; charging stops by itself at the
    charge limit.
    """
    for vid, v in list(s.vehicles.items()):
        ch = v.charging
        if ch is None or not ch.charging or ch.session_started_at is None or ch.session_start_percent is None:
            continue
        minutes = (after - datetime.fromisoformat(ch.session_started_at)).total_seconds() / 60
        level = round(min(float(ch.charge_limit_percent),
                          ch.session_start_percent + charge_rate_percent_per_minute(v) * minutes), 1)
        if level == v.energy_percent and level < ch.charge_limit_percent:
            continue
        rec = s.vehicles.edit(vid)
        assert rec.charging is not None
        rec.energy_percent = level
        if level >= rec.charging.charge_limit_percent:
            end_session(rec)


def start_session(v: Vehicle, at: datetime) -> None:
    assert v.charging is not None
    v.charging.charging = True
    v.charging.session_started_at, v.charging.session_start_percent = iso(at), v.energy_percent


def end_session(v: Vehicle) -> None:
    assert v.charging is not None
    v.charging.charging = False
    v.charging.session_started_at = v.charging.session_start_percent = None
