"""Email domain: tool surface, state-dependent failures (with
rollback), multi-step workflows and world generation speed."""

from __future__ import annotations

import time
from typing import Any

import pytest

from servers.email import domain
from servers.kit import DomainRuntime, snapshot_json
from tests.servers.harness import new_sid

USER_TOOLS = {t.name for t in domain.user_tools}


def ok(rt: DomainRuntime, sid: str, name: str, args: dict[str, Any], seed: int = 0) -> Any:
    out = rt.call(name, args, sid, seed)
    assert not out.is_error, f"{name}({args}) failed: {out.text}"
    return out.json()


def snap(rt: DomainRuntime, sid: str, seed: int = 0) -> str:
    return snapshot_json(ok(rt, sid, "email_session_snapshot", {}, seed))


def fails(rt: DomainRuntime, sid: str, name: str, args: dict[str, Any], *needles: str) -> str:
    """The call is an error naming every needle, and it changed nothing."""
    before = snap(rt, sid)
    out = rt.call(name, args, sid, 0)
    assert out.is_error, f"{name}({args}) unexpectedly succeeded: {out.text[:300]}"
    for needle in needles:
        assert needle.lower() in out.text.lower(), f"{needle!r} not in {out.text!r}"
    assert snap(rt, sid) == before, f"{name} changed state although it failed"
    return out.text


@pytest.fixture(scope="module")
def world(rt: DomainRuntime) -> dict[str, Any]:
    """Ids from discovery on seed 0 (never hard-coded)."""
    sid = new_sid()
    boxes = ok(rt, sid, "email_list_mailboxes", {})
    every = ok(rt, sid, "email_search_all", {"limit": 1000})["emails"]
    noreply = {c["address"] for r in ("notification", "newsletter")
               for c in ok(rt, sid, "email_list_contacts", {"relation": r})}
    return {"boxes": [b["address"] for b in boxes], "emails": every, "noreply": noreply}


def pick(world: dict[str, Any], **conds: Any) -> dict[str, Any]:
    for e in world["emails"]:
        if all(cond(e[k]) if callable(cond) else e[k] == cond for k, cond in conds.items()):
            return e
    raise AssertionError(f"seed world has no email with {conds}")


# ------------------------------------------------------------------ surface
def test_exactly_17_user_tools_with_documented_typed_params(rt: DomainRuntime) -> None:
    assert len(USER_TOOLS) == 17
    discovery = [t for t in domain.tools.values() if t.kind == "discovery"]
    assert 2 <= len(discovery) <= 4 and all(t.name.startswith("email_") for t in discovery)
    from servers.banking import domain as banking

    assert not USER_TOOLS & set(banking.tools)
    for name in USER_TOOLS:
        spec = domain.tools[name]
        assert spec.consumes, f"{name} declares no consumed entity types"
        for pname, prop in rt.table.schemas[name]["properties"].items():
            assert prop.get("description"), f"{name}.{pname} undocumented"
            assert "type" in prop or "enum" in prop, f"{name}.{pname} untyped"
    required = {pre for t in USER_TOOLS for pre in domain.tools[t].requires}
    established = {pre for t in USER_TOOLS for pre in domain.tools[t].establishes}
    assert required <= established, f"preconditions no tool establishes: {sorted(required - established)}"


# ------------------------------------------------------------------ failures (each rolls back)
def test_unknown_mailbox_and_foreign_ids(rt: DomainRuntime, world: dict[str, Any]) -> None:
    sid = new_sid()
    fails(rt, sid, "search_emails", {"mailbox": "ghost@nowhere.com"}, "unknown mailbox", "ghost@nowhere.com")
    a, b = world["boxes"][:2]
    foreign = pick(world, mailbox=b)
    fails(rt, sid, "read_email", {"mailbox": a, "email_id": foreign["email_id"]}, "unknown email_id")
    fails(rt, sid, "get_email_thread", {"mailbox": a, "thread_id": "THR-9999"}, "unknown thread_id")
    fails(rt, sid, "search_emails", {"mailbox": a, "since": "2026-05-10", "until": "2026-05-01"}, "since", "until")
    fails(rt, sid, "search_emails", {"mailbox": a, "label": "No Such Label"}, "label", "does not exist")
    fails(rt, sid, "search_emails", {"mailbox": a, "since": "last week"}, "since", "expected format")
    fails(rt, sid, "search_emails", {"mailbox": a, "since": "2026-02-30"}, "since", "YYYY-MM-DD")


