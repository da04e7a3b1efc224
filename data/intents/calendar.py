"""Calendar: how users ask (format: data/intents/__init__.py)."""

from __future__ import annotations

BANK: dict[str, dict[str, list[str]]] = {
    "list_calendars": {
        "ask": [
            "list the calendars of {user_id}",
            "show which calendars {user_id} has",
        ],
        "vague": [
            "look at the calendars",
        ],
    },
    "create_calendar_event": {
        "ask": [
            "create an event {event_title} on {calendar_id} from {start} to {end}",
            "book {event_title} on calendar {calendar_id}, {start} until {end}",
        ],
        "vague": [
            "put something on the calendar",
        ],
    },
    "cancel_calendar_event": {
        "ask": [
            "cancel {event_id} as {user_id}",
            "call off the event {event_id} (I'm {user_id})",
        ],
        "vague": [
            "cancel a meeting",
        ],
    },
    "respond_to_calendar_invitation": {
        "ask": [
            "answer the invitation {event_id} for {user_id} with {response}",
            "reply {response} to {event_id} on behalf of {user_id}",
        ],
        "vague": [
            "answer an invitation",
        ],
    },
    "list_bookable_rooms": {
        "ask": [
            "list the bookable rooms",
            "show me which rooms can be booked",
        ],
        "vague": [
            "find a room",
        ],
    },
}

GOALS: list[dict[str, list[str]]] = []
