"""Email: how users ask (format: data/intents/__init__.py)."""

from __future__ import annotations

BANK: dict[str, dict[str, list[str]]] = {
    "search_emails": {
        "ask": [
            "search the mailbox {mailbox}",
            "look through {mailbox} for messages",
        ],
        "vague": [
            "find an email",
        ],
    },
    "read_email": {
        "ask": [
            "open {email_id} in {mailbox}",
            "read {email_id} from {mailbox}",
        ],
        "vague": [
            "read an email",
        ],
    },
    "send_email": {
        "ask": [
            "send an email from {mailbox} to {to} with the subject {subject} saying {body}",
            "email {to} from {mailbox}: subject {subject}, body {body}",
        ],
        "vague": [
            "send an email",
        ],
    },
    "reply_to_email": {
        "ask": [
            "reply to {email_id} from {mailbox} with {body}",
            "answer {email_id} in {mailbox}: {body}",
        ],
        "vague": [
            "reply to a message",
        ],
    },
    "forward_email": {
        "ask": [
            "forward {email_id} from {mailbox} to {to}",
            "send {email_id} on to {to} from {mailbox}",
        ],
        "vague": [
            "forward a message",
        ],
    },
    "create_email_draft": {
        "ask": [
            "start a draft in {mailbox}",
            "draft a new email in {mailbox}",
        ],
        "vague": [
            "draft an email",
        ],
    },
    "send_email_draft": {
        "ask": [
            "send the draft {draft_id} from {mailbox}",
            "go ahead and send {draft_id} in {mailbox}",
        ],
        "vague": [
            "send a draft",
        ],
    },
    "move_email_to_folder": {
        "ask": [
            "move {email_id} in {mailbox} to {folder}",
            "file {email_id} from {mailbox} under {folder}",
        ],
        "vague": [
            "tidy up an email",
        ],
    },
    "star_email": {
        "ask": [
            "star {email_id} in {mailbox}",
        ],
        "vague": [
            "mark an email as important",
        ],
    },
}

GOALS: list[dict[str, list[str]]] = []
