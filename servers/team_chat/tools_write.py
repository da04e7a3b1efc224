"""Team chat writes: join, post (now, in a thread, or scheduled), direct messages, edit, delete,
react and pin. Messages are append-only: edits keep the earlier text, deletes keep a tombstone."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from pydantic import Field

from servers.kit import IsoDateTime, Text, ToolError, iso, new_id, now, parse_datetime, tool
from servers.team_chat import data
from servers.team_chat.state import (
    MAX_SCHEDULE_DAYS,
    Channel,
    ScheduledMessage,
    TeamChatState,
    append_message,
    channel_view,
    clean_text,
    get_channel,
    get_member,
    get_message,
    label,
    me,
    mentions_in,
    message_view,
    need_member,
    need_not_deleted,
    need_own,
    need_post_rights,
    need_writable,
    scheduled_view,
    thread_parent,
)
from servers.team_chat.state import Revision as _Revision

Emoji = Annotated[str, Field(min_length=1, max_length=42, pattern=r"^:?[a-z0-9_+\-]{1,40}:?$")]
KNOWN_EMOJI = frozenset(data.EMOJI)


@tool(consumes=("channel_id",), establishes=("channel_member",))
def join_chat_channel(s: TeamChatState, channel: str) -> dict:
    """Join a channel so you can post, react and pin there. Any public channel can be joined; a private
    channel only with a pending invitation from one of its members. Archived channels cannot be joined.

    Args:
        channel: The channel id or its #name.
    """
    c = get_channel(s, channel)
    my_id = s.workspace.get().me_id
    if c.kind == "dm":
        raise ToolError("direct-message conversations cannot be joined", field="channel")
    if my_id in c.members:
        raise ToolError(f"you are already a member of {label(c)}", field="channel", code="already_member")
    if c.archived:
        raise ToolError(f"{label(c)} is archived; archived channels cannot be joined", field="channel",
                        code="archived")
    if c.kind == "private" and my_id not in c.invited:
        raise ToolError(f"{label(c)} is a private channel and you have no invitation; ask one of its members to "
                        "invite you", field="channel", code="forbidden")
    rec = s.channels.edit(c.channel_id)
    rec.members.append(my_id)
    if my_id in rec.invited:
        rec.invited.remove(my_id)
    return channel_view(s, rec)


@tool(consumes=("channel_id", "message_id"), produces=("message_id", "scheduled_id"), requires=("channel_member",))
def post_chat_message(
    s: TeamChatState,
    channel: str,
    text: Text,
    thread_parent_id: str | None = None,
    send_at: IsoDateTime | None = None,
) -> dict:
    """Post a message to a channel you are a member of, optionally as a reply in the thread of a top-level
    message (threads are one level deep), and optionally scheduled for later. Mention people with
    @handle. Archived channels are read-only, and admins-only channels accept posts from admins only.

    Args:
        channel: The channel id or its #name.
        text: The message text (up to 4000 characters); @handle mentions notify those people.
        thread_parent_id: Reply in the thread of this top-level message instead of posting to the channel.
        send_at: Schedule the message for this future date-time (ISO 8601, up to 120 days ahead).
    """
    c = get_channel(s, channel)
    need_post_rights(s, c, "channel")
    body = clean_text(text)
    parent = thread_parent(s, c, thread_parent_id) if thread_parent_id is not None else None
    mentions_in(s, body)  # refuse unknown @handles now rather than at send time
    my_id = s.workspace.get().me_id
    if send_at is not None:
        when = parse_datetime(send_at, "send_at")
        if when <= now(s):
            raise ToolError(f"send_at {send_at} is not in the future (it is now {iso(now(s))}); leave it out to "
                            "post right away", field="send_at")
        if when > now(s) + timedelta(days=MAX_SCHEDULE_DAYS):
            raise ToolError(f"messages can be scheduled at most {MAX_SCHEDULE_DAYS} days ahead", field="send_at")
        sid = new_id(s.counters, "SCH")
        sm = s.scheduled.put(sid, ScheduledMessage(sid, c.channel_id, my_id, body, iso(when), iso(now(s)),
                                                   thread_parent_id=parent.message_id if parent else None))
        return {"scheduled": True, **scheduled_view(s, sm)}
    msg = append_message(s, c, my_id, body, now(s), parent)
    return {"scheduled": False, **message_view(s, msg)}


def _dm_channel(s: TeamChatState, my_id: str, other_id: str) -> Channel:
    for c in s.channels.values():
        if c.kind == "dm" and sorted(c.members) == sorted([my_id, other_id]):
            return c
    a, b = sorted([s.members[my_id].handle, s.members[other_id].handle])
    cid = new_id(s.counters, "CHN")
    return s.channels.put(cid, Channel(cid, f"dm-{a}-{b}", "dm", "", "dm", my_id, iso(now(s)), False, "everyone",
                                       [my_id, other_id]))


@tool(consumes=("member_id",), produces=("message_id", "channel_id"))
def send_chat_direct_message(s: TeamChatState, member: str, text: Text) -> dict:
    """Send a private direct message to one colleague, starting the conversation if there is none yet.
    Deactivated accounts cannot receive messages.

    Args:
        member: The colleague's member id, @handle or full name.
        text: The message text (up to 4000 characters).
    """
    other = get_member(s, member, "member")
    my_id = s.workspace.get().me_id
    if other.member_id == my_id:
        raise ToolError("that is you; direct messages go to another member", field="member")
    if not other.active:
        raise ToolError(f"{other.full_name} (@{other.handle}) has been deactivated and cannot receive direct "
                        "messages", field="member", code="deactivated")
    body = clean_text(text)
    c = _dm_channel(s, my_id, other.member_id)
    msg = append_message(s, c, my_id, body, now(s), None)
    return {**message_view(s, msg), "to": f"@{other.handle}",
            "status": other.status_text or None}


@tool(consumes=("message_id",), requires=("channel_member",))
def edit_chat_message(s: TeamChatState, message_id: str, text: Text) -> dict:
    """Change the text of one of your own messages. The earlier text is kept in the message's edit
    history. Deleted messages and messages in archived channels cannot be edited.

    Args:
        message_id: The message to edit (it must be yours).
        text: The new text (up to 4000 characters).
    """
    m = get_message(s, message_id)
    c = s.channels[m.channel_id]
    need_own(s, m, "edit")
    need_not_deleted(m, "edited")
    need_writable(c, "message_id")
    body = clean_text(text)
    if body == m.text:
        raise ToolError("the new text is identical to the current text; nothing to edit", field="text")
    mentions = mentions_in(s, body)
    rec = s.messages.edit(m.message_id)
    rec.revisions.append(_Revision(rec.text, iso(now(s))))
    rec.text, rec.mentions, rec.edited_at = body, mentions, iso(now(s))
    return message_view(s, rec, history=True)


@tool(consumes=("message_id", "scheduled_id"), requires=("channel_member",))
def delete_chat_message(s: TeamChatState, message_id: str) -> dict:
    """Delete one of your own messages (it stays in the conversation as "message deleted", its thread
    replies are kept and it is unpinned), or cancel one of your scheduled messages by its scheduled id
    (SCH-...) before it is sent.

    Args:
        message_id: The message id (MSG-...) or the scheduled message id (SCH-...).
    """
    key = message_id.strip()
    sm = s.scheduled.get(key)
    if sm is not None:
        if sm.author_id != s.workspace.get().me_id:
            raise ToolError(f"scheduled message {key} is not yours", field="message_id", code="forbidden")
        if sm.status != "scheduled":
            raise ToolError(f"scheduled message {key} was already {sm.status}; only pending ones can be cancelled",
                            field="message_id", code="invalid_state")
        rec = s.scheduled.edit(key)
        rec.status = "cancelled"
        return {"cancelled": True, **scheduled_view(s, rec)}
    m = get_message(s, key)
    need_own(s, m, "delete")
    need_not_deleted(m, "deleted again")
    need_writable(s.channels[m.channel_id], "message_id")
    rec = s.messages.edit(m.message_id)
    rec.deleted, rec.deleted_at = True, iso(now(s))
    rec.pinned_by = rec.pinned_at = None
    return {"deleted": True, **message_view(s, rec)}


@tool(consumes=("message_id",), requires=("channel_member",))
def react_to_chat_message(s: TeamChatState, message_id: str, emoji: Emoji, remove: bool = False) -> dict:
    """Add an emoji reaction to a message in a channel you belong to, or take your reaction back. You can
    react with each emoji only once per message.

    Args:
        message_id: The message to react to.
        emoji: Emoji name such as thumbsup, tada, eyes or :white_check_mark: (colons optional).
        remove: Take back your reaction with this emoji instead of adding it.
    """
    name = emoji.strip(":").lower()
    if name not in KNOWN_EMOJI:
        raise ToolError(f"unknown emoji ':{name}:' in this workspace; try e.g. +1, heart, tada, eyes, rocket",
                        field="emoji", code="not_found")
    m = get_message(s, message_id)
    c = s.channels[m.channel_id]
    need_writable(c, "message_id")
    need_member(s, c, "message_id", "react")
    need_not_deleted(m, "reacted to")
    my_id = s.workspace.get().me_id
    who = m.reactions.get(name, [])
    if not remove and my_id in who:
        raise ToolError(f"you already reacted with :{name}: to {m.message_id}; each emoji counts once per person",
                        field="emoji", code="duplicate")
    if remove and my_id not in who:
        raise ToolError(f"you have no :{name}: reaction on {m.message_id} to remove", field="emoji",
                        code="not_found")
    rec = s.messages.edit(m.message_id)
    if remove:
        rec.reactions[name].remove(my_id)
        if not rec.reactions[name]:
            del rec.reactions[name]
    else:
        rec.reactions.setdefault(name, []).append(my_id)
    return message_view(s, rec)


@tool(consumes=("message_id",), requires=("channel_member",))
def pin_chat_message(s: TeamChatState, message_id: str, pinned: bool = True) -> dict:
    """Pin a message to its channel so everyone finds it in the channel's pinned items, or unpin it.
    Needs membership of the channel; deleted messages and archived channels cannot be changed.

    Args:
        message_id: The message to pin or unpin.
        pinned: True to pin, False to unpin.
    """
    m = get_message(s, message_id)
    c = s.channels[m.channel_id]
    need_writable(c, "message_id")
    need_member(s, c, "message_id", "pin messages")
    need_not_deleted(m, "pinned")
    if pinned and m.pinned_by is not None:
        raise ToolError(f"{m.message_id} is already pinned in {label(c)}", field="pinned", code="duplicate")
    if not pinned and m.pinned_by is None:
        raise ToolError(f"{m.message_id} is not pinned", field="pinned", code="invalid_state")
    rec = s.messages.edit(m.message_id)
    if pinned:
        rec.pinned_by, rec.pinned_at = me(s).member_id, iso(now(s))
    else:
        rec.pinned_by = rec.pinned_at = None
    return message_view(s, rec)
