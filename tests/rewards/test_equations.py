"""Hand-computed cases for every equation of prove_paper.md §3 (expected values worked out here)."""

from __future__ import annotations

import pytest
from reward_builders import TOOLS, call, example, gcall, gold_as_calls, step

from prove_jax.rewards import RewardConfig, budget, score

W_VAL, W_COV, W_EFF, W_NAME, W_ARG = 0.5, 0.5, 0.15, 0.2, 0.1
approx = pytest.approx


def paper_total(val: float, cov: float, eff: float, name: float, arg: float) -> float:
    return W_VAL * val + W_COV * cov + W_EFF * eff + W_NAME * name + W_ARG * arg


def four_call_example() -> dict:
    """4 gold calls over two turns: search → (get a, get b) → pay."""
    return example([
        [step(1, [gcall("search", query="hubs")]),
         step(2, [gcall("get", id="a")], [1]),
         step(3, [gcall("get", id="b")], [1])],
        [step(4, [gcall("pay", account="acc", amount=10)], [2, 3])],
    ])


# ------------------------------------------------------------------ R_eff (Eq. 2) and the budget
def test_paper_budget_example_two_extra_calls_free_seventh_penalised() -> None:
    ex = four_call_example()
    assert budget(4, 0.5) == 6  # B = 4 + ceil(0.5 * 4)
    six = [*gold_as_calls(ex), call("ping"), call("ping")]
    r6 = score(ex, six)
    assert r6["budget"] == 6 and r6["n_gold"] == 4
    assert r6["eff"] == 0.0  # N = B: no penalty
    assert r6["val"] == 1.0 and r6["cov"] == 1.0 and r6["arg"] == 1.0
    assert r6["name"] == approx(4 / 6)
    assert r6["total"] == approx(paper_total(1, 1, 0, 4 / 6, 1))

    r7 = score(ex, [*six, call("ping")])
    assert r7["eff"] == approx(-0.5 * 1 / 6)  # -alpha * (7 - 6) / 6
    assert r7["name"] == approx(4 / 7)
    assert r7["total"] == approx(paper_total(1, 1, -1 / 12, 4 / 7, 1))
    assert r7["total"] < r6["total"]


def test_flat_budget_penalises_every_extra_call() -> None:
    ex = four_call_example()
    six = [*gold_as_calls(ex), call("ping"), call("ping")]
    r = score(ex, six, RewardConfig(beta=0.0))
    assert r["budget"] == 4
    assert r["eff"] == approx(-0.5 * 2 / 4)


# ------------------------------------------------------------------ parallel calls, R_cov (Eq. 1)
def parallel_example() -> dict:
    return example([[step(1, [gcall("search", query="q")]),
                     step(2, [gcall("get", id="a"), gcall("get", id="b")], [1])]])


def test_parallel_gold_calls_counted_individually() -> None:
    ex = parallel_example()
    r = score(ex, [call("search", {"query": "q"}), call("get", {"id": "a"})])
    assert r["n_gold"] == 3 and r["budget"] == 3 + 2  # n_gt counts parallel calls; ceil(1.5) = 2
    assert r["cov"] == approx(1 / 2)  # step 2 needs both of its calls
    assert r["arg"] == 1.0  # both aligned pairs agree fully
    assert r["total"] == approx(paper_total(1, 0.5, 0, 1, 1))


def test_parallel_calls_any_order_and_never_cross_paired() -> None:
    ex = parallel_example()
    swapped = score(ex, [call("search", {"query": "q"}), call("get", {"id": "b"}), call("get", {"id": "a"})])
    assert swapped["cov"] == 1.0 and swapped["arg"] == 1.0
    # get(b) is exact for gold b; get(z) agrees with nothing. Gold a must not take get(b) on the
    # 0-agreement tie: arg = (search 1 + b 1 + a 0) / 3.
    partial = score(ex, [call("search", {"query": "q"}), call("get", {"id": "b"}), call("get", {"id": "z"})])
    assert partial["cov"] == 1.0
    assert partial["arg"] == approx(2 / 3)


def test_right_name_wrong_keys_scores_one_third_validity_and_no_coverage() -> None:
    ex = example([[step(1, [gcall("get", id="a")])]])
    r = score(ex, [call("get", {"ident": "a"}, executed_ok=True)])
    assert r["val"] == approx(1 / 3)  # name exists; required "id" missing → stops at level 1
    assert r["cov"] == 0.0 and r["arg"] == 0.0  # no key-set match, M empty → R_arg = 0
    assert r["name"] == 1.0
    assert r["total"] == approx(paper_total(1 / 3, 0, 0, 1, 0))


