"""In-meeting tools: join, leave, host controls and cloud recording — only while a meeting is live."""

from __future__ import annotations

from typing import Literal

from servers.kit import EmailAddress, Name, ToolError, iso, new_id, now, tool
from servers.video_meeting.state import (
    PLAN_RECORDING,
    MeetingState,
    Participant,
    find_user,
    finish,
    get_meeting,
    in_meeting,
    is_host,
    meeting_view,
    participant,
    participant_by_email,
    participant_view,
    require_controller,
    require_live,
)
from servers.video_meeting.tools_meetings import Passcode

HostAction = Literal["lock", "unlock", "mute_all", "admit_all", "admit", "mute", "unmute", "remove", "make_co_host"]
PER_PARTICIPANT = ("admit", "mute", "unmute", "remove", "make_co_host")


@tool(consumes=("meeting_id",), requires=("meeting_live",), produces=("participant_id",))
def join_video_meeting(s: MeetingState, meeting_id: str, name: Name, email: EmailAddress,
                       passcode: Passcode | None = None) -> dict:
    """Join a live meeting as a participant (guests from outside the organisation too). Needs the
    meeting's passcode unless you are its host; fails if the meeting has not started or has ended, is
    locked or is full. With the waiting room on, joiners wait until the host admits them.

    Args:
        meeting_id: The meeting (the last part of its join link).
        name: Display name in the meeting.
        email: The joiner's email address.
        passcode: The meeting passcode from the invitation.
    """
    m = get_meeting(s, meeting_id)
    require_live(m, "join")
    host = is_host(s, m, email)
    if not host and passcode != m.passcode:
        raise ToolError("wrong passcode for this meeting" if passcode else "this meeting needs a passcode",
                        field="passcode", code="wrong_passcode")
    key = email.strip().lower()
    existing = participant_by_email(m, key)
    if existing is not None and existing.state in ("in_meeting", "waiting"):
        raise ToolError(f"{key} is already {existing.state.replace('_', ' ')} ({existing.participant_id})",
                        field="email", code="already_joined")
    if existing is not None and existing.state == "removed":
        raise ToolError(f"{key} was removed from this meeting by the host and cannot rejoin", field="email",
                        code="removed")
    if m.locked and not host:
        raise ToolError(f"meeting {m.meeting_id} is locked by the host; no one new can join", field="meeting_id",
                        code="locked")
    waits = m.waiting_room and not host and not (existing is not None and existing.role == "co_host")
    if not waits and len(in_meeting(m)) >= m.max_participants:
        raise ToolError(f"meeting {m.meeting_id} is full ({m.max_participants} of {m.max_participants} "
                        "participants)", field="meeting_id", code="full")
    at = iso(now(s))
    m = s.meetings.edit(meeting_id)
    state = "waiting" if waits else "in_meeting"
    if existing is not None:
        p = participant_by_email(m, key)
        p.state, p.joined_at, p.left_at, p.name = state, at, None, name.strip()
    else:
        user = find_user(s, key)
        p = Participant(new_id(s.counters, "PTC"), name.strip(), key, user.user_id if user else None,
                        "host" if host else "attendee", state, m.mute_on_entry and not host, at)
        m.participants.append(p)
    return {"participant": participant_view(p), "meeting": meeting_view(s, m, with_participants=False)}


@tool(consumes=("meeting_id", "participant_id"), requires=("meeting_live",))
def leave_video_meeting(s: MeetingState, meeting_id: str, participant_id: str) -> dict:
    """Leave a live meeting (or its waiting room). The host can only leave while others remain if a
    co-host is there to take over; when the last participant leaves, the meeting ends.

    Args:
        meeting_id: The meeting.
        participant_id: The participant leaving (from join_video_meeting).
    """
    m = get_meeting(s, meeting_id)
    require_live(m, "leave")
    p = participant(m, participant_id)
    if p.state not in ("in_meeting", "waiting"):
        raise ToolError(f"participant {participant_id} is not in the meeting (they {p.state})", field="participant_id",
                        code="not_in_meeting")
    others = [o for o in in_meeting(m) if o.participant_id != participant_id]
    if p.role == "host" and others and not any(o.role == "co_host" for o in others):
        raise ToolError("the host cannot leave while others are in the meeting without a co-host; make someone "
                        "co-host first or end the meeting", field="participant_id", code="host_must_hand_over")
    m = s.meetings.edit(meeting_id)
    p = participant(m, participant_id)
    p.state, p.left_at = "left", iso(now(s))
    recs: list[str] = []
    if not others:
        recs = finish(s, meeting_id, now(s))
        m = s.meetings[meeting_id]
    return {"participant": participant_view(p), "meeting_status": m.status, "recording_ids": recs}


