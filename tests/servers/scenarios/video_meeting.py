"""Video meeting smoke scenario: a host starts this morning's meeting, a colleague and an outside
guest join, the host makes the colleague co-host, mutes the guest and records part of the discussion;
the guest leaves, the host ends the meeting, finds the recording and shares it, then books the
follow-up. Every user-visible tool succeeds at least once; ids come from discovery and list calls.

``call(name, args)`` performs a tool call on one session, asserts it did not fail and returns the JSON.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


async def smoke(call: Call) -> None:
    users = await call("video_meeting_list_users", {})
    meetings = await call("video_meeting_list_meetings", {"status": "scheduled"})
    live_hosts = {m["host_email"] for m in await call("video_meeting_list_meetings", {"status": "live"})}
    nxt = min((m for m in meetings if m["host_plan"] != "basic" and m["host_email"] not in live_hosts),
              key=lambda m: m["start_at"])
    host = nxt["host_email"]
    mine = await call("list_video_meetings", {"user_email": host, "status": "scheduled"})
    assert nxt["meeting_id"] in {m["meeting_id"] for m in mine}
    started = await call("start_video_meeting", {"meeting_id": nxt["meeting_id"], "requester_email": host})
    mid = started["meeting_id"]
    assert started["status"] == "live" and started["join_url"].endswith(f"/j/{mid}")

    colleague = next(u for u in users if u["email"] != host)
    joined = await call("join_video_meeting", {"meeting_id": mid, "name": colleague["name"],
                                               "email": colleague["email"], "passcode": started["passcode"]})
    guest = await call("join_video_meeting", {"meeting_id": mid, "name": "Robin Guest",
                                              "email": "robin.guest@example.org", "passcode": started["passcode"]})
    c_id, g_id = joined["participant"]["participant_id"], guest["participant"]["participant_id"]
    if started["waiting_room"]:
        await call("apply_meeting_host_control", {"meeting_id": mid, "requester_email": host, "action": "admit_all"})
    await call("apply_meeting_host_control", {"meeting_id": mid, "requester_email": host, "action": "make_co_host",
                                              "participant_id": c_id})
    state = await call("apply_meeting_host_control", {"meeting_id": mid, "requester_email": colleague["email"],
                                                      "action": "lock"})
    assert state["meeting"]["locked"] is True
    await call("control_meeting_recording", {"meeting_id": mid, "requester_email": host, "action": "start"})
    await call("leave_video_meeting", {"meeting_id": mid, "participant_id": g_id})
    await call("control_meeting_recording", {"meeting_id": mid, "requester_email": colleague["email"],
                                             "action": "stop"})
    ended = await call("end_video_meeting", {"meeting_id": mid, "requester_email": host})
    assert ended["status"] == "ended" and len(ended["recording_ids"]) == 1

    recs = await call("get_meeting_recordings", {"meeting_id": mid, "requester_email": host})
    assert [r["recording_id"] for r in recs] == ended["recording_ids"]
    await call("manage_meeting_recording", {"recording_id": recs[0]["recording_id"], "requester_email": host,
                                            "action": "share", "share_with": ["robin.guest@example.org"]})

    follow = await call("schedule_video_meeting", {
        "requester_email": host, "topic": f"Follow-up: {nxt['topic']}", "start_time": "2026-06-20T15:00:00Z",
        "duration_minutes": 30, "passcode": "Plan2026", "waiting_room": True,
        "invitee_emails": [colleague["email"], "robin.guest@example.org"]})
    assert follow["status"] == "scheduled" and follow["join_url"] == f"https://meet.prove.example/j/{follow['meeting_id']}"
