"""Social media domain: tool count, every failure rule (state unchanged), privacy and
blocks, scheduled publication on the session clock, replay determinism."""

from __future__ import annotations

from typing import Any

import pytest

from servers import PAPER_TOOL_COUNTS
from servers.kit import DomainRuntime
from servers.social_media import domain
from tests.servers.harness import assert_replays_alike, fails, new_sid, ok

SOON = "2026-06-01T10:00:00+00:00"


class World:
    """The guaranteed archetypes of a seeded world, read through the discovery tools."""

    def __init__(self, rt: DomainRuntime, sid: str, seed: int) -> None:
        self.accounts = ok(rt, sid, seed, "social_media_list_accounts", {})
        self.posts = ok(rt, sid, seed, "social_media_list_posts", {})
        self.by_name = {a["username"]: a for a in self.accounts}

    @property
    def private(self) -> dict[str, Any]:
        return next(a for a in self.accounts if a["is_private"] and a["requests_received"] and a["followers"])

    @property
    def viewer(self) -> dict[str, Any]:
        """A public account that follows people but neither follows nor asked to follow the private one."""
        p = self.private
        return next(a for a in self.accounts if not a["is_private"] and len(a["following"]) >= 3
                    and not a["blocked"] and not a["blocked_by"]
                    and a["username"] not in p["followers"] + p["requests_received"]
                    and any(q["author"] == a["username"] and q["created_at"] > "2026-06-01T08:30" for q in self.posts))

    @property
    def blocker(self) -> dict[str, Any]:
        return next(a for a in self.accounts if a["blocked"])

    def post(self, **want: Any) -> dict[str, Any]:
        return next(p for p in self.posts if all(p[k] == v for k, v in want.items()))

    def public_post(self, not_by: str, **want: Any) -> dict[str, Any]:
        return next(p for p in self.posts if p["status"] == "published" and not p["author_private"]
                    and p["repost_of"] is None and p["author"] != not_by
                    and not set(self.by_name[not_by]["blocked"] + self.by_name[not_by]["blocked_by"]) & {p["author"]}
                    and all(p[k] == v for k, v in want.items()))


# ---------------------------------------------------------------- (1) tool count, (2) smoke coverage
def test_exactly_fifteen_user_tools_and_named_discovery(rt: DomainRuntime) -> None:
    assert len(domain.user_tools) == PAPER_TOOL_COUNTS["social_media"] == 15
    assert len(rt.table.openai_tools()) == 15
    discovery = [s.name for s in domain.tools.values() if s.kind == "discovery"]
    assert 2 <= len(discovery) <= 4 and all(n.startswith("social_media_") for n in discovery)
    assert all(s.consumes or s.produces or s.requires for s in domain.user_tools)
    assert rt.table.sensitive_params("update_social_account_settings") == ["password"]
    text = rt.table.schemas["create_social_post"]["properties"]["text"]
    assert text["maxLength"] == 280 and text.get("x-multiline")


@pytest.mark.parametrize("seed", range(12))
def test_world_archetypes_exist_in_every_seed(rt: DomainRuntime, seed: int) -> None:
    w = World(rt, new_sid(), seed)
    assert w.private and w.viewer and w.blocker
    assert w.post(status="deleted") and w.public_post(w.viewer["username"], comments_enabled=False)
    assert any(p["status"] == "scheduled" and p["created_at"] <= SOON and p["mentions"] for p in w.posts)
    assert any(p["author"] == w.private["username"] and p["status"] == "published" for p in w.posts)
    assert 30 <= len(w.accounts) <= 60 and 150 <= len(w.posts) <= 500


