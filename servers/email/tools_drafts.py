"""Drafts: the only mail that can still change. Once sent, a draft is frozen and points at the
message it became (sent mail is append-only)."""

from __future__ import annotations

from servers.email.state import (
    Addresses,
    Draft,
    EmailState,
    Subject,
    addresses,
    check_deliverable,
    deliver,
    draft_in,
    editable_draft,
    email_in,
    mailbox_of,
    reply_prefix,
    reply_recipients,
    replyable,
    sent_receipt,
    stamp_now,
)
from servers.kit import EmailAddress, Text, ToolError, new_id, tool


@tool(consumes=("mailbox",), produces=("draft_id",), read_only=True)
def list_email_drafts(s: EmailState, mailbox: EmailAddress, include_sent: bool = False) -> list:
    """List a mailbox's drafts, most recently edited first.

    Args:
        mailbox: Address of the mailbox you act for.
        include_sent: Also list drafts that were already sent (they can no longer be changed).
    """
    box = mailbox_of(s, mailbox)
    rows = [d for d in s.drafts.values() if d.mailbox == box and (include_sent or d.status == "draft")]
    rows.sort(key=lambda d: (d.updated_at, d.draft_id), reverse=True)
    return rows


@tool(consumes=("mailbox", "email_id"), produces=("draft_id",),
             establishes=("draft_unsent", "draft_has_recipients"))
def create_email_draft(
    s: EmailState, mailbox: EmailAddress, to: Addresses | None = None, subject: Subject = "", body: Text = "",
    cc: Addresses | None = None, bcc: Addresses | None = None, reply_to_email_id: str | None = None,
) -> dict:
    """Save a new draft without sending it. Recipients may be left out until it is sent. With
    reply_to_email_id the draft is a reply: it joins that conversation and defaults its recipients
    and "Re:" subject from the original.

    Args:
        mailbox: Address of the mailbox the draft belongs to.
        to: Recipient addresses.
        subject: Subject line.
        body: Plain-text body.
        cc: Carbon-copy addresses.
        bcc: Blind-copy addresses.
        reply_to_email_id: Message this draft replies to (optional).
    """
    box = mailbox_of(s, mailbox)
    to_, cc_, bcc_ = addresses(to, "to"), addresses(cc, "cc"), addresses(bcc, "bcc")
    thread_id = in_reply_to = None
    if reply_to_email_id is not None:
        original = email_in(s, box, reply_to_email_id, "reply_to_email_id")
        replyable(original, "reply_to_email_id")
        thread_id, in_reply_to = original.thread_id, original.message_id
        if not to_:
            to_, default_cc = reply_recipients(original, box, reply_all=False)
            cc_ = cc_ or default_cc
        subject = subject or reply_prefix(original.subject, "Re:")
    elif not (to_ or cc_ or bcc_ or subject.strip() or body.strip()):
        raise ToolError("the draft would be empty: give recipients (to), a subject or a body", field="body")
    did = new_id(s.counters, "DRF-N")
    return s.drafts.put(did, Draft(did, box, to_, cc_, bcc_, subject, body, thread_id, in_reply_to, "draft", stamp_now(s)))


@tool(consumes=("mailbox", "draft_id"), requires=("draft_unsent",), establishes=("draft_has_recipients",))
def update_email_draft(
    s: EmailState, mailbox: EmailAddress, draft_id: str, to: Addresses | None = None, cc: Addresses | None = None,
    bcc: Addresses | None = None, subject: Subject | None = None, body: Text | None = None,
) -> dict:
    """Change an unsent draft. Each given field replaces the old value (a list replaces the whole list;
    pass [] to clear it); fields left out stay as they are.

    Args:
        mailbox: Address of the mailbox the draft belongs to.
        draft_id: The draft to change, e.g. DRF-0003.
        to: New recipient list.
        cc: New carbon-copy list.
        bcc: New blind-copy list.
        subject: New subject line.
        body: New body (replaces the whole text).
    """
    box = mailbox_of(s, mailbox)
    editable_draft(s, box, draft_id)
    if to is None and cc is None and bcc is None and subject is None and body is None:
        raise ToolError("nothing to update: give at least one of to, cc, bcc, subject, body", field="body")
    updates = {"to": addresses(to, "to") if to is not None else None,
               "cc": addresses(cc, "cc") if cc is not None else None,
               "bcc": addresses(bcc, "bcc") if bcc is not None else None, "subject": subject, "body": body}
    draft = s.drafts.edit(draft_id)
    for key, value in updates.items():
        if value is not None:
            setattr(draft, key, value)
    draft.updated_at = stamp_now(s)
    return draft


@tool(consumes=("mailbox", "draft_id"), produces=("email_id", "thread_id"),
             requires=("draft_unsent", "draft_has_recipients"))
def send_email_draft(s: EmailState, mailbox: EmailAddress, draft_id: str) -> dict:
    """Send a saved draft as it is now. The draft is kept, frozen, with the id of the sent message.

    Args:
        mailbox: Address of the mailbox the draft belongs to.
        draft_id: The draft to send.
    """
    box = mailbox_of(s, mailbox)
    draft = editable_draft(s, box, draft_id)
    check_deliverable(s, draft.to, draft.cc, draft.bcc, field="draft_id")
    if not draft.subject.strip() and not draft.body.strip():
        raise ToolError(f"draft_id {draft_id} has neither subject nor body; add content before sending",
                        field="draft_id")
    sent = deliver(s, box, to=draft.to, cc=draft.cc, bcc=draft.bcc, subject=draft.subject, body=draft.body,
                   thread_id=draft.thread_id, in_reply_to=draft.in_reply_to)
    frozen = s.drafts.edit(draft_id)
    frozen.status, frozen.sent_email_id, frozen.updated_at = "sent", sent.email_id, sent.timestamp
    return {**sent_receipt(s, sent), "draft_id": draft_id}


@tool(consumes=("mailbox", "draft_id"), requires=("draft_unsent",))
def delete_email_draft(s: EmailState, mailbox: EmailAddress, draft_id: str) -> dict:
    """Discard an unsent draft for good (drafts are not mail yet, so nothing goes to trash).

    Args:
        mailbox: Address of the mailbox the draft belongs to.
        draft_id: The draft to discard.
    """
    box = mailbox_of(s, mailbox)
    draft = draft_in(s, box, draft_id)
    if draft.status == "sent":
        raise ToolError(f"draft_id {draft_id} was already sent as {draft.sent_email_id}; sent mail cannot be deleted "
                        "here (move the sent message to trash instead)", field="draft_id", code="illegal_state")
    s.drafts.delete(draft_id)
    return {"draft_id": draft_id, "deleted": True, "subject": draft.subject}