def test_send_rejections(rt: DomainRuntime, world: dict[str, Any]) -> None:
    sid = new_sid()
    me = world["boxes"][0]
    host = me.split("@")[1]
    base = {"mailbox": me, "subject": "Hello", "body": "Hi there"}
    fails(rt, sid, "send_email", {**base, "to": ["bob@"]}, "to.0", "expected format")
    fails(rt, sid, "send_email", {**base, "to": ["ok@example.com"], "cc": ["Bob Smith <bob@x.com>"]}, "cc")
    fails(rt, sid, "send_email", {**base, "to": [f"nobody.here@{host}"]}, "no mailbox", "bounce")
    fails(rt, sid, "send_email", {**base, "to": []}, "to is empty")
    fails(rt, sid, "send_email", {"mailbox": me, "to": ["ok@example.com"], "subject": " ", "body": ""}, "empty")
    fails(rt, sid, "send_email", {**base, "to": ["ok@example.com"], "priority": "high"}, "unexpected", "priority")
    fails(rt, sid, "send_email", {**base, "to": ["bob@example..com"]}, "invalid email address", "to")
    crowd = [f"guest{i}@example.com" for i in range(30)]
    fails(rt, sid, "send_email", {**base, "to": crowd[:26], "cc": crowd[4:], "bcc": ["x@example.org"]},
          "too many recipients")


def test_reply_and_forward_rejections(rt: DomainRuntime, world: dict[str, Any]) -> None:
    sid = new_sid()
    trashed = pick(world, folder="trash")
    fails(rt, sid, "reply_to_email", {"mailbox": trashed["mailbox"], "email_id": trashed["email_id"], "body": "ok"},
          "trash", "move it back")
    fails(rt, sid, "forward_email", {"mailbox": trashed["mailbox"], "email_id": trashed["email_id"],
                                     "to": ["a@example.com"]}, "trash")
    fails(rt, sid, "create_email_draft", {"mailbox": trashed["mailbox"], "reply_to_email_id": trashed["email_id"]},
          "trash")
    noreply = pick(world, sender=lambda v: v in world["noreply"], folder=lambda v: v in ("inbox", "archive"))
    fails(rt, sid, "reply_to_email", {"mailbox": noreply["mailbox"], "email_id": noreply["email_id"], "body": "hi"},
          "no-reply")
    plain = pick(world, attachment_count=0, folder="inbox")
    fails(rt, sid, "forward_email", {"mailbox": plain["mailbox"], "email_id": plain["email_id"],
                                     "to": ["a@example.com"], "include_attachments": True},
          "no attachments", "include_attachments")


