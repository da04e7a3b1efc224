"""Policy-gradient losses, loss aggregations and KL estimators: pure JAX functions, by name.

Inputs are target-aligned ``[B, T]`` arrays (position ``t`` scores token ``t + 1`` of the row):
``logp`` under the policy being trained, ``sample_logp`` under the distribution the rollout was
actually sampled from, ``mask`` (1 on model-generated tokens only: tool results, user turns and
the system prompt never enter a loss), ``adv`` ``[B]`` per sequence.

**Importance ratio: pi_theta / pi_sampler.** The ratio's denominator is the rollout's
``sample_logprobs`` (the engine's distribution after temperature and top-k/top-p), and
``logp`` is computed at the sampling temperature. Why not a recomputed pi_old: (1) it is the
behaviour distribution itself, so the surrogate is an unbiased importance-sampling estimate even
when sampling truncates the vocabulary or lags the learner by a step (async mode); (2) it saves a
full forward pass per step. On-policy, with one optimizer step per batch and no truncation, the
ratio is 1 up to kernel numerics and the loss is the plain policy gradient.

**Truncated IS (``tis_cap``).** When the sampler differs from the learner (one-step off-policy
rollouts, top-p, or just a bf16 engine and a bf16 trainer computing the same policy with other
kernels), the ratio drifts from 1 and PPO clipping silently zeroes those tokens'
gradients. With ``tis_cap = C`` the loss takes the decoupled form: the behaviour mismatch is
corrected by the detached weight ``min(pi_theta / pi_sampler, C)`` and clipping acts on
``pi_theta / sg(pi_theta)`` (the proximal policy is the step's own starting point; exact for one
optimizer step per batch, which the config enforces: several PPO updates per batch need
``old_logp``, below). The paper recipe sets ``C = 2`` (verl's default): without it the clip hits
~0.5 % of tokens at step 0 on bf16 numerics alone (tests/rl/test_tis_bf16.py, a tiny peaked model).

**Recomputed pi_old (``old_logp``, :mod:`prove_jax.rl.ppo`).** With several optimizer updates
per rollout batch (PPO mini-batches / epochs) the proximal policy must stay fixed across them:
the trainer's own log-probs before the first update. Given ``old_logp``, the clip acts on
``pi_theta / pi_old`` (exactly 1 at the first update, whatever the engine's numerics) and the
behaviour mismatch enters only through the detached weight ``min(pi_old / pi_sampler, C)`` when
``tis_cap`` is set, else not at all (verl's rollout correction). With ``pi_old`` equal to the
step's starting policy this is the ``tis_cap`` form above, now valid for every later update too.

**Dual clip (``clip_ratio_c``, verl's name; off by default).** PPO's pessimistic ``max(-rA,
-clip(r)A)`` is unbounded in ``r`` when ``A < 0``: one negative-advantage token whose ratio has
drifted far above 1 contributes ``-A r`` and can dominate the step. Dual-clip PPO (Ye et al. 2020,
verl's ``clip_ratio_c``, 3.0 there) caps that token's loss at ``-A c``; where the cap binds the
token's loss is a constant, so it gets no gradient. ``clip_frac_lower`` (verl's
``pg_clipfrac_lower``) is the fraction of the step's tokens where it binds. As in verl it acts on
the ratio the clip acts on: with ``tis_cap`` that is the proximal ratio ``pi_theta / sg(pi_theta)``
(exactly 1 at the step's single update), so the dual clip never binds and the TIS cap is what
bounds a stale token's weight; it matters when the clip acts on ``pi_theta / pi_sampler``.

Aggregations are written so that micro-batch partial sums add up to the global value: the
denominators (masked tokens, sequences) are those of the whole optimizer step, passed in
:class:`Denominators`, never of the micro-batch.

**NaN safety (double where).** Off-mask positions (tool results, user turns, padding) may hold
anything: a tool token the policy finds absurd has ``logp = -100``, and then ``ref - logp > 88``
overflows ``exp`` in f32. Multiplying by the mask is not enough: ``inf * 0 = NaN`` in the value,
and even a ``where`` after the ``exp`` leaves ``0 * inf = NaN`` in its gradient, so one such token
made the step's NaN guard skip the whole update. Every nonlinearity therefore sees
``where(mask, x, 0)`` (its input is a harmless 0 off-mask) and every aggregate sums
``where(mask, y, 0)``. On top, the log-ratios are clamped as verl does: the policy log-ratio to
``[-20, 20]`` before ``exp``, and for k3 the log-ratio to ``[-20, 20]`` and the per-token KL to
``[-10, 10]`` (a bounded penalty for a token the reference finds very unlikely). Values on
well-behaved inputs are unchanged bit for bit.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from prove_jax.rl.registry import Registry

POLICY_LOSSES = Registry("policy loss")
AGGREGATIONS = Registry("loss aggregation")
KL_ESTIMATORS = Registry("KL estimator")

LOG_RATIO_CLAMP = 20.0  # verl: |log(pi / pi_other)| <= 20 before exp (e^20 ~ 5e8, far from overflow)
KL_CLAMP = 10.0  # verl's low_var_kl (k3): the per-token estimate is clamped to [-10, 10]


def _masked(x: jax.Array, mask: jax.Array) -> jax.Array:
    """``x`` on the mask, 0 elsewhere; unlike ``x * mask`` neither its value nor its gradient can
    turn into NaN through an inf/NaN off the mask (the gradient there is exactly 0)."""
    return jnp.where(mask > 0, x, jnp.zeros_like(x))


def _log_ratio(logp: jax.Array, base: jax.Array, mask: jax.Array) -> jax.Array:
    """``log(pi / pi_base)`` on the mask, clamped to +-LOG_RATIO_CLAMP; 0 off the mask, so the
    ``exp`` that follows never sees a masked token's extreme value."""
    return jnp.clip(_masked(logp - base, mask), -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP)


