"""Calendar: how people ask about their agenda and meetings (format: data/intents/__init__.py).

The person is known from the session, so ``user_id`` is never a slot: people say "my calendar"."""

from __future__ import annotations

SELF: tuple[str, ...] = ("user_id",)
SPOKEN: tuple[str, ...] = ()

BANK: dict[str, dict[str, list[str]]] = {
    "get_calendar_current_time": {
        "ask": [
            "tell me today's date and what dates next week covers",
            "work out what day it is for me right now in {timezone}",
            "remind me what the date is tomorrow",
            "give me the current date and time so we can plan",
        ],
        "vague": ["tell me what day it is", "remind me of today's date"],
    },
    "search_calendar_users": {
        "ask": [
            "find {query} in the staff directory",
            "look up {query} in the directory so I can invite them",
            "get me the email address for {query}",
            "show me the first {limit} people matching {query}",
        ],
        "vague": ["help me find a colleague", "look someone up at work"],
    },
    "list_calendars": {
        "ask": [
            "show me all my calendars",
            "tell me which calendars I have and what timezone each one is in",
            "list my team and personal calendars",
        ],
        "vague": ["show me my calendars", "tell me which calendars I have"],
    },
    "list_calendar_events": {
        "ask": [
            "show me my agenda between {time_min} and {time_max}",
            "tell me what's on my plate from {time_min} to {time_max}",
            "walk me through {calendar_id} from {time_min} until {time_max}",
            "list every meeting I've got between {time_min} and {time_max}",
        ],
        "vague": ["tell me what my week looks like", "go over my schedule with me"],
    },
    "search_calendar_events": {
        "ask": [
            "find the meeting about {query}",
            "look for anything on my calendar mentioning {query}",
            "find when the {query} sync happens next",
            "dig up my events about {query}",
        ],
        "vague": ["find a meeting I can't locate", "look up when that meeting is"],
    },
    "get_calendar_event": {
        "ask": [
            "show me everything about {event_id}",
            "tell me who's coming to {event_id} and who hasn't answered",
            "pull up where and when {event_id} is",
            "check the details of {event_id} in {timezone} time",
        ],
        "vague": ["tell me more about that meeting", "find out who's going to that thing"],
    },
    "get_calendar_free_busy": {
        "ask": [
            "show me when {emails} are tied up between {time_min} and {time_max}",
            "tell me whether {emails} have anything on from {time_min} to {time_max}",
            "check how booked up {emails} are between {time_min} and {time_max}",
        ],
        "vague": ["check if my colleagues are around later", "see whether they're busy"],
    },
    "find_calendar_free_slots": {
        "ask": [
            "find {duration_minutes} when {emails} can all meet between {date_from} and {date_to}",
            "suggest times between {date_from} and {date_to} that work for {emails}",
            "look for a {duration_minutes} gap that {emails} and I all have open, sometime between {date_from} and {date_to}",
            "find a time {emails} are all free between {date_from} and {date_to}, with {room_id} open too",
        ],
        "vague": ["find us a time to meet", "work out when we can all get together"],
    },
    "check_calendar_conflicts": {
        "ask": [
            "make sure I'm not double-booked from {start} to {end}",
            "see if anything of mine overlaps {start} to {end}",
            "tell me if {start} until {end} works for me and for {room_id}",
        ],
        "vague": ["check whether I'm free then", "make sure this meeting won't clash with anything"],
    },
    "list_bookable_rooms": {
        "ask": [
            "find me a room for at least {min_capacity} people",
            "show me the meeting rooms in {building}",
            "list rooms with {equipment} that are open between {available_from} and {available_to}",
            "find a room that seats {min_capacity} and is open between {available_from} and {available_to}",
            "show me the rooms I can book",
            "find a room that's open between {available_from} and {available_to}",
            "find a room with {equipment}",
        ],
        "vague": ["find me somewhere to meet", "check for free meeting rooms"],
    },
    "create_calendar_event": {
        "ask": [
            "put {event_title} on {calendar_id} from {start} to {end}",
            "book {event_title} for {start} until {end} and invite {invitee_emails}",
            "set up {event_title} from {start} to {end} in {room_id} with {invitee_emails}",
            "add {event_title} to {calendar_id}, {start} to {end}, at {location}",
            "block out {start} to {end} for {event_title}, marked {show_as}",
        ],
        "vague": ["help me set up a meeting", "put something on my calendar"],
    },
    "update_calendar_event": {
        "ask": [
            "move {event_id} to {start} until {end}",
            "rename {event_id} to {event_title}",
            "switch {event_id} over to {room_id}",
            "change where {event_id} happens to {location}",
            "push just the {occurrence_start} instance of {event_id} to {start}",
            "make a change to {event_id}",
            "update the description of {event_id} to say {description}",
            "move the meeting to {start} until {end}",
        ],
        "vague": ["help me reschedule a meeting", "change one of my events"],
    },
    "cancel_calendar_event": {
        "ask": [
            "cancel {event_id}",
            "call off {event_id} and let everyone know",
            "drop only the {occurrence_start} session of {event_id}",
            "scrap {event_id} from my calendar",
        ],
        "vague": ["call off a meeting for me", "take something off my calendar"],
    },
    "add_calendar_event_invitees": {
        "ask": [
            "add {emails} to {event_id}",
            "bring {emails} into {event_id} as well",
            "send {emails} an invite for {event_id}",
            "add {emails} to the meeting",
        ],
        "vague": ["get a few more people into my meeting", "include someone else in that meeting"],
    },
    "remove_calendar_event_invitee": {
        "ask": [
            "take {email} off {event_id}",
            "uninvite {email} from {event_id}",
            "drop {email} from the guest list of {event_id}",
            "take {email} off the guest list",
        ],
        "vague": ["take someone off my meeting", "remove a guest"],
    },
    "respond_to_calendar_invitation": {
        "ask": [
            "mark me as {response} for {event_id}",
            "set my answer for {event_id} to {response}",
            "answer {event_id} with {response} and add a note saying {comment}",
            "reply to the invite for {event_id} as {response}",
            "mark me as {response} on that invite",
        ],
        "vague": ["answer a meeting invite for me", "reply to that invitation"],
    },
    "set_calendar_event_reminders": {
        "ask": [
            "remind me {minutes_before} before {event_id}",
            "give me a heads-up {minutes_before} ahead of {event_id} by {method}",
            "set my alerts for {event_id} to {minutes_before} beforehand",
            "remind me {minutes_before} before it starts",
        ],
        "vague": ["make sure I don't forget this meeting", "set me a reminder"],
    },
}

