"""Reading and sending mail: search, read, threads, send, reply (all) and forward."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field

from servers.email.state import (
    Addresses,
    EmailState,
    Subject,
    addresses,
    check_deliverable,
    deliver,
    email_in,
    label_named,
    mailbox_of,
    reply_prefix,
    reply_recipients,
    replyable,
    sent_receipt,
    summary,
)
from servers.kit import EmailAddress, IsoDate, Text, ToolError, parse_date, tool

Folder = Literal["inbox", "sent", "archive", "trash", "spam"]


@tool(consumes=("mailbox",), produces=("email_id", "thread_id"), read_only=True)
def search_emails(
    s: EmailState,
    mailbox: EmailAddress,
    query: str | None = None,
    sender: str | None = None,
    folder: Folder | None = None,
    label: str | None = None,
    unread_only: bool = False,
    starred_only: bool = False,
    has_attachments: bool | None = None,
    since: IsoDate | None = None,
    until: IsoDate | None = None,
    limit: Annotated[int, Field(ge=1, le=100)] = 20,
) -> dict:
    """Search or list the messages of a mailbox, newest first. Without a folder, trash and spam are
    left out (as mail clients do); pass folder='trash' or 'spam' to look there.

    Args:
        mailbox: Address of the mailbox you act for, e.g. jane.doe@example.com.
        query: Case-insensitive text that must appear in the subject or body.
        sender: Case-insensitive part of the sender's address or name.
        folder: Only messages in this folder.
        label: Only messages carrying this user label (e.g. Finance).
        unread_only: Only unread messages.
        starred_only: Only starred messages.
        has_attachments: true for only messages with attachments, false for only messages without.
        since: Only messages on or after this date (YYYY-MM-DD).
        until: Only messages on or before this date (YYYY-MM-DD).
        limit: Maximum number of messages to return.
    """
    box = mailbox_of(s, mailbox)
    start = parse_date(since, "since") if since else None
    end = parse_date(until, "until") if until else None
    if start and end and start > end:
        raise ToolError(f"since {since} is after until {until}", field="until")
    wanted_label = label_named(s, box, label, "label").name if label else None
    text = (query or "").lower()
    who = (sender or "").lower()
    rows = []
    for rec in s.emails.values():
        if rec.mailbox != box or (rec.folder != folder if folder else rec.folder in ("trash", "spam")):
            continue
        day = datetime.fromisoformat(rec.timestamp).date()
        checks = (
            not text or text in rec.subject.lower() or text in rec.body.lower(),
            not who or who in rec.sender.lower() or who in rec.sender_name.lower(),
            not wanted_label or wanted_label in rec.labels,
            not unread_only or not rec.is_read,
            not starred_only or rec.is_starred,
            has_attachments is None or bool(rec.attachments) == has_attachments,
            not start or day >= start,
            not end or day <= end,
        )
        if all(checks):
            rows.append(rec)
    rows.sort(key=lambda r: (r.timestamp, r.email_id), reverse=True)
    return {"mailbox": box, "total": len(rows), "emails": [summary(r) for r in rows[:limit]]}


@tool(consumes=("mailbox", "email_id"), produces=("thread_id",))
def read_email(s: EmailState, mailbox: EmailAddress, email_id: str) -> dict:
    """Open one message: full body, recipients and attachment details. Opening marks it as read.

    Args:
        mailbox: Address of the mailbox you act for.
        email_id: The message id, e.g. MSG-00012.
    """
    box = mailbox_of(s, mailbox)
    rec = email_in(s, box, email_id)
    if not rec.is_read:
        rec = s.emails.edit(email_id)
        rec.is_read = True
    return rec


@tool(consumes=("mailbox", "thread_id"), produces=("email_id",))
def get_email_thread(s: EmailState, mailbox: EmailAddress, thread_id: str) -> dict:
    """Open a whole conversation, oldest message first, marking its unread messages as read.

    Args:
        mailbox: Address of the mailbox you act for.
        thread_id: The conversation id, e.g. THR-0007 (every message lists its thread_id).
    """
    box = mailbox_of(s, mailbox)
    members = sorted((r for r in s.emails.values() if r.mailbox == box and r.thread_id == thread_id),
                     key=lambda r: (r.timestamp, r.email_id))
    if not members:
        raise ToolError(f"unknown thread_id '{thread_id}' in mailbox {box}", field="thread_id", code="not_found")
    marked = 0
    for rec in members:
        if not rec.is_read:
            s.emails.edit(rec.email_id).is_read = True
            marked += 1
    return {"thread_id": thread_id, "subject": members[0].subject, "message_count": len(members),
            "marked_read": marked, "messages": [s.emails[r.email_id] for r in members]}


@tool(consumes=("mailbox",), produces=("email_id", "thread_id"))
def send_email(
    s: EmailState, mailbox: EmailAddress, to: Addresses, subject: Subject, body: Text, cc: Addresses | None = None,
    bcc: Addresses | None = None,
) -> dict:
    """Send a new message, starting a new conversation. Sent mail cannot be edited or recalled.

    Args:
        mailbox: Address of the mailbox you send from.
        to: Recipient addresses (bare addresses such as name@example.com).
        subject: Subject line.
        body: Plain-text message body.
        cc: Carbon-copy addresses.
        bcc: Blind-copy addresses (hidden from the other recipients).
    """
    box = mailbox_of(s, mailbox)
    to_, cc_, bcc_ = addresses(to, "to"), addresses(cc, "cc"), addresses(bcc, "bcc")
    if not to_:
        raise ToolError("to is empty: a new message needs at least one recipient in to", field="to")
    check_deliverable(s, to_, cc_, bcc_, field="to")
    if not subject.strip() and not body.strip():
        raise ToolError("refusing to send an empty message: give a subject or a body", field="body")
    return sent_receipt(s, deliver(s, box, to=to_, cc=cc_, bcc=bcc_, subject=subject, body=body))


@tool(consumes=("mailbox", "email_id"), produces=("email_id",), requires=("email_not_in_trash",))
def reply_to_email(s: EmailState, mailbox: EmailAddress, email_id: str, body: Text, reply_all: bool = False) -> dict:
    """Reply in the same conversation: to the sender, or with reply_all=true also to everyone else on
    the original message (To and Cc). Messages in trash or spam cannot be replied to.

    Args:
        mailbox: Address of the mailbox you reply from.
        email_id: The message being answered.
        body: Plain-text reply.
        reply_all: Also reply to the other To/Cc recipients of the original.
    """
    box = mailbox_of(s, mailbox)
    rec = email_in(s, box, email_id)
    replyable(rec)
    if rec.sender in s.contacts and s.contacts[rec.sender].relation in ("notification", "newsletter"):
        raise ToolError(f"email_id {email_id} comes from {rec.sender}, a no-reply sender that accepts no replies",
                        field="email_id", code="illegal_state")
    to, cc = reply_recipients(rec, box, reply_all)
    check_deliverable(s, to, cc, [], field="email_id")
    sent = deliver(s, box, to=to, cc=cc, bcc=[], subject=reply_prefix(rec.subject, "Re:"), body=body,
                   thread_id=rec.thread_id, in_reply_to=rec.message_id)
    return sent_receipt(s, sent)


@tool(consumes=("mailbox", "email_id"), produces=("email_id",), requires=("email_not_in_trash",))
def forward_email(
    s: EmailState, mailbox: EmailAddress, email_id: str, to: Addresses, note: Text | None = None,
    cc: Addresses | None = None, include_attachments: bool = False,
) -> dict:
    """Forward a message (quoted below an optional note) to new recipients, in the same conversation.

    Args:
        mailbox: Address of the mailbox you forward from.
        email_id: The message to forward.
        to: Recipient addresses.
        note: Text to put above the forwarded message.
        cc: Carbon-copy addresses.
        include_attachments: Also forward the original's attachments (it must have some).
    """
    box = mailbox_of(s, mailbox)
    rec = email_in(s, box, email_id)
    replyable(rec)
    if include_attachments and not rec.attachments:
        raise ToolError(f"email {email_id} has no attachments to forward; set include_attachments to false",
                        field="include_attachments")
    to_, cc_ = addresses(to, "to"), addresses(cc, "cc")
    if not to_:
        raise ToolError("to is empty: a forward needs at least one recipient", field="to")
    check_deliverable(s, to_, cc_, [], field="to")
    quoted = (f"---------- Forwarded message ---------\nFrom: {rec.sender_name} <{rec.sender}>\n"
              f"Date: {rec.timestamp}\nSubject: {rec.subject}\nTo: {', '.join(rec.to)}\n\n{rec.body}")
    body = f"{note}\n\n{quoted}" if note else quoted
    sent = deliver(s, box, to=to_, cc=cc_, bcc=[], subject=reply_prefix(rec.subject, "Fwd:"), body=body,
                   thread_id=rec.thread_id, forwarded_from=rec.message_id,
                   attachments=list(rec.attachments) if include_attachments else [])
    return sent_receipt(s, sent)
