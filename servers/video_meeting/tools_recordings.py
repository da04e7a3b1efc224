"""Recording tools: a meeting's recordings (they exist only after it ran and ended), sharing, deletion."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.kit import EmailAddress, ToolError, iso, now, tool
from servers.video_meeting.state import (
    RECORDING_URL_PREFIX,
    MeetingState,
    get_meeting,
    get_recording,
    is_host,
    participant_by_email,
    recording_view,
)


@tool(consumes=("meeting_id",), requires=("meeting_ended",), produces=("recording_id",), read_only=True)
def get_meeting_recordings(s: MeetingState, meeting_id: str, requester_email: EmailAddress) -> list:
    """The cloud recordings of a meeting that has ended (a meeting that never ran has none, and a live
    one's file appears only when it ends). The host and co-hosts see them; others only if shared with them.

    Args:
        meeting_id: The meeting.
        requester_email: Email of the person asking.
    """
    m = get_meeting(s, meeting_id)
    if m.status in ("scheduled", "missed", "cancelled"):
        raise ToolError(f"meeting {m.meeting_id} never ran ({m.status}), so it has no recordings",
                        field="meeting_id", code="never_ran")
    if m.status == "live":
        raise ToolError(f"meeting {m.meeting_id} is still live; recording files appear when it ends",
                        field="meeting_id", code="meeting_live")
    who = requester_email.strip().lower()
    p = participant_by_email(m, who)
    owner = is_host(s, m, who) or (p is not None and p.role == "co_host")
    recs = [r for r in s.recordings.values() if r.meeting_id == m.meeting_id and r.status == "available"]
    if not owner:
        recs = [r for r in recs if who in r.shared_with]
        if not recs:
            raise ToolError(f"no recording of meeting {m.meeting_id} is shared with {who}", field="requester_email",
                            code="forbidden")
    return [recording_view(s, r) for r in recs]


@tool(consumes=("recording_id",))
def manage_meeting_recording(s: MeetingState, recording_id: str, requester_email: EmailAddress,
                             action: Literal["share", "unshare", "delete"],
                             share_with: Annotated[list[EmailAddress], Field(max_length=50)] | None = None) -> dict:
    """Share a recording with people (they get its link), stop sharing it with some, or delete it. Only
    the meeting's host can do this; a deleted recording is gone for everyone.

    Args:
        recording_id: The recording.
        requester_email: Email of the person asking (must be the meeting's host).
        action: share, unshare or delete.
        share_with: Email addresses to share with or stop sharing with (for share and unshare).
    """
    r = get_recording(s, recording_id)
    m = get_meeting(s, r.meeting_id)
    if not is_host(s, m, requester_email):
        raise ToolError(f"only the meeting's host ({s.users[r.host_user_id].email}) can manage this recording",
                        field="requester_email", code="not_host")
    if r.status == "deleted":
        raise ToolError(f"recording {recording_id} was deleted at {r.deleted_at}", field="recording_id",
                        code="deleted")
    emails = sorted({e.strip().lower() for e in share_with or []})
    if action == "delete":
        if emails:
            raise ToolError("share_with does not apply to delete", field="share_with")
        r = s.recordings.edit(recording_id)
        r.status, r.deleted_at, r.shared_with, r.share_url = "deleted", iso(now(s)), [], None
        return recording_view(s, r)
    if not emails:
        raise ToolError(f"{action} needs at least one address in share_with", field="share_with")
    if action == "share":
        new = [e for e in emails if e not in r.shared_with]
        if not new:
            raise ToolError("already shared with everyone listed", field="share_with")
        r = s.recordings.edit(recording_id)
        r.shared_with = sorted(r.shared_with + new)
        r.share_url = f"{RECORDING_URL_PREFIX}{r.recording_id}"
    else:
        missing = [e for e in emails if e not in r.shared_with]
        if missing:
            raise ToolError(f"the recording is not shared with {', '.join(missing)}", field="share_with")
        r = s.recordings.edit(recording_id)
        r.shared_with = [e for e in r.shared_with if e not in emails]
        if not r.shared_with:
            r.share_url = None
    return recording_view(s, r)
