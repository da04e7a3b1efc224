"""From scored rollouts to GRPO rows: failed episodes out, constant groups dropped, GDPO totals."""

from __future__ import annotations

import numpy as np
import pytest

from prove_jax.records import CallRecord, Example, Rollout
from prove_jax.rewards import RewardConfig, score
from prove_jax.rl.advantages import ADVANTAGES
from prove_jax.rl.grpo import COUNTS, GRPOConfig, rollouts_to_rows
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


def capped(ex_id: str, k: int, calls: list[CallRecord], length: int, finish: str = "done") -> Rollout:
    return crafted_rollout(ex_id, calls, length=length, sample_idx=k, finish=finish)


def test_overlong_filter_drops_truncated_rows_but_keeps_them_in_the_group_baseline() -> None:
    """recall_only rewards [1, 0, 1, 0]; the third episode was cut off by the cap."""
    from prove_jax.rewards import variant

    ex = example("e1")
    ros = [capped("e1", 0, [call("get")], 20), capped("e1", 1, [], 21),
           capped("e1", 2, [call("get")], 22, "token_cap"), capped("e1", 3, [], 23)]
    cfg = GRPOConfig(group_size=4, advantage="dr_grpo", overlong="filter")
    rows, stats = rollouts_to_rows([ex], ros, variant("recall_only"), cfg)
    # the group mean is 1/2 over all four (the truncated one included): advantages +-1/2;
    # without it the mean would be 1/3 and the kept advantages [2/3, -1/3, -1/3]
    assert [len(r) for r in rows] == [20, 21, 23]
    np.testing.assert_allclose([r.advantage for r in rows], [0.5, -0.5, -0.5], atol=1e-12)
    assert stats["overlong_filtered"] == 1 and stats["rows"] == 3 and stats["overlong_penalized"] == 0
    assert stats["reward"] == pytest.approx(0.5)  # every scored episode still counts in the logged reward
    plain, plain_stats = rollouts_to_rows([ex], ros, variant("recall_only"), GRPOConfig(group_size=4, advantage="dr_grpo"))
    assert [len(r) for r in plain] == [20, 21, 22, 23] and plain_stats["overlong_filtered"] == 0
    assert {"overlong_filtered", "overlong_penalized"} <= set(COUNTS)  # summed over processes


def test_soft_overlong_penalty_ramps_over_the_buffer_and_is_full_when_cut_off() -> None:
    """L_max = 30, L_cache = 8 (the ramp starts at 22), penalty 0.5; four equal-reward episodes."""
    ex = example("e1")
    ros = [capped("e1", 0, [call("get")], 22), capped("e1", 1, [call("get")], 24),
           capped("e1", 2, [call("get")], 28), capped("e1", 3, [call("get")], 25, "token_cap")]
    cfg = GRPOConfig(group_size=4, advantage="dr_grpo", overlong="soft_penalty", overlong_buffer=8,
                     overlong_penalty=0.5)
    rows, stats = rollouts_to_rows([ex], ros, RewardConfig(), cfg, max_len=30)
    # penalties: 22 -> 0 (at the ramp's start); 24 -> (22 - 24) / 8 * 0.5 = -0.125; 28 -> -6/8 * 0.5 = -0.375;
    # 25 but cut off by the cap -> the full -0.5 (by length alone it would be -0.1875).
    # Equal rewards, so dr_grpo's advantages are the penalties minus their mean -0.25:
    np.testing.assert_allclose([r.advantage for r in rows], [0.25, 0.125, -0.125, -0.25], atol=1e-12)
    assert stats["overlong_penalized"] == 3 and stats["constant_groups"] == 0
    raw = score(ex, [call("get")])["total"]
    assert stats["reward"] == pytest.approx(raw)  # the logged reward is the unpenalised one
    # without the penalty the group is constant and dropped: the penalty is what made the signal
    none_rows, none_stats = rollouts_to_rows([ex], ros, RewardConfig(), GRPOConfig(group_size=4), max_len=30)
    assert none_rows == [] and none_stats["constant_groups"] == 1 and none_stats["overlong_penalized"] == 0


