"""Email records, the session state and the rules every tool shares.

Why the shapes: the service hosts several mailboxes at one company domain and exchanges mail with
external contacts. Every mailbox keeps its own copy of each message it sent or received (own id,
folder, flags and labels), the way a real IMAP/Gmail store does; copies of one message share its
RFC ``message_id`` and the conversation's ``thread_id``. Message content is append-only: nothing
ever edits a sent message; only per-copy folder, flags and labels change. Drafts are the one
mutable kind of mail, until they are sent.

Every tool acts for one mailbox (the user the agent assists); a message id only resolves inside the
mailbox that owns that copy, so one user can never read or touch another user's mail. Timestamps come
from the kit's session clock, which moves one minute per call, so messages stay ordered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import Field

from servers.kit import Cell, Counters, EmailAddress, State, Table, ToolError, iso, new_id, now, require

Subject = Annotated[str, Field(max_length=200)]
Addresses = Annotated[list[EmailAddress], Field(max_length=50)]
"""Recipient lists: bare addresses (``name@example.com``), at most 50 per field."""

SYSTEM_FOLDERS = ("inbox", "sent", "archive", "trash", "spam")
RESERVED_LABELS = frozenset({*SYSTEM_FOLDERS, "drafts", "starred", "unread", "important", "all mail"})
LABEL_COLORS = ("red", "orange", "yellow", "green", "blue", "purple", "gray")
USER_LABEL_POOL = ("Work", "Finance", "Clients", "Travel", "Personal", "Receipts", "Projects")


@dataclass
class Attachment:
    filename: str
    mime_type: str
    size_kb: int


@dataclass
class Mailbox:
    address: str
    display_name: str
    title: str
    created_on: str


@dataclass
class Contact:
    """Someone outside the service (client, vendor, friend, newsletter or spam sender)."""

    address: str
    name: str
    company: str
    relation: str  # client | vendor | personal | notification | newsletter | spam


@dataclass
class Email:
    """One mailbox's copy of a message. Content fields never change after creation."""

    email_id: str
    mailbox: str
    thread_id: str
    message_id: str  # RFC 5322 Message-ID shared by every copy of the same message
    direction: str  # received | sent
    sender: str
    sender_name: str
    to: list[str]
    cc: list[str]
    bcc: list[str]  # only the sender's copy knows the Bcc list
    subject: str
    body: str
    timestamp: str
    folder: str  # inbox | sent | archive | trash | spam
    labels: list[str]
    is_read: bool
    is_starred: bool
    attachments: list[Attachment] = field(default_factory=list)
    in_reply_to: str | None = None  # the parent's message_id
    forwarded_from: str | None = None  # the forwarded message's message_id


@dataclass
class Draft:
    draft_id: str
    mailbox: str
    to: list[str]
    cc: list[str]
    bcc: list[str]
    subject: str
    body: str
    thread_id: str | None
    in_reply_to: str | None
    status: str  # draft | sent
    updated_at: str
    sent_email_id: str | None = None


@dataclass
class Label:
    label_id: str
    mailbox: str
    name: str
    color: str
    created_on: str


class EmailState(State):
    mailboxes: Table[Mailbox]
    contacts: Table[Contact]
    emails: Table[Email]
    drafts: Table[Draft]
    labels: Table[Label]
    counters: Cell[Counters]



# ------------------------------------------------------------------ rules shared by the tools
ADDRESS_RE = re.compile(r"^[a-z0-9][a-z0-9._%+-]*@[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}$")
MAX_RECIPIENTS = 50


def mailbox_of(s: EmailState, mailbox: str) -> str:
    """The canonical (lower-case) address of a hosted mailbox, or a ToolError naming ``mailbox``."""
    address = mailbox.strip().lower()
    if address not in s.mailboxes:
        raise ToolError(f"unknown mailbox '{mailbox}': no account with that address on this mail server",
                        field="mailbox", code="not_found")
    return address


def email_in(s: EmailState, mailbox: str, email_id: str, field: str = "email_id") -> Email:
    """The caller's copy of a message; ids of other mailboxes are reported as unknown (no leaks)."""
    rec = s.emails.get(email_id)
    if rec is None or rec.mailbox != mailbox:
        raise ToolError(f"unknown {field} '{email_id}' in mailbox {mailbox}", field=field, code="not_found")
    return rec


def draft_in(s: EmailState, mailbox: str, draft_id: str) -> Draft:
    rec = require(s.drafts, draft_id, "draft_id")
    if rec.mailbox != mailbox:
        raise ToolError(f"unknown draft_id '{draft_id}' in mailbox {mailbox}", field="draft_id", code="not_found")
    return rec


def editable_draft(s: EmailState, mailbox: str, draft_id: str) -> Draft:
    draft = draft_in(s, mailbox, draft_id)
    if draft.status == "sent":
        raise ToolError(f"draft_id {draft_id} was already sent as {draft.sent_email_id}; sent mail cannot be changed",
                        field="draft_id", code="illegal_state")
    return draft


def label_named(s: EmailState, mailbox: str, name: str, field: str) -> Label:
    """A user label of the mailbox by case-insensitive name."""
    wanted = name.strip().lower()
    for label in s.labels.values():
        if label.mailbox == mailbox and label.name.lower() == wanted:
            return label
    known = sorted(lb.name for lb in s.labels.values() if lb.mailbox == mailbox)
    raise ToolError(f"{field}: label '{name}' does not exist in mailbox {mailbox} (labels: {', '.join(known) or 'none'}); "
                    "create it first", field=field, code="not_found")


