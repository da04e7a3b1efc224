"""Shared calendar logic: occurrence expansion over the state, busy time, room checks, access rules
and the JSON views tools return. Tools stay thin; every rule lives here once."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from servers.calendar.rules import (
    Rule,
    cached_zone,
    instant,
    occurrences,
    parse_instant,
    parse_when,
    stamp,
    stored_rule,
)
from servers.calendar.state import Attendee, CalendarState, Event, Room, User
from servers.kit import ToolError, now, require

HORIZON = timedelta(days=366)  # how far ahead a series is checked for room double-booking
MAX_EVENT_LENGTH = timedelta(hours=24)


def key(dt: datetime) -> str:
    """Canonical text of an occurrence's original start (what series exception lists store)."""
    return stamp(dt)


def ev_zone(ev: Event) -> ZoneInfo:
    return cached_zone(ev.timezone)


def rule_of(ev: Event) -> Rule | None:
    return stored_rule(ev.recurrence, ev.start, ev.timezone) if ev.recurrence else None


@dataclass(frozen=True)
class Occ:
    """One concrete occurrence: a single event, or one instance of a series."""

    event: Event
    start: datetime
    end: datetime
    original: datetime | None = None  # the series instance's original start

    def overlaps(self, start: datetime, end: datetime) -> bool:
        return self.start < end and start < self.end


def expand(ev: Event, a: datetime, b: datetime) -> list[Occ]:
    """Occurrences of ``ev`` overlapping [a, b), without cancelled or detached instances."""
    if ev.status != "confirmed":
        return []
    start, end = instant(ev.start), instant(ev.end)
    rule = rule_of(ev)
    if rule is None:
        return [Occ(ev, start, end)] if start < b and a < end else []
    skip = set(ev.cancelled_occurrences) | set(ev.modified_occurrences)
    out = []
    for os, oe in occurrences(start, end, ev_zone(ev), rule, b):
        if oe > a and os < b and key(os) not in skip:
            out.append(Occ(ev, os, oe, os))
    return out


def series_instances(ev: Event, horizon: datetime) -> list[tuple[datetime, datetime]]:
    """Every instance of a series up to ``horizon``, cancelled and detached ones included."""
    rule = rule_of(ev)
    if rule is None:
        return []
    return list(occurrences(instant(ev.start), instant(ev.end), ev_zone(ev), rule, horizon))


def find_occurrence(ev: Event, text: str, field: str = "occurrence_start") -> datetime:
    """The original start of the series instance the user means (a date-time, or a date when the
    series has one instance that day), refusing cancelled and detached instances."""
    if ev.recurrence is None:
        raise ToolError(f"event {ev.event_id} ('{ev.title}') is not recurring; omit {field}", field=field)
    tz = ev_zone(ev)
    raw = text.strip()
    if len(raw) == 10:
        try:
            lo = datetime.combine(date.fromisoformat(raw), time(0), tz)
        except ValueError:
            raise ToolError(f"invalid {field} '{text}': expected YYYY-MM-DD or a date-time", field=field) from None
        hi = lo + timedelta(days=1)
    else:
        lo = parse_instant(raw, field, tz)
        hi = lo + timedelta(seconds=1)
    found = [os for os, _ in series_instances(ev, hi) if lo <= os < hi]
    if not found:
        rule = rule_of(ev)
        assert rule is not None
        raise ToolError(f"{field} {text}: series {ev.event_id} ('{ev.title}') has no occurrence then; it runs "
                        f"{rule.describe()} from {stamp(instant(ev.start), tz)}", field=field, code="not_found")
    orig = found[0]
    if key(orig) in ev.cancelled_occurrences:
        raise ToolError(f"{field} {stamp(orig, tz)}: that occurrence of {ev.event_id} is already cancelled", field=field,
                        code="illegal_state")
    detached = ev.modified_occurrences.get(key(orig))
    if detached is not None:
        raise ToolError(f"{field} {stamp(orig, tz)}: that occurrence of {ev.event_id} was edited separately and is now "
                        f"event {detached}; use event_id {detached} without {field}", field=field,
                        code="illegal_state")
    return orig


