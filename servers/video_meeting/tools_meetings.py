"""Meeting lifecycle tools: schedule (or start instantly), list, start, and end or call off."""

from __future__ import annotations

from datetime import UTC, timedelta
from typing import Annotated, Literal

from pydantic import Field

from servers.kit import (
    EmailAddress,
    IsoDate,
    IsoDateTime,
    Name,
    Sensitive,
    Text,
    ToolError,
    iso,
    new_id,
    now,
    parse_datetime,
    tool,
)
from servers.video_meeting.state import (
    PLAN_CAPACITY,
    Meeting,
    MeetingState,
    Participant,
    dt,
    find_user,
    finish,
    get_meeting,
    is_host,
    live_hosted_by,
    make_passcode,
    meeting_view,
    require_host,
    scheduled_end,
    user_by_email,
)

Passcode = Annotated[Sensitive, Field(pattern=r"^[A-Za-z0-9]{4,10}$")]
Minutes = Annotated[int, Field(ge=15, le=480)]
MeetingStatus = Literal["scheduled", "live", "ended", "missed", "cancelled"]


def host_participant(s: MeetingState, m: Meeting, at: str) -> Participant:
    host = s.users[m.host_user_id]
    return Participant(new_id(s.counters, "PTC"), host.name, host.email, host.user_id, "host", "in_meeting", False, at)


@tool(produces=("meeting_id",), establishes=("meeting_scheduled",))
def schedule_video_meeting(s: MeetingState, requester_email: EmailAddress, topic: Name,
                           start_time: IsoDateTime | None = None, duration_minutes: Minutes = 60,
                           passcode: Passcode | None = None, waiting_room: bool = False,
                           mute_on_entry: bool = False,
                           max_participants: Annotated[int, Field(ge=2, le=300)] | None = None,
                           invitee_emails: Annotated[list[EmailAddress], Field(max_length=50)] | None = None,
                           agenda: Text | None = None) -> dict:
    """Schedule a video meeting hosted by the requester, or start one right away when no start time is
    given (an instant meeting, live with the host in it). Returns the join link
    (https://meet.prove.example/j/<meeting_id>) and the passcode guests need; a passcode is generated if
    none is given. A host cannot have two meetings at the same time.

    Args:
        requester_email: Email of the organisation member who will host.
        topic: Meeting title.
        start_time: Start, YYYY-MM-DDTHH:MM (UTC unless an offset is given); omit to start now.
        duration_minutes: Planned length; a live meeting ends by itself when it is over.
        passcode: Passcode guests must enter (4-10 letters or digits).
        waiting_room: Hold joiners in a waiting room until the host admits them.
        mute_on_entry: Mute participants when they join.
        max_participants: Capacity (at most what the host's plan allows).
        invitee_emails: People to invite.
        agenda: Agenda or description.
    """
    host = user_by_email(s, requester_email)
    at = now(s)
    cap = PLAN_CAPACITY[host.plan]
    if max_participants is not None and max_participants > cap:
        raise ToolError(f"{host.name}'s {host.plan} plan allows at most {cap} participants", field="max_participants",
                        code="plan_limit")
    if start_time is None:
        start, kind = at, "instant"
        busy = live_hosted_by(s, host.user_id)
        if busy is not None:
            raise ToolError(f"{host.name} is already hosting live meeting {busy.meeting_id} ('{busy.topic}'); end it "
                            "first", field="requester_email", code="host_busy")
    else:
        start, kind = parse_datetime(start_time, "start_time").astimezone(UTC), "scheduled"
        if start < at:
            raise ToolError(f"start_time {start_time} is in the past (now {iso(at)}); omit it to start now",
                            field="start_time", code="date_in_past")
        if start > at + timedelta(days=365):
            raise ToolError("start_time is more than a year ahead", field="start_time")
    end = start + timedelta(minutes=duration_minutes)
    for other in s.meetings.values():
        if other.host_user_id != host.user_id or other.status not in ("scheduled", "live"):
            continue
        o_start = dt(other.started_at or other.start_at)
        o_end = dt(other.ends_at) if other.status == "live" and other.ends_at else scheduled_end(other)
        if start < o_end and o_start < end:
            raise ToolError(f"{host.name} already hosts '{other.topic}' ({other.meeting_id}) from {iso(o_start)} to "
                            f"{iso(o_end)}; pick another time", field="start_time", code="conflict")
    invitees = sorted({e.lower() for e in invitee_emails or []} - {host.email})
    mid = new_id(s.counters, "MTG")
    m = Meeting(mid, topic.strip(), host.user_id, kind, agenda or "", iso(start), duration_minutes,
                passcode or make_passcode(mid, iso(at)), waiting_room, max_participants or cap, mute_on_entry,
                invitees, "scheduled", iso(at))
    if kind == "instant":
        m.status, m.started_at, m.ends_at = "live", iso(at), iso(end)
        m.participants.append(host_participant(s, m, iso(at)))
    s.meetings.put(mid, m)
    return meeting_view(s, m, with_passcode=True)


