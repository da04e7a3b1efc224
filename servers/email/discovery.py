"""Discovery tools (hidden from the model): enumerate the seeded world so synthesis can ground
requests in real mailboxes, contacts, messages, drafts and labels."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.email.state import EmailState, summary
from servers.kit import discovery, value_counts


@discovery(produces=("mailbox",))
def email_list_mailboxes(s: EmailState) -> list:
    """Every hosted mailbox with its owner, counts per folder, unread count, drafts and user labels."""
    out = []
    for box in s.mailboxes.values():
        mine = [r for r in s.emails.values() if r.mailbox == box.address]
        folders: dict[str, int] = {}
        for r in mine:
            folders[r.folder] = folders.get(r.folder, 0) + 1
        out.append({
            "address": box.address, "display_name": box.display_name, "title": box.title,
            "folders": dict(sorted(folders.items())), "unread": sum(not r.is_read for r in mine),
            "drafts": sum(d.mailbox == box.address and d.status == "draft" for d in s.drafts.values()),
            "labels": [lb.name for lb in s.labels.values() if lb.mailbox == box.address],
        })
    return out


@discovery(produces=("email_id", "thread_id", "draft_id"))
def email_search_all(
    s: EmailState, mailbox: str | None = None, folder: str | None = None, has_attachments: bool | None = None,
    include_drafts: bool = False, limit: Annotated[int, Field(ge=1, le=1000)] = 200,
) -> dict:
    """Messages across all mailboxes (with mailbox, thread and direction), optionally drafts too.

    Args:
        mailbox: Only this mailbox's messages.
        folder: Only messages in this folder (inbox, sent, archive, trash, spam).
        has_attachments: Only messages with (true) or without (false) attachments.
        include_drafts: Also return every draft, sent ones included.
        limit: Maximum number of messages.
    """
    rows = [{**summary(r), "mailbox": r.mailbox, "direction": r.direction}
            for r in s.emails.values()
            if (mailbox is None or r.mailbox == mailbox.lower()) and (folder is None or r.folder == folder)
            and (has_attachments is None or bool(r.attachments) == has_attachments)]
    out: dict = {"total": len(rows), "emails": rows[:limit]}
    if include_drafts:
        out["drafts"] = [d for d in s.drafts.values() if mailbox is None or d.mailbox == mailbox.lower()]
    return out


@discovery(produces=("mailbox",))
def email_list_contacts(s: EmailState, relation: str | None = None) -> list:
    """External correspondents (clients, vendors, friends, notification/newsletter/spam senders).

    Args:
        relation: Only contacts of this relation (client, vendor, personal, notification, newsletter, spam).
    """
    return [c for c in s.contacts.values() if relation is None or c.relation == relation]


@discovery
def email_get_unique_values(
    s: EmailState, field: Literal["sender", "folder", "label", "subject", "attachment_type", "recipient_domain"],
) -> list:
    """Distinct values of a message field across all mailboxes, with their counts.

    Args:
        field: Which field to enumerate.
    """
    found: list[str] = []
    for r in s.emails.values():
        if field == "label":
            values = r.labels
        elif field == "attachment_type":
            values = [a.mime_type for a in r.attachments]
        elif field == "recipient_domain":
            values = sorted({a.split("@", 1)[1] for a in [*r.to, *r.cc]})
        else:
            values = [getattr(r, field)]
        found.extend(values)
    return value_counts(found)