def test_draft_rejections(rt: DomainRuntime, world: dict[str, Any]) -> None:
    sid = new_sid()
    me, peer = world["boxes"][:2]
    fails(rt, sid, "create_email_draft", {"mailbox": me}, "empty")
    bare = ok(rt, sid, "create_email_draft", {"mailbox": me, "subject": "Notes", "body": "todo"})
    fails(rt, sid, "send_email_draft", {"mailbox": me, "draft_id": bare["draft_id"]}, "no recipients")
    fails(rt, sid, "update_email_draft", {"mailbox": me, "draft_id": bare["draft_id"]}, "nothing to update")
    fails(rt, sid, "update_email_draft", {"mailbox": me, "draft_id": bare["draft_id"], "to": ["x@"]}, "invalid", "to")
    fails(rt, sid, "send_email_draft", {"mailbox": peer, "draft_id": bare["draft_id"]}, "unknown draft_id")
    ok(rt, sid, "update_email_draft", {"mailbox": me, "draft_id": bare["draft_id"], "to": [peer]})
    ok(rt, sid, "send_email_draft", {"mailbox": me, "draft_id": bare["draft_id"]})
    fails(rt, sid, "update_email_draft", {"mailbox": me, "draft_id": bare["draft_id"], "body": "edit"},
          "already sent", "draft_id")
    fails(rt, sid, "send_email_draft", {"mailbox": me, "draft_id": bare["draft_id"]}, "already sent")
    fails(rt, sid, "delete_email_draft", {"mailbox": me, "draft_id": bare["draft_id"]}, "already sent")
    fails(rt, sid, "delete_email_draft", {"mailbox": me, "draft_id": "DRF-9999"}, "unknown draft_id")
    to_only = ok(rt, sid, "create_email_draft", {"mailbox": me, "to": [peer]})
    fails(rt, sid, "send_email_draft", {"mailbox": me, "draft_id": to_only["draft_id"]}, "neither subject nor body")


def test_label_rejections(rt: DomainRuntime, world: dict[str, Any]) -> None:
    sid = new_sid()
    labelled = pick(world, labels=lambda v: bool(v), folder=lambda v: v != "trash")
    me, name = labelled["mailbox"], labelled["labels"][0]
    fails(rt, sid, "create_email_label", {"mailbox": me, "name": name.upper()}, "already exists", "name")
    fails(rt, sid, "create_email_label", {"mailbox": me, "name": "Trash"}, "reserved", "name")
    fails(rt, sid, "create_email_label", {"mailbox": me, "name": "!!"}, "name")
    eid = labelled["email_id"]
    fails(rt, sid, "modify_email_labels", {"mailbox": me, "email_id": eid, "add_labels": ["Nope"]},
          "does not exist", "add_labels")
    fails(rt, sid, "modify_email_labels", {"mailbox": me, "email_id": eid, "add_labels": [name]}, "already has")
    fails(rt, sid, "modify_email_labels", {"mailbox": me, "email_id": eid}, "nothing to change")
    fails(rt, sid, "modify_email_labels", {"mailbox": me, "email_id": eid, "add_labels": [name],
                                           "remove_labels": [name]}, "both added and removed")
    other = next(lb for lb in ok(rt, sid, "list_email_labels", {"mailbox": me})["labels"] if lb["name"] != name)
    if other["name"] not in labelled["labels"]:
        fails(rt, sid, "modify_email_labels", {"mailbox": me, "email_id": eid, "remove_labels": [other["name"]]},
              "does not have", "remove_labels")
    trashed = pick(world, folder="trash")
    some_label = ok(rt, sid, "list_email_labels", {"mailbox": trashed["mailbox"]})["labels"][0]["name"]
    fails(rt, sid, "modify_email_labels", {"mailbox": trashed["mailbox"], "email_id": trashed["email_id"],
                                           "add_labels": [some_label]}, "trash")


def test_folder_and_flag_rejections(rt: DomainRuntime, world: dict[str, Any]) -> None:
    sid = new_sid()
    got = pick(world, folder="inbox", direction="received")
    mine = pick(world, folder="sent")
    fails(rt, sid, "move_email_to_folder", {"mailbox": got["mailbox"], "email_id": got["email_id"],
                                            "folder": "inbox"}, "already in folder inbox")
    fails(rt, sid, "move_email_to_folder", {"mailbox": got["mailbox"], "email_id": got["email_id"],
                                            "folder": "sent"}, "received", "folder")
    fails(rt, sid, "move_email_to_folder", {"mailbox": mine["mailbox"], "email_id": mine["email_id"],
                                            "folder": "spam"}, "sent by you")
    read = pick(world, is_read=True)
    fails(rt, sid, "mark_email_read", {"mailbox": read["mailbox"], "email_id": read["email_id"]}, "already marked read", "read=true")
    starred = pick(world, is_starred=True)
    fails(rt, sid, "star_email", {"mailbox": starred["mailbox"], "email_id": starred["email_id"]}, "already starred", "starred=true")
    spam = pick(world, folder="spam")
    fails(rt, sid, "star_email", {"mailbox": spam["mailbox"], "email_id": spam["email_id"]}, "spam")


