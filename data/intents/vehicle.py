"""Vehicle: how users ask (format: data/intents/__init__.py)."""

from __future__ import annotations

BANK: dict[str, dict[str, list[str]]] = {
    "list_connected_vehicles": {
        "ask": [
            "list the connected vehicles",
            "show me the cars on the account",
        ],
        "vague": [
            "check my cars",
        ],
    },
    "get_vehicle_status": {
        "ask": [
            "check the status of {vehicle_id}",
            "give me a status report on {vehicle_id}",
            "tell me how {vehicle_id} is doing",
        ],
        "vague": [
            "check on my car",
        ],
    },
    "lock_vehicle_doors": {
        "ask": [
            "lock {vehicle_id}",
            "lock the doors of {vehicle_id}",
        ],
        "vague": [
            "lock my car",
        ],
    },
    "unlock_vehicle_doors": {
        "ask": [
            "unlock {vehicle_id}",
            "unlock the doors of {vehicle_id}",
        ],
        "vague": [
            "unlock my car",
        ],
    },
    "start_engine": {
        "ask": [
            "start {vehicle_id}",
            "start the engine of {vehicle_id}",
            "turn on {vehicle_id}",
        ],
        "vague": [
            "start my car",
        ],
    },
    "stop_engine": {
        "ask": [
            "turn off {vehicle_id}",
            "stop the engine of {vehicle_id}",
            "switch off {vehicle_id}",
        ],
        "vague": [
            "turn the car off",
        ],
    },
    "shift_gear": {
        "ask": [
            "shift {vehicle_id} into {gear}",
            "put {vehicle_id} in {gear}",
        ],
        "vague": [
            "change gear",
        ],
    },
    "set_parking_brake": {
        "ask": [
            "set the parking brake of {vehicle_id} (engaged: {engaged})",
        ],
        "vague": [
            "deal with the parking brake",
        ],
    },
    "set_vehicle_speed": {
        "ask": [
            "bring {vehicle_id} to {speed_kmh}",
            "set the speed of {vehicle_id} to {speed_kmh}",
        ],
        "vague": [
            "change speed",
        ],
    },
    "set_cruise_control": {
        "ask": [
            "set cruise control on {vehicle_id} (enabled: {enabled})",
        ],
        "vague": [
            "sort out cruise control",
        ],
    },
    "set_cabin_climate": {
        "ask": [
            "adjust the cabin climate in {vehicle_id}",
            "change the climate settings of {vehicle_id}",
        ],
        "vague": [
            "make the cabin comfortable",
        ],
    },
    "set_vehicle_window": {
        "ask": [
            "set the {window} window of {vehicle_id} to {open_percent} open",
            "open the {window} window on {vehicle_id} to {open_percent}",
        ],
        "vague": [
            "adjust a window",
        ],
    },
    "operate_trunk": {
        "ask": [
            "{action} the trunk of {vehicle_id}",
            "{action} {vehicle_id}'s trunk",
        ],
        "vague": [
            "deal with the trunk",
        ],
    },
    "set_vehicle_lights": {
        "ask": [
            "change the lights on {vehicle_id}",
            "adjust the lights of {vehicle_id}",
        ],
        "vague": [
            "fix the lights",
        ],
    },
    "control_ev_charging": {
        "ask": [
            "{action} charging on {vehicle_id}",
            "charging on {vehicle_id}: {action}",
        ],
        "vague": [
            "manage the charging",
        ],
    },
    "search_navigation_places": {
        "ask": [
            "search for places nearby",
            "look up some places to drive to",
        ],
        "vague": [
            "find a place to go",
        ],
    },
    "set_vehicle_destination": {
        "ask": [
            "set {destination} as the destination of {vehicle_id}",
            "navigate {vehicle_id} to {destination}",
        ],
        "vague": [
            "set a destination",
        ],
    },
    "start_route_guidance": {
        "ask": [
            "start route guidance in {vehicle_id}",
            "start the navigation on {vehicle_id}",
        ],
        "vague": [
            "start navigating",
        ],
    },
    "cancel_route_guidance": {
        "ask": [
            "cancel the route on {vehicle_id}",
            "stop the navigation in {vehicle_id}",
        ],
        "vague": [
            "cancel the route",
        ],
    },
    "drive_active_route": {
        "ask": [
            "drive {vehicle_id} along the active route",
            "go ahead and drive {vehicle_id} to the destination",
        ],
        "vague": [
            "get going",
        ],
    },
}

GOALS: list[dict[str, list[str]]] = []