# ---------------------------------------------------------------- (3) failure rules leave state alone
def test_unknown_ids_and_text_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    w = World(rt, sid, seed)
    me = w.viewer["username"]
    fails(rt, sid, seed, "get_social_home_feed", {"account": "nobody_here_1"}, "unknown account")
    fails(rt, sid, seed, "list_social_user_posts", {"target_username": "@nobody_here_1", "account": me},
          "unknown target_username")
    fails(rt, sid, seed, "like_social_post", {"post_id": "PST-9999", "account": me}, "unknown post_id")
    sched = w.post(status="scheduled")
    if sched["author"] != me:
        fails(rt, sid, seed, "like_social_post", {"post_id": sched["post_id"], "account": me}, "unknown post_id")
    fails(rt, sid, seed, "create_social_post", {"account": me, "text": "x" * 281}, "text")
    fails(rt, sid, seed, "create_social_post", {"account": me, "text": "hi @nobody_here_1"}, "mentions @nobody_here_1")
    fails(rt, sid, seed, "create_social_post", {"account": me, "text": "later", "schedule_at": "2026-06-01T09:03:00Z"},
          "between 5 minutes and 30 days")
    fails(rt, sid, seed, "create_social_post", {"account": me, "text": "later", "schedule_at": "2026-08-01T09:00:00Z"},
          "schedule_at")
    ok(rt, sid, seed, "create_social_post", {"account": me, "text": "Same words twice?"})
    fails(rt, sid, seed, "create_social_post", {"account": me, "text": " Same words twice? "}, "duplicate post")
    fails(rt, sid, seed, "update_social_account_settings", {"account": me, "password": w.viewer["password"],
                                                            "bio": "b" * 161}, "bio")


def test_privacy_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    w = World(rt, sid, seed)
    p, me = w.private, w.viewer["username"]
    hidden = w.post(author=p["username"], status="published")
    fails(rt, sid, seed, "list_social_user_posts", {"target_username": p["username"], "account": me},
          "account is private", "follow request")
    for tool in ("like_social_post", "comment_on_social_post", "repost_social_post"):
        args = {"post_id": hidden["post_id"], "account": me} | ({"text": "hi"} if tool.startswith("comment") else {})
        fails(rt, sid, seed, tool, args, "account is private")
    req = ok(rt, sid, seed, "follow_social_user", {"account": me, "target_username": p["username"]})
    assert req["status"] == "pending"
    fails(rt, sid, seed, "follow_social_user", {"account": me, "target_username": p["username"]}, "already pending")
    fails(rt, sid, seed, "list_social_user_posts", {"target_username": p["username"], "account": me}, "still pending")
    note = ok(rt, sid, seed, "list_social_notifications", {"account": p["username"], "unread_only": True})
    assert note["notifications"][0]["kind"] == "follow_request" and note["notifications"][0]["from"] == me
    ok(rt, sid, seed, "respond_to_social_follow_request", {"account": p["username"], "requester_username": me,
                                                           "decision": "approve"})
    fails(rt, sid, seed, "respond_to_social_follow_request", {"account": p["username"], "requester_username": me,
                                                              "decision": "approve"}, "already follows you")
    page = ok(rt, sid, seed, "list_social_user_posts", {"target_username": p["username"], "account": me})
    assert hidden["post_id"] in {x["post_id"] for x in page["posts"]}
    ok(rt, sid, seed, "like_social_post", {"post_id": hidden["post_id"], "account": me})
    fails(rt, sid, seed, "repost_social_post", {"post_id": hidden["post_id"], "account": me}, "cannot be reposted")
    fails(rt, sid, seed, "follow_social_user", {"account": me, "target_username": p["username"]}, "already follow")
    # the rest of the requests: one declined, then going public approves whoever is left
    rest = p["requests_received"]
    ok(rt, sid, seed, "respond_to_social_follow_request", {"account": p["username"], "requester_username": rest[0],
                                                           "decision": "decline"})
    fails(rt, sid, seed, "respond_to_social_follow_request", {"account": p["username"],
                                                              "requester_username": rest[0], "decision": "approve"},
          "no pending follow request")
    out = ok(rt, sid, seed, "update_social_account_settings", {"account": p["username"], "password": p["password"],
                                                               "is_private": False})
    assert out["approved_requests"] == rest[1:] and out["is_private"] is False


