"""SFT on the synthesized Example records: gold trajectories replayed live, loss on assistant tokens.

Each Example's gold calls are played through the *same* episode driver the RL rollouts use, with
``ScriptedPolicy.gold`` as the policy, against the live MCP servers: the tool results in the
transcript are the servers' real answers and the ids are exactly what the model will see at
rollout time (token-exact; no re-rendering). Designed-failure gold calls (``expect_error``)
really fail on the server, so the model also learns the recovery that follows. The rows' loss
mask covers the assistant turns only (``Transcript.append_generated``), never tool results, user
turns or the system prompt. Used as the GRPO warm start and as the paper's SFT baseline.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Sequence
from typing import Any

import grain
import numpy as np

from prove_jax.chat import ChatTemplate, ChatTokenizer
from prove_jax.env import EpisodeConfig, MCPPool, ScriptedPolicy, run_episode
from prove_jax.loaders import AsList
from prove_jax.records import Example, Rollout
from prove_jax.rl.batch import Row, length_buckets, micro_batches
from prove_jax.rl.loop import StageRunner
from prove_jax.rl.step import OptimConfig, Trainer


@dataclasses.dataclass(frozen=True)
class SFTConfig:
    epochs: float = 3.0  # the paper's SFT baseline: 3 epochs
    max_steps: int | None = None  # stop earlier (a time-boxed warm start)
    rows_per_step: int = 16
    rows_per_micro: int = 4
    optim: OptimConfig = dataclasses.field(default_factory=lambda: OptimConfig(lr=2e-5, warmup_steps=10))

    def __post_init__(self) -> None:
        if self.epochs <= 0 or self.rows_per_step < 1 or self.rows_per_micro < 1:
            raise ValueError("epochs, rows_per_step and rows_per_micro must be positive")

    def steps(self, n_rows: int) -> int:
        n = max(1, int(np.ceil(self.epochs * n_rows / self.rows_per_step)))
        return min(n, self.max_steps) if self.max_steps is not None else n


async def gold_rollouts(examples: Sequence[Example], pool: MCPPool, template: ChatTemplate,
                        tokenizer: ChatTokenizer, config: EpisodeConfig, concurrency: int = 32) -> list[Rollout]:
    """Every example's gold trajectory as a Rollout record (examples without calls included:
    their reply/refusal is what the model must learn to say)."""
    sem = asyncio.Semaphore(concurrency)
    cfg = dataclasses.replace(config, snapshots=False)  # SFT reads transcripts only, never end states

    async def one(ex: Example) -> Rollout:
        async with sem:
            return await run_episode(ex, ScriptedPolicy.gold(ex, template, tokenizer), pool, template, tokenizer, cfg)

    return list(await asyncio.gather(*(one(ex) for ex in examples)))


def gold_rows(rollouts: Sequence[Rollout], max_tokens: int) -> tuple[list[Row], dict[str, int]]:
    """Training rows from gold rollouts; transcripts that failed or exceed ``max_tokens`` are
    left out and counted (a truncated gold transcript would teach an unfinished answer)."""
    rows: list[Row] = []
    dropped = {"failed": 0, "too_long": 0, "truncated": 0}
    for r in rollouts:
        if r.failed:
            dropped["failed"] += 1
        elif len(r.tokens) > max_tokens:
            dropped["too_long"] += 1
        elif r.finish != "done":
            dropped["truncated"] += 1
        else:
            rows.append(Row(np.asarray(r.tokens, np.int32), np.asarray(r.loss_mask, bool)))
    return rows, dropped


class _Pick:
    def __init__(self, rows: Sequence[Row]) -> None:
        self.rows = rows

    def __call__(self, i: int) -> Row:
        return self.rows[i]


def row_batches(rows: Sequence[Row], per_step: int, seed: int) -> grain.DatasetIterator:
    """Rows reshuffled every epoch, ``per_step`` at a time (a checkpointable Grain iterator)."""
    ds: Any = grain.MapDataset.range(len(rows)).shuffle(seed=seed).repeat(None).map(_Pick(rows))
    return iter(ds.batch(per_step, batch_fn=AsList()).to_iter_dataset())


def train_sft(trainer: Trainer, rows: Sequence[Row], cfg: SFTConfig, runner: StageRunner, *, seed: int,
              max_len: int) -> dict[str, Any]:
    """Run (or resume) SFT to ``cfg.steps(len(rows))`` steps; returns the stage summary.

    Rows longer than the largest bucket of ``max_len`` are left out up front and counted
    (``rows_dropped_long``): :func:`gold_rows` already drops them, but a caller's own rows must
    not crash a step halfway through the run. Dropped, not trimmed: a cut gold transcript would
    teach an unfinished answer.
    """
    buckets = length_buckets(max_len)
    n_in = len(rows)
    rows = [r for r in rows if len(r) <= buckets[-1]]
    if not rows:
        raise ValueError("no SFT rows: every gold transcript failed or was too long")
    total = cfg.steps(len(rows))
    data = row_batches(rows, cfg.rows_per_step, seed)
    start = runner.start(data)
    done = start
    for step in range(start, total):
        batch = next(data)
        t0 = time.perf_counter()
        mbs, plan = micro_batches(batch, cfg.rows_per_micro, buckets, fields=("tokens", "loss_mask"))
        metrics = trainer.step(mbs, trainer.denominators(plan.tokens, plan.seqs))
        dt = time.perf_counter() - t0
        tokens = sum(len(r) for r in batch)
        row = {**metrics, "epoch": (step + 1) * cfg.rows_per_step / len(rows), "target_tokens": plan.tokens,
               "tokens": tokens, "time/update": dt, "speed/tokens_per_s": tokens / dt,
               "padded_tokens": sum(int(m["tokens"].size) for m in mbs)}
        done = step + 1
        if runner.end_step(step, row, data_state=data.get_state(), postfix={"loss": metrics["loss"]}):
            break
    pngs = runner.finish(done, title="SFT")
    rows_logged = runner.metrics.rows
    return {"steps": done, "total_steps": total, "preempted": runner.preempted, "rows_dropped_long": n_in - len(rows),
            "final_loss": rows_logged[-1]["loss"] if rows_logged else None,
            "skipped_updates": int(trainer.state.skipped), "compiled_programs": trainer.compiled_programs(),
            "plots": [str(p) for p in pngs]}