def test_dependency_order_violated_zeroes_that_step() -> None:
    ex = example([[step(1, [gcall("search", query="q")]), step(2, [gcall("get", id="a")], [1])]])
    r = score(ex, [call("get", {"id": "a"}), call("search", {"query": "q"})])
    assert r["cov"] == approx(1 / 2)  # step 1 fine; step 2 ran before its prerequisite
    assert r["arg"] == 1.0
    in_order = score(ex, [call("search", {"query": "q"}), call("get", {"id": "a"})])
    assert in_order["cov"] == 1.0


def test_unmatched_prerequisite_zeroes_dependent_step() -> None:
    ex = example([[step(1, [gcall("search", query="q")]), step(2, [gcall("get", id="a")], [1])]])
    r = score(ex, [call("get", {"id": "a"})])
    assert r["cov"] == 0.0
    assert r["arg"] == 1.0  # the aligned pair still counts for R_arg


def test_mu_is_last_call_of_prerequisite_and_first_call_of_dependent() -> None:
    ex = example([[step(1, [gcall("search", query="q1"), gcall("search", query="q2")]),
                   step(2, [gcall("get", id="a")], [1])]])
    # get runs after one prerequisite call but before the other: µ(1) = last = 2 > µ(2) = 1.
    r = score(ex, [call("search", {"query": "q1"}), call("get", {"id": "a"}), call("search", {"query": "q2"})])
    assert r["cov"] == approx(1 / 2)

    ex2 = example([[step(1, [gcall("search", query="q")]),
                    step(2, [gcall("get", id="a"), gcall("get", id="b")], [1])]])
    # one of the dependent's parallel calls precedes the prerequisite: µ(2) = first = 0 < µ(1) = 1.
    r2 = score(ex2, [call("get", {"id": "a"}), call("search", {"query": "q"}), call("get", {"id": "b"})])
    assert r2["cov"] == approx(1 / 2)


def test_step_ids_order_gold_across_turns() -> None:
    # Listed out of id order: step order (ascending ids) decides prerequisites, not listing order.
    ex = example([[step(2, [gcall("get", id="a")], [1])], [step(1, [gcall("search", query="q")])]])
    r = score(ex, [call("search", {"query": "q"}), call("get", {"id": "a"})])
    assert r["cov"] == 1.0


# ------------------------------------------------------------------ duplicates
def test_duplicate_calls_match_once_and_earliest() -> None:
    ex = example([[step(1, [gcall("search", query="q")]), step(2, [gcall("get", id="a")], [1])]])
    dup = [call("search", {"query": "q"}), call("search", {"query": "q"}), call("get", {"id": "a"})]
    r = score(ex, dup)
    assert r["cov"] == 1.0 and r["arg"] == 1.0
    assert r["name"] == 1.0 and r["val"] == 1.0
    assert r["eff"] == 0.0  # N = 3 <= B = 2 + 1
    four = score(ex, [*dup, call("search", {"query": "q"})])
    assert four["eff"] == approx(-0.5 * (4 - 3) / 3)

    # A redundant repeat after the dependent: the tie goes to the earliest copy, order holds.
    late_repeat = [call("search", {"query": "q"}), call("get", {"id": "a"}), call("search", {"query": "q"})]
    assert score(ex, late_repeat)["cov"] == 1.0

    twice = example([[step(1, [gcall("search", query="q")]), step(2, [gcall("search", query="q")])]])
    once = score(twice, [call("search", {"query": "q"})])
    assert once["cov"] == approx(1 / 2)  # one model call serves one gold call (one-to-one)


# ------------------------------------------------------------------ empty rollouts, abstention
def test_zero_calls_on_non_empty_gold_scores_zero() -> None:
    r = score(four_call_example(), [])
    for key in ("total", "val", "cov", "eff", "name", "arg", "abstain"):
        assert r[key] == 0.0, key


@pytest.mark.parametrize("kind", ["abstention", "irrelevance", "clarification", "conversation"])
def test_abstention_rule(kind: str) -> None:
    ex = example([[]], kind=kind)
    good = score(ex, [])
    assert good["total"] == 1.0 and good["abstain"] == 1.0 and good["is_abstention"] == 1.0
    bad = score(ex, [call("search", {"query": "q"})])
    assert bad["total"] == 0.0 and bad["abstain"] == 0.0
    assert bad["val"] == 1.0  # still reported for logging, but not part of the total


