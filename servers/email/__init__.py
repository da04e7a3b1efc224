"""Email: several mailboxes on one mail server, with threads, drafts, folders, flags and labels.

Mail is append-only: a sent message is never edited or destroyed; replies and forwards add new
messages to the same conversation, and deleting moves a message to trash. State-dependent failures an
agent must handle: malformed or bouncing recipient addresses, messages without recipients, replying to
or forwarding mail in trash/spam or from no-reply senders, forwarding attachments a message does not
have, editing or sending a draft that was already sent, duplicate or reserved label names, labels that
do not exist, moving a message to the folder it is in, and flags that are already set.
"""

from servers.email import discovery, drafts, messages, organize  # noqa: F401  (registers the tools)
from servers.email.world import domain

__all__ = ["domain"]