# ------------------------------------------------------------------ workflows
def test_send_reply_all_thread_trash_restore(rt: DomainRuntime, world: dict[str, Any]) -> None:
    sid = new_sid()
    a, b, c = world["boxes"][:3]
    sent = ok(rt, sid, "send_email", {"mailbox": a, "to": [b, "partner@example.org"], "bcc": [c],
                                      "subject": "Site visit", "body": "Can we meet Thursday?"})
    assert set(sent["delivered_to_mailboxes"]) == {b, c} and sent["external_recipients"] == ["partner@example.org"]
    b_copy = ok(rt, sid, "search_emails", {"mailbox": b, "query": "site visit", "unread_only": True})["emails"]
    c_copy = ok(rt, sid, "search_emails", {"mailbox": c, "query": "site visit"})["emails"]
    assert len(b_copy) == 1 and len(c_copy) == 1
    opened = ok(rt, sid, "read_email", {"mailbox": c, "email_id": c_copy[0]["email_id"]})
    assert opened["bcc"] == [] and opened["is_read"]  # Bcc stays hidden from recipients
    reply = ok(rt, sid, "reply_to_email", {"mailbox": b, "email_id": b_copy[0]["email_id"], "body": "Yes, 10am.",
                                           "reply_all": True})
    assert reply["to"] == [a] and reply["cc"] == ["partner@example.org"] and reply["subject"] == "Re: Site visit"
    thread = ok(rt, sid, "get_email_thread", {"mailbox": a, "thread_id": sent["thread_id"]})
    assert [m["direction"] for m in thread["messages"]] == ["sent", "received"] and thread["marked_read"] == 1
    incoming = thread["messages"][1]["email_id"]
    ok(rt, sid, "move_email_to_folder", {"mailbox": a, "email_id": incoming, "folder": "trash"})
    visible = {e["email_id"] for e in ok(rt, sid, "search_emails", {"mailbox": a, "query": "site visit"})["emails"]}
    assert incoming not in visible
    in_trash = ok(rt, sid, "search_emails", {"mailbox": a, "folder": "trash", "query": "site visit"})["emails"]
    assert [e["email_id"] for e in in_trash] == [incoming]
    assert rt.call("reply_to_email", {"mailbox": a, "email_id": incoming, "body": "ok"}, sid, 0).is_error
    ok(rt, sid, "move_email_to_folder", {"mailbox": a, "email_id": incoming, "folder": "inbox"})
    again = ok(rt, sid, "reply_to_email", {"mailbox": a, "email_id": incoming, "body": "See you then."})
    assert again["thread_id"] == sent["thread_id"] and again["to"] == [b]
    # append-only: the original sent copy is byte-identical after all this
    original = ok(rt, sid, "read_email", {"mailbox": a, "email_id": sent["email_id"]})
    assert original["body"] == "Can we meet Thursday?" and original["bcc"] == [c]


