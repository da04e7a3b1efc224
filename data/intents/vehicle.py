"""Vehicle: how drivers ask their connected car for things (format: data/intents/__init__.py)."""

from __future__ import annotations

SELF: tuple[str, ...] = ()
SPOKEN: tuple[str, ...] = ()

BANK: dict[str, dict[str, list[str]]] = {
    "list_connected_vehicles": {
        "ask": [
            "show me all my cars and where they are",
            "list {owner_name}'s vehicles",
            "show me the {powertrain} cars on the account",
            "tell me which of our cars are parked and which are out",
        ],
        "vague": ["show me where my cars are", "tell me what cars I have hooked up"],
    },
    "get_vehicle_status": {
        "ask": [
            "check on {vehicle_id}",
            "tell me how much range {vehicle_id} has left",
            "give me a full rundown of {vehicle_id}",
            "see if {vehicle_id} is showing any warnings",
        ],
        "vague": ["check that my car is okay", "see how the car is doing"],
    },
    "lock_vehicle_doors": {
        "ask": [
            "lock {vehicle_id}",
            "lock up {vehicle_id} for me",
            "lock {vehicle_id}'s {doors} door",
        ],
        "vague": ["make sure the car is locked", "stop anyone getting into my car"],
    },
    "unlock_vehicle_doors": {
        "ask": [
            "unlock {vehicle_id} — my PIN is {security_pin}",
            "open up {vehicle_id} for me",
            "unlock {vehicle_id}'s {doors} door, my PIN is {security_pin}",
        ],
        "vague": ["let me into my car", "open the car up for someone"],
    },
    "start_engine": {
        "ask": [
            "start {vehicle_id}",
            "fire up {vehicle_id}",
            "get {vehicle_id} running",
        ],
        "vague": ["get the car going", "start the car up"],
    },
    "stop_engine": {
        "ask": [
            "turn off {vehicle_id}",
            "shut {vehicle_id} down",
            "switch off the engine in {vehicle_id}",
        ],
        "vague": ["turn the car off", "shut the car down"],
    },
    "shift_gear": {
        "ask": [
            "put {vehicle_id} in {gear}",
            "shift {vehicle_id} into {gear}",
            "move {vehicle_id}'s gear selector to {gear}",
            "shift into {gear}",
        ],
        "vague": ["change gear", "get the car in the right gear"],
    },
    "set_parking_brake": {
        "ask": [
            "work the parking brake on {vehicle_id}",
            "change the handbrake on {vehicle_id}",
            "deal with the parking brake on {vehicle_id}",
        ],
        "vague": ["do the handbrake", "sort out the parking brake"],
    },
    "set_vehicle_speed": {
        "ask": [
            "take {vehicle_id} to {speed_kmh}",
            "drive {vehicle_id} at {speed_kmh}",
            "get {vehicle_id} going {speed_kmh}",
            "bring us up to {speed_kmh}",
        ],
        "vague": ["change how fast we're going", "adjust our speed"],
    },
    "set_cruise_control": {
        "ask": [
            "set cruise on {vehicle_id} at {target_speed_kmh}",
            "hold {vehicle_id} at {target_speed_kmh} on cruise",
            "change the cruise control on {vehicle_id}",
        ],
        "vague": ["help me with cruise control", "sort out cruise control"],
    },
    "set_cabin_climate": {
        "ask": [
            "set {vehicle_id} to {temperature} degrees",
            "make it {temperature}°{unit} inside {vehicle_id}",
            "run the fan at {fan_speed} in {vehicle_id}",
            "put the driver's seat heat in {vehicle_id} on level {driver_seat_heat}",
            "bring the cabin of {vehicle_id} to {temperature} degrees",
            "change the climate settings in {vehicle_id}",
            "sort out the heating and cooling in {vehicle_id}",
            "set the cabin to {temperature} degrees",
        ],
        "vague": ["make the car comfortable", "fix the temperature in the car"],
    },
    "set_vehicle_window": {
        "ask": [
            "set the {window} window on {vehicle_id} to {open_percent} open",
            "bring the {window} window of {vehicle_id} to {open_percent}",
            "move the glass on {vehicle_id} to {open_percent} open",
            "bring the {window} window to {open_percent}",
        ],
        "vague": ["let some air into the car", "do something about the windows"],
    },
    "operate_trunk": {
        "ask": [
            "{action} the trunk of {vehicle_id}",
            "{action} {vehicle_id}'s tailgate",
            "{action} the boot on {vehicle_id}",
        ],
        "vague": ["help me with the trunk", "deal with the tailgate"],
    },
    "set_vehicle_lights": {
        "ask": [
            "set the headlights on {vehicle_id} to {headlights}",
            "turn the front lights of {vehicle_id} to {headlights}",
            "sort out the hazard lights on {vehicle_id}",
        ],
        "vague": ["do something about the lights", "sort out the car's lights"],
    },
    "control_ev_charging": {
        "ask": [
            "tell {vehicle_id}'s charger to {action}",
            "charge {vehicle_id} up to {charge_limit_percent}",
            "manage the charging on {vehicle_id}",
        ],
        "vague": ["deal with the charging", "sort out the charging cable"],
    },
    "search_navigation_places": {
        "ask": [
            "find a {category} near {vehicle_id}",
            "look up {query} on the map",
            "show me {category} spots that {vehicle_id} can reach",
            "list the top {limit} matches for {query}",
            "show me places nearby",
            "find places {vehicle_id} can get to",
            "find the nearest {category}",
            "look for a {category} with {vehicle_id}'s range in mind",
        ],
        "vague": ["find somewhere to stop", "look for places around here"],
    },
    "set_vehicle_destination": {
        "ask": [
            "navigate {vehicle_id} to {destination}",
            "set {destination} as where {vehicle_id} is heading",
            "plan a route for {vehicle_id} to {destination}",
        ],
        "vague": ["set up a trip", "tell the car where we're going"],
    },
    "start_route_guidance": {
        "ask": [
            "start navigation in {vehicle_id}",
            "give me turn-by-turn directions in {vehicle_id}",
            "begin guiding {vehicle_id} along the route",
        ],
        "vague": ["start navigating", "show me the way"],
    },
    "cancel_route_guidance": {
        "ask": [
            "cancel the route on {vehicle_id}",
            "stop navigating in {vehicle_id}",
            "clear where {vehicle_id} is headed",
        ],
        "vague": ["stop the directions", "forget the trip"],
    },
    "drive_active_route": {
        "ask": [
            "drive {vehicle_id} to where it's headed",
            "take {vehicle_id} along the route",
            "get {vehicle_id} to its destination",
        ],
        "vague": ["get us going", "take me there"],
    },
}