@tool(consumes=("meeting_id", "participant_id"), requires=("meeting_live",))
def apply_meeting_host_control(s: MeetingState, meeting_id: str, requester_email: EmailAddress, action: HostAction,
                               participant_id: str | None = None) -> dict:
    """Host controls during a live meeting: lock/unlock it, mute everyone, admit everyone waiting, or act
    on one participant (admit from the waiting room, mute, unmute, remove, make co-host). The host and
    co-hosts in the meeting may use them; only the host can make a co-host.

    Args:
        meeting_id: The live meeting.
        requester_email: Email of the host or co-host giving the command.
        action: What to do.
        participant_id: The participant acted on (for admit, mute, unmute, remove, make_co_host).
    """
    m = get_meeting(s, meeting_id)
    require_live(m, action.replace("_", " "))
    require_controller(s, m, requester_email, action.replace("_", " "))
    if action == "make_co_host" and not is_host(s, m, requester_email):
        raise ToolError("only the host can make someone a co-host", field="requester_email", code="not_host")
    if action in PER_PARTICIPANT and participant_id is None:
        raise ToolError(f"action {action} needs a participant_id", field="participant_id")
    if action not in PER_PARTICIPANT and participant_id is not None:
        raise ToolError(f"action {action} applies to the whole meeting; leave out participant_id",
                        field="participant_id")
    m = s.meetings.edit(meeting_id)
    me = requester_email.strip().lower()
    changed: list[str] = []
    if action in ("lock", "unlock"):
        if m.locked == (action == "lock"):
            raise ToolError(f"meeting is already {action}ed", field="action")
        m.locked = action == "lock"
    elif action == "mute_all":
        targets = [p for p in in_meeting(m) if not p.muted and p.email != me and p.role == "attendee"]
        if not targets:
            raise ToolError("no unmuted attendees to mute", field="action")
        for p in targets:
            p.muted = True
            changed.append(p.participant_id)
    elif action == "admit_all":
        waiting = [p for p in m.participants if p.state == "waiting"]
        if not waiting:
            raise ToolError("nobody is in the waiting room", field="action")
        room = m.max_participants - len(in_meeting(m))
        if room < len(waiting):
            raise ToolError(f"only {max(room, 0)} place(s) left for {len(waiting)} waiting; the meeting would be full",
                            field="action", code="full")
        for p in waiting:
            p.state = "in_meeting"
            changed.append(p.participant_id)
    else:
        p = participant(m, participant_id or "")
        changed.append(p.participant_id)
        if action == "admit":
            if p.state != "waiting":
                raise ToolError(f"{p.name} is not in the waiting room", field="participant_id")
            if len(in_meeting(m)) >= m.max_participants:
                raise ToolError(f"meeting is full ({m.max_participants})", field="participant_id", code="full")
            p.state = "in_meeting"
        elif p.state != "in_meeting":
            raise ToolError(f"{p.name} is not in the meeting (state {p.state})", field="participant_id",
                            code="not_in_meeting")
        elif p.role == "host":
            raise ToolError("host controls cannot be used on the host", field="participant_id")
        elif action in ("mute", "unmute"):
            if p.muted == (action == "mute"):
                raise ToolError(f"{p.name} is already {action}d", field="participant_id")
            p.muted = action == "mute"
        elif action == "remove":
            p.state, p.left_at = "removed", iso(now(s))
        elif p.role == "co_host":
            raise ToolError(f"{p.name} is already a co-host", field="participant_id")
        else:
            p.role = "co_host"
    return {"action": action, "participant_ids": changed, "meeting": meeting_view(s, m)}


@tool(consumes=("meeting_id",), requires=("meeting_live",), establishes=("recording_active",))
def control_meeting_recording(s: MeetingState, meeting_id: str, requester_email: EmailAddress,
                              action: Literal["start", "stop"]) -> dict:
    """Start or stop cloud recording of a live meeting (host or co-host; the host's plan must include
    cloud recording). The recording file appears when the meeting ends.

    Args:
        meeting_id: The live meeting.
        requester_email: Email of the host or co-host.
        action: start or stop recording.
    """
    m = get_meeting(s, meeting_id)
    require_live(m, f"{action} recording")
    require_controller(s, m, requester_email, f"{action} recording")
    host = s.users[m.host_user_id]
    if action == "start" and not PLAN_RECORDING[host.plan]:
        raise ToolError(f"cloud recording is not included in {host.name}'s {host.plan} plan (Pro or Business "
                        "needed)", field="action", code="plan_limit")
    at = iso(now(s))
    if action == "start":
        if m.recording_since is not None:
            raise ToolError(f"already recording since {m.recording_since}", field="action")
        m = s.meetings.edit(meeting_id)
        m.recording_since = at
    else:
        if m.recording_since is None:
            raise ToolError("the meeting is not being recorded", field="action", code="not_recording")
        m = s.meetings.edit(meeting_id)
        m.recorded_segments.append([m.recording_since, at])
        m.recording_since = None
    return {"meeting_id": m.meeting_id, "recording": meeting_view(s, m, with_participants=False)["recording"],
            "note": "the recording file becomes available when the meeting ends"}
