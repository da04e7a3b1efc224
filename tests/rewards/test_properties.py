"""Property tests (hypothesis) of the PROVE reward over random examples and rollouts."""

from __future__ import annotations

import copy
import itertools
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reward_builders import TOOLS as SMALL_TOOLS
from reward_builders import as_record, call, example, gcall, gold_as_calls, step, tool

from prove_jax.records import Example, Rollout
from prove_jax.rewards import RewardConfig, score, score_group, score_rollouts

NAMES = [f"tool_{i}" for i in range(12)]
SHARED = NAMES[:3]  # few names, so that gold calls of the same tool collide
PROPS: dict[str, Any] = {
    "ref": {"type": "string"},
    "n": {"type": "integer"},
    "x": {"type": "number"},
    "flag": {"type": "boolean"},
    "tags": {"type": "array", "items": {"type": "string"}},
    "opt": {"anyOf": [{"type": "string"}, {"type": "null"}]},
}
OFFTASK = "offtask"  # visible, never a gold name
UNKNOWN = "does_not_exist"  # not visible, never a gold name
TOOLS = [tool(n, PROPS, ["ref"]) for n in NAMES] + [tool(OFFTASK, {"q": {"type": "string"}}, ["q"])]
VALUES: dict[str, st.SearchStrategy[Any]] = {
    "n": st.integers(-3, 3),
    "x": st.one_of(st.integers(-3, 3), st.floats(-1e6, 1e6, allow_nan=False)),
    "flag": st.booleans(),
    "tags": st.lists(st.sampled_from(["a", "b", "c"]), max_size=3),
    "opt": st.one_of(st.none(), st.sampled_from(["u", "v"])),
}
WEIGHTS = RewardConfig().weights
MAX_TOTAL = sum(WEIGHTS[k] for k in ("val", "cov", "name", "arg"))  # R_eff <= 0
PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def examples(draw: st.DrawFn, unique_names: bool = False, min_steps: int = 1) -> dict[str, Any]:
    """Random gold: up to 5 steps of 1–2 calls (distinct ``ref`` values), backward dependencies."""
    n_steps = draw(st.integers(min_steps, 5))
    names = iter(draw(st.permutations(NAMES)))
    steps: list[dict[str, Any]] = []
    sid = 0
    idx = 0
    for _ in range(n_steps):
        sid += draw(st.integers(1, 3))
        calls = []
        for _ in range(draw(st.integers(1, 2))):
            name = next(names) if unique_names else draw(st.sampled_from(SHARED))
            args: dict[str, Any] = {"ref": f"r{idx}"}
            idx += 1
            for key, strategy in VALUES.items():
                if draw(st.booleans()):
                    args[key] = draw(strategy)
            calls.append({"name": name, "arguments": args})
        previous = [s["step"] for s in steps]
        deps = draw(st.lists(st.sampled_from(previous), unique=True, max_size=2)) if previous else []
        steps.append(step(sid, calls, deps))
    n_turns = draw(st.integers(1, 3))
    cuts = sorted(draw(st.lists(st.integers(0, n_steps), min_size=n_turns - 1, max_size=n_turns - 1)))
    bounds = [0, *cuts, n_steps]
    turns = [steps[a:b] for a, b in itertools.pairwise(bounds)]
    return example(turns, tools=TOOLS, kind="conversation" if n_steps else "abstention")


def gold_list(ex: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for t in ex["turns"] for s in t["gold"] for c in s["calls"]]


@st.composite
def model_call(draw: st.DrawFn, ex: dict[str, Any]) -> dict[str, Any]:
    """A plausible model call: a gold copy, a near miss, malformed, or off-task."""
    gold = gold_list(ex)
    kinds = ["unknown", "badargs", "offtask"] + (["gold", "mutate", "dropkey", "wrongtype"] if gold else [])
    kind = draw(st.sampled_from(kinds))
    executed = draw(st.booleans())
    if kind in ("gold", "mutate", "dropkey", "wrongtype"):
        g = copy.deepcopy(draw(st.sampled_from(gold)))
        args = g["arguments"]
        key = draw(st.sampled_from(sorted(args)))
        if kind == "mutate":
            args[key] = "changed"
        elif kind == "dropkey":
            del args[key]
        elif kind == "wrongtype":
            args["ref"] = 7
        return call(g["name"], args, executed)
    if kind == "unknown":
        return call(UNKNOWN, {"ref": "r0"}, executed)
    if kind == "badargs":
        return {"name": draw(st.sampled_from(NAMES)), "arguments": '{"ref": ', "executed_ok": executed,
                "parsed_ok": False}
    return call(OFFTASK, {"q": draw(st.sampled_from(["x", 1]))}, executed)


@st.composite
def example_and_rollout(draw: st.DrawFn, min_steps: int = 1) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    ex = draw(examples(min_steps=min_steps))
    calls = draw(st.lists(model_call(ex), max_size=12))
    return ex, calls