def test_block_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    w = World(rt, sid, seed)
    b = w.blocker
    blocker, blocked = b["username"], b["blocked"][0]
    their = w.post(author=blocker, status="published")
    fails(rt, sid, seed, "list_social_user_posts", {"target_username": blocker, "account": blocked}, "has blocked you")
    fails(rt, sid, seed, "list_social_user_posts", {"target_username": blocked, "account": blocker}, "you blocked")
    fails(rt, sid, seed, "like_social_post", {"post_id": their["post_id"], "account": blocked}, "has blocked you")
    fails(rt, sid, seed, "follow_social_user", {"account": blocked, "target_username": blocker}, "has blocked you")
    fails(rt, sid, seed, "follow_social_user", {"account": blocker, "target_username": blocked}, "unblock them first")
    fails(rt, sid, seed, "block_social_user", {"account": blocker, "target_username": blocked}, "already blocked")
    fails(rt, sid, seed, "block_social_user", {"account": blocker, "target_username": blocker}, "cannot block yourself")
    fails(rt, sid, seed, "block_social_user", {"account": blocked, "target_username": blocker, "unblock": True},
          "have not blocked")
    assert blocker not in {r["username"] for r in ok(rt, sid, seed, "search_social_users",
                                                     {"query": blocker, "account": blocked})}
    assert ok(rt, sid, seed, "search_social_users", {"query": blocker})[0]["username"] == blocker
    feed = ok(rt, sid, seed, "get_social_home_feed", {"account": blocked, "limit": 50})
    assert blocker not in {x["author"] for x in feed["posts"]}
    ok(rt, sid, seed, "block_social_user", {"account": blocker, "target_username": blocked, "unblock": True})
    ok(rt, sid, seed, "list_social_user_posts", {"target_username": blocker, "account": blocked})
    # blocking cuts follows both ways
    me = w.viewer["username"]
    friend = w.viewer["following"][0]
    out = ok(rt, sid, seed, "block_social_user", {"account": friend, "target_username": me})
    assert f"@{me} -> @{friend} (active)" in out["follows_removed"]
    now = {a["username"]: a for a in ok(rt, sid, seed, "social_media_list_accounts", {})}
    assert friend not in now[me]["following"] and me not in now[friend]["followers"] + now[friend]["following"]
    assert me in now[friend]["blocked"]
    fails(rt, sid, seed, "get_social_home_feed", {"account": "nobody_zz9"}, "unknown account")
    assert friend not in {x["author"] for x in ok(rt, sid, seed, "get_social_home_feed",
                                                  {"account": me, "limit": 50})["posts"]}


def test_follow_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    w = World(rt, sid, seed)
    me = w.viewer
    fails(rt, sid, seed, "follow_social_user", {"account": me["username"], "target_username": me["username"]},
          "cannot follow yourself")
    fails(rt, sid, seed, "follow_social_user", {"account": me["username"], "target_username": me["following"][0]},
          "already follow")
    stranger = next(a["username"] for a in w.accounts if a["username"] not in me["following"] + [me["username"]]
                    and a["username"] not in me["requests_sent"] and not a["is_private"] and not a["blocked"])
    fails(rt, sid, seed, "unfollow_social_user", {"account": me["username"], "target_username": stranger},
          "do not follow")
    fails(rt, sid, seed, "respond_to_social_follow_request", {"account": me["username"],
                                                              "requester_username": stranger, "decision": "approve"},
          "no pending follow request")
    ok(rt, sid, seed, "follow_social_user", {"account": me["username"], "target_username": stranger})
    note = ok(rt, sid, seed, "list_social_notifications", {"account": stranger, "limit": 1})["notifications"][0]
    assert note["kind"] == "follow" and note["from"] == me["username"]
    out = ok(rt, sid, seed, "unfollow_social_user", {"account": me["username"], "target_username": stranger})
    assert out["result"] == "unfollowed"
    # account settings
    pw = me["password"]
    fails(rt, sid, seed, "update_social_account_settings", {"account": me["username"], "password": pw + "x",
                                                            "bio": "hi"}, "incorrect password")
    fails(rt, sid, seed, "update_social_account_settings", {"account": me["username"], "password": pw},
          "nothing to change")
    fails(rt, sid, seed, "update_social_account_settings", {"account": me["username"], "password": pw,
                                                            "is_private": False}, "already public")
    ok(rt, sid, seed, "update_social_account_settings", {"account": me["username"], "password": pw,
                                                         "is_private": True, "display_name": "Private Me"})
    after = ok(rt, sid, seed, "follow_social_user", {"account": stranger, "target_username": me["username"]})
    assert after["status"] == "pending"
    ok(rt, sid, seed, "unfollow_social_user", {"account": stranger, "target_username": me["username"]})


