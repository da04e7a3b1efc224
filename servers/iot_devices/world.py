"""The seeded smart-home world: one owner's three homes (a house, a lake cabin, an apartment), ~100
devices, scenes, automations and a day of sensor history.

Every seed has the archetypes the failure rules need. The house: an open window and a back door left
ajar with its lock open (arming and locking fail), an offline Wi-Fi plug (and a scene with only that
plug), a hybrid water heater, a robot vacuum charging on its dock (too low for the whole floor now,
full by the 10:00 weekday automation), an on/off-only porch switch and a white-only lamp. The cabin:
an armed-away alarm, a jammed lock, a stuck vacuum, a sensor whose battery is already dead and one
that dies within days, a water heater on vacation. The apartment: a thermostat that is off, a vacuum
with a full bin and no auto-empty dock, a camera in privacy mode, a lock whose access-code slots are
all used, a plain electric water heater, and every door and window closed (arming away works).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from servers.iot_devices import data
from servers.iot_devices import dynamics as dyn
from servers.iot_devices.state import Automation, Device, HistoryEntry, Home, IotState, Room, Scene
from servers.kit import Counters, Seeds, iso
from servers.kit.fake import REFERENCE_DATE

NOW = REFERENCE_DATE


class _Builder:
    def __init__(self, s: IotState, seeds: Seeds) -> None:
        self.s, self.seeds, self.rng = s, seeds, seeds.rng
        self.n = {"DEV": 0, "RM": 0, "SCN": 0, "AUT": 0, "EVT": 0}

    def next(self, prefix: str, width: int = 4) -> str:
        self.n[prefix] += 1
        return self.seeds.ident(prefix, self.n[prefix], width)

    def model(self, kind: str, pick: str | None = None) -> tuple[str, str, tuple[str, ...], dict[str, Any]]:
        options = data.MODELS[kind]
        if pick is not None:
            return next(m for m in options if m[1] == pick)
        return self.seeds.choice(options)

    def device(self, home: Home, room: Room, name: str, kind: str, state: dict[str, Any], *,
               model: str | None = None, battery: float | None = None) -> Device:
        maker, model_name, caps, limits = self.model(kind, model)
        battery_powered = kind in data.BATTERY_DRAIN_PER_DAY and (kind != "camera" or limits.get("battery_powered"))
        if kind == "robot_vacuum":
            battery_powered = True
        level = battery if battery is not None else round(self.rng.uniform(35, 100), 1)
        did = self.next("DEV")
        d = Device(did, home.home_id, room.room_id, name, kind, maker, model_name, list(caps), dict(limits),
                   online=True, last_changed_at=iso(NOW - timedelta(minutes=self.rng.randint(30, 3000))),
                   state=state, battery=level if battery_powered else None,
                   battery_at=iso(NOW) if battery_powered else None)
        self.s.devices.put(did, d)
        return d

    def log(self, device_id: str, at: Any, kind: str, metric: str, value: Any, source: str) -> None:
        eid = self.next("EVT", 6)
        self.s.history.put(eid, HistoryEntry(eid, device_id, iso(at), kind, metric, value, source))


def _light_state(caps: tuple[str, ...], on: bool, rng: Any) -> dict[str, Any]:
    return {"on": on, "brightness": rng.choice([40, 60, 80, 100]) if "dimmable" in caps else None,
            "color": None, "color_temperature_k": 2700 if "tunable_white" in caps else None}


def _home(b: _Builder, kind: str, pattern: str, rooms_plan: Any, owner: str, ambient: float) -> tuple[Home, dict]:
    s, seeds, rng, fake = b.s, b.seeds, b.rng, b.seeds.fake
    n_home = len(s.homes) + 1
    street = fake.street_name()
    hid = seeds.ident("HOME", n_home, 2)
    home = Home(hid, pattern.format(street=street.split()[0]), kind,
                f"{rng.randint(10, 9999)} {street}, {fake.city()}, {fake.state_abbr()}", owner, ambient,
                f"{rng.randint(0, 9999):04d}")
    s.homes.put(hid, home)
    core = [r for r in rooms_plan if r[0] in ("Entryway", "Living Room", "Great Room", "Kitchen")]
    optional = [r for r in rooms_plan if r not in core]
    keep = set(seeds.sample([r[0] for r in optional], max(2, len(optional) - rng.randint(0, 2))))
    rooms = {}
    for name, floor, area, offset in rooms_plan:
        if name in keep or (name, floor, area, offset) in core:
            rid = b.next("RM")
            rooms[name] = s.rooms.put(rid, Room(rid, hid, name, floor, area + rng.randint(-2, 4), offset))
    return home, rooms


def _lights(b: _Builder, home: Home, rooms: dict[str, Room], on_rooms: set[str]) -> dict[str, Device]:
    rng, out = b.rng, {}
    for name, room in rooms.items():
        if name in ("Laundry Room", "Utility Room", "Bathroom"):
            continue
        if name == "Entryway":
            out["porch"] = b.device(home, room, "Porch Light", "light", {"on": False}, model="Decora Smart Switch")
            continue
        if name == "Garage":
            b.device(home, room, "Garage Light", "light", {"on": False}, model="Decora Smart Switch")
            continue
        first = "White and Color Ambiance A19" if name in ("Living Room", "Great Room") else None
        if name in ("Primary Bedroom", "Bedroom", "Bunk Room"):
            first = "White A19"
        _, model, caps, _ = b.model("light", first)
        if model == "Essentials Lightstrip":
            _, model, caps, _ = b.model("light", "White A19")
        d = b.device(home, room, f"{name} Ceiling Light", "light", _light_state(caps, name in on_rooms, rng),
                     model=model)
        out.setdefault(name, d)
        if rng.random() < 0.5 or name in ("Living Room", "Kitchen"):
            _maker, model, caps, _ = b.model("light")
            extra = "Lightstrip" if "Lightstrip" in model else "Lamp" if "Switch" not in model else "Pendant"
            b.device(home, room, f"{name} {extra}", "light", _light_state(caps, False, rng), model=model)
    return out


def _sensors_and_security(b: _Builder, home: Home, rooms: dict[str, Room], open_window: bool,
                          full_codes: bool) -> dict[str, Any]:
    rng, seeds = b.rng, b.seeds
    out: dict[str, Any] = {"locks": [], "contacts": []}
    entry = rooms["Entryway"]
    doors = [("Front Door", entry)]
    if "Kitchen" in rooms and home.kind != "apartment":
        doors.append(("Back Door" if home.kind == "house" else "Porch Door", rooms["Kitchen"]))
    for door, room in doors:
        contact = b.device(home, room, door, "contact_sensor", {"open": False, "opening": "door",
                                                               "last_opened_at": iso(NOW - timedelta(hours=rng.randint(1, 30)))})
        n_codes = 6 if full_codes and door == "Front Door" else rng.randint(2, 4)
        codes = [{"name": "Owner", "code": f"{rng.randint(1000, 999999)}", "role": "owner"}]
        for name in seeds.sample(data.CODE_NAMES, n_codes - 1):
            code = f"{rng.randint(1000, 999999)}"
            while any(c["code"] == code for c in codes):
                code = f"{rng.randint(1000, 999999)}"
            codes.append({"name": name, "code": code, "role": "guest"})
        lock = b.device(home, room, f"{door} Lock", "lock", {"locked": door == "Front Door", "jammed": False,
                                                             "codes": codes, "door_sensor_id": contact.device_id})
        out["locks"].append(lock)
        out["contacts"].append(contact)
    windows = [r for r in ("Living Room", "Great Room", "Primary Bedroom", "Bedroom", "Kids Room", "Loft")
               if r in rooms]
    for k, r in enumerate(windows[:3]):
        is_open = open_window and k == 0
        out["contacts"].append(b.device(home, rooms[r], f"{r} Window", "contact_sensor", {
            "open": is_open, "opening": "window",
            "last_opened_at": iso(NOW - timedelta(minutes=rng.randint(20, 2000)))}))
    if "Garage" in rooms:
        out["contacts"].append(b.device(home, rooms["Garage"], "Garage Door", "contact_sensor", {
            "open": False, "opening": "door", "last_opened_at": iso(NOW - timedelta(hours=rng.randint(2, 20)))}))
    for r in [x for x in ("Entryway", "Living Room", "Great Room", "Garage", "Loft") if x in rooms][:3]:
        out.setdefault("motion", []).append(b.device(home, rooms[r], f"{r} Motion Sensor", "motion_sensor", {
            "motion": False, "last_motion_at": iso(NOW - timedelta(minutes=rng.randint(5, 600)))}))
    for r in [x for x in ("Primary Bedroom", "Kids Room", "Office", "Basement", "Bunk Room", "Loft", "Bedroom",
                          "Office Nook") if x in rooms][:3]:
        out.setdefault("climate", []).append(b.device(home, rooms[r], f"{r} Climate Sensor", "climate_sensor",
                                                      {"humidity": rng.randint(38, 62)}))
    for r in [x for x in ("Entryway", "Kitchen") if x in rooms]:
        b.device(home, rooms[r], f"{r} Smoke Detector", "smoke_detector", {"smoke": "clear", "co": "clear"})
    for r in [x for x in ("Laundry Room", "Basement", "Utility Room", "Bathroom", "Kitchen") if x in rooms][:2]:
        out.setdefault("leak", []).append(b.device(home, rooms[r], f"{r} Leak Sensor", "leak_sensor",
                                                   {"leak": False}))
    cams = [("Front Door Camera", entry, None)]
    if home.kind != "apartment":
        cams.append(("Backyard Camera", rooms.get("Kitchen", entry), seeds.choice(["Pro 5S", "Stick Up Cam Battery"])))
    if home.kind != "cabin":
        living = rooms.get("Living Room", entry)
        cams.append(("Living Room Camera", living, "Cam v3"))
    for name, room, model in cams:
        _maker, model_name, _caps, limits = b.model("camera", model)
        indoor = name == "Living Room Camera"
        out.setdefault("cameras", []).append(b.device(home, room, name, "camera", {
            "recording": not limits.get("battery_powered") and not indoor, "motion_detection": True,
            "privacy_mode": indoor and home.kind == "apartment",
            "last_motion_at": iso(NOW - timedelta(minutes=rng.randint(10, 900)))}, model=model_name))
    return out


def _appliances(b: _Builder, home: Home, rooms: dict[str, Room]) -> dict[str, Any]:
    rng, seeds, out = b.rng, b.seeds, {}
    blinds = [r for r in ("Living Room", "Great Room", "Primary Bedroom", "Bedroom", "Office", "Loft") if r in rooms]
    out["blinds"] = [b.device(home, rooms[r], f"{r} Blinds", "blind", {"position": rng.choice([0, 50, 100])})
                     for r in blinds[:3]]
    loads = seeds.sample(data.PLUG_LOADS, rng.randint(2, 4))
    if home.kind == "apartment" and not any(x[0] == "Coffee Maker" for x in loads):
        loads[0] = ("Coffee Maker", 900)
    if home.kind == "house" and not any(x[0] == "TV" for x in loads):
        loads[-1] = ("TV", 120)
    plugs = []
    for appliance, watts in loads:
        room = rooms["Kitchen"] if appliance in ("Coffee Maker", "Kettle") else rooms.get(
            "Living Room", rooms.get("Great Room", rooms["Kitchen"])) if appliance in ("TV", "Game Console") else \
            seeds.choice(list(rooms.values()))
        on = appliance in ("Aquarium", "Air Purifier", "Dehumidifier") or (appliance == "TV" and rng.random() < 0.3)
        total = round(rng.uniform(20, 400), 3)
        today = round(watts / 1000 * 9, 3) if on else round(rng.uniform(0, 0.6), 3)
        plugs.append(b.device(home, room, f"{appliance} Plug", "plug", {
            "on": on, "appliance": appliance, "rated_w": watts, "kwh": total, "anchor_at": iso(NOW),
            "day": NOW.date().isoformat(), "day_start_kwh": round(total - today, 4)}))
    out["plugs"] = plugs
    return out


def _vacuum(b: _Builder, home: Home, rooms: dict[str, Room], kind: str) -> Device:
    room = rooms.get("Living Room", rooms.get("Great Room"))
    model = {"ready": "Roomba j7+", "stuck": "S8 Pro Ultra", "bin_full": "RoboVac 11S"}[kind]
    state = {"status": "docked", "bin_level": b.rng.randint(10, 60), "rooms": [], "phase_ends_at": None,
             "error": None}
    battery = 100.0 if kind != "ready" else round(b.rng.uniform(38, 45), 1)  # charging on the dock
    if kind == "stuck":
        bunk = rooms.get("Bunk Room", room)
        state.update(status="stuck", error=f"wheel stuck near the {bunk.name.lower()} rug", bin_level=70)
        battery = round(b.rng.uniform(40, 60), 1)
    elif kind == "bin_full":
        state["bin_level"] = 100
    return b.device(home, room, "Robot Vacuum", "robot_vacuum", state, model=model, battery=battery)


def _climate(b: _Builder, home: Home, rooms: dict[str, Room], mode: str, target: float, heater_mode: str,
             heater_model: str | None = None) -> Device:
    rng = b.rng
    current = round(target + rng.uniform(-1.5, 1.5), 1) if mode != "off" else home.ambient_c
    thermo = b.device(home, rooms["Entryway"], "Thermostat", "thermostat", {
        "mode": mode, "target_c": target, "anchor_c": current, "anchor_at": iso(NOW), "humidity": rng.randint(40, 55)})
    where = next(rooms[r] for r in ("Basement", "Utility Room", "Laundry Room", "Bathroom", "Kitchen") if r in rooms)
    _maker, model, caps, _limits = b.model("water_heater", heater_model)
    heater_target = 49.0 if heater_mode == "vacation" else float(rng.choice([49, 50, 52, 55]))
    b.device(home, where, "Water Heater", "water_heater", {
        "mode": heater_mode if heater_mode != "auto" else ("heat_pump" if "heat_pump" in caps else "electric"),
        "target_c": heater_target, "anchor_c": heater_target - rng.choice([0.0, 0.0, 3.5]),
        "anchor_at": iso(NOW)}, model=model)
    return thermo


def _scene(b: _Builder, home: Home, name: str, items: list[tuple[Device, dict[str, Any]]]) -> Scene:
    sid = b.next("SCN")
    sc = Scene(sid, home.home_id, name, [{"device_id": d.device_id, "settings": st} for d, st in items],
               iso(NOW - timedelta(days=b.rng.randint(20, 200))))
    return b.s.scenes.put(sid, sc)


def _automation(b: _Builder, home: Home, name: str, time: str, days: tuple[str, ...], *, scene: Scene | None = None,
                device: Device | None = None, action: str | None = None, enabled: bool = True) -> None:
    aid = b.next("AUT")
    b.s.automations.put(aid, Automation(aid, home.home_id, name, time, list(days), enabled,
                                        iso(NOW - timedelta(days=b.rng.randint(10, 300))),
                                        scene_id=scene.scene_id if scene else None,
                                        device_id=device.device_id if device else None, device_action=action,
                                        last_run_at=None, last_result=None))


WEEKDAYS = ("mon", "tue", "wed", "thu", "fri")
EVERY_DAY = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def _light_setting(d: Device, on: bool, brightness: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"on": on}
    if "dimmable" in d.capabilities:
        out["brightness"] = brightness or d.state["brightness"]
    if "color" in d.capabilities:
        out["color"] = None
    if "tunable_white" in d.capabilities:
        out["color_temperature_k"] = 2700
    return out


def _history(b: _Builder) -> None:
    """A day of hourly readings and two days of events, oldest first."""
    s, rng = b.s, b.rng
    rows: list[tuple[Any, str, str, str, Any, str]] = []
    for d in s.devices.values():
        if d.type in ("thermostat", "climate_sensor"):
            room = s.rooms[d.room_id]
            base = dyn.room_temperature(s, room, NOW) if d.type == "climate_sensor" else d.state["anchor_c"]
            for h in range(24, 0, -1):
                when = NOW - timedelta(hours=h)
                swing = round(0.8 * ((when.hour - 14) / 10) ** 2 - 0.6, 1)
                rows.append((when, d.device_id, "reading", "temperature_c", round(base - swing, 1), "sensor"))
                if d.type == "climate_sensor":
                    rows.append((when, d.device_id, "reading", "humidity_percent",
                                 d.state["humidity"] + (when.hour + int(d.device_id[-2:])) % 5 - 2, "sensor"))
        elif d.type == "motion_sensor":
            for _ in range(rng.randint(2, 5)):
                rows.append((NOW - timedelta(minutes=rng.randint(30, 2880)), d.device_id, "event", "motion",
                             "detected", "sensor"))
        elif d.type == "contact_sensor":
            for _ in range(rng.randint(1, 3)):
                opened = NOW - timedelta(minutes=rng.randint(60, 2880))
                rows.append((opened, d.device_id, "event", "contact", "open", "sensor"))
                rows.append((opened + timedelta(minutes=rng.randint(1, 20)), d.device_id, "event", "contact",
                             "closed", "sensor"))
        elif d.type == "lock":
            for _ in range(rng.randint(1, 3)):
                code = b.seeds.choice(d.state["codes"])["name"]
                rows.append((NOW - timedelta(minutes=rng.randint(120, 2880)), d.device_id, "event", "lock",
                             f"unlocked with code '{code}'", "keypad"))
    rows.sort(key=lambda r: (r[0], r[1], r[3]))
    for when, did, kind, metric, value, source in rows:
        b.log(did, when, kind, metric, value, source)


def generate(s: IotState, seeds: Seeds) -> None:
    rng, fake = seeds.rng, seeds.fake
    b = _Builder(s, seeds)
    owner = fake.name()
    plans = {kind: (pattern, rooms) for kind, pattern, rooms in data.HOMES}

    # the house: lived in, cooling, one window open, a ready vacuum, an offline Wi-Fi plug
    house, hr = _home(b, "house", *plans["house"], owner, round(rng.uniform(25.5, 27.5), 1))
    lights = _lights(b, house, hr, {"Kitchen", "Living Room"})
    sec = _sensors_and_security(b, house, hr, open_window=True, full_codes=False)
    app = _appliances(b, house, hr)
    thermo = _climate(b, house, hr, "cool", float(rng.choice([21, 22, 23])), "auto", "ProTerra Hybrid")
    back = sec["contacts"][1]  # the back door was left ajar, its lock open
    back.state["open"], back.state["last_opened_at"] = True, iso(NOW - timedelta(minutes=rng.randint(5, 50)))
    vac = _vacuum(b, house, hr, "ready")
    offline = next(p for p in app["plugs"] if p.state["appliance"] == "TV")
    offline.online, offline.offline_reason = False, "no Wi-Fi connection"
    offline.offline_since = iso(NOW - timedelta(hours=rng.randint(3, 40)))
    offline.state["on"] = False
    movie = _scene(b, house, "Movie Night", [(lights["Living Room"], _light_setting(lights["Living Room"], True, 20)),
                                             *[(x, {"position": 0}) for x in app["blinds"][:1]],
                                             (offline, {"on": True})])
    night = _scene(b, house, "Good Night", [*[(d, _light_setting(d, False)) for d in lights.values()],
                                            *[(lk, {"locked": True}) for lk in sec["locks"]],
                                            (thermo, {"mode": "cool", "target_c": 21.0})])
    _automation(b, house, "Morning Lights", "06:45", WEEKDAYS, device=lights["Kitchen"], action="turn_on")
    _automation(b, house, "Vacuum While at Work", "10:00", WEEKDAYS, device=vac, action="start_cleaning")
    _automation(b, house, "Porch Light at Dusk", "20:30", EVERY_DAY, device=lights["porch"], action="turn_on")
    _automation(b, house, "Good Night", "23:00", EVERY_DAY, scene=night)
    _scene(b, house, "TV Time", [(offline, {"on": True})])
    del movie

    # the cabin: empty, alarm armed away, a jammed lock, a stuck vacuum, dying batteries
    cabin, cr = _home(b, "cabin", *plans["cabin"], owner, round(rng.uniform(19.0, 23.0), 1))
    cabin.security_mode, cabin.security_state = "away", "armed"
    cabin.armed_at = iso(NOW - timedelta(days=rng.randint(2, 12)))
    clights = _lights(b, cabin, cr, set())
    csec = _sensors_and_security(b, cabin, cr, open_window=False, full_codes=False)
    capp = _appliances(b, cabin, cr)
    _climate(b, cabin, cr, seeds.choice(["eco", "off"]), 20.0, "vacation")
    _vacuum(b, cabin, cr, "stuck")
    csec["locks"][-1].state["jammed"] = True
    csec["locks"][-1].state["locked"] = False
    dead = csec["motion"][0]
    dead.battery, dead.online, dead.offline_reason = 0.0, False, "battery depleted"
    dead.offline_since = iso(NOW - timedelta(days=rng.randint(1, 6)))
    dying = csec["contacts"][0]
    dying.battery = round(rng.uniform(0.4, 0.9), 2)  # ~2-4 days left
    for blind in capp["blinds"]:
        blind.state["position"] = 0
    arrival = _scene(b, cabin, "Arrival", [*[(d, _light_setting(d, True, 80)) for d in clights.values()],
                                           *[(x, {"position": 100}) for x in capp["blinds"]]])
    _automation(b, cabin, "Weekend Arrival", "17:00", ("fri",), scene=arrival, enabled=False)
    if capp["blinds"]:
        _automation(b, cabin, "Close Blinds at Night", "21:00", EVERY_DAY, device=capp["blinds"][0], action="close")

    # the apartment: thermostat off, vacuum bin full, privacy camera, full lock, everything closed
    apt, ar = _home(b, "apartment", *plans["apartment"], owner, round(rng.uniform(25.0, 28.0), 1))
    alights = _lights(b, apt, ar, set())
    asec = _sensors_and_security(b, apt, ar, open_window=False, full_codes=True)
    aapp = _appliances(b, apt, ar)
    _climate(b, apt, ar, "off", 22.0, "auto", "Signature Premier")
    _vacuum(b, apt, ar, "bin_full")
    coffee = next(p for p in aapp["plugs"] if p.state["appliance"] == "Coffee Maker")
    morning = _scene(b, apt, "Morning", [*[(x, {"position": 100}) for x in aapp["blinds"]],
                                         (alights["Kitchen"], _light_setting(alights["Kitchen"], True, 100)),
                                         (coffee, {"on": True})])
    _automation(b, apt, "Coffee Time", "07:00", WEEKDAYS, device=coffee, action="turn_on")
    _automation(b, apt, "Morning Routine", "07:15", WEEKDAYS, scene=morning)
    _automation(b, apt, "Lock Up at Midnight", "00:00", EVERY_DAY, device=asec["locks"][0], action="lock")
    del sec

    _history(b)
    s.counters.set(Counters({k: v + 1 for k, v in b.n.items()}))
