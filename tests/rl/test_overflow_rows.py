"""A rollout longer than the step's largest length bucket never crashes a GRPO (or SFT) step.

The reproduced failure: at the tiny default's 2,048-token cap a 2,085-token transcript reached
``micro_batches`` and ``bucket_of`` raised. The rollouts here are real: the episode driver plays
them against the in-process banking server (the cap lifted, as an older driver or another cap
would leave them), the transcripts are built by :class:`prove_jax.chat.Transcript`; the only
stand-in is the policy, which writes the gold calls and then a filler answer of exactly the
length that makes the transcript 2,085 tokens.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from prove_jax.chat import ChatTokenizer
from prove_jax.env import EpisodeConfig, MCPPool, ScriptedPolicy, run_episode
from prove_jax.env.episode import ScriptedTurn
from prove_jax.models import init_model
from prove_jax.records import Example, Rollout
from prove_jax.rewards import RewardConfig
from prove_jax.rl.batch import Row, length_buckets, micro_batches, trim_row
from prove_jax.rl.grpo import COUNTS, GRPOConfig, rollouts_to_rows
from prove_jax.rl.loop import StageRunner
from prove_jax.rl.objectives import SFTObjective
from prove_jax.rl.sft import SFTConfig, train_sft
from prove_jax.rl.step import OptimConfig, Trainer
from tests.engine import engine_testlib as lib
from tests.rl.rl_testlib import random_rows, tiny_config

CAP = 2048
LONG = 2085
UNCAPPED = EpisodeConfig(max_tokens=10**6)


class FillTo:
    """Replays ``scripted`` assistant turns first, then answers with one token repeated so the
    transcript ends at exactly ``total`` tokens (a model rambling to the budget)."""

    def __init__(self, scripted: ScriptedPolicy, n_scripted: int, total: int, filler: int, end: int) -> None:
        self.scripted, self.n, self.total, self.filler, self.end = scripted, n_scripted, total, filler, end

    async def generate(self, context: Sequence[int], *, max_new_tokens: int, stream: int) -> ScriptedTurn:
        if stream < self.n:
            return await self.scripted.generate(context, max_new_tokens=max_new_tokens, stream=stream)
        ids = [self.filler] * (self.total - len(context) - 1) + [self.end]
        lps = [-0.25] * len(ids)
        return ScriptedTurn(ids, lps, lps)


def runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """``(start, end)`` of every run of True (the assistant turns of a rollout)."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))


@pytest.fixture(scope="module")
def rollouts(live: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> tuple[Example, list[Rollout]]:
    tok: ChatTokenizer = lib.build_tokenizer(live, Path(tmp_path_factory.mktemp("tok")))
    tpl = lib.template()
    ex = lib.gold_examples(live)[2]  # one user turn: two parallel balance look-ups, then a reply
    filler, end = tok.encode("ok")[0], tok.token_id(tpl.end_of_turn)

    def policy(kind: str) -> Any:
        gold = ScriptedPolicy.gold(ex, tpl, tok)
        return {"trim": FillTo(gold, 1, LONG, filler, end), "drop": FillTo(gold, 0, LONG, filler, end),
                "gold": gold, "done": ScriptedPolicy([], tpl, tok)}[kind]

    async def go() -> list[Rollout]:
        async with MCPPool.from_spec(["banking"], "inprocess") as pool:
            return [await run_episode(ex, policy(k), pool, tpl, tok, UNCAPPED, sample_idx=i)
                    for i, k in enumerate(("trim", "drop", "gold", "done"))]

    return ex, asyncio.run(go())


def test_overlong_rollouts_are_trimmed_or_dropped_and_counted_then_batched(rollouts) -> None:
    ex, ros = rollouts
    trim, drop, gold, _ = ros
    assert len(trim.tokens) == len(drop.tokens) == LONG > CAP
    assert len(gold.tokens) < CAP and trim.calls and all(c.executed_ok for c in trim.calls)
    cfg = GRPOConfig(group_size=4, rows_per_micro=2)
    untrimmed, _ = rollouts_to_rows([ex], ros, RewardConfig(), cfg)
    with pytest.raises(ValueError, match="exceeds the largest bucket"):  # the crash this guards against
        micro_batches(untrimmed, cfg.rows_per_micro, length_buckets(CAP))

    rows, stats = rollouts_to_rows([ex], ros, RewardConfig(), cfg, max_len=CAP)
    assert stats["rows_trimmed"] == 1 and stats["rows_dropped_long"] == 1 and stats["rows"] == 3 == len(rows)
    assert {"rows_trimmed", "rows_dropped_long"} <= set(COUNTS)  # summed over processes
    # the trimmed row ends right after the last assistant turn that fits: the call turn
    (_, call_end), (filler_start, filler_end) = runs(trim.loss_mask)
    assert filler_start < CAP < filler_end == LONG
    row = next(r for r in rows if len(r) == call_end)
    np.testing.assert_array_equal(row.tokens, trim.tokens[:call_end])
    np.testing.assert_array_equal(row.loss_mask, trim.loss_mask[:call_end])
    np.testing.assert_array_equal(row.sample_logprobs, trim.sample_logprobs[:call_end])
    assert row.loss_mask[-1] and row.advantage == untrimmed[0].advantage != 0.0
    assert sorted(len(r) for r in rows) == sorted([call_end, len(gold.tokens), len(ros[3].tokens)])

    mbs, plan = micro_batches(rows, cfg.rows_per_micro, length_buckets(CAP))
    assert plan.tokens == sum(r.target_tokens for r in rows) and plan.seqs == 3
    assert all(mb["tokens"].shape[1] <= CAP for mb in mbs)
    assert sum(int(mb["loss_mask"].sum()) for mb in mbs) == sum(int(r.loss_mask.sum()) for r in rows)


def test_trim_keeps_a_turn_that_ends_exactly_at_the_limit() -> None:
    mask = np.zeros(20, bool)
    mask[3:6] = mask[8:12] = mask[15:19] = True
    row = Row(np.arange(20, dtype=np.int32), mask, np.where(mask, -0.5, 0.0).astype(np.float32), 1.5)
    assert trim_row(row, 20) is row
    assert len(trim_row(row, 12)) == 12 and len(trim_row(row, 11)) == 6 and len(trim_row(row, 17)) == 12
    assert trim_row(row, 5) is None


def test_sft_leaves_out_rows_longer_than_its_buckets_instead_of_crashing(tmp_path: Path) -> None:
    """SFT drops (never trims: a cut gold transcript teaches an unfinished answer) rows its
    buckets cannot hold, counts them, and trains on the rest."""
    rows = random_rows(3, seed=0, lengths=(40, 120)) + random_rows(1, seed=1, lengths=(300, 301))
    with pytest.raises(ValueError, match="exceeds the largest bucket"):
        micro_batches(rows, 2, length_buckets(128))
    trainer = Trainer(init_model(tiny_config(), seed=0), OptimConfig(lr=1e-3), SFTObjective())
    runner = StageRunner("sft", tmp_path / "sft", trainer, 1, progress=False)
    summary = train_sft(trainer, rows, SFTConfig(max_steps=1, rows_per_step=3, rows_per_micro=3), runner, seed=0,
                        max_len=128)
    assert summary["steps"] == 1 and summary["rows_dropped_long"] == 1 and summary["skipped_updates"] == 0
    assert np.isfinite(summary["final_loss"])
