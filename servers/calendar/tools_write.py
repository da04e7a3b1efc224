"""Calendar tools that change state: scheduling, editing (one occurrence, this-and-following, or the
whole series), cancelling, invitees, RSVPs and reminders.

Rules enforced here: only the organizer may change or cancel an event; events that have started are
history; end must follow start; a room cannot be double-booked or over capacity; invitees must be in
the directory; a cancelled event or occurrence cannot be cancelled again.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Literal
from zoneinfo import ZoneInfo

from pydantic import Field

from servers.calendar.core import (
    attendee,
    check_room,
    check_span,
    conflicts_for,
    ev_zone,
    event_view,
    expand,
    find_occurrence,
    key,
    next_occurrence,
    participants,
    planned,
    require_event,
    require_live,
    require_organizer,
    require_upcoming,
    require_user,
    rule_of,
    series_instances,
    user_by_email,
)
from servers.calendar.rules import Rule, cached_zone, instant, parse_instant, parse_rule, stamp, zone
from servers.calendar.state import Attendee, CalendarState, ConferenceUrl, Event, Reminder
from servers.kit import EmailAddress, Name, Text, ToolError, new_id, now, require, tool

EmailList = Annotated[list[EmailAddress], Field(max_length=20)]
Comment = Annotated[Text, Field(max_length=500)]
Minutes = Annotated[int, Field(ge=0, le=40320)]
ONE_SECOND = timedelta(seconds=1)


def _room_location(s: CalendarState, room_id: str) -> str:
    room = s.rooms[room_id]
    return f"{room.name}, {room.building} floor {room.floor}"


def _notified(s: CalendarState, ev: Event) -> list[str]:
    return [a.email for a in ev.attendees if a.response != "declined"]


@tool(consumes=("calendar_id", "email", "room_id"), produces=("event_id",),
             establishes=("event_invitation",))
def create_calendar_event(s: CalendarState, calendar_id: str, event_title: Name, start: str, end: str,
                          timezone: str | None = None, location: str | None = None,
                          description: Text | None = None,
                          invitee_emails: Annotated[list[EmailAddress], Field(max_length=100)] | None = None,
                          room_id: str | None = None, recurrence_rule: str | None = None,
                          show_as: Literal["busy", "free"] = "busy",
                          conference_url: ConferenceUrl | None = None) -> dict:
    """Schedule an event on a calendar (the calendar's owner becomes the organizer) and invite people.

    Returns the event plus any clashes with the participants' existing events (warnings only; a
    double-booked room is an error).

    Args:
        calendar_id: Calendar to put the event on, e.g. CAL-0003.
        event_title: The event's title, e.g. "Q3 planning".
        start: Start date-time, e.g. 2026-06-03T14:00; without an offset it is read in timezone.
        end: End date-time, after start and at most 24 hours later.
        timezone: IANA timezone of the event, e.g. Europe/Berlin; defaults to the calendar's timezone.
        location: Free-text location; defaults to the room's name when a room is booked.
        description: Agenda or notes.
        invitee_emails: Work emails of the people to invite.
        room_id: Meeting room to book, e.g. RM-0002.
        recurrence_rule: RFC 5545 RRULE for a repeating event, e.g. FREQ=WEEKLY;BYDAY=MO,WE;COUNT=8
            (FREQ DAILY/WEEKLY/MONTHLY, INTERVAL, COUNT or UNTIL, BYDAY for weekly rules).
        show_as: Whether the event makes the participants busy or leaves them free.
        conference_url: Video-meeting join link from the video_meeting service, e.g.
            https://meet.prove.example/j/MTG-0001.
    """
    cal = require(s.calendars, calendar_id, "calendar_id")
    tz = zone(timezone, "timezone") if timezone else cached_zone(cal.timezone)
    a, b = parse_instant(start, "start", tz), parse_instant(end, "end", tz)
    at = now(s)
    check_span(a, b, at)
    rule = parse_rule(recurrence_rule, a, tz) if recurrence_rule is not None else None
    people: list[Attendee] = []
    for email in invitee_emails or []:
        user = user_by_email(s, email, "invitee_emails")
        if user.user_id != cal.owner_id and all(p.user_id != user.user_id for p in people):
            people.append(Attendee(user.user_id, user.email, user.name, "needs_action"))
    slots = planned(a, b, tz, rule, at)
    if room_id is not None:
        check_room(s, room_id, slots, len(people) + 1)
    eid = new_id(s.counters, "EVT-N")
    ev = Event(eid, calendar_id, cal.owner_id, event_title.strip(), stamp(a), stamp(b), str(tz),
               location if location is not None else (_room_location(s, room_id) if room_id else ""),
               description or "", room_id, show_as, "confirmed", people,
               {cal.owner_id: [Reminder(10, "popup")]}, rule.text() if rule else None,
               created_at=stamp(at), updated_at=stamp(at), conference_url=conference_url)
    s.events.put(eid, ev)
    return {**event_view(s, ev, upcoming=3 if rule else 0),
            "conflicts": conflicts_for(s, participants(ev), slots, exclude=[eid])}


def _changed_time(start: str | None, end: str | None, tz: ZoneInfo, base_start: datetime,
                  base_end: datetime) -> tuple[datetime, datetime]:
    """New (start, end): a lone new start keeps the duration, a lone new end keeps the start."""
    a = parse_instant(start, "start", tz) if start is not None else base_start
    b = parse_instant(end, "end", tz) if end is not None else a + (base_end - base_start)
    return a, b


def _apply_fields(s: CalendarState, ev: Event, title: str | None, location: str | None,
                  description: str | None, room_id: str | None, show_as: str | None,
                  conference_url: str | None) -> None:
    if conference_url is not None:
        ev.conference_url = conference_url
    if title is not None:
        ev.title = title.strip()
    if description is not None:
        ev.description = description
    if show_as is not None:
        ev.show_as = show_as
    if room_id is not None:
        ev.room_id = room_id or None
        if location is None:
            ev.location = _room_location(s, room_id) if room_id else ""
    if location is not None:
        ev.location = location


def _shift_keys(keys: list[str], delta: timedelta) -> list[str]:
    return [key(instant(k) + delta) for k in keys]


@tool(consumes=("event_id", "user_id", "occurrence_start", "room_id"), produces=("event_id",))
def update_calendar_event(s: CalendarState, event_id: str, user_id: str, event_title: Name | None = None,
                          start: str | None = None, end: str | None = None, timezone: str | None = None,
                          location: str | None = None, description: Text | None = None,
                          room_id: str | None = None, show_as: Literal["busy", "free"] | None = None,
                          occurrence_start: str | None = None, apply_to_following: bool = False,
                          conference_url: ConferenceUrl | None = None) -> dict:
    """Change an upcoming event's title, time, place, room or description (organizer only).

    For a recurring series: omit occurrence_start to edit the whole series; give it to edit just that
    occurrence (it becomes its own event), and add apply_to_following to edit it and every later one.

    Args:
        event_id: The event or series id.
        user_id: Who is making the change; must be the organizer.
        event_title: New title.
        start: New start date-time (without an offset read in the event's timezone); alone it keeps the
            duration.
        end: New end date-time.
        timezone: New IANA timezone of the event (also used to read start and end).
        location: New free-text location.
        description: New agenda or notes.
        room_id: Room to book instead (empty string releases the room).
        show_as: Whether the event makes participants busy or free.
        occurrence_start: Start of the one occurrence to edit (from list_calendar_events), or its date.
        apply_to_following: With occurrence_start: also change every later occurrence.
        conference_url: New video-meeting join link, e.g. https://meet.prove.example/j/MTG-0002.
    """
    ev = require_event(s, event_id)
    require_live(ev)
    require_organizer(s, ev, user_id)
    title = event_title
    if all(v is None for v in (title, start, end, timezone, location, description, room_id, show_as,
                               conference_url)):
        raise ToolError("nothing to update: give at least one field to change", field="event_title")
    if apply_to_following and occurrence_start is None:
        raise ToolError("apply_to_following needs occurrence_start (the first occurrence to change)",
                        field="occurrence_start")
    if room_id:
        require(s.rooms, room_id, "room_id")
    at = now(s)
    tz = zone(timezone, "timezone") if timezone else ev_zone(ev)
    if occurrence_start is None:
        return _update_whole(s, ev, at, tz, title, start, end, location, description, room_id, show_as,
                             conference_url)
    orig = find_occurrence(ev, occurrence_start)
    if orig <= at:
        raise ToolError(f"occurrence_start {stamp(orig, ev_zone(ev))} already started; past occurrences cannot be "
                        "changed", field="occurrence_start", code="past_event")
    if apply_to_following and orig == instant(ev.start):
        return _update_whole(s, ev, at, tz, title, start, end, location, description, room_id, show_as,
                             conference_url)
    duration = instant(ev.end) - instant(ev.start)
    a, b = _changed_time(start, end, tz, orig, orig + duration)
    check_span(a, b, at)
    series = s.events.edit(ev.event_id)
    new_eid = new_id(s.counters, "EVT-N")
    if apply_to_following:
        rule = rule_of(ev)
        assert rule is not None
        before = sum(1 for os, _ in series_instances(ev, orig - ONE_SECOND) if os < orig)
        later = lambda k: instant(k) >= orig  # noqa: E731 - tiny predicate used twice
        moved_cancel = [k for k in series.cancelled_occurrences if later(k)]
        moved_mod = {k: v for k, v in series.modified_occurrences.items() if later(k)}
        head = Rule(rule.freq, rule.interval, before if rule.count else None,
                    None if rule.count else orig - ONE_SECOND, rule.byday)
        series.recurrence = head.text()
        series.cancelled_occurrences = [k for k in series.cancelled_occurrences if not later(k)]
        series.modified_occurrences = {k: v for k, v in series.modified_occurrences.items() if not later(k)}
        tail = parse_rule(Rule(rule.freq, rule.interval, rule.count - before if rule.count else None,
                               rule.until, rule.byday).text(), a, tz, field="start")
        delta = a - orig
        new = Event(new_eid, ev.calendar_id, ev.organizer_id, ev.title, stamp(a), stamp(b), str(tz), ev.location,
                    ev.description, ev.room_id, ev.show_as, "confirmed",
                    [Attendee(x.user_id, x.email, x.name, x.response, x.comment) for x in ev.attendees],
                    {k: list(v) for k, v in ev.reminders.items()}, tail.text(),
                    _shift_keys(moved_cancel, delta),
                    dict(zip(_shift_keys(list(moved_mod), delta), moved_mod.values(), strict=True)),
                    created_at=stamp(at), updated_at=stamp(at), conference_url=ev.conference_url)
        for detached in moved_mod.values():
            s.events.edit(detached).recurring_event_id = new_eid
        scope, rule_for_room = "following", tail
    else:
        series.modified_occurrences[key(orig)] = new_eid
        new = Event(new_eid, ev.calendar_id, ev.organizer_id, ev.title, stamp(a), stamp(b), str(tz), ev.location,
                    ev.description, ev.room_id, ev.show_as, "confirmed",
                    [Attendee(x.user_id, x.email, x.name, x.response, x.comment) for x in ev.attendees],
                    {k: list(v) for k, v in ev.reminders.items()}, recurring_event_id=ev.event_id,
                    original_start=key(orig), created_at=stamp(at), updated_at=stamp(at),
                    conference_url=ev.conference_url)
        scope, rule_for_room = "occurrence", None
    _apply_fields(s, new, title, location, description, room_id, show_as, conference_url)
    slots = planned(a, b, tz, rule_for_room, at, [*new.cancelled_occurrences, *new.modified_occurrences])
    if new.room_id is not None:
        check_room(s, new.room_id, slots, len(new.attendees) + 1)
    s.events.put(new_eid, new)
    return {"updated": scope, "event": event_view(s, new, upcoming=3 if rule_for_room else 0),
            "notified": _notified(s, new), "conflicts": conflicts_for(s, participants(new), slots, [new_eid])}


def _update_whole(s: CalendarState, ev: Event, at: datetime, tz: ZoneInfo, title: str | None, start: str | None,
                  end: str | None, location: str | None, description: str | None, room_id: str | None,
                  show_as: str | None, conference_url: str | None) -> dict:
    """Edit a single event, or a series as a whole (its time only while it has not started)."""
    require_upcoming(ev, at)
    old_a, old_b = instant(ev.start), instant(ev.end)
    retimed = start is not None or end is not None
    if retimed and ev.recurrence is not None and old_a <= at:
        nxt = next_occurrence(ev, at)
        hint = f" (next is {stamp(nxt.start, ev_zone(ev))})" if nxt else ""
        raise ToolError(f"series {ev.event_id} began {stamp(old_a, ev_zone(ev))}; to retime its upcoming "
                        f"occurrences pass occurrence_start of the next one{hint} with apply_to_following=true",
                        field="start", code="past_event")
    a, b = _changed_time(start, end, tz, old_a, old_b)
    if retimed:
        check_span(a, b, at)
    rec = s.events.edit(ev.event_id)
    rec.start, rec.end, rec.timezone = stamp(a), stamp(b), str(tz)
    rule = None
    if rec.recurrence is not None:
        rule = parse_rule(rec.recurrence, a, tz, field="start")
        rec.recurrence = rule.text()
        if a != old_a:
            rec.cancelled_occurrences = _shift_keys(rec.cancelled_occurrences, a - old_a)
            rec.modified_occurrences = dict(zip(_shift_keys(list(rec.modified_occurrences), a - old_a),
                                                rec.modified_occurrences.values(), strict=True))
    _apply_fields(s, rec, title, location, description, room_id, show_as, conference_url)
    rec.updated_at = stamp(at)
    slots = planned(a, b, tz, rule, at, [*rec.cancelled_occurrences, *rec.modified_occurrences])
    if rec.room_id is not None and (retimed or room_id):
        check_room(s, rec.room_id, slots, len(rec.attendees) + 1, exclude=[rec.event_id])
    return {"updated": "series" if rule else "event", "event": event_view(s, rec, upcoming=3 if rule else 0),
            "notified": _notified(s, rec),
            "conflicts": conflicts_for(s, participants(rec), slots, [rec.event_id]) if retimed else []}


@tool(consumes=("event_id", "user_id", "occurrence_start"))
def cancel_calendar_event(s: CalendarState, event_id: str, user_id: str, occurrence_start: str | None = None) -> dict:
    """Cancel an upcoming event, one occurrence of a series, or a whole series (organizer only).

    Cancelling a series that already began keeps its past occurrences and removes the remaining ones.

    Args:
        event_id: The event or series id.
        user_id: Who is cancelling; must be the organizer.
        occurrence_start: Start of the single occurrence to cancel (from list_calendar_events), or its date.
    """
    ev = require_event(s, event_id)
    require_organizer(s, ev, user_id)
    if ev.status == "cancelled":
        raise ToolError(f"event {event_id} ('{ev.title}') is already cancelled", field="event_id",
                        code="illegal_state")
    at, tz = now(s), ev_zone(ev)
    if occurrence_start is not None:
        orig = find_occurrence(ev, occurrence_start)
        if orig <= at:
            raise ToolError(f"occurrence_start {stamp(orig, tz)} already started; past occurrences cannot be cancelled",
                            field="occurrence_start", code="past_event")
        s.events.edit(event_id).cancelled_occurrences.append(key(orig))
        return {"event_id": event_id, "cancelled": "occurrence", "occurrence_start": stamp(orig, tz),
                "notified": _notified(s, ev)}
    require_upcoming(ev, at)
    rec = s.events.edit(event_id)
    rec.updated_at = stamp(at)
    result: dict = {"event_id": event_id, "notified": _notified(s, ev)}
    rule = rule_of(ev)
    if rule is not None and instant(ev.start) <= at:
        started = [os for os, _ in series_instances(ev, at) if os <= at]
        rec.recurrence = Rule(rule.freq, rule.interval, None, started[-1], rule.byday).text()
        result.update(cancelled="remaining_occurrences", last_kept_occurrence=stamp(started[-1], tz))
    else:
        rec.status = "cancelled"
        result["cancelled"] = "series" if rule else "event"
    for detached in ev.modified_occurrences.values():
        child = s.events.get(detached)
        if child is not None and child.status == "confirmed" and instant(child.start) > at:
            s.events.edit(detached).status = "cancelled"
    return result


@tool(consumes=("event_id", "user_id", "email"), establishes=("event_invitation",))
def add_calendar_event_invitees(s: CalendarState, event_id: str, user_id: str, emails: EmailList) -> dict:
    """Invite more people to an upcoming event or series (organizer only); they start as needs_action.

    Args:
        event_id: The event or series id.
        user_id: Who is inviting; must be the organizer.
        emails: Work emails of the people to add.
    """
    ev = require_event(s, event_id)
    require_live(ev)
    require_organizer(s, ev, user_id)
    require_upcoming(ev, now(s))
    if not emails:
        raise ToolError("emails is empty: give at least one work email to invite", field="emails")
    added: list[Attendee] = []
    for email in emails:
        user = user_by_email(s, email, "emails")
        if user.user_id == ev.organizer_id:
            raise ToolError(f"emails: {user.email} is the organizer of {event_id}", field="emails")
        if attendee(ev, user.user_id) is not None:
            raise ToolError(f"emails: {user.email} is already invited to {event_id}", field="emails", code="duplicate")
        if all(a.user_id != user.user_id for a in added):
            added.append(Attendee(user.user_id, user.email, user.name, "needs_action"))
    headcount = len(ev.attendees) + len(added) + 1
    if ev.room_id is not None and headcount > s.rooms[ev.room_id].capacity:
        room = s.rooms[ev.room_id]
        raise ToolError(f"room {room.room_id} ({room.name}) seats {room.capacity}; with these emails {headcount} "
                        "people would not fit",
                        field="emails", code="capacity")
    rec = s.events.edit(event_id)
    rec.attendees.extend(added)
    rec.updated_at = stamp(now(s))
    return {"event_id": event_id, "added": [a.email for a in added],
            "attendees": [{"email": a.email, "response": a.response} for a in rec.attendees]}


@tool(consumes=("event_id", "user_id", "email"), requires=("event_invitation",))
def remove_calendar_event_invitee(s: CalendarState, event_id: str, user_id: str, email: EmailAddress) -> dict:
    """Remove one invitee from an upcoming event or series (organizer only).

    Args:
        event_id: The event or series id.
        user_id: Who is removing; must be the organizer.
        email: Work email of the invitee to remove.
    """
    ev = require_event(s, event_id)
    require_live(ev)
    require_organizer(s, ev, user_id)
    require_upcoming(ev, now(s))
    user = user_by_email(s, email, "email")
    if user.user_id == ev.organizer_id:
        raise ToolError(f"email {user.email} is the organizer and cannot be removed; cancel the event instead",
                        field="email")
    if attendee(ev, user.user_id) is None:
        raise ToolError(f"email {user.email} is not invited to {event_id}", field="email", code="not_found")
    rec = s.events.edit(event_id)
    rec.attendees = [a for a in rec.attendees if a.user_id != user.user_id]
    rec.reminders.pop(user.user_id, None)
    rec.updated_at = stamp(now(s))
    return {"event_id": event_id, "removed": user.email, "attendees": [a.email for a in rec.attendees]}


@tool(consumes=("event_id", "user_id"), requires=("event_invitation",))
def respond_to_calendar_invitation(s: CalendarState, event_id: str, user_id: str,
                                   response: Literal["accepted", "declined", "tentative"],
                                   comment: Comment | None = None) -> dict:
    """RSVP to an upcoming event or series you were invited to.

    Args:
        event_id: The event or series id.
        user_id: The invitee who is answering.
        response: The answer.
        comment: Optional note to the organizer.
    """
    ev = require_event(s, event_id)
    user = require_user(s, user_id)
    require_live(ev)
    if ev.organizer_id == user_id:
        raise ToolError(f"user_id {user_id} ({user.name}) organizes {event_id}; organizers do not RSVP to their own events",
                        field="user_id")
    if attendee(ev, user_id) is None:
        raise ToolError(f"user_id {user_id} ({user.name}) is not invited to {event_id}", field="user_id", code="forbidden")
    require_upcoming(ev, now(s))
    rec = s.events.edit(event_id)
    me = attendee(rec, user_id)
    assert me is not None
    previous, me.response, me.comment = me.response, response, comment
    return {"event_id": event_id, "title": ev.title, "user_id": user_id, "previous_response": previous,
            "response": response, "organizer": s.users[ev.organizer_id].email}


@tool(consumes=("event_id", "user_id"))
def set_calendar_event_reminders(s: CalendarState, event_id: str, user_id: str,
                                 minutes_before: Annotated[list[Minutes], Field(max_length=5)],
                                 method: Literal["popup", "email"] = "popup") -> dict:
    """Replace a participant's own reminders for an upcoming event or series (an empty list clears them).

    Args:
        event_id: The event or series id.
        user_id: The organizer or invitee whose reminders these are.
        minutes_before: How many minutes before the start each reminder fires (at most 5, up to 4 weeks).
        method: How the reminders are delivered.
    """
    ev = require_event(s, event_id)
    user = require_user(s, user_id)
    require_live(ev)
    me = attendee(ev, user_id)
    if ev.organizer_id != user_id and me is None:
        raise ToolError(f"user_id {user_id} ({user.name}) is not part of {event_id}", field="user_id", code="forbidden")
    if me is not None and me.response == "declined":
        raise ToolError(f"user_id {user_id} ({user.name}) declined {event_id}; accept it before setting reminders", field="user_id",
                        code="illegal_state")
    if len(set(minutes_before)) != len(minutes_before):
        raise ToolError("minutes_before lists the same reminder twice", field="minutes_before")
    at = now(s)
    require_upcoming(ev, at)
    rec = s.events.edit(event_id)
    rec.reminders[user_id] = [Reminder(m, method) for m in sorted(minutes_before, reverse=True)]
    fire = sorted(o.start - timedelta(minutes=m) for o in expand(ev, at, at + timedelta(days=60))
                  for m in minutes_before if o.start - timedelta(minutes=m) > at)
    return {"event_id": event_id, "user_id": user_id,
            "reminders": [{"minutes_before": m, "method": method} for m in sorted(minutes_before, reverse=True)],
            "next_reminder_at": stamp(fire[0], ev_zone(ev)) if fire else None}
