"""Objectives the train step differentiates: SFT (teacher-forced NLL) and GRPO (clipped surrogate
+ KL). Each is a frozen dataclass (a hashable jit static argument) mapping one micro-batch to its
share of the step's loss; the arithmetic lives in :mod:`prove_jax.rl.losses`.

Micro-batch fields (right-padded rows, see :mod:`prove_jax.rl.batch`): ``tokens`` int32
``[b, L]``, ``loss_mask`` bool ``[b, L]`` (True on model-generated tokens), and for GRPO
``sample_logprobs`` f32 ``[b, L]`` and ``advantages`` f32 ``[b]``, optionally ``old_logprobs``
f32 ``[b, L]`` (pi_old recomputed by the trainer, :mod:`prove_jax.rl.ppo`; aligned as
``sample_logprobs``: position ``t`` holds token ``t``'s log-prob). Right padding needs no
attention mask: causal attention already hides the padding (which comes after every real token)
from real positions, and padded positions carry no loss.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import jax
import jax.numpy as jnp

from prove_jax.models import Model, sequence_logprobs
from prove_jax.rl.losses import Denominators, LossConfig, policy_objective, sft_objective


def _logprobs(model: Model, tokens: jax.Array, temperature: float = 1.0) -> jax.Array:
    positions = jnp.broadcast_to(jnp.arange(tokens.shape[1], dtype=jnp.int32), tokens.shape)
    return sequence_logprobs(model, tokens, positions, temperature=temperature)


@dataclasses.dataclass(frozen=True)
class SFTObjective:
    """Token-mean NLL on assistant tokens only."""

    def __call__(self, model: Model, ref: Model | None, batch: Mapping[str, Any], den: Denominators
                 ) -> tuple[jax.Array, dict[str, jax.Array]]:
        logp = _logprobs(model, batch["tokens"])
        return sft_objective(logp, batch["loss_mask"][:, 1:], den)


@dataclasses.dataclass(frozen=True)
class GRPOObjective:
    """Policy loss at the sampling temperature (the ratio's denominator is the sampled
    distribution, see :mod:`prove_jax.rl.losses`), plus ``kl_coef`` x KL to the reference.

    A batch carrying ``old_logprobs`` is scored against that pi_old instead (the ratio
    pi_theta / pi_old; the sampled distribution then only enters truncated IS). Whether the key
    is there is part of the batch's pytree structure, so it picks the path at trace time."""

    loss: LossConfig
    temperature: float = 1.0

    def policy_logprobs(self, model: Model, tokens: jax.Array) -> jax.Array:
        """The log-probs the loss scores, ``[b, L-1]`` target-aligned: also what the trainer
        recomputes as pi_old, so both come from one function (same temperature, same kernels)
        and the ratio starts at 1."""
        return _logprobs(model, tokens, self.temperature)

    def __call__(self, model: Model, ref: Model | None, batch: Mapping[str, Any], den: Denominators
                 ) -> tuple[jax.Array, dict[str, jax.Array]]:
        tokens = batch["tokens"]
        logp = self.policy_logprobs(model, tokens)
        ref_logp = None
        if ref is not None and self.loss.kl_coef > 0:
            ref_logp = jax.lax.stop_gradient(_logprobs(ref, tokens, self.temperature))
        old = batch.get("old_logprobs")
        return policy_objective(logp, batch["sample_logprobs"][:, 1:], batch["advantages"],
                                batch["loss_mask"][:, 1:], den, self.loss, ref_logp,
                                old_logp=None if old is None else old[:, 1:])
