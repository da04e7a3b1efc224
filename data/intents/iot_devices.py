"""IoT devices: how users ask (format: data/intents/__init__.py)."""

from __future__ import annotations

SELF: tuple[str, ...] = ()
SPOKEN: tuple[str, ...] = ()

BANK: dict[str, dict[str, list[str]]] = {
    "list_smart_homes": {
        "ask": [
            "which homes do I have set up",
            "show me my places and the rooms in each",
            "how warm is it in each room at home",
        ],
        "vague": ["what's connected", "give me an overview of my homes"],
    },
    "list_smart_devices": {
        "ask": [
            "what gadgets are in {room_id}",
            "show me every {device_type} at {home_id}",
            "which devices are offline right now",
            "anything running low on battery",
            "find the {query} at {home_id}",
        ],
        "vague": ["what devices do I have", "show me my stuff"],
    },
    "get_smart_device_status": {
        "ask": [
            "how is {device_id} doing",
            "is {device_id} on",
            "check {device_id} for me",
            "what's the battery on {device_id}",
        ],
        "vague": ["check on that device", "is it working"],
    },
    "get_device_sensor_history": {
        "ask": [
            "how has the temperature from {device_id} changed today",
            "when did {device_id} last see motion",
            "who unlocked {device_id} recently",
            "show me what {device_id} reported since {since}",
        ],
        "vague": ["what happened at home", "show me the log"],
    },
    "get_home_energy_usage": {
        "ask": [
            "how much power is {home_id} pulling right now",
            "what's eating electricity at {home_id}",
            "how many kWh did my plugs use today at {home_id}",
        ],
        "vague": ["why is my power bill so high", "what's using energy"],
    },
    "switch_smart_device_power": {
        "ask": [
            "turn on {device_id}",
            "switch off {device_id}",
            "kill the power to {device_id}",
            "flip {device_id} on please",
        ],
        "vague": ["turn that on", "shut it off"],
    },
    "adjust_smart_light": {
        "ask": [
            "dim {device_id} to {brightness} percent",
            "make {device_id} {color}",
            "set {device_id} to a warm {color_temperature_k} K white",
            "bring {device_id} up to {brightness}%",
        ],
        "vague": ["the light is too bright", "make it cozier in here"],
    },
    "set_blind_position": {
        "ask": [
            "close {device_id}",
            "open {device_id} halfway",
            "put {device_id} at {position} percent",
        ],
        "vague": ["there's too much sun", "let some light in"],
    },
    "set_camera_settings": {
        "ask": [
            "stop {device_id} from watching while we're home",
            "start recording on {device_id}",
            "turn off motion alerts on {device_id}",
        ],
        "vague": ["I don't want the camera on right now", "keep an eye on the porch"],
    },
    "set_thermostat_mode": {
        "ask": [
            "put {device_id} on {mode}",
            "switch {device_id} to cooling",
            "turn off the AC on {device_id}",
        ],
        "vague": ["turn the heat on", "stop the air conditioning"],
    },
    "set_thermostat_temperature": {
        "ask": [
            "make it {temperature} degrees on {device_id}",
            "set {device_id} to {temperature} {unit}",
            "cool the place down to {temperature} with {device_id}",
        ],
        "vague": ["it's too hot in here", "I'm freezing"],
    },
    "set_water_heater": {
        "ask": [
            "put {device_id} on {mode}",
            "heat the water in {device_id} to {temperature} {unit}",
            "we're away, set {device_id} to vacation",
        ],
        "vague": ["the shower water is lukewarm", "save some energy on hot water"],
    },
    "start_vacuum_cleaning": {
        "ask": [
            "have {device_id} clean {room_ids}",
            "run the robot vacuum {device_id}",
            "send {device_id} to vacuum the whole floor",
        ],
        "vague": ["the floors are dirty", "can the robot do a round"],
    },
    "send_vacuum_to_dock": {
        "ask": [
            "call {device_id} back home",
            "stop {device_id} and let it charge",
            "park {device_id} on its base",
        ],
        "vague": ["stop the vacuum", "the robot is in the way"],
    },
    "lock_smart_lock": {
        "ask": [
            "lock {device_id}",
            "make sure {device_id} is bolted",
            "secure {device_id} now",
        ],
        "vague": ["did I leave the door open", "lock up"],
    },
    "unlock_smart_lock": {
        "ask": [
            "unlock {device_id}, code {code}",
            "let the courier in through {device_id}, my code is {code}",
            "open {device_id} with {code}",
        ],
        "vague": ["open the door for me", "someone's at the door, let them in"],
    },
    "manage_lock_access_code": {
        "ask": [
            "give the {code_name} a code {code} on {device_id}",
            "{action} the {code_name} code on {device_id}",
            "the {code_name} doesn't need access to {device_id} anymore",
        ],
        "vague": ["a guest needs to get in", "revoke someone's access"],
    },
    "get_home_security_status": {
        "ask": [
            "is the alarm on at {home_id}",
            "are any windows open at {home_id}",
            "is everything locked up at {home_id}",
        ],
        "vague": ["is the house secure", "check the alarm"],
    },
    "set_home_security_mode": {
        "ask": [
            "arm {home_id} in {mode} mode",
            "disarm the alarm at {home_id}, the code is {code}",
            "we're leaving, turn on the alarm at {home_id}",
            "set {home_id} to night mode",
        ],
        "vague": ["turn the alarm on", "switch off the alarm"],
    },
    "list_home_scenes": {
        "ask": [
            "what scenes are saved for {home_id}",
            "what does my movie setup at {home_id} do",
            "show me the presets at {home_id}",
        ],
        "vague": ["what moods do I have", "show my scenes"],
    },
    "save_home_scene": {
        "ask": [
            "remember how {device_ids} are set right now as {name}",
            "save this setup of {device_ids} at {home_id} as {name}",
            "make a preset called {name} from {device_ids}",
        ],
        "vague": ["I like it like this, save it", "keep this lighting for later"],
    },
    "activate_home_scene": {
        "ask": [
            "run {scene_id}",
            "set the mood with {scene_id}",
            "switch everything to {scene_id}",
        ],
        "vague": ["movie time", "get the house ready for bed"],
    },
    "list_home_automations": {
        "ask": [
            "what runs on a timer at {home_id}",
            "which routines at {home_id} are paused",
            "when does the vacuum routine run next at {home_id}",
        ],
        "vague": ["what's scheduled at home", "show my routines"],
    },
    "create_home_automation": {
        "ask": [
            "every weekday at {time} {device_action} {device_id}, call it {name}",
            "run {scene_id} at {time} on {days} and name it {name}",
            "at {time} each day, {device_action} {device_id} at {home_id}",
        ],
        "vague": ["I want this to happen on its own every morning", "set up a routine"],
    },
    "update_home_automation": {
        "ask": [
            "pause {automation_id}",
            "move {automation_id} to {time}",
            "only run {automation_id} on {days}",
            "rename {automation_id} to {name}",
        ],
        "vague": ["change my routine", "stop that schedule for now"],
    },
}