def eff_bound(n_calls: int, n_gold: int, alpha: float = 0.5, beta: float = 0.5) -> float:
    b = n_gold + math.ceil(beta * n_gold)
    return -alpha * max(0, n_calls - b) / b if b else 0.0


# ------------------------------------------------------------------ ranges
@PROPERTY
@given(example_and_rollout(min_steps=0))
def test_components_within_documented_ranges(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    ex, calls = case
    r = score(ex, calls)
    for key in ("val", "cov", "name", "arg"):
        assert 0.0 <= r[key] <= 1.0, key
    assert r["abstain"] in (0.0, 1.0)
    n_gold = len(gold_list(ex))
    assert eff_bound(len(calls), n_gold) - 1e-12 <= r["eff"] <= 0.0
    if n_gold == 0:
        assert r["total"] == (1.0 if not calls else 0.0)
    else:
        assert WEIGHTS["eff"] * r["eff"] - 1e-12 <= r["total"] <= MAX_TOTAL + 1e-12
        # R_val is a mean of thirds; R_name a fraction of calls
        assert r["val"] * 3 * len(calls) == pytest.approx(round(r["val"] * 3 * len(calls)))
        assert r["name"] * len(calls) == pytest.approx(round(r["name"] * len(calls)))


# ------------------------------------------------------------------ typed records
@PROPERTY
@given(example_and_rollout(min_steps=0))
def test_typed_records_score_exactly_like_their_dicts(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    """The project passes typed Example / CallRecord / Rollout records; the public API also takes
    the contracts' dicts. Both read the same fields: every component is identical."""
    ex, calls = case
    typed = Example.from_dict(ex)
    records = [as_record(c) for c in calls]
    want = score(ex, calls)
    assert score(typed, records) == score(typed, calls) == score(ex, records) == want
    rollout = Rollout(example_id=typed.id, group_id=typed.id, sample_idx=0, kind=typed.kind,
                      n_gold_calls=typed.n_gold_calls, opening=0, tokens=np.zeros(0, np.int32),
                      loss_mask=np.zeros(0, bool), logprobs=np.zeros(0, np.float32),
                      sample_logprobs=np.zeros(0, np.float32), calls=tuple(records), parse_errors=(),
                      final_state=None, finish="done", n_assistant_turns=1, n_user_turns=1, failed=False)
    assert score_rollouts(typed, [rollout]) == score_rollouts(ex, [{"calls": calls}]) == [want]


# ------------------------------------------------------------------ gold is optimal
@PROPERTY
@given(example_and_rollout())
def test_gold_trajectory_scores_the_maximum(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    ex, calls = case
    best = score(ex, gold_as_calls(ex))
    assert best["val"] == 1.0 and best["cov"] == 1.0 and best["name"] == 1.0 and best["arg"] == 1.0
    assert best["eff"] == 0.0
    assert best["total"] == pytest.approx(MAX_TOTAL)
    assert score(ex, calls)["total"] <= best["total"] + 1e-12


@PROPERTY
@given(st.data())
def test_adding_a_call_to_the_gold_trajectory_never_raises_total(data: st.DataObject) -> None:
    ex = data.draw(examples())
    gold = gold_as_calls(ex)
    base = score(ex, gold)["total"]
    for _ in range(3):  # add up to three unneeded calls, one at a time
        gold.insert(data.draw(st.integers(0, len(gold))), data.draw(model_call(ex)))
        total = score(ex, gold)["total"]
        assert total <= base + 1e-12


@PROPERTY
@given(st.data())
def test_adding_an_offtask_call_no_more_valid_than_average_never_raises_total(data: st.DataObject) -> None:
    """The general form that holds for the paper's formula (see the counterexample below)."""
    ex, calls = data.draw(example_and_rollout(min_steps=0))
    before = score(ex, calls)
    # Off-task calls of known validity level: 0 unknown tool, 1 wrong type, 2 not executed, 3 full.
    options = [call(UNKNOWN, {"q": "x"}), call(OFFTASK, {"q": 1}), call(OFFTASK, {"q": "x"}, executed_ok=False),
               call(OFFTASK, {"q": "x"})]
    max_level = math.floor(3 * before["val"] + 1e-9)
    extra = data.draw(st.sampled_from(options[: max_level + 1]))
    after = score(ex, [*calls[: (i := data.draw(st.integers(0, len(calls))))], extra, *calls[i:]])
    assert after["total"] <= before["total"] + 1e-12
    assert after["cov"] == pytest.approx(before["cov"]) and after["arg"] == pytest.approx(before["arg"])


def test_documented_counterexample_valid_offtask_call_can_raise_validity() -> None:
    """Adding a fully valid off-task call to an all-invalid rollout raises R_val (paper formula).

    One gold call; the rollout is one call to an unknown tool (R_val 0, R_name 0). Adding a valid
    executed ``ping`` gives R_val = (0 + 3)/6 = 1/2 while R_name stays 0 and N = 2 = B: the total
    rises from 0 to 0.25. "Adding an unneeded call never raises the total" therefore holds only for
    calls no more valid than the rollout's average (the property above) or on top of the gold.
    """
    ex = example([[step(1, [gcall("search", query="q")])]], tools=SMALL_TOOLS)
    before = score(ex, [call("nope")])
    after = score(ex, [call("nope"), call("ping")])
    assert before["total"] == 0.0
    assert after["val"] == pytest.approx(0.5) and after["total"] == pytest.approx(0.25)


# ------------------------------------------------------------------ order invariance
def topo_order(data: st.DataObject, ex: dict[str, Any]) -> list[dict[str, Any]]:
    """A random linear extension of the gold steps' dependency order."""
    steps = [s for t in ex["turns"] for s in t["gold"]]
    priority = data.draw(st.permutations(range(len(steps))))
    done: set[int] = set()
    order: list[dict[str, Any]] = []
    while len(order) < len(steps):
        ready = [i for i, s in enumerate(steps) if i not in done and set(s["depends_on"]) <= {steps[j]["step"] for j in done}]
        pick = min(ready, key=lambda i: priority[i])
        done.add(pick)
        order.append(steps[pick])
    return order


def blocks(data: st.DataObject, order: list[dict[str, Any]], kept: set[int]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for s in order:
        if s["step"] in kept:
            out.extend(call(c["name"], copy.deepcopy(c["arguments"])) for c in data.draw(st.permutations(s["calls"])))
    return out


def with_noise(data: st.DataObject, calls: list[dict[str, Any]], noise: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = list(calls)
    for n in noise:
        out.insert(data.draw(st.integers(0, len(out))), n)
    return out


@PROPERTY
@given(st.data())
def test_permuting_independent_steps_keeps_coverage(data: st.DataObject) -> None:
    ex = data.draw(examples(unique_names=True))
    steps = [s for t in ex["turns"] for s in t["gold"]]
    kept = set(data.draw(st.lists(st.sampled_from([s["step"] for s in steps]), unique=True)))
    noise = data.draw(st.lists(st.sampled_from([call(UNKNOWN, {"ref": "r0"}), call(OFFTASK, {"q": "x"}),
                                                {"name": NAMES[0], "arguments": None, "executed_ok": True}]),
                               max_size=3))
    first = with_noise(data, blocks(data, topo_order(data, ex), kept), noise)
    second = with_noise(data, blocks(data, topo_order(data, ex), kept), noise)
    cov_a = score(ex, first)["cov"]
    cov_b = score(ex, second)["cov"]
    assert cov_a == cov_b
    # Independent oracle: a kept step scores iff all its direct prerequisites were kept too.
    expected = sum(1 for s in steps if s["step"] in kept and set(s["depends_on"]) <= kept) / len(steps)
    assert cov_a == pytest.approx(expected)


@PROPERTY
@given(st.data())
def test_coverage_of_any_call_order_matches_the_definition(data: st.DataObject) -> None:
    """Unique tool names make the alignment trivial, so Eq. 1 can be evaluated directly here."""
    ex = data.draw(examples(unique_names=True))
    steps = [s for t in ex["turns"] for s in t["gold"]]
    gold = [c for s in steps for c in s["calls"]]
    order = data.draw(st.permutations(range(len(gold))))  # any order...
    present = order[: len(order) - data.draw(st.integers(0, min(2, len(order))))]  # ...minus a few calls
    calls = [call(gold[i]["name"], copy.deepcopy(gold[i]["arguments"])) for i in present]
    position = {gold[i]["name"]: p for p, i in enumerate(present)}
    by_id = {s["step"]: [position.get(c["name"]) for c in s["calls"]] for s in steps}

    def matched(sid: int) -> bool:
        return all(p is not None for p in by_id[sid])

    hits = 0
    for s in steps:
        sid = s["step"]
        if matched(sid) and all(matched(j) and max(by_id[j]) < min(by_id[sid]) for j in s["depends_on"]):
            hits += 1
    assert score(ex, calls)["cov"] == pytest.approx(hits / len(steps))


@PROPERTY
@given(st.data())
def test_any_dependency_respecting_order_of_gold_has_full_coverage(data: st.DataObject) -> None:
    ex = data.draw(examples())  # shared tool names: alignment must still find each exact copy
    steps = {s["step"] for t in ex["turns"] for s in t["gold"]}
    r = score(ex, blocks(data, topo_order(data, ex), steps))
    assert r["cov"] == 1.0 and r["arg"] == 1.0


# ------------------------------------------------------------------ batch API
@settings(max_examples=40, deadline=None)
@given(st.data())
def test_group_scores_equal_single_scores(data: st.DataObject) -> None:
    ex = data.draw(examples(min_steps=0))
    group = data.draw(st.lists(st.lists(model_call(ex), max_size=8), min_size=1, max_size=5))
    assert score_group(ex, group) == [score(ex, calls) for calls in group]
