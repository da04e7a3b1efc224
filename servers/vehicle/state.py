"""Vehicle state: a small connected-car fleet, the places it can navigate to, and the shared rules.

The world is a fictional metro area: owners with homes, a handful of vehicles (gasoline, hybrid and
electric) parked around town, and known places (chargers, fuel stations, offices, an airport, a far
state park) laid out on a km grid so routes have real distances, ETAs and energy costs.

The mode gates live here (``need_*`` helpers) so every tool enforces them the same way and the
error messages always name the rule that blocked the action and the tool that would satisfy it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from servers.kit import Cell, Counters, Domain, Seeds, State, Table, ToolError, iso, require
from servers.kit.fake import REFERENCE_DATE

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


@dataclass
class Clock:
    now: str = field(default_factory=lambda: iso(REFERENCE_DATE))


class VehicleState(State):
    owners: Table[Owner]
    places: Table[Place]
    vehicles: Table[Vehicle]
    trips: Table[Trip]
    clock: Cell[Clock]
    counters: Cell[Counters]


# ---------------------------------------------------------------- world generation
_MODELS: dict[str, tuple[tuple[str, str, int], ...]] = {  # (make, model, full range km)
    "electric": (
        ("Tesla", "Model 3", 500), ("Tesla", "Model Y", 480), ("Hyundai", "Ioniq 5", 410),
        ("Ford", "Mustang Mach-E", 420), ("Chevrolet", "Bolt EUV", 400), ("Kia", "EV6", 440),
        ("Volkswagen", "ID.4", 400), ("Polestar", "2", 430), ("Nissan", "Leaf", 340),
    ),
    "gasoline": (
        ("Toyota", "Camry", 720), ("Honda", "Civic", 650), ("Ford", "F-150", 760), ("Subaru", "Outback", 690),
        ("BMW", "330i", 620), ("Mazda", "CX-5", 640), ("Jeep", "Wrangler", 560), ("Chevrolet", "Tahoe", 720),
    ),
    "hybrid": (
        ("Toyota", "Prius", 1000), ("Toyota", "RAV4 Hybrid", 930), ("Honda", "Accord Hybrid", 1020),
        ("Ford", "Escape Hybrid", 880), ("Lexus", "ES 300h", 980),
    ),
}
_COLORS = ("Pearl White", "Midnight Black", "Silver Metallic", "Deep Blue", "Ruby Red", "Graphite Gray",
           "Forest Green")
_VIN_CHARS = "ABCDEFGHJKLMNPRSTUVWXYZ0123456789"
_PLACE_PLAN: tuple[tuple[str, int], ...] = (
    ("charging_station", 3), ("fuel_station", 3), ("restaurant", 3), ("shopping", 2), ("office", 3),
    ("airport", 1), ("hospital", 1), ("park", 2), ("service_center", 2),
)


def _place_name(category: str, seeds: Seeds) -> str:
    fake = seeds.fake
    street = fake.street_name()
    return {
        "charging_station": lambda: f"{seeds.choice(['Electrify America', 'EVgo', 'ChargePoint'])} {street}",
        "fuel_station": lambda: f"{seeds.choice(['Shell', 'Chevron', 'Exxon', 'BP', 'Arco'])} {street}",
        "restaurant": lambda: f"{fake.last_name()} {seeds.choice(['Bistro', 'Grill', 'Diner', 'Kitchen'])}",
        "shopping": lambda: f"{fake.last_name()} Plaza",
        "office": lambda: f"{fake.company()} Offices",
        "airport": lambda: f"{fake.city()} International Airport",
        "hospital": lambda: f"{fake.last_name()} Memorial Hospital",
        "park": lambda: f"{fake.last_name()} State Park",
        "service_center": lambda: f"{fake.last_name()} Auto Service Center",
    }[category]()


def _add_place(s: VehicleState, seeds: Seeds, n: int, name: str, category: str, metro: str, dist: tuple[float, float],
               taken: set[str]) -> str:
    rng = seeds.rng
    while name.lower() in taken:
        name = f"{name} {rng.randint(2, 9)}"
    taken.add(name.lower())
    radius, angle = rng.uniform(*dist), rng.uniform(0, 2 * math.pi)
    pid = seeds.ident("PLC", n)
    s.places.put(pid, Place(pid, name, category, f"{seeds.fake.street_address()}, {metro}",
                            round(radius * math.cos(angle), 1), round(radius * math.sin(angle), 1)))
    return pid


def generate(s: VehicleState, seeds: Seeds) -> None:
    """4–6 owners with homes, ~20 known places, and 7–10 vehicles with varied, realistic states.

    Four vehicle archetypes always exist (ids shuffled) so every scenario has something to act on: an
    EV plugged in at home, a fueled car ready to go, a car with an empty tank and an EV with a nearly
    empty battery; the rest are random.
    """
    rng, fake = seeds.rng, seeds.fake
    s.clock.set(Clock())
    s.counters.set(Counters())
    metro = f"{fake.city()}, {fake.state_abbr()}"
    taken: set[str] = set()
    n_place = 0
    for category, count in _PLACE_PLAN:
        for i in range(count):
            n_place += 1
            far = category == "park" and i == 0  # one regional destination beyond most ranges
            dist = (250.0, 330.0) if far else (28.0, 40.0) if category == "airport" else (1.0, 25.0)
            _add_place(s, seeds, n_place, _place_name(category, seeds), category,
                       f"{fake.city()}, {fake.state_abbr()}" if far else metro, dist, taken)
    owners: list[Owner] = []
    for o in range(1, rng.randint(4, 6) + 1):
        name = fake.name()
        n_place += 1
        home = _add_place(s, seeds, n_place, f"Home ({name})", "home", metro, (2.0, 18.0), taken)
        oid = seeds.ident("OWN", o)
        owners.append(s.owners.put(oid, Owner(oid, name, fake.email(), fake.numerify("(###) ###-####"), home,
                                              f"{rng.randint(0, 9999):04d}")))
    town = [p.place_id for p in s.places.values() if p.category not in ("home", "airport")
            and math.hypot(p.x_km, p.y_km) < 100]
    kinds = ["ev_plugged", "ready", "empty_tank", "ev_low", *(["random"] * rng.randint(3, 6))]
    rng.shuffle(kinds)
    for n, kind in enumerate(kinds, start=1):
        owner = owners[(n - 1) % len(owners)] if n <= len(owners) else seeds.choice(owners)
        s.vehicles.put(seeds.ident("VEH", n), _make_vehicle(seeds, seeds.ident("VEH", n), kind, owner, town))


def _make_vehicle(seeds: Seeds, vid: str, kind: str, owner: Owner, town: list[str]) -> Vehicle:
    rng, fake = seeds.rng, seeds.fake
    powertrain = {"ev_plugged": "electric", "ev_low": "electric", "empty_tank": "gasoline",
                  "ready": seeds.choice(["gasoline", "hybrid"])}.get(kind) or seeds.choice(
        ["gasoline", "gasoline", "hybrid", "electric"])
    make, model, full_range = seeds.choice(_MODELS[powertrain])
    year = rng.randint(2020 if powertrain == "electric" else 2015, 2026)
    odometer = round(rng.uniform(800, 14_000) * (2027 - year), 1)
    energy = {"ev_plugged": rng.uniform(30, 65), "ready": rng.uniform(55, 95), "empty_tank": 0.0,
              "ev_low": rng.uniform(6, 12)}.get(kind, rng.uniform(20, 95))
    at_home = kind in ("ev_plugged", "ready") or rng.random() < 0.5
    recommended = seeds.choice([230, 240, 250])
    tires = {t: recommended + rng.randint(-6, 6) for t in TIRES}
    if kind == "random" and rng.random() < 0.3:
        tires[seeds.choice(TIRES)] = recommended - rng.randint(35, 60)
    unit = "F" if rng.random() < 0.6 else "C"
    idle = kind == "random" and rng.random() < 0.2  # remote-started, idling in park
    ignition = "on" if idle else ("accessory" if kind == "random" and rng.random() < 0.2 else "off")
    locked = not (kind == "random" and rng.random() < 0.3)
    interval = 16_000 if powertrain != "electric" else 24_000
    charging = None
    if powertrain == "electric":
        charging = Charging(plugged_in=kind == "ev_plugged" or (kind == "random" and at_home and rng.random() < 0.5),
                            charging=False, charge_limit_percent=seeds.choice([80, 90]),
                            charger_kw=seeds.choice([7.2, 9.6, 11.0]))
    return Vehicle(
        vehicle_id=vid,
        vin="".join(seeds.choice(_VIN_CHARS) for _ in range(17)),
        owner_id=owner.owner_id, make=make, model=model, year=year, color=seeds.choice(_COLORS),
        license_plate=fake.license_plate(),
        nickname=f"{next(w for w in owner.name.split() if not w.endswith('.'))}'s {model}",
        powertrain=powertrain, full_range_km=full_range,
        location_place_id=owner.home_place_id if at_home else seeds.choice(town),
        doors_locked=dict.fromkeys(DOORS, locked),
        windows_open_percent={w: (rng.choice([0, 10, 25]) if kind == "random" and rng.random() < 0.15 else 0)
                              for w in DOORS},
        trunk_open=False, ignition=ignition, gear="park", speed_kmh=0, parking_brake_engaged=True,
        energy_percent=round(energy, 1), odometer_km=odometer, tire_pressure_kpa=tires,
        recommended_tire_kpa=recommended,
        headlights=seeds.choice(["auto", "auto", "off"]), hazards_on=False,
        climate=Climate(temperature_c=seeds.choice([19.0, 20.0, 21.0, 21.5, 22.0, 23.0]), unit=unit,
                        fan_speed=2 if idle else 0, ac_on=idle),
        cruise=Cruise(), navigation=Navigation(),
        maintenance=Maintenance(
            next_service_at_km=int(math.ceil(odometer / interval) * interval) + rng.choice([-800, 0, 2000]),
            oil_life_percent=rng.randint(5, 95) if powertrain != "electric" else None,
            last_service_date=iso(seeds.date_between(-330, -20)),
        ),
        charging=charging,
    )


domain = Domain("vehicle", VehicleState, generate, description=(__doc__ or "").split("\n\n")[0])


# ---------------------------------------------------------------- shared helpers and mode gates
def get_vehicle(s: VehicleState, vehicle_id: str) -> Vehicle:
    return require(s.vehicles, vehicle_id, "vehicle_id")


def now(s: VehicleState) -> datetime:
    return datetime.fromisoformat(s.clock.get().now)


def advance_clock(s: VehicleState, minutes: int) -> str:
    clock = s.clock.edit()
    clock.now = iso(now(s) + timedelta(minutes=minutes))
    return clock.now


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
        "as_of": s.clock.get().now,
    }
