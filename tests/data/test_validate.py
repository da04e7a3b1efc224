"""Validation rules, each shown rejecting a case built to break it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from data.catalog import get_catalog
from data.validate import Validator, jaccard, jaccard_dedup


@pytest.fixture(scope="module")
def validator() -> Validator:
    return Validator(get_catalog())


def _with_pin(examples: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    for ex in examples:
        for t in ex["turns"]:
            for g in t["gold"]:
                for c in g["calls"]:
                    if "pin" in c["arguments"] and not c.get("expect_error") and c["arguments"]["pin"] in t["user"]:
                        return copy.deepcopy(ex), c["arguments"]["pin"]
    raise AssertionError("no example states a PIN")


def test_kept_examples_pass_every_check(examples: list[dict[str, Any]], validator: Validator) -> None:
    for ex in examples[:60]:
        assert validator.check(ex, f"ok:{ex['id']}") is None


def test_provenance_rejects_a_pin_nobody_said(examples: list[dict[str, Any]], validator: Validator) -> None:
    ex, pin = _with_pin(examples)
    assert validator.check(ex, "pin-ok") is None
    for t in ex["turns"]:
        t["user"] = t["user"].replace(pin, "my usual PIN")
    assert validator.check(ex, "pin-gone") == "provenance_sensitive"


def test_replay_rejects_calls_that_fail_on_a_fresh_session(examples: list[dict[str, Any]], validator: Validator) -> None:
    ex = copy.deepcopy(next(e for e in examples if e["kind"] == "conversation" and e["complexity"]["n_calls"] >= 2))
    first = ex["turns"][0]["gold"][0]["calls"][0] if ex["turns"][0]["gold"] else ex["turns"][1]["gold"][0]["calls"][0]
    first["name"] = "no_such_tool"
    rep = validator.replay(ex, "broken")
    assert rep.schema_errors == 1 and validator.check(ex, "broken2") is not None


def test_expected_error_that_succeeds_counts_as_error(examples: list[dict[str, Any]], validator: Validator) -> None:
    # At least four calls, so one error stays under the 30 % error-rate cut and the check reaches the
    # unexpected-error rule this test is about.
    ex = copy.deepcopy(next(e for e in examples if e["kind"] == "conversation" and not e["meta"]["failure"]
                            and sum(len(g["calls"]) for t in e["turns"] for g in t["gold"]) >= 4))
    call = next(c for t in ex["turns"] for g in t["gold"] for c in g["calls"])
    call["expect_error"] = True
    assert validator.replay(ex, "unexpected").unexpected
    assert validator.check(ex, "unexpected2") == "replay_unexpected_error"


def test_ungrounded_ids_in_user_turns_are_rejected(examples: list[dict[str, Any]], validator: Validator) -> None:
    ex = copy.deepcopy(next(e for e in examples if e["kind"] == "conversation" and "banking" in e["servers"]))
    ex["turns"][0]["user"] += " Also my old account ACC-9876 is closed."
    assert validator.ungrounded_ids(ex) == ["ACC-9876"]
    assert validator.check(ex, "ungrounded") == "ungrounded_user_id"


def test_dedup_rejects_a_near_duplicate() -> None:
    a = ["transfer_funds|{amount:50}", "list_accounts|{c:1}", "get_account_balance|{a:1}", "pay_bill|{x:1}"]
    near = [*a, "list_cards|{c:1}"]  # J = 4/5 = 0.8 >= 0.7
    far = ["list_accounts|{c:2}", "get_account_balance|{a:2}", "pay_bill|{x:2}"]
    changed_one = [*a[:3], "pay_bill|{x:3}"]  # J = 3/5 = 0.6 < 0.7: a different request, kept
    assert jaccard(a, near) == pytest.approx(0.8)
    assert jaccard_dedup([a, near, far, changed_one], 0.7) == [None, 0, None, None]


def test_dedup_is_exact_against_brute_force() -> None:
    import random

    rng = random.Random(3)
    sets = [[f"t{rng.randrange(12)}" for _ in range(rng.randint(1, 5))] for _ in range(300)]
    got = jaccard_dedup(sets, 0.7)
    kept: list[int] = []
    for i, s in enumerate(sets):
        dup = next((j for j in kept if jaccard(s, sets[j]) >= 0.7), None)
        assert (got[i] is None) == (dup is None)
        if dup is None:
            kept.append(i)


def test_build_output_has_no_near_duplicates(examples: list[dict[str, Any]]) -> None:
    items = [ex["meta"]["dedup_items"] for ex in examples]
    for i in range(len(items)):
        for j in range(i):
            assert jaccard(items[i], items[j]) < 0.7, (examples[i]["id"], examples[j]["id"])