@tool(produces=("meeting_id",), read_only=True)
def list_video_meetings(s: MeetingState, user_email: EmailAddress | None = None, status: MeetingStatus | None = None,
                        from_date: IsoDate | None = None, to_date: IsoDate | None = None,
                        limit: Annotated[int, Field(ge=1, le=100)] = 25) -> list:
    """Meetings in start-time order, optionally only those a person hosts, is invited to or took part
    in, only one status, or only those starting within a date range. The host sees the passcode.

    Args:
        user_email: Only meetings this person hosts, is invited to or joined.
        status: Only meetings in this state (scheduled, live, ended, missed, cancelled).
        from_date: Only meetings starting on or after this day, YYYY-MM-DD.
        to_date: Only meetings starting on or before this day, YYYY-MM-DD.
        limit: Maximum number of meetings.
    """
    if from_date and to_date and to_date < from_date:
        raise ToolError("to_date is before from_date", field="to_date")
    who = user_email.strip().lower() if user_email else None
    rows = []
    for m in s.meetings.values():
        if status is not None and m.status != status:
            continue
        day = m.start_at[:10]
        if (from_date and day < from_date) or (to_date and day > to_date):
            continue
        host = who is not None and is_host(s, m, who)
        if who is not None and not host and who not in m.invitees and all(p.email != who for p in m.participants):
            continue
        view = meeting_view(s, m, with_passcode=host, with_participants=False)
        view["your_role"] = ("host" if host else "invitee" if who in m.invitees else "participant") if who else None
        rows.append(view)
    if who is not None and not rows and find_user(s, who) is None:
        raise ToolError(f"no account or meeting found for '{user_email}'", field="user_email", code="not_found")
    rows.sort(key=lambda r: (r["start_at"], r["meeting_id"]))
    return rows[:limit]


@tool(consumes=("meeting_id",), requires=("meeting_scheduled",), establishes=("meeting_live",))
def start_video_meeting(s: MeetingState, meeting_id: str, requester_email: EmailAddress) -> dict:
    """Start a scheduled meeting now (host only); the host joins it and it runs for its planned
    duration. A meeting that ended, was cancelled or was missed cannot be started again.

    Args:
        meeting_id: The scheduled meeting.
        requester_email: Email of the person starting it (must be the host).
    """
    m = get_meeting(s, meeting_id)
    require_host(s, m, requester_email, "start")
    if m.status != "scheduled":
        why = {"live": "is already live", "ended": f"already ended at {m.ended_at}; schedule a new one",
               "missed": "was never started and its time has passed; schedule a new one",
               "cancelled": "was cancelled"}[m.status]
        raise ToolError(f"meeting {m.meeting_id} {why}", field="meeting_id", code=f"meeting_{m.status}")
    busy = live_hosted_by(s, m.host_user_id)
    if busy is not None:
        raise ToolError(f"the host is already in live meeting {busy.meeting_id} ('{busy.topic}'); end it first",
                        field="meeting_id", code="host_busy")
    at = now(s)
    m = s.meetings.edit(meeting_id)
    m.status, m.started_at = "live", iso(at)
    m.ends_at = iso(max(scheduled_end(m), at + timedelta(minutes=m.duration_minutes)))
    m.participants.append(host_participant(s, m, iso(at)))
    return meeting_view(s, m, with_passcode=True)


@tool(consumes=("meeting_id",), requires=("meeting_live",), produces=("recording_id",),
      establishes=("meeting_ended",))
def end_video_meeting(s: MeetingState, meeting_id: str, requester_email: EmailAddress) -> dict:
    """End a live meeting for everyone (host only): all participants leave and, if it was recorded, the
    recording file becomes available. A scheduled meeting that has not started is called off instead.

    Args:
        meeting_id: The meeting.
        requester_email: Email of the person ending it (must be the host).
    """
    m = get_meeting(s, meeting_id)
    require_host(s, m, requester_email, "end")
    if m.status == "scheduled":
        s.meetings.edit(meeting_id).status = "cancelled"
        return {**meeting_view(s, s.meetings[meeting_id]), "recording_ids": []}
    if m.status != "live":
        raise ToolError(f"meeting {m.meeting_id} is already {m.status}", field="meeting_id", code=f"meeting_{m.status}")
    recs = finish(s, meeting_id, now(s))
    return {**meeting_view(s, s.meetings[meeting_id]), "recording_ids": recs}
