"""Social media tools for people and accounts: finding accounts, following, follow requests, blocking,
notifications and account settings."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.kit import Name, Sensitive, Text, ToolError, iso, now, tool
from servers.social_media.state import (
    BIO_MAX_CHARS,
    Block,
    Follow,
    SocialState,
    following,
    get_account,
    need_not_blocked,
    notify,
    pair,
    profile,
)

Limit = Annotated[int, Field(ge=1, le=50)]
Bio = Annotated[Text, Field(max_length=BIO_MAX_CHARS)]


@tool(produces=("username",), read_only=True)
def search_social_users(s: SocialState, query: str, account: str | None = None, limit: Limit = 20) -> list:
    """Find accounts whose username, display name, bio or city contains all the words of the query, with
    follower counts, privacy and (given your account) whether you follow each other. Accounts that blocked
    you are not shown.

    Args:
        query: Words to look for, e.g. a person's name or a city.
        account: Your username, to see your relationship with each result.
        limit: How many accounts to return.
    """
    me = get_account(s, account, "account").username if account is not None else None
    words = query.lower().lstrip("@").split()
    rows = []
    for a in s.accounts.values():
        hay = f"{a.username} {a.display_name} {a.bio} {a.city}".lower()
        if all(w in hay for w in words) and (me is None or pair(a.username, me) not in s.blocks):
            rows.append(a)
    rows.sort(key=lambda a: (not a.username.startswith(words[0]) if words else False, a.username))
    return [profile(s, a, me) for a in rows[:limit]]


@tool(consumes=("username",), establishes=("following",))
def follow_social_user(s: SocialState, account: str, target_username: str) -> dict:
    """Follow an account. Following a private account sends a follow request that stays pending until they
    approve it. You cannot follow yourself or accounts with a block between you.

    Args:
        account: Your username.
        target_username: The account to follow.
    """
    me = get_account(s, account, "account").username
    them = get_account(s, target_username, "target_username")
    if them.username == me:
        raise ToolError("you cannot follow yourself", field="target_username")
    need_not_blocked(s, me, them.username, "target_username")
    status = following(s, me, them.username)
    if status == "active":
        raise ToolError(f"you already follow @{them.username}", field="target_username", code="duplicate")
    if status == "pending":
        raise ToolError(f"your follow request to @{them.username} is already pending their approval",
                        field="target_username", code="duplicate")
    at = now(s)
    status = "pending" if them.is_private else "active"
    s.follows.put(pair(me, them.username), Follow(me, them.username, status, iso(at)))
    notify(s, them.username, "follow_request" if status == "pending" else "follow", me, None, at)
    return {"account": me, "target_username": them.username, "status": status,
            "note": f"request sent; @{them.username} must approve it" if status == "pending" else "following"}


@tool(consumes=("username",), requires=("following",))
def unfollow_social_user(s: SocialState, account: str, target_username: str) -> dict:
    """Stop following an account, or withdraw a follow request that is still pending.

    Args:
        account: Your username.
        target_username: The account to unfollow.
    """
    me = get_account(s, account, "account").username
    them = get_account(s, target_username, "target_username")
    status = following(s, me, them.username)
    if status is None:
        raise ToolError(f"you do not follow @{them.username} and have no pending request to them",
                        field="target_username", code="illegal_state")
    s.follows.delete(pair(me, them.username))
    return {"account": me, "target_username": them.username,
            "result": "request withdrawn" if status == "pending" else "unfollowed"}


@tool(consumes=("username",), requires=("follow_request_pending",), establishes=("following",))
def respond_to_social_follow_request(s: SocialState, account: str, requester_username: str,
                                     decision: Literal["approve", "decline"]) -> dict:
    """Approve or decline a pending request to follow your (private) account; an approved requester is
    notified and can see your posts from then on.

    Args:
        account: Your username (the account that received the request).
        requester_username: Who asked to follow you.
        decision: "approve" or "decline".
    """
    me = get_account(s, account, "account").username
    them = get_account(s, requester_username, "requester_username")
    status = following(s, them.username, me)
    if status != "pending":
        raise ToolError(f"there is no pending follow request from @{them.username}"
                        + (f" (@{them.username} already follows you)" if status == "active" else ""),
                        field="requester_username", code="not_found")
    at = now(s)
    if decision == "approve":
        s.follows.edit(pair(them.username, me)).status = "active"
        notify(s, them.username, "follow_accepted", me, None, at)
    else:
        s.follows.delete(pair(them.username, me))
    pending = sum(1 for f in s.follows.values() if f.followee == me and f.status == "pending")
    return {"account": me, "requester_username": them.username, "decision": decision,
            "pending_requests_left": pending}


@tool(consumes=("username",), establishes=("blocked",))
def block_social_user(s: SocialState, account: str, target_username: str, unblock: bool = False) -> dict:
    """Block an account — it is removed from your followers and you from theirs, pending requests are
    dropped, and neither of you can see or interact with the other — or lift a block you set.

    Args:
        account: Your username.
        target_username: The account to block or unblock.
        unblock: True to lift the block instead.
    """
    me = get_account(s, account, "account").username
    them = get_account(s, target_username, "target_username")
    if them.username == me:
        raise ToolError("you cannot block yourself", field="target_username")
    key = pair(me, them.username)
    if unblock:
        if key not in s.blocks:
            raise ToolError(f"you have not blocked @{them.username}", field="target_username",
                            code="illegal_state")
        s.blocks.delete(key)
        return {"account": me, "target_username": them.username, "blocked": False}
    if key in s.blocks:
        raise ToolError(f"you already blocked @{them.username}", field="target_username", code="duplicate")
    removed = []
    for a, b in ((me, them.username), (them.username, me)):
        if pair(a, b) in s.follows:
            removed.append(f"@{a} -> @{b} ({s.follows[pair(a, b)].status})")
            s.follows.delete(pair(a, b))
    s.blocks.put(key, Block(me, them.username, iso(now(s))))
    return {"account": me, "target_username": them.username, "blocked": True, "follows_removed": removed}


@tool(consumes=("username",), produces=("post_id", "username"))
def list_social_notifications(s: SocialState, account: str, unread_only: bool = False, mark_read: bool = False,
                              limit: Limit = 20) -> dict:
    """Your notifications, newest first: likes, comments, reposts, mentions, new followers and follow
    requests; optionally mark the ones returned as read.

    Args:
        account: Your username.
        unread_only: Only notifications you have not read yet.
        mark_read: Mark the returned notifications as read.
        limit: How many notifications to return.
    """
    me = get_account(s, account, "account").username
    rows = [n for n in s.notifications.values() if n.recipient == me and (not unread_only or not n.read)]
    rows.sort(key=lambda n: (n.created_at, n.notification_id), reverse=True)
    rows = rows[:limit]
    out = [{"notification_id": n.notification_id, "kind": n.kind, "from": n.actor, "post_id": n.post_id,
            "created_at": n.created_at, "read": n.read} for n in rows]
    if mark_read:
        for n in rows:
            if not n.read:
                s.notifications.edit(n.notification_id).read = True
    unread = sum(1 for n in s.notifications.values() if n.recipient == me and not n.read)
    return {"account": me, "unread_remaining": unread, "notifications": out}


@tool(consumes=("username",), establishes=("account_private",))
def update_social_account_settings(s: SocialState, account: str, password: Sensitive, is_private: bool | None = None,
                                   display_name: Name | None = None, bio: Bio | None = None) -> dict:
    """Change your account's privacy, display name or bio; confirm with your password. Making a private
    account public approves every pending follow request.

    Args:
        account: Your username.
        password: Your account password, as you know it.
        is_private: True to make the account private (new followers need approval), False to make it public.
        display_name: A new display name.
        bio: A new bio (at most 160 characters).
    """
    a = get_account(s, account, "account")
    if password != a.password:
        raise ToolError(f"incorrect password for @{a.username}", field="password", code="auth")
    if is_private is None and display_name is None and bio is None:
        raise ToolError("nothing to change: give is_private, display_name or bio", field="is_private")
    if is_private is not None and is_private == a.is_private:
        raise ToolError(f"@{a.username} is already {'private' if a.is_private else 'public'}", field="is_private")
    rec = s.accounts.edit(a.username)
    approved = []
    if display_name is not None:
        rec.display_name = display_name.strip()
    if bio is not None:
        rec.bio = bio.strip()
    if is_private is not None:
        rec.is_private = is_private
        if not is_private:
            at = now(s)
            for key, f in list(s.follows.items()):
                if f.followee == a.username and f.status == "pending":
                    s.follows.edit(key).status = "active"
                    notify(s, f.follower, "follow_accepted", a.username, None, at)
                    approved.append(f.follower)
    return {**profile(s, rec), "approved_requests": approved}
