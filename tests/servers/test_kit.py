"""The kit itself: copy-on-write sessions, rollback, validation messages, docstring schemas."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Annotated, Literal

import pytest
from pydantic import Field

from servers.kit import Cell, Domain, DomainRuntime, Seeds, Sensitive, State, Table, ToolError, require, tool
from servers.kit.state import StateError, diff_snapshots, snapshot_json
from servers.kit.tools import parse_docstring


@dataclass
class Item:
    item_id: str
    qty: int
    tags: list[str]


@dataclass
class Mode:
    on: bool = False


class ToyState(State):
    items: Table[Item]
    mode: Cell[Mode]


def _gen(s: ToyState, seeds: Seeds) -> None:
    s.mode.set(Mode())
    for i in range(5):
        s.items.put(f"I{i}", Item(f"I{i}", seeds.rng.randint(1, 9), ["a"]))


@tool
def bump(s: ToyState, item_id: str, by: Annotated[int, Field(ge=1)] = 1, fail_after: bool = False) -> dict:
    """Increase an item's quantity.

    Args:
        item_id: Which item.
        by: How much to add.
        fail_after: Raise after writing, to test rollback.
    """
    require(s.items, item_id, "item_id")
    item = s.items.edit(item_id)
    item.qty += by
    item.tags.append("bumped")
    s.mode.edit().on = True
    if fail_after:
        raise ToolError("refused after writing", field="fail_after")
    return item


@tool
def choose(s: ToyState, color: Literal["red", "blue"], pin: Sensitive, note: str | None = None) -> str:
    """Pick a color.

    Args:
        color: The color.
        pin: A secret.
        note: Optional note.
    """
    return f"{color}:{note}"


@tool
def rename(s: ToyState, item_id: str, title: str) -> str:
    """Rename an item (a parameter literally called ``title`` must survive schema cleanup).

    Args:
        item_id: Which item.
        title: The new title.
    """
    return title


@tool
def crash(s: ToyState, item_id: str) -> None:
    """A tool with a bug: it writes then divides by zero.

    Args:
        item_id: Which item.
    """
    s.items.edit(item_id).qty = -1
    _ = 1 / 0


toy = Domain("toy", ToyState, _gen, description="A toy domain for kit tests.", modules=(sys.modules[__name__],))


@pytest.fixture
def rt() -> DomainRuntime:
    return DomainRuntime(toy)


def test_sessions_share_base_until_written(rt: DomainRuntime) -> None:
    a = rt.sessions.open("a", 0)
    b = rt.sessions.open("b", 0)
    assert a.items.get("I0") is b.items.get("I0")  # structural sharing: same record object
    before = b.items["I0"].qty
    assert not rt.call("bump", {"item_id": "I0", "by": 3}, "a", 0).is_error
    assert a.items["I0"].qty == before + 3
    assert b.items["I0"].qty == before  # other session unchanged
    assert rt.sessions.world(0).items["I0"].qty == before  # seed world unchanged
    assert b.items["I0"].tags == ["a"]  # nested list was copied, not shared


def test_tool_error_rolls_back_every_write(rt: DomainRuntime) -> None:
    snap = snapshot_json(rt.sessions.open("s", 0).snapshot())
    out = rt.call("bump", {"item_id": "I1", "fail_after": True}, "s", 0)
    assert out.is_error and "refused after writing" in out.text
    assert snapshot_json(rt.sessions.open("s", 0).snapshot()) == snap


def test_crash_is_error_and_rolled_back(rt: DomainRuntime) -> None:
    snap = snapshot_json(rt.sessions.open("s", 0).snapshot())
    out = rt.call("crash", {"item_id": "I2"}, "s", 0)
    assert out.is_error and "ZeroDivisionError" in out.text
    assert snapshot_json(rt.sessions.open("s", 0).snapshot()) == snap


def test_reset_and_diff(rt: DomainRuntime) -> None:
    rt.call("bump", {"item_id": "I3"}, "s", 0)
    diff = rt.call("toy_session_diff", {}, "s", 0).json()
    assert list(diff["items"]["changed"]) == ["I3"] and "mode" in diff
    rt.call("toy_session_reset", {}, "s", 0)
    assert rt.call("toy_session_diff", {}, "s", 0).json() == {}


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ({}, "missing required argument 'item_id'"),
        ({"item_id": "I0", "bogus": 1}, "unexpected argument(s) 'bogus'"),
        ({"item_id": 5}, "invalid argument 'item_id'"),
        ({"item_id": "I0", "by": "2"}, "invalid argument 'by'"),
        ({"item_id": "I0", "by": 0}, "invalid argument 'by'"),
        ({"item_id": "nope"}, "unknown item_id 'nope'"),
    ],
)
def test_validation_names_the_field(rt: DomainRuntime, args: dict, needle: str) -> None:
    out = rt.call("bump", args, "s", 0)
    assert out.is_error and needle in out.text, out.text


def test_non_object_arguments_and_unknown_tool(rt: DomainRuntime) -> None:
    assert "must be a JSON object" in rt.call("bump", ["I0"], "s", 0).text
    assert "unknown tool 'nope'" in rt.call("nope", {}, "s", 0).text


def test_null_optional_is_dropped_but_null_required_is_not(rt: DomainRuntime) -> None:
    assert rt.call("choose", {"color": "red", "pin": "1", "note": None}, "s", 0).json() == "red:None"
    assert rt.call("choose", {"color": None, "pin": "1"}, "s", 0).is_error


def test_schema_from_hints_and_docstring(rt: DomainRuntime) -> None:
    schema = rt.table.schemas["choose"]
    assert schema["properties"]["color"] == {"enum": ["red", "blue"], "type": "string", "description": "The color."}
    assert schema["properties"]["note"] == {"type": "string", "description": "Optional note.", "maxLength": 200}
    assert schema["properties"]["pin"]["x-sensitive"] is True
    assert schema["required"] == ["color", "pin"] and schema["additionalProperties"] is False
    assert rt.table.sensitive_params("choose") == ["pin"]
    assert rt.table.openai_tools()[0]["function"]["description"] == "Increase an item's quantity."


def test_parameter_named_title_is_kept(rt: DomainRuntime) -> None:
    schema = rt.table.schemas["rename"]
    assert schema["properties"]["title"] == {"type": "string", "description": "The new title.", "maxLength": 200}
    assert "title" in schema["required"] and "title" not in {k for k in schema if k != "properties"}
    assert rt.call("rename", {"item_id": "I0", "title": "Shiny"}, "s", 0).json() == "Shiny"


def test_seed_mismatch_is_an_error(rt: DomainRuntime) -> None:
    rt.call("bump", {"item_id": "I0"}, "s", 0)
    out = rt.call("bump", {"item_id": "I0"}, "s", 1)
    assert out.is_error and "opened with seed 0" in out.text


def test_writes_outside_a_call_are_refused() -> None:
    world = toy.new_world(0)
    with pytest.raises(StateError):
        world.fork().items.put("X", Item("X", 1, []))


def test_diff_snapshots_tables_and_cells() -> None:
    a = {"t": {"x": {"v": 1}, "y": {"v": 2}}, "c": {"on": False}}
    b = {"t": {"x": {"v": 1}, "z": {"v": 3}}, "c": {"on": True}}
    d = diff_snapshots(a, b)
    assert d["t"] == {"added": {"z": {"v": 3}}, "removed": ["y"], "changed": {}}
    assert d["c"] == {"before": {"on": False}, "after": {"on": True}}


def test_parse_docstring_sections() -> None:
    desc, params = parse_docstring(
        """Do a thing.

        Longer text.

        Args:
            a: First
                continued.
            b (int): Second.

        Returns:
            stuff
        """
    )
    assert desc == "Do a thing.\n\nLonger text."
    assert params == {"a": "First continued.", "b": "Second."}


def test_require_names_the_argument_and_keeps_what_the_client_wrote() -> None:
    """Every domain's "get X or refuse" goes through ``require``: the plain message, and the three
    ways domains word it (a noun for the thing, the value as given when the key is normalised, a hint)."""
    table = {"ACC-1": "account"}
    assert require(table, "ACC-1", "account_id") == "account"
    with pytest.raises(ToolError) as plain:
        require(table, "ACC-9", "account_id")
    assert str(plain.value) == "unknown account_id 'ACC-9'"
    assert (plain.value.field, plain.value.code) == ("account_id", "not_found")
    with pytest.raises(ToolError) as worded:
        require(table, "ACC-9", "new_owner_id", what="sales rep", shown=" acc-9 ", hint="; reps: ACC-1")
    assert str(worded.value) == "unknown sales rep ' acc-9 '; reps: ACC-1"
    assert (worded.value.field, worded.value.code) == ("new_owner_id", "not_found")
