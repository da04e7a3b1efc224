"""Hidden discovery tools: what synthesis enumerates to ground queries in real people and events."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.calendar.core import ev_zone, last_occurrence, next_occurrence
from servers.calendar.rules import instant, stamp
from servers.calendar.state import CalendarState
from servers.kit import discovery, now, value_counts


@discovery(produces=("user_id", "email", "calendar_id"))
def calendar_list_users(s: CalendarState, department: str | None = None) -> list:
    """Everyone in the directory with their calendars (ids, names, timezones).

    Args:
        department: Only people in this department, e.g. Engineering.
    """
    cals: dict[str, list[dict]] = {}
    for c in s.calendars.values():
        cals.setdefault(c.owner_id, []).append({"calendar_id": c.calendar_id, "name": c.name,
                                                "is_primary": c.is_primary})
    return [{"user_id": u.user_id, "name": u.name, "email": u.email, "department": u.department,
             "title": u.title, "timezone": u.timezone, "calendars": cals.get(u.user_id, [])}
            for u in s.users.values() if department is None or u.department == department]


@discovery(produces=("event_id", "room_id"))
def calendar_list_all_events(s: CalendarState, organizer_id: str | None = None,
                             status: Literal["confirmed", "cancelled"] | None = None,
                             recurring: bool | None = None, upcoming_only: bool = False,
                             limit: Annotated[int, Field(ge=1, le=1000)] = 500) -> list:
    """Every event (series once) with organizer, invitees and RSVPs, recurrence and next occurrence.

    Args:
        organizer_id: Only events organized by this user.
        status: Only events with this status.
        recurring: True for series only, False for one-off events only.
        upcoming_only: Only events with an occurrence after the current time.
        limit: Maximum number of events.
    """
    at = now(s)
    out = []
    for ev in s.events.values():
        if organizer_id is not None and ev.organizer_id != organizer_id:
            continue
        if (status is not None and ev.status != status) or (
                recurring is not None and (ev.recurrence is not None) != recurring):
            continue
        nxt = next_occurrence(ev, at)
        if upcoming_only and nxt is None:
            continue
        last = last_occurrence(ev, at)
        tz = ev_zone(ev)
        org = s.users[ev.organizer_id]
        out.append({
            "event_id": ev.event_id, "title": ev.title, "calendar_id": ev.calendar_id, "status": ev.status,
            "organizer_id": org.user_id, "organizer_email": org.email, "start": stamp(instant(ev.start), tz),
            "timezone": ev.timezone, "location": ev.location, "room_id": ev.room_id, "show_as": ev.show_as,
            "recurrence": ev.recurrence, "recurring_event_id": ev.recurring_event_id,
            "attendees": [{"user_id": a.user_id, "email": a.email, "response": a.response} for a in ev.attendees],
            "next_occurrence": stamp(nxt.start, tz) if nxt else None,
            "last_occurrence": stamp(last.start, tz) if last else None,
        })
        if len(out) >= limit:
            break
    return out


@discovery
def calendar_get_unique_values(s: CalendarState, field: Literal[
        "department", "timezone", "building", "equipment", "response", "event_status", "location",
        "calendar_name"]) -> list:
    """Distinct values of a categorical field with their counts.

    Args:
        field: Which field to enumerate.
    """
    values: list[str] = []
    if field in ("department", "timezone"):
        values = [getattr(u, field) for u in s.users.values()]
    elif field == "building":
        values = [r.building for r in s.rooms.values()]
    elif field == "equipment":
        values = [e for r in s.rooms.values() for e in r.equipment]
    elif field == "response":
        values = [a.response for ev in s.events.values() for a in ev.attendees]
    elif field == "event_status":
        values = [ev.status for ev in s.events.values()]
    elif field == "location":
        values = [ev.location for ev in s.events.values() if ev.location]
    else:
        values = [c.name for c in s.calendars.values() if not c.is_primary]
    return value_counts(values)
