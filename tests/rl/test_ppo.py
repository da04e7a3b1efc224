"""PPO mini-batches x epochs per rollout batch against a trainer-recomputed pi_old (rl/ppo.py)."""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from prove_jax.models import init_model, make_mesh, sequence_logprobs
from prove_jax.rl import grpo
from prove_jax.rl.batch import Row, length_buckets, micro_batches, trim_row
from prove_jax.rl.grpo import GRPOConfig
from prove_jax.rl.losses import LossConfig
from prove_jax.rl.objectives import GRPOObjective, SFTObjective
from prove_jax.rl.ppo import mini_batch_indices, ppo_updates, summarise, with_old_logprobs
from prove_jax.rl.step import OptimConfig, Trainer
from tests.rl.rl_testlib import random_rows, tiny_config

OPTIM = OptimConfig(lr=3e-3, warmup_steps=0, decay_steps=10, weight_decay=0.01, clip_norm=1.0)
LOSS = LossConfig(kl_coef=0.05, eps_high=0.28)
TEMPERATURE = 0.9
BUCKETS = length_buckets(256, 64)


def _trainer(loss: LossConfig = LOSS, seed: int = 1, optim: OptimConfig = OPTIM, **kw: Any) -> Trainer:
    return Trainer(init_model(tiny_config(), seed=seed, **kw), optim, GRPOObjective(loss, TEMPERATURE),
                   reference=loss.kl_coef > 0)


def _host(tree: object) -> list[np.ndarray]:
    return [np.asarray(x) for x in jax.tree.leaves(jax.device_get(tree))]


def _on_policy(rows: list[Row], trainer: Trainer) -> list[Row]:
    """``rows`` as if sampled by an engine computing exactly the trainer's policy."""
    return [dataclasses.replace(r, sample_logprobs=r.old_logprobs, old_logprobs=None)
            for r in with_old_logprobs(trainer, rows, 4, BUCKETS)]


def test_defaults_run_exactly_the_single_step() -> None:
    rows = random_rows(10, seed=2)
    a, b = _trainer(), _trainer()
    mbs, p = micro_batches(rows, 4, BUCKETS)
    want = a.step(mbs, a.denominators(p.tokens, p.seqs))
    got = ppo_updates(b, rows, 4, BUCKETS)
    assert got == [want]
    for x, y in zip(_host(a.state), _host(b.state), strict=True):
        np.testing.assert_array_equal(x, y)
    assert summarise(got) == {**want, "ppo_updates": 1.0}


@pytest.mark.parametrize("loss", [LOSS, LossConfig(tis_cap=2.0), LossConfig(policy_loss="gspo", tis_cap=2.0)],
                         ids=["clip_kl", "tis", "gspo_tis"])
def test_recompute_with_one_update_equals_the_step_when_engine_and_trainer_agree(loss: LossConfig) -> None:
    """pi_old == pi_sampler == the trainer's policy: the ratio against either is the same, so
    recomputing pi_old must not change the update (TIS weight 1 on both paths)."""
    init = _trainer(loss)
    rows = _on_policy(random_rows(10, seed=3), init)
    off, on = _trainer(loss), _trainer(loss)
    m_off = summarise(ppo_updates(off, rows, 4, BUCKETS))
    m_on = summarise(ppo_updates(on, rows, 4, BUCKETS, recompute=True))
    assert m_on["ppo_updates"] == m_off["ppo_updates"] == 1.0
    for k in m_off:
        assert m_on[k] == pytest.approx(m_off[k], rel=1e-5, abs=1e-6), k
    assert m_on["ratio"] == pytest.approx(1.0, abs=1e-6) and m_on["clip_frac"] == 0.0
    moved = max(float(np.abs(x - y).max()) for x, y in zip(_host(init.params), _host(on.params), strict=True))
    assert moved > 1e-3  # the update did something
    for x, y in zip(_host(off.params), _host(on.params), strict=True):
        np.testing.assert_allclose(y, x, rtol=0, atol=1e-5)


