"""Calendar smoke scenario: a realistic session that succeeds with every user-visible tool once.

An assistant schedules a review meeting and a short weekly check-in for one person: it resolves
"tomorrow" and "next week" from the service clock, looks colleagues up, finds a slot when everyone and
a room are free, books both events, and then exercises RSVPs, invitee changes, reminders, editing and
cancelling single occurrences, search and free/busy. ``call(name, args)`` asserts success and returns
the decoded JSON result.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


async def smoke(call: Call) -> None:
    users = await call("calendar_list_users", {})
    org, mates = users[0], users[1:4]
    now = await call("get_calendar_current_time", {"user_id": org["user_id"]})
    found = await call("search_calendar_users", {"query": mates[0]["name"].split()[-1]})
    assert any(u["email"] == mates[0]["email"] for u in found)
    cals = await call("list_calendars", {"user_id": org["user_id"]})
    primary = next(c for c in cals if c["is_primary"])
    rooms = await call("list_bookable_rooms", {"min_capacity": 4})
    room = rooms[0]
    emails = [org["email"], mates[0]["email"], mates[1]["email"]]
    search = await call("find_calendar_free_slots", {
        "emails": emails, "duration_minutes": 60, "date_from": now["tomorrow"], "date_to": now["next_week"]["end"],
        "room_id": room["room_id"], "max_results": 10})
    first = search["slots"][0]
    second = next(s for s in search["slots"] if s["start"] >= first["end"])
    clash = await call("check_calendar_conflicts", {"user_id": org["user_id"], "start": first["start"],
                                                    "end": first["end"], "room_id": room["room_id"]})
    assert not clash["has_conflicts"]
    meeting = await call("create_calendar_event", {
        "calendar_id": primary["calendar_id"], "event_title": "Vendor shortlist review", "start": first["start"],
        "end": first["end"], "invitee_emails": emails[1:], "room_id": room["room_id"],
        "description": "Compare the three shortlisted vendors and pick one."})
    series = await call("create_calendar_event", {
        "calendar_id": primary["calendar_id"], "event_title": "Pipeline check-in", "start": second["start"],
        "end": second["end"], "invitee_emails": [mates[0]["email"]], "recurrence_rule": "FREQ=WEEKLY;COUNT=4"})
    detail = await call("get_calendar_event", {"event_id": series["event_id"]})
    occurrences = detail["upcoming_occurrences"]
    assert len(occurrences) == 4
    day = first["start"][:10]
    agenda = await call("list_calendar_events", {"user_id": mates[0]["user_id"], "time_min": day, "time_max": day})
    assert any(e["event_id"] == meeting["event_id"] for e in agenda["events"])
    await call("respond_to_calendar_invitation", {"event_id": meeting["event_id"], "user_id": mates[0]["user_id"],
                                                  "response": "accepted", "comment": "Will bring the cost sheet"})
    await call("add_calendar_event_invitees", {"event_id": meeting["event_id"], "user_id": org["user_id"],
                                               "emails": [mates[2]["email"]]})
    await call("remove_calendar_event_invitee", {"event_id": meeting["event_id"], "user_id": org["user_id"],
                                                 "email": mates[1]["email"]})
    await call("set_calendar_event_reminders", {"event_id": meeting["event_id"], "user_id": mates[0]["user_id"],
                                                "minutes_before": [60, 15]})
    moved = await call("update_calendar_event", {
        "event_id": series["event_id"], "user_id": org["user_id"], "occurrence_start": occurrences[1]["start"],
        "event_title": "Pipeline check-in (quarter close)", "location": "Google Meet"})
    assert moved["updated"] == "occurrence"
    await call("cancel_calendar_event", {"event_id": series["event_id"], "user_id": org["user_id"],
                                         "occurrence_start": occurrences[2]["start"]})
    hits = await call("search_calendar_events", {"user_id": org["user_id"], "query": "pipeline"})
    assert {h["event_id"] for h in hits} >= {series["event_id"], moved["event"]["event_id"]}
    busy = await call("get_calendar_free_busy", {"emails": emails[:2], "time_min": day, "time_max": day})
    assert busy["calendars"][org["email"]]["busy"]