GOALS: list[dict[str, list[str]]] = [
    {"tools": ["list_smart_devices", "switch_smart_device_power", "adjust_smart_light"],
     "ask": ["turn on the living room lamp and make it a soft blue",
             "get the kitchen lights on at {brightness} percent"]},
    {"tools": ["get_home_security_status", "lock_smart_lock", "set_home_security_mode"],
     "ask": ["we're heading out, lock up the apartment and arm the alarm",
             "make sure {home_id} is locked and set the alarm to away"]},
    {"tools": ["set_thermostat_mode", "set_thermostat_temperature"],
     "ask": ["switch the heat on and make it {temperature} degrees",
             "cool the house to 70 before I get back"]},
    {"tools": ["list_home_scenes", "activate_home_scene"],
     "ask": ["set up the living room for movie night",
             "put the cabin in its arrival mode"]},
    {"tools": ["save_home_scene", "create_home_automation"],
     "ask": ["save how the bedroom looks now as Wind Down and have it come on at 21:30 every night",
             "keep this lighting as {name} and run it every weekday at {time}"]},
    {"tools": ["get_smart_device_status", "start_vacuum_cleaning", "send_vacuum_to_dock"],
     "ask": ["have the robot do the kitchen and then bring it back",
             "check the robot has enough battery, run it in the living room, then park it"]},
    {"tools": ["unlock_smart_lock", "manage_lock_access_code"],
     "ask": ["let the dog walker in now with my code {code} and give them their own code for next week",
             "open the front door for the cleaner and set up a code just for them"]},
    {"tools": ["get_home_energy_usage", "switch_smart_device_power"],
     "ask": ["find whatever is burning the most power at {home_id} and switch it off",
             "turn off the space heater if it's still running"]},
]
