"""Shared rules of the email domain: ownership checks, address validation, delivery and summaries.

Every tool acts for one mailbox (the user the agent assists); a message id only resolves inside the
mailbox that owns that copy, so one user can never read or touch another user's mail.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from servers.email.world import Attachment, Draft, Email, EmailState, Label
from servers.kit import ToolError, new_id, require

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


def tick(s: EmailState) -> str:
    """Advance the service clock by one minute and return the new time (messages stay ordered)."""
    clock = s.clock.edit()
    clock.now = (datetime.fromisoformat(clock.now) + timedelta(minutes=1)).isoformat()
    return clock.now


def deliver(
    s: EmailState, mailbox: str, *, to: list[str], cc: list[str], bcc: list[str], subject: str, body: str,
    thread_id: str | None = None, in_reply_to: str | None = None, forwarded_from: str | None = None,
    attachments: list[Attachment] | None = None,
) -> Email:
    """Append a message: the sender's copy in ``sent`` and one unread ``inbox`` copy per hosted
    recipient (Bcc hidden from recipients). Nothing existing is modified."""
    now = tick(s)
    sender = s.mailboxes[mailbox]
    thread = thread_id or new_id(s.counters, "THR-N")
    sent_id = new_id(s.counters, "MSG-N", 5)
    message_id = f"<{sent_id.lower()}@{mailbox.split('@', 1)[1]}>"
    files = list(attachments or [])
    sent = s.emails.put(sent_id, Email(
        sent_id, mailbox, thread, message_id, "sent", mailbox, sender.display_name, list(to), list(cc), list(bcc),
        subject, body, now, "sent", [], True, False, files, in_reply_to, forwarded_from))
    for address in dict.fromkeys([*to, *cc, *bcc]):
        if address in s.mailboxes:
            eid = new_id(s.counters, "MSG-N", 5)
            s.emails.put(eid, Email(
                eid, address, thread, message_id, "received", mailbox, sender.display_name, list(to), list(cc), [],
                subject, body, now, "inbox", [], False, False, list(files), in_reply_to, forwarded_from))
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