GOALS: list[dict[str, list[str]]] = [
    {"tools": ["get_vehicle_status", "unlock_vehicle_doors", "operate_trunk"],
     "ask": ["open the trunk of {vehicle_id} so I can load the shopping — my PIN is {security_pin}",
             "let me into the back of {vehicle_id}, unlocking it first if it's locked"]},
    {"tools": ["start_engine", "set_cabin_climate"],
     "ask": ["get {vehicle_id} running and set the cabin to {temperature} degrees before I get in",
             "start {vehicle_id} and get the climate comfortable before I head out"]},
    {"tools": ["search_navigation_places", "set_vehicle_destination", "start_route_guidance"],
     "ask": ["find the nearest {category} and give me directions there",
             "look up {query} and start guiding {vehicle_id} there"]},
    {"tools": ["control_ev_charging", "start_engine", "shift_gear"],
     "ask": ["unplug {vehicle_id} and get it into {gear}",
             "release the cable on {vehicle_id}, start it and put it in {gear}"]},
    {"tools": ["set_vehicle_destination", "start_route_guidance", "drive_active_route"],
     "ask": ["drive {vehicle_id} to {destination}",
             "take me to {destination} in {vehicle_id} and tell me when we're there"]},
    {"tools": ["shift_gear", "set_parking_brake", "stop_engine", "lock_vehicle_doors"],
     "ask": ["park {vehicle_id} properly and lock it up",
             "we've arrived, so shut {vehicle_id} down for the night and lock the doors"]},
    {"tools": ["list_connected_vehicles", "get_vehicle_status"],
     "ask": ["tell me which of my {powertrain} cars has the most range left",
             "find {owner_name}'s car and give me a full rundown of it"]},
    {"tools": ["set_vehicle_window", "lock_vehicle_doors"],
     "ask": ["set the windows on {vehicle_id} to {open_percent} open and lock it up",
             "leave the {window} window of {vehicle_id} at {open_percent} and lock the doors"]},
]