def test_post_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 4
    w = World(rt, sid, seed)
    me = w.viewer["username"]
    other = w.public_post(me, comments_enabled=True)
    fresh = next(p for p in w.posts if p["author"] == me and p["created_at"] > "2026-06-01T08:30")
    old = next(p for p in w.posts if p["author"] == me and p["created_at"] < "2026-05-31" and p["status"] == "published"
               and p["repost_of"] is None)
    gone, closed = w.post(status="deleted"), w.public_post(me, comments_enabled=False)
    # editing
    fails(rt, sid, seed, "edit_social_post", {"post_id": other["post_id"], "account": me, "text": "mine now"},
          "only its author")
    fails(rt, sid, seed, "edit_social_post", {"post_id": old["post_id"], "account": me, "text": "typo fix"},
          "edit window closed")
    fails(rt, sid, seed, "edit_social_post", {"post_id": fresh["post_id"], "account": me, "text": fresh["text"]},
          "already has exactly this text")
    edited = ok(rt, sid, seed, "edit_social_post", {"post_id": fresh["post_id"], "account": me,
                                                    "text": "Edited: new #Hashtag here"})
    assert edited["hashtags"] == ["hashtag"] and edited["edited_at"]
    fails(rt, sid, seed, "edit_social_post", {"post_id": gone["post_id"], "account": gone["author"], "text": "back"},
          "was deleted")
    # deleted posts and closed comments
    fails(rt, sid, seed, "like_social_post", {"post_id": gone["post_id"], "account": me}, "post was deleted")
    fails(rt, sid, seed, "comment_on_social_post", {"post_id": gone["post_id"], "account": me, "text": "?"},
          "post was deleted")
    fails(rt, sid, seed, "repost_social_post", {"post_id": gone["post_id"], "account": me}, "post was deleted")
    fails(rt, sid, seed, "comment_on_social_post", {"post_id": closed["post_id"], "account": me, "text": "hey"},
          "turned comments off")
    fails(rt, sid, seed, "delete_social_post", {"post_id": gone["post_id"], "account": gone["author"]},
          "already deleted")
    fails(rt, sid, seed, "delete_social_post", {"post_id": other["post_id"], "account": me}, "only its author")
    # likes: once, and unlike only what you liked
    liked = me in other["liked_by"]
    if not liked:
        fails(rt, sid, seed, "like_social_post", {"post_id": other["post_id"], "account": me, "unlike": True},
              "have not liked")
        ok(rt, sid, seed, "like_social_post", {"post_id": other["post_id"], "account": me})
    fails(rt, sid, seed, "like_social_post", {"post_id": other["post_id"], "account": me}, "already liked")
    out = ok(rt, sid, seed, "like_social_post", {"post_id": other["post_id"], "account": me, "unlike": True})
    assert out["like_count"] == other["like_count"] - liked
    fails(rt, sid, seed, "like_social_post", {"post_id": other["post_id"], "account": me, "unlike": True},
          "have not liked")
    # reposts: a plain repost once; it cannot be edited; liking it likes the original
    rp = ok(rt, sid, seed, "repost_social_post", {"post_id": other["post_id"], "account": me})
    fails(rt, sid, seed, "repost_social_post", {"post_id": other["post_id"], "account": me}, "already reposted")
    fails(rt, sid, seed, "repost_social_post", {"post_id": rp["post_id"], "account": me}, "already reposted")
    fails(rt, sid, seed, "edit_social_post", {"post_id": rp["post_id"], "account": me, "text": "x"}, "plain repost")
    assert ok(rt, sid, seed, "like_social_post", {"post_id": rp["post_id"], "account": me})["post_id"] == other["post_id"]
    ok(rt, sid, seed, "delete_social_post", {"post_id": rp["post_id"], "account": me})
    again = ok(rt, sid, seed, "repost_social_post", {"post_id": other["post_id"], "account": me})
    assert again["original"]["post_id"] == other["post_id"]
    fails(rt, sid, seed, "comment_on_social_post", {"post_id": other["post_id"], "account": me, "text": "@nobody_zz9"},
          "mentions @nobody_zz9")
    c = ok(rt, sid, seed, "comment_on_social_post", {"post_id": other["post_id"], "account": me, "text": "Nice one"})
    assert c["comment_count"] == other["comment_count"] + 1


