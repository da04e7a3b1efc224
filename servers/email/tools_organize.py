"""Organising mail without changing it: folders, read/starred flags and user labels."""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import Field

from servers.email.state import (
    LABEL_COLORS,
    RESERVED_LABELS,
    SYSTEM_FOLDERS,
    EmailState,
    Label,
    email_in,
    label_named,
    mailbox_of,
    summary,
)
from servers.kit import EmailAddress, ToolError, new_id, today, tool

LabelName = Annotated[str, Field(min_length=1, max_length=40, pattern=r"^[A-Za-z0-9][A-Za-z0-9 _/&.-]*$")]
LabelColor = Literal["red", "orange", "yellow", "green", "blue", "purple", "gray"]
assert set(get_args(LabelColor)) == set(LABEL_COLORS)


@tool(consumes=("mailbox",), produces=("label_name",), read_only=True)
def list_email_labels(s: EmailState, mailbox: EmailAddress) -> dict:
    """List a mailbox's system folders and user labels with their total and unread message counts.

    Args:
        mailbox: Address of the mailbox you act for.
    """
    box = mailbox_of(s, mailbox)
    mine = [r for r in s.emails.values() if r.mailbox == box]
    folders = [{"name": f, "total": sum(r.folder == f for r in mine),
                "unread": sum(r.folder == f and not r.is_read for r in mine)} for f in SYSTEM_FOLDERS]
    labels = [{"label_id": lb.label_id, "name": lb.name, "color": lb.color,
               "total": sum(lb.name in r.labels for r in mine),
               "unread": sum(lb.name in r.labels and not r.is_read for r in mine)}
              for lb in s.labels.values() if lb.mailbox == box]
    drafts = sum(d.mailbox == box and d.status == "draft" for d in s.drafts.values())
    return {"mailbox": box, "folders": folders, "drafts": drafts, "labels": labels}


@tool(consumes=("mailbox",), produces=("label_name",), establishes=("label_exists",))
def create_email_label(s: EmailState, mailbox: EmailAddress, name: LabelName, color: LabelColor = "gray") -> dict:
    """Create a user label (like a folder tag) that can then be applied to messages.

    Args:
        mailbox: Address of the mailbox you act for.
        name: Label name, unique in the mailbox regardless of case; system names (Inbox, Trash, ...) are reserved.
        color: Display colour of the label.
    """
    box = mailbox_of(s, mailbox)
    clean = " ".join(name.split())
    if clean.lower() in RESERVED_LABELS:
        raise ToolError(f"name '{clean}' is reserved for a system folder", field="name", code="duplicate")
    for label in s.labels.values():
        if label.mailbox == box and label.name.lower() == clean.lower():
            raise ToolError(f"a label with name '{label.name}' already exists in mailbox {box} ({label.label_id})",
                            field="name", code="duplicate")
    lid = new_id(s.counters, "LBL-N")
    return s.labels.put(lid, Label(lid, box, clean, color, today(s).isoformat()))


@tool(consumes=("mailbox", "email_id", "label_name"), requires=("label_exists",))
def modify_email_labels(
    s: EmailState, mailbox: EmailAddress, email_id: str, add_labels: list[str] | None = None,
    remove_labels: list[str] | None = None,
) -> dict:
    """Apply and/or remove user labels on one message. Labels must exist (see create_email_label);
    messages in trash cannot be labelled.

    Args:
        mailbox: Address of the mailbox you act for.
        email_id: The message to relabel.
        add_labels: Names of labels to apply.
        remove_labels: Names of labels to take off.
    """
    box = mailbox_of(s, mailbox)
    rec = email_in(s, box, email_id)
    if not add_labels and not remove_labels:
        raise ToolError("nothing to change: give add_labels and/or remove_labels", field="add_labels")
    if rec.folder == "trash":
        raise ToolError(f"email_id {email_id} is in trash; restore it before labelling", field="email_id",
                        code="illegal_state")
    adds = [label_named(s, box, n, "add_labels").name for n in add_labels or []]
    removes = [label_named(s, box, n, "remove_labels").name for n in remove_labels or []]
    both = sorted(set(adds) & set(removes))
    if both:
        raise ToolError(f"label(s) {', '.join(both)} both added and removed: in add_labels and remove_labels",
                        field="remove_labels")
    for name in adds:
        if name in rec.labels:
            raise ToolError(f"email {email_id} already has label '{name}'; drop it from add_labels", field="add_labels",
                            code="illegal_state")
    for name in removes:
        if name not in rec.labels:
            raise ToolError(f"email {email_id} does not have label '{name}'; drop it from remove_labels",
                            field="remove_labels",
                            code="illegal_state")
    rec = s.emails.edit(email_id)
    rec.labels = [n for n in rec.labels if n not in removes] + list(dict.fromkeys(adds))
    return summary(rec)