@dataclasses.dataclass(frozen=True)
class LossConfig:
    """The policy-loss knobs (see the module docstring)."""

    policy_loss: str = "token"  # token | gspo
    aggregation: str = "token_mean"  # token_mean | seq_mean_token_mean | seq_sum_token_norm
    eps_low: float = 0.2
    eps_high: float = 0.2  # > eps_low is "clip-higher" (DAPO: 0.28)
    kl_coef: float = 0.0  # beta; the paper uses 0.01. 0 means no reference model at all.
    kl_estimator: str = "k3"  # k1 | k2 | k3
    tis_cap: float | None = None
    clip_ratio_c: float | None = None  # dual-clip PPO cap for A < 0 (verl: 3.0); None = off
    norm_tokens: int = 4096  # seq_sum_token_norm: the constant per-sequence normaliser

    def __post_init__(self) -> None:
        POLICY_LOSSES.get(self.policy_loss)
        AGGREGATIONS.get(self.aggregation)
        KL_ESTIMATORS.get(self.kl_estimator)
        if not (0 <= self.eps_low < 1 and self.eps_high >= 0):
            raise ValueError(f"clip range needs 0 <= eps_low < 1 and eps_high >= 0, got {self.eps_low}, {self.eps_high}")
        if self.kl_coef < 0:
            raise ValueError(f"kl_coef must be >= 0, got {self.kl_coef}")
        if self.tis_cap is not None and self.tis_cap <= 0:
            raise ValueError(f"tis_cap must be > 0, got {self.tis_cap}")
        if self.clip_ratio_c is not None and self.clip_ratio_c <= 1:
            # c <= 1 would cap the loss below the unclipped PPO value even at r = 1 (on-policy)
            raise ValueError(f"clip_ratio_c must be > 1, got {self.clip_ratio_c}")
        if self.norm_tokens < 1:
            raise ValueError(f"norm_tokens must be >= 1, got {self.norm_tokens}")


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class Denominators:
    """Whole-step counts (all micro-batches, all hosts): f32 scalars."""

    tokens: jax.Array  # masked tokens
    seqs: jax.Array  # sequences with at least one masked token


# ---- aggregations ------------------------------------------------------------------------------
@AGGREGATIONS.register("token_mean")
def token_mean(x: jax.Array, mask: jax.Array, den: Denominators, cfg: LossConfig) -> jax.Array:
    """Every generated token of the step weighs the same (long answers weigh more)."""
    return jnp.sum(_masked(x, mask)) / jnp.maximum(den.tokens, 1.0)


@AGGREGATIONS.register("seq_mean_token_mean")
def seq_mean_token_mean(x: jax.Array, mask: jax.Array, den: Denominators, cfg: LossConfig) -> jax.Array:
    """Mean over each sequence's tokens, then over sequences (the original GRPO)."""
    per_seq = jnp.sum(_masked(x, mask), axis=-1) / jnp.maximum(jnp.sum(mask, axis=-1), 1.0)
    return jnp.sum(per_seq) / jnp.maximum(den.seqs, 1.0)


@AGGREGATIONS.register("seq_sum_token_norm")
def seq_sum_token_norm(x: jax.Array, mask: jax.Array, den: Denominators, cfg: LossConfig) -> jax.Array:
    """Sum over each sequence's tokens over a constant length, mean over sequences (Dr. GRPO:
    no per-sequence length normalisation, so no length bias)."""
    return jnp.sum(_masked(x, mask)) / (jnp.maximum(den.seqs, 1.0) * float(cfg.norm_tokens))


