"""Policy losses, aggregations and KL estimators against hand-computed values."""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from prove_jax.rl.losses import (
    AGGREGATIONS,
    KL_ESTIMATORS,
    POLICY_LOSSES,
    Denominators,
    LossConfig,
    policy_objective,
    sft_objective,
)


def den(tokens: float, seqs: float) -> Denominators:
    return Denominators(jnp.float32(tokens), jnp.float32(seqs))


def test_token_surrogate_clips_each_side_with_its_own_epsilon() -> None:
    cfg = LossConfig(eps_low=0.2, eps_high=0.3)
    # ratios 1.5, 0.5, 1.1 for positive advantage; 1.5, 0.5 for negative
    logp = jnp.log(jnp.array([[1.5, 0.5, 1.1], [1.5, 0.5, 1.0]]))
    slp = jnp.zeros((2, 3))
    adv = jnp.array([2.0, -1.0])
    loss, flags = POLICY_LOSSES.get("token")(logp, slp, adv, jnp.ones((2, 3)), cfg)
    # A>0: -min(rA, clip(r)A): r=1.5 -> clip 1.3 -> -2.6 (clipped); r=0.5 -> -1.0 (min is r*A); r=1.1 -> -2.2
    # A<0: r=1.5 -> -min(-1.5, -1.3) = 1.5 (unclipped); r=0.5 -> -min(-0.5, -0.8) = 0.8 (clipped); r=1 -> 1
    np.testing.assert_allclose(loss, [[-2.6, -1.0, -2.2], [1.5, 0.8, 1.0]], rtol=1e-6)
    np.testing.assert_array_equal(flags["clip_frac"], [[True, False, False], [False, True, False]])
    assert "clip_frac_lower" not in flags  # no dual clip by default


def test_dual_clip_caps_the_negative_advantage_loss_at_c() -> None:
    cfg = LossConfig(eps_low=0.2, eps_high=0.2, clip_ratio_c=3.0)
    # rows: A = -1, A = -2, A = +1; ratios 4, 2.5, 0.5 on each
    logp = jnp.log(jnp.array([[4.0, 2.5, 0.5]] * 3))
    slp = jnp.zeros((3, 3))
    adv = jnp.array([-1.0, -2.0, 1.0])
    loss, flags = POLICY_LOSSES.get("token")(logp, slp, adv, jnp.ones((3, 3)), cfg)
    # PPO loss max(-rA, -clip(r)A), then for A < 0 min(., -A c):
    # A=-1: r=4 -> max(4, 1.2) = 4 -> capped at 3; r=2.5 -> 2.5 (< 3); r=0.5 -> max(0.5, 0.8) = 0.8
    # A=-2: r=4 -> 8 -> capped at 6; r=2.5 -> 5 (< 6); r=0.5 -> 1.6
    # A=+1: never capped: r=4 -> -min(4, 1.2) = -1.2; r=2.5 -> -1.2; r=0.5 -> -0.5
    np.testing.assert_allclose(loss, [[3.0, 2.5, 0.8], [6.0, 5.0, 1.6], [-1.2, -1.2, -0.5]], rtol=1e-6)
    want_lower = [[True, False, False], [True, False, False], [False, False, False]]
    np.testing.assert_array_equal(flags["clip_frac_lower"], want_lower)
    # the clip flags are PPO's own, unchanged by the dual clip
    np.testing.assert_array_equal(flags["clip_frac"], [[False, False, True], [False, False, True], [True, True, False]])
    # where the cap binds the loss is a constant: no gradient; elsewhere d/dlogp of -rA is -rA
    g = jax.grad(lambda lp: POLICY_LOSSES.get("token")(lp, slp, adv, jnp.ones((3, 3)), cfg)[0].sum())(logp)
    np.testing.assert_allclose(g, [[0.0, 2.5, 0.0], [0.0, 5.0, 0.0], [0.0, 0.0, -0.5]], rtol=1e-6, atol=1e-7)
    # the metric: token mean over the step's masked tokens (mask drops token (1, 0) -> 1 of 8)
    mask = jnp.ones((3, 3)).at[1, 0].set(0.0)
    _, m = policy_objective(logp, slp, adv, mask, den(8, 3), cfg)
    assert float(m["clip_frac_lower"]) == pytest.approx(1 / 8)
    _, m_off = policy_objective(logp, slp, adv, mask, den(8, 3), LossConfig())
    assert "clip_frac_lower" not in m_off


