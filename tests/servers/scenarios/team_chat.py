"""Team chat smoke scenario: catch up on a channel, post and reply, fix a typo, react, pin, search,
message a colleague, accept a private-channel invitation and tidy up — succeeding once with every
user-visible tool.

``call(name, args)`` performs a tool call on one session (over whatever transport the harness
chose), asserts it did not return an error, and returns the decoded JSON result.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


async def smoke(call: Call) -> None:
    joined = await call("list_chat_channels", {"membership": "joined", "limit": 100})
    channel = next(c for c in joined["channels"] if c["kind"] == "public" and c["posting"] == "everyone"
                   and not c["archived"] and c["message_count"] >= 5)
    cid = channel["channel_id"]
    people = await call("find_chat_members", {"channel": channel["name"]})
    colleague = next(m for m in people["members"] if not m["is_you"] and m["active"])
    me = next(m for m in people["members"] if m["is_you"])

    history = await call("get_chat_channel_messages", {"channel": cid, "limit": 50})
    theirs = next(m for m in history["messages"] if not m["deleted"] and m["author"]["member_id"] != me["member_id"])
    thread = await call("get_chat_channel_messages", {"channel": cid, "thread_parent_id": theirs["message_id"]})
    assert thread["thread"]["message_id"] == theirs["message_id"]

    # Post an update mentioning a colleague, then fix a typo in it.
    post = await call("post_chat_message", {"channel": cid, "text": f"Status update: the rollout is on trak, "
                                                                      f"{colleague['handle']} please review."})
    mine = post["message_id"]
    edited = await call("edit_chat_message", {"message_id": mine, "text": f"Status update: the rollout is on "
                                                                          f"track, {colleague['handle']} please review."})
    assert edited["revision_count"] == 1 and edited["edit_history"][0]["text"].endswith("please review.")
    await call("pin_chat_message", {"message_id": mine})

    # Answer in someone's thread, react to their message, then take the reply back.
    reply = await call("post_chat_message", {"channel": cid, "text": "Thanks, looking into it.",
                                             "thread_parent_id": theirs["message_id"]})
    mine_emoji = {r["emoji"] for r in theirs["reactions"] if r["mine"]}
    emoji = next(e for e in ("tada", "eyes", "rocket", "heart") if e not in mine_emoji)
    await call("react_to_chat_message", {"message_id": theirs["message_id"], "emoji": emoji})
    await call("delete_chat_message", {"message_id": reply["message_id"]})

    found = await call("search_chat_messages", {"query": "rollout track", "channel": cid})
    assert [m["message_id"] for m in found["messages"]] == [mine]

    dm = await call("send_chat_direct_message", {"member": colleague["handle"],
                                                 "text": "Could you look at my rollout update when you have a minute?"})
    assert dm["to"] == colleague["handle"]

    invited = await call("list_chat_channels", {"membership": "invited"})
    joined_now = await call("join_chat_channel", {"channel": invited["channels"][0]["name"]})
    assert joined_now["is_member"] is True