def next_occurrence(ev: Event, after: datetime) -> Occ | None:
    """The first live occurrence starting after ``after`` (within a year)."""
    starting = [o for o in expand(ev, after, after + HORIZON) if o.start > after]
    return starting[0] if starting else None


def last_occurrence(ev: Event, before: datetime) -> Occ | None:
    """The latest live occurrence that started before ``before`` (looking back a year)."""
    started = [o for o in expand(ev, before - HORIZON, before) if o.start < before]
    return started[-1] if started else None


# ---------------------------------------------------------------- people and access
def require_user(s: CalendarState, user_id: str, field: str = "user_id") -> User:
    return require(s.users, user_id, field)


def require_event(s: CalendarState, event_id: str, field: str = "event_id") -> Event:
    return require(s.events, event_id, field)


def user_by_email(s: CalendarState, email: str, field: str) -> User:
    needle = email.strip().lower()
    for user in s.users.values():
        if user.email.lower() == needle:
            return user
    raise ToolError(f"no one with email '{email}' (in {field}) is in the company directory", field=field,
                    code="not_found")


def people_by_email(s: CalendarState, emails: list[str], field: str) -> list[User]:
    """Directory entries for a non-empty list of emails (duplicates collapse, order kept)."""
    if not emails:
        raise ToolError(f"{field} is empty: give at least one work email", field=field)
    found = {u.user_id: u for u in (user_by_email(s, e, field) for e in emails)}
    return list(found.values())


def role(ev: Event, user_id: str) -> str | None:
    """``organizer``, ``invitee`` or None (not part of the event)."""
    if ev.organizer_id == user_id:
        return "organizer"
    return "invitee" if attendee(ev, user_id) is not None else None


def attendee(ev: Event, user_id: str) -> Attendee | None:
    return next((a for a in ev.attendees if a.user_id == user_id), None)


def require_live(ev: Event, field: str = "event_id") -> None:
    if ev.status == "cancelled":
        raise ToolError(f"event {ev.event_id} ('{ev.title}') is cancelled", field=field, code="illegal_state")


def require_organizer(s: CalendarState, ev: Event, user_id: str) -> User:
    user = require_user(s, user_id)
    if ev.organizer_id != user_id:
        org = s.users[ev.organizer_id]
        what = "an invitee" if attendee(ev, user_id) else "not part of it"
        raise ToolError(f"user_id {user_id} ({user.name}) is {what}: only the organizer {org.name} "
                        f"({org.user_id}) may change event {ev.event_id}", field="user_id", code="forbidden")
    return user


def require_upcoming(ev: Event, at: datetime, field: str = "event_id") -> None:
    """Past events are history: they cannot be moved, cancelled, RSVP'd or re-invited."""
    if ev.recurrence is None:
        start = instant(ev.start)
        if start <= at:
            state = "ended" if instant(ev.end) <= at else "already started"
            raise ToolError(f"event {ev.event_id} ('{ev.title}') {state} (it began {stamp(start, ev_zone(ev))}); "
                            "past events cannot be changed", field=field, code="past_event")
    elif next_occurrence(ev, at) is None:
        raise ToolError(f"series {ev.event_id} ('{ev.title}') has no upcoming occurrences; past events cannot "
                        "be changed", field=field, code="past_event")


def participants(ev: Event) -> list[str]:
    return [ev.organizer_id, *(a.user_id for a in ev.attendees)]


def blocks(ev: Event, user_id: str) -> bool:
    """Whether ``ev`` makes ``user_id`` busy (declined invitations and 'free' events do not)."""
    if ev.status != "confirmed" or ev.show_as != "busy":
        return False
    if ev.organizer_id == user_id:
        return True
    a = attendee(ev, user_id)
    return a is not None and a.response != "declined"


