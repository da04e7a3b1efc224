"""Team chat discovery tools (hidden from the model): enumerate real entities for query synthesis.

They show the whole workspace as it really is, including what the signed-in member cannot see
(private channels they are not in), so synthesis can ground requests that should succeed and ones
that should be refused (joining without an invitation, editing someone else's message).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.kit import discovery, value_counts
from servers.team_chat.state import TeamChatState, member_view, message_view, scheduled_view


@discovery(produces=("member_id",))
def team_chat_list_members(s: TeamChatState) -> dict:
    """The workspace, the member the session acts as ("you"), and every member with handle, title,
    email, admin flag, status and whether the account is active."""
    ws = s.workspace.get()
    return {"workspace": ws.name, "domain": ws.domain, "me": member_view(s.members[ws.me_id]),
            "members": [member_view(m) for m in s.members.values()]}


@discovery(produces=("channel_id",))
def team_chat_list_channels(s: TeamChatState, kind: Literal["public", "private", "dm"] | None = None) -> list:
    """Every channel (private ones and direct messages included) with members, pending invitations,
    posting policy, archived flag and your relation to it.

    Args:
        kind: Only channels of this kind.
    """
    my_id = s.workspace.get().me_id
    rows = []
    for c in s.channels.values():
        if kind is not None and c.kind != kind:
            continue
        msgs = [m for m in s.messages.values() if m.channel_id == c.channel_id]
        rows.append({
            "channel_id": c.channel_id, "name": c.name, "kind": c.kind, "topic": c.topic, "archived": c.archived,
            "posting": c.posting, "member_ids": list(c.members), "invited_ids": list(c.invited),
            "is_member": my_id in c.members, "invited": my_id in c.invited,
            "message_count": len(msgs), "my_message_count": sum(1 for m in msgs if m.author_id == my_id),
        })
    return rows


@discovery(produces=("message_id", "scheduled_id"))
def team_chat_list_messages(
    s: TeamChatState,
    channel_id: str | None = None,
    author_id: str | None = None,
    top_level_only: bool = False,
    limit: Annotated[int, Field(ge=1, le=500)] = 200,
) -> dict:
    """Messages (newest first) with author, thread, reactions, pins and deletion state, plus every
    scheduled message and its status.

    Args:
        channel_id: Only messages of this channel.
        author_id: Only messages by this member.
        top_level_only: Leave thread replies out.
        limit: Maximum number of messages.
    """
    rows = [m for m in s.messages.values()
            if (channel_id is None or m.channel_id == channel_id) and (author_id is None or m.author_id == author_id)
            and not (top_level_only and m.thread_parent_id)]
    rows.sort(key=lambda m: (m.posted_at, m.message_id), reverse=True)
    return {"messages": [{**message_view(s, m), "raw_text": m.text} for m in rows[:limit]],
            "scheduled": [scheduled_view(s, sm) for sm in s.scheduled.values()]}


@discovery
def team_chat_get_unique_values(
    s: TeamChatState,
    field: Literal["channel_name", "channel_kind", "member_title", "member_status", "reaction_emoji",
                   "scheduled_status"],
) -> list:
    """Distinct values of a categorical field with their counts.

    Args:
        field: Which field to enumerate.
    """
    if field == "channel_name":
        values = [c.name for c in s.channels.values() if c.kind != "dm"]
    elif field == "channel_kind":
        values = [c.kind for c in s.channels.values()]
    elif field == "member_title":
        values = [m.title for m in s.members.values()]
    elif field == "member_status":
        values = [m.status_text for m in s.members.values() if m.status_text]
    elif field == "reaction_emoji":
        values = [e for m in s.messages.values() for e, who in m.reactions.items() for _ in who]
    else:
        values = [sm.status for sm in s.scheduled.values()]
    return value_counts(values)
