"""Records of the calendar world: people, their calendars, meeting rooms and events.

Events are stored with UTC instants plus the IANA timezone they were scheduled in (the wall clock
their recurrence follows). A recurring event is one *series* record; editing a single occurrence
detaches it into its own event (``recurring_event_id`` + ``original_start``) and the series remembers
that in ``modified_occurrences``; cancelling one occurrence lists its original start in
``cancelled_occurrences``. This mirrors how real calendar services represent exceptions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from pydantic import Field

from servers.kit import Cell, Counters, State, Table

MEETING_URL_PATTERN = r"^https://meet\.prove\.example/j/MTG-\d{4,}$"
ConferenceUrl = Annotated[str, Field(max_length=80, pattern=MEETING_URL_PATTERN)]
"""A join link of the video_meeting service: exactly ``https://meet.prove.example/j/<meeting_id>`` with a
meeting id such as ``MTG-0001`` (see ``servers.video_meeting.state.join_url``)."""


@dataclass
class User:
    user_id: str
    name: str
    email: str
    timezone: str
    department: str
    title: str


@dataclass
class Calendar:
    calendar_id: str
    owner_id: str
    name: str
    timezone: str
    is_primary: bool
    color: str


@dataclass
class Room:
    room_id: str
    name: str
    building: str
    floor: int
    capacity: int
    equipment: list[str]


@dataclass
class Attendee:
    user_id: str
    email: str
    name: str
    response: str  # needs_action | accepted | tentative | declined
    comment: str | None = None


@dataclass
class Reminder:
    minutes_before: int
    method: str  # popup | email


@dataclass
class Event:
    event_id: str
    calendar_id: str
    organizer_id: str
    title: str
    start: str  # UTC instant (ISO); first occurrence for a series
    end: str
    timezone: str  # IANA zone the event was scheduled in (its recurrence wall clock)
    location: str
    description: str
    room_id: str | None
    show_as: str  # busy | free
    status: str  # confirmed | cancelled
    attendees: list[Attendee]
    reminders: dict[str, list[Reminder]]  # user_id -> that person's reminders
    recurrence: str | None = None  # canonical RRULE text
    cancelled_occurrences: list[str] = field(default_factory=list)  # original starts (UTC ISO)
    modified_occurrences: dict[str, str] = field(default_factory=dict)  # original start -> event_id
    recurring_event_id: str | None = None  # set on a detached occurrence
    original_start: str | None = None
    created_at: str = ""
    updated_at: str = ""
    conference_url: str | None = None  # video_meeting join link


class CalendarState(State):
    users: Table[User]
    calendars: Table[Calendar]
    rooms: Table[Room]
    events: Table[Event]
    counters: Cell[Counters]
