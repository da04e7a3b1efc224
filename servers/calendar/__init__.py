"""Calendar: people, calendars, rooms, events with invitees and RSVPs, recurring series, reminders,
free/busy and slot finding, and video-meeting links — all relative to the session clock (it starts at
2026-06-01 09:00 UTC and moves one minute per call), never the wall clock, so "tomorrow" and "next
week" are reproducible.

State behaviour: an event (or series occurrence) whose start the clock has passed is history, so
events move into the past on their own as time goes by. A recurring event is one series record:
editing one occurrence detaches it into its own event, editing "this and following" splits the
series, cancelling one occurrence records it as an exception, and cancelling a series that already
began keeps its past occurrences. An event may carry a join link of the video_meeting service
(``https://meet.prove.example/j/MTG-0001``), stored and returned as ``conference_url``.

State-dependent failures an agent must handle: end before (or equal to) start, an event longer than
24 hours, a start time without a time of day, an unknown timezone, calendar, user, event or room,
scheduling or moving into the past, editing, cancelling, RSVPing to, inviting to or setting reminders
on an event that already started (or a series with no upcoming occurrence), retiming a started series
without ``occurrence_start`` + ``apply_to_following``, ``apply_to_following`` without
``occurrence_start``, a room that is double-booked or too small (also when adding invitees), an
invitee who is not in the directory, already invited or is the organizer, removing someone who is
not invited or the organizer, cancelling something already cancelled, changes to a cancelled event,
an invalid recurrence rule, an occurrence that does not exist, already started or was already
cancelled/detached, ``occurrence_start`` on a non-recurring event, changes by someone who is not the
organizer, organizers RSVPing to their own event, RSVPs or reminders from someone not invited (or who
declined), duplicate reminders, an update that changes nothing, a conference_url that is not a
video_meeting join link, agenda queries on another person's calendar or over more than 92 days,
free/busy over more than 31 days, slot searches in the past, over more than 14 days or with a
working day that ends before it starts or is shorter than the meeting, and room searches with an
unknown building or half a period.
"""

from servers.calendar import discovery, tools_read, tools_write
from servers.calendar.state import CalendarState
from servers.calendar.world import generate
from servers.kit import Domain

domain = Domain("calendar", CalendarState, generate, description=__doc__ or "",
                modules=(tools_read, tools_write, discovery))

__all__ = ["domain"]
