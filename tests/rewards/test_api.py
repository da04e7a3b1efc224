"""Config, variants, registry, batch API, group normalisation, final-state term, robustness."""

from __future__ import annotations

import ast
import json
import math
import statistics
from pathlib import Path
from typing import Any

import pytest
from reward_builders import call, example, gcall, gold_as_calls, step

import prove_jax.rewards as rewards
from prove_jax.rewards import (
    REGISTRY,
    VARIANTS,
    RewardConfig,
    prepare,
    score,
    score_group,
    score_rollouts,
    state_agreement,
    variant,
)

approx = pytest.approx


def chain_example() -> dict[str, Any]:
    return example([[step(1, [gcall("search", query="q")]), step(2, [gcall("get", id="a")], [1])],
                    [step(3, [gcall("pay", account="acc", amount=3)], [2])]])


def group_of_rollouts(ex: dict[str, Any]) -> list[list[dict[str, Any]]]:
    gold = gold_as_calls(ex)
    return [
        gold,
        gold[:2],
        [gold[1], gold[0], gold[2]],
        [call("get", {"id": "zz"}), call("nope")],
        [*gold, call("ping"), call("ping"), call("ping"), call("ping")],
        [],
    ]


# ------------------------------------------------------------------ config
def test_config_defaults_are_the_paper() -> None:
    cfg = RewardConfig()
    assert dict(cfg.weights) == {"val": 0.5, "cov": 0.5, "eff": 0.15, "name": 0.2, "arg": 0.1, "state": 0.5}
    assert cfg.alpha == 0.5 and cfg.beta == 0.5
    assert cfg.components == ("val", "cov", "eff", "name", "arg")
    assert not cfg.group_normalize


def test_config_from_dict_merges_and_rejects_typos() -> None:
    cfg = RewardConfig.from_dict({"weights": {"cov": 1.0}, "beta": 0, "disable": ["name"]})
    assert cfg.weights["cov"] == 1.0 and cfg.weights["val"] == 0.5
    assert cfg.beta == 0.0 and "name" not in cfg.components
    assert RewardConfig.from_dict(cfg.to_dict()) == cfg
    assert hash(RewardConfig.from_dict(cfg.to_dict())) == hash(cfg)
    assert len({RewardConfig(), RewardConfig(), variant("flat_budget")}) == 2
    assert RewardConfig.from_dict(None) == RewardConfig()
    with pytest.raises(ValueError, match="unknown reward config key"):
        RewardConfig.from_dict({"wieghts": {}})
    with pytest.raises(ValueError, match="no weight"):
        RewardConfig(components=("val", "custom_thing"))
    with pytest.raises(ValueError):
        RewardConfig(alpha=-1)
    with_state = RewardConfig.from_dict({"variant": "paper", "final_state": True})
    assert "state" in with_state.components


@pytest.mark.parametrize("name", ["val", "cov", "eff", "name", "arg"])
def test_component_off_removes_exactly_its_term(name: str) -> None:
    ex = chain_example()
    calls = group_of_rollouts(ex)[4]
    full = score(ex, calls)
    off = score(ex, calls, variant(f"no_{name}"))
    assert off["total"] == approx(full["total"] - RewardConfig().weights[name] * full[name])
    assert off[name] == approx(full[name])  # still reported for plots


def test_recall_only_and_flat_budget_variants() -> None:
    ex = chain_example()
    for calls in group_of_rollouts(ex):
        r = score(ex, calls, variant("recall_only"))
        assert r["total"] == approx(r["cov"])
    calls = [*gold_as_calls(ex), call("ping")]  # N = 4, n_gt = 3
    assert score(ex, calls)["eff"] == 0.0  # B = 3 + 2
    assert score(ex, calls, VARIANTS["flat_budget"])["eff"] == approx(-0.5 / 3)


def test_unknown_variant_and_component() -> None:
    with pytest.raises(KeyError, match="unknown reward variant"):
        variant("nope")
    with pytest.raises(KeyError, match="unknown reward component"):
        REGISTRY.get("nope")


