"""Video meeting domain: tool count, lifecycle/passcode/host-control/recording
failures (state unchanged), clock-driven endings, recordings that exist only after a meeting ran."""

from __future__ import annotations

from typing import Any

from servers import PAPER_TOOL_COUNTS
from servers.kit import DomainRuntime
from servers.video_meeting import domain
from tests.servers.harness import assert_same_state_on_replay, fails, new_sid, ok

CLOCK = "video_meeting_session_advance_clock"
OUTSIDER = "pat.outsider@example.net"


def meetings(rt: DomainRuntime, sid: str, seed: int, status: str | None = None) -> list[dict[str, Any]]:
    return ok(rt, sid, seed, "video_meeting_list_meetings", {} if status is None else {"status": status})


def pick(rows: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    """The guaranteed archetypes of every seeded world."""
    preds = {
        "recording": lambda m: m["status"] == "live" and m["recording_active"] and not m["locked"],
        "locked": lambda m: m["status"] == "live" and m["locked"],
        "full": lambda m: m["status"] == "live" and m["in_meeting_count"] == m["max_participants"],
        "waiting": lambda m: m["status"] == "live" and any(p["state"] == "waiting" for p in m["participants"]),
        "scheduled": lambda m: m["status"] == "scheduled",
        "ended": lambda m: m["status"] == "ended",
        "missed": lambda m: m["status"] == "missed",
        "cancelled": lambda m: m["status"] == "cancelled",
        "recorded": lambda m: m["status"] == "ended" and any(r["status"] == "available" for r in m["recordings"]),
        "basic": lambda m: m["status"] == "scheduled" and m["host_plan"] == "basic",
    }
    return next(m for m in rows if preds[kind](m))


def attendee(m: dict[str, Any]) -> dict[str, Any]:
    return next(p for p in m["participants"] if p["role"] == "attendee" and p["state"] == "in_meeting")


def join(rt: DomainRuntime, sid: str, seed: int, m: dict[str, Any], name: str, email: str) -> dict[str, Any]:
    return ok(rt, sid, seed, "join_video_meeting", {"meeting_id": m["meeting_id"], "name": name, "email": email,
                                                    "passcode": m["passcode"]})["participant"]


def instant(rt: DomainRuntime, sid: str, seed: int, **kw: Any) -> dict[str, Any]:
    """An instant meeting hosted by a paying member who is not live anywhere."""
    rows = meetings(rt, sid, seed)
    live = {m["host_email"] for m in rows if m["status"] == "live"}
    users = ok(rt, sid, seed, "video_meeting_list_users", {})
    host = next(u for u in users if u["plan"] != "basic" and u["email"] not in live and not any(
        m["host_email"] == u["email"] and m["status"] == "scheduled" and m["start_at"] < "2026-06-01T12:00"
        for m in rows))
    return ok(rt, sid, seed, "schedule_video_meeting", {"requester_email": host["email"], "topic": "Quick huddle",
                                                        "duration_minutes": 30, **kw})


# ---------------------------------------------------------------- (1) tool count, (2) smoke coverage
def test_exactly_ten_user_tools_and_named_discovery(rt: DomainRuntime) -> None:
    assert len(domain.user_tools) == PAPER_TOOL_COUNTS["video_meeting"] == 10
    assert len(rt.table.openai_tools()) == 10
    disc = [s.name for s in domain.tools.values() if s.kind == "discovery"]
    assert 2 <= len(disc) <= 4 and all(n.startswith("video_meeting_") for n in disc)
    assert all(s.consumes or s.produces or s.requires for s in domain.user_tools)
    sensitive = {s.name: rt.table.sensitive_params(s.name) for s in domain.user_tools}
    assert {k: v for k, v in sensitive.items() if v} == {"schedule_video_meeting": ["passcode"],
                                                         "join_video_meeting": ["passcode"]}


def test_world_archetypes_exist_for_many_seeds(rt: DomainRuntime) -> None:
    for seed in range(12):
        rows = meetings(rt, new_sid(), seed)
        for kind in ("recording", "locked", "full", "waiting", "scheduled", "ended", "missed", "cancelled",
                     "recorded", "basic"):
            pick(rows, kind)
        recs = [r for m in rows for r in m["recordings"]]
        assert any(r["status"] == "deleted" for r in recs) and any(r["shared_with"] for r in recs)
        assert len({m["host_email"] for m in rows if m["status"] == "live"}) == 4
        assert all(m["join_url"] == f"https://meet.prove.example/j/{m['meeting_id']}" for m in rows)
        assert 50 <= len(rows) <= 120


# ---------------------------------------------------------------- (3) failures leave state alone
def test_join_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    rows = meetings(rt, sid, seed)
    args = {"name": "Pat Outsider", "email": OUTSIDER}
    for kind, needle in (("scheduled", "has not started yet"), ("ended", "already ended"),
                         ("missed", "never started"), ("cancelled", "was cancelled")):
        m = pick(rows, kind)
        fails(rt, sid, seed, "join_video_meeting", {**args, "meeting_id": m["meeting_id"], "passcode": m["passcode"]},
              needle, "meeting_id")
    live = pick(rows, "recording")
    wrong = "0000" if live["passcode"] != "0000" else "1111"
    fails(rt, sid, seed, "join_video_meeting", {**args, "meeting_id": live["meeting_id"], "passcode": wrong},
          "wrong passcode", "passcode")
    fails(rt, sid, seed, "join_video_meeting", {**args, "meeting_id": live["meeting_id"]}, "needs a passcode")
    fails(rt, sid, seed, "join_video_meeting", {**args, "meeting_id": "MTG-9999"}, "unknown meeting_id")
    locked = pick(rows, "locked")
    fails(rt, sid, seed, "join_video_meeting", {**args, "meeting_id": locked["meeting_id"],
                                                "passcode": locked["passcode"]}, "is locked")
    full = pick(rows, "full")
    fails(rt, sid, seed, "join_video_meeting", {**args, "meeting_id": full["meeting_id"],
                                                "passcode": full["passcode"]}, "is full")
    inside = attendee(live)
    fails(rt, sid, seed, "join_video_meeting", {"meeting_id": live["meeting_id"], "name": inside["name"],
                                                "email": inside["email"], "passcode": live["passcode"]},
          "already in meeting")
    p = join(rt, sid, seed, live, "Pat Outsider", OUTSIDER)
    ok(rt, sid, seed, "apply_meeting_host_control", {"meeting_id": live["meeting_id"], "requester_email":
                                                     live["host_email"], "action": "remove",
                                                     "participant_id": p["participant_id"]})
    fails(rt, sid, seed, "join_video_meeting", {**args, "meeting_id": live["meeting_id"],
                                                "passcode": live["passcode"]}, "was removed", "cannot rejoin")


def test_host_control_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    rows = meetings(rt, sid, seed)
    live = pick(rows, "recording")
    mid, host = live["meeting_id"], live["host_email"]
    co = next(p for p in live["participants"] if p["role"] == "co_host")
    att = attendee(live)
    hc = "apply_meeting_host_control"
    fails(rt, sid, seed, hc, {"meeting_id": mid, "requester_email": att["email"], "action": "lock"},
          "only the host or a co-host", "requester_email")
    fails(rt, sid, seed, hc, {"meeting_id": mid, "requester_email": OUTSIDER, "action": "mute_all"},
          "only the host or a co-host")
    fails(rt, sid, seed, hc, {"meeting_id": mid, "requester_email": co["email"], "action": "make_co_host",
                              "participant_id": att["participant_id"]}, "only the host can make")
    sched = pick(rows, "scheduled")
    fails(rt, sid, seed, hc, {"meeting_id": sched["meeting_id"], "requester_email": sched["host_email"],
                              "action": "lock"}, "has not started yet")
    fails(rt, sid, seed, hc, {"meeting_id": mid, "requester_email": host, "action": "mute"}, "needs a participant_id")
    fails(rt, sid, seed, hc, {"meeting_id": mid, "requester_email": host, "action": "lock",
                              "participant_id": att["participant_id"]}, "leave out participant_id")
    fails(rt, sid, seed, hc, {"meeting_id": mid, "requester_email": host, "action": "mute",
                              "participant_id": "PTC-9999"}, "is not in meeting")
    hp = next(p for p in live["participants"] if p["role"] == "host")
    fails(rt, sid, seed, hc, {"meeting_id": mid, "requester_email": co["email"], "action": "remove",
                              "participant_id": hp["participant_id"]}, "cannot be used on the host")
    fails(rt, sid, seed, hc, {"meeting_id": mid, "requester_email": host, "action": "admit_all"},
          "nobody is in the waiting room")
    fails(rt, sid, seed, hc, {"meeting_id": mid, "requester_email": host, "action": "admit",
                              "participant_id": att["participant_id"]}, "not in the waiting room")
    fails(rt, sid, seed, hc, {"meeting_id": mid, "requester_email": host, "action": "make_co_host",
                              "participant_id": co["participant_id"]}, "already a co-host")
    ok(rt, sid, seed, hc, {"meeting_id": mid, "requester_email": co["email"], "action": "lock"})
    fails(rt, sid, seed, hc, {"meeting_id": mid, "requester_email": host, "action": "lock"}, "already locked")
    flip = {"meeting_id": mid, "requester_email": host, "action": "unmute" if att["muted"] else "mute",
            "participant_id": att["participant_id"]}
    ok(rt, sid, seed, hc, flip)
    fails(rt, sid, seed, hc, flip, f"already {flip['action']}d")
    # the waiting room cannot overfill a meeting
    m = instant(rt, sid, seed, waiting_room=True, max_participants=2, passcode="Room42")
    a = join(rt, sid, seed, m, "Ann Early", "ann.early@example.org")
    assert a["state"] == "waiting"
    ok(rt, sid, seed, hc, {"meeting_id": m["meeting_id"], "requester_email": m["host"]["email"], "action": "admit",
                           "participant_id": a["participant_id"]})
    b = join(rt, sid, seed, m, "Bo Late", "bo.late@example.org")
    fails(rt, sid, seed, hc, {"meeting_id": m["meeting_id"], "requester_email": m["host"]["email"], "action": "admit",
                              "participant_id": b["participant_id"]}, "meeting is full")
    fails(rt, sid, seed, hc, {"meeting_id": m["meeting_id"], "requester_email": m["host"]["email"],
                              "action": "admit_all"}, "place(s) left")
    # controls that would change nothing: nobody to mute, someone who already left
    n = instant(rt, sid, seed, passcode="Solo99")
    solo = {"meeting_id": n["meeting_id"], "requester_email": n["host"]["email"]}
    fails(rt, sid, seed, hc, {**solo, "action": "mute_all"}, "no unmuted attendees")
    g = join(rt, sid, seed, n, "Gus Brief", "gus.brief@example.org")
    ok(rt, sid, seed, "leave_video_meeting", {"meeting_id": n["meeting_id"], "participant_id": g["participant_id"]})
    fails(rt, sid, seed, hc, {**solo, "action": "mute", "participant_id": g["participant_id"]},
          "is not in the meeting (state left)")


def test_recording_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    rows = meetings(rt, sid, seed)
    rec = "control_meeting_recording"
    sched = pick(rows, "scheduled")
    fails(rt, sid, seed, rec, {"meeting_id": sched["meeting_id"], "requester_email": sched["host_email"],
                               "action": "start"}, "has not started yet", "meeting_id")
    ended = pick(rows, "ended")
    fails(rt, sid, seed, rec, {"meeting_id": ended["meeting_id"], "requester_email": ended["host_email"],
                               "action": "start"}, "already ended")
    live = pick(rows, "recording")
    fails(rt, sid, seed, rec, {"meeting_id": live["meeting_id"], "requester_email": attendee(live)["email"],
                               "action": "stop"}, "only the host or a co-host")
    fails(rt, sid, seed, rec, {"meeting_id": live["meeting_id"], "requester_email": live["host_email"],
                               "action": "start"}, "already recording")
    locked = pick(rows, "locked")
    fails(rt, sid, seed, rec, {"meeting_id": locked["meeting_id"], "requester_email": locked["host_email"],
                               "action": "stop"}, "not being recorded")
    basic = pick(rows, "basic")
    ok(rt, sid, seed, "start_video_meeting", {"meeting_id": basic["meeting_id"], "requester_email": basic["host_email"]})
    fails(rt, sid, seed, rec, {"meeting_id": basic["meeting_id"], "requester_email": basic["host_email"],
                               "action": "start"}, "not included", "basic plan")


def test_recording_access_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    rows = meetings(rt, sid, seed)
    get = "get_meeting_recordings"
    for kind in ("missed", "cancelled", "scheduled"):
        m = pick(rows, kind)
        fails(rt, sid, seed, get, {"meeting_id": m["meeting_id"], "requester_email": m["host_email"]},
              "never ran", "meeting_id")
    live = pick(rows, "recording")
    fails(rt, sid, seed, get, {"meeting_id": live["meeting_id"], "requester_email": live["host_email"]},
          "still live", "appear when it ends")
    m = pick(rows, "recorded")
    r = next(x for x in m["recordings"] if x["status"] == "available")
    fails(rt, sid, seed, get, {"meeting_id": m["meeting_id"], "requester_email": OUTSIDER}, "is shared with")
    mg = "manage_meeting_recording"
    base = {"recording_id": r["recording_id"], "requester_email": m["host_email"]}
    fails(rt, sid, seed, mg, {**base, "requester_email": OUTSIDER, "action": "delete"}, "only the meeting's host")
    fails(rt, sid, seed, mg, {**base, "action": "share"}, "needs at least one address")
    fails(rt, sid, seed, mg, {**base, "action": "unshare", "share_with": [OUTSIDER]}, "is not shared with")
    fails(rt, sid, seed, mg, {**base, "action": "delete", "share_with": [OUTSIDER]}, "does not apply")
    ok(rt, sid, seed, mg, {**base, "action": "share", "share_with": [OUTSIDER]})
    fails(rt, sid, seed, mg, {**base, "action": "share", "share_with": [OUTSIDER.upper()]}, "already shared")
    deleted = next(x for mm in rows for x in mm["recordings"] if x["status"] == "deleted")
    fails(rt, sid, seed, mg, {"recording_id": deleted["recording_id"], "requester_email": deleted["host_email"],
                              "action": "share", "share_with": [OUTSIDER]}, "was deleted")
    fails(rt, sid, seed, mg, {**base, "recording_id": "REC-9999", "action": "delete"}, "unknown recording_id")


def test_schedule_start_end_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 4
    rows = meetings(rt, sid, seed)
    sched = pick(rows, "scheduled")
    host = sched["host_email"]
    base = {"requester_email": host, "topic": "Planning"}
    fails(rt, sid, seed, "schedule_video_meeting", {**base, "start_time": "2026-05-30T10:00"}, "in the past")
    fails(rt, sid, seed, "schedule_video_meeting", {**base, "start_time": "2027-08-30T10:00"}, "more than a year")
    fails(rt, sid, seed, "schedule_video_meeting", {**base, "start_time": sched["start_at"]}, "already hosts",
          "start_time")
    fails(rt, sid, seed, "schedule_video_meeting", {**base, "requester_email": OUTSIDER}, "no account")
    basic = pick(rows, "basic")
    fails(rt, sid, seed, "schedule_video_meeting", {**base, "requester_email": basic["host_email"],
                                                    "start_time": "2026-07-01T10:00", "max_participants": 150},
          "allows at most 100", "max_participants")
    live = pick(rows, "locked")
    fails(rt, sid, seed, "schedule_video_meeting", {**base, "requester_email": live["host_email"]},
          "already hosting live meeting")
    start = "start_video_meeting"
    fails(rt, sid, seed, start, {"meeting_id": sched["meeting_id"], "requester_email": OUTSIDER}, "only the host")
    fails(rt, sid, seed, start, {"meeting_id": live["meeting_id"], "requester_email": live["host_email"]},
          "already live")
    ended = pick(rows, "ended")
    fails(rt, sid, seed, start, {"meeting_id": ended["meeting_id"], "requester_email": ended["host_email"]},
          "already ended")
    missed = pick(rows, "missed")
    fails(rt, sid, seed, start, {"meeting_id": missed["meeting_id"], "requester_email": missed["host_email"]},
          "never started")
    later = ok(rt, sid, seed, "schedule_video_meeting", {"requester_email": live["host_email"], "topic": "Tomorrow",
                                                         "start_time": "2026-06-27T10:00:00+00:00"})
    fails(rt, sid, seed, start, {"meeting_id": later["meeting_id"], "requester_email": live["host_email"]},
          "already in live meeting")
    fails(rt, sid, seed, "end_video_meeting", {"meeting_id": live["meeting_id"],
                                               "requester_email": attendee(live)["email"]}, "only the host")
    fails(rt, sid, seed, "end_video_meeting", {"meeting_id": ended["meeting_id"],
                                               "requester_email": ended["host_email"]}, "already ended")
    fails(rt, sid, seed, "list_video_meetings", {"user_email": OUTSIDER}, "no account or meeting")
    fails(rt, sid, seed, "list_video_meetings", {"from_date": "2026-06-10", "to_date": "2026-06-01"},
          "before from_date")


def test_leave_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 5
    rows = meetings(rt, sid, seed)
    locked = pick(rows, "locked")
    hp = next(p for p in locked["participants"] if p["role"] == "host")
    fails(rt, sid, seed, "leave_video_meeting", {"meeting_id": locked["meeting_id"],
                                                 "participant_id": hp["participant_id"]},
          "cannot leave", "co-host")
    att = attendee(locked)
    ok(rt, sid, seed, "leave_video_meeting", {"meeting_id": locked["meeting_id"],
                                              "participant_id": att["participant_id"]})
    fails(rt, sid, seed, "leave_video_meeting", {"meeting_id": locked["meeting_id"],
                                                 "participant_id": att["participant_id"]}, "is not in the meeting")
    ended = pick(rows, "ended")
    fails(rt, sid, seed, "leave_video_meeting", {"meeting_id": ended["meeting_id"],
                                                 "participant_id": ended["participants"][0]["participant_id"]},
          "already ended")


# ---------------------------------------------------------------- (4) workflows and the clock
def _let_the_morning_pass(rt: DomainRuntime, sid: str, seed: int) -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = []

    def do(name: str, args: dict[str, Any]) -> Any:
        calls.append((name, args))
        return ok(rt, sid, seed, name, args)

    rows = do("video_meeting_list_meetings", {"status": "live"})
    live = pick(rows, "locked")
    do("control_meeting_recording", {"meeting_id": live["meeting_id"], "requester_email": live["host_email"],
                                     "action": "start"})
    do(CLOCK, {"minutes": 180})
    return calls


def test_clock_ends_meetings_and_recordings_appear_only_then(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    before = {m["meeting_id"]: m for m in meetings(rt, sid, seed)}
    rec = pick(list(before.values()), "recording")
    soon = min((m for m in before.values() if m["status"] == "scheduled"), key=lambda m: m["start_at"])
    assert soon["start_at"] < "2026-06-01T11:00"
    calls = _let_the_morning_pass(rt, sid, seed)
    after = {m["meeting_id"]: m for m in meetings(rt, sid, seed)}
    for mid, m in before.items():
        if m["status"] == "live":
            assert after[mid]["status"] == "ended"
            assert all(p["state"] in ("left", "removed") for p in after[mid]["participants"])
    assert after[soon["meeting_id"]]["status"] == "missed"
    fails(rt, sid, seed, "start_video_meeting", {"meeting_id": soon["meeting_id"],
                                                 "requester_email": soon["host_email"]}, "never started")
    files = ok(rt, sid, seed, "get_meeting_recordings", {"meeting_id": rec["meeting_id"],
                                                         "requester_email": rec["host_email"]})
    assert len(files) == 1 and files[0]["ended_at"] == rec["ends_at"]
    locked = calls[1][1]["meeting_id"]
    assert ok(rt, sid, seed, "get_meeting_recordings", {"meeting_id": locked,
                                                        "requester_email": before[locked]["host_email"]})
    # replaying the same calls on a fresh session gives the identical world
    assert_same_state_on_replay(rt, sid, seed, calls)


def test_waiting_room_admission_and_recording_sharing(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    rows = meetings(rt, sid, seed)
    w = pick(rows, "waiting")
    waiting = next(p for p in w["participants"] if p["state"] == "waiting")
    out = ok(rt, sid, seed, "apply_meeting_host_control", {"meeting_id": w["meeting_id"],
                                                           "requester_email": w["host_email"], "action": "admit",
                                                           "participant_id": waiting["participant_id"]})
    assert next(p for p in out["meeting"]["participants"] if p["participant_id"] == waiting["participant_id"])[
        "state"] == "in_meeting"
    late = join(rt, sid, seed, w, "Pat Outsider", OUTSIDER)
    assert late["state"] == "waiting"
    m = pick(rows, "recorded")
    r = next(x for x in m["recordings"] if x["status"] == "available")
    fails(rt, sid, seed, "get_meeting_recordings", {"meeting_id": m["meeting_id"], "requester_email": OUTSIDER},
          "is shared with")
    shared = ok(rt, sid, seed, "manage_meeting_recording", {"recording_id": r["recording_id"],
                                                            "requester_email": m["host_email"], "action": "share",
                                                            "share_with": [OUTSIDER]})
    assert OUTSIDER in shared["shared_with"] and shared["share_url"].endswith(r["recording_id"])
    seen = ok(rt, sid, seed, "get_meeting_recordings", {"meeting_id": m["meeting_id"], "requester_email": OUTSIDER})
    assert [x["recording_id"] for x in seen] == [r["recording_id"]]
    ok(rt, sid, seed, "manage_meeting_recording", {"recording_id": r["recording_id"], "requester_email":
                                                   m["host_email"], "action": "delete"})
    host_view = ok(rt, sid, seed, "get_meeting_recordings", {"meeting_id": m["meeting_id"],
                                                             "requester_email": m["host_email"]})
    assert r["recording_id"] not in {x["recording_id"] for x in host_view}
    fails(rt, sid, seed, "get_meeting_recordings", {"meeting_id": m["meeting_id"], "requester_email": OUTSIDER},
          "is shared with")


def test_instant_meeting_ends_when_the_last_person_leaves(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    m = instant(rt, sid, seed, passcode="Huddle1")
    assert m["status"] == "live" and m["kind"] == "instant" and m["passcode"] == "Huddle1"
    host_p = m["participants"][0]
    g = join(rt, sid, seed, m, "Pat Outsider", OUTSIDER)
    hc = {"meeting_id": m["meeting_id"], "requester_email": m["host"]["email"]}
    ok(rt, sid, seed, "apply_meeting_host_control", {**hc, "action": "make_co_host", "participant_id": g["participant_id"]})
    ok(rt, sid, seed, "control_meeting_recording", {"meeting_id": m["meeting_id"], "requester_email": OUTSIDER,
                                                    "action": "start"})
    left = ok(rt, sid, seed, "leave_video_meeting", {"meeting_id": m["meeting_id"],
                                                     "participant_id": host_p["participant_id"]})
    assert left["meeting_status"] == "live"
    last = ok(rt, sid, seed, "leave_video_meeting", {"meeting_id": m["meeting_id"],
                                                     "participant_id": g["participant_id"]})
    assert last["meeting_status"] == "ended" and len(last["recording_ids"]) == 1
    files = ok(rt, sid, seed, "get_meeting_recordings", {"meeting_id": m["meeting_id"],
                                                         "requester_email": m["host"]["email"]})
    assert [f["recording_id"] for f in files] == last["recording_ids"]
    mine = ok(rt, sid, seed, "list_video_meetings", {"user_email": m["host"]["email"], "status": "ended"})
    assert m["meeting_id"] in {x["meeting_id"] for x in mine}


def test_calling_off_a_scheduled_meeting(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    sched = pick(meetings(rt, sid, seed), "scheduled")
    out = ok(rt, sid, seed, "end_video_meeting", {"meeting_id": sched["meeting_id"],
                                                  "requester_email": sched["host_email"].upper()})
    assert out["status"] == "cancelled" and out["recording_ids"] == []
    fails(rt, sid, seed, "get_meeting_recordings", {"meeting_id": sched["meeting_id"],
                                                    "requester_email": sched["host_email"]}, "never ran")
    fails(rt, sid, seed, "join_video_meeting", {"meeting_id": sched["meeting_id"], "name": "X Y", "email": OUTSIDER,
                                                "passcode": sched["passcode"]}, "was cancelled")


# ---------------------------------------------------------------- (5) determinism
def test_unique_values(rt: DomainRuntime) -> None:
    sid = new_sid()
    statuses = {r["value"] for r in ok(rt, sid, 0, "video_meeting_get_unique_values", {"field": "status"})}
    assert {"scheduled", "live", "ended", "missed", "cancelled"} == statuses
    plans = {r["value"] for r in ok(rt, sid, 0, "video_meeting_get_unique_values", {"field": "plan"})}
    assert {"basic", "pro", "business"} == plans


# ---------------------------------------------------------------- (6) the intent bank for synthesis
