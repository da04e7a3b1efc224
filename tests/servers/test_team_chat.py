"""Team chat domain: tool count, access/thread/append-only failures (state unchanged),
scheduled messages and statuses driven by the clock, replay determinism."""

from __future__ import annotations

from typing import Any

from servers import PAPER_TOOL_COUNTS
from servers.kit import DomainRuntime
from servers.team_chat import domain
from tests.servers.harness import assert_replays_alike, fails, new_sid, ok, state_of


class World:
    """The guaranteed archetypes of a seeded world, found through the discovery tools."""

    def __init__(self, rt: DomainRuntime, sid: str, seed: int) -> None:
        people = ok(rt, sid, seed, "team_chat_list_members", {})
        self.me = people["me"]["member_id"]
        self.members = {m["member_id"]: m for m in people["members"]}
        self.channels = ok(rt, sid, seed, "team_chat_list_channels", {})
        listing = ok(rt, sid, seed, "team_chat_list_messages", {"limit": 500})
        self.messages, self.scheduled = listing["messages"], listing["scheduled"]

    def channel(self, kind: str) -> dict[str, Any]:
        preds = {
            "postable": lambda c: c["kind"] == "public" and c["is_member"] and not c["archived"]
            and c["posting"] == "everyone",
            "announcements": lambda c: c["posting"] == "admins",
            "archived_mine": lambda c: c["archived"] and c["is_member"],
            "archived_other": lambda c: c["archived"] and not c["is_member"],
            "private_mine": lambda c: c["kind"] == "private" and c["is_member"],
            "private_invited": lambda c: c["kind"] == "private" and c["invited"],
            "private_closed": lambda c: c["kind"] == "private" and not c["is_member"] and not c["invited"],
            "public_unjoined": lambda c: c["kind"] == "public" and not c["is_member"] and not c["archived"],
            "dm": lambda c: c["kind"] == "dm",
        }
        return next(c for c in self.channels if preds[kind](c))

    def message(self, channel_id: str | None = None, *, mine: bool | None = None, top: bool = True,
                deleted: bool = False, **flags: Any) -> dict[str, Any]:
        for m in self.messages:
            if channel_id is not None and m["channel_id"] != channel_id:
                continue
            if mine is not None and (m["author"]["member_id"] == self.me) != mine:
                continue
            if (top and m["thread_parent_id"] is not None) or m["deleted"] != deleted:
                continue
            if flags.get("reply") and m["thread_parent_id"] is None:
                continue
            if flags.get("my_reaction") and not any(r["mine"] for r in m["reactions"]):
                continue
            if flags.get("pinned") is not None and m["pinned"] != flags["pinned"]:
                continue
            return m
        raise AssertionError(f"no message for {channel_id} mine={mine} {flags}")

    def channel_of(self, channel_id: str) -> dict[str, Any]:
        return next(c for c in self.channels if c["channel_id"] == channel_id)

    def handle(self, member_id: str) -> str:
        return self.members[member_id]["handle"]


# ---------------------------------------------------------------- (1) tool count, (2) smoke coverage
def test_exactly_eleven_user_tools_and_named_discovery(rt: DomainRuntime) -> None:
    assert len(domain.user_tools) == PAPER_TOOL_COUNTS["team_chat"] == 11
    assert len(rt.table.openai_tools()) == 11
    discovery = [s.name for s in domain.tools.values() if s.kind == "discovery"]
    assert 2 <= len(discovery) <= 4 and all(n.startswith("team_chat_") for n in discovery)
    declared = [s for s in domain.user_tools if s.consumes or s.produces or s.requires]
    assert len(declared) == len(domain.user_tools)
    assert all(not rt.table.sensitive_params(s.name) for s in domain.user_tools)  # chat has no secrets
    assert rt.table.schemas["post_chat_message"]["properties"]["text"].get("x-multiline") is True


def test_world_archetypes_exist_for_many_seeds(rt: DomainRuntime) -> None:
    for seed in range(10):
        w = World(rt, new_sid(), seed)
        for kind in ("postable", "announcements", "archived_mine", "archived_other", "private_mine", "private_invited",
                     "private_closed", "public_unjoined", "dm"):
            w.channel(kind)
        w.message(mine=True)
        w.message(mine=False, my_reaction=True)
        w.message(pinned=True)
        w.message(deleted=True, top=False)
        assert any(m["revision_count"] for m in w.messages)
        assert any(not m["active"] for m in w.members.values())
        assert {s["status"] for s in w.scheduled} == {"scheduled"}
        assert 200 <= len(w.messages) <= 700


