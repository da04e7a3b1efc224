"""Hidden discovery tools: organisation members, every meeting with what an invitee would be told
(join link, passcode, host) and its live state, and the values of categorical fields."""

from __future__ import annotations

from typing import Literal

from servers.kit import discovery, value_counts
from servers.video_meeting.state import (
    MeetingState,
    in_meeting,
    join_url,
    participant_view,
    recording_view,
)


@discovery(produces=("user_email",))
def video_meeting_list_users(s: MeetingState, plan: Literal["basic", "pro", "business"] | None = None) -> list:
    """Every organisation member with email, plan and department, and the meetings they host.

    Args:
        plan: Only members on this plan.
    """
    return [{"user_id": u.user_id, "name": u.name, "email": u.email, "plan": u.plan, "department": u.department,
             "hosted_meeting_ids": [m.meeting_id for m in s.meetings.values() if m.host_user_id == u.user_id]}
            for u in s.users.values() if plan is None or u.plan == plan]


@discovery(produces=("meeting_id", "participant_id", "recording_id"))
def video_meeting_list_meetings(s: MeetingState, status: Literal["scheduled", "live", "ended", "missed",
                                                                  "cancelled"] | None = None) -> list:
    """Every meeting with its passcode, join link, host (email and plan), invitees, participants (ids and
    states), capacity and lock/waiting-room/recording state, and its recordings.

    Args:
        status: Only meetings in this state.
    """
    out = []
    for m in s.meetings.values():
        if status is not None and m.status != status:
            continue
        host = s.users[m.host_user_id]
        out.append({
            "meeting_id": m.meeting_id, "topic": m.topic, "status": m.status, "kind": m.kind,
            "join_url": join_url(m.meeting_id), "passcode": m.passcode, "host_name": host.name,
            "host_email": host.email, "host_plan": host.plan, "start_at": m.start_at,
            "duration_minutes": m.duration_minutes, "ends_at": m.ends_at, "invitees": list(m.invitees),
            "waiting_room": m.waiting_room, "locked": m.locked, "max_participants": m.max_participants,
            "in_meeting_count": len(in_meeting(m)), "recording_active": m.recording_since is not None,
            "participants": [participant_view(p) for p in m.participants],
            "recordings": [recording_view(s, r) for r in s.recordings.values() if r.meeting_id == m.meeting_id],
        })
    return out


@discovery
def video_meeting_get_unique_values(s: MeetingState, field: Literal[
        "status", "kind", "topic", "host_email", "plan", "department", "participant_state", "recording_status"]) -> list:
    """Distinct values of a categorical field with their counts.

    Args:
        field: Which field to summarise.
    """
    values = {
        "status": lambda: [m.status for m in s.meetings.values()],
        "kind": lambda: [m.kind for m in s.meetings.values()],
        "topic": lambda: [m.topic for m in s.meetings.values()],
        "host_email": lambda: [s.users[m.host_user_id].email for m in s.meetings.values()],
        "plan": lambda: [u.plan for u in s.users.values()],
        "department": lambda: [u.department for u in s.users.values()],
        "participant_state": lambda: [p.state for m in s.meetings.values() for p in m.participants],
        "recording_status": lambda: [r.status for r in s.recordings.values()],
    }[field]()
    return value_counts(values)
