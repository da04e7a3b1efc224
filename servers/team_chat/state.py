"""Team chat state: one workspace seen through the signed-in member ("you"), its members, channels,
direct-message conversations, append-only messages and scheduled messages — plus the shared rules.

Messages are append-only: an edit appends the previous text to ``revisions``, a delete only marks
the record (``deleted``) so the thread and its history stay intact. The rule helpers here (channel
access, posting rights, thread depth, mentions) are used by every tool, so the same situation is
always refused with the same message naming the argument at fault and the way out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from servers.kit import Cell, Counters, State, Table, ToolError, iso, new_id, require

MAX_MESSAGE_CHARS = 4000
MAX_SCHEDULE_DAYS = 120
MENTION = re.compile(r"(?<![\w.@])@([a-z0-9][a-z0-9._-]*[a-z0-9]|[a-z0-9])")
SPECIAL_MENTIONS = ("channel", "here", "everyone")


@dataclass
class Workspace:
    name: str
    domain: str
    me_id: str  # the member the session acts as


@dataclass
class Member:
    member_id: str
    handle: str
    full_name: str
    title: str
    email: str
    is_admin: bool
    active: bool  # False: the account was deactivated (kept for history)
    status_text: str = ""
    status_emoji: str = ""
    status_until: str | None = None


@dataclass
class Channel:
    channel_id: str
    name: str  # without '#'; direct messages: "dm-<handle>-<handle>"
    kind: str  # public | private | dm
    topic: str
    theme: str  # what the channel is about (drives the seeded conversation)
    created_by: str
    created_at: str
    archived: bool
    posting: str  # everyone | admins
    members: list[str]
    invited: list[str] = field(default_factory=list)  # pending invitations to a private channel


@dataclass
class Revision:
    text: str
    replaced_at: str  # when this text was replaced by a newer one


@dataclass
class Message:
    message_id: str
    channel_id: str
    author_id: str
    text: str
    posted_at: str
    thread_parent_id: str | None = None
    reply_count: int = 0
    last_reply_at: str | None = None
    mentions: list[str] = field(default_factory=list)
    reactions: dict[str, list[str]] = field(default_factory=dict)  # emoji -> member ids, in order
    revisions: list[Revision] = field(default_factory=list)
    edited_at: str | None = None
    deleted: bool = False
    deleted_at: str | None = None
    pinned_by: str | None = None
    pinned_at: str | None = None
    scheduled_id: str | None = None


@dataclass
class ScheduledMessage:
    scheduled_id: str
    channel_id: str
    author_id: str
    text: str
    post_at: str
    created_at: str
    thread_parent_id: str | None = None
    status: str = "scheduled"  # scheduled | posted | cancelled | failed
    message_id: str | None = None
    failure: str | None = None


class TeamChatState(State):
    workspace: Cell[Workspace]
    members: Table[Member]
    channels: Table[Channel]
    messages: Table[Message]
    scheduled: Table[ScheduledMessage]
    counters: Cell[Counters]


# ---------------------------------------------------------------- lookups
def me(s: TeamChatState) -> Member:
    return s.members[s.workspace.get().me_id]


def get_member(s: TeamChatState, ref: str, field: str) -> Member:
    """A member by id (``USR-0007``), handle (``@maria.lopez`` / ``maria.lopez``) or full name."""
    key = ref.strip()
    rec = s.members.get(key)
    if rec is not None:
        return rec
    handle = key.lstrip("@").lower()
    for m in s.members.values():
        if m.handle == handle or m.full_name.lower() == key.lower():
            return m
    raise ToolError(f"unknown member '{ref}': give a member id, @handle or full name "
                    "(find_chat_members lists them)", field=field, code="not_found")


def get_channel(s: TeamChatState, ref: str, field: str = "channel") -> Channel:
    """A channel by id (``CHN-0003``) or name (``#design`` / ``design``)."""
    key = ref.strip()
    rec = s.channels.get(key)
    if rec is not None:
        return rec
    name = key.lstrip("#").lower()
    for c in s.channels.values():
        if c.kind != "dm" and c.name == name:
            return c
    raise ToolError(f"unknown channel '{ref}': give a channel id or #name (list_chat_channels lists them)",
                    field=field, code="not_found")


def get_message(s: TeamChatState, message_id: str, field: str = "message_id") -> Message:
    rec = require(s.messages, message_id.strip(), field, shown=message_id)
    need_read_access(s, s.channels[rec.channel_id], field)
    return rec


def label(c: Channel) -> str:
    return "this direct-message conversation" if c.kind == "dm" else f"#{c.name}"


# ---------------------------------------------------------------- access rules
def need_read_access(s: TeamChatState, c: Channel, field: str) -> None:
    """Public channels are readable by everyone; private channels and DMs only by their members."""
    if c.kind != "public" and s.workspace.get().me_id not in c.members:
        what = "a private channel" if c.kind == "private" else "a direct-message conversation"
        raise ToolError(f"#{c.name} is {what} you are not a member of; only its members can see it",
                        field=field, code="forbidden")


def need_writable(c: Channel, field: str) -> None:
    if c.archived:
        raise ToolError(f"{label(c)} is archived and read-only: nothing can be posted, edited, reacted to or "
                        "pinned there (an admin must unarchive it first)", field=field, code="archived")


def need_member(s: TeamChatState, c: Channel, field: str, action: str) -> None:
    need_read_access(s, c, field)
    if s.workspace.get().me_id not in c.members:
        raise ToolError(f"you are not a member of {label(c)}: call join_chat_channel first, then {action}",
                        field=field, code="precondition")


def need_post_rights(s: TeamChatState, c: Channel, field: str) -> None:
    need_writable(c, field)
    need_member(s, c, field, "post")
    if c.posting == "admins" and not me(s).is_admin:
        admins = ", ".join(f"@{s.members[m].handle}" for m in c.members if s.members[m].is_admin)
        raise ToolError(f"only workspace admins can post in {label(c)} ({admins}); ask one of them to post it",
                        field=field, code="forbidden")


def need_own(s: TeamChatState, m: Message, action: str) -> None:
    my_id = s.workspace.get().me_id
    if m.author_id != my_id:
        author = s.members[m.author_id]
        raise ToolError(f"you can only {action} your own messages; {m.message_id} was posted by "
                        f"@{author.handle}", field="message_id", code="forbidden")


def need_not_deleted(m: Message, action: str) -> None:
    if m.deleted:
        raise ToolError(f"message {m.message_id} was deleted at {m.deleted_at}; it cannot be {action}",
                        field="message_id", code="deleted")


def thread_parent(s: TeamChatState, c: Channel, parent_id: str) -> Message:
    """The message a reply goes under: same channel, top level (threads are one level deep), not deleted."""
    parent = require(s.messages, parent_id.strip(), "thread_parent_id", shown=parent_id)
    if parent.channel_id != c.channel_id:
        raise ToolError(f"message {parent.message_id} is in #{s.channels[parent.channel_id].name}, not in "
                        f"{label(c)}; reply in the channel of the thread", field="thread_parent_id")
    if parent.thread_parent_id is not None:
        raise ToolError(f"message {parent.message_id} is itself a reply; threads are one level deep, so reply to "
                        f"its parent {parent.thread_parent_id} instead", field="thread_parent_id",
                        code="thread_depth")
    if parent.deleted:
        raise ToolError(f"message {parent.message_id} was deleted; its thread takes no new replies",
                        field="thread_parent_id", code="deleted")
    return parent


def clean_text(text: str) -> str:
    body = text.strip()
    if not body:
        raise ToolError("the message text is empty", field="text")
    if len(body) > MAX_MESSAGE_CHARS:
        raise ToolError(f"the message text has {len(body)} characters; the limit is {MAX_MESSAGE_CHARS}",
                        field="text")
    return body


def mentions_in(s: TeamChatState, text: str) -> list[str]:
    """Member ids (or ``channel``/``here``/``everyone``) mentioned with ``@handle``; unknown handles fail."""
    handles = {m.handle: m for m in s.members.values()}
    out: list[str] = []
    for raw in MENTION.findall(text.lower()):
        name = raw.rstrip(".")
        if name in SPECIAL_MENTIONS:
            key = name
        elif name in handles:
            member = handles[name]
            if not member.active:
                raise ToolError(f"@{name} ({member.full_name}) has been deactivated and cannot be mentioned",
                                field="text", code="deactivated")
            key = member.member_id
        else:
            raise ToolError(f"the text mentions @{name}, but no member has that handle; use find_chat_members to "
                            "get the right @handle", field="text", code="not_found")
        if key not in out:
            out.append(key)
    return out


def append_message(s: TeamChatState, c: Channel, author_id: str, text: str, at: datetime,
                   parent: Message | None, scheduled_id: str | None = None) -> Message:
    mid = new_id(s.counters, "MSG", 5)
    msg = Message(mid, c.channel_id, author_id, text, iso(at),
                  thread_parent_id=parent.message_id if parent else None,
                  mentions=mentions_in(s, text), scheduled_id=scheduled_id)
    s.messages.put(mid, msg)
    if parent is not None:
        p = s.messages.edit(parent.message_id)
        p.reply_count += 1
        p.last_reply_at = iso(at)
    return msg


# ---------------------------------------------------------------- views
def member_view(m: Member, *, full: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"member_id": m.member_id, "handle": f"@{m.handle}", "full_name": m.full_name}
    if full:
        out.update(title=m.title, email=m.email, is_admin=m.is_admin, active=m.active,
                   status={"text": m.status_text, "emoji": m.status_emoji, "until": m.status_until}
                   if m.status_text else None)
    return out


def channel_view(s: TeamChatState, c: Channel) -> dict[str, Any]:
    my_id = s.workspace.get().me_id
    msgs = [m for m in s.messages.values() if m.channel_id == c.channel_id]
    out: dict[str, Any] = {
        "channel_id": c.channel_id, "name": f"#{c.name}" if c.kind != "dm" else None, "kind": c.kind,
        "topic": c.topic, "archived": c.archived,
        "posting": "admins only" if c.posting == "admins" else "everyone",
        "member_count": len(c.members), "is_member": my_id in c.members, "invited": my_id in c.invited,
        "message_count": sum(1 for m in msgs if not m.deleted),
        "last_message_at": max((m.posted_at for m in msgs), default=None),
        "pinned_count": sum(1 for m in msgs if m.pinned_by and not m.deleted),
    }
    if c.kind == "dm":
        other = next((s.members[m] for m in c.members if m != my_id), s.members[my_id])
        out["with_member"] = member_view(other, full=False)
    return out


def message_view(s: TeamChatState, m: Message, *, history: bool = False) -> dict[str, Any]:
    my_id = s.workspace.get().me_id
    author = s.members[m.author_id]
    c = s.channels[m.channel_id]
    out: dict[str, Any] = {
        "message_id": m.message_id, "channel_id": m.channel_id,
        "channel": f"#{c.name}" if c.kind != "dm" else "direct message",
        "author": {"member_id": author.member_id, "handle": f"@{author.handle}", "full_name": author.full_name},
        "text": None if m.deleted else m.text, "posted_at": m.posted_at, "thread_parent_id": m.thread_parent_id,
        "reply_count": m.reply_count, "last_reply_at": m.last_reply_at,
        "mentions": [x if x in SPECIAL_MENTIONS else f"@{s.members[x].handle}" for x in m.mentions],
        "reactions": [{"emoji": e, "count": len(who), "by": [f"@{s.members[w].handle}" for w in who],
                       "mine": my_id in who} for e, who in m.reactions.items() if who],
        "pinned": m.pinned_by is not None, "edited_at": m.edited_at, "revision_count": len(m.revisions),
        "deleted": m.deleted,
    }
    if m.deleted:
        out["deleted_at"] = m.deleted_at
    if history and not m.deleted:
        out["edit_history"] = [{"text": r.text, "replaced_at": r.replaced_at} for r in m.revisions]
    return out


def scheduled_view(s: TeamChatState, sm: ScheduledMessage) -> dict[str, Any]:
    c = s.channels[sm.channel_id]
    return {"scheduled_id": sm.scheduled_id, "channel_id": sm.channel_id,
            "channel": f"#{c.name}" if c.kind != "dm" else "direct message", "text": sm.text,
            "post_at": sm.post_at, "thread_parent_id": sm.thread_parent_id, "status": sm.status,
            "message_id": sm.message_id, "failure": sm.failure}


# ---------------------------------------------------------------- time
def on_time(s: TeamChatState, before: datetime, after: datetime) -> None:
    """Post every scheduled message that fell due (in post time order) and clear expired statuses."""
    del before
    due = sorted((sm.post_at, sid) for sid, sm in s.scheduled.items()
                 if sm.status == "scheduled" and datetime.fromisoformat(sm.post_at) <= after)
    for post_at, sid in due:
        sm = s.scheduled.edit(sid)
        c = s.channels[sm.channel_id]
        try:
            need_writable(c, "channel")
            if sm.author_id not in c.members:
                raise ToolError(f"the author is no longer a member of {label(c)}")
            parent = thread_parent(s, c, sm.thread_parent_id) if sm.thread_parent_id else None
            msg = append_message(s, c, sm.author_id, sm.text, datetime.fromisoformat(post_at), parent, sid)
        except ToolError as exc:
            sm.status, sm.failure = "failed", str(exc)
            continue
        sm.status, sm.message_id = "posted", msg.message_id
    for mid, m in s.members.items():
        if m.status_until is not None and datetime.fromisoformat(m.status_until) <= after:
            rec = s.members.edit(mid)
            rec.status_text, rec.status_emoji, rec.status_until = "", "", None
