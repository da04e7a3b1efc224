"""Vehicle: a connected-car control API over a small fleet (ignition, gears, climate, navigation,
charging) whose actions are mode-gated.

The point of this domain is implicit dependencies: the engine starts only in park, driving needs the
engine running and the parking brake released, cruise control needs drive at 40 km/h or more, route
guidance needs the engine on, charging needs a parked, plugged-in EV, unlocking needs park and the
owner's PIN. Tools declare these preconditions with ``requires=(...)`` and the tool that establishes
a state declares it with ``establishes=(...)``, so the synthesis dependency graph can link them.

Modules: ``state`` (records, seeded world, shared mode gates), ``drive`` (locks, ignition, gears,
speed, cruise), ``cabin`` (climate, windows, trunk, lights, charging), ``navigation`` (places,
guidance, trips) and ``discovery`` (hidden enumeration for synthesis).
"""

# Import order = registration order = the order tools are listed to the model.
from servers.vehicle import drive  # noqa: I001
from servers.vehicle import cabin, navigation, discovery
from servers.vehicle.state import VehicleState, domain, generate

__all__ = ["VehicleState", "cabin", "discovery", "domain", "drive", "generate", "navigation"]
