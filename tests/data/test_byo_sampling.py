"""data.byo live-state sampling: own entities with labels from reads, and seeding an empty fixture."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from data.byo.discovery import discover
from data.byo.extract import extract
from data.byo.protocol import CallOutcome, ToolAnnotations, ToolListing
from data.byo.sampling import entities_of, sample_live_state, seed_if_empty
from data.byo.schema import infer_shapes
from tests.data.test_byo_probe import LISTING, FakeBank

S = {"type": "string"}


def test_entities_are_own_ids_with_labels() -> None:
    ex = extract(json.dumps({"projects": [{"key": "WEB", "name": "Website", "lead_id": "U-1"}]}))
    [e] = entities_of("list_projects", "project", ex)
    assert (e.type, e.id, e.label) == ("project", "WEB", "Website")  # typed by its container, not "key"
    ex = extract(json.dumps([{"account_id": "ACC-1", "owner_id": "OWN-1", "nickname": "Rainy day"}]))
    [e] = entities_of("list_accounts", "account", ex)
    assert (e.type, e.id, e.label) == ("account", "ACC-1", "Rainy day")  # owner_id is a foreign key


def test_text_results_give_identifier_tokens() -> None:
    ex = extract("Created 3f2a9c1e-0b7d-4c2e-9a1f-1234567890ab for ana@example.com")
    got = {(e.type, e.id) for e in entities_of("make", "thing", ex)}
    assert got == {("uuid", "3f2a9c1e-0b7d-4c2e-9a1f-1234567890ab"), ("email", "ana@example.com")}


def test_sampling_reads_only() -> None:
    bank = FakeBank()
    shapes = infer_shapes(discover(LISTING))
    state = asyncio.run(sample_live_state(shapes, bank))
    assert {e.id for e in state.entities["account"]} == {"ACC-0001", "ACC-0002"}
    assert not {"open_ticket", "rename", "transfer", "close_ticket"} & set(bank.calls)


class EmptyNotes:
    """A notes server that starts empty (like a fresh memory server)."""

    def __init__(self) -> None:
        self.notes: dict[str, str] = {}

    async def reset(self) -> None:
        self.notes = {}

    async def call(self, name: str, args: dict[str, Any]) -> CallOutcome:
        if name == "list_notes":
            return CallOutcome(json.dumps({"notes": [{"title": t, "body": b} for t, b in self.notes.items()]}), False)
        if name == "create_note":
            self.notes[args["title"]] = args["body"]
            return CallOutcome("ok", False)
        return CallOutcome("unknown tool", True)


def test_an_empty_fixture_is_seeded_and_reset_replays_the_seed() -> None:
    listing = [ToolListing("list_notes", "", {"type": "object", "properties": {}}, ToolAnnotations(read_only=True)),
               ToolListing("create_note", "", {"type": "object", "properties": {"title": S, "body": S},
                                                "required": ["title", "body"]})]
    server = EmptyNotes()
    session, state = asyncio.run(seed_if_empty(infer_shapes(discover(listing)), server))
    assert state.seeded and state.seeded[0].tool == "create_note"
    assert [e.type for e in state.entities["note"]] == ["note"] * len(state.entities["note"])
    asyncio.run(session.reset())
    assert server.notes  # the seed survives a reset


def test_joined_names_are_entities_only_once_a_consumer_took_them() -> None:
    """git_branch lists ``main`` under repo_path: ``/ws/main`` is a candidate, not an entity."""
    from data.byo.graph import GraphOptions, infer_graph
    from tests.data.test_byo_paths import LISTING as TREE
    from tests.data.test_byo_paths import FakeTree

    shapes = infer_shapes(discover(TREE))
    g = asyncio.run(infer_graph(TREE, discover(TREE), FakeTree(), GraphOptions()))
    state = asyncio.run(sample_live_state(shapes, FakeTree(), g.probe))
    paths = {e.id for e in state.entities.get("path", [])}
    assert "/ws/b.md" in paths  # listed by list_dir under /ws, and read_text took it
    assert not any(str(p).endswith("/main") for es in state.entities.values() for p in (e.id for e in es))