def test_soft_overlong_penalty_needs_a_cap_longer_than_its_buffer() -> None:
    ex = example("e1")
    ros = [capped("e1", 0, [call("get")], 20), capped("e1", 1, [], 21)]
    cfg = GRPOConfig(group_size=2, overlong="soft_penalty", overlong_buffer=8)
    with pytest.raises(ValueError, match="max_len"):
        rollouts_to_rows([ex], ros, RewardConfig(), cfg)
    with pytest.raises(ValueError, match="overlong_buffer"):
        rollouts_to_rows([ex], ros, RewardConfig(), cfg, max_len=8)


def test_grpo_config_checks_the_new_knobs_at_load() -> None:
    with pytest.raises(ValueError, match="overlong"):
        GRPOConfig(overlong="truncate")
    with pytest.raises(ValueError, match="overlong_buffer"):
        GRPOConfig(overlong_buffer=0)
    with pytest.raises(ValueError, match="overlong_penalty"):
        GRPOConfig(overlong_penalty=-1.0)
    with pytest.raises(KeyError, match="reinforce_pp"):
        GRPOConfig(advantage="reinforce++")
    assert GRPOConfig(advantage="reinforce_pp").advantage == "reinforce_pp"


def test_reinforce_pp_rows_share_one_batch_std_across_groups() -> None:
    """recall_only rewards: e1 [1, 0, 0], e2 [1, 1, 0]."""
    from prove_jax.rewards import variant

    exs = [example("e1"), example("e2")]
    ros = [rollout("e1", 0, [call("get")]), rollout("e1", 1, []), rollout("e1", 2, []),
           rollout("e2", 0, [call("get")]), rollout("e2", 1, [call("get")]), rollout("e2", 2, [])]
    rows, _ = rollouts_to_rows(exs, ros, variant("recall_only"), GRPOConfig(group_size=3, advantage="reinforce_pp"))
    # centred: [2/3, -1/3, -1/3] and [1/3, 1/3, -2/3]; squares sum to 12/9 = 4/3; ddof=1 over 6 rows: var 4/15
    std = np.sqrt(4 / 15)
    np.testing.assert_allclose([r.advantage for r in rows], np.array([2, -1, -1, 1, 1, -2]) / 3 / std, rtol=1e-5)


def test_a_soft_overlong_buffer_not_below_the_cap_is_refused_at_start_up() -> None:
    from pathlib import Path

    from prove_jax.config import ConfigError, LaunchConfig, check, load

    tiny = str(Path(__file__).resolve().parents[2] / "configs/runs/tiny_cpu.yaml")  # max_tokens_limit 2048
    with pytest.raises(ConfigError, match=r"grpo\.overlong_buffer"):
        check(load(LaunchConfig, tiny, ["grpo.overlong=soft_penalty"]))
    check(load(LaunchConfig, tiny, ["grpo.overlong=soft_penalty", "grpo.overlong_buffer=512"]))


def test_grpo_summary_tells_what_each_step_did() -> None:
    """The stage summary's story (printed by the launcher beside the held-out figures): per-step
    train reward and calls per episode, and the group counts summed over steps."""
    from prove_jax.rl.grpo import _story

    rows = [{"reward": 0.125, "calls_per_episode": 2.0, "groups": 4.0, "constant_groups": 3.0, "no_update": 0.0,
             "resampled_prompts": 8.0},
            {"reward": 0.25, "calls_per_episode": 1.5, "groups": 4.0, "constant_groups": 4.0, "no_update": 1.0}]
    story = _story(rows)
    assert story == {"reward_curve": [0.125, 0.25], "calls_per_episode_curve": [2.0, 1.5], "groups": 8,
                     "constant_groups": 7, "no_update_steps": 1, "resampled_prompts": 8}