# ------------------------------------------------------------------ R_val levels
def test_validity_levels_are_cumulative_and_averaged() -> None:
    ex = example([[step(1, [gcall("search", query="q")])]])
    calls = [
        call("nope", {"query": "q"}),  # level 0: not a visible tool
        call("search", {"query": 3}),  # level 1: wrong type
        call("search", {"query": "q"}, executed_ok=False),  # level 2
        call("search", {"query": "q", "extra": 1}),  # level 3: extra key is fine
    ]
    assert score(ex, calls)["val"] == approx((0 + 1 + 2 + 3) / 12)
    # A failed level stops the climb: executed_ok cannot rescue wrong types.
    assert score(ex, [call("search", {"query": 3}, executed_ok=True)])["val"] == approx(1 / 3)


def test_malformed_arguments_fail_level_two_and_never_match() -> None:
    ex = example([[step(1, [gcall("search", query="q")])]])
    for bad in ['{"query": "q"', None, ["q"]]:
        r = score(ex, [{"name": "search", "arguments": bad, "executed_ok": True}])
        assert r["val"] == approx(1 / 3) and r["cov"] == 0.0 and r["arg"] == 0.0
    r = score(ex, [call("search", {"query": "q"}, parsed_ok=False)])
    assert r["val"] == approx(1 / 3) and r["cov"] == 0.0


# ------------------------------------------------------------------ R_name (Eq. 3), R_arg (Eq. 4)
def test_name_fraction() -> None:
    ex = example([[step(1, [gcall("search", query="q")])]])
    r = score(ex, [call("search", {"query": "x"}), call("ping"), call("nope")])
    assert r["name"] == approx(1 / 3)


def test_argument_values_equal_as_json() -> None:
    ex = example([[step(1, [gcall("pay", account="acc", amount=5)])]])
    r = score(ex, [call("pay", {"account": "acc", "amount": 5.0})])
    assert r["arg"] == 1.0 and r["val"] == 1.0 and r["cov"] == 1.0
    half = score(ex, [call("pay", {"account": "ACC", "amount": 5})])
    assert half["arg"] == approx(1 / 2)


def test_bool_is_not_equal_to_one() -> None:
    ex = example([[step(1, [gcall("search", query="q", limit=1)])]])
    r = score(ex, [call("search", {"query": "q", "limit": True})])
    assert r["arg"] == approx(1 / 2)  # query agrees, limit True != 1
    assert r["cov"] == 1.0  # keys all present: still a match
    assert r["val"] == approx(1 / 3)  # a bool is not an integer: level 2 fails


def test_gold_call_without_arguments_contributes_one() -> None:
    ex = example([[step(1, [gcall("ping")]), step(2, [gcall("search", query="q")])]])
    r = score(ex, [call("ping", {"anything": 1}), call("search", {"query": "other"})])
    assert r["arg"] == approx((1 + 0) / 2)
    assert r["cov"] == 1.0


def test_arg_prefers_most_agreeing_candidate_then_earliest() -> None:
    ex = example([[step(1, [gcall("pay", account="acc", amount=5)])]])
    r = score(ex, [call("pay", {"account": "x", "amount": 1}), call("pay", {"account": "acc", "amount": 1}),
                   call("pay", {"account": "acc", "amount": 7})])
    assert r["arg"] == approx(1 / 2)  # picks a one-agreement call, not the zero-agreement first one


# ------------------------------------------------------------------ Eq. 5 total with custom weights
def test_total_is_the_weighted_sum_of_components() -> None:
    ex = four_call_example()
    calls = [call("search", {"query": "hubs"}), call("get", {"id": "a"}, executed_ok=False),
             call("nope"), *[call("ping")] * 5]
    base = score(ex, calls)
    weights = {"val": 1.0, "cov": 2.0, "eff": 3.0, "name": 4.0, "arg": 5.0}
    custom = score(ex, calls, {"weights": weights})
    expected = sum(w * base[k] for k, w in weights.items())
    assert custom["total"] == approx(expected)
    assert base["total"] == approx(paper_total(*(base[k] for k in ("val", "cov", "eff", "name", "arg"))))
    assert base["eff"] < 0  # 8 calls > B = 6


def test_tools_are_read_from_the_example() -> None:
    ex = example([[step(1, [gcall("search", query="q")])]], tools=[t for t in TOOLS if t["function"]["name"] != "search"])
    r = score(ex, [call("search", {"query": "q"})])
    assert r["val"] == 0.0  # hidden tool: level 1 fails...
    assert r["cov"] == 1.0  # ...but it is still the gold call