def replyable(rec: Email, field: str = "email_id") -> None:
    """Replies and forwards start from a message the user keeps, never from trash or spam."""
    if rec.folder in ("trash", "spam"):
        raise ToolError(f"{field} {rec.email_id} is in {rec.folder}; move it back to inbox before replying to or "
                        "forwarding it", field=field, code="illegal_state")


def addresses(values: list[str] | None, field: str) -> list[str]:
    """Normalised, de-duplicated addresses; a malformed one is an error naming the argument."""
    out: list[str] = []
    for raw in values or []:
        address = raw.strip().lower()
        if not ADDRESS_RE.match(address):
            raise ToolError(f"invalid email address '{raw}' in {field}: expected a bare address such as "
                            "name@example.com", field=field)
        if address not in out:
            out.append(address)
    return out


def hosted_domains(s: EmailState) -> set[str]:
    return {address.split("@", 1)[1] for address in s.mailboxes}


def check_deliverable(s: EmailState, to: list[str], cc: list[str], bcc: list[str], *, field: str) -> None:
    """Refuse what a real server refuses at submission: no recipient, too many, or an address on this
    server's own domain that has no mailbox (it would bounce)."""
    if not (to or cc or bcc):
        raise ToolError("no recipients: give at least one address in to (or cc/bcc)", field=field)
    if len(to) + len(cc) + len(bcc) > MAX_RECIPIENTS:
        raise ToolError(f"too many recipients (at most {MAX_RECIPIENTS} across to, cc and bcc)", field=field)
    local = hosted_domains(s)
    for group, name in ((to, "to"), (cc, "cc"), (bcc, "bcc")):
        for address in group:
            if address.split("@", 1)[1] in local and address not in s.mailboxes:
                raise ToolError(f"no mailbox '{address}' exists on this server (in {name}); the message would "
                                "bounce", field=field if field == "draft_id" else name, code="not_found")


def stamp_now(s: EmailState) -> str:
    """The session clock as message/draft timestamp text (it moves one minute per call)."""
    return iso(now(s))


def deliver(
    s: EmailState, mailbox: str, *, to: list[str], cc: list[str], bcc: list[str], subject: str, body: str,
    thread_id: str | None = None, in_reply_to: str | None = None, forwarded_from: str | None = None,
    attachments: list[Attachment] | None = None,
) -> Email:
    """Append a message: the sender's copy in ``sent`` and one unread ``inbox`` copy per hosted
    recipient (Bcc hidden from recipients). Nothing existing is modified."""
    sent_at = stamp_now(s)
    sender = s.mailboxes[mailbox]
    thread = thread_id or new_id(s.counters, "THR-N")
    sent_id = new_id(s.counters, "MSG-N", 5)
    message_id = f"<{sent_id.lower()}@{mailbox.split('@', 1)[1]}>"
    files = list(attachments or [])
    sent = s.emails.put(sent_id, Email(
        sent_id, mailbox, thread, message_id, "sent", mailbox, sender.display_name, list(to), list(cc), list(bcc),
        subject, body, sent_at, "sent", [], True, False, files, in_reply_to, forwarded_from))
    for address in dict.fromkeys([*to, *cc, *bcc]):
        if address in s.mailboxes:
            eid = new_id(s.counters, "MSG-N", 5)
            s.emails.put(eid, Email(
                eid, address, thread, message_id, "received", mailbox, sender.display_name, list(to), list(cc), [],
                subject, body, sent_at, "inbox", [], False, False, list(files), in_reply_to, forwarded_from))
    return sent


def sent_receipt(s: EmailState, rec: Email) -> dict[str, Any]:
    """What a send returns: the new message and where it went."""
    recipients = list(dict.fromkeys([*rec.to, *rec.cc, *rec.bcc]))
    return {
        "email_id": rec.email_id, "thread_id": rec.thread_id, "status": "sent", "timestamp": rec.timestamp,
        "subject": rec.subject, "to": rec.to, "cc": rec.cc, "bcc": rec.bcc,
        "delivered_to_mailboxes": [a for a in recipients if a in s.mailboxes],
        "external_recipients": [a for a in recipients if a not in s.mailboxes],
        "attachments": [a.filename for a in rec.attachments],
    }


def summary(rec: Email) -> dict[str, Any]:
    """A list-view row: everything but the full body and Bcc."""
    snippet = " ".join(rec.body.split())
    return {
        "email_id": rec.email_id, "thread_id": rec.thread_id, "folder": rec.folder, "sender": rec.sender,
        "sender_name": rec.sender_name, "to": rec.to, "cc": rec.cc, "subject": rec.subject,
        "snippet": snippet[:100] + ("..." if len(snippet) > 100 else ""), "timestamp": rec.timestamp,
        "is_read": rec.is_read, "is_starred": rec.is_starred, "labels": rec.labels,
        "attachment_count": len(rec.attachments),
    }


def reply_prefix(subject: str, prefix: str) -> str:
    """``Re: x`` / ``Fwd: x`` without stacking the same prefix twice."""
    return subject if subject.lower().startswith(prefix.lower()) else f"{prefix} {subject}"


def reply_recipients(rec: Email, mailbox: str, reply_all: bool) -> tuple[list[str], list[str]]:
    """Who a reply goes to: the sender (or, for one's own message, its original recipients); with
    reply_all also everyone else who was on it, never oneself."""
    if rec.direction == "sent":
        to, cc = list(rec.to), list(rec.cc) if reply_all else []
    else:
        to = [rec.sender]
        cc = [a for a in dict.fromkeys([*rec.to, *rec.cc]) if a not in (mailbox, rec.sender)] if reply_all else []
    return [a for a in to if a != mailbox] or to, [a for a in cc if a not in to]