def test_dual_clip_never_binds_on_the_proximal_ratio_of_tis() -> None:
    """With ``tis_cap`` the clip acts on pi/sg(pi) = 1, so the dual clip (c > 1) never binds;
    the TIS weight (capped) is what bounds a stale token."""
    logp, slp, adv = jnp.log(jnp.array([[4.0]])), jnp.zeros((1, 1)), jnp.array([-1.0])
    loss, flags = POLICY_LOSSES.get("token")(logp, slp, adv, jnp.ones((1, 1)), LossConfig(tis_cap=2.0, clip_ratio_c=3.0))
    np.testing.assert_allclose(loss, [[2.0]], rtol=1e-6)  # -A * 1 * min(4, 2)
    assert not bool(flags["clip_frac_lower"].any())


def test_gspo_dual_clips_the_sequence_ratio() -> None:
    logp = jnp.log(jnp.array([[8.0, 2.0, 0.01], [8.0, 2.0, 0.01]]))  # third token masked out
    mask = jnp.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    adv = jnp.array([-1.0, 1.0])
    cfg = LossConfig(clip_ratio_c=3.0)
    loss, flags = POLICY_LOSSES.get("gspo")(logp, jnp.zeros((2, 3)), adv, mask, cfg)
    # s = exp(mean(log 8, log 2)) = 4: A=-1 -> PPO loss max(4, 1.2) = 4, capped at 3; A=+1 -> -1.2
    np.testing.assert_allclose(loss, [[3.0] * 3, [-1.2] * 3], rtol=1e-6)
    np.testing.assert_array_equal(flags["clip_frac_lower"], [[True] * 3, [False] * 3])


