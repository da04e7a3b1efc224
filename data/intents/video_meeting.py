"""Video meeting: how users ask (format: data/intents/__init__.py)."""

from __future__ import annotations

SELF: tuple[str, ...] = ()
SPOKEN: tuple[str, ...] = ("meeting_id",)

BANK: dict[str, dict[str, list[str]]] = {
    "schedule_video_meeting": {
        "ask": [
            "set up a call called {topic} at {start_time} for {duration_minutes} minutes, I'm {requester_email}",
            "book a video call on {topic} for {start_time} and invite {invitee_emails}; host is {requester_email}",
            "start a call right now about {topic} from my account {requester_email}",
            "schedule {topic} at {start_time} with passcode {passcode} and make people wait until I let them in "
            "(I'm {requester_email})",
        ],
        "vague": ["I need to set up a meeting", "can we get a call on the calendar"],
    },
    "list_video_meetings": {
        "ask": [
            "what meetings does {user_email} have coming up",
            "show me all {status} calls between {from_date} and {to_date}",
            "which calls is {user_email} part of this week",
        ],
        "vague": ["what calls do I have", "show my meetings"],
    },
    "start_video_meeting": {
        "ask": [
            "kick off meeting {meeting_id}, it's {requester_email}",
            "open up the {meeting_id} call now, I'm the host ({requester_email})",
            "let's get {meeting_id} going, I'm {requester_email}",
        ],
        "vague": ["start my meeting", "open the call so people can come in"],
    },
    "join_video_meeting": {
        "ask": [
            "get me into call {meeting_id} as {name} ({email}), the passcode is {passcode}",
            "I'm {name}, {email}, let me into {meeting_id} with code {passcode}",
            "join {meeting_id} for me as {name}, my email is {email}",
        ],
        "vague": ["get me into the call", "I want to join the meeting"],
    },
    "leave_video_meeting": {
        "ask": [
            "take {participant_id} out of call {meeting_id}, they're done",
            "I'm {participant_id}, drop me from {meeting_id}",
            "sign {participant_id} off from {meeting_id}",
        ],
        "vague": ["I need to hop off the call", "get me out of this meeting"],
    },
    "apply_meeting_host_control": {
        "ask": [
            "mute {participant_id} in {meeting_id}, I'm {requester_email}",
            "as {requester_email}, lock the {meeting_id} call so nobody else gets in",
            "kick {participant_id} out of {meeting_id}; it's {requester_email}",
            "let {participant_id} in from the waiting room of {meeting_id}; it's {requester_email}",
            "mute everybody in {meeting_id}, I'm running it ({requester_email})",
        ],
        "vague": ["someone is being noisy, deal with it", "nobody else should get into this call"],
    },
    "control_meeting_recording": {
        "ask": [
            "start recording {meeting_id}, I'm {requester_email}",
            "record the {meeting_id} call from now on ({requester_email})",
            "stop taping {meeting_id}, it's {requester_email}",
        ],
        "vague": ["can we record this", "turn the recording off"],
    },
    "end_video_meeting": {
        "ask": [
            "end {meeting_id} for everyone, I'm {requester_email}",
            "wrap up the {meeting_id} call, it's {requester_email}",
            "call off {meeting_id}, we're not meeting after all ({requester_email})",
        ],
        "vague": ["end the call", "we're done, close the meeting"],
    },
    "get_meeting_recordings": {
        "ask": [
            "where's the recording of {meeting_id}? I'm {requester_email}",
            "get me the video from the {meeting_id} call ({requester_email})",
            "did {meeting_id} get recorded? ask as {requester_email}",
        ],
        "vague": ["I missed the meeting, is there a recording", "find the video from yesterday's call"],
    },
    "manage_meeting_recording": {
        "ask": [
            "send recording {recording_id} to {share_with}, I'm {requester_email}",
            "delete recording {recording_id}, it's {requester_email} asking",
            "stop letting {share_with} see {recording_id}; I'm {requester_email}",
        ],
        "vague": ["share the recording with the team", "get rid of that recording"],
    },
}

GOALS: list[dict[str, list[str]]] = [
    {"tools": ["list_video_meetings", "start_video_meeting", "control_meeting_recording"],
     "ask": ["start my next meeting and record it", "open my 9:30 call and make sure it gets recorded"]},
    {"tools": ["join_video_meeting", "leave_video_meeting"],
     "ask": ["pop me into the standup for a minute and then drop me out",
             "join the call just to say hi and leave right away"]},
    {"tools": ["end_video_meeting", "get_meeting_recordings", "manage_meeting_recording"],
     "ask": ["end the meeting and send the recording to everyone who missed it",
             "wrap up the call and share the video with {share_with}"]},
    {"tools": ["apply_meeting_host_control", "apply_meeting_host_control"],
     "ask": ["let everyone in from the waiting room and then lock the meeting",
             "make {participant_id} a co-host and mute everyone else"]},
    {"tools": ["schedule_video_meeting", "list_video_meetings"],
     "ask": ["book a follow-up for next week with the same people and show me my upcoming calls",
             "set up our retro for Friday and tell me what else is on my plate"]},
    {"tools": ["get_meeting_recordings", "manage_meeting_recording"],
     "ask": ["find last week's recording and delete it", "share the recording of our demo with the client"]},
    {"tools": ["list_video_meetings", "end_video_meeting"],
     "ask": ["cancel my meeting tomorrow afternoon", "find my call with the vendor and call it off"]},
]