# ---- KL estimators (of KL(pi_theta || pi_ref), per token, from samples of pi_theta) ------------
# policy_objective passes them inputs that are 0 off the mask (the inner where).
@KL_ESTIMATORS.register("k1")
def kl_k1(logp: jax.Array, ref_logp: jax.Array) -> jax.Array:
    return logp - ref_logp


@KL_ESTIMATORS.register("k2")
def kl_k2(logp: jax.Array, ref_logp: jax.Array) -> jax.Array:
    return 0.5 * jnp.square(logp - ref_logp)


@KL_ESTIMATORS.register("k3")
def kl_k3(logp: jax.Array, ref_logp: jax.Array) -> jax.Array:
    """Schulman's unbiased, always non-negative estimator ``e^{ref-logp} - (ref-logp) - 1``, with
    verl's clamps (log-ratio to +-20, estimate to +-10): one token the reference finds far less
    likely than the policy must not dominate (or overflow) the step's KL term."""
    d = jnp.clip(ref_logp - logp, -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP)
    return jnp.clip(jnp.exp(d) - d - 1.0, -KL_CLAMP, KL_CLAMP)


# ---- policy losses -----------------------------------------------------------------------------
Flags = dict[str, jax.Array]
"""A policy loss's per-token booleans, keyed by the metric (token mean over the step) they give:
``clip_frac`` always, ``clip_frac_lower`` when the dual clip is on."""


def _surrogate(ratio: jax.Array, adv: jax.Array, cfg: LossConfig) -> tuple[jax.Array, Flags]:
    """``-min(r A, clip(r, 1-eps_low, 1+eps_high) A)`` and whether the clipped branch won; with
    ``clip_ratio_c`` the loss of ``A < 0`` is further capped at ``-A c`` (dual clip, flagged where
    the cap binds: strictly below the PPO loss, as verl counts it)."""
    clipped_ratio = jnp.clip(ratio, 1.0 - cfg.eps_low, 1.0 + cfg.eps_high)
    unclipped, clipped = ratio * adv, clipped_ratio * adv
    loss = -jnp.minimum(unclipped, clipped)
    flags = {"clip_frac": clipped < unclipped}
    if cfg.clip_ratio_c is not None:
        cap = -adv * cfg.clip_ratio_c
        lower = (adv < 0) & (loss > cap)
        loss = jnp.where(lower, cap, loss)
        flags["clip_frac_lower"] = lower
    return loss, flags


def _tis_weight(logp: jax.Array, sample_logp: jax.Array, mask: jax.Array, cap: float) -> jax.Array:
    return jax.lax.stop_gradient(jnp.minimum(jnp.exp(_log_ratio(logp, sample_logp, mask)), cap))


@POLICY_LOSSES.register("token")
def token_level(
    logp: jax.Array, sample_logp: jax.Array, adv: jax.Array, mask: jax.Array, cfg: LossConfig,
    old_logp: jax.Array | None = None,
) -> tuple[jax.Array, Flags]:
    """PPO/GRPO clipped surrogate (dual-clipped with ``clip_ratio_c``) with a ratio per token.
    Returns per-token loss and clip flags. With ``old_logp`` the ratio is ``pi_theta / pi_old``
    and TIS weighs ``pi_old / pi_sampler``."""
    a = adv[:, None]
    if old_logp is not None:
        loss, flags = _surrogate(jnp.exp(_log_ratio(logp, old_logp, mask)), a, cfg)
        if cfg.tis_cap is None:
            return loss, flags
        return loss * _tis_weight(old_logp, sample_logp, mask, cfg.tis_cap), flags
    if cfg.tis_cap is None:
        return _surrogate(jnp.exp(_log_ratio(logp, sample_logp, mask)), a, cfg)
    loss, flags = _surrogate(jnp.exp(_masked(logp - jax.lax.stop_gradient(logp), mask)), a, cfg)
    return loss * _tis_weight(logp, sample_logp, mask, cfg.tis_cap), flags


