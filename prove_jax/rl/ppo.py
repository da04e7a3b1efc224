"""Several PPO updates per rollout batch: mini-batches x epochs against a trainer-recomputed pi_old.

verl's ``ppo_mini_batch_size`` / ``ppo_epochs`` (Tunix: ``num_iterations``): the step's rows are
split into ``mini_batches`` mini-batches, each one optimizer step, and the whole split is
repeated ``epochs`` times, reshuffled every epoch from the step's seed (so a resumed run replays
the same split). With one mini-batch and one epoch this is exactly the single update GRPO has
always done (same rows, same micro-batches, same denominators, no shuffle).

**pi_old.** Once the first update has moved the params, the ratio of a later update must be
against a *fixed* proximal policy, not the moving one (the ``tis_cap`` form's ``sg(pi_theta)``
would make every later ratio 1: no trust region) and preferably not the engine's sampling
log-probs (a bf16 engine and the trainer disagree per token, so the clip would act on kernel
noise from the first update on). So with ``recompute`` the trainer scores every row under its
current params before the first update (:func:`with_old_logprobs`, a jitted forward without
gradients through the objective's own :meth:`~prove_jax.rl.objectives.GRPOObjective.policy_logprobs`),
and the rows carry them as ``old_logprobs``: the loss's ratio is pi_theta / pi_old (exactly 1 at
the first update up to the difference between a forward with and without a backward pass), and
the engine's ``sample_logprobs`` only enter the truncated-IS weight ``min(pi_old / pi_sampler,
C)`` when ``loss.tis_cap`` is set (verl's rollout correction). :class:`GRPOConfig` therefore
refuses ``mini_batches x ppo_epochs > 1`` without ``recompute_old_logprobs``.

**Denominators.** Each mini-batch is normalised by its own masked-token / sequence counts (over
all processes), as verl normalises each mini-batch's loss: every optimizer step's loss is the
mean over what that step sees, the scale ``Trainer.denominators`` always meant ("the whole
optimizer step"), so a mini-batch's gradient does not shrink with the number of mini-batches.

**Several processes.** Rows are per process. Every process splits its own rows into the same
``mini_batches`` (a config value) in the same epoch order, so all make the same sequence of
:func:`~prove_jax.rl.batch.micro_batches` calls, each of which agrees its micro-batch count and
buckets over processes (a process short of rows pads). A mini-batch that is empty on every
process has no micro-batch anywhere (the agreed count is 0) and is skipped by all of them alike,
so no process ever waits in a collective the others skip.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np

from prove_jax.rl.batch import FIELDS, Row, micro_batches
from prove_jax.rl.step import StepStatic, Trainer, bind

OLD_FIELDS = (*FIELDS, "old_logprobs")
"""Micro-batch fields of an update against a recomputed pi_old."""


def _old_logprobs(static: StepStatic, out_sharding: jax.sharding.Sharding, params: Any, ref_params: Any,
                  tokens: jax.Array) -> jax.Array:
    """``[b, L-1]`` target-aligned log-probs of ``tokens`` under ``params`` (the objective's own)."""
    model, _ = bind(static, params, ref_params)
    logp = static.objective.policy_logprobs(model, tokens)  # type: ignore[attr-defined]
    return jax.lax.with_sharding_constraint(logp, out_sharding)


_OLD_LOGPROBS = jax.jit(_old_logprobs, static_argnums=(0, 1))
"""One program per micro-batch shape (the length buckets), like the accumulate program."""


def _process_rows(x: jax.Array) -> np.ndarray:
    """This process's rows of a batch-sharded global array, in the order ``Trainer.place`` took
    them (``make_array_from_process_local_data`` puts them in the process's block of rows)."""
    if jax.process_count() == 1:
        return np.asarray(jax.device_get(x))
    shards: dict[int, Any] = {}
    for s in x.addressable_shards:  # replicas of one row block (e.g. over `tensor`) kept once
        shards.setdefault(s.index[0].start or 0, s.data)
    return np.concatenate([np.asarray(shards[k]) for k in sorted(shards)])


def with_old_logprobs(trainer: Trainer, rows: Sequence[Row], rows_per_micro: int, buckets: Sequence[int]
                      ) -> list[Row]:
    """``rows`` with ``old_logprobs`` set to their log-probs under the trainer's current params.

    Aligned as ``sample_logprobs`` (position ``t`` holds token ``t``'s log-prob; position 0,
    never a target, holds 0). Rows go through the step's own bucketing, so the forward compiles
    once per bucket; every process must call this (the micro-batch plan is agreed over them)."""
    if not callable(getattr(trainer.static.objective, "policy_logprobs", None)):
        raise TypeError("recompute_old_logprobs needs an objective with policy_logprobs (GRPOObjective), got "
                        f"{type(trainer.static.objective).__name__}")
    mbs, plan = micro_batches(rows, rows_per_micro, buckets, fields=("tokens", "loss_mask"))
    sharding = trainer.batch_sharding(2)
    outs = [_OLD_LOGPROBS(trainer.static, sharding, trainer.params, trainer.ref_params,
                          trainer.place({"tokens": mb["tokens"]})["tokens"]) for mb in mbs]
    out: list[Row] = list(rows)
    for k, lp in enumerate(outs):
        local = _process_rows(lp)
        for j in range(rows_per_micro):
            slot = k * rows_per_micro + j
            if slot >= len(rows):
                break
            i = plan.order[slot]
            r = rows[i]
            old = np.zeros(len(r), np.float32)
            old[1:] = local[j, :len(r) - 1]
            out[i] = dataclasses.replace(r, old_logprobs=old)
    return out


def mini_batch_indices(n_rows: int, mini_batches: int, epoch: int, seed: int) -> list[np.ndarray]:
    """Row indices of each mini-batch of ``epoch``: a permutation drawn from ``(seed, epoch)``
    cut into ``mini_batches`` near-equal parts (a part is empty when rows are fewer). One
    mini-batch is the rows in their given order: shuffling them would only reorder equal-length
    rows inside the micro-batches, i.e. change float summation order against today's step."""
    if mini_batches == 1:
        return [np.arange(n_rows)]
    perm = np.random.default_rng([seed, epoch]).permutation(n_rows)
    return list(np.array_split(perm, mini_batches))


def ppo_updates(trainer: Trainer, rows: Sequence[Row], rows_per_micro: int, buckets: Sequence[int], *,
                epochs: int = 1, mini_batches: int = 1, recompute: bool = False, seed: int = 0
                ) -> list[dict[str, float]]:
    """Run the step's optimizer updates over ``rows`` (this process's); one metrics dict each.

    ``recompute``: pi_old is scored by the trainer before the first update and every update's
    ratio is against it (see the module docstring). Each update's denominators are its own
    mini-batch's counts over all processes."""
    if epochs < 1 or mini_batches < 1:
        raise ValueError(f"epochs and mini_batches must be >= 1, got {epochs}, {mini_batches}")
    if epochs * mini_batches > 1 and not recompute:
        raise ValueError("several updates per batch need a fixed pi_old: set recompute_old_logprobs")
    fields = FIELDS
    if recompute:
        rows, fields = with_old_logprobs(trainer, rows, rows_per_micro, buckets), OLD_FIELDS
    history: list[dict[str, float]] = []
    for epoch in range(epochs):
        for idx in mini_batch_indices(len(rows), mini_batches, epoch, seed):
            mbs, plan = micro_batches([rows[i] for i in idx], rows_per_micro, buckets, fields)
            if not mbs:  # no rows on any process (the count is agreed): every process skips it
                continue
            history.append(trainer.step(mbs, trainer.denominators(plan.tokens, plan.seqs)))
    return history


def summarise(history: Sequence[dict[str, float]]) -> dict[str, float]:
    """The step's metrics: each metric's mean over its optimizer updates (``skipped``: the
    fraction refused) and ``ppo_updates``, the number of updates taken."""
    out = {k: float(np.mean([h[k] for h in history])) for k in (history[0] if history else {})}
    out["ppo_updates"] = float(len(history))
    return out
