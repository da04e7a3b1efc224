"""Social media smoke scenario: a user finds a friend's private account, reads a profile and the home
feed, likes, comments on and reposts a post, writes / edits / deletes a post, follows and unfollows
someone, blocks a spammer, reads notifications and updates the bio; a private account approves a follow
request — succeeding once with every user-visible tool.

``call(name, args)`` performs a tool call on one session (over whatever transport the harness chose),
asserts it did not return an error, and returns the decoded JSON result.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


async def smoke(call: Call) -> None:
    accounts = await call("social_media_list_accounts", {})
    by_name = {a["username"]: a for a in accounts}
    private = next(a for a in accounts if a["is_private"] and a["requests_received"])
    me = next(a for a in accounts if not a["is_private"] and a["following"] and not a["blocked_by"]
              and a["username"] not in private["followers"] + private["requests_received"])
    user = me["username"]

    # Look up a friend by name, then read a profile of someone followed.
    found = await call("search_social_users", {"query": private["display_name"], "account": user})
    assert private["username"] in {r["username"] for r in found}
    friend = next(f for f in me["following"] if not by_name[f]["is_private"])
    page = await call("list_social_user_posts", {"target_username": friend, "account": user, "limit": 5})
    assert page["profile"]["username"] == friend and page["profile"]["you_follow"] == "active"

    # React to a post in the home feed.
    feed = await call("get_social_home_feed", {"account": user, "limit": 50})
    post = next(p for p in feed["posts"] if p["author"] != user and p["kind"] == "post" and p["comments_enabled"]
                and not p["liked_by_you"] and not by_name[p["author"]]["is_private"])
    liked = await call("like_social_post", {"post_id": post["post_id"], "account": user})
    assert liked["like_count"] == post["like_count"] + 1
    await call("comment_on_social_post", {"post_id": post["post_id"], "account": user, "text": "Love this!"})
    await call("repost_social_post", {"post_id": post["post_id"], "account": user,
                                      "quote": f"Worth a look, @{post['author']}!"})

    # Write a post, fix a typo, then take it down.
    mine = await call("create_social_post", {"account": user, "text": f"Cofee with @{friend} this morning #weekend"})
    await call("edit_social_post", {"post_id": mine["post_id"], "account": user,
                                    "text": f"Coffee with @{friend} this morning #weekend"})
    await call("delete_social_post", {"post_id": mine["post_id"], "account": user})

    # Follow someone new, change one's mind; block an account.
    others = [a for a in accounts if a["username"] != user and a["username"] not in me["following"]
              and a["username"] not in me["requests_sent"] and a["username"] not in me["blocked"]
              and user not in a["blocked"]]
    new = next(a for a in others if not a["is_private"])
    followed = await call("follow_social_user", {"account": user, "target_username": new["username"]})
    assert followed["status"] == "active"
    await call("unfollow_social_user", {"account": user, "target_username": new["username"]})
    await call("block_social_user", {"account": user, "target_username": others[-1]["username"]})

    # The private account approves a follower; the user catches up and edits the profile.
    await call("respond_to_social_follow_request", {"account": private["username"],
                                                    "requester_username": private["requests_received"][0],
                                                    "decision": "approve"})
    await call("list_social_notifications", {"account": user, "mark_read": True})
    await call("update_social_account_settings", {"account": user, "password": me["password"],
                                                  "bio": "Coffee first. Runner. Weekend photographer."})
