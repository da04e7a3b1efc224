"""Video meeting: an organisation's video-conferencing account — members on basic/pro/business plans,
scheduled and instant meetings with passcodes, participants, host controls and cloud recordings, on
the session clock (all times UTC).

A meeting moves scheduled → live (the host starts it, or it was created instant) → ended (the host
ends it, the last participant leaves, or the clock reaches its planned end); a scheduled meeting the
host calls off is cancelled, and one nobody started by its scheduled end becomes missed. People join
and leave only while it is live; with the waiting room on they wait until admitted. A recording runs
only while the meeting is live, and its file (one per meeting, all recorded segments) appears when the
meeting ends; the host can then share, unshare or delete it.

Join links are exactly ``https://meet.prove.example/j/<meeting_id>`` (e.g.
``https://meet.prove.example/j/MTG-0012``); the calendar domain accepts that form as an event's
``conference_url``, so a calendar invite can carry a meeting scheduled here.

Failure rules (each a ToolError naming the argument; the call changes nothing):
- unknown meeting_id / participant_id / recording_id, or a requester email with no account;
- scheduling in the past or more than a year ahead, overlapping another meeting of the same host, an
  instant meeting while the host is already live elsewhere, a capacity above the host's plan;
- starting a meeting as someone other than the host, or one that is live/ended/missed/cancelled, or
  while the host runs another live meeting;
- joining a meeting that has not started or has ended (or was missed/cancelled), a wrong or missing
  passcode, a locked meeting, a full meeting, joining twice, rejoining after being removed;
- leaving when not in the meeting; the host leaving others behind without a co-host;
- host controls (lock, unlock, mute, unmute, mute all, admit, admit all, remove, make co-host) by
  someone who is neither the host nor a co-host in the meeting (make co-host: host only), when the
  meeting is not live, on the host, on someone not in the meeting or not waiting, that change
  nothing (already locked/muted/co-host, nobody waiting), or that would overfill it;
- recording when the meeting is not live, by a non-host, on a basic plan, starting twice, stopping
  when not recording;
- ending a meeting as a non-host or one already ended/missed/cancelled;
- fetching recordings of a meeting that never ran (scheduled, missed, cancelled) or is still live,
  or that were not shared with the requester;
- managing a recording as anyone but the host, a deleted recording, sharing with nobody new,
  unsharing with someone it was not shared with.

Modules: ``state`` (records, rules, clock hook, views), ``world`` (the seeded organisation),
``tools_meetings`` (schedule, list, start, end), ``tools_live`` (join, leave, host controls,
recording), ``tools_recordings`` (recordings) and ``discovery`` (hidden).
"""

from servers.kit import Domain
from servers.video_meeting import discovery, tools_live, tools_meetings, tools_recordings
from servers.video_meeting.state import MeetingState, on_time
from servers.video_meeting.world import generate

DESCRIPTION = (
    "An organisation's video-meeting account: schedule or start meetings with passcodes and waiting rooms, "
    "join and leave live meetings, use host controls (lock, mute, admit, remove, co-hosts), record to the "
    "cloud and share or delete recordings once a meeting has ended. Join links look like "
    "https://meet.prove.example/j/<meeting_id>."
)

domain = Domain("video_meeting", MeetingState, generate, description=DESCRIPTION,
                modules=(tools_meetings, tools_live, tools_recordings, discovery), on_time=on_time)

__all__ = ["domain"]
