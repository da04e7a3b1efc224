"""The GRPO loop: prompts -> live multi-turn rollouts -> rewards -> advantages -> update -> new params.

One step (synchronous mode):

1. the next prompt batch comes from the Grain loader (its state is in every checkpoint);
2. ``run_rollouts`` plays ``group_size`` episodes of each prompt concurrently through the engine
   and the MCP pool (sampling seeds derived from ``(seed, step, example, sample)``);
3. episodes whose server died or timed out (``failed``) are excluded and counted; the rest are
   scored per group with the run's reward config (``score_rollouts``, the scoring the in-domain
   eval uses too; GDPO normalisation happens there) and turned into advantages
   (``rl.advantages``); constant groups are dropped or kept. The episodes snapshot the servers'
   end state only when that config has the ``state`` term (:func:`rollout_episode`);
4. rows are bucketed into micro-batches (Grain) and the train step applies one optimizer update
   (or ``mini_batches x ppo_epochs`` of them against a recomputed pi_old: :mod:`prove_jax.rl.ppo`);
5. the engine gets the new params (``GRPOContext.sync_engine``): the trainer's own buffers when
   the engine shares its dtype and layout, else ``engine.weights.WeightSync``'s on-device cast +
   reshard (bf16 engine, one engine per process on several hosts). The engine's KV cache and
   slot state are released during the update and re-created at the next rollout.

**One-step off-policy mode** (``async_rollouts``): while step ``t``'s update runs (in a worker
thread; JAX releases the GIL while the device computes), step ``t+1``'s rollouts are generated
with the params before that update, from a device copy the engine owns (the update donates its
input buffers). Staleness is bounded by one step; the importance ratio is against the sampled
distribution, and ``loss.tis_cap`` turns on the truncated-IS correction. A resumed async run
regenerates its first batch with the restored params (the in-flight batch is not checkpointed).

**Dynamic sampling** (``dynamic_sampling``, DAPO): a step with fewer than ``prompts_per_step``
informative groups draws more prompts from the loader and rolls them out, at most
``max_refill_rounds`` times (``rl.refill``; the row gains ``resampled_prompts``,
``refill_rounds``, ``informative_groups``). **Rollout dumps** (``dump_rollouts``): every step's
transcripts, calls, rewards and advantages go to ``rollouts/step_<N>.jsonl`` beside the metrics
(``rl.dump``; read them with ``python -m prove_jax.inspect RUN --step N``).

Each step's metrics row holds the reward and its components, loss terms, lengths, calls per
episode, tool error rate, skipped/failed counts and the time split: ``time/rollout_device``
(the engine's busy device time), ``time/host`` (the rest of the rollout phase: tool calls,
parsing, tokenisation, scheduling, plus reward/advantage/batching), ``time/update``, and the
weight transfer: ``time/weight_sync`` and ``weight_sync_bytes`` (engine-side bytes; 0 zero-copy).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from prove_jax.chat import ChatTemplate, ChatTokenizer
from prove_jax.engine import Engine, SamplingConfig
from prove_jax.engine.weights import WeightSync
from prove_jax.env import EpisodeConfig, MCPPool, run_rollouts
from prove_jax.records import Example, Rollout
from prove_jax.rewards import PAPER_COMPONENTS, RewardConfig, score_rollouts
from prove_jax.rl.advantages import check_estimator, group_advantages
from prove_jax.rl.batch import Row, length_buckets, trim_row
from prove_jax.rl.dump import RolloutDumper, RolloutScore, rollout_dumper
from prove_jax.rl.loop import StageRunner
from prove_jax.rl.losses import LossConfig
from prove_jax.rl.ppo import ppo_updates, summarise
from prove_jax.rl.refill import REFILL_COUNTS, refill
from prove_jax.rl.step import OptimConfig, Trainer

COMPONENTS = (*PAPER_COMPONENTS, "abstain")
"""Reward terms logged per step (``reward/<term>``): the paper's five, the abstention term (the
whole reward of a no-call example, so part of the total), and ``state`` when a run scores it."""


OVERLONG = ("none", "filter", "soft_penalty")
"""How episodes cut off by the transcript cap are treated (``GRPOConfig.overlong``)."""


@dataclasses.dataclass(frozen=True)
class GRPOConfig:
    """The GRPO recipe (paper §4: 16 prompts x 16 samples, KL 0.01, 350 steps)."""

    steps: int = 350
    prompts_per_step: int = 16
    group_size: int = 16
    rows_per_micro: int = 8
    # PPO updates per rollout batch (verl's ppo_epochs / ppo_mini_batch_size; rl.ppo): rows split
    # into mini_batches optimizer steps, repeated ppo_epochs times; > 1 update needs pi_old
    # recomputed by the trainer before the first (recompute_old_logprobs; the engine's log-probs
    # then only enter loss.tis_cap's correction)
    ppo_epochs: int = 1
    mini_batches: int = 1
    recompute_old_logprobs: bool = False
    advantage: str = "grpo"  # grpo | dr_grpo | rloo | reinforce_pp (batch-std scale)
    drop_constant_groups: bool = True
    # episodes cut off by the transcript cap (finish == "token_cap"), DAPO §3.4; see rollouts_to_rows
    overlong: str = "none"  # none | filter (no gradient) | soft_penalty (length penalty on the reward)
    overlong_buffer: int = 4096  # soft_penalty: L_cache, the tokens below the cap where it ramps up
    overlong_penalty: float = 1.0  # soft_penalty: its largest value (at and past the cap)
    async_rollouts: bool = False
    # <stage_dir>/rollouts/step_<N>.jsonl: transcripts, calls, rewards, advantages (rl.dump)
    dump_rollouts: bool = True
    # DAPO dynamic sampling: refill a step with more prompts until it holds prompts_per_step
    # informative groups, at most max_refill_rounds extra loader batches per step (rl.refill)
    dynamic_sampling: bool = False
    max_refill_rounds: int = 4
    # storage of the frozen KL reference: None = the compute dtype (bit-identical log-probs, since
    # weights are cast to it at use; bf16 halves an f32 copy), or e.g. "float32"
    reference_dtype: str | None = None
    sampling: SamplingConfig = dataclasses.field(default_factory=lambda: SamplingConfig(max_new_tokens=512))
    loss: LossConfig = dataclasses.field(default_factory=lambda: LossConfig(kl_coef=0.01))
    optim: OptimConfig = dataclasses.field(default_factory=OptimConfig)

    def __post_init__(self) -> None:
        if self.steps < 1 or self.prompts_per_step < 1 or self.group_size < 2 or self.rows_per_micro < 1:
            raise ValueError("steps, prompts_per_step, rows_per_micro must be >= 1 and group_size >= 2")
        if self.ppo_epochs < 1 or self.mini_batches < 1:
            raise ValueError(f"grpo.ppo_epochs and grpo.mini_batches must be >= 1, got {self.ppo_epochs}, "
                             f"{self.mini_batches}")
        if self.ppo_epochs * self.mini_batches > 1 and not self.recompute_old_logprobs:
            raise ValueError("grpo.ppo_epochs x grpo.mini_batches > 1 needs grpo.recompute_old_logprobs=true: "
                             "later updates need a fixed pi_old (see prove_jax.rl.ppo)")
        if self.sampling.temperature <= 0:
            raise ValueError("GRPO samples: sampling.temperature must be > 0")
        check_estimator(self.advantage)  # a typo fails at load, not after the first rollouts
        if self.overlong not in OVERLONG:
            raise ValueError(f"overlong must be one of {OVERLONG}, got {self.overlong!r}")
        if self.overlong_buffer < 1 or self.overlong_penalty < 0:
            raise ValueError(f"overlong_buffer must be >= 1 and overlong_penalty >= 0, got "
                             f"{self.overlong_buffer}, {self.overlong_penalty}")
        if self.max_refill_rounds < 0:
            raise ValueError(f"grpo.max_refill_rounds must be >= 0, got {self.max_refill_rounds}")


def step_seed(seed: int, step: int) -> int:
    return zlib.crc32(f"grpo:{seed}:{step}".encode()) & 0x7FFFFFFF


def rollout_episode(episode: EpisodeConfig, reward: RewardConfig) -> EpisodeConfig:
    """The episode config of GRPO's rollouts: ``episode`` with the servers' end state recorded
    when the reward reads it (its ``state`` term). Otherwise no snapshot is taken: serialising
    every opened server per episode costs host time and nothing would look at it."""
    return dataclasses.replace(episode, snapshots=episode.snapshots or reward.reads_final_state)


def overlong_penalty(length: int, truncated: bool, max_len: int, buffer: int, penalty: float) -> float:
    """DAPO's soft overlong punishment of one episode (added to its reward; <= 0).

    ``0`` up to ``max_len - buffer`` tokens, then linear down to ``-penalty`` at ``max_len``, and
    ``-penalty`` at or past it. The length is the whole transcript's (``len(tokens)``): the cap
    that cuts an episode off here is the driver's transcript cap (``EpisodeConfig.max_tokens``,
    which is the ``max_len`` GRPO passes to :func:`rollouts_to_rows`), and it bounds context, tool
    results and user turns together with the generated tokens, so the generated count alone
    never reaches it. An episode cut off by the cap (``truncated``) gets the full penalty even
    if it stopped short of ``max_len`` (the next turn or tool result did not fit): in DAPO a
    truncated response is exactly ``L_max`` long and so always gets ``-penalty``; this keeps that.
    """
    start = max_len - buffer
    if truncated or length >= max_len:
        return -penalty
    if length <= start:
        return 0.0
    return (start - length) / buffer * penalty


def rollouts_to_rows(
    examples: Sequence[Example],
    rollouts: Sequence[Rollout],
    reward: RewardConfig,
    cfg: GRPOConfig,
    max_len: int | None = None,
    scored: dict[Rollout, RolloutScore] | None = None,
) -> tuple[list[Row], dict[str, float]]:
    """Score groups, compute advantages and build rows; also the step's rollout statistics.

    ``max_len`` (the transcript cap; the step's buckets hold it): a longer rollout is trimmed
    right after its last assistant turn that fits (``rows_trimmed``) or, if none fits, dropped
    (``rows_dropped_long``), so one overlong transcript cannot crash the step. The episode
    driver already stops at the cap; this is the trainer's own guarantee. Groups are scored
    and normalised on whole episodes before any trimming.

    ``cfg.overlong`` treats episodes the cap cut off (``finish == "token_cap"``), as DAPO does:

    * ``filter`` (DAPO's overlong filtering): their rows get no gradient: they are left out of
      the batch, which is the same as masking every token out of the loss (a row without masked
      tokens counts in neither loss denominator). Their rewards still enter the group's mean and
      std (and decide whether the group is constant): the baseline is estimated from the G
      samples as drawn, and only the truncated samples' own (unreliable: the answer was never
      finished) gradient is removed. Counted in ``overlong_filtered``.
    * ``soft_penalty`` (DAPO's soft overlong punishment): :func:`overlong_penalty` of each episode
      (``max_len`` is ``L_max``; it must be given and exceed ``overlong_buffer``) is added to its
      reward before the advantage estimator normalises the group; episodes it penalises are
      counted in ``overlong_penalized``. The logged ``reward`` stays the unpenalised total, so
      it is comparable across configs and with the eval.

    ``scored`` (filled when given): each scored rollout's reward dict and the advantage its row
    got (``None`` in a dropped constant group), for the rollout dump.
    """
    soft_cap = max_len if cfg.overlong == "soft_penalty" else None  # L_max of the soft penalty
    if cfg.overlong == "soft_penalty" and (soft_cap is None or cfg.overlong_buffer >= soft_cap):
        raise ValueError(f"overlong=soft_penalty needs the transcript cap max_len > overlong_buffer "
                         f"({cfg.overlong_buffer}), got max_len={max_len}")
    by_group: dict[str, list[Rollout]] = {}
    for r in rollouts:
        by_group.setdefault(r.group_id, []).append(r)
    failed = sum(1 for r in rollouts if r.failed)
    groups: list[list[Rollout]] = []
    totals: list[np.ndarray] = []
    kept_rollouts: list[tuple[Rollout, float]] = []
    comps: dict[str, list[float]] = {c: [] for c in COMPONENTS}
    penalized = 0
    for ex in examples:
        ok = [r for r in by_group.get(ex.id, []) if not r.failed]
        if len(ok) < 2:
            continue
        scores = score_rollouts(ex, ok, reward)
        raw = [s.get("total_raw", s["total"]) for s in scores]
        groups.append(ok)
        total = np.array([s["total"] for s in scores], np.float64)
        if soft_cap is not None:
            pen = np.array([overlong_penalty(len(r.tokens), r.finish == "token_cap", soft_cap, cfg.overlong_buffer,
                                             cfg.overlong_penalty) for r in ok])
            penalized += int(np.sum(pen < 0))
            total = total + pen
        totals.append(total)
        kept_rollouts.extend(zip(ok, raw, strict=True))
        if scored is not None:
            scored.update((r, RolloutScore(s)) for r, s in zip(ok, scores, strict=True))
        for c in (*COMPONENTS, "state"):
            if c in scores[0]:
                comps.setdefault(c, []).extend(s[c] for s in scores)
    advs, constant = group_advantages(totals, cfg.advantage, drop_constant=cfg.drop_constant_groups)
    rows: list[Row] = []
    trimmed = dropped_long = filtered = 0
    for group, adv in zip(groups, advs, strict=True):
        if scored is not None and adv is not None:
            scored.update((r, RolloutScore(scored[r].scores, float(a))) for r, a in zip(group, adv, strict=True))
        if adv is None:
            continue
        for r, a in zip(group, adv, strict=True):
            if cfg.overlong == "filter" and r.finish == "token_cap":
                filtered += 1
                continue
            row = Row(np.asarray(r.tokens, np.int32), np.asarray(r.loss_mask, bool),
                      np.asarray(r.sample_logprobs, np.float32), float(a))
            if max_len is not None and len(row) > max_len:
                cut = trim_row(row, max_len)
                if cut is None:
                    dropped_long += 1
                    continue
                row, trimmed = cut, trimmed + 1
            rows.append(row)
    ok_all = [r for r, _ in kept_rollouts]
    n_calls = sum(len(r.calls) for r in ok_all)
    n_bad = sum(1 for r in ok_all for c in r.calls if not c.executed_ok)
    stats: dict[str, float] = {
        "reward": float(np.mean([x for _, x in kept_rollouts])) if kept_rollouts else float("nan"),
        **{f"reward/{c}": float(np.mean(v)) if v else float("nan") for c, v in comps.items()},
        "episodes": float(len(rollouts)),
        "failed_episodes": float(failed),
        "constant_groups": float(constant),
        "groups": float(len(groups)),
        "rows": float(len(rows)),
        "rows_trimmed": float(trimmed),
        "rows_dropped_long": float(dropped_long),
        "overlong_filtered": float(filtered),
        "overlong_penalized": float(penalized),
        "calls_per_episode": n_calls / max(1, len(ok_all)),
        "tool_error_rate": n_bad / max(1, n_calls),
        "parse_errors_per_episode": sum(len(r.parse_errors) for r in ok_all) / max(1, len(ok_all)),
        "len/tokens": float(np.mean([len(r.tokens) for r in ok_all])) if ok_all else 0.0,
        "len/generated": float(np.mean([int(np.sum(r.loss_mask)) for r in ok_all])) if ok_all else 0.0,
        "len/max": float(max((len(r.tokens) for r in ok_all), default=0)),
        "finish/token_cap": float(sum(r.finish == "token_cap" for r in ok_all)),
        "finish/assistant_cap": float(sum(r.finish == "assistant_cap" for r in ok_all)),
    }
    return rows, stats


@dataclasses.dataclass
class GRPOContext:
    """Everything a GRPO run needs besides its config (built by the launcher)."""

    trainer: Trainer
    engine: Engine
    pool: MCPPool
    template: ChatTemplate
    tokenizer: ChatTokenizer
    episode: EpisodeConfig
    reward: RewardConfig
    max_len: int
    # The trainer -> engine weight transfer (another dtype, another layout, or one engine per
    # process: an on-device cast + reshard); None = colocated, the engine decodes from the
    # trainer's own buffers.
    to_engine: WeightSync | None = None

    def engine_params(self, fresh: bool) -> Any:
        """Params for the engine; ``fresh``: buffers the next (donating) update cannot take."""
        if self.to_engine is not None:
            return self.to_engine(self.trainer.sync_source)  # new buffers anyway
        return jax.tree.map(jnp.copy, self.trainer.params) if fresh else self.trainer.params

    def sync_engine(self, fresh: bool) -> dict[str, float]:
        """Give the engine the trainer's current weights; returns the transfer's metrics.

        Rows cached under the old weights are forgotten too: a later episode must not copy a
        prompt prefix whose K/V were computed by the previous policy."""
        t0 = time.perf_counter()
        sampler = self.engine.sampler
        old = sampler.params
        sampler.update_params(self.engine_params(fresh))
        if self.to_engine is not None and old is not None:
            # the engine's previous copy (the launcher's first one included, which the stage
            # still references) is its own, never the trainer's: free it now, not at the GC's
            # leisure, so an update never runs beside two engine copies
            keep = {id(x) for x in jax.tree.leaves(sampler.params)}
            for x in jax.tree.leaves(old):
                if id(x) not in keep and not x.is_deleted():
                    x.delete()
        self.engine.forget_cached_rows()
        if self.to_engine is not None:
            return {"time/weight_sync": self.to_engine.last_seconds, "weight_sync_bytes": float(self.to_engine.bytes)}
        moved = sum(x.nbytes for x in jax.tree.leaves(self.trainer.params)) if fresh else 0
        return {"time/weight_sync": time.perf_counter() - t0, "weight_sync_bytes": float(moved)}


class _Generator:
    """Rollouts of one prompt batch, timed (wall and the engine's busy device time)."""

    def __init__(self, ctx: GRPOContext, cfg: GRPOConfig, seed: int) -> None:
        self.ctx, self.cfg, self.seed = ctx, cfg, seed
        self.episode = rollout_episode(ctx.episode, ctx.reward)

    async def __call__(self, examples: list[Example], step: int) -> dict[str, Any]:
        c = self.ctx
        t0, busy0 = time.perf_counter(), c.engine.stats.device_busy_s
        gen0 = c.engine.stats.generated_tokens
        ros = await run_rollouts(c.engine, c.pool, examples, c.template, c.tokenizer, n_samples=self.cfg.group_size,
                                 sampling=self.cfg.sampling, config=self.episode, seed=step_seed(self.seed, step))
        return {"examples": examples, "rollouts": ros, "wall": time.perf_counter() - t0, "scored": {},
                "device": c.engine.stats.device_busy_s - busy0, "generated": c.engine.stats.generated_tokens - gen0,
                "seed": step_seed(self.seed, step)}  # the update's mini-batch shuffle (rl.ppo)

    async def draw(self, loader: Any, step: int) -> dict[str, Any]:
        """Step ``step``'s batch: the loader's next prompts, refilled with more when dynamic
        sampling is on (every draw goes through ``loader``, so its state covers the refills)."""
        batch = await self(next(loader), step)
        if not self.cfg.dynamic_sampling:
            return batch
        return await refill(batch, lambda: next(loader), lambda exs: self(exs, step), self.ctx.reward,
                            target=len(batch["examples"]), max_rounds=self.cfg.max_refill_rounds)


COUNTS = ("episodes", "failed_episodes", "constant_groups", "groups", "rows", "rows_trimmed", "rows_dropped_long",
          "overlong_filtered", "overlong_penalized", "finish/token_cap", "finish/assistant_cap", *REFILL_COUNTS)


def _across_processes(stats: dict[str, float]) -> dict[str, float]:
    """Sum the counts and average the means over JAX processes (each plays an equal share of
    prompts), so process 0 logs the whole step."""
    if jax.process_count() == 1:
        return dict(stats)
    from jax.experimental import multihost_utils

    keys = sorted(stats)
    gathered = np.asarray(multihost_utils.process_allgather(np.array([stats[k] for k in keys], np.float64)))
    return {k: float(np.sum(gathered[:, i]) if k in COUNTS else np.nanmean(gathered[:, i]))
            for i, k in enumerate(keys)}


def _update(ctx: GRPOContext, cfg: GRPOConfig, batch: Mapping[str, Any]) -> dict[str, Any]:
    """Host work of a step (rewards, advantages, batching) and the update itself."""
    t0 = time.perf_counter()
    rows, stats = rollouts_to_rows(batch["examples"], batch["rollouts"], ctx.reward, cfg, max_len=ctx.max_len,
                                   scored=batch.get("scored"))
    out: dict[str, Any] = _across_processes(stats)
    if out["rows"] > 0:  # rows of all processes: a process without any still joins the step
        t1 = time.perf_counter()  # batching is inside the update now (one split per mini-batch)
        out.update(summarise(ppo_updates(ctx.trainer, rows, cfg.rows_per_micro, length_buckets(ctx.max_len),
                                         epochs=cfg.ppo_epochs, mini_batches=cfg.mini_batches,
                                         recompute=cfg.recompute_old_logprobs, seed=batch["seed"])))
        t2 = time.perf_counter()
        tokens = sum(len(r) for r in rows)
        out.update({"time/update": t2 - t1, "update_tokens": float(tokens),
                    "speed/update_tokens_per_s": tokens / max(t2 - t1, 1e-9)})
        out["time/host_batch"] = t1 - t0
    else:  # every group constant or failed: nothing to learn from this batch
        out.update({"time/update": 0.0, "update_tokens": 0.0, "no_update": 1.0,
                    "time/host_batch": time.perf_counter() - t0})
    return out


def _dump(dumper: RolloutDumper, step: int, batch: Mapping[str, Any]) -> float:
    """Write step ``step``'s rollout dump; returns the seconds it took."""
    t0 = time.perf_counter()
    info = batch.get("refill")
    dumper.write(step, batch["examples"], batch["rollouts"], batch["scored"],
                 rounds=info.round_of if info is not None else None, surplus=info.surplus if info is not None else ())
    return time.perf_counter() - t0


def _row(batch: Mapping[str, Any], upd: Mapping[str, Any], trainer: Trainer, after: float, overlapped: bool
         ) -> dict[str, Any]:
    """The step's metrics row. ``after`` is the wall time once this step's rollouts were ready:
    rewards + batching + update (+ the rest of the next step's overlapped rollouts, async)."""
    host = batch["wall"] - batch["device"] + upd["time/host_batch"]
    wall = after if overlapped else batch["wall"] + after
    row = dict(upd)
    row.update({"time/rollout": batch["wall"], "time/rollout_device": batch["device"], "time/host": host,
                "time/step": wall, "host_share": host / max(wall, 1e-9),
                "speed/generated_tokens_per_s": batch["generated"] / max(batch["wall"], 1e-9),
                "skipped_updates": float(trainer.state.skipped)})
    return row


async def train_grpo(ctx: GRPOContext, cfg: GRPOConfig, loader: Any, runner: StageRunner, *, seed: int
                     ) -> dict[str, Any]:
    """Run (or resume) GRPO to ``cfg.steps`` steps; returns the stage summary."""
    generate = _Generator(ctx, cfg, seed)
    start = runner.start(loader)
    # a resumed run drops the dumps of the steps it runs again, then writes them anew
    dumper = rollout_dumper(cfg.dump_rollouts, runner.out, ctx.tokenizer, jax.process_index(), start=start)
    done = start
    sampler = ctx.engine.sampler
    async with ctx.engine:
        if start < cfg.steps:
            ctx.sync_engine(cfg.async_rollouts)
            batch = await generate.draw(loader, start)
        for step in range(start, cfg.steps):
            t_step = time.perf_counter()
            data_state = loader.get_state()  # after this step's prompts, before any prefetch
            nxt: asyncio.Task[dict[str, Any]] | None = None
            if cfg.async_rollouts and step + 1 < cfg.steps:
                synced = ctx.sync_engine(True)  # the params before this update
                nxt = asyncio.create_task(generate.draw(loader, step + 1))
                upd = await asyncio.to_thread(_update, ctx, cfg, batch)
            else:
                # The engine is idle until the next rollouts: its KV cache, slot state and own
                # weight copy make room for the update, and come back (empty / synced) after it.
                sampler.release(params=True)
                upd = _update(ctx, cfg, batch)
                # sync: the engine takes the new weights (colocated: the step's output buffers)
                synced = ctx.sync_engine(False)
            upd.update(synced)
            if "refill" in batch:  # a collective on several processes: every process has one
                upd.update(_across_processes(batch["refill"].metrics()))
            if dumper is not None:
                upd["time/dump"] = await asyncio.to_thread(_dump, dumper, step, batch)
            done = step + 1
            if nxt is not None:
                next_batch = await nxt  # finished even when stopping: no task is left behind
            row = _row(batch, upd, ctx.trainer, time.perf_counter() - t_step, nxt is not None)
            stop = runner.end_step(step, row, data_state=data_state, postfix={"reward": row["reward"]})
            if nxt is not None:
                batch = next_batch
            elif not stop and step + 1 < cfg.steps:
                batch = await generate.draw(loader, step + 1)
            if stop:
                break
    pngs = runner.finish(done, title="GRPO")
    rows = runner.metrics.rows
    tail = rows[-min(len(rows), 5):]
    return {"steps": done, "total_steps": cfg.steps, "preempted": runner.preempted,
            "reward_first": rows[0]["reward"] if rows else None,
            "reward_last5": float(np.nanmean([r["reward"] for r in tail])) if tail else None,
            "skipped_updates": int(ctx.trainer.state.skipped),
            "failed_episodes": int(sum(r["failed_episodes"] for r in rows)),
            **_story(rows),
            "compiled_programs": ctx.trainer.compiled_programs(),
            "engine_programs": len(ctx.engine.sampler.programs), "plots": [str(p) for p in pngs]}


def _story(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What the stage did, step by step, for a summary that says so (the launcher prints it beside
    the held-out figures): train reward and calls per episode per step, how many groups were
    sampled, how many were constant (no gradient) and how many prompts dynamic sampling added."""
    def total(key: str) -> int:
        return int(sum(r.get(key, 0) for r in rows))

    return {"reward_curve": [round(float(r["reward"]), 4) for r in rows],
            "calls_per_episode_curve": [round(float(r.get("calls_per_episode", float("nan"))), 3) for r in rows],
            "groups": total("groups"), "constant_groups": total("constant_groups"),
            "no_update_steps": total("no_update"), "resampled_prompts": total("resampled_prompts")}


PANELS = {
    "reward": ["reward", *(f"reward/{c}" for c in COMPONENTS)],
    "loss": ["pg_loss", "kl", "clip_frac", "entropy"],
    "behaviour": ["calls_per_episode", "tool_error_rate", "parse_errors_per_episode"],
    "time": ["time/rollout_device", "time/host", "time/update", "time/weight_sync"],
}
