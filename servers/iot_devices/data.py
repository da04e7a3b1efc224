"""Catalog for the smart-home world: device models with their capabilities and limits, home layouts,
and the appliances behind smart plugs."""

from __future__ import annotations

from typing import Any

# type -> [(manufacturer, model, capabilities, limits)]
MODELS: dict[str, tuple[tuple[str, str, tuple[str, ...], dict[str, Any]], ...]] = {
    "light": (
        ("Philips Hue", "White and Color Ambiance A19", ("power", "dimmable", "color", "tunable_white"),
         {"min_kelvin": 2000, "max_kelvin": 6500, "watts": 9}),
        ("Philips Hue", "White A19", ("power", "dimmable"), {"watts": 9}),
        ("LIFX", "Color BR30", ("power", "dimmable", "color", "tunable_white"),
         {"min_kelvin": 2500, "max_kelvin": 9000, "watts": 11}),
        ("GE Cync", "Tunable White Bulb", ("power", "dimmable", "tunable_white"),
         {"min_kelvin": 2700, "max_kelvin": 5000, "watts": 10}),
        ("Leviton", "Decora Smart Switch", ("power",), {"watts": 60}),
        ("Nanoleaf", "Essentials Lightstrip", ("power", "dimmable", "color"), {"watts": 20}),
    ),
    "plug": (
        ("TP-Link Kasa", "EP25 Smart Plug", ("power", "energy_meter"), {}),
        ("Eve", "Energy", ("power", "energy_meter"), {}),
        ("Wemo", "Smart Plug", ("power", "energy_meter"), {}),
    ),
    "thermostat": (
        ("Google Nest", "Learning Thermostat", ("thermostat",), {"min_c": 9.0, "max_c": 32.0}),
        ("ecobee", "Smart Thermostat Premium", ("thermostat",), {"min_c": 7.0, "max_c": 30.0}),
        ("Honeywell Home", "T9", ("thermostat",), {"min_c": 10.0, "max_c": 30.0}),
    ),
    "lock": (
        ("August", "Wi-Fi Smart Lock", ("lock", "access_codes"), {"max_codes": 6}),
        ("Yale", "Assure Lock 2", ("lock", "access_codes"), {"max_codes": 6}),
        ("Schlage", "Encode Plus", ("lock", "access_codes"), {"max_codes": 6}),
    ),
    "camera": (
        ("Arlo", "Pro 5S", ("camera",), {"battery_powered": True}),
        ("Google Nest", "Cam (wired)", ("camera",), {}),
        ("Ring", "Stick Up Cam Battery", ("camera",), {"battery_powered": True}),
        ("Wyze", "Cam v3", ("camera",), {}),
    ),
    "blind": (
        ("Lutron", "Serena Smart Shade", ("position",), {}),
        ("IKEA", "FYRTUR Blackout Blind", ("position",), {}),
        ("SwitchBot", "Curtain 3", ("position",), {}),
    ),
    "climate_sensor": (
        ("Aqara", "Temperature and Humidity Sensor", ("temperature", "humidity"), {}),
        ("Eve", "Room", ("temperature", "humidity"), {}),
    ),
    "motion_sensor": (
        ("Philips Hue", "Motion Sensor", ("motion",), {}),
        ("Aqara", "Motion Sensor P1", ("motion",), {}),
    ),
    "contact_sensor": (
        ("Aqara", "Door and Window Sensor", ("contact",), {}),
        ("Ring", "Contact Sensor", ("contact",), {}),
    ),
    "smoke_detector": (
        ("Google Nest", "Protect", ("smoke", "carbon_monoxide"), {}),
        ("First Alert", "Onelink Safe & Sound", ("smoke", "carbon_monoxide"), {}),
    ),
    "leak_sensor": (
        ("Moen", "Flo Smart Water Detector", ("leak",), {}),
        ("Aqara", "Water Leak Sensor", ("leak",), {}),
    ),
    "robot_vacuum": (
        ("iRobot", "Roomba j7+", ("vacuum", "auto_empty"), {}),
        ("Roborock", "S8 Pro Ultra", ("vacuum", "auto_empty"), {}),
        ("Eufy", "RoboVac 11S", ("vacuum",), {}),
    ),
    "water_heater": (
        ("Rheem", "ProTerra Hybrid", ("water_heater", "heat_pump"), {"min_c": 35.0, "max_c": 60.0}),
        ("A. O. Smith", "Signature Premier", ("water_heater",), {"min_c": 40.0, "max_c": 65.0}),
    ),
}

BATTERY_DRAIN_PER_DAY: dict[str, float] = {  # percent per day for battery-powered devices
    "motion_sensor": 0.3, "contact_sensor": 0.2, "climate_sensor": 0.25, "smoke_detector": 0.05,
    "leak_sensor": 0.1, "lock": 0.8, "camera": 2.5,
}

# (home kind, name pattern, rooms: (name, floor, area m2, temperature offset))
HOMES: tuple[tuple[str, str, tuple[tuple[str, int, int, float], ...]], ...] = (
    ("house", "{street} House", (
        ("Entryway", 1, 8, 0.0), ("Living Room", 1, 32, 0.3), ("Kitchen", 1, 18, 0.8), ("Dining Room", 1, 16, 0.2),
        ("Office", 1, 12, 0.5), ("Primary Bedroom", 2, 22, -0.6), ("Kids Room", 2, 14, -0.4),
        ("Garage", 1, 36, -2.5), ("Laundry Room", 1, 7, 0.4), ("Basement", 0, 45, -3.0),
    )),
    ("cabin", "Lake Cabin", (
        ("Entryway", 1, 6, -0.3), ("Great Room", 1, 40, 0.0), ("Kitchen", 1, 14, 0.6), ("Bunk Room", 2, 18, -0.8),
        ("Loft", 2, 20, 0.9), ("Utility Room", 1, 8, -1.2), ("Screened Porch", 1, 16, -2.0),
    )),
    ("apartment", "{street} Apartment", (
        ("Entryway", 1, 5, 0.0), ("Living Room", 1, 26, 0.4), ("Kitchen", 1, 10, 0.7), ("Bedroom", 1, 15, -0.5),
        ("Office Nook", 1, 7, 0.3), ("Bathroom", 1, 6, 0.6),
    )),
)

PLUG_LOADS: tuple[tuple[str, int], ...] = (  # appliance, watts when on
    ("Coffee Maker", 900), ("TV", 120), ("Space Heater", 1500), ("Dehumidifier", 300), ("Aquarium", 35),
    ("Fan", 45), ("Lamp", 40), ("Air Purifier", 55), ("Kettle", 1800), ("Game Console", 160),
)

COLORS: dict[str, str] = {
    "red": "#FF0000", "orange": "#FF8C00", "yellow": "#FFD700", "green": "#00C853", "teal": "#008080",
    "blue": "#1E90FF", "purple": "#8A2BE2", "pink": "#FF69B4", "white": "#FFFFFF", "warm_white": "#FFD6AA",
}

CODE_NAMES = ("Dog Walker", "Cleaner", "Babysitter", "Guest", "Neighbor", "Contractor", "Grandma", "Pet Sitter")