# ---------------------------------------------------------------- (4) time: scheduling and the edit window
def test_scheduled_posts_go_out_on_time_and_edits_expire(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 5
    w = World(rt, sid, seed)
    due = next(p for p in w.posts if p["status"] == "scheduled" and p["created_at"] <= SOON and p["mentions"])
    author, mentioned = due["author"], due["mentions"][0]
    fails(rt, sid, seed, "like_social_post", {"post_id": due["post_id"], "account": author}, "not published yet")
    own = ok(rt, sid, seed, "list_social_user_posts", {"target_username": author, "account": author, "limit": 50})
    assert due["post_id"] in {p["post_id"] for p in own["posts"] if p["status"] == "scheduled"}
    ok(rt, sid, seed, "edit_social_post", {"post_id": due["post_id"], "account": author,
                                           "text": due["text"] + " See you there!"})
    later = ok(rt, sid, seed, "create_social_post", {"account": author, "text": "Tomorrow's plan #weekend",
                                                     "schedule_at": "2026-06-02T18:00:00Z"})
    assert later["status"] == "scheduled"
    mine = ok(rt, sid, seed, "create_social_post", {"account": author, "text": "Quick update, more soon."})
    ok(rt, sid, seed, "social_media_session_advance_clock", {"minutes": 60})
    posts = {p["post_id"]: p for p in ok(rt, sid, seed, "social_media_list_posts", {"author": author})}
    assert posts[due["post_id"]]["status"] == "published" and posts[later["post_id"]]["status"] == "scheduled"
    notes = ok(rt, sid, seed, "list_social_notifications", {"account": mentioned, "unread_only": True})["notifications"]
    assert any(n["kind"] == "mention" and n["post_id"] == due["post_id"] for n in notes)
    fan = next(a["username"] for a in w.accounts if author in a["following"])
    feed = ok(rt, sid, seed, "get_social_home_feed", {"account": fan, "limit": 5})
    assert due["post_id"] in {p["post_id"] for p in feed["posts"]}
    fails(rt, sid, seed, "edit_social_post", {"post_id": mine["post_id"], "account": author, "text": "Changed"},
          "edit window closed")
    ok(rt, sid, seed, "like_social_post", {"post_id": due["post_id"], "account": fan})
    # a scheduled post can be cancelled before it goes out
    ok(rt, sid, seed, "delete_social_post", {"post_id": later["post_id"], "account": author})
    ok(rt, sid, seed, "social_media_session_advance_clock", {"minutes": 2 * 1440})
    assert ok(rt, sid, seed, "social_media_list_posts", {"author": author, "status": "deleted"})[-1]["post_id"] == \
        later["post_id"]


def test_replaying_the_same_calls_gives_the_same_state(rt: DomainRuntime) -> None:
    assert_replays_alike(rt, 3, [("social_media_session_advance_clock", {"minutes": 600})])


# ---------------------------------------------------------------- (5) determinism and discovery
def test_feed_order_and_unique_values(rt: DomainRuntime) -> None:
    sid = new_sid()
    w = World(rt, sid, 0)
    me = w.viewer
    feed = ok(rt, sid, 0, "get_social_home_feed", {"account": me["username"], "limit": 50})["posts"]
    assert feed == sorted(feed, key=lambda p: (p["created_at"], p["post_id"]), reverse=True)
    assert {p["author"] for p in feed} <= set(me["following"]) | {me["username"]}
    tag = ok(rt, sid, 0, "social_media_get_unique_values", {"field": "hashtag"})
    top = max(tag, key=lambda r: r["count"])["value"]
    tagged = ok(rt, sid, 0, "get_social_home_feed", {"account": me["username"], "hashtag": f"#{top}"})["posts"]
    assert all(top in p["hashtags"] or top in (p.get("original") or {}).get("text", "").lower() for p in tagged)
    kinds = {r["value"] for r in ok(rt, sid, 0, "social_media_get_unique_values", {"field": "notification_kind"})}
    assert {"like", "comment", "follow_request"} <= kinds