def test_label_counts_and_draft_lifecycle(rt: DomainRuntime, world: dict[str, Any]) -> None:
    sid = new_sid()
    me = world["boxes"][0]
    target = pick(world, mailbox=me, folder="inbox")
    ok(rt, sid, "create_email_label", {"mailbox": me, "name": "Taxes 2026", "color": "green"})
    ok(rt, sid, "modify_email_labels", {"mailbox": me, "email_id": target["email_id"], "add_labels": ["taxes 2026"]})
    labels = {lb["name"]: lb for lb in ok(rt, sid, "list_email_labels", {"mailbox": me})["labels"]}
    assert labels["Taxes 2026"]["total"] == 1
    hits = ok(rt, sid, "search_emails", {"mailbox": me, "label": "Taxes 2026"})["emails"]
    assert [e["email_id"] for e in hits] == [target["email_id"]]

    n_drafts = len(ok(rt, sid, "list_email_drafts", {"mailbox": me}))
    draft = ok(rt, sid, "create_email_draft", {"mailbox": me, "reply_to_email_id": target["email_id"],
                                               "body": "Thanks!"})
    assert draft["thread_id"] == target["thread_id"] and draft["subject"].startswith("Re: ")
    sent = ok(rt, sid, "send_email_draft", {"mailbox": me, "draft_id": draft["draft_id"]})
    assert sent["thread_id"] == target["thread_id"]
    assert len(ok(rt, sid, "list_email_drafts", {"mailbox": me})) == n_drafts
    frozen = [d for d in ok(rt, sid, "list_email_drafts", {"mailbox": me, "include_sent": True})
              if d["draft_id"] == draft["draft_id"]]
    assert frozen[0]["status"] == "sent" and frozen[0]["sent_email_id"] == sent["email_id"]
    # sessions are isolated: a fresh session on the same seed sees none of this
    other = new_sid()
    assert "Taxes 2026" not in {lb["name"] for lb in ok(rt, other, "list_email_labels", {"mailbox": me})["labels"]}


# ------------------------------------------------------------------ determinism
def test_world_generation_is_fast() -> None:
    t0 = time.perf_counter()
    snapshot_json(domain.new_world(0).snapshot())
    elapsed = time.perf_counter() - t0
    assert elapsed < 1.0, f"world generation took {elapsed:.2f}s"


# ------------------------------------------------------------------ the session clock
def test_timestamps_follow_the_session_clock(rt: DomainRuntime, world: dict[str, Any]) -> None:
    snaps = []
    for _ in range(2):  # the same calls replayed on a fresh session give the same state
        sid = new_sid()
        a, b = world["boxes"][:2]
        first = ok(rt, sid, "send_email", {"mailbox": a, "to": [b], "subject": "Ping", "body": "one"})
        assert first["timestamp"] == "2026-06-01T09:01:00+00:00"  # one minute per call from 09:00
        ok(rt, sid, "email_session_advance_clock", {"minutes": 24 * 60})
        draft = ok(rt, sid, "create_email_draft", {"mailbox": a, "to": [b], "subject": "Later", "body": "two"})
        assert draft["updated_at"] == "2026-06-02T09:02:00+00:00"
        label = ok(rt, sid, "create_email_label", {"mailbox": a, "name": "Follow-up"})
        assert label["created_on"] == "2026-06-02"
        sent = ok(rt, sid, "send_email_draft", {"mailbox": a, "draft_id": draft["draft_id"]})
        assert sent["timestamp"] == "2026-06-02T09:04:00+00:00" > first["timestamp"]
        inbox = ok(rt, sid, "search_emails", {"mailbox": b, "since": "2026-06-02"})["emails"]
        assert [e["subject"] for e in inbox] == ["Later"]
        snaps.append(snap(rt, sid))
    assert snaps[0] == snaps[1]


# ---------------------------------------------------------------- layout: listing order and tool modules
USER_TOOL_ORDER = [
    "list_email_drafts", "create_email_draft", "update_email_draft", "send_email_draft",
    "delete_email_draft", "search_emails", "read_email", "get_email_thread", "send_email", "reply_to_email",
    "forward_email", "list_email_labels", "create_email_label", "modify_email_labels",
    "move_email_to_folder", "mark_email_read", "star_email",
]


def test_user_tool_order_is_pinned() -> None:
    """The listing order the model sees is pinned (where each tool lives is checked for every domain
    by ``test_contract``)."""
    assert [t.name for t in domain.user_tools] == USER_TOOL_ORDER
