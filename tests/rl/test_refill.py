"""Dynamic sampling: a step is refilled until it holds enough informative groups, and always stops."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from prove_jax.records import Example
from prove_jax.rewards import RewardConfig
from prove_jax.rl.dump import read_dump
from prove_jax.rl.grpo import GRPOConfig, rollouts_to_rows
from prove_jax.rl.refill import REFILL_COUNTS, informative_groups, refill
from tests.rl.rl_testlib import crafted_rollout
from tests.rl.test_grpo_rows import call, example

GROUP = 4


class Prompts:
    """A loader stand-in: batches of fresh examples ``p0, p1, ...`` (or the same ones: ``repeat``)."""

    def __init__(self, batch: int, repeat: bool = False) -> None:
        self.batch, self.repeat, self.drawn = batch, repeat, 0

    def __call__(self) -> list[Example]:
        assert self.drawn < 100, "the refill does not stop"
        first = 0 if self.repeat else self.drawn * self.batch
        self.drawn += 1
        return [example(f"p{first + i}") for i in range(self.batch)]


class Rollouts:
    """A generator stand-in: its first ``constant`` calls yield groups with all-equal rewards (no
    call anywhere), later ones reward spread (sample 0 makes the gold call)."""

    def __init__(self, constant: int) -> None:
        self.constant, self.calls, self.seen = constant, 0, []

    async def __call__(self, examples: list[Example]) -> dict[str, Any]:
        self.calls += 1
        self.seen.append([e.id for e in examples])
        spread = self.calls > self.constant
        ros = [crafted_rollout(e.id, [call("get")] if spread and k == 0 else [], sample_idx=k)
               for e in examples for k in range(GROUP)]
        return {"examples": examples, "rollouts": ros, "wall": 1.0, "device": 0.5, "generated": 7, "scored": {}}


def run(first_constant: int, *, target: int = 2, max_rounds: int = 4, draw: Prompts | None = None,
        first: list[Example] | None = None) -> tuple[dict[str, Any], Rollouts, Prompts]:
    gen, draw = Rollouts(first_constant), draw or Prompts(target)

    async def go() -> dict[str, Any]:
        batch = await gen(first if first is not None else draw())
        return await refill(batch, draw, gen, RewardConfig(), target=target, max_rounds=max_rounds)

    return asyncio.run(go()), gen, draw


def test_constant_groups_are_refilled_until_the_step_holds_enough_informative_ones() -> None:
    out, gen, draw = run(first_constant=2)  # the step's batch and refill round 1 constant, round 2 not
    info = out["refill"]
    assert gen.calls == 3 and draw.drawn == 3 and info.rounds == 2
    assert info.resampled == 4 and info.informative == 2 and not info.surplus and info.duplicates == 0
    assert [e.id for e in out["examples"]] == [f"p{i}" for i in range(6)]  # constant ones stay (counted)
    assert out["wall"] == 3.0 and out["device"] == 1.5 and out["generated"] == 21
    assert info.round_of == {"p0": 0, "p1": 0, "p2": 1, "p3": 1, "p4": 2, "p5": 2}
    rows, stats = rollouts_to_rows(out["examples"], out["rollouts"], RewardConfig(), GRPOConfig(group_size=GROUP))
    assert stats["groups"] == 6 and stats["constant_groups"] == 4 and len(rows) == 2 * GROUP
    assert set(out["scored"]) == set(out["rollouts"])  # every round's scores reach the dump
    assert info.metrics() == {"resampled_prompts": 4.0, "resampled_duplicates": 0.0, "refill_rounds": 2.0,
                              "informative_groups": 2.0, "surplus_groups": 0.0}
    assert set(info.metrics()) == set(REFILL_COUNTS)


def test_a_policy_that_only_yields_constant_groups_stops_after_max_refill_rounds() -> None:
    out, gen, draw = run(first_constant=10**9, max_rounds=3)
    info = out["refill"]
    assert info.rounds == 3 and gen.calls == 4 and draw.drawn == 4 and info.informative == 0
    assert len(out["examples"]) == 8
    out, gen, _ = run(first_constant=10**9, max_rounds=0)
    assert out["refill"].rounds == 0 and gen.calls == 1


def test_an_informative_step_draws_nothing_more() -> None:
    out, gen, draw = run(first_constant=0)
    assert gen.calls == 1 and draw.drawn == 1 and out["refill"].rounds == 0 and out["refill"].informative == 2


def test_informative_groups_beyond_the_target_are_set_aside() -> None:
    draw = Prompts(3)
    first = [example("a"), example("b")]
    out, _, _ = run(first_constant=1, target=2, draw=draw, first=first)  # a, b constant; p0..p2 informative
    info = out["refill"]
    assert info.rounds == 1 and info.informative == 2 and [e.id for e, _ in info.surplus] == ["p2"]
    assert [e.id for e in out["examples"]] == ["a", "b", "p0", "p1"]
    assert all(r.group_id != "p2" for r in out["rollouts"]) and len(info.surplus[0][1]) == GROUP
    rows, _ = rollouts_to_rows(out["examples"], out["rollouts"], RewardConfig(), GRPOConfig(group_size=GROUP))
    assert len(rows) == 2 * GROUP  # trains on at most `target` informative groups


def test_prompts_already_in_the_step_are_not_rolled_out_again() -> None:
    out, gen, draw = run(first_constant=10**9, max_rounds=2, draw=Prompts(2, repeat=True))
    info = out["refill"]
    assert info.rounds == 2 and draw.drawn == 3 and gen.calls == 1  # drawn (consumed) but not played
    assert info.duplicates == 4 and info.resampled == 0 and [e.id for e in out["examples"]] == ["p0", "p1"]


def test_informative_groups_are_the_ones_rollouts_to_rows_trains_on() -> None:
    from tests.rl.test_dump import step_batch

    exs, ros, _ = step_batch()
    rows, _ = rollouts_to_rows(exs, ros, RewardConfig(), GRPOConfig(group_size=4))
    assert informative_groups(exs, ros, RewardConfig()) == ["e1"] and len(rows) == 3


def test_refill_rounds_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="max_refill_rounds"):
        GRPOConfig(max_refill_rounds=-1)
    assert not GRPOConfig().dynamic_sampling


def _assert_loader_after(run: Path, cfg: Any, draws: int) -> None:
    """The GRPO checkpoint's loader state is a fresh loader's after ``draws`` prompt batches:
    resume continues after the last prompt a step (refills included) consumed."""
    from prove_jax.checkpoint import Checkpointer
    from prove_jax.loaders import prompt_batches

    fresh = prompt_batches(run / "data", cfg.data.train_split, 2, seed=cfg.seed, view=cfg.view)
    for _ in range(draws):
        next(fresh)
    ck = Checkpointer(run / "grpo" / "checkpoints")
    try:
        assert ck.read_meta()["data"] == fresh.get_state()
    finally:
        ck.close()


def test_a_dynamic_sampling_step_through_the_launcher(run_copy: Path) -> None:
    """One real step: the row reports the refill, the checkpoint's loader state is past every
    prompt the refills drew (a resume neither repeats nor skips them), the dump holds every group."""
    from prove_jax.config import LaunchConfig, load
    from prove_jax.inspect import main as inspect_main
    from prove_jax.launch import main
    from tests.rl.conftest import base_overrides

    overrides = [*base_overrides(run_copy), "stages=[grpo]", "grpo.prompts_per_step=2", f"grpo.group_size={GROUP}",
                 "grpo.rows_per_micro=4", "grpo.sampling.max_new_tokens=64", "grpo.steps=1",
                 "grpo.dynamic_sampling=true", "grpo.max_refill_rounds=2"]
    main(overrides)
    rows = [json.loads(x) for x in (run_copy / "grpo" / "metrics.jsonl").read_text().splitlines()]
    assert len(rows) == 1
    row = rows[0]
    assert set(REFILL_COUNTS) <= set(row), sorted(row)
    rounds, resampled = int(row["refill_rounds"]), int(row["resampled_prompts"])
    assert 0 <= rounds <= 2 and resampled + row["resampled_duplicates"] == 2 * rounds
    assert row["informative_groups"] == 2 or rounds == 2  # enough informative groups, or the bound
    groups = 2 + resampled - int(row["surplus_groups"])
    assert row["episodes"] == GROUP * groups

    cfg = load(LaunchConfig, None, overrides)
    _assert_loader_after(run_copy, cfg, draws=1 + rounds)

    path = run_copy / "grpo" / "rollouts" / "step_0.jsonl"
    lines = read_dump(path)
    assert len(lines) == GROUP * (2 + resampled) and {x.round for x in lines} <= set(range(rounds + 1))
    assert sum(x.group_status == "surplus" for x in lines) == GROUP * int(row["surplus_groups"])
    print(f"\nrollout dump: {path.stat().st_size} bytes for {len(lines)} rollouts "
          f"({path.stat().st_size / len(lines):.0f} B/rollout)")
    assert inspect_main([str(run_copy), "--step", "0"]) == 0


def test_dynamic_sampling_refills_the_overlapped_batches_of_async_rollouts(run_copy: Path) -> None:
    """One-step off-policy mode: step 1's batch (refills included) is drawn while step 0 updates;
    both rows report their refill and the checkpoint's loader state is past every draw."""
    from prove_jax.config import LaunchConfig, load
    from prove_jax.launch import main
    from tests.rl.conftest import base_overrides

    overrides = [*base_overrides(run_copy), "stages=[grpo]", "grpo.prompts_per_step=2", f"grpo.group_size={GROUP}",
                 "grpo.rows_per_micro=4", "grpo.sampling.max_new_tokens=64", "grpo.steps=2",
                 "grpo.async_rollouts=true", "grpo.dynamic_sampling=true", "grpo.max_refill_rounds=1"]
    main(overrides)
    rows = [json.loads(x) for x in (run_copy / "grpo" / "metrics.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(set(REFILL_COUNTS) <= set(r) for r in rows)
    assert all(r["episodes"] == GROUP * (2 + r["resampled_prompts"] - r["surplus_groups"]) for r in rows)
    cfg = load(LaunchConfig, None, overrides)
    _assert_loader_after(run_copy, cfg, draws=2 + int(sum(r["refill_rounds"] for r in rows)))
    assert [len(read_dump(run_copy / "grpo" / "rollouts" / f"step_{s}.jsonl")) for s in (0, 1)] == \
           [GROUP * (2 + int(r["resampled_prompts"])) for r in rows]
