"""Vehicle discovery tools (hidden from the model): enumerate real entities for query synthesis.

They expose what synthesis needs to ground a request in the live world, including owners' remote
PINs (which a synthesized user must state for unlock requests) and the state flags that decide which
mode-gated actions are currently possible.
"""

from __future__ import annotations

from typing import Literal

from servers.kit import discovery, value_counts
from servers.vehicle.state import (
    PlaceCategory,
    Powertrain,
    VehicleState,
    alerts,
    range_km,
)


@discovery(produces=("vehicle_id",))
def vehicle_list_fleet(s: VehicleState, powertrain: Powertrain | None = None, owner_id: str | None = None) -> list:
    """Every vehicle with its owner (name and remote PIN), VIN, location and mode-relevant state.

    Args:
        powertrain: Only vehicles with this powertrain.
        owner_id: Only vehicles of this owner.
    """
    rows = []
    for v in s.vehicles.values():
        if (powertrain is not None and v.powertrain != powertrain) or (owner_id is not None and v.owner_id != owner_id):
            continue
        owner = s.owners[v.owner_id]
        rows.append({
            "vehicle_id": v.vehicle_id, "vin": v.vin, "nickname": v.nickname, "make": v.make, "model": v.model,
            "year": v.year, "color": v.color, "license_plate": v.license_plate, "powertrain": v.powertrain,
            "owner_id": owner.owner_id, "owner_name": owner.name, "remote_pin": owner.remote_pin,
            "location_place_id": v.location_place_id, "location_name": s.places[v.location_place_id].name,
            "ignition": v.ignition, "gear": v.gear, "speed_kmh": v.speed_kmh,
            "parking_brake_engaged": v.parking_brake_engaged, "all_doors_locked": all(v.doors_locked.values()),
            "trunk_open": v.trunk_open, "energy_percent": v.energy_percent, "range_km": range_km(v),
            "plugged_in": v.charging.plugged_in if v.charging else None,
            "charging": v.charging.charging if v.charging else None,
            "charge_limit_percent": v.charging.charge_limit_percent if v.charging else None,
            "climate_unit": v.climate.unit, "headlights": v.headlights,
            "destination_place_id": v.navigation.destination_place_id, "alerts": alerts(v),
        })
    return rows


@discovery(produces=("place_id",))
def vehicle_list_places(s: VehicleState, category: PlaceCategory | None = None) -> list:
    """Every known navigation place with its id, category, address and map coordinates (km).

    Args:
        category: Only places of this category.
    """
    return [p for p in s.places.values() if category is None or p.category == category]


@discovery(produces=("owner_id",))
def vehicle_search_owners(s: VehicleState, name: str | None = None) -> list:
    """Vehicle owners (contact details, remote-access PIN, home place) with the ids of their vehicles.

    Args:
        name: Case-insensitive part of the owner's name; omit to list everyone.
    """
    needle = (name or "").lower()
    return [{**{k: getattr(o, k) for k in ("owner_id", "name", "email", "phone", "home_place_id", "remote_pin")},
             "vehicle_ids": [v.vehicle_id for v in s.vehicles.values() if v.owner_id == o.owner_id]}
            for o in s.owners.values() if needle in o.name.lower()]


@discovery
def vehicle_get_unique_values(s: VehicleState, field: Literal["make", "model", "powertrain", "color",
                                                               "place_category", "ignition", "gear",
                                                               "headlights", "climate_unit"]) -> list:
    """Distinct values of a categorical field with their counts.

    Args:
        field: Which field to enumerate.
    """
    if field == "place_category":
        values = [p.category for p in s.places.values()]
    elif field == "climate_unit":
        values = [v.climate.unit for v in s.vehicles.values()]
    else:
        values = [getattr(v, field) for v in s.vehicles.values()]
    return value_counts(values)
