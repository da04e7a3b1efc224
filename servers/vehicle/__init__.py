"""Vehicle: a connected-car control API over a small fleet (ignition, gears, climate, navigation,
charging) whose actions are mode-gated.

The point of this domain is implicit dependencies: the engine starts only in park, driving needs the
engine running and the parking brake released, cruise control needs drive at 40 km/h or more, route
guidance needs the engine on, charging needs a parked, plugged-in EV, unlocking needs park and the
owner's PIN. Tools declare these preconditions with ``requires=(...)`` and the tool that establishes
a state declares it with ``establishes=(...)``, so the synthesis dependency graph can link them.

State behaviour: time follows the session clock (one minute per call; driving a route moves it on by
the trip time). A charging EV gains battery at its charger's fixed kW rate as the clock moves and
stops by itself at its charge limit; a drive moves the car, uses fuel or battery, adds to the
odometer, wears the oil and records a trip.

State-dependent failures an agent must handle: unknown vehicles, owners or destinations (or an
ambiguous destination name); starting a running engine, an empty tank or battery, or outside park;
anything that needs the engine running while it is off (shifting, the parking brake, speed, AC,
defrost, seat heat, route guidance); windows and lights without accessory power; unlocking with a
wrong PIN or while not stopped in park; locking or unlocking doors already in that state; locking,
shifting or driving with the trunk open, and opening a locked trunk; shifting into the current gear,
while moving, with the parking brake engaged, or out of park with the charging cable connected;
engaging the brake while moving; speed outside drive/reverse, with the brake engaged, over the
reverse limit or out of fuel; cruise control outside drive, under 40 km/h, over 160 km/h, already on,
off when disabling, or a target when disabling; climate setpoints outside 16-30 C / 61-86 F, AC
without the fan, or nothing to change; lights already set; charging a non-EV, an EV not plugged in,
already charging, not charging, at or above its limit, a limit with stop, or releasing the cable
while charging; a destination where the car already is; guidance without a destination or already
active; cancelling a route that is not set; and driving a route without guidance, outside drive,
with the brake engaged, or beyond the remaining range.
"""

from servers.kit import Domain
from servers.vehicle import discovery, tools_cabin, tools_drive, tools_navigation
from servers.vehicle.state import VehicleState, progress_charging
from servers.vehicle.world import generate

domain = Domain("vehicle", VehicleState, generate, description=(__doc__ or "").split("\n\n")[0],
                modules=(tools_drive, tools_cabin, tools_navigation, discovery), on_time=progress_charging)

__all__ = ["domain"]