def test_two_mini_batches_two_epochs_take_four_updates_against_a_fixed_pi_old() -> None:
    rows = random_rows(12, seed=4)  # sample log-probs ~ -5: far from this model's, as a stale engine's
    plain = _trainer()
    first_plain = ppo_updates(plain, rows, 4, BUCKETS)[0]
    assert first_plain["clip_frac"] > 0.1  # against the sampler the ratio is far from 1

    tr = _trainer(optim=dataclasses.replace(OPTIM, lr=2e-2))
    hist = ppo_updates(tr, rows, 4, BUCKETS, epochs=2, mini_batches=2, recompute=True, seed=7)
    assert len(hist) == 4 and int(tr.state.step) == 4
    assert hist[0]["clip_frac"] == 0.0 and hist[0]["ratio"] == pytest.approx(1.0, abs=1e-6)
    # pi_old stays the batch's starting policy: once the params moved, later ratios leave 1
    # (were pi_old rescored before every update, each would start at exactly 1 again)
    assert max(abs(h["ratio"] - 1.0) for h in hist[1:]) > 1e-3
    s = summarise(hist)
    assert s["ppo_updates"] == 4.0
    for k in hist[0]:
        assert s[k] == pytest.approx(float(np.mean([h[k] for h in hist]))), k


@pytest.mark.parametrize("mesh", [None, "fsdp=4,tensor=2"])
def test_recomputed_old_logprobs_are_the_models_sequence_logprobs(mesh: str | None) -> None:
    tr = _trainer(mesh=None if mesh is None else make_mesh(mesh))
    rows = random_rows(10, seed=5)  # 3 micro-batches of 4, the last one part padding
    out = with_old_logprobs(tr, rows, 4, BUCKETS)
    # the reference: all rows at once, right-padded to 256 (padding after a row changes none of its
    # causal log-probs), unsharded, so neither the buckets nor the row order are shared
    tokens = np.zeros((len(rows), 256), np.int32)
    for i, r in enumerate(rows):
        tokens[i, :len(r)] = r.tokens
    positions = np.broadcast_to(np.arange(256, dtype=np.int32), tokens.shape)
    score = nnx.jit(lambda m, t, p: sequence_logprobs(m, t, p, temperature=TEMPERATURE))
    want = np.asarray(score(_trainer().model(), jnp.asarray(tokens), jnp.asarray(positions)))
    for i, (r, o) in enumerate(zip(rows, out, strict=True)):
        np.testing.assert_array_equal(o.tokens, r.tokens)
        np.testing.assert_array_equal(o.sample_logprobs, r.sample_logprobs)
        assert r.old_logprobs is None and o.old_logprobs is not None and o.old_logprobs[0] == 0.0
        np.testing.assert_allclose(o.old_logprobs[1:], want[i, :len(r) - 1], rtol=1e-5, atol=1e-5)


def test_recompute_needs_an_objective_that_scores_the_policy() -> None:
    tr = Trainer(init_model(tiny_config(), seed=0), OPTIM, SFTObjective())
    with pytest.raises(TypeError, match="policy_logprobs"):
        with_old_logprobs(tr, random_rows(2, seed=0), 2, BUCKETS)


def test_mini_batches_are_a_partition_reshuffled_every_epoch_from_the_seed() -> None:
    parts = mini_batch_indices(10, 3, epoch=0, seed=11)
    assert [len(p) for p in parts] == [4, 3, 3]
    assert sorted(np.concatenate(parts).tolist()) == list(range(10))
    again = mini_batch_indices(10, 3, epoch=0, seed=11)
    assert all(np.array_equal(x, y) for x, y in zip(parts, again, strict=True))
    flat = lambda ps: np.concatenate(ps).tolist()  # noqa: E731
    assert flat(mini_batch_indices(10, 3, epoch=1, seed=11)) != flat(parts)
    assert flat(mini_batch_indices(10, 3, epoch=0, seed=12)) != flat(parts)
    assert flat(parts) != list(range(10))
    # one mini-batch: the rows as given, every epoch (the single step's micro-batches exactly)
    assert flat(mini_batch_indices(10, 1, epoch=3, seed=11)) == list(range(10))


