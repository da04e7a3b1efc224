"""Calendar: people, calendars, rooms, events with invitees and RSVPs, recurring series, reminders,
free/busy and slot finding — all relative to the world's clock (2026-06-01 09:00 UTC), never the wall
clock, so "tomorrow" and "next week" are reproducible.

State-dependent failures an agent must handle: end before start, scheduling or moving into the past,
editing an event that already started, a room that is double-booked or too small, an invitee who is
not in the directory or already invited, cancelling something already cancelled, an invalid
recurrence rule, an occurrence that does not exist or was already cancelled/detached, and changes by
someone who is not the organizer. Modules: ``rules`` (time + RRULE), ``state`` (records), ``core``
(shared logic), ``world`` (generator + ``domain``), ``reads``/``writes`` (the 17 user tools) and
``discovery`` (hidden enumeration for synthesis).
"""

from servers.calendar import discovery, reads, writes  # noqa: F401 - importing registers the tools
from servers.calendar.world import domain

__all__ = ["domain"]
