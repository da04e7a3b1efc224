"""The seeded vehicle world: a fictional metro area with owners and their homes, a handful of vehicles
(gasoline, hybrid and electric) parked around town, and known places (chargers, fuel stations,
offices, an airport, a far state park) laid out on a km grid.
"""

from __future__ import annotations

import math

from servers.kit import Counters, Seeds, iso
from servers.vehicle.state import (
    DOORS,
    TIRES,
    Charging,
    Climate,
    Cruise,
    Maintenance,
    Navigation,
    Owner,
    Place,
    Vehicle,
    VehicleState,
)

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
