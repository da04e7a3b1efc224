"""The seeded calendar world.

A company directory of two dozen people spread over five timezones, their primary (and sometimes
personal or team) calendars, a handful of bookable rooms, recurring series (stand-ups, syncs,
bi-weekly 1:1s, monthly reviews, some with cancelled or moved occurrences) and one-off meetings and
personal appointments from a month before the reference date to six weeks after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from servers.calendar.core import check_room, expand, planned
from servers.calendar.rules import cached_zone, parse_rule, stamp
from servers.calendar.state import (
    Attendee,
    Calendar,
    CalendarState,
    Event,
    Reminder,
    Room,
    User,
)
from servers.kit import Counters, Seeds, ToolError
from servers.kit.fake import REFERENCE_DATE

PROJECTS = ("Atlas", "Beacon", "Comet", "Nimbus", "Orion", "Phoenix", "Quartz", "Zephyr", "Helix", "Lumen")
DEPARTMENTS: dict[str, tuple[str, ...]] = {
    "Engineering": ("Software Engineer", "Senior Engineer", "Engineering Manager", "SRE"),
    "Design": ("Product Designer", "UX Researcher", "Design Lead"),
    "Product": ("Product Manager", "Group PM", "Product Analyst"),
    "Sales": ("Account Executive", "Sales Engineer", "Sales Director"),
    "Marketing": ("Content Strategist", "Growth Marketer", "Marketing Manager"),
    "Finance": ("Financial Analyst", "Controller", "FP&A Lead"),
    "People Ops": ("Recruiter", "HR Business Partner", "People Ops Lead"),
}
TIMEZONES = ("America/New_York",) * 6 + ("America/Chicago",) * 3 + ("America/Los_Angeles",) * 4 + (
    "Europe/London",) * 2 + ("Europe/Berlin",) * 2
ROOM_NAMES = ("Aurora", "Birch", "Cedar", "Delta", "Everest", "Fjord", "Granite", "Harbor", "Juniper",
              "Kestrel", "Lagoon", "Meridian")
EQUIPMENT = ("projector", "video_conference", "whiteboard", "speakerphone", "tv_screen")
COLORS = ("blue", "green", "purple", "orange", "red", "teal", "yellow", "gray")
WORK_TITLES = ("Design review: {p}", "{c} demo", "Interview: {n}", "Budget review", "Roadmap planning: {p}",
               "Customer call with {c}", "Sprint retro", "Vendor negotiation with {c}", "Offsite planning",
               "Hiring debrief", "{p} launch readiness", "Architecture deep dive: {p}", "Quarterly OKR check-in")
PERSONAL_TITLES = ("Dentist appointment", "Gym session", "Pick up kids", "Doctor's appointment", "Car service",
                   "Lunch with {f}", "Parent-teacher conference", "Haircut", "Yoga class")
VIRTUAL = ("Zoom", "Google Meet", "Microsoft Teams")
DECLINE_NOTES = ("Conflict with another meeting", "Out of office that day", "On PTO", "Can't make it, sorry")


def generate(s: CalendarState, seeds: Seeds) -> None:
    """Directory, calendars, rooms, recurring series and one-off events (deterministic per seed)."""
    s.counters.set(Counters())
    users = _people(s, seeds)
    calendars = _calendars(s, seeds, users)
    for r, name in enumerate(seeds.sample(ROOM_NAMES, 8), 1):
        rid = seeds.ident("RM", r)
        s.rooms.put(rid, Room(rid, name, seeds.choice(["HQ", "HQ", "Annex"]), seeds.rng.randint(1, 5),
                              seeds.choice([4, 6, 8, 8, 10, 12, 16, 20]),
                              sorted(seeds.sample(EQUIPMENT, seeds.rng.randint(1, 4)))))
    gen = _EventMaker(s, seeds, users)
    gen.series(calendars)
    for user in users:
        own = [c for c in calendars if c.owner_id == user.user_id]
        for _ in range(seeds.rng.randint(3, 6)):
            gen.single(user, own)


def _people(s: CalendarState, seeds: Seeds) -> list[User]:
    fake, company = seeds.fake, seeds.fake.domain_word() + ".example.com"
    seen: set[str] = set()
    users = []
    for u in range(1, 25):
        first, last = fake.first_name(), fake.last_name()
        local = f"{first}.{last}".lower().replace("'", "")
        email = f"{local}@{company}"
        k = 2
        while email in seen:
            email, k = f"{local}{k}@{company}", k + 1
        seen.add(email)
        dept = seeds.choice(list(DEPARTMENTS))
        uid = seeds.ident("USR", u)
        users.append(s.users.put(uid, User(uid, f"{first} {last}", email, seeds.choice(TIMEZONES), dept,
                                           seeds.choice(DEPARTMENTS[dept]))))
    return users


def _calendars(s: CalendarState, seeds: Seeds, users: list[User]) -> list[Calendar]:
    out: list[Calendar] = []

    def add(owner: User, name: str, primary: bool) -> None:
        cid = seeds.ident("CAL", len(out) + 1)
        out.append(s.calendars.put(cid, Calendar(cid, owner.user_id, name, owner.timezone, primary,
                                                 seeds.choice(COLORS))))

    for user in users:
        add(user, user.name, True)
        if seeds.rng.random() < 0.4:
            add(user, "Personal", False)
    for dept in seeds.sample(sorted({u.department for u in users}), 3):
        add(seeds.choice([u for u in users if u.department == dept]), f"{dept} Team", False)
    return out


class _EventMaker:
    """Builds events with consistent responses, reminders and conflict-free room bookings."""

    def __init__(self, s: CalendarState, seeds: Seeds, users: list[User]) -> None:
        self.s, self.seeds, self.rng, self.users = s, seeds, seeds.rng, users
        self.now = REFERENCE_DATE
        self.n = 0
        fake = seeds.fake  # small pools: Faker is the slow part of generation
        self.companies = [fake.company() for _ in range(10)]
        self.candidates = [fake.name() for _ in range(8)]
        self.blurbs = [fake.sentence(nb_words=10) for _ in range(16)]
        self.addresses = [f"{fake.street_address()}, {fake.city()}" for _ in range(6)]

    def _start(self, tz: ZoneInfo, day_offset: int, lo: int, hi: int, *, weekday: bool = True) -> datetime:
        day = self.now.astimezone(tz).date() + timedelta(days=day_offset)
        if weekday and day.weekday() >= 5:
            day += timedelta(days=7 - day.weekday())
        minutes = self.rng.randrange(lo * 60, hi * 60, 15)
        return datetime.combine(day, time(minutes // 60, minutes % 60), tz)

    def _invitees(self, organizer: User, k: int) -> list[User]:
        team = [u for u in self.users if u.user_id != organizer.user_id]
        same = [u for u in team if u.department == organizer.department]
        pool = same + self.seeds.sample([u for u in team if u not in same], min(len(team) - len(same), 2 * k))
        return self.seeds.sample(pool, min(k, len(pool)))

    def _response(self, past: bool) -> tuple[str, str | None]:
        roll = self.rng.random()
        if past:
            resp = "accepted" if roll < 0.75 else "declined" if roll < 0.85 else "tentative" if roll < 0.9 \
                else "needs_action"
        else:
            resp = "needs_action" if roll < 0.4 else "accepted" if roll < 0.78 else "tentative" if roll < 0.88 \
                else "declined"
        note = self.seeds.choice(DECLINE_NOTES) if resp == "declined" and self.rng.random() < 0.5 else None
        return resp, note

    def _room_for(self, slots: list[tuple[datetime, datetime]], headcount: int) -> str | None:
        rooms = [r for r in self.s.rooms.values() if r.capacity >= headcount]
        for room in self.seeds.sample(rooms, min(3, len(rooms))):
            try:
                check_room(self.s, room.room_id, slots, headcount)
            except ToolError:
                continue
            return room.room_id
        return None

    def add(self, organizer: User, calendar_id: str, title: str, start: datetime, minutes: int, *,
            invitees: Sequence[User] = (), rule: str | None = None, personal: bool = False) -> Event:
        self.n += 1
        eid = self.seeds.ident("EVT", self.n)
        tz = start.tzinfo
        assert isinstance(tz, ZoneInfo), "generator times carry their IANA zone"
        end = start + timedelta(minutes=minutes)
        parsed = parse_rule(rule, start, tz) if rule else None
        past = end <= self.now if parsed is None else start <= self.now - timedelta(days=7)
        room_id = None
        if invitees and not personal and self.rng.random() < 0.55:
            room_id = self._room_for(planned(start, end, tz, parsed, self.now), len(invitees) + 1)
        if room_id is not None:
            room = self.s.rooms[room_id]
            location = f"{room.name}, {room.building} floor {room.floor}"
        elif personal:
            location = self.seeds.choice(["", *self.addresses])
        else:
            location = self.seeds.choice(VIRTUAL)
        attendees = []
        reminders = {organizer.user_id: [Reminder(10, "popup")]}
        for u in invitees:
            resp, note = self._response(past)
            attendees.append(Attendee(u.user_id, u.email, u.name, resp, note))
            if resp == "accepted" and self.rng.random() < 0.5:
                reminders[u.user_id] = [Reminder(self.seeds.choice([5, 10, 15, 30]), "popup")]
        created = stamp(min(start, self.now) - timedelta(days=self.rng.randint(1, 20)))
        ev = Event(eid, calendar_id, organizer.user_id, title, stamp(start), stamp(end), tz.key, location,
                   self.seeds.choice(self.blurbs) if not personal or self.rng.random() < 0.3 else "",
                   room_id, "free" if personal and self.rng.random() < 0.15 else "busy",
                   "cancelled" if parsed is None and self.rng.random() < 0.06 else "confirmed",
                   attendees, reminders, parsed.text() if parsed else None, created_at=created, updated_at=created)
        return self.s.events.put(eid, ev)

    def single(self, user: User, own: list[Calendar]) -> None:
        personal_cal = next((c for c in own if c.name == "Personal"), None)
        primary = next(c for c in own if c.is_primary)
        tz = cached_zone(user.timezone)
        p, c = self.seeds.choice(PROJECTS), self.seeds.choice(self.companies)
        if self.rng.random() < 0.25:
            title = self.seeds.choice(PERSONAL_TITLES).format(f=self.seeds.choice(self.users).name.split()[0])
            start = self._start(tz, self.rng.randint(-25, 30), 8, 19, weekday=False)
            cal = personal_cal or primary
            self.add(user, cal.calendar_id, title, start, self.seeds.choice([30, 45, 60, 90]), personal=True)
            return
        title = self.seeds.choice(WORK_TITLES).format(p=p, c=c, n=self.seeds.choice(self.candidates))
        start = self._start(tz, self.rng.randint(-25, 30), 9, 17)
        self.add(user, primary.calendar_id, title, start, self.seeds.choice([30, 30, 45, 60, 60, 90]),
                 invitees=self._invitees(user, self.rng.randint(1, 5)))

    def series(self, calendars: list[Calendar]) -> None:
        """Stand-ups, weekly syncs, bi-weekly 1:1s and monthly reviews, a few with exceptions."""
        kinds = ["standup", "standup", "sync", "sync", "sync", "one_on_one", "one_on_one", "one_on_one",
                 "review", "review", "sync", "one_on_one"]
        for i, kind in enumerate(kinds):
            org = self.seeds.choice(self.users)
            team_cal = next((c for c in calendars if c.owner_id == org.user_id and c.name.endswith("Team")), None)
            cal = team_cal or next(c for c in calendars if c.owner_id == org.user_id and c.is_primary)
            tz = cached_zone(org.timezone)
            p = self.seeds.choice(PROJECTS)
            if kind == "standup":
                start = self._start(tz, -self.rng.randint(10, 45), 9, 10)
                ev = self.add(org, cal.calendar_id, f"{org.department} stand-up", start, 15,
                              invitees=self._invitees(org, self.rng.randint(3, 6)), rule="FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR")
            elif kind == "sync":
                start = self._start(tz, self.rng.randint(-35, 3), 10, 16)
                rule = self.seeds.choice(["FREQ=WEEKLY", f"FREQ=WEEKLY;COUNT={self.rng.randint(8, 16)}"])
                ev = self.add(org, cal.calendar_id, f"{p} weekly sync", start, self.seeds.choice([30, 45, 60]),
                              invitees=self._invitees(org, self.rng.randint(2, 5)), rule=rule)
            elif kind == "one_on_one":
                other = self._invitees(org, 1)
                start = self._start(tz, self.rng.randint(-30, 5), 9, 17)
                primary = next(c for c in calendars if c.owner_id == org.user_id and c.is_primary)
                ev = self.add(org, primary.calendar_id, f"1:1 {org.name.split()[0]} / {other[0].name.split()[0]}",
                              start, 30, invitees=other, rule="FREQ=WEEKLY;INTERVAL=2")
            else:
                start = self._start(tz, self.rng.randint(-60, -1), 10, 15)
                ev = self.add(org, cal.calendar_id, f"Monthly business review: {org.department}", start, 60,
                              invitees=self._invitees(org, self.rng.randint(3, 6)), rule="FREQ=MONTHLY;COUNT=6")
            if i % 4 == 1:
                self._cancel_one(ev)
            elif i % 4 == 3:
                self._detach_one(ev)

    def _future_instance(self, ev: Event) -> tuple[datetime, datetime] | None:
        """The second upcoming occurrence (or the only one), so the next one stays untouched."""
        upcoming = [o for o in expand(ev, self.now, self.now + timedelta(days=60)) if o.start > self.now]
        if not upcoming:
            return None
        pick = upcoming[min(1, len(upcoming) - 1)]
        return pick.start, pick.end

    def _cancel_one(self, ev: Event) -> None:
        inst = self._future_instance(ev)
        if inst is not None:
            self.s.events.edit(ev.event_id).cancelled_occurrences.append(stamp(inst[0]))

    def _detach_one(self, ev: Event) -> None:
        """Move one upcoming occurrence an hour later, as a detached exception event."""
        inst = self._future_instance(ev)
        if inst is None:
            return
        self.n += 1
        eid = self.seeds.ident("EVT", self.n)
        start, end = inst[0] + timedelta(hours=1), inst[1] + timedelta(hours=1)
        series = self.s.events.edit(ev.event_id)
        room_id = series.room_id
        if room_id is not None:
            try:
                check_room(self.s, room_id, [(start, end)], len(series.attendees) + 1, exclude=[ev.event_id])
            except ToolError:
                room_id = None
        exc = Event(eid, series.calendar_id, series.organizer_id, series.title, stamp(start), stamp(end),
                    series.timezone, series.location, series.description, room_id, series.show_as, "confirmed",
                    [Attendee(a.user_id, a.email, a.name, a.response, a.comment) for a in series.attendees],
                    {k: list(v) for k, v in series.reminders.items()}, recurring_event_id=ev.event_id,
                    original_start=stamp(inst[0]), created_at=series.created_at, updated_at=series.updated_at)
        series.modified_occurrences[stamp(inst[0])] = eid
        self.s.events.put(eid, exc)
