"""Team chat: a Slack-like workspace seen by one signed-in member — people, public and private
channels (membership, invitations, archived channels, admins-only announcement channels), direct
messages, append-only messages with one-level threads, @mentions, emoji reactions, pins, search and
scheduled messages that the clock posts when they fall due.

State behaviour: messages are append-only. Editing appends the previous text to the message's edit
history; deleting marks the message deleted (a tombstone without text) and keeps its thread; a
scheduled message is posted by the session clock at its time (or marked failed if its channel or
thread no longer accepts it); member statuses ("In a meeting" until 10:00) expire with the clock.

Failure rules (each refused with a message naming the argument, state unchanged):

- unknown channel, member, message, thread parent or scheduled message id;
- reading a private channel or direct message you are not a member of;
- posting, editing, deleting, reacting or pinning in an archived channel (read-only);
- posting, reacting or pinning in a channel you have not joined (join first);
- posting in an admins-only channel when you are not an admin;
- joining a private channel without an invitation; joining an archived channel or one you are
  already in; joining a direct-message conversation;
- replying to a reply (threads are one level deep), to a message of another channel, or to a
  deleted message;
- editing or deleting someone else's message; editing or deleting a deleted message; an edit that
  changes nothing;
- reacting twice with the same emoji; removing a reaction you did not add; an unknown emoji;
  reacting to a deleted message;
- pinning an already pinned or deleted message; unpinning a message that is not pinned;
- mentioning an @handle nobody has, or a deactivated member;
- empty text or text over 4000 characters;
- scheduling in the past or more than 120 days ahead; cancelling a scheduled message that is not
  yours or no longer pending;
- direct messages to yourself or to a deactivated account.
"""

from servers.kit import Domain
from servers.team_chat import discovery, tools_read, tools_write
from servers.team_chat.state import TeamChatState, on_time
from servers.team_chat.world import generate

domain = Domain(
    "team_chat", TeamChatState, generate,
    description=(
        "A Slack-like team chat workspace seen by one signed-in member: public and private channels with "
        "membership and invitations, archived read-only channels, direct messages, append-only messages "
        "with one-level threads, mentions, reactions, pins, search and scheduled messages."
    ),
    modules=(tools_read, tools_write, discovery),
    on_time=on_time,
)

__all__ = ["domain"]
