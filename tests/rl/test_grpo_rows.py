"""From scored rollouts to GRPO rows: failed episodes out, constant groups dropped, GDPO totals."""

from __future__ import annotations

import numpy as np
import pytest

from prove_jax.records import CallRecord, Example, Rollout
from prove_jax.rewards import RewardConfig, score
from prove_jax.rl.advantages import ADVANTAGES
from prove_jax.rl.grpo import GRPOConfig, rollouts_to_rows
from tests.rl.rl_testlib import call_record, crafted_rollout

TOOLS = [{"type": "function", "function": {"name": n, "description": "d", "parameters": {
    "type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}}} for n in ("get", "put")]


def example(ex_id: str) -> Example:
    return Example.from_dict({
        "id": ex_id, "kind": "conversation", "servers": ["x"], "seed": 0, "tools": TOOLS, "system": "",
        "turns": [{"user": "u", "gold": [{"step": 0, "calls": [{"name": "get", "arguments": {"id": "A"}}],
                                          "depends_on": []}], "reply": "r"}],
        "complexity": {"n_calls": 1, "n_steps": 1, "n_turns": 1, "n_servers": 1}})


def rollout(ex_id: str, k: int, calls: list[CallRecord], failed: bool = False) -> Rollout:
    return crafted_rollout(ex_id, calls, length=20 + k, sample_idx=k, failed=failed,
                           finish="env_failed" if failed else "done")


def call(name: str, ok: bool = True, arg: str = "A") -> CallRecord:
    return call_record(name, {"id": arg}, executed_ok=ok)


def test_failed_episodes_are_excluded_and_counted_constant_groups_dropped() -> None:
    exs = [example("e1"), example("e2")]
    ros = [rollout("e1", 0, [call("get")]), rollout("e1", 1, []), rollout("e1", 2, [call("put", ok=False)]),
           rollout("e1", 3, [call("get")], failed=True),
           rollout("e2", 0, []), rollout("e2", 1, [])]  # constant (all zero)
    rows, stats = rollouts_to_rows(exs, ros, RewardConfig(), GRPOConfig(group_size=4))
    assert stats["failed_episodes"] == 1 and stats["constant_groups"] == 1 and stats["groups"] == 2
    assert len(rows) == 3 and stats["rows"] == 3
    want = ADVANTAGES.get("grpo")(np.array([score(exs[0], c)["total"] for c in ([call("get")], [], [call("put", ok=False)])]))
    np.testing.assert_allclose([r.advantage for r in rows], want, rtol=1e-9)
    assert [len(r) for r in rows] == [20, 21, 22]  # the excluded failure (k=3) is not among them
    assert stats["calls_per_episode"] == pytest.approx(2 / 5)  # over the 5 episodes kept for statistics
    assert stats["tool_error_rate"] == pytest.approx(1 / 2)
    kept, _ = rollouts_to_rows(exs, ros, RewardConfig(), GRPOConfig(group_size=4, drop_constant_groups=False))
    assert len(kept) == 5 and [r.advantage for r in kept[3:]] == [0.0, 0.0]


def test_gdpo_advantages_come_from_per_component_normalised_totals() -> None:
    ex = example("e1")
    groups = [[call("get")], [call("get", arg="B")], [call("put")], [call("get"), call("get")]]
    ros = [rollout("e1", k, c) for k, c in enumerate(groups)]
    gdpo = RewardConfig(group_normalize=True)
    rows, stats = rollouts_to_rows([ex], ros, gdpo, GRPOConfig(group_size=4))
    plain, _ = rollouts_to_rows([ex], ros, RewardConfig(), GRPOConfig(group_size=4))
    from prove_jax.rewards import score_group

    totals = np.array([s["total"] for s in score_group(ex, groups, gdpo)])
    np.testing.assert_allclose([r.advantage for r in rows], ADVANTAGES.get("grpo")(totals), rtol=1e-9)
    assert not np.allclose([r.advantage for r in rows], [r.advantage for r in plain])
    raw = np.mean([score(ex, c)["total"] for c in groups])
    assert stats["reward"] == pytest.approx(raw)  # the logged reward stays the raw PROVE total


def test_rows_follow_the_runs_reward_not_the_papers() -> None:
    """Equal coverage, different validity (the second call failed on the server): equal rewards and
    advantages under ``recall_only``, different ones under the paper's reward."""
    from prove_jax.rewards import variant

    ex = example("e1")
    ros = [rollout("e1", 0, [call("get")]), rollout("e1", 1, [call("get", ok=False)]), rollout("e1", 2, [])]
    recall, stats = rollouts_to_rows([ex], ros, variant("recall_only"), GRPOConfig(group_size=3))
    paper, _ = rollouts_to_rows([ex], ros, RewardConfig(), GRPOConfig(group_size=3))
    np.testing.assert_allclose([r.advantage for r in recall], ADVANTAGES.get("grpo")(np.array([1.0, 1.0, 0.0])),
                               rtol=1e-12)
    assert recall[0].advantage == recall[1].advantage and paper[0].advantage > paper[1].advantage
    assert stats["reward"] == pytest.approx(2 / 3) and stats["reward/val"] < 1.0  # components still logged
