"""Email smoke scenario: one realistic session that succeeds with every user-visible tool once.

``call(name, args)`` performs a tool call on one session (over whatever transport the harness
chose), asserts it did not return an error, and returns the decoded JSON result.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


async def smoke(call: Call) -> None:
    boxes = await call("email_list_mailboxes", {})
    with_files = await call("email_search_all", {"has_attachments": True})
    keep = [e for e in with_files["emails"] if e["folder"] in ("inbox", "archive", "sent")]
    doc = keep[0]
    me = doc["mailbox"]
    peer = next(b["address"] for b in boxes if b["address"] != me)
    client = (await call("email_list_contacts", {"relation": "client"}))[0]["address"]

    # Morning triage: what is in the mailbox, then open the message with the attachment.
    await call("list_email_labels", {"mailbox": me})
    found = await call("search_emails", {"mailbox": me, "has_attachments": True, "limit": 50})
    assert doc["email_id"] in {e["email_id"] for e in found["emails"]}
    opened = await call("read_email", {"mailbox": me, "email_id": doc["email_id"]})
    assert opened["is_read"] is True
    thread = await call("get_email_thread", {"mailbox": me, "thread_id": opened["thread_id"]})
    assert doc["email_id"] in {m["email_id"] for m in thread["messages"]}

    # Share the document with a client, file it under a new label.
    await call("forward_email", {"mailbox": me, "email_id": doc["email_id"], "to": [client],
                                 "note": "Sharing this for your review ahead of our call.",
                                 "include_attachments": True})
    await call("create_email_label", {"mailbox": me, "name": "Follow-up", "color": "orange"})
    labelled = await call("modify_email_labels", {"mailbox": me, "email_id": doc["email_id"],
                                                  "add_labels": ["follow-up"]})
    assert "Follow-up" in labelled["labels"]

    # A new conversation with a colleague, who answers everyone.
    sent = await call("send_email", {"mailbox": me, "to": [peer], "cc": [client], "subject": "Planning for next week",
                                     "body": "Hi,\n\nCan we lock the agenda for Tuesday's review?\n\nThanks"})
    assert peer in sent["delivered_to_mailboxes"]
    inbox = await call("search_emails", {"mailbox": peer, "query": "Planning for next week", "unread_only": True})
    received = inbox["emails"][0]
    reply = await call("reply_to_email", {"mailbox": peer, "email_id": received["email_id"],
                                          "body": "Tuesday works. I'll send the agenda tonight.", "reply_all": True})
    assert reply["thread_id"] == sent["thread_id"]
    await call("mark_email_read", {"mailbox": peer, "email_id": received["email_id"], "read": True})
    await call("star_email", {"mailbox": peer, "email_id": received["email_id"], "starred": True})
    moved = await call("move_email_to_folder", {"mailbox": peer, "email_id": received["email_id"],
                                                "folder": "archive"})
    assert moved["folder"] == "archive"

    # Drafts: write one, fill in the recipient later, send it; discard another.
    await call("list_email_drafts", {"mailbox": me})
    draft = await call("create_email_draft", {"mailbox": me, "subject": "Expense report",
                                              "body": "Receipts from the client visit are attached in the portal."})
    await call("update_email_draft", {"mailbox": me, "draft_id": draft["draft_id"], "to": [peer]})
    out = await call("send_email_draft", {"mailbox": me, "draft_id": draft["draft_id"]})
    assert out["draft_id"] == draft["draft_id"]
    scratch = await call("create_email_draft", {"mailbox": me, "reply_to_email_id": doc["email_id"],
                                                "body": "Thanks, will review."})
    await call("delete_email_draft", {"mailbox": me, "draft_id": scratch["draft_id"]})
