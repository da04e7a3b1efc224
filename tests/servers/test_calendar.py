"""Calendar domain: tool count, state-dependent failures (state unchanged), recurrence
and time-relative workflows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from servers import PAPER_TOOL_COUNTS
from servers.banking import domain as banking
from servers.calendar import domain
from servers.calendar.rules import occurrences, parse_rule
from servers.kit import DomainRuntime, ToolError
from tests.servers.harness import fails, new_sid, ok, snapshot

NY = ZoneInfo("America/New_York")
SEED = 0  # every calendar test works in the seed-0 world


class World:
    """Handles on seed-0 entities found through discovery (never hard-coded ids)."""

    def __init__(self, rt: DomainRuntime, sid: str) -> None:
        self.users = ok(rt, sid, SEED, "calendar_list_users", {})
        self.events = ok(rt, sid, SEED, "calendar_list_all_events", {})
        self.rooms = ok(rt, sid, SEED, "list_bookable_rooms", {})
        self.org, self.a, self.b, self.c = self.users[:4]
        self.cal = self.org["calendars"][0]["calendar_id"]

    def where(self, **conds: Any) -> dict[str, Any]:
        return next(e for e in self.events if all(f(e) if callable(f) else e[k] == f for k, f in conds.items()))


def new_event(rt: DomainRuntime, sid: str, w: World, start: str, end: str, **extra: Any) -> dict[str, Any]:
    args = {"calendar_id": w.cal, "event_title": "Planning", "start": start, "end": end, "timezone": "UTC",
            "invitee_emails": [w.a["email"], w.b["email"]], **extra}
    return ok(rt, sid, SEED, "create_calendar_event", args)


# ---------------------------------------------------------------- contract
def test_tool_count_and_names(rt: DomainRuntime) -> None:
    users = [s for s in domain.tools.values() if s.kind == "user"]
    assert len(users) == PAPER_TOOL_COUNTS["calendar"] == 17
    assert len(rt.table.openai_tools()) == 17
    discovery = [s.name for s in domain.tools.values() if s.kind == "discovery"]
    assert 2 <= len(discovery) <= 4 and all(n.startswith("calendar_") for n in discovery)
    assert not set(domain.tools) & set(banking.tools)
    assert all(s.produces or s.consumes or s.requires for s in users)


# ---------------------------------------------------------------- failures leave state unchanged
def test_create_failures(rt: DomainRuntime) -> None:
    sid = new_sid()
    w = World(rt, sid)
    base = {"calendar_id": w.cal, "event_title": "Review", "timezone": "UTC"}
    fails(rt, sid, SEED, "create_calendar_event", {**base, "start": "2026-06-03T15:00", "end": "2026-06-03T14:00"},
          "end", "must be after start")
    fails(rt, sid, SEED, "create_calendar_event", {**base, "start": "2026-05-29T15:00", "end": "2026-05-29T16:00"},
          "start", "in the past")
    fails(rt, sid, SEED, "create_calendar_event", {**base, "start": "2026-06-03T15:00", "end": "2026-06-05T16:00"},
          "at most 24 hours")
    fails(rt, sid, SEED, "create_calendar_event", {**base, "start": "2026-06-03", "end": "2026-06-03T16:00"},
          "start", "no time of day")
    fails(rt, sid, SEED, "create_calendar_event", {**base, "calendar_id": "CAL-9999", "start": "2026-06-03T15:00",
                                                   "end": "2026-06-03T16:00"}, "unknown calendar_id")
    fails(rt, sid, SEED, "create_calendar_event", {**base, "timezone": "Mars/Olympus", "start": "2026-06-03T15:00",
                                                   "end": "2026-06-03T16:00"}, "unknown timezone")
    fails(rt, sid, SEED, "create_calendar_event", {**base, "start": "2026-06-03T15:00", "end": "2026-06-03T16:00",
                                                   "invitee_emails": ["nobody@nowhere.example"]},
          "invitee_emails", "is in the company directory")
    for rule, needle in [("FREQ=YEARLY", "unsupported FREQ"), ("FREQ=WEEKLY;COUNT=3;UNTIL=20260701", "COUNT and UNTIL"),
                         ("FREQ=MONTHLY;BYDAY=MO", "only supported with FREQ=WEEKLY"),
                         ("FREQ=WEEKLY;BYDAY=XX", "unknown day"), ("INTERVAL=2", "FREQ is required"),
                         ("FREQ=DAILY;UNTIL=20260501", "before the first occurrence"),
                         ("FREQ=DAILY;BYMONTH=3", "unsupported part"), ("FREQ=DAILY;COUNT=0", "COUNT must be")]:
        fails(rt, sid, SEED, "create_calendar_event", {**base, "start": "2026-06-03T15:00", "end": "2026-06-03T16:00",
                                                       "recurrence_rule": rule}, "invalid recurrence_rule", needle)
    fails(rt, sid, SEED, "create_calendar_event", {**base, "start": "2026-06-03T15:00", "end": "2026-06-03T16:00",
                                                   "surprise": 1}, "unexpected argument")


def test_room_double_booking_and_capacity(rt: DomainRuntime) -> None:
    sid = new_sid()
    w = World(rt, sid)
    booked = w.where(status="confirmed", recurrence=None, room_id=lambda e: e["room_id"] is not None,
                     next_occurrence=lambda e: e["next_occurrence"] is not None)
    detail = ok(rt, sid, SEED, "get_calendar_event", {"event_id": booked["event_id"], "timezone": "UTC"})
    fails(rt, sid, SEED, "create_calendar_event", {
        "calendar_id": w.cal, "event_title": "Overlap", "start": detail["start"], "end": detail["end"],
        "room_id": booked["room_id"]}, "room_id", "already booked", booked["event_id"])
    small = min(w.rooms, key=lambda r: r["capacity"])
    crowd = [u["email"] for u in w.users[1:small["capacity"] + 1]]
    fails(rt, sid, SEED, "create_calendar_event", {
        "calendar_id": w.cal, "event_title": "All hands", "start": "2026-06-20T15:00", "end": "2026-06-20T16:00",
        "timezone": "UTC", "room_id": small["room_id"], "invitee_emails": crowd}, "room_id", "seats")
    ev = new_event(rt, sid, w, "2026-06-20T15:00", "2026-06-20T16:00", room_id=small["room_id"],
                   invitee_emails=crowd[:small["capacity"] - 1])
    fails(rt, sid, SEED, "add_calendar_event_invitees", {"event_id": ev["event_id"], "user_id": w.org["user_id"],
                                                         "emails": [crowd[-1]]}, "emails", "would not fit")
    fails(rt, sid, SEED, "create_calendar_event", {
        "calendar_id": w.a["calendars"][0]["calendar_id"], "event_title": "Clash", "start": "2026-06-20T15:30",
        "end": "2026-06-20T16:30", "timezone": "UTC", "room_id": small["room_id"]}, "already booked", ev["event_id"])
    listed = ok(rt, sid, SEED, "list_bookable_rooms", {"available_from": "2026-06-20T15:00Z",
                                                       "available_to": "2026-06-20T16:00Z"})
    assert small["room_id"] not in {r["room_id"] for r in listed}


def test_organizer_and_past_rules(rt: DomainRuntime) -> None:
    sid = new_sid()
    w = World(rt, sid)
    past = w.where(status="confirmed", recurrence=None, next_occurrence=None,
                   attendees=lambda e: len(e["attendees"]) > 0)
    invitee = past["attendees"][0]["user_id"]
    fails(rt, sid, SEED, "update_calendar_event", {"event_id": past["event_id"], "user_id": past["organizer_id"],
                                                   "location": "Zoom"}, "past events cannot be changed")
    fails(rt, sid, SEED, "respond_to_calendar_invitation", {"event_id": past["event_id"], "user_id": invitee,
                                                            "response": "accepted"}, "past events")
    fails(rt, sid, SEED, "cancel_calendar_event", {"event_id": past["event_id"], "user_id": past["organizer_id"]},
          "past events")
    ev = new_event(rt, sid, w, "2026-06-10T15:00", "2026-06-10T16:00")
    fails(rt, sid, SEED, "update_calendar_event", {"event_id": ev["event_id"], "user_id": w.a["user_id"],
                                                   "location": "Zoom"}, "user_id", "is an invitee", "only the organizer")
    fails(rt, sid, SEED, "cancel_calendar_event", {"event_id": ev["event_id"], "user_id": w.c["user_id"]},
          "only the organizer", "not part of it")
    fails(rt, sid, SEED, "update_calendar_event", {"event_id": ev["event_id"], "user_id": w.org["user_id"]},
          "nothing to update")
    fails(rt, sid, SEED, "update_calendar_event", {"event_id": ev["event_id"], "user_id": w.org["user_id"],
                                                   "end": "2026-06-10T14:00Z"}, "end", "must be after start")
    fails(rt, sid, SEED, "update_calendar_event", {"event_id": ev["event_id"], "user_id": w.org["user_id"],
                                                   "start": "2026-05-30T10:00Z"}, "start", "in the past")
    fails(rt, sid, SEED, "update_calendar_event", {"event_id": ev["event_id"], "user_id": w.org["user_id"],
                                                   "occurrence_start": "2026-06-10", "location": "Zoom"}, "not recurring")
    fails(rt, sid, SEED, "update_calendar_event", {"event_id": "EVT-9999", "user_id": w.org["user_id"],
                                                   "location": "x"}, "unknown event_id")
    fails(rt, sid, SEED, "respond_to_calendar_invitation", {"event_id": ev["event_id"], "user_id": w.org["user_id"],
                                                            "response": "accepted"}, "organizers do not RSVP")
    fails(rt, sid, SEED, "respond_to_calendar_invitation", {"event_id": ev["event_id"], "user_id": w.c["user_id"],
                                                            "response": "accepted"}, "user_id", "not invited")
    fails(rt, sid, SEED, "add_calendar_event_invitees", {"event_id": ev["event_id"], "user_id": w.org["user_id"],
                                                         "emails": [w.a["email"]]}, "already invited")
    fails(rt, sid, SEED, "add_calendar_event_invitees", {"event_id": ev["event_id"], "user_id": w.org["user_id"],
                                                         "emails": ["ghost@example.org"]}, "emails", "directory")
    fails(rt, sid, SEED, "add_calendar_event_invitees", {"event_id": ev["event_id"], "user_id": w.org["user_id"],
                                                         "emails": [w.org["email"]]}, "emails", "is the organizer")
    fails(rt, sid, SEED, "remove_calendar_event_invitee", {"event_id": ev["event_id"], "user_id": w.org["user_id"],
                                                           "email": w.c["email"]}, "email", "not invited")
    fails(rt, sid, SEED, "remove_calendar_event_invitee", {"event_id": ev["event_id"], "user_id": w.org["user_id"],
                                                           "email": w.org["email"]}, "organizer and cannot be removed")
    fails(rt, sid, SEED, "set_calendar_event_reminders", {"event_id": ev["event_id"], "user_id": w.a["user_id"],
                                                          "minutes_before": [10, 10]}, "minutes_before", "twice")
    fails(rt, sid, SEED, "set_calendar_event_reminders", {"event_id": ev["event_id"], "user_id": w.c["user_id"],
                                                          "minutes_before": [10]}, "not part of")
    ok(rt, sid, SEED, "respond_to_calendar_invitation", {"event_id": ev["event_id"], "user_id": w.b["user_id"],
                                                         "response": "declined"})
    fails(rt, sid, SEED, "set_calendar_event_reminders", {"event_id": ev["event_id"], "user_id": w.b["user_id"],
                                                          "minutes_before": [10]}, "declined")
    ok(rt, sid, SEED, "cancel_calendar_event", {"event_id": ev["event_id"], "user_id": w.org["user_id"]})
    fails(rt, sid, SEED, "cancel_calendar_event", {"event_id": ev["event_id"], "user_id": w.org["user_id"]},
          "already cancelled")
    fails(rt, sid, SEED, "respond_to_calendar_invitation", {"event_id": ev["event_id"], "user_id": w.a["user_id"],
                                                            "response": "accepted"}, "is cancelled")


def test_series_failures(rt: DomainRuntime) -> None:
    sid = new_sid()
    w = World(rt, sid)
    started = w.where(status="confirmed", recurrence=lambda e: e["recurrence"] is not None,
                      last_occurrence=lambda e: e["last_occurrence"] is not None,
                      next_occurrence=lambda e: e["next_occurrence"] is not None)
    fails(rt, sid, SEED, "update_calendar_event", {"event_id": started["event_id"], "user_id": started["organizer_id"],
                                                   "start": "2026-07-01T10:00"}, "start", "apply_to_following=true")
    fails(rt, sid, SEED, "update_calendar_event", {"event_id": started["event_id"], "user_id": started["organizer_id"],
                                                   "occurrence_start": started["last_occurrence"], "location": "x"},
          "occurrence_start", "already started")
    fails(rt, sid, SEED, "update_calendar_event", {"event_id": started["event_id"], "user_id": started["organizer_id"],
                                                   "location": "x", "apply_to_following": True},
          "apply_to_following needs occurrence_start")
    series = new_event(rt, sid, w, "2026-06-08T15:00", "2026-06-08T15:30", recurrence_rule="FREQ=WEEKLY;COUNT=3")
    org = w.org["user_id"]
    fails(rt, sid, SEED, "cancel_calendar_event", {"event_id": series["event_id"], "user_id": org,
                                                   "occurrence_start": "2026-06-09T15:00Z"}, "occurrence_start",
          "no occurrence then")
    ok(rt, sid, SEED, "cancel_calendar_event", {"event_id": series["event_id"], "user_id": org,
                                                "occurrence_start": "2026-06-15"})
    fails(rt, sid, SEED, "cancel_calendar_event", {"event_id": series["event_id"], "user_id": org,
                                                   "occurrence_start": "2026-06-15T15:00:00+00:00"}, "already cancelled")
    moved = ok(rt, sid, SEED, "update_calendar_event", {"event_id": series["event_id"], "user_id": org,
                                                        "occurrence_start": "2026-06-22T15:00Z", "start": "2026-06-23T15:00Z"})
    fails(rt, sid, SEED, "cancel_calendar_event", {"event_id": series["event_id"], "user_id": org,
                                                   "occurrence_start": "2026-06-22T11:00-04:00"},
          "edited separately", moved["event"]["event_id"])


def test_query_failures(rt: DomainRuntime) -> None:
    sid = new_sid()
    w = World(rt, sid)
    other_cal = w.a["calendars"][0]["calendar_id"]
    fails(rt, sid, SEED, "list_calendar_events", {"user_id": w.org["user_id"], "time_min": "2026-06-01",
                                                  "time_max": "2026-06-02", "calendar_id": other_cal}, "calendar_id", "belongs to")
    fails(rt, sid, SEED, "list_calendar_events", {"user_id": w.org["user_id"], "time_min": "2026-06-01",
                                                  "time_max": "2026-12-31"}, "time_max", "at most 92 days")
    fails(rt, sid, SEED, "list_calendar_events", {"user_id": w.org["user_id"], "time_min": "2026-06-05",
                                                  "time_max": "2026-06-01T00:00"}, "time_max", "must be after")
    fails(rt, sid, SEED, "list_calendar_events", {"user_id": "USR-9999", "time_min": "2026-06-01",
                                                  "time_max": "2026-06-02"}, "unknown user_id")
    slots = {"emails": [w.org["email"]], "duration_minutes": 60}
    fails(rt, sid, SEED, "find_calendar_free_slots", {**slots, "date_from": "2026-05-01", "date_to": "2026-05-05"},
          "date_to", "in the past")
    fails(rt, sid, SEED, "find_calendar_free_slots", {**slots, "date_from": "2026-06-02", "date_to": "2026-07-30"},
          "date_to", "at most 14 days")
    fails(rt, sid, SEED, "find_calendar_free_slots", {**slots, "date_from": "2026-06-02", "date_to": "2026-06-03",
                                                      "day_start_hour": 9, "day_end_hour": 9}, "day_end_hour")
    fails(rt, sid, SEED, "find_calendar_free_slots", {**slots, "date_from": "2026-06-02", "date_to": "2026-06-03",
                                                      "duration_minutes": 240, "day_start_hour": 9, "day_end_hour": 12},
          "duration_minutes", "does not fit")
    fails(rt, sid, SEED, "get_calendar_free_busy", {"emails": [w.org["email"]], "time_min": "2026-06-01",
                                                    "time_max": "2026-07-15"}, "time_max", "at most 31 days")
    fails(rt, sid, SEED, "get_calendar_free_busy", {"emails": ["x@nowhere.example"], "time_min": "2026-06-01",
                                                    "time_max": "2026-06-02"}, "emails", "directory")
    fails(rt, sid, SEED, "get_calendar_free_busy", {"emails": ["x@y"], "time_min": "2026-06-01",
                                                    "time_max": "2026-06-02"}, "emails.0", "expected format")
    fails(rt, sid, SEED, "list_bookable_rooms", {"building": "Moonbase"}, "building", "known:")
    fails(rt, sid, SEED, "list_bookable_rooms", {"available_from": "2026-06-02T10:00Z"}, "available_to")
    fails(rt, sid, SEED, "get_calendar_current_time", {"timezone": "Nowhere/City"}, "unknown timezone")
    fails(rt, sid, SEED, "check_calendar_conflicts", {"user_id": w.org["user_id"], "start": "2026-06-02T10:00",
                                                      "end": "2026-06-02T09:00"}, "end", "must be after")


# ---------------------------------------------------------------- workflows
def test_invite_rsvp_and_free_busy_workflow(rt: DomainRuntime) -> None:
    sid = new_sid()
    w = World(rt, sid)
    ev = new_event(rt, sid, w, "2026-06-12T18:00", "2026-06-12T19:00", show_as="busy")
    window = {"time_min": "2026-06-12T18:00Z", "time_max": "2026-06-12T19:00Z"}

    def is_busy(email: str) -> bool:
        fb = ok(rt, sid, SEED, "get_calendar_free_busy", {"emails": [email], **window})
        return any(b["start"] <= "2026-06-12T18:00:00+00:00" < b["end"] for b in fb["calendars"][email]["busy"])

    assert is_busy(w.org["email"]) and is_busy(w.a["email"])
    ok(rt, sid, SEED, "respond_to_calendar_invitation", {"event_id": ev["event_id"], "user_id": w.a["user_id"],
                                                         "response": "declined", "comment": "On PTO"})
    got = ok(rt, sid, SEED, "get_calendar_event", {"event_id": ev["event_id"]})
    assert {a["email"]: a["response"] for a in got["attendees"]}[w.a["email"]] == "declined"
    agenda = ok(rt, sid, SEED, "list_calendar_events", {"user_id": w.a["user_id"], **window, "timezone": "UTC"})
    assert ev["event_id"] not in {e["event_id"] for e in agenda["events"]}
    agenda = ok(rt, sid, SEED, "list_calendar_events", {"user_id": w.a["user_id"], **window, "include_declined": True})
    assert ev["event_id"] in {e["event_id"] for e in agenda["events"]}
    ok(rt, sid, SEED, "add_calendar_event_invitees", {"event_id": ev["event_id"], "user_id": w.org["user_id"],
                                                      "emails": [w.c["email"]]})
    ok(rt, sid, SEED, "remove_calendar_event_invitee", {"event_id": ev["event_id"], "user_id": w.org["user_id"],
                                                        "email": w.b["email"]})
    got = ok(rt, sid, SEED, "get_calendar_event", {"event_id": ev["event_id"]})
    assert {a["email"]: a["response"] for a in got["attendees"]} == {w.a["email"]: "declined",
                                                                     w.c["email"]: "needs_action"}
    conflicts = ok(rt, sid, SEED, "check_calendar_conflicts", {"user_id": w.c["user_id"], "start": "2026-06-12T18:30Z",
                                                               "end": "2026-06-12T18:45Z"})
    assert ev["event_id"] in {c["event_id"] for c in conflicts["conflicts"]}
    moved = ok(rt, sid, SEED, "update_calendar_event", {"event_id": ev["event_id"], "user_id": w.org["user_id"],
                                                        "start": "2026-06-13T18:00Z"})
    assert moved["event"]["end"] == "2026-06-13T19:00:00+00:00"  # a lone new start keeps the duration


def test_recurrence_workflow(rt: DomainRuntime) -> None:
    sid = new_sid()
    w = World(rt, sid)
    org = w.org["user_id"]
    series = new_event(rt, sid, w, "2026-06-08T15:00", "2026-06-08T15:30", recurrence_rule="FREQ=WEEKLY;COUNT=5")

    def starts() -> list[tuple[str, str]]:
        agenda = ok(rt, sid, SEED, "list_calendar_events", {"user_id": w.a["user_id"], "time_min": "2026-06-01",
                                                            "time_max": "2026-07-31", "timezone": "UTC"})
        return [(e["start"][:16], e["title"]) for e in agenda["events"] if e["title"].startswith("Planning")]

    assert [s for s, _ in starts()] == [f"2026-{d}T15:00" for d in ("06-08", "06-15", "06-22", "06-29", "07-06")]
    ok(rt, sid, SEED, "cancel_calendar_event", {"event_id": series["event_id"], "user_id": org,
                                                "occurrence_start": "2026-06-15T15:00Z"})
    ok(rt, sid, SEED, "update_calendar_event", {"event_id": series["event_id"], "user_id": org,
                                                "occurrence_start": "2026-06-22", "event_title": "Planning (extended)",
                                                "end": "2026-06-22T16:00Z"})
    assert starts() == [("2026-06-08T15:00", "Planning"), ("2026-06-22T15:00", "Planning (extended)"),
                        ("2026-06-29T15:00", "Planning"), ("2026-07-06T15:00", "Planning")]
    split = ok(rt, sid, SEED, "update_calendar_event", {"event_id": series["event_id"], "user_id": org,
                                                        "occurrence_start": "2026-06-29T15:00Z", "apply_to_following": True,
                                                        "start": "2026-06-29T17:00Z"})
    assert split["updated"] == "following" and split["event"]["recurrence"] == "FREQ=WEEKLY;COUNT=2"
    assert ok(rt, sid, SEED, "get_calendar_event", {"event_id": series["event_id"]})["recurrence"] == "FREQ=WEEKLY;COUNT=3"
    assert [s for s, _ in starts()] == ["2026-06-08T15:00", "2026-06-22T15:00", "2026-06-29T17:00", "2026-07-06T17:00"]
    ok(rt, sid, SEED, "cancel_calendar_event", {"event_id": series["event_id"], "user_id": org})
    assert [s for s, _ in starts()] == ["2026-06-29T17:00", "2026-07-06T17:00"]  # the detached 06-22 went too
    ok(rt, sid, SEED, "set_calendar_event_reminders", {"event_id": split["event"]["event_id"], "user_id": w.a["user_id"],
                                                       "minutes_before": [30], "method": "email"})


def test_cancelling_a_started_series_keeps_history(rt: DomainRuntime) -> None:
    sid = new_sid()
    w = World(rt, sid)
    started = w.where(status="confirmed", recurrence=lambda e: e["recurrence"] is not None,
                      last_occurrence=lambda e: e["last_occurrence"] is not None,
                      next_occurrence=lambda e: e["next_occurrence"] is not None)
    out = ok(rt, sid, SEED, "cancel_calendar_event", {"event_id": started["event_id"], "user_id": started["organizer_id"]})
    assert out["cancelled"] == "remaining_occurrences"
    after = ok(rt, sid, SEED, "get_calendar_event", {"event_id": started["event_id"]})
    assert after["status"] == "confirmed" and after["upcoming_occurrences"] == []
    fails(rt, sid, SEED, "cancel_calendar_event", {"event_id": started["event_id"], "user_id": started["organizer_id"]},
          "no upcoming occurrences")


def test_relative_dates_and_free_slots(rt: DomainRuntime) -> None:
    sid = new_sid()
    w = World(rt, sid)
    clock = ok(rt, sid, SEED, "get_calendar_current_time", {"timezone": "America/New_York"})
    assert clock["today"] == "2026-06-01" and clock["weekday"] == "Monday" and clock["tomorrow"] == "2026-06-02"
    assert clock["next_week"] == {"start": "2026-06-08", "end": "2026-06-14"}
    day = clock["tomorrow"]
    agenda = ok(rt, sid, SEED, "list_calendar_events", {"user_id": w.org["user_id"], "time_min": day, "time_max": day})
    assert all(e["start"][:10] == day or e["end"][:10] == day for e in agenda["events"])
    emails = [w.org["email"], w.a["email"]]
    args = {"emails": emails, "duration_minutes": 30, "date_from": "2026-06-01", "date_to": "2026-06-05",
            "timezone": "America/New_York"}
    first = ok(rt, sid, SEED, "find_calendar_free_slots", args)["slots"][0]
    assert first["start"] >= "2026-06-01T09:00:00-04:00"  # never before "now" or the working day
    new_event(rt, sid, w, first["start"], first["end"])
    again = ok(rt, sid, SEED, "find_calendar_free_slots", args)["slots"]
    assert first not in again
    hits = ok(rt, sid, SEED, "search_calendar_events", {"user_id": w.a["user_id"], "query": "planning"})
    assert any(h["next_start"].startswith(first["start"][:10]) for h in hits)


def test_rules_dst_month_ends_and_sessions(rt: DomainRuntime) -> None:
    start = datetime(2026, 10, 26, 9, 30, tzinfo=NY)
    rule = parse_rule("FREQ=WEEKLY;COUNT=3", start, NY)
    local = [s.astimezone(NY).strftime("%m-%d %H:%M") for s, _ in
             occurrences(start, start + timedelta(minutes=30), NY, rule, start + timedelta(days=90))]
    assert local == ["10-26 09:30", "11-02 09:30", "11-09 09:30"]  # wall clock kept across the DST change
    jan31 = datetime(2027, 1, 31, 10, tzinfo=UTC)
    rule = parse_rule("RRULE:FREQ=MONTHLY;UNTIL=20270630", jan31, ZoneInfo("UTC"))
    months = [s.month for s, _ in occurrences(jan31, jan31 + timedelta(hours=1), ZoneInfo("UTC"), rule,
                                              jan31 + timedelta(days=400))]
    assert months == [1, 3, 5]  # months without a 31st are skipped
    with pytest.raises(ToolError):
        parse_rule("FREQ=WEEKLY;INTERVAL=0", jan31, ZoneInfo("UTC"))
    one, two = new_sid(), new_sid()
    w = World(rt, one)
    new_event(rt, one, w, "2026-06-12T18:00", "2026-06-12T19:00")
    assert snapshot(rt, one, 0) != snapshot(rt, two, 0)
    assert rt.call("calendar_session_diff", {}, two, 0).json() == {}
    assert list(rt.call("calendar_session_diff", {}, one, 0).json()["events"]["added"]) == ["EVT-N-0001"]


# ---------------------------------------------------------------- the session clock
def test_events_pass_into_the_past_as_the_clock_moves(rt: DomainRuntime) -> None:
    sid = new_sid()
    w = World(rt, sid)
    ev = new_event(rt, sid, w, "2026-06-01T10:00", "2026-06-01T10:30")
    eid, org = ev["event_id"], w.org["user_id"]
    ok(rt, sid, SEED, "update_calendar_event", {"event_id": eid, "user_id": org, "location": "Room 1"})
    assert ok(rt, sid, SEED, "get_calendar_current_time", {})["now_utc"].startswith("2026-06-01T09:0")
    ok(rt, sid, SEED, "calendar_session_advance_clock", {"minutes": 70})  # 10:1x: the meeting is under way
    fails(rt, sid, SEED, "update_calendar_event", {"event_id": eid, "user_id": org, "location": "Room 2"},
          "already started", "past events cannot be changed")
    ok(rt, sid, SEED, "calendar_session_advance_clock", {"minutes": 30})  # 10:4x: it is over
    fails(rt, sid, SEED, "cancel_calendar_event", {"event_id": eid, "user_id": org}, "ended", "past events")
    fails(rt, sid, SEED, "respond_to_calendar_invitation", {"event_id": eid, "user_id": w.a["user_id"],
                                                            "response": "accepted"}, "past events")
    listed = {e["event_id"]: e for e in ok(rt, sid, SEED, "calendar_list_all_events", {"organizer_id": org})}
    assert listed[eid]["next_occurrence"] is None and listed[eid]["last_occurrence"] is not None
    assert ok(rt, sid, SEED, "get_calendar_current_time", {})["now_utc"].startswith("2026-06-01T10:4")
    # a series keeps its future: its started occurrences are history, the next one is still editable
    series = new_event(rt, sid, w, "2026-06-01T11:00", "2026-06-01T11:30", recurrence_rule="FREQ=DAILY;COUNT=3")
    ok(rt, sid, SEED, "calendar_session_advance_clock", {"minutes": 24 * 60})
    fails(rt, sid, SEED, "update_calendar_event", {"event_id": series["event_id"], "user_id": org,
                                                   "occurrence_start": "2026-06-01T11:00Z", "location": "x"},
          "occurrence_start", "already started")
    moved = ok(rt, sid, SEED, "update_calendar_event", {"event_id": series["event_id"], "user_id": org,
                                                        "occurrence_start": "2026-06-03T11:00Z", "location": "Lab"})
    assert moved["updated"] == "occurrence"


def test_replaying_the_same_calls_gives_the_same_state(rt: DomainRuntime) -> None:
    snaps = []
    for _ in range(2):
        sid = new_sid()
        w = World(rt, sid)
        ev = new_event(rt, sid, w, "2026-06-02T15:00", "2026-06-02T16:00")
        ok(rt, sid, SEED, "calendar_session_advance_clock", {"minutes": 95})
        ok(rt, sid, SEED, "respond_to_calendar_invitation", {"event_id": ev["event_id"], "user_id": w.a["user_id"],
                                                             "response": "tentative"})
        snaps.append(snapshot(rt, sid, 0))
    assert snaps[0] == snaps[1]


# ---------------------------------------------------------------- video-meeting links
def test_conference_url_is_stored_returned_and_validated(rt: DomainRuntime) -> None:
    sid = new_sid()
    w = World(rt, sid)
    url = "https://meet.prove.example/j/MTG-0001"
    ev = new_event(rt, sid, w, "2026-06-05T15:00", "2026-06-05T16:00", conference_url=url)
    assert ev["conference_url"] == url
    assert ok(rt, sid, SEED, "get_calendar_event", {"event_id": ev["event_id"]})["conference_url"] == url
    agenda = ok(rt, sid, SEED, "list_calendar_events", {"user_id": w.a["user_id"], "time_min": "2026-06-05",
                                                        "time_max": "2026-06-05", "timezone": "UTC"})
    assert {e["event_id"]: e["conference_url"] for e in agenda["events"]}[ev["event_id"]] == url
    other = "https://meet.prove.example/j/MTG-0042"
    out = ok(rt, sid, SEED, "update_calendar_event", {"event_id": ev["event_id"], "user_id": w.org["user_id"],
                                                      "conference_url": other})
    assert out["event"]["conference_url"] == other
    plain = new_event(rt, sid, w, "2026-06-06T15:00", "2026-06-06T16:00")
    assert plain["conference_url"] is None
    for bad in ("https://zoom.us/j/123456", "http://meet.prove.example/j/MTG-0001",
                "https://meet.prove.example/j/ABC-0001", "https://meet.prove.example/j/MTG-0001?pwd=x",
                "meet.prove.example/j/MTG-0001", "https://meet.prove.example/j/MTG-N-0001",
                "https://meet.prove.example/j/mtg-0001"):
        fails(rt, sid, SEED, "create_calendar_event", {"calendar_id": w.cal, "event_title": "Sync", "timezone": "UTC",
                                                       "start": "2026-06-07T15:00", "end": "2026-06-07T16:00",
                                                       "conference_url": bad}, "conference_url")
        fails(rt, sid, SEED, "update_calendar_event", {"event_id": ev["event_id"], "user_id": w.org["user_id"],
                                                       "conference_url": bad}, "conference_url")
    # a detached occurrence keeps the series' link
    series = new_event(rt, sid, w, "2026-06-08T15:00", "2026-06-08T15:30", recurrence_rule="FREQ=WEEKLY;COUNT=3",
                       conference_url=url)
    one = ok(rt, sid, SEED, "update_calendar_event", {"event_id": series["event_id"], "user_id": w.org["user_id"],
                                                      "occurrence_start": "2026-06-15", "location": "HQ"})
    assert one["event"]["conference_url"] == url


# ---------------------------------------------------------------- layout: listing order and tool modules
USER_TOOL_ORDER = [
    "get_calendar_current_time", "search_calendar_users", "list_calendars", "list_calendar_events",
    "search_calendar_events", "get_calendar_event", "get_calendar_free_busy", "find_calendar_free_slots",
    "check_calendar_conflicts", "list_bookable_rooms", "create_calendar_event", "update_calendar_event",
    "cancel_calendar_event", "add_calendar_event_invitees", "remove_calendar_event_invitee",
    "respond_to_calendar_invitation", "set_calendar_event_reminders",
]


def test_user_tool_order_is_pinned() -> None:
    """The listing order the model sees is pinned (where each tool lives is checked for every domain
    by ``test_contract``)."""
    assert [t.name for t in domain.user_tools] == USER_TOOL_ORDER