GOALS: list[dict[str, list[str]]] = [
    {"tools": ["get_calendar_current_time", "list_calendar_events"],
     "ask": ["check what day it is and show me my calendar from {time_min} to {time_max}",
             "figure out today's date and walk me through what's coming up on my calendar"]},
    {"tools": ["search_calendar_users", "find_calendar_free_slots", "create_calendar_event"],
     "ask": ["find {duration_minutes} when {query} and I are both free and book it as {event_title}",
             "look up {query}, find the first time we can both do, and put {event_title} on my calendar then"]},
    {"tools": ["list_bookable_rooms", "check_calendar_conflicts", "create_calendar_event"],
     "ask": ["book a room for {min_capacity} people from {start} to {end} and put {event_title} on my calendar",
             "find a free room for {event_title} from {start} to {end}, as long as I'm not busy then"]},
    {"tools": ["search_calendar_events", "update_calendar_event"],
     "ask": ["move my {query} meeting to {start} until {end}",
             "find the {query} meeting and change where it happens to {location}"]},
    {"tools": ["search_calendar_events", "cancel_calendar_event"],
     "ask": ["cancel the {query} meeting I set up",
             "find my {query} session and call it off"]},
    {"tools": ["search_calendar_events", "respond_to_calendar_invitation", "set_calendar_event_reminders"],
     "ask": ["answer the {query} invite as {response} and remind me {minutes_before} before it starts",
             "mark me {response} for the {query} meeting and set a reminder for it"]},
    {"tools": ["search_calendar_users", "search_calendar_events", "add_calendar_event_invitees"],
     "ask": ["look up {query} in the directory and add them to {event_id}",
             "invite {query} to {event_id}, you'll have to find their email first"]},
    {"tools": ["search_calendar_events", "get_calendar_event", "remove_calendar_event_invitee"],
     "ask": ["check who's coming to the {query} meeting and take {email} off the list",
             "pull up the guest list for {event_id} and uninvite {email}"]},
]