def test_each_mini_batch_is_normalised_by_its_own_counts() -> None:
    rows = random_rows(9, seed=6)
    tr = _trainer()
    seen: list[tuple[float, float, float, float]] = []
    step = tr.step

    def recording(mbs: list[dict[str, np.ndarray]], den: Any) -> dict[str, float]:
        tokens = sum(float(mb["loss_mask"][:, 1:].sum()) for mb in mbs)
        seqs = sum(float((mb["loss_mask"][:, 1:].sum(axis=1) > 0).sum()) for mb in mbs)
        seen.append((float(den.tokens), float(den.seqs), tokens, seqs))
        return step(mbs, den)

    tr.step = recording  # type: ignore[method-assign]
    ppo_updates(tr, rows, 2, BUCKETS, epochs=2, mini_batches=3, recompute=True, seed=1)
    assert len(seen) == 6
    for den_tokens, den_seqs, tokens, seqs in seen:
        assert (den_tokens, den_seqs) == (tokens, seqs)
    total = sum(r.target_tokens for r in rows)
    assert sum(s[0] for s in seen[:3]) == sum(s[0] for s in seen[3:]) == total
    assert max(s[0] for s in seen) < total


def test_a_mini_batch_without_rows_is_skipped() -> None:
    tr = _trainer()
    hist = ppo_updates(tr, random_rows(3, seed=7), 2, BUCKETS, mini_batches=4, recompute=True)
    assert len(hist) == 3 and int(tr.state.step) == 3 and summarise(hist)["ppo_updates"] == 3.0


def test_several_updates_per_batch_refuse_a_moving_pi_old() -> None:
    with pytest.raises(ValueError, match=r"grpo\.recompute_old_logprobs"):
        GRPOConfig(mini_batches=2)
    with pytest.raises(ValueError, match=r"grpo\.recompute_old_logprobs"):
        GRPOConfig(ppo_epochs=2)
    with pytest.raises(ValueError, match=r"grpo\.ppo_epochs"):
        GRPOConfig(ppo_epochs=0, recompute_old_logprobs=True)
    with pytest.raises(ValueError, match=r"grpo\.ppo_epochs"):
        GRPOConfig(mini_batches=0, recompute_old_logprobs=True)
    cfg = GRPOConfig(ppo_epochs=2, mini_batches=4, recompute_old_logprobs=True)
    assert (cfg.ppo_epochs, cfg.mini_batches) == (2, 4)
    defaults = GRPOConfig()
    assert (defaults.ppo_epochs, defaults.mini_batches, defaults.recompute_old_logprobs) == (1, 1, False)
    with pytest.raises(ValueError, match="recompute_old_logprobs"):
        ppo_updates(_trainer(), random_rows(4, seed=0), 2, BUCKETS, epochs=2)
    with pytest.raises(ValueError, match="must be >= 1"):
        ppo_updates(_trainer(), random_rows(4, seed=0), 2, BUCKETS, mini_batches=0, recompute=True)


def test_the_grpo_update_runs_the_configured_updates_with_the_step_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = random_rows(6, seed=8)
    monkeypatch.setattr(grpo, "rollouts_to_rows", lambda *a, **kw: (rows, {"rows": float(len(rows))}))
    seeds: list[int] = []
    real = grpo.ppo_updates

    def spy(*a: Any, **kw: Any) -> list[dict[str, float]]:
        seeds.append(kw["seed"])
        return real(*a, **kw)

    monkeypatch.setattr(grpo, "ppo_updates", spy)
    tr = _trainer()
    ctx = grpo.GRPOContext(tr, None, None, None, None, None, None, max_len=256)  # type: ignore[arg-type]
    cfg = GRPOConfig(rows_per_micro=2, ppo_epochs=2, mini_batches=2, recompute_old_logprobs=True)
    out = grpo._update(ctx, cfg, {"examples": [], "rollouts": [], "seed": 123})
    assert out["ppo_updates"] == 4.0 and int(tr.state.step) == 4 and seeds == [123]
    assert out["update_tokens"] == sum(len(r) for r in rows)


def test_trimming_keeps_the_old_logprobs_of_the_kept_prefix() -> None:
    mask = np.array([0, 1, 1, 0, 1, 1, 0, 1, 1], bool)
    old = np.arange(9, dtype=np.float32)
    row = Row(np.arange(9, dtype=np.int32), mask, -old, 1.0, old)
    cut = trim_row(row, 7)
    assert cut is not None and len(cut) == 6
    np.testing.assert_array_equal(cut.old_logprobs, old[:6])
    assert trim_row(dataclasses.replace(row, old_logprobs=None), 7).old_logprobs is None  # type: ignore[union-attr]
