"""Read-only calendar tools: the clock, the directory, agendas, search, free/busy, slots and rooms."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import Annotated, Literal
from zoneinfo import ZoneInfo

from pydantic import Field

from servers.calendar.core import (
    busy,
    ev_zone,
    event_view,
    expand,
    last_occurrence,
    merge,
    next_occurrence,
    occurrence_view,
    people_by_email,
    require_event,
    require_user,
    role,
    room_bookings,
    window,
)
from servers.calendar.rules import cached_zone, parse_instant, stamp, zone
from servers.calendar.state import CalendarState
from servers.kit import EmailAddress, ToolError, now, parse_date, require, tool

EmailList = Annotated[list[EmailAddress], Field(max_length=20)]
Equipment = Literal["projector", "video_conference", "whiteboard", "speakerphone", "tv_screen"]
MAX_AGENDA_DAYS = 92
MAX_FREEBUSY_DAYS = 31
MAX_SLOT_SEARCH_DAYS = 14
SLOT_STEP = timedelta(minutes=30)


def _display_zone(s: CalendarState, timezone: str | None, user_id: str | None) -> ZoneInfo:
    if timezone is not None:
        return zone(timezone, "timezone")
    if user_id is not None:
        return cached_zone(require_user(s, user_id).timezone)
    return cached_zone("UTC")


@tool(consumes=("user_id",), read_only=True)
def get_calendar_current_time(s: CalendarState, timezone: str | None = None, user_id: str | None = None) -> dict:
    """Get the calendar's current date and time plus the dates of today, tomorrow, this week and next week.

    Use it to turn "today", "tomorrow" or "next week" into concrete dates before querying events.

    Args:
        timezone: IANA timezone to express the local time in, e.g. America/New_York. Defaults to the
            timezone of user_id, else UTC.
        user_id: Whose local time to use when timezone is omitted, e.g. USR-0001.
    """
    tz = _display_zone(s, timezone, user_id)
    local = now(s).astimezone(tz)
    today = local.date()
    monday = today - timedelta(days=today.weekday())
    return {
        "now_utc": stamp(now(s)),
        "timezone": str(tz),
        "now_local": stamp(local, tz),
        "today": today.isoformat(),
        "weekday": local.strftime("%A"),
        "tomorrow": (today + timedelta(days=1)).isoformat(),
        "this_week": {"start": monday.isoformat(), "end": (monday + timedelta(days=6)).isoformat()},
        "next_week": {"start": (monday + timedelta(days=7)).isoformat(),
                      "end": (monday + timedelta(days=13)).isoformat()},
    }


@tool(produces=("user_id", "email"), read_only=True)
def search_calendar_users(s: CalendarState, query: Annotated[str, Field(min_length=1, max_length=100)],
                          limit: Annotated[int, Field(ge=1, le=50)] = 10) -> list:
    """Look people up in the company directory by (part of) their name, email or department.

    Args:
        query: Case-insensitive text to match, e.g. "garcia" or "maria.g".
        limit: Maximum number of people to return.
    """
    needle = query.strip().lower()
    hits = [u for u in s.users.values()
            if needle in u.name.lower() or needle in u.email.lower() or needle == u.department.lower()]
    return [{"user_id": u.user_id, "name": u.name, "email": u.email, "department": u.department,
             "title": u.title, "timezone": u.timezone} for u in hits[:limit]]


@tool(consumes=("user_id",), produces=("calendar_id",), read_only=True)
def list_calendars(s: CalendarState, user_id: str) -> list:
    """List the calendars a person owns (primary, personal, team) with their timezone and upcoming load.

    Args:
        user_id: The calendar owner's id, e.g. USR-0004.
    """
    require_user(s, user_id)
    at = now(s)
    out = []
    for cal in s.calendars.values():
        if cal.owner_id != user_id:
            continue
        upcoming = sum(1 for ev in s.events.values() if ev.calendar_id == cal.calendar_id
                       and next_occurrence(ev, at) is not None)
        out.append({"calendar_id": cal.calendar_id, "name": cal.name, "timezone": cal.timezone,
                    "is_primary": cal.is_primary, "color": cal.color, "upcoming_events": upcoming})
    return out


@tool(consumes=("user_id", "calendar_id"), produces=("event_id", "occurrence_start"), read_only=True)
def list_calendar_events(s: CalendarState, user_id: str, time_min: str, time_max: str,
                         calendar_id: str | None = None, include_declined: bool = False,
                         timezone: str | None = None) -> dict:
    """List a person's agenda between two times, with recurring series expanded into occurrences.

    Covers events the person organizes and invitations they have not declined. Each occurrence of a
    recurring series carries its occurrence_start, which update/cancel tools accept.

    Args:
        user_id: Whose agenda, e.g. USR-0002.
        time_min: Start of the range: a date (YYYY-MM-DD, start of that day) or a date-time; times without
            an offset are read in the display timezone.
        time_max: End of the range: a date (the whole day is included) or a date-time. At most 92 days
            after time_min.
        calendar_id: Only events on this calendar of the person (omit for all their calendars and
            invitations).
        include_declined: Also list invitations the person declined.
        timezone: IANA timezone to read and show times in; defaults to the person's timezone.
    """
    user = require_user(s, user_id)
    tz = zone(timezone, "timezone") if timezone else cached_zone(user.timezone)
    if calendar_id is not None:
        cal = require(s.calendars, calendar_id, "calendar_id")
        if cal.owner_id != user_id:
            raise ToolError(f"calendar_id {calendar_id} ('{cal.name}') belongs to {s.users[cal.owner_id].name}, "
                            f"not {user.name}", field="calendar_id", code="forbidden")
    a, b = window(s, time_min, time_max, tz, MAX_AGENDA_DAYS)
    occs = []
    for ev in s.events.values():
        mine = role(ev, user_id)
        if mine is None or (calendar_id is not None and ev.calendar_id != calendar_id):
            continue
        if mine == "invitee" and not include_declined and any(
                x.user_id == user_id and x.response == "declined" for x in ev.attendees):
            continue
        occs.extend(expand(ev, a, b))
    occs.sort(key=lambda o: (o.start, o.event.event_id))
    return {"user_id": user_id, "timezone": str(tz), "time_min": stamp(a, tz), "time_max": stamp(b, tz),
            "count": len(occs), "events": [occurrence_view(s, o, user_id, tz) for o in occs]}


@tool(consumes=("user_id",), produces=("event_id",), read_only=True)
def search_calendar_events(s: CalendarState, user_id: str, query: Annotated[str, Field(min_length=1, max_length=100)],
                           include_past: bool = False, limit: Annotated[int, Field(ge=1, le=50)] = 10) -> list:
    """Search a person's events (organized or invited) by text in the title, description or location.

    Recurring series are returned once, with their next occurrence. Cancelled events are not returned.

    Args:
        user_id: Whose events to search.
        query: Case-insensitive text, e.g. "dentist" or "weekly sync".
        include_past: Also return events with no upcoming occurrence (shown with their last occurrence).
        limit: Maximum number of events.
    """
    user = require_user(s, user_id)
    tz, at, needle = cached_zone(user.timezone), now(s), query.strip().lower()
    hits: list[tuple[tuple[int, float], dict]] = []
    for ev in s.events.values():
        if ev.status != "confirmed" or role(ev, user_id) is None:
            continue
        if needle not in f"{ev.title}\n{ev.description}\n{ev.location}".lower():
            continue
        nxt = next_occurrence(ev, at)
        shown = nxt or (last_occurrence(ev, at) if include_past else None)
        if shown is None:
            continue
        row = {"event_id": ev.event_id, "title": ev.title, "calendar_id": ev.calendar_id,
               "organizer": s.users[ev.organizer_id].email, "my_role": role(ev, user_id),
               "recurrence": ev.recurrence, "location": ev.location,
               "next_start" if nxt else "last_start": stamp(shown.start, tz),
               "end": stamp(shown.end, tz)}
        ts = shown.start.timestamp()
        hits.append(((0, ts) if nxt else (1, -ts), row))
    hits.sort(key=lambda h: h[0])
    return [row for _, row in hits[:limit]]


@tool(consumes=("event_id",), read_only=True)
def get_calendar_event(s: CalendarState, event_id: str, timezone: str | None = None) -> dict:
    """Get an event's full details: time, place, organizer, invitees and their RSVPs, reminders,
    recurrence rule with its exceptions, and the next few occurrences.

    Args:
        event_id: The event id, e.g. EVT-0012.
        timezone: IANA timezone to show times in; defaults to the event's own timezone.
    """
    ev = require_event(s, event_id)
    tz = zone(timezone, "timezone") if timezone else ev_zone(ev)
    return event_view(s, ev, tz, upcoming=5)


@tool(consumes=("email",), read_only=True)
def get_calendar_free_busy(s: CalendarState, emails: EmailList, time_min: str, time_max: str,
                           timezone: str | None = None) -> dict:
    """Get when each person is busy between two times (merged busy blocks only, no event details).

    Args:
        emails: Work emails of the people to check.
        time_min: Start of the range: a date (YYYY-MM-DD) or a date-time.
        time_max: End of the range: a date (whole day included) or a date-time; at most 31 days after time_min.
        timezone: IANA timezone to read and show times in; defaults to UTC.
    """
    tz = zone(timezone, "timezone") if timezone else cached_zone("UTC")
    people = people_by_email(s, emails, "emails")
    a, b = window(s, time_min, time_max, tz, MAX_FREEBUSY_DAYS)
    out = {}
    for user in people:
        blocks = merge((max(o.start, a), min(o.end, b)) for o in busy(s, user.user_id, a, b))
        out[user.email] = {"name": user.name, "busy": [{"start": stamp(x, tz), "end": stamp(y, tz)} for x, y in blocks]}
    return {"timezone": str(tz), "time_min": stamp(a, tz), "time_max": stamp(b, tz), "calendars": out}


@tool(consumes=("email", "room_id"), read_only=True)
def find_calendar_free_slots(s: CalendarState, emails: EmailList,
                             date_from: str, date_to: str,
                             duration_minutes: Annotated[int, Field(ge=15, le=480)] = 30, timezone: str | None = None,
                             day_start_hour: Annotated[int, Field(ge=0, le=23)] = 9,
                             day_end_hour: Annotated[int, Field(ge=1, le=24)] = 17,
                             include_weekends: bool = False, room_id: str | None = None,
                             max_results: Annotated[int, Field(ge=1, le=20)] = 5) -> dict:
    """Find meeting times when everyone (and optionally a room) is free, earliest first, on a 30-minute grid.

    Args:
        emails: Work emails of everyone who must attend (include the organizer).
        date_from: First day to search (YYYY-MM-DD), not before today.
        date_to: Last day to search (YYYY-MM-DD), at most 14 days after date_from.
        duration_minutes: Meeting length in minutes.
        timezone: IANA timezone of the working day; defaults to the first person's timezone.
        day_start_hour: Earliest start hour of the working day (local).
        day_end_hour: Hour by which the meeting must be over (local).
        include_weekends: Also search Saturdays and Sundays.
        room_id: A room that must also be free, e.g. RM-0003.
        max_results: Maximum number of slots to return.
    """
    people = people_by_email(s, emails, "emails")
    tz = zone(timezone, "timezone") if timezone else cached_zone(people[0].timezone)
    first, last = parse_date(date_from, "date_from"), parse_date(date_to, "date_to")
    at = now(s)
    today = at.astimezone(tz).date()
    if last < first:
        raise ToolError(f"date_to {last} is before date_from {first}", field="date_to")
    if (last - first).days >= MAX_SLOT_SEARCH_DAYS + 1:
        raise ToolError(f"date_to may be at most {MAX_SLOT_SEARCH_DAYS} days after date_from", field="date_to")
    if last < today:
        raise ToolError(f"date_to {last} is in the past (today is {today})", field="date_to", code="past_event")
    if day_end_hour <= day_start_hour:
        raise ToolError("day_end_hour must be after day_start_hour", field="day_end_hour")
    if duration_minutes > (day_end_hour - day_start_hour) * 60:
        raise ToolError(f"duration_minutes {duration_minutes} does not fit between {day_start_hour}:00 and "
                        f"{day_end_hour}:00", field="duration_minutes")
    if room_id is not None:
        require(s.rooms, room_id, "room_id")
    span_a = datetime.combine(max(first, today), time(0), tz)
    span_b = datetime.combine(last + timedelta(days=1), time(0), tz)
    blocked = [(o.start, o.end) for u in people for o in busy(s, u.user_id, span_a, span_b)]
    if room_id is not None:
        blocked += [(o.start, o.end) for o in room_bookings(s, room_id, span_a, span_b)]
    blocked = merge(blocked)
    length = timedelta(minutes=duration_minutes)
    slots: list[dict] = []
    day = max(first, today)
    while day <= last and len(slots) < max_results:
        if include_weekends or day.weekday() < 5:
            cursor = datetime.combine(day, time(day_start_hour), tz)
            close = datetime.combine(day, time(0), tz) + timedelta(hours=day_end_hour)
            while cursor + length <= close and len(slots) < max_results:
                a, b = cursor, cursor + length
                if a >= at and not any(x < b and a < y for x, y in blocked):
                    slots.append({"start": stamp(a, tz), "end": stamp(b, tz)})
                cursor += SLOT_STEP
        day += timedelta(days=1)
    return {"timezone": str(tz), "duration_minutes": duration_minutes, "attendees": [u.email for u in people],
            "room_id": room_id, "slots": slots}


@tool(consumes=("user_id", "room_id"), produces=("event_id",), read_only=True)
def check_calendar_conflicts(s: CalendarState, user_id: str, start: str, end: str, timezone: str | None = None,
                             room_id: str | None = None) -> dict:
    """Check whether a proposed time clashes with a person's existing events (and a room's bookings).

    Args:
        user_id: Whose calendar to check.
        start: Proposed start date-time; without an offset it is read in timezone.
        end: Proposed end date-time.
        timezone: IANA timezone for times without an offset; defaults to the person's timezone.
        room_id: Also check this room's bookings, e.g. RM-0002.
    """
    user = require_user(s, user_id)
    tz = zone(timezone, "timezone") if timezone else cached_zone(user.timezone)
    a, b = parse_instant(start, "start", tz), parse_instant(end, "end", tz)
    if b <= a:
        raise ToolError(f"end {end} must be after start {start}", field="end")
    if room_id is not None:
        require(s.rooms, room_id, "room_id")
    mine = [occurrence_view(s, o, user_id, tz) for o in busy(s, user_id, a, b)]
    rooms = [{"event_id": o.event.event_id, "title": o.event.title, "start": stamp(o.start, tz),
              "end": stamp(o.end, tz)} for o in room_bookings(s, room_id, a, b)] if room_id else []
    return {"has_conflicts": bool(mine or rooms), "conflicts": mine, "room_conflicts": rooms,
            "start": stamp(a, tz), "end": stamp(b, tz)}


@tool(produces=("room_id",), read_only=True)
def list_bookable_rooms(s: CalendarState, min_capacity: Annotated[int, Field(ge=1, le=200)] | None = None,
                        building: str | None = None, equipment: list[Equipment] | None = None,
                        available_from: str | None = None, available_to: str | None = None,
                        timezone: str | None = None) -> list:
    """List meeting rooms, optionally only those big enough, with given equipment, or free for a period.

    Args:
        min_capacity: Minimum number of seats.
        building: Only rooms in this building, e.g. HQ.
        equipment: Equipment every returned room must have.
        available_from: With available_to: only rooms with no booking in this period (date-time).
        available_to: End of the period the room must be free (date-time).
        timezone: IANA timezone for times without an offset; defaults to UTC.
    """
    if (available_from is None) != (available_to is None):
        raise ToolError("give both available_from and available_to, or neither",
                        field="available_to" if available_to is None else "available_from")
    buildings = sorted({r.building for r in s.rooms.values()})
    if building is not None and building not in buildings:
        raise ToolError(f"unknown building '{building}'; known: {', '.join(buildings)}", field="building",
                        code="not_found")
    tz = zone(timezone, "timezone") if timezone else cached_zone("UTC")
    period = None
    if available_from is not None and available_to is not None:
        a, b = parse_instant(available_from, "available_from", tz), parse_instant(available_to, "available_to", tz)
        if b <= a:
            raise ToolError(f"available_to {available_to} must be after available_from {available_from}",
                            field="available_to")
        period = (a, b)
    out = []
    for room in s.rooms.values():
        if min_capacity is not None and room.capacity < min_capacity:
            continue
        if building is not None and room.building != building:
            continue
        if equipment and not set(equipment) <= set(room.equipment):
            continue
        if period is not None and room_bookings(s, room.room_id, *period):
            continue
        out.append(room)
    return out

