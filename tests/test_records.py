"""The typed records (prove_jax.records): exact dict round trips, errors that name the example and
the field, and a module light enough for the pure reward package and data/ to import."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from typing import Any

import pytest

from prove_jax.records import KINDS, Example

RECORD: dict[str, Any] = {
    "id": "prove-0-conv-000007", "kind": "conversation", "servers": ["banking", "email"], "seed": 11,
    "tools": [{"type": "function", "function": {"name": "list_accounts", "description": "d",
                                                 "parameters": {"type": "object", "properties": {}}}}],
    "system": "You are a helpful assistant.",
    "turns": [
        {"user": "Which accounts do I have?", "gold": [
            {"step": 0, "calls": [{"name": "list_accounts", "arguments": {"customer_id": "C1"}}], "depends_on": []},
            {"step": 1, "calls": [{"name": "send_email", "arguments": {"to": ["a@b.c"]}, "expect_error": True},
                                  {"name": "send_email", "arguments": {"to": ["d@e.f"]}}], "depends_on": [0]}],
         "reply": "Two accounts."},
        {"user": "Thanks.", "gold": [], "reply": "You are welcome."},
    ],
    "complexity": {"n_calls": 3, "n_steps": 2, "n_turns": 2, "n_servers": 2},
    "meta": {"teacher": "programmatic", "failure": None, "distractors": []},
}


def _dumps(d: Any) -> str:
    return json.dumps(d, ensure_ascii=False, separators=(",", ":"))  # data.writer.dumps


def test_round_trip_is_exact_key_order_and_unknown_keys_included() -> None:
    ex = Example.from_dict(RECORD)
    assert _dumps(ex.to_dict()) == _dumps(RECORD)
    assert ex.extras == {"meta": RECORD["meta"]}  # what no consumer reads is kept, not dropped
    # unknown keys at every level survive, in place after the known ones
    grown = copy.deepcopy(RECORD)
    grown["turns"][0]["note"] = "n"
    grown["turns"][0]["gold"][0]["calls"][0]["why"] = 1
    grown["turns"][0]["gold"][1]["tag"] = "t"
    grown["complexity"]["n_domains"] = 2
    assert _dumps(Example.from_dict(grown).to_dict()) == _dumps(grown)


def test_typed_fields() -> None:
    ex = Example.from_dict(RECORD)
    assert (ex.id, ex.kind, ex.servers, ex.seed) == ("prove-0-conv-000007", "conversation", ("banking", "email"), 11)
    assert ex.turns[0].gold[1].depends_on == (0,) and ex.turns[1].gold == ()
    first, failing, second = ex.gold_calls()
    assert (first.expect_error, failing.expect_error, second.expect_error) == (None, True, None)
    assert ex.n_gold_calls == 3 == ex.complexity.n_calls
    with pytest.raises(AttributeError):
        ex.id = "other"  # type: ignore[misc]  # frozen: a different view is a new record


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d.pop("complexity"), "Example 'prove-0-conv-000007': missing required field 'complexity'"),
    (lambda d: d.pop("id"), "Example (no id): missing required field 'id'"),
    (lambda d: d["turns"][0]["gold"][1]["calls"][0].pop("name"),
     "Example 'prove-0-conv-000007': missing required field 'turns[0].gold[1].calls[0].name'"),
    (lambda d: d.update(seed="11"), "Example 'prove-0-conv-000007': field 'seed' must be int, got str"),
    (lambda d: d.update(seed=True), "field 'seed' must be int, got bool"),
    (lambda d: d["turns"][1].update(reply=None), "field 'turns[1].reply' must be str, got NoneType"),
    (lambda d: d["turns"][0]["gold"][1].update(depends_on=["0"]),
     "field 'turns[0].gold[1].depends_on[0]' must be int, got str"),
    (lambda d: d.update(servers="banking"), "field 'servers' must be list, got str"),
    (lambda d: d.update(kind="chitchat"), "field 'kind' must be one of " + ", ".join(KINDS)),
    (lambda d: d.update(turns=[]), "field 'turns' must hold at least one turn"),
])
def test_a_bad_record_names_the_example_and_the_field(edit: Any, message: str) -> None:
    bad = copy.deepcopy(RECORD)
    edit(bad)
    with pytest.raises(ValueError) as err:
        Example.from_dict(bad)
    assert message in str(err.value)


def test_records_import_no_jax() -> None:
    """The pure reward package and data/ import the records: the module must stay stdlib + numpy."""
    code = "import sys, prove_jax.records, prove_jax.rewards; assert 'jax' not in sys.modules, 'jax imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
