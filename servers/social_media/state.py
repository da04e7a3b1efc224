"""Social media state: accounts (public or private), follows and follow requests, blocks, posts (with
hashtags, mentions, reposts, scheduled publication), comments, likes, notifications — and the shared
rules: who may see whose posts, and what happens when the clock reaches a scheduled post."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from servers.kit import Cell, Counters, State, Table, ToolError, iso, new_id, require

POST_MAX_CHARS = 280
BIO_MAX_CHARS = 160
EDIT_WINDOW = timedelta(minutes=60)
MIN_SCHEDULE_AHEAD = timedelta(minutes=5)
MAX_SCHEDULE_AHEAD = timedelta(days=30)
DUPLICATE_WINDOW = timedelta(hours=24)
HASHTAG = re.compile(r"(?<![\w#])#([A-Za-z][A-Za-z0-9_]{0,49})")
MENTION = re.compile(r"(?<![\w@])@([A-Za-z0-9_]{1,30})")


@dataclass
class Account:
    username: str
    display_name: str
    bio: str
    city: str
    email: str
    password: str
    is_private: bool
    verified: bool
    joined_at: str


@dataclass
class Follow:
    follower: str
    followee: str
    status: str  # active | pending (a request to a private account)
    created_at: str


@dataclass
class Block:
    blocker: str
    blocked: str
    created_at: str


@dataclass
class Post:
    post_id: str
    author: str
    text: str
    hashtags: list[str]
    mentions: list[str]
    created_at: str  # publication time (the planned time while scheduled)
    status: str  # published | scheduled | deleted
    repost_of: str | None = None  # a repost (empty text) or a quote post (with text)
    comments_enabled: bool = True
    like_count: int = 0
    comment_count: int = 0
    repost_count: int = 0
    edited_at: str | None = None
    deleted_at: str | None = None


@dataclass
class Comment:
    comment_id: str
    post_id: str
    author: str
    text: str
    created_at: str


@dataclass
class Like:
    post_id: str
    username: str
    liked_at: str


@dataclass
class Notification:
    notification_id: str
    recipient: str
    kind: str  # like | comment | repost | mention | follow | follow_request | follow_accepted
    actor: str
    post_id: str | None
    created_at: str
    read: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


class SocialState(State):
    accounts: Table[Account]
    follows: Table[Follow]  # key "follower>followee"
    blocks: Table[Block]  # key "blocker>blocked"
    posts: Table[Post]
    comments: Table[Comment]
    likes: Table[Like]  # key "post_id>username"
    notifications: Table[Notification]
    counters: Cell[Counters]


# ---------------------------------------------------------------- keys and lookups
def pair(a: str, b: str) -> str:
    return f"{a}>{b}"


def when(text: str) -> datetime:
    return datetime.fromisoformat(text)


def get_account(s: SocialState, username: str, field: str) -> Account:
    name = username.strip().lstrip("@")
    return require(s.accounts, name.lower(), field, shown=f"@{name}", hint=": no account has that username")


def get_post(s: SocialState, post_id: str, viewer: str | None = None) -> Post:
    """A post by id; a scheduled post exists only for its author."""
    rec = s.posts.get(post_id.strip().upper())
    if rec is None or (rec.status == "scheduled" and rec.author != viewer):
        raise ToolError(f"unknown post_id '{post_id}'", field="post_id", code="not_found")
    return rec


def following(s: SocialState, follower: str, followee: str) -> str | None:
    """"active", "pending" or None."""
    rec = s.follows.get(pair(follower, followee))
    return rec.status if rec else None


def need_not_blocked(s: SocialState, account: str, other: str, field: str) -> None:
    if pair(account, other) in s.blocks:
        raise ToolError(f"you blocked @{other}; unblock them first (block_social_user with unblock)", field=field,
                        code="blocked")
    if pair(other, account) in s.blocks:
        raise ToolError(f"@{other} has blocked you; you cannot see or interact with their account", field=field,
                        code="blocked")


def need_can_see(s: SocialState, viewer: str, author: str, field: str) -> None:
    """The viewer may see the author's posts: nobody blocked anybody, and a private account is followed."""
    if viewer == author:
        return
    need_not_blocked(s, viewer, author, field)
    if s.accounts[author].is_private and following(s, viewer, author) != "active":
        pending = following(s, viewer, author) == "pending"
        raise ToolError(f"@{author}'s account is private: only approved followers can see their posts; "
                        + ("your follow request is still pending" if pending else
                           "send a follow request first (follow_social_user)"), field=field, code="private")


