"""Video meeting records, the session state, shared rules, the clock hook and the JSON views.

A meeting's join link is always ``https://meet.prove.example/j/<meeting_id>`` (see :func:`join_url`);
the calendar domain accepts exactly that form as an event's ``conference_url``. All times are UTC.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from servers.kit import Cell, Counters, State, Table, ToolError, iso, new_id, require

JOIN_URL_PREFIX = "https://meet.prove.example/j/"
RECORDING_URL_PREFIX = "https://meet.prove.example/rec/"
PLAN_CAPACITY = {"basic": 100, "pro": 100, "business": 300}
PLAN_RECORDING = {"basic": False, "pro": True, "business": True}


def join_url(meeting_id: str) -> str:
    """The one join-link format (the calendar domain's ``conference_url`` accepts it)."""
    return f"{JOIN_URL_PREFIX}{meeting_id}"


@dataclass
class User:
    user_id: str
    name: str
    email: str
    plan: str  # basic | pro | business
    department: str


@dataclass
class Participant:
    participant_id: str
    name: str
    email: str
    user_id: str | None  # None for guests from outside the organisation
    role: str  # host | co_host | attendee
    state: str  # waiting | in_meeting | left | removed
    muted: bool
    joined_at: str | None = None
    left_at: str | None = None


@dataclass
class Meeting:
    meeting_id: str
    topic: str
    host_user_id: str
    kind: str  # scheduled | instant
    agenda: str
    start_at: str
    duration_minutes: int
    passcode: str
    waiting_room: bool
    max_participants: int
    mute_on_entry: bool
    invitees: list[str]
    status: str  # scheduled | live | ended | missed | cancelled
    created_at: str
    locked: bool = False
    started_at: str | None = None
    ends_at: str | None = None  # when a live meeting ends by itself
    ended_at: str | None = None
    participants: list[Participant] = field(default_factory=list)
    recording_since: str | None = None  # a recording is running since then
    recorded_segments: list[list[str]] = field(default_factory=list)  # [start, stop] pairs


@dataclass
class Recording:
    recording_id: str
    meeting_id: str
    host_user_id: str
    topic: str
    started_at: str
    ended_at: str
    duration_minutes: int
    size_mb: float
    status: str  # available | deleted
    shared_with: list[str]
    share_url: str | None
    created_at: str
    deleted_at: str | None = None


class MeetingState(State):
    users: Table[User]
    meetings: Table[Meeting]
    recordings: Table[Recording]
    counters: Cell[Counters]


# ---------------------------------------------------------------- lookups and rules
def dt(text: str) -> datetime:
    return datetime.fromisoformat(text)


def get_meeting(s: MeetingState, meeting_id: str) -> Meeting:
    return require(s.meetings, meeting_id, "meeting_id")


def get_recording(s: MeetingState, recording_id: str) -> Recording:
    return require(s.recordings, recording_id, "recording_id")


def user_by_email(s: MeetingState, email: str, field: str = "requester_email") -> User:
    key = email.strip().lower()
    for u in s.users.values():
        if u.email == key:
            return u
    raise ToolError(f"no account with email '{email}' in this organisation", field=field, code="not_found")


def find_user(s: MeetingState, email: str) -> User | None:
    key = email.strip().lower()
    return next((u for u in s.users.values() if u.email == key), None)


def is_host(s: MeetingState, m: Meeting, email: str) -> bool:
    return s.users[m.host_user_id].email == email.strip().lower()


def require_host(s: MeetingState, m: Meeting, email: str, doing: str) -> None:
    if not is_host(s, m, email):
        host = s.users[m.host_user_id]
        raise ToolError(f"only the host ({host.name}) can {doing} meeting {m.meeting_id}; {email} is not the host",
                        field="requester_email", code="not_host")


def require_controller(s: MeetingState, m: Meeting, email: str, doing: str) -> Participant | None:
    """The host (in the meeting or not) or a co-host who is in the meeting; else a not_host error."""
    if is_host(s, m, email):
        return participant_by_email(m, email)
    p = participant_by_email(m, email)
    if p is not None and p.role == "co_host" and p.state == "in_meeting":
        return p
    raise ToolError(f"only the host or a co-host in the meeting can {doing}; {email} is not", field="requester_email",
                    code="not_host")


def participant_by_email(m: Meeting, email: str) -> Participant | None:
    key = email.strip().lower()
    return next((p for p in m.participants if p.email == key), None)


def participant(m: Meeting, participant_id: str) -> Participant:
    p = next((p for p in m.participants if p.participant_id == participant_id), None)
    if p is None:
        raise ToolError(f"participant {participant_id} is not in meeting {m.meeting_id}", field="participant_id",
                        code="not_found")
    return p


def require_live(m: Meeting, doing: str) -> None:
    if m.status == "live":
        return
    why = {"scheduled": f"has not started yet (scheduled for {m.start_at}); the host must start it first",
           "ended": f"already ended at {m.ended_at}", "missed": "was never started and its time has passed",
           "cancelled": "was cancelled"}[m.status]
    raise ToolError(f"cannot {doing}: meeting {m.meeting_id} {why}", field="meeting_id", code=f"meeting_{m.status}")


def in_meeting(m: Meeting) -> list[Participant]:
    return [p for p in m.participants if p.state == "in_meeting"]


def live_hosted_by(s: MeetingState, user_id: str) -> Meeting | None:
    return next((m for m in s.meetings.values() if m.host_user_id == user_id and m.status == "live"), None)


def make_passcode(meeting_id: str, salt: str) -> str:
    """A deterministic six-digit passcode for a meeting created in a session (no randomness at run time)."""
    digest = hashlib.sha256(f"{meeting_id}|{salt}".encode()).hexdigest()
    return f"{int(digest[:12], 16) % 1_000_000:06d}"


def scheduled_end(m: Meeting) -> datetime:
    return dt(m.start_at) + timedelta(minutes=m.duration_minutes)


def finish(s: MeetingState, meeting_id: str, at: datetime) -> list[str]:
    """End a live meeting at ``at``: everyone leaves, a running recording stops, and the recorded
    segments become one recording file. Returns the new recording ids."""
    m = s.meetings.edit(meeting_id)
    stamp = iso(at)
    for p in m.participants:
        if p.state in ("in_meeting", "waiting"):
            p.state, p.left_at = "left", stamp
    if m.recording_since is not None:
        m.recorded_segments.append([m.recording_since, stamp])
        m.recording_since = None
    m.status, m.ended_at, m.locked = "ended", stamp, False
    if not m.recorded_segments:
        return []
    minutes = sum(max(1, round((dt(b) - dt(a)).total_seconds() / 60)) for a, b in m.recorded_segments)
    rid = new_id(s.counters, "REC")
    s.recordings.put(rid, Recording(
        rid, m.meeting_id, m.host_user_id, m.topic, m.recorded_segments[0][0], m.recorded_segments[-1][1], minutes,
        round(minutes * 11.5 + len(m.recorded_segments) * 3.2, 1), "available", [], None, stamp))
    return [rid]


def on_time(s: MeetingState, before: datetime, after: datetime) -> None:
    """Live meetings end at their planned end (recordings appear then); scheduled meetings nobody
    started by their scheduled end become missed."""
    for key in list(s.meetings.keys()):
        m = s.meetings[key]
        if m.status == "live" and m.ends_at and dt(m.ends_at) <= after:
            finish(s, key, dt(m.ends_at))
        elif m.status == "scheduled" and scheduled_end(m) <= after:
            s.meetings.edit(key).status = "missed"


# ---------------------------------------------------------------- views
def participant_view(p: Participant) -> dict:
    return {"participant_id": p.participant_id, "name": p.name, "email": p.email, "role": p.role, "state": p.state,
            "muted": p.muted, "guest": p.user_id is None, "joined_at": p.joined_at, "left_at": p.left_at}


def meeting_view(s: MeetingState, m: Meeting, *, with_passcode: bool = False,
                 with_participants: bool = True) -> dict:
    host = s.users[m.host_user_id]
    out = {
        "meeting_id": m.meeting_id, "topic": m.topic, "kind": m.kind, "status": m.status,
        "host": {"user_id": host.user_id, "name": host.name, "email": host.email},
        "start_at": m.start_at, "duration_minutes": m.duration_minutes,
        "scheduled_end_at": iso(scheduled_end(m)), "join_url": join_url(m.meeting_id),
        "waiting_room": m.waiting_room, "mute_on_entry": m.mute_on_entry, "locked": m.locked,
        "max_participants": m.max_participants, "invitees": list(m.invitees), "agenda": m.agenda,
        "started_at": m.started_at, "ends_at": m.ends_at if m.status == "live" else None, "ended_at": m.ended_at,
        "in_meeting_count": len(in_meeting(m)),
        "waiting_count": sum(1 for p in m.participants if p.state == "waiting"),
        "recording": {"active": m.recording_since is not None, "since": m.recording_since,
                      "segments": len(m.recorded_segments)},
    }
    if with_participants:
        out["participants"] = [participant_view(p) for p in m.participants]
    if with_passcode:
        out["passcode"] = m.passcode
    return out


def recording_view(s: MeetingState, r: Recording) -> dict:
    return {"recording_id": r.recording_id, "meeting_id": r.meeting_id, "topic": r.topic,
            "host_email": s.users[r.host_user_id].email, "started_at": r.started_at, "ended_at": r.ended_at,
            "duration_minutes": r.duration_minutes, "size_mb": r.size_mb, "file_type": "mp4", "status": r.status,
            "shared_with": list(r.shared_with), "share_url": r.share_url, "created_at": r.created_at,
            "deleted_at": r.deleted_at}