def test_registry_custom_component_by_name() -> None:
    def r_short(plan: Any, ep: Any, cfg: Any) -> float:
        return 1.0 if ep.n_calls <= plan.n_gt else 0.0

    REGISTRY.register("short_test", r_short)
    try:
        with pytest.raises(ValueError, match="already registered"):
            REGISTRY.register("short_test", r_short)
        cfg = RewardConfig.from_dict({"components": ["cov", "short_test"], "weights": {"short_test": 2.0}})
        ex = chain_example()
        r = score(ex, gold_as_calls(ex), cfg)
        assert r["short_test"] == 1.0
        assert r["total"] == approx(0.5 * 1.0 + 2.0 * 1.0)
        r_long = score(ex, [*gold_as_calls(ex), call("ping")], cfg)
        assert r_long["total"] == approx(0.5 * 1.0)
    finally:
        REGISTRY.unregister("short_test")


# ------------------------------------------------------------------ batch API
def test_group_equals_per_rollout_scores() -> None:
    ex = chain_example()
    group = group_of_rollouts(ex)
    batch = score_group(ex, group)
    assert batch == [score(ex, calls) for calls in group]
    rollouts = [{"calls": c, "example_id": ex["id"]} for c in group]
    assert score_rollouts(ex, rollouts) == batch
    assert score(ex, iter(group[0])) == batch[0]  # an iterator of calls is materialised


def test_group_normalisation_gdpo() -> None:
    ex = chain_example()
    group = group_of_rollouts(ex)
    raw = score_group(ex, group)
    norm = score_group(ex, group, variant("gdpo"))
    weights = RewardConfig().weights
    for name in ("val", "cov", "eff", "name", "arg"):
        assert [r[name] for r in norm] == [r[name] for r in raw]  # components stay raw
    expected = [0.0] * len(group)
    for name in ("val", "cov", "eff", "name", "arg"):
        values = [r[name] for r in raw]
        mean, std = statistics.fmean(values), statistics.pstdev(values)
        for i, v in enumerate(values):
            expected[i] += weights[name] * (v - mean) / (std + 1e-6)
    assert [r["total"] for r in norm] == approx(expected)
    assert [r["total_raw"] for r in norm] == approx([r["total"] for r in raw])
    assert sum(r["total"] for r in norm) == approx(0.0, abs=1e-9)
    # identical rollouts: every component is constant, so every normalised total is 0
    same = score_group(ex, [gold_as_calls(ex)] * 4, variant("gdpo"))
    assert all(r["total"] == approx(0.0, abs=1e-12) for r in same)


def test_group_normalisation_abstention_group() -> None:
    ex = example([[]], kind="abstention")
    res = score_group(ex, [[], [call("ping")], [], []], variant("gdpo"))
    totals = [r["total"] for r in res]
    assert totals[0] > 0 > totals[1]
    assert sum(totals) == approx(0.0, abs=1e-9)


# ------------------------------------------------------------------ final-state term
def test_state_agreement_measure() -> None:
    gold = {"bank": {"accounts": {"a": 10}, "log": [1, 2]}, "shop": {"cart": []}}
    assert state_agreement(gold, json.loads(json.dumps(gold))) == 1.0
    # bank: accounts differs, log agrees; shop: cart agrees → 2 of 3 entries
    ours = {"bank": {"accounts": {"a": 7}, "log": [1.0, 2.0]}, "shop": json.dumps({"cart": []})}
    assert state_agreement(ours, gold) == approx(2 / 3)
    # a server missing on one side counts all its entries as disagreements
    assert state_agreement({"bank": gold["bank"]}, gold) == approx(2 / 3)
    assert state_agreement({"bank": {"x": 1}}, {"bank": {"y": 1}}) == 0.0
    assert state_agreement({}, {}) == 1.0
    assert state_agreement(None, gold) == 0.0