def test_aggregations_by_hand() -> None:
    x = jnp.array([[1.0, 2.0, 3.0], [4.0, 0.0, 0.0]])
    m = jnp.array([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    cfg = LossConfig(norm_tokens=10)
    d = den(3, 2)
    assert float(AGGREGATIONS.get("token_mean")(x, m, d, cfg)) == pytest.approx((1 + 2 + 4) / 3)
    assert float(AGGREGATIONS.get("seq_mean_token_mean")(x, m, d, cfg)) == pytest.approx((1.5 + 4) / 2)
    assert float(AGGREGATIONS.get("seq_sum_token_norm")(x, m, d, cfg)) == pytest.approx((3 + 4) / (2 * 10))


def test_micro_batch_shares_add_up_to_the_whole_batch() -> None:
    rng = np.random.default_rng(0)
    logp = jnp.asarray(rng.normal(-2, 0.3, (4, 6)), jnp.float32)
    slp = logp + jnp.asarray(rng.normal(0, 0.1, (4, 6)), jnp.float32)
    ref = logp + jnp.asarray(rng.normal(0, 0.1, (4, 6)), jnp.float32)
    adv = jnp.asarray(rng.normal(0, 1, 4), jnp.float32)
    mask = jnp.asarray(rng.random((4, 6)) > 0.3, jnp.float32)
    d = den(float(mask.sum()), 4)
    for agg in AGGREGATIONS:
        cfg = LossConfig(aggregation=agg, kl_coef=0.05)
        whole, _ = policy_objective(logp, slp, adv, mask, d, cfg, ref)
        halves = sum(policy_objective(logp[s], slp[s], adv[s], mask[s], d, cfg, ref[s])[0]
                     for s in (slice(0, 2), slice(2, 4)))
        assert float(whole) == pytest.approx(float(halves), rel=1e-5), agg


def test_kl_estimators_by_hand() -> None:
    logp, ref = jnp.array([-1.0]), jnp.array([-1.5])
    assert float(KL_ESTIMATORS.get("k1")(logp, ref)[0]) == pytest.approx(0.5)
    assert float(KL_ESTIMATORS.get("k2")(logp, ref)[0]) == pytest.approx(0.125)
    assert float(KL_ESTIMATORS.get("k3")(logp, ref)[0]) == pytest.approx(math.exp(-0.5) + 0.5 - 1, rel=1e-6)
    assert float(KL_ESTIMATORS.get("k3")(ref, ref)[0]) == 0.0


def test_kl_term_enters_with_its_coefficient() -> None:
    logp, slp, ref = jnp.array([[-1.0, -2.0]]), jnp.array([[-1.0, -2.0]]), jnp.array([[-1.5, -2.0]])
    adv, mask = jnp.array([0.0]), jnp.ones((1, 2))
    loss, m = policy_objective(logp, slp, adv, mask, den(2, 1), LossConfig(kl_coef=0.1, kl_estimator="k1"), ref)
    assert float(m["kl"]) == pytest.approx(0.25)
    assert float(loss) == pytest.approx(0.1 * 0.25)
    _, m0 = policy_objective(logp, slp, adv, mask, den(2, 1), LossConfig(kl_coef=0.0), ref)
    assert "kl" not in m0  # no reference term at beta = 0


@pytest.mark.parametrize("dual", [False, True])
def test_gspo_equals_token_level_with_one_token_per_sequence(dual: bool) -> None:
    """Also with the dual clip binding: negative advantages and ratios up to e^1.5 ~ 4.5 > c = 1.5."""
    rng = np.random.default_rng(1)
    logp = jnp.asarray(rng.normal(-1, 0.5, (5, 1)), jnp.float32)
    shift = [[-1.5], [0.5], [-1.2], [0.0], [-0.9]] if dual else rng.normal(0, 0.3, (5, 1))
    slp = logp + jnp.asarray(shift, jnp.float32)
    adv, mask = jnp.asarray(rng.normal(0, 1, 5), jnp.float32), jnp.ones((5, 1))
    adv = -jnp.abs(adv) if dual else adv
    cfg = LossConfig(eps_low=0.1, eps_high=0.15, clip_ratio_c=1.5 if dual else None)

    def loss(name: str, lp: jax.Array) -> jax.Array:
        return policy_objective(lp, slp, adv, mask, den(5, 5), dataclasses.replace(cfg, policy_loss=name))[0]

    assert float(loss("gspo", logp)) == pytest.approx(float(loss("token", logp)), rel=1e-6)
    np.testing.assert_allclose(jax.grad(loss, argnums=1)("gspo", logp), jax.grad(loss, argnums=1)("token", logp),
                               rtol=1e-5)
    if dual:  # the case must exercise the cap
        assert float(policy_objective(logp, slp, adv, mask, den(5, 5), cfg)[1]["clip_frac_lower"]) > 0


def test_gspo_uses_the_length_normalised_sequence_ratio() -> None:
    logp = jnp.log(jnp.array([[2.0, 0.5, 9.0]]))  # third token masked out
    mask = jnp.array([[1.0, 1.0, 0.0]])
    loss, flags = POLICY_LOSSES.get("gspo")(logp, jnp.zeros((1, 3)), jnp.array([1.0]), mask, LossConfig(eps_high=0.5))
    # s = exp(mean(log 2, log 0.5)) = 1 -> unclipped, every token's value is -s * A = -1
    np.testing.assert_allclose(loss, [[-1.0, -1.0, -1.0]], rtol=1e-6)
    assert not bool(flags["clip_frac"].any())


def test_truncated_is_weights_are_capped_and_detached() -> None:
    cfg = LossConfig(tis_cap=2.0)
    logp = jnp.log(jnp.array([[3.0, 1.5]]))
    slp = jnp.zeros((1, 2))
    adv = jnp.array([1.0])
    loss, _ = POLICY_LOSSES.get("token")(logp, slp, adv, jnp.ones((1, 2)), cfg)
    np.testing.assert_allclose(loss, [[-2.0, -1.5]], rtol=1e-6)  # weight min(r, 2) times the ratio-1 surrogate
    g = jax.grad(lambda lp: POLICY_LOSSES.get("token")(lp, slp, adv, jnp.ones((1, 2)), cfg)[0].sum())(logp)
    np.testing.assert_allclose(g, [[-2.0, -1.5]], rtol=1e-6)  # d/dlogp = -w * A


def test_recomputed_pi_old_sets_the_ratio_and_tis_weighs_it_against_the_sampler() -> None:
    """``old_logp`` given: clip on pi_theta / pi_old, TIS weight min(pi_old / pi_sampler, C)."""
    logp = jnp.log(jnp.array([[1.1, 1.5, 1.0]]))
    old = jnp.zeros((1, 3))
    slp = old - jnp.log(jnp.array([[1.0, 2.0, 4.0]]))  # pi_old / pi_sampler = 1, 2, 4
    adv, mask = jnp.array([1.0]), jnp.ones((1, 3))
    token = POLICY_LOSSES.get("token")
    loss, flags = token(logp, slp, adv, mask, LossConfig(), old_logp=old)
    np.testing.assert_allclose(loss, [[-1.1, -1.2, -1.0]], rtol=1e-6)  # sampler ignored without TIS
    np.testing.assert_array_equal(flags["clip_frac"], [[False, True, False]])
    cfg = LossConfig(tis_cap=3.0)
    loss, _ = token(logp, slp, adv, mask, cfg, old_logp=old)
    np.testing.assert_allclose(loss, [[-1.1, -2.4, -3.0]], rtol=1e-6)  # weights 1, 2, min(4, 3)
    g = jax.grad(lambda lp: token(lp, slp, adv, mask, cfg, old_logp=old)[0].sum())(logp)
    np.testing.assert_allclose(g, [[-1.1, 0.0, -3.0]], rtol=1e-6)  # -r * w * A, 0 where clipped
    _, m = policy_objective(logp, slp, adv, mask, den(3, 1), cfg, old_logp=old)
    assert float(m["ratio"]) == pytest.approx((1.1 + 1.5 + 1.0) / 3, rel=1e-6)  # against pi_old
    _, m_plain = policy_objective(logp, slp, adv, mask, den(3, 1), cfg)
    assert m_plain.keys() == m.keys()
    # GSPO: s = exp(mean log(pi / pi_old)) = 1.65 ** (1/3) (unclipped); weight exp(mean log 1, 2, 4) = 2
    loss, flags = POLICY_LOSSES.get("gspo")(logp, slp, adv, mask, cfg, old_logp=old)
    np.testing.assert_allclose(loss, np.full((1, 3), -(1.65 ** (1 / 3)) * 2.0), rtol=1e-5)
    assert not bool(flags["clip_frac"].any())


def test_masked_positions_get_no_gradient() -> None:
    """Tool results, user turns and the system prompt (mask 0) never receive gradient."""
    rng = np.random.default_rng(2)
    logp = jnp.asarray(rng.normal(-1, 0.2, (2, 5)), jnp.float32)
    slp, ref = logp - 0.05, logp + 0.05
    mask = jnp.array([[0, 0, 1, 1, 0], [1, 0, 0, 0, 1]], jnp.float32)
    for name in POLICY_LOSSES:
        for agg in AGGREGATIONS:
            cfg = LossConfig(policy_loss=name, aggregation=agg, kl_coef=0.1)
            g = jax.grad(lambda lp, c=cfg: policy_objective(lp, slp, jnp.array([1.0, -0.5]), mask, den(4, 2), c,
                                                            ref)[0])(logp)
            assert np.all(np.asarray(g)[np.asarray(mask) == 0] == 0.0), (name, agg)
            assert np.all(np.asarray(g)[np.asarray(mask) == 1] != 0.0), (name, agg)
    g = jax.grad(lambda lp: sft_objective(lp, mask, den(4, 2))[0])(logp)
    np.testing.assert_array_equal(np.asarray(g), -np.asarray(mask) / 4)


def test_bad_loss_config_names_the_problem() -> None:
    with pytest.raises(KeyError, match="policy loss"):
        LossConfig(policy_loss="ppo2")
    with pytest.raises(ValueError, match="clip range"):
        LossConfig(eps_low=1.5)
    with pytest.raises(ValueError, match="clip_ratio_c"):
        LossConfig(clip_ratio_c=1.0)