def busy(s: CalendarState, user_id: str, a: datetime, b: datetime,
         exclude: Iterable[str] = ()) -> list[Occ]:
    skip = set(exclude)
    out = [o for ev in s.events.values() if ev.event_id not in skip and blocks(ev, user_id)
           for o in expand(ev, a, b)]
    return sorted(out, key=lambda o: (o.start, o.event.event_id))


def room_bookings(s: CalendarState, room_id: str, a: datetime, b: datetime,
                  exclude: Iterable[str] = ()) -> list[Occ]:
    skip = set(exclude)
    out = [o for ev in s.events.values() if ev.room_id == room_id and ev.event_id not in skip
           for o in expand(ev, a, b)]
    return sorted(out, key=lambda o: (o.start, o.event.event_id))


def merge(intervals: Iterable[tuple[datetime, datetime]]) -> list[tuple[datetime, datetime]]:
    out: list[tuple[datetime, datetime]] = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def planned(start: datetime, end: datetime, tz: ZoneInfo, rule: Rule | None, at: datetime,
            skip: Iterable[str] = ()) -> list[tuple[datetime, datetime]]:
    """The not-yet-finished occurrences a new or edited event would occupy (a year ahead at most)."""
    if rule is None:
        return [(start, end)]
    skipped = set(skip)
    return [(os, oe) for os, oe in occurrences(start, end, tz, rule, at + HORIZON)
            if oe > at and key(os) not in skipped]


def check_room(s: CalendarState, room_id: str, slots: list[tuple[datetime, datetime]], headcount: int,
               exclude: Iterable[str] = (), field: str = "room_id") -> Room:
    """The room, or a ToolError if it is too small or already booked during one of ``slots``."""
    room = require(s.rooms, room_id, field)
    if headcount > room.capacity:
        raise ToolError(f"{field} {room_id} ({room.name}) seats {room.capacity}, but the event has {headcount} "
                        "people", field=field, code="capacity")
    if not slots:
        return room
    booked = room_bookings(s, room_id, min(a for a, _ in slots), max(b for _, b in slots), exclude)
    for a, b in slots:
        for o in booked:
            if o.overlaps(a, b):
                tz = ev_zone(o.event)
                raise ToolError(f"{field} {room_id} ({room.name}) is already booked {stamp(o.start, tz)} to "
                                f"{stamp(o.end, tz)} by '{o.event.title}' ({o.event.event_id})",
                                field=field, code="conflict")
    return room


def check_span(start: datetime, end: datetime, at: datetime, *, start_field: str = "start",
               end_field: str = "end") -> None:
    if end <= start:
        raise ToolError(f"{end_field} {stamp(end)} must be after {start_field} {stamp(start)}", field=end_field)
    if end - start > MAX_EVENT_LENGTH:
        raise ToolError(f"{end_field} is {(end - start) / timedelta(hours=1):g} hours after {start_field}; an event "
                        "may last at most 24 hours (use a recurrence rule for repeated blocks)", field=end_field)
    if start < at:
        raise ToolError(f"{start_field} {stamp(start)} is in the past (now is {stamp(at)})", field=start_field,
                        code="past_event")


def conflicts_for(s: CalendarState, user_ids: Iterable[str], slots: list[tuple[datetime, datetime]],
                  exclude: Iterable[str] = (), limit: int = 10) -> list[dict]:
    """Busy time of the given people that overlaps the first few ``slots`` (warnings, not errors)."""
    slots = slots[:10]
    if not slots:
        return []
    a, b = min(x for x, _ in slots), max(y for _, y in slots)
    out: list[dict] = []
    for uid in dict.fromkeys(user_ids):
        user = s.users[uid]
        for o in busy(s, uid, a, b, exclude):
            if any(o.overlaps(x, y) for x, y in slots):
                tz = cached_zone(user.timezone)
                out.append({"email": user.email, "event_id": o.event.event_id, "busy_start": stamp(o.start, tz),
                            "busy_end": stamp(o.end, tz)})
                if len(out) >= limit:
                    return out
    return out