def test_final_state_term_in_total() -> None:
    ex = chain_example()
    calls = gold_as_calls(ex)
    gold_state = {"bank": {"a": 1, "b": 2}}
    off = score(ex, calls, final_state={"bank": {"a": 1, "b": 3}}, gold_final_state=gold_state)
    assert off["state"] == approx(0.5) and off["total"] == approx(1.3)  # reported, not summed (default)
    on = score(ex, calls, variant("final_state"), final_state={"bank": {"a": 1, "b": 3}},
               gold_final_state=gold_state)
    assert on["total"] == approx(1.3 + 0.5 * 0.5)
    group = score_group(ex, [calls, calls], variant("final_state"),
                        final_states=[gold_state, None], gold_final_state=gold_state)
    assert [r["state"] for r in group] == [1.0, 0.0]
    assert "state" not in score(ex, calls)
    with pytest.raises(ValueError, match="final_states"):
        score_group(ex, [calls], final_states=[])


# ------------------------------------------------------------------ robustness
GARBAGE_CALLS: list[Any] = [
    None,
    "search",
    {},
    {"name": None},
    {"name": ["search"], "arguments": {}},
    {"name": {"x": 1}, "arguments": {}},
    {"name": "search"},
    {"name": "search", "arguments": None},
    {"name": "search", "arguments": '{"query": '},
    {"name": "get", "arguments": {"id": {"nested": [1, {"deep": None}]}}, "executed_ok": None},
    {"name": "pay", "arguments": {"account": "a", "amount": float("nan")}, "executed_ok": True},
]


@pytest.mark.parametrize(
    "ex",
    [
        chain_example(),
        example([[]], kind="weird-kind"),
        {"id": "bare"},
        {"id": "odd", "tools": None, "turns": None},
        {"tools": [None, 3, {"function": {"name": 5}}, {"name": "flat", "inputSchema": {"required": ["a"]}}],
         "turns": [None, {"gold": None}, {"gold": [None, {"calls": None}, {"step": 9, "calls": [None, {"name": "flat"}],
                                                                           "depends_on": "x"}]}]},
    ],
)
def test_malformed_inputs_never_raise(ex: dict[str, Any]) -> None:
    r = score(ex, GARBAGE_CALLS)
    for key in ("val", "cov", "name", "arg"):
        assert 0.0 <= r[key] <= 1.0
    assert r["eff"] <= 0.0
    assert math.isfinite(r["total"])
    score(ex, None)  # type: ignore[arg-type]
    score_group(ex, [GARBAGE_CALLS, []], variant("gdpo"))


def test_flat_tool_schema_and_unknown_deps() -> None:
    ex = {"tools": [{"name": "flat", "inputSchema": {"type": "object", "required": ["a"]}}],
          "turns": [{"gold": [{"step": 1, "calls": [{"name": "flat", "arguments": {"a": 1}}], "depends_on": [99]}]}]}
    r = score(ex, [call("flat", {"a": 1})])
    assert r["val"] == 1.0 and r["cov"] == 1.0  # unknown prerequisite id is ignored
    assert score(ex, [call("flat", {"b": 1})])["val"] == approx(1 / 3)


def test_plan_cache_is_by_identity() -> None:
    ex = chain_example()
    assert prepare(ex) is prepare(ex)
    twin = chain_example()  # same id, different object
    assert prepare(twin) is not prepare(ex)
    assert prepare(prepare(ex)) is prepare(ex)
    rewards.clear_cache()
    assert prepare(ex, cache=False) is not prepare(ex, cache=False)


def test_rewards_package_is_pure() -> None:
    """Layering: only stdlib, prove_jax.rewards and the typed records (themselves stdlib + numpy)
    imports; no file or network I/O calls."""
    pkg = Path(rewards.__file__).parent
    records = pkg.parent / "records.py"
    forbidden_calls = {"open", "print", "input"}
    for node in ast.walk(ast.parse(records.read_text())):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            assert all(n.split(".")[0] in {"__future__", "collections", "dataclasses", "typing", "numpy"}
                       for n in names), names
    for path in pkg.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("prove_jax"):
                assert node.module.startswith("prove_jax.rewards") or node.module == "prove_jax.records", (
                    path.name, node.module)
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                for name in names:
                    root = name.split(".")[0]
                    assert root in {"__future__", "collections", "dataclasses", "json", "math", "types",
                                    "typing", "prove_jax"}, (path.name, name)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in forbidden_calls, (path.name, node.func.id)
