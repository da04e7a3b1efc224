"""Email: several mailboxes on one mail server, with threads, drafts, folders, flags and labels.

State behaviour: mail is append-only — a sent message is never edited or destroyed; replies and
forwards add new messages to the same conversation, every hosted recipient gets an unread inbox copy
(Bcc hidden from the others), and deleting moves a message to trash. Drafts are the one mutable kind
of mail until they are sent, then they are frozen with the id of the message they became. Reading a
message or a thread marks it read. Timestamps come from the session clock (one minute per call).

State-dependent failures an agent must handle: an unknown mailbox, message, thread, draft or label
(ids of another mailbox are unknown too), malformed recipient addresses, addresses on this server's
domain without a mailbox (they would bounce), messages without recipients or with more than 50, an
empty message or draft, an update that changes nothing, replying to or forwarding mail in trash/spam,
replying to no-reply (notification/newsletter) senders, forwarding attachments a message does not
have, editing, sending or deleting a draft that was already sent, duplicate or reserved label names,
labelling mail in trash, adding a label a message already has or removing one it lacks (or both at
once), moving a message to the folder it is in or to a folder that does not fit its direction (sent
mail to inbox/spam, received mail to sent), flags that are already set, starring spam, and a search
whose ``since`` is after its ``until``.
"""

from servers.email import discovery, tools_drafts, tools_messages, tools_organize
from servers.email.state import EmailState
from servers.email.world import generate
from servers.kit import Domain

domain = Domain("email", EmailState, generate, description=__doc__ or "",
                modules=(tools_drafts, tools_messages, tools_organize, discovery))

__all__ = ["domain"]
