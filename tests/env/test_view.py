"""The tool view: compact = gold tools + k others (original order, deterministic), compact schemas."""

from __future__ import annotations

from typing import Any

import pytest

from prove_jax.env.view import ToolView, apply_view, compact_tool, gold_names
from prove_jax.records import Example


def _tool(name: str, desc: str = "Does a thing. More detail here.") -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": desc, "parameters": {
        "type": "object", "properties": {"x": {"type": "string", "description": "the x", "enum": ["a", "b"]},
                                         "n": {"type": "integer", "description": "how many"}},
        "required": ["x"]}}}


RECORD = {"id": "e1", "kind": "conversation", "servers": ["x"], "seed": 0, "tools": [_tool(f"t{i}") for i in range(10)],
          "system": "", "turns": [
              {"user": "u", "gold": [{"step": 0, "calls": [{"name": "t7", "arguments": {}}], "depends_on": []}],
               "reply": "r"},
              {"user": "v", "gold": [{"step": 1, "calls": [{"name": "t2", "arguments": {}}, {"name": "t7", "arguments": {}}],
                                      "depends_on": []}], "reply": "r"}],
          "complexity": {"n_calls": 3, "n_steps": 2, "n_turns": 2, "n_servers": 1}}
EX = Example.from_dict(RECORD)


def names(ex: Example) -> list[str]:
    return [t["function"]["name"] for t in ex.tools]


def test_compact_view_keeps_gold_plus_k_in_original_order() -> None:
    v = apply_view(EX, ToolView(mode="compact", others=3, seed=1))
    got = names(v)
    assert len(got) == 5 and {"t2", "t7"} <= set(got)
    assert got == sorted(got, key=lambda n: int(n[1:]))  # original order: position reveals nothing
    assert names(apply_view(EX, ToolView(mode="compact", others=3, seed=1))) == got  # deterministic
    others = {frozenset(names(apply_view(Example.from_dict({**RECORD, "id": f"e{i}"}), ToolView(mode="compact", others=3))))
              for i in range(8)}
    assert len(others) > 1  # different examples draw different distractors
    assert len(EX.tools) == 10 and v.turns == EX.turns  # the record itself is untouched; only tools differ


def test_abstention_examples_get_k_tools_and_full_view_is_identity() -> None:
    ex = Example.from_dict({**RECORD, "kind": "abstention", "turns": [{"user": "u", "gold": [], "reply": "no"}]})
    assert gold_names(ex) == set()
    assert len(apply_view(ex, ToolView(mode="compact", others=2)).tools) == 2
    assert apply_view(EX, ToolView()) == EX


def test_compact_schemas_drop_prose_but_keep_types_enums_required() -> None:
    t = compact_tool(_tool("t0"))["function"]
    assert t["description"] == "Does a thing."
    props = t["parameters"]["properties"]
    assert props["x"] == {"type": "string", "enum": ["a", "b"]} and props["n"] == {"type": "integer"}
    assert t["parameters"]["required"] == ["x"]


def test_bad_view_is_refused() -> None:
    with pytest.raises(ValueError, match="mode"):
        ToolView(mode="tiny")