# ---------------------------------------------------------------- (3) failure rules leave state alone
def test_unknown_ids(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    w = World(rt, sid, seed)
    cid = w.channel("postable")["channel_id"]
    fails(rt, sid, seed, "get_chat_channel_messages", {"channel": "#no-such-channel"}, "unknown channel", "channel")
    fails(rt, sid, seed, "send_chat_direct_message", {"member": "@nobody.here", "text": "hi"}, "unknown member")
    fails(rt, sid, seed, "edit_chat_message", {"message_id": "MSG-99999", "text": "x"}, "unknown message_id")
    fails(rt, sid, seed, "delete_chat_message", {"message_id": "SCH-9999"}, "unknown message_id")
    fails(rt, sid, seed, "post_chat_message", {"channel": cid, "text": "x", "thread_parent_id": "MSG-99999"},
          "unknown thread_parent_id")
    fails(rt, sid, seed, "search_chat_messages", {"author": "Nobody Atall"}, "unknown member", "author")
    fails(rt, sid, seed, "search_chat_messages", {}, "give a query")


def test_private_channels_and_joining(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    w = World(rt, sid, seed)
    closed, invited = w.channel("private_closed"), w.channel("private_invited")
    archived, postable = w.channel("archived_other"), w.channel("postable")
    fails(rt, sid, seed, "get_chat_channel_messages", {"channel": closed["channel_id"]}, "you are not a member")
    fails(rt, sid, seed, "find_chat_members", {"channel": closed["name"]}, "only its members can see it")
    fails(rt, sid, seed, "join_chat_channel", {"channel": closed["name"]}, "private channel", "no invitation")
    fails(rt, sid, seed, "join_chat_channel", {"channel": archived["channel_id"]}, "archived", "cannot be joined")
    fails(rt, sid, seed, "join_chat_channel", {"channel": postable["name"]}, "already a member")
    fails(rt, sid, seed, "join_chat_channel", {"channel": w.channel("dm")["channel_id"]}, "cannot be joined")
    assert closed["name"] not in {c["name"] for c in ok(rt, sid, seed, "list_chat_channels", {"limit": 100})[
        "channels"]}
    fails(rt, sid, seed, "post_chat_message", {"channel": invited["name"], "text": "hello"}, "not a member")
    joined = ok(rt, sid, seed, "join_chat_channel", {"channel": f"#{invited['name']}"})
    assert joined["is_member"] and not joined["invited"]
    ok(rt, sid, seed, "post_chat_message", {"channel": invited["name"], "text": "Thanks for the invite!"})


def test_posting_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    w = World(rt, sid, seed)
    cid = w.channel("postable")["channel_id"]
    unjoined, archived = w.channel("public_unjoined"), w.channel("archived_mine")
    fails(rt, sid, seed, "post_chat_message", {"channel": w.channel("announcements")["channel_id"], "text": "hi"},
          "only workspace admins")
    fails(rt, sid, seed, "post_chat_message", {"channel": archived["channel_id"], "text": "hi"}, "archived")
    fails(rt, sid, seed, "post_chat_message", {"channel": unjoined["channel_id"], "text": "hi"},
          "not a member", "join_chat_channel")
    fails(rt, sid, seed, "post_chat_message", {"channel": cid, "text": "   "}, "empty", "text")
    fails(rt, sid, seed, "post_chat_message", {"channel": cid, "text": "x" * 4001}, "4000", "text")
    fails(rt, sid, seed, "post_chat_message", {"channel": cid, "text": "ping @no.such.person"}, "@no.such.person",
          "text")
    gone = next(m for m in w.members.values() if not m["active"])
    fails(rt, sid, seed, "post_chat_message", {"channel": cid, "text": f"ping {gone['handle']}"}, "deactivated")
    fails(rt, sid, seed, "post_chat_message", {"channel": cid, "text": "later", "send_at": "2026-05-31T10:00:00Z"},
          "not in the future", "send_at")
    fails(rt, sid, seed, "post_chat_message", {"channel": cid, "text": "later", "send_at": "2026-12-01T10:00:00Z"},
          "at most 120 days", "send_at")
    fails(rt, sid, seed, "send_chat_direct_message", {"member": w.me, "text": "note to self"}, "that is you")
    fails(rt, sid, seed, "send_chat_direct_message", {"member": gone["full_name"], "text": "hi"}, "deactivated")
    out = ok(rt, sid, seed, "post_chat_message", {"channel": cid, "text": f"cc {w.handle(w.me)} and @channel"})
    assert out["mentions"] == [w.handle(w.me), "channel"]


def test_threads_are_one_level(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    w = World(rt, sid, seed)
    reply = next(m for m in w.messages if m["thread_parent_id"] and not m["deleted"]
                 and w.channel_of(m["channel_id"])["is_member"] and not w.channel_of(m["channel_id"])["archived"]
                 and w.channel_of(m["channel_id"])["posting"] == "everyone")
    cid = reply["channel_id"]
    fails(rt, sid, seed, "post_chat_message", {"channel": cid, "text": "+1", "thread_parent_id": reply["message_id"]},
          "itself a reply", "one level deep", reply["thread_parent_id"])
    other = w.message(next(c["channel_id"] for c in w.channels if c["channel_id"] != cid and c["kind"] == "public"))
    fails(rt, sid, seed, "post_chat_message", {"channel": cid, "text": "+1", "thread_parent_id": other["message_id"]},
          "reply in the channel of the thread")
    mine = w.message(cid, mine=True) if any(m["author"]["member_id"] == w.me and m["channel_id"] == cid
                                            and not m["thread_parent_id"] for m in w.messages) else None
    if mine is None:
        mine = ok(rt, sid, seed, "post_chat_message", {"channel": cid, "text": "Starting a thread"})
    ok(rt, sid, seed, "delete_chat_message", {"message_id": mine["message_id"]})
    fails(rt, sid, seed, "post_chat_message", {"channel": cid, "text": "hm", "thread_parent_id": mine["message_id"]},
          "was deleted", "thread_parent_id")
    # a proper reply bumps the parent's reply count; the thread reads back in order
    parent = reply["thread_parent_id"]
    before = ok(rt, sid, seed, "get_chat_channel_messages", {"channel": cid, "thread_parent_id": parent})
    ok(rt, sid, seed, "post_chat_message", {"channel": cid, "text": "Following along", "thread_parent_id": parent})
    after = ok(rt, sid, seed, "get_chat_channel_messages", {"channel": cid, "thread_parent_id": parent})
    assert after["thread"]["reply_count"] == before["thread"]["reply_count"] + 1
    assert after["replies"][-1]["text"] == "Following along"


def test_append_only_edit_and_delete(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 4
    w = World(rt, sid, seed)
    cid = w.channel("postable")["channel_id"]
    theirs = w.message(cid, mine=False)
    fails(rt, sid, seed, "edit_chat_message", {"message_id": theirs["message_id"], "text": "mine now"},
          "only edit your own messages", theirs["author"]["handle"])
    fails(rt, sid, seed, "delete_chat_message", {"message_id": theirs["message_id"]}, "only delete your own")
    posted = ok(rt, sid, seed, "post_chat_message", {"channel": cid, "text": "Draft one"})
    mid = posted["message_id"]
    fails(rt, sid, seed, "edit_chat_message", {"message_id": mid, "text": "Draft one"}, "identical", "text")
    ok(rt, sid, seed, "edit_chat_message", {"message_id": mid, "text": "Draft two"})
    out = ok(rt, sid, seed, "edit_chat_message", {"message_id": mid, "text": "Final version"})
    assert [h["text"] for h in out["edit_history"]] == ["Draft one", "Draft two"] and out["revision_count"] == 2
    ok(rt, sid, seed, "pin_chat_message", {"message_id": mid})
    gone = ok(rt, sid, seed, "delete_chat_message", {"message_id": mid})
    assert gone["deleted"] and gone["text"] is None and gone["pinned"] is False
    fails(rt, sid, seed, "delete_chat_message", {"message_id": mid}, "was deleted")
    fails(rt, sid, seed, "edit_chat_message", {"message_id": mid, "text": "undo"}, "was deleted")
    raw = state_of(rt, sid, seed)["messages"][mid]
    assert raw["text"] == "Final version" and len(raw["revisions"]) == 2 and raw["deleted"] is True
    archived = w.channel("archived_mine")
    old = w.message(archived["channel_id"], mine=True)
    fails(rt, sid, seed, "edit_chat_message", {"message_id": old["message_id"], "text": "update"}, "archived")
    fails(rt, sid, seed, "delete_chat_message", {"message_id": old["message_id"]}, "archived")


def test_reactions_and_pins(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 5
    w = World(rt, sid, seed)
    reacted = w.message(mine=False, my_reaction=True)
    emoji = next(r["emoji"] for r in reacted["reactions"] if r["mine"])
    fails(rt, sid, seed, "react_to_chat_message", {"message_id": reacted["message_id"], "emoji": emoji},
          "already reacted", "emoji")
    fails(rt, sid, seed, "react_to_chat_message", {"message_id": reacted["message_id"], "emoji": "unicorn_face"},
          "unknown emoji")
    spare = next(e for e in ("sparkles", "bulb", "memo") if e not in {r["emoji"] for r in reacted["reactions"]})
    fails(rt, sid, seed, "react_to_chat_message", {"message_id": reacted["message_id"], "emoji": spare,
                                                   "remove": True}, "no :" + spare)
    out = ok(rt, sid, seed, "react_to_chat_message", {"message_id": reacted["message_id"], "emoji": f":{emoji}:",
                                                      "remove": True})
    assert not any(r["mine"] and r["emoji"] == emoji for r in out["reactions"])
    ok(rt, sid, seed, "react_to_chat_message", {"message_id": reacted["message_id"], "emoji": emoji})
    unjoined = w.channel("public_unjoined")
    their = w.message(unjoined["channel_id"])
    fails(rt, sid, seed, "react_to_chat_message", {"message_id": their["message_id"], "emoji": "eyes"},
          "not a member")
    fails(rt, sid, seed, "pin_chat_message", {"message_id": their["message_id"]}, "not a member")
    archived = w.message(w.channel("archived_mine")["channel_id"])
    fails(rt, sid, seed, "react_to_chat_message", {"message_id": archived["message_id"], "emoji": "eyes"}, "archived")
    fails(rt, sid, seed, "pin_chat_message", {"message_id": archived["message_id"]}, "archived")
    member_of = {c["channel_id"] for c in w.channels if c["is_member"] and not c["archived"]}
    pinned = next(m for m in w.messages if m["pinned"] and m["channel_id"] in member_of)
    fails(rt, sid, seed, "pin_chat_message", {"message_id": pinned["message_id"]}, "already pinned")
    unpinned = next(m for m in w.messages if not m["pinned"] and not m["deleted"] and m["channel_id"] in member_of)
    fails(rt, sid, seed, "pin_chat_message", {"message_id": unpinned["message_id"], "pinned": False}, "is not pinned")
    deleted = next(m for m in w.messages if m["deleted"] and m["channel_id"] in member_of)
    fails(rt, sid, seed, "pin_chat_message", {"message_id": deleted["message_id"]}, "was deleted")
    fails(rt, sid, seed, "react_to_chat_message", {"message_id": deleted["message_id"], "emoji": "eyes"},
          "was deleted")
    ok(rt, sid, seed, "pin_chat_message", {"message_id": pinned["message_id"], "pinned": False})
    found = ok(rt, sid, seed, "search_chat_messages", {"only_pinned": True, "channel": pinned["channel_id"]})
    assert pinned["message_id"] not in {m["message_id"] for m in found["messages"]}


# ---------------------------------------------------------------- (4) the clock: scheduled messages, statuses
def test_scheduled_messages_post_when_due_and_can_be_cancelled(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    w = World(rt, sid, seed)
    cid = w.channel("postable")["channel_id"]
    colleague_sched = next(sm["scheduled_id"] for sm in w.scheduled if sm["text"].startswith("Don't forget"))
    fails(rt, sid, seed, "delete_chat_message", {"message_id": colleague_sched}, "not yours")
    sched = ok(rt, sid, seed, "post_chat_message", {"channel": cid, "text": "Standup notes are in the doc",
                                                    "send_at": "2026-06-01T11:30:00Z"})
    assert sched["scheduled"] and sched["status"] == "scheduled"
    cancel = ok(rt, sid, seed, "post_chat_message", {"channel": cid, "text": "Never mind",
                                                     "send_at": "2026-06-01T11:45:00Z"})
    ok(rt, sid, seed, "delete_chat_message", {"message_id": cancel["scheduled_id"]})
    fails(rt, sid, seed, "delete_chat_message", {"message_id": cancel["scheduled_id"]}, "already cancelled")
    # a scheduled reply whose parent is deleted before it is due fails instead of posting
    parent = ok(rt, sid, seed, "post_chat_message", {"channel": cid, "text": "Thread for later"})
    doomed = ok(rt, sid, seed, "post_chat_message", {"channel": cid, "text": "Late reply",
                                                     "thread_parent_id": parent["message_id"],
                                                     "send_at": "2026-06-01T12:00:00Z"})
    ok(rt, sid, seed, "delete_chat_message", {"message_id": parent["message_id"]})
    history = ok(rt, sid, seed, "get_chat_channel_messages", {"channel": cid})
    assert {s["scheduled_id"] for s in history["my_scheduled_messages"]} >= {sched["scheduled_id"],
                                                                                 doomed["scheduled_id"]}
    assert "Standup notes are in the doc" not in {m["text"] for m in history["messages"]}
    ok(rt, sid, seed, "team_chat_session_advance_clock", {"minutes": 180})
    after = ok(rt, sid, seed, "team_chat_list_messages", {"channel_id": cid, "limit": 500})
    by_id = {s["scheduled_id"]: s for s in after["scheduled"]}
    assert by_id[sched["scheduled_id"]]["status"] == "posted"
    assert by_id[cancel["scheduled_id"]]["status"] == "cancelled"
    assert by_id[doomed["scheduled_id"]]["status"] == "failed" and "deleted" in by_id[doomed["scheduled_id"]][
        "failure"]
    assert by_id["SCH-0003"]["status"] == "posted"
    posted = next(m for m in after["messages"] if m["message_id"] == by_id[sched["scheduled_id"]]["message_id"])
    assert posted["posted_at"] == "2026-06-01T11:30:00+00:00" and posted["author"]["member_id"] == w.me
    history = ok(rt, sid, seed, "get_chat_channel_messages", {"channel": cid})
    assert "Standup notes are in the doc" in {m["text"] for m in history["messages"]}
    assert not history["my_scheduled_messages"] or all(s["post_at"] > "2026-06-01T12:10"
                                                        for s in history["my_scheduled_messages"])


def test_statuses_expire_with_the_clock(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    busy = [m for m in ok(rt, sid, seed, "find_chat_members", {"limit": 100})["members"] if m["status"]]
    assert busy
    first = min(busy, key=lambda m: m["status"]["until"])
    ok(rt, sid, seed, "team_chat_session_advance_clock", {"minutes": 180})
    now = {m["member_id"]: m for m in ok(rt, sid, seed, "find_chat_members", {"limit": 100})["members"]}
    assert now[first["member_id"]]["status"] is None
    assert any(m["status"] for m in now.values())  # vacations last longer


def test_replay_gives_identical_state_and_reset_restores(rt: DomainRuntime) -> None:
    assert_replays_alike(rt, 2, [("team_chat_session_advance_clock", {"minutes": 24 * 60})])


# ---------------------------------------------------------------- (5) determinism, reads
def test_reads_filter_and_page(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    all_rows = ok(rt, sid, seed, "list_chat_channels", {"limit": 100})
    page = ok(rt, sid, seed, "list_chat_channels", {"limit": 3, "offset": 3})
    assert page["channels"] == all_rows["channels"][3:6]
    names = [c["name"] for c in all_rows["channels"]]
    assert names == sorted(names) and not any(c["archived"] for c in all_rows["channels"])
    with_archived = ok(rt, sid, seed, "list_chat_channels", {"include_archived": True, "limit": 100})
    assert with_archived["total"] > all_rows["total"]
    dms = ok(rt, sid, seed, "list_chat_channels", {"include_direct_messages": True, "membership": "joined",
                                                   "limit": 100})
    assert any(c["kind"] == "dm" and c["with_member"] for c in dms["channels"])
    eng = ok(rt, sid, seed, "search_chat_messages", {"query": "the", "limit": 100})
    assert eng["messages"] == sorted(eng["messages"], key=lambda m: (m["posted_at"], m["message_id"]), reverse=True)
    assert all("the" in m["text"].lower() and not m["deleted"] for m in eng["messages"])
    w = World(rt, sid, seed)
    author = w.message(mine=False)["author"]
    by = ok(rt, sid, seed, "search_chat_messages", {"author": author["handle"], "limit": 100})
    assert by["total"] >= 1 and {m["author"]["handle"] for m in by["messages"]} == {author["handle"]}
    values = {r["value"] for r in ok(rt, sid, seed, "team_chat_get_unique_values", {"field": "channel_kind"})}
    assert values == {"public", "private", "dm"}
