"""Team chat reads: channels, a channel's history or one thread, message search, member lookup."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field

from servers.kit import IsoDateTime, ToolError, parse_datetime, tool
from servers.team_chat.state import (
    TeamChatState,
    channel_view,
    get_channel,
    get_member,
    member_view,
    message_view,
    need_read_access,
    scheduled_view,
    thread_parent,
)

Limit = Annotated[int, Field(ge=1, le=100)]
Offset = Annotated[int, Field(ge=0, le=10_000)]


@tool(produces=("channel_id",), read_only=True)
def list_chat_channels(
    s: TeamChatState,
    query: str | None = None,
    membership: Literal["all", "joined", "not_joined", "invited"] = "all",
    include_archived: bool = False,
    include_direct_messages: bool = False,
    limit: Limit = 25,
    offset: Offset = 0,
) -> dict:
    """List the workspace's chat channels you can see, sorted by name: every public channel, plus the
    private channels you belong to or are invited to (and, on request, your direct-message
    conversations). Each entry says whether you are a member, whether it is archived (read-only) and
    who may post there.

    Args:
        query: Case-insensitive text to look for in the channel name or topic.
        membership: Only channels you have joined, have not joined, or have a pending invitation to.
        include_archived: Also list archived channels.
        include_direct_messages: Also list your direct-message conversations.
        limit: Maximum number of channels to return.
        offset: Number of matching channels to skip (for paging).
    """
    my_id = s.workspace.get().me_id
    needle = (query or "").strip().lower().lstrip("#")
    rows = []
    for c in s.channels.values():
        joined, invited = my_id in c.members, my_id in c.invited
        if c.kind == "private" and not (joined or invited):
            continue
        if c.kind == "dm" and (not include_direct_messages or not joined):
            continue
        if c.archived and not include_archived:
            continue
        if (membership == "joined" and not joined) or (membership == "not_joined" and joined) \
                or (membership == "invited" and not invited):
            continue
        if needle and needle not in c.name and needle not in c.topic.lower():
            continue
        rows.append(c)
    rows.sort(key=lambda c: (c.kind == "dm", c.name))
    return {"total": len(rows), "offset": offset,
            "channels": [channel_view(s, c) for c in rows[offset:offset + limit]]}


@tool(consumes=("channel_id",), produces=("message_id",), read_only=True)
def get_chat_channel_messages(
    s: TeamChatState,
    channel: str,
    thread_parent_id: str | None = None,
    since: IsoDateTime | None = None,
    limit: Limit = 20,
    include_edit_history: bool = False,
) -> dict:
    """Read a channel's recent messages, newest first, or one whole thread (the parent message followed
    by its replies, oldest first). Private channels and direct messages can only be read by their
    members. Deleted messages appear as tombstones without text. Your own still-pending scheduled
    messages for the channel are listed too.

    Args:
        channel: The channel id or its #name.
        thread_parent_id: Id of a top-level message: return that thread instead of the channel history.
        since: Only messages posted at or after this date-time (ISO 8601).
        limit: Maximum number of messages to return.
        include_edit_history: Also return the earlier versions of edited messages.
    """
    c = get_channel(s, channel)
    need_read_access(s, c, "channel")
    start: datetime | None = parse_datetime(since, "since") if since else None

    def keep(posted: str) -> bool:
        return start is None or datetime.fromisoformat(posted) >= start

    if thread_parent_id is not None:
        parent = s.messages.get(thread_parent_id.strip())
        if parent is not None and parent.deleted and parent.channel_id == c.channel_id \
                and parent.thread_parent_id is None:
            root = parent  # a deleted parent still shows its thread
        else:
            root = thread_parent(s, c, thread_parent_id)
        replies = [m for m in s.messages.values() if m.thread_parent_id == root.message_id and keep(m.posted_at)]
        replies.sort(key=lambda m: (m.posted_at, m.message_id))
        return {"channel_id": c.channel_id, "thread": message_view(s, root, history=include_edit_history),
                "reply_total": len(replies),
                "replies": [message_view(s, m, history=include_edit_history) for m in replies[:limit]]}
    top = [m for m in s.messages.values()
           if m.channel_id == c.channel_id and m.thread_parent_id is None and keep(m.posted_at)]
    top.sort(key=lambda m: (m.posted_at, m.message_id), reverse=True)
    my_id = s.workspace.get().me_id
    pending = [scheduled_view(s, sm) for sm in s.scheduled.values()
               if sm.channel_id == c.channel_id and sm.author_id == my_id and sm.status == "scheduled"]
    return {"channel": channel_view(s, c), "total": len(top),
            "messages": [message_view(s, m, history=include_edit_history) for m in top[:limit]],
            "my_scheduled_messages": pending}


@tool(consumes=("channel_id", "member_id"), produces=("message_id",), read_only=True)
def search_chat_messages(
    s: TeamChatState,
    query: str | None = None,
    channel: str | None = None,
    author: str | None = None,
    mentions_me: bool = False,
    only_pinned: bool = False,
    limit: Limit = 20,
) -> dict:
    """Search the messages you can see (public channels, your private channels and your direct
    messages), newest first. Every word of the query must appear in the message; deleted messages are
    never returned. Give at least one filter.

    Args:
        query: Words to look for (case-insensitive).
        channel: Only this channel (id or #name).
        author: Only messages by this member (member id, @handle or full name).
        mentions_me: Only messages that mention you.
        only_pinned: Only pinned messages.
        limit: Maximum number of messages to return.
    """
    if not (query or "").strip() and channel is None and author is None and not mentions_me and not only_pinned:
        raise ToolError("give a query, a channel, an author, mentions_me or only_pinned to search by",
                        field="query")
    my_id = s.workspace.get().me_id
    words = (query or "").lower().split()
    only_channel = get_channel(s, channel) if channel is not None else None
    if only_channel is not None:
        need_read_access(s, only_channel, "channel")
    who = get_member(s, author, "author") if author is not None else None
    hits = []
    for m in s.messages.values():
        c = s.channels[m.channel_id]
        if m.deleted or (c.kind != "public" and my_id not in c.members):
            continue
        if only_channel is not None and m.channel_id != only_channel.channel_id:
            continue
        if who is not None and m.author_id != who.member_id:
            continue
        if mentions_me and my_id not in m.mentions:
            continue
        if only_pinned and m.pinned_by is None:
            continue
        text = m.text.lower()
        if all(w in text for w in words):
            hits.append(m)
    hits.sort(key=lambda m: (m.posted_at, m.message_id), reverse=True)
    return {"total": len(hits), "messages": [message_view(s, m) for m in hits[:limit]]}


@tool(consumes=("channel_id",), produces=("member_id",), read_only=True)
def find_chat_members(
    s: TeamChatState,
    query: str | None = None,
    channel: str | None = None,
    include_deactivated: bool = False,
    limit: Limit = 25,
) -> dict:
    """Look up people in the workspace by name, @handle, title or email, optionally only the members of
    one channel. Shows each person's current status (e.g. in a meeting, on vacation) and whether the
    account is still active.

    Args:
        query: Case-insensitive text to match against name, handle, title or email.
        channel: Only members of this channel (id or #name).
        include_deactivated: Also list deactivated accounts.
        limit: Maximum number of people to return.
    """
    needle = (query or "").strip().lower().lstrip("@")
    scope = None
    if channel is not None:
        c = get_channel(s, channel)
        need_read_access(s, c, "channel")
        scope = set(c.members)
    my_id = s.workspace.get().me_id
    rows = []
    for m in s.members.values():
        if (scope is not None and m.member_id not in scope) or (not m.active and not include_deactivated):
            continue
        if needle and not any(needle in f.lower() for f in (m.full_name, m.handle, m.title, m.email)):
            continue
        rows.append({**member_view(m), "is_you": m.member_id == my_id})
    rows.sort(key=lambda r: r["full_name"])
    return {"total": len(rows), "members": rows[:limit]}