def live_post(s: SocialState, post_id: str, viewer: str, action: str) -> Post:
    """A published post the viewer may see (a pure repost stands for its original)."""
    p = get_post(s, post_id, viewer)
    if p.status == "deleted":
        raise ToolError(f"cannot {action} {p.post_id}: the post was deleted", field="post_id", code="deleted")
    if p.status == "scheduled":
        raise ToolError(f"cannot {action} {p.post_id}: it is scheduled for {p.created_at} and not published yet",
                        field="post_id", code="illegal_state")
    if p.repost_of and not p.text:
        need_can_see(s, viewer, p.author, "post_id")
        return live_post(s, p.repost_of, viewer, action)
    need_can_see(s, viewer, p.author, "post_id")
    return p


def parse_text(s: SocialState, text: str, field: str) -> tuple[list[str], list[str]]:
    """(hashtags, mentions) of a text; every mention must be an existing account."""
    tags = list(dict.fromkeys(t.lower() for t in HASHTAG.findall(text)))
    mentions = list(dict.fromkeys(m.lower() for m in MENTION.findall(text)))
    for m in mentions:
        if m not in s.accounts:
            raise ToolError(f"the text mentions @{m}, but no account has that username", field=field,
                            code="not_found")
    return tags, mentions


# ---------------------------------------------------------------- views
def counts(s: SocialState, username: str) -> dict[str, int]:
    followers = following_n = 0
    for f in s.follows.values():
        if f.status == "active":
            followers += f.followee == username
            following_n += f.follower == username
    posts = sum(1 for p in s.posts.values() if p.author == username and p.status == "published")
    return {"followers": followers, "following": following_n, "posts": posts}


def profile(s: SocialState, a: Account, viewer: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"username": a.username, "display_name": a.display_name, "bio": a.bio, "city": a.city,
                           "is_private": a.is_private, "verified": a.verified, "joined_at": a.joined_at,
                           **counts(s, a.username)}
    if viewer is not None and viewer != a.username:
        out["you_follow"] = following(s, viewer, a.username) or "no"
        out["follows_you"] = following(s, a.username, viewer) == "active"
        out["you_blocked"] = pair(viewer, a.username) in s.blocks
    return out


def post_view(s: SocialState, p: Post, viewer: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"post_id": p.post_id, "author": p.author, "text": p.text, "hashtags": list(p.hashtags),
                           "mentions": list(p.mentions), "created_at": p.created_at, "status": p.status,
                           "like_count": p.like_count, "comment_count": p.comment_count,
                           "repost_count": p.repost_count, "comments_enabled": p.comments_enabled,
                           "edited_at": p.edited_at}
    if viewer is not None:
        out["liked_by_you"] = pair(p.post_id, viewer) in s.likes
    if p.repost_of:
        orig = s.posts[p.repost_of]
        out["kind"] = "quote" if p.text else "repost"
        out["original"] = ({"post_id": orig.post_id, "status": "deleted"} if orig.status == "deleted" else
                           {"post_id": orig.post_id, "author": orig.author, "text": orig.text,
                            "created_at": orig.created_at, "like_count": orig.like_count})
    else:
        out["kind"] = "post"
    if p.comment_count:
        recent = sorted((c for c in s.comments.values() if c.post_id == p.post_id),
                        key=lambda c: (c.created_at, c.comment_id))[-3:]
        out["recent_comments"] = [{"comment_id": c.comment_id, "author": c.author, "text": c.text,
                                   "created_at": c.created_at} for c in recent]
    return out


# ---------------------------------------------------------------- changes shared by tools and time
def notify(s: SocialState, recipient: str, kind: str, actor: str, post_id: str | None, at: datetime) -> None:
    if recipient == actor or pair(recipient, actor) in s.blocks or pair(actor, recipient) in s.blocks:
        return
    nid = new_id(s.counters, "NTF", 5)
    s.notifications.put(nid, Notification(nid, recipient, kind, actor, post_id, iso(at)))


def announce(s: SocialState, p: Post, mentions: list[str], at: datetime) -> None:
    """Notify newly mentioned accounts of a published post."""
    for m in mentions:
        notify(s, m, "mention", p.author, p.post_id, at)


def on_time(s: SocialState, before: datetime, after: datetime) -> None:
    """Publish every scheduled post whose time has come (in time order, then id order)."""
    due = sorted((p.created_at, pid) for pid, p in s.posts.items()
                 if p.status == "scheduled" and when(p.created_at) <= after)
    for at, pid in due:
        rec = s.posts.edit(pid)
        rec.status = "published"
        announce(s, rec, rec.mentions, when(at))
