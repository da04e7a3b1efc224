"""Masked tokens can never turn a GRPO step's loss or gradients into NaN/inf (double where), and
extreme log-ratios on generated tokens are clamped as verl does.

Off-mask positions (tool results, user turns, the system prompt, padding) hold whatever the
policy thinks of text it did not write: ``logp = -100`` is ordinary there, and then the k3 KL's
``exp(ref - logp)`` overflows. Before the double where, ``inf * 0 = NaN`` made the step's NaN
guard silently skip the whole update.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from prove_jax.models import init_model, sequence_logprobs
from prove_jax.rl.losses import (
    AGGREGATIONS,
    KL_CLAMP,
    LOG_RATIO_CLAMP,
    POLICY_LOSSES,
    Denominators,
    LossConfig,
    policy_objective,
    sft_objective,
)
from prove_jax.rl.objectives import GRPOObjective
from tests.rl.rl_testlib import tiny_config

MASK = np.array([[0, 1, 1, 0, 1, 0], [1, 1, 0, 1, 0, 0]], np.float32)
ADV = jnp.array([1.0, -0.7])
DEN = Denominators(jnp.float32(MASK.sum()), jnp.float32(2))

# What a masked position may hold (position (0, 3) and (1, 2), both off the mask):
#   logp, sample_logp, ref_logp
POISON = {
    "logp_-100": (-100.0, 0.0, -100.0),
    "ref_minus_logp_gt_88": (-100.0, 0.0, -1.0),  # exp(99) overflows f32
    "ratio_overflow": (-1.0, -100.0, -1.0),  # exp(logp - sample_logp) = exp(99)
    "neg_inf": (-np.inf, -np.inf, -np.inf),  # -inf - -inf = NaN before any exp
}


def _inputs(poison: tuple[float, float, float] | None) -> tuple[jax.Array, jax.Array, jax.Array]:
    rng = np.random.default_rng(0)
    logp = rng.normal(-1.0, 0.3, MASK.shape).astype(np.float32)
    slp = (logp + rng.normal(0, 0.1, MASK.shape)).astype(np.float32)
    ref = (logp + rng.normal(0, 0.1, MASK.shape)).astype(np.float32)
    if poison is not None:
        for arr, v in zip((logp, slp, ref), poison, strict=True):
            arr[0, 3] = arr[1, 2] = v
    return jnp.asarray(logp), jnp.asarray(slp), jnp.asarray(ref)


def _configs() -> list[LossConfig]:
    return [LossConfig(policy_loss=p, aggregation=a, kl_coef=0.1, kl_estimator=k, tis_cap=t)
            for p in POLICY_LOSSES for a in AGGREGATIONS for k in ("k1", "k3") for t in (None, 2.0)] + [
        LossConfig(policy_loss=p, aggregation=a, kl_coef=0.1, clip_ratio_c=3.0)  # the dual clip's where too
        for p in POLICY_LOSSES for a in AGGREGATIONS]


@pytest.mark.parametrize("case", sorted(POISON))
def test_masked_extremes_give_finite_loss_and_gradients_equal_to_clean_ones(case: str) -> None:
    """Whatever sits off the mask, loss, metrics and gradients are finite and exactly those of the
    same batch with harmless values there; masked positions get exactly zero gradient."""
    logp, slp, ref = _inputs(POISON[case])
    clean_logp, clean_slp, clean_ref = _inputs(None)
    mask = jnp.asarray(MASK)
    for cfg in _configs():
        def f(lp: jax.Array, s: jax.Array, r: jax.Array, c: LossConfig = cfg) -> tuple[jax.Array, dict]:
            return policy_objective(lp, s, ADV, mask, DEN, c, r)

        (loss, metrics), g = jax.value_and_grad(f, has_aux=True)(logp, slp, ref)
        (clean, clean_metrics), g_clean = jax.value_and_grad(f, has_aux=True)(clean_logp, clean_slp, clean_ref)
        assert np.isfinite(float(loss)), (case, cfg)
        assert all(np.isfinite(float(v)) for v in metrics.values()), (case, cfg, metrics)
        assert np.isfinite(np.asarray(g)).all(), (case, cfg)
        assert np.all(np.asarray(g)[MASK == 0] == 0.0), (case, cfg)
        assert float(loss) == pytest.approx(float(clean), rel=1e-6), (case, cfg)
        np.testing.assert_allclose(np.asarray(g), np.asarray(g_clean), rtol=1e-6, err_msg=str((case, cfg)))
        assert float(metrics["kl"]) == pytest.approx(float(clean_metrics["kl"]), rel=1e-6)
    g_sft = jax.grad(lambda lp: sft_objective(lp, mask, DEN)[0])(logp)
    assert np.isfinite(np.asarray(g_sft)).all() and np.all(np.asarray(g_sft)[MASK == 0] == 0.0)


def test_extreme_generated_tokens_are_clamped_like_verl() -> None:
    """On the mask, the policy log-ratio is clamped to +-20 before exp and k3 uses a log-ratio
    clamped to +-20 and is itself clamped to +-10: finite, bounded, never an overflow."""
    logp = jnp.array([[-100.0, -1.0]])  # a generated token the policy now finds absurd
    slp = jnp.array([[-1.0, -1.0]])
    ref = jnp.array([[-1.0, -1.0]])  # ref - logp = 99 on the first token
    mask = jnp.ones((1, 2))
    den = Denominators(jnp.float32(2), jnp.float32(1))
    cfg = LossConfig(kl_coef=0.05, kl_estimator="k3")
    (loss, m), g = jax.value_and_grad(lambda lp: policy_objective(lp, slp, jnp.array([1.0]), mask, den, cfg, ref),
                                      has_aux=True)(logp)
    assert np.isfinite(float(loss)) and np.isfinite(np.asarray(g)).all()
    assert float(m["kl"]) == pytest.approx(KL_CLAMP / 2)  # token 1 at the clamp, token 2 exactly 0
    assert float(m["ratio"]) == pytest.approx((math.exp(-LOG_RATIO_CLAMP) + 1.0) / 2)
    # A > 0 and r = e^-20: -min(rA, clip(r)A) = -rA, so the policy term is (-e^-20 - 1) / 2
    assert float(loss) == pytest.approx((-math.exp(-LOG_RATIO_CLAMP) - 1.0) / 2 + 0.05 * KL_CLAMP / 2, rel=1e-6)


@nnx.jit
def _next_logits(model: nnx.Module, tokens: jax.Array) -> jax.Array:
    """Logits at every position of right-padded rows (causal: padding never reaches them)."""
    pos = jnp.broadcast_to(jnp.arange(tokens.shape[1], dtype=jnp.int32), tokens.shape)
    h, _ = model.hidden_states(tokens, pos)
    return jnp.einsum("bte,ve->btv", h, model.lm_head[...])


def _extreme_batch(policy: nnx.Module, length: int = 12) -> dict[str, jax.Array]:
    """Two rows whose generated tokens are the policy's argmax (logp ~ 0) and whose other tokens
    are its argmin (logp < -100): the tool results of a run the policy finds absurd."""
    mask = np.zeros((2, length), bool)
    mask[0, 3:6] = mask[0, 9:11] = mask[1, 2:8] = True
    tokens = np.zeros((2, length), np.int32)
    tokens[:, 0] = [5, 17]
    for t in range(1, length):
        logits = np.asarray(_next_logits(policy, jnp.asarray(tokens)))[:, t - 1]
        tokens[:, t] = np.where(mask[:, t], logits.argmax(-1), logits.argmin(-1))
    pos = jnp.broadcast_to(jnp.arange(length, dtype=jnp.int32), (2, length))
    lp = np.asarray(sequence_logprobs(policy, jnp.asarray(tokens), pos))
    slp = np.zeros((2, length), np.float32)
    slp[:, 1:] = np.where(mask[:, 1:], lp, 0.0)  # on-policy; 0 off the mask, as rollouts store it
    return {"tokens": jnp.asarray(tokens), "loss_mask": jnp.asarray(mask), "sample_logprobs": jnp.asarray(slp),
            "advantages": jnp.array([1.0, -1.0])}


def test_grpo_objective_on_a_tiny_model_with_absurd_tool_tokens_has_finite_gradients() -> None:
    """The real objective (model forward, reference KL k3 at the paper's 0.01): masked tokens
    with ``ref - logp > 88`` leave loss and every parameter gradient finite, and the logged KL is
    the mean over generated tokens only."""
    policy = init_model(tiny_config(initializer_range=5.0), seed=0)  # extreme logits
    ref = init_model(tiny_config(initializer_range=0.02), seed=1)  # ~uniform: ref logp ~ -5.5
    batch = _extreme_batch(policy)
    mask = np.asarray(batch["loss_mask"])[:, 1:]
    pos = jnp.broadcast_to(jnp.arange(12, dtype=jnp.int32), (2, 12))
    lp = np.asarray(sequence_logprobs(policy, batch["tokens"], pos))
    ref_lp = np.asarray(sequence_logprobs(ref, batch["tokens"], pos))
    assert (ref_lp - lp)[~mask].max() > 88, "the batch must hold masked tokens that overflow exp"
    assert lp[mask].min() > -1.0, "generated tokens stay well-behaved"
    den = Denominators(jnp.float32(mask.sum()), jnp.float32(2))
    for cfg in (LossConfig(kl_coef=0.01), LossConfig(kl_coef=0.01, tis_cap=2.0)):
        obj = GRPOObjective(cfg)

        @nnx.jit
        def value_and_grad(m: nnx.Module, r: nnx.Module, b: dict, d: Denominators, o: GRPOObjective = obj) -> tuple:
            return nnx.value_and_grad(lambda mm: o(mm, r, b, d), has_aux=True)(m)

        (loss, metrics), grads = value_and_grad(policy, ref, batch, den)
        assert np.isfinite(float(loss)), cfg
        leaves = jax.tree.leaves(grads)
        assert leaves and all(np.isfinite(np.asarray(x)).all() for x in leaves), cfg
        assert any(np.abs(np.asarray(x)).max() > 0 for x in leaves), cfg
        d = (ref_lp - lp)[mask]
        assert float(metrics["kl"]) == pytest.approx(float(np.mean(np.exp(d) - d - 1.0)), rel=1e-4)