@POLICY_LOSSES.register("gspo")
def sequence_level(
    logp: jax.Array, sample_logp: jax.Array, adv: jax.Array, mask: jax.Array, cfg: LossConfig,
    old_logp: jax.Array | None = None,
) -> tuple[jax.Array, Flags]:
    """GSPO: one ratio per sequence, ``exp(mean_t log(pi_theta / pi_sampler))`` over its masked
    tokens, clipped per sequence. Written per token as ``sg(s) * exp(logp - sg(logp))`` so the
    value is the sequence ratio on every token and the gradient is GSPO's (``s`` times the mean
    token score); with one token per sequence it equals the token-level loss exactly. With
    ``old_logp`` the sequence ratio is against ``pi_old`` and TIS weighs ``pi_old / pi_sampler``.

    ``clip_ratio_c`` applies here too, to the sequence ratio ``s`` (a negative-advantage sequence
    with ``s > c`` gets the capped loss ``-A c`` on every token and no gradient). verl applies the
    dual clip to its token-level loss only; it is kept here so the knob never silently does
    nothing and the one-token-per-sequence identity with the token loss still holds. A
    length-normalised ``s`` rarely exceeds ``c``, so it binds only for far-off-policy sequences;
    leave it unset for verl's GSPO."""
    n = jnp.maximum(jnp.sum(mask, axis=-1, keepdims=True), 1.0)
    a = adv[:, None]
    if old_logp is not None:
        base = old_logp
    else:
        base = jax.lax.stop_gradient(logp) if cfg.tis_cap is not None else sample_logp

    def seq_log_ratio(num: jax.Array, b: jax.Array) -> jax.Array:
        mean = jnp.sum(_masked(num - b, mask), axis=-1, keepdims=True) / n
        return jnp.clip(mean, -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP)

    log_s = seq_log_ratio(logp, base)
    token_ratio = jnp.exp(jax.lax.stop_gradient(log_s) + _masked(logp - jax.lax.stop_gradient(logp), mask))
    loss, flags = _surrogate(token_ratio, a, cfg)
    if cfg.tis_cap is not None:
        seq_w = seq_log_ratio(logp if old_logp is None else old_logp, sample_logp)
        loss = loss * jax.lax.stop_gradient(jnp.minimum(jnp.exp(seq_w), cfg.tis_cap))
    return loss, {k: jnp.broadcast_to(f, logp.shape) for k, f in flags.items()}


def policy_objective(
    logp: jax.Array,
    sample_logp: jax.Array,
    adv: jax.Array,
    mask: jax.Array,
    den: Denominators,
    cfg: LossConfig,
    ref_logp: jax.Array | None = None,
    old_logp: jax.Array | None = None,
) -> tuple[jax.Array, dict[str, jax.Array]]:
    """The GRPO loss of one micro-batch (its share of the step's loss) and its metric shares.

    ``loss = aggregate(policy loss) + kl_coef * aggregate(KL estimate)``. Metrics are token means
    over the step (so micro-batch shares add up): ``pg_loss``, ``kl``, ``clip_frac``,
    ``clip_frac_lower`` (only with ``clip_ratio_c``: where the dual clip binds),
    ``ratio`` (pi_theta / pi_sampler, or pi_theta / pi_old when ``old_logp`` is given; log clamped to +-20;
    1 in expectation even off-policy), ``abs_log_ratio`` (how far
    learner and sampler disagree per token: numerics on-policy, staleness off-policy), ``entropy`` (estimated as the mean of ``-logp`` over
    sampled tokens: unbiased for the sampling distribution when on-policy). The metric names
    are the same with and without ``old_logp`` (the trainer fixes them at its first batch).
    """
    mask = mask.astype(jnp.float32)
    policy_loss = POLICY_LOSSES.get(cfg.policy_loss)
    if old_logp is None:  # a loss registered without an ``old_logp`` parameter keeps working
        per_token, flags = policy_loss(logp, sample_logp, adv, mask, cfg)
    else:
        per_token, flags = policy_loss(logp, sample_logp, adv, mask, cfg, old_logp=old_logp)
    agg = AGGREGATIONS.get(cfg.aggregation)
    pg = agg(per_token, mask, den, cfg)
    loss = pg
    tm = lambda x: token_mean(x, mask, den, cfg)  # noqa: E731
    metrics = {
        "pg_loss": pg,
        **{name: tm(f.astype(jnp.float32)) for name, f in flags.items()},
        "ratio": tm(jnp.exp(_log_ratio(logp, sample_logp if old_logp is None else old_logp, mask))),
        "abs_log_ratio": tm(jnp.abs(_masked(logp - sample_logp, mask))),  # sampler/learner mismatch (staleness)
        "entropy": tm(-logp),
    }
    if ref_logp is not None and cfg.kl_coef > 0:
        kl = KL_ESTIMATORS.get(cfg.kl_estimator)(_masked(logp, mask), _masked(ref_logp, mask))
        loss = loss + cfg.kl_coef * agg(kl, mask, den, cfg)
        metrics["kl"] = tm(kl)
    metrics["loss"] = loss
    return loss, metrics


def sft_objective(logp: jax.Array, mask: jax.Array, den: Denominators) -> tuple[jax.Array, dict[str, jax.Array]]:
    """Token-mean negative log-likelihood over the step's assistant tokens (teacher forcing)."""
    mask = mask.astype(jnp.float32)
    nll = -jnp.sum(_masked(logp, mask)) / jnp.maximum(den.tokens, 1.0)
    return nll, {"loss": nll, "nll": nll}