def window(s: CalendarState, time_min: str, time_max: str, tz: ZoneInfo, max_days: int) -> tuple[datetime, datetime]:
    """A [time_min, time_max) query range (bare dates are whole days in ``tz``)."""
    a = parse_when(time_min, "time_min", tz)
    b = parse_when(time_max, "time_max", tz, end_of_day=True)
    if b <= a:
        raise ToolError(f"time_max {time_max} must be after time_min {time_min}", field="time_max")
    if b - a > timedelta(days=max_days):
        raise ToolError(f"time_max may be at most {max_days} days after time_min", field="time_max")
    return a, b


# ---------------------------------------------------------------- views
def occurrence_view(s: CalendarState, o: Occ, user_id: str, tz: ZoneInfo) -> dict:
    ev = o.event
    me = attendee(ev, user_id)
    out = {
        "event_id": ev.event_id,
        "title": ev.title,
        "start": stamp(o.start, tz),
        "end": stamp(o.end, tz),
        "location": ev.location,
        "room_id": ev.room_id,
        "calendar_id": ev.calendar_id,
        "organizer": s.users[ev.organizer_id].email,
        "my_role": role(ev, user_id),
        "my_response": "organizer" if ev.organizer_id == user_id else (me.response if me else None),
        "show_as": ev.show_as,
        "attendee_count": len(ev.attendees) + 1,
        "conference_url": ev.conference_url,
    }
    if o.original is not None:
        out["occurrence_start"] = stamp(o.original, tz)
        out["recurrence"] = ev.recurrence
    if ev.recurring_event_id:
        out["recurring_event_id"] = ev.recurring_event_id
    return out


def event_view(s: CalendarState, ev: Event, tz: ZoneInfo | None = None, *, upcoming: int = 0) -> dict:
    """The full record, times shown on ``tz`` (the event's own zone by default)."""
    tz = tz or ev_zone(ev)
    rule = rule_of(ev)
    org = s.users[ev.organizer_id]
    counts: dict[str, int] = {}
    for a in ev.attendees:
        counts[a.response] = counts.get(a.response, 0) + 1
    out = {
        "event_id": ev.event_id,
        "calendar_id": ev.calendar_id,
        "title": ev.title,
        "status": ev.status,
        "start": stamp(instant(ev.start), tz),
        "end": stamp(instant(ev.end), tz),
        "timezone": ev.timezone,
        "location": ev.location,
        "description": ev.description,
        "room_id": ev.room_id,
        "conference_url": ev.conference_url,
        "show_as": ev.show_as,
        "organizer": {"user_id": org.user_id, "name": org.name, "email": org.email},
        "attendees": [{"user_id": a.user_id, "name": a.name, "email": a.email, "response": a.response,
                       **({"comment": a.comment} if a.comment else {})} for a in ev.attendees],
        "response_counts": counts,
        "reminders": {uid: [{"minutes_before": r.minutes_before, "method": r.method} for r in rs]
                      for uid, rs in ev.reminders.items()},
        "recurrence": ev.recurrence,
    }
    if rule is not None:
        out["recurrence_description"] = rule.describe()
        out["cancelled_occurrences"] = [stamp(instant(k), tz) for k in ev.cancelled_occurrences]
        out["modified_occurrences"] = {stamp(instant(k), tz): v for k, v in ev.modified_occurrences.items()}
    if ev.recurring_event_id:
        out["recurring_event_id"] = ev.recurring_event_id
        out["original_start"] = stamp(instant(ev.original_start or ev.start), tz)
    if upcoming:
        ref = now(s)
        out["upcoming_occurrences"] = [
            {"start": stamp(o.start, tz), "end": stamp(o.end, tz)}
            for o in expand(ev, ref, ref + HORIZON) if o.start > ref][:upcoming]
    return out