@tool(consumes=("mailbox", "email_id"), establishes=("email_not_in_trash",))
def move_email_to_folder(
    s: EmailState, mailbox: EmailAddress, email_id: str, folder: Literal["inbox", "sent", "archive", "trash", "spam"],
) -> dict:
    """Move one message: archive it, delete it (folder='trash'; mail is never destroyed), report it as
    spam, or restore it ('inbox' for received mail, 'sent' for mail you sent).

    Args:
        mailbox: Address of the mailbox you act for.
        email_id: The message to move.
        folder: Destination folder.
    """
    box = mailbox_of(s, mailbox)
    rec = email_in(s, box, email_id)
    if rec.folder == folder:
        raise ToolError(f"email {email_id} is already in folder {folder}", field="folder", code="illegal_state")
    if folder == "sent" and rec.direction != "sent":
        raise ToolError(f"email {email_id} was received, not sent by you; use folder inbox to restore it",
                        field="folder")
    if folder in ("inbox", "spam") and rec.direction == "sent":
        raise ToolError(f"email {email_id} was sent by you; folder must be sent, archive or trash, not {folder}",
                        field="folder")
    rec = s.emails.edit(email_id)
    previous, rec.folder = rec.folder, folder
    if folder == "spam":
        rec.is_starred = False
    return {**summary(rec), "previous_folder": previous}


@tool(consumes=("mailbox", "email_id"))
def mark_email_read(s: EmailState, mailbox: EmailAddress, email_id: str, read: bool = True) -> dict:
    """Mark a message as read, or as unread with read=false (to come back to it later).

    Args:
        mailbox: Address of the mailbox you act for.
        email_id: The message to mark.
        read: true to mark as read, false to mark as unread.
    """
    box = mailbox_of(s, mailbox)
    rec = email_in(s, box, email_id)
    if rec.is_read == read:
        raise ToolError(f"email {email_id} is already marked {'read' if read else 'unread'} (read={str(read).lower()})",
                        field="read",
                        code="illegal_state")
    rec = s.emails.edit(email_id)
    rec.is_read = read
    return summary(rec)


@tool(consumes=("mailbox", "email_id"))
def star_email(s: EmailState, mailbox: EmailAddress, email_id: str, starred: bool = True) -> dict:
    """Star a message to flag it as important, or unstar it with starred=false. Spam cannot be starred.

    Args:
        mailbox: Address of the mailbox you act for.
        email_id: The message to star or unstar.
        starred: true to star, false to remove the star.
    """
    box = mailbox_of(s, mailbox)
    rec = email_in(s, box, email_id)
    if rec.is_starred == starred:
        raise ToolError(f"email {email_id} is already {'starred' if starred else 'not starred'} "
                        f"(starred={str(starred).lower()})", field="starred",
                        code="illegal_state")
    if starred and rec.folder == "spam":
        raise ToolError(f"email_id {email_id} is in spam; move it out of spam before starring it", field="email_id",
                        code="illegal_state")
    rec = s.emails.edit(email_id)
    rec.is_starred = starred
    return summary(rec)
