"""The train step: sharded equals single-device, accumulation equals one batch, NaN steps are skipped."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from prove_jax.models import init_model, make_mesh
from prove_jax.rl.batch import length_buckets, micro_batches
from prove_jax.rl.losses import LossConfig
from prove_jax.rl.objectives import GRPOObjective, SFTObjective
from prove_jax.rl.step import OptimConfig, Trainer
from tests.rl.rl_testlib import random_rows, tiny_config

OPTIM = OptimConfig(lr=3e-3, warmup_steps=0, decay_steps=10, weight_decay=0.01, clip_norm=1.0)
OBJECTIVE = GRPOObjective(LossConfig(kl_coef=0.05, eps_high=0.28), temperature=0.9)
BUCKETS = length_buckets(256, 64)


def _host(tree: object) -> list[np.ndarray]:
    return [np.asarray(x) for x in jax.tree.leaves(jax.device_get(tree))]


def _run(trainer: Trainer, rows: list, per_micro: int, steps: int = 2) -> list[dict[str, float]]:
    out = []
    for k in range(steps):
        mbs, p = micro_batches(rows[k::steps] if steps > 1 else rows, per_micro, BUCKETS)
        out.append(trainer.step(mbs, trainer.denominators(p.tokens, p.seqs)))
    return out


def test_sharded_step_equals_single_device() -> None:
    rows = random_rows(16, seed=3)
    single = Trainer(init_model(tiny_config(), seed=1), OPTIM, OBJECTIVE, reference=True)
    mesh = make_mesh("fsdp=4,tensor=2")
    sharded = Trainer(init_model(tiny_config(), seed=1, mesh=mesh), OPTIM, OBJECTIVE, reference=True)
    assert any(len(set(x.sharding.spec) - {None}) for x in jax.tree.leaves(sharded.params))
    m1, m2 = _run(single, rows, 4), _run(sharded, rows, 4)
    for a, b in zip(m1, m2, strict=True):
        assert a.keys() == b.keys()
        for k in a:
            assert b[k] == pytest.approx(a[k], rel=1e-5, abs=1e-6), k
    # The bar: every parameter and optimizer moment within 1e-5 (f32) after two steps. The
    # largest differences sit in embedding rows with near-zero gradients, where Adam's m / sqrt(v)
    # turns reduction-order noise into a relative difference.
    for a, b in zip(_host(single.state), _host(sharded.state), strict=True):
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-5)
    # optimizer moments follow the params' shardings (not replicated)
    mu = jax.tree.leaves(sharded.state.opt_state)
    assert any(getattr(x, "sharding", None) is not None and len(set(x.sharding.spec) - {None}) for x in mu)


def test_accumulating_micro_batches_equals_one_batch() -> None:
    rows = random_rows(8, seed=4)
    tr = Trainer(init_model(tiny_config(), seed=2), OPTIM, OBJECTIVE, reference=True)
    accs = []
    for per_micro in (2, 8):  # four micro-batches of two rows vs one of eight
        mbs, p = micro_batches(rows, per_micro, BUCKETS)
        accs.append(jax.device_get(tr.gradients(mbs, tr.denominators(p.tokens, p.seqs))))
    assert len(micro_batches(rows, 2, BUCKETS)[0]) == 4
    for k in accs[0]["metrics"]:
        assert float(accs[0]["metrics"][k]) == pytest.approx(float(accs[1]["metrics"][k]), rel=1e-5, abs=1e-7), k
    for x, y in zip(_host(accs[0]["grads"]), _host(accs[1]["grads"]), strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-7)
    assert max(float(np.abs(g).max()) for g in _host(accs[0]["grads"])) > 1e-3  # not a vacuous comparison


def test_nan_step_is_skipped_counted_and_the_run_continues() -> None:
    rows = random_rows(8, seed=5)
    tr = Trainer(init_model(tiny_config(), seed=0), OPTIM, OBJECTIVE)
    mbs, p = micro_batches(rows, 4, BUCKETS)
    den = tr.denominators(p.tokens, p.seqs)
    bad = list(mbs)
    bad[1] = {**mbs[1], "sample_logprobs": np.full_like(mbs[1]["sample_logprobs"], np.nan)}
    before = _host(tr.state)
    metrics = tr.step(bad, den)
    assert metrics["skipped"] == 1.0 and int(tr.state.skipped) == 1 and int(tr.state.step) == 0
    after = _host(tr.state)
    for x, y in zip(before[:-1], after[:-1], strict=True):  # params, Adam state, step: untouched
        np.testing.assert_array_equal(x, y)
    metrics = tr.step(mbs, den)
    assert metrics["skipped"] == 0.0 and int(tr.state.step) == 1 and int(tr.state.skipped) == 1
    assert all(np.isfinite(x).all() for x in _host(tr.params))
    assert any(not np.array_equal(x, y) for x, y in zip(before, _host(tr.state), strict=True))


def test_compiled_programs_are_bounded_by_the_buckets() -> None:
    tr = Trainer(init_model(tiny_config(), seed=0), OPTIM, SFTObjective())
    for k in range(4):  # lengths spread over 3 buckets, rows shuffled between steps
        rows = random_rows(6, seed=10 + k, lengths=(30, 250))
        mbs, p = micro_batches(rows, 3, BUCKETS, fields=("tokens", "loss_mask"))
        tr.step(mbs, tr.denominators(p.tokens, p.seqs))
    assert 1 < tr.compiled_programs() <= len(BUCKETS) + 1, tr.compiled_programs()


def test_donated_params_are_refused_by_the_engine_and_fresh_ones_accepted() -> None:
    from prove_jax.engine import EngineConfig, Sampler

    tr = Trainer(init_model(tiny_config(), seed=0), OPTIM, SFTObjective())
    sampler = Sampler(tr.model(), EngineConfig(slots=2, max_len=64, min_chunk=16, max_chunk=32), stop_ids=(1,))
    old = tr.params
    mbs, p = micro_batches(random_rows(4, seed=6), 4, BUCKETS, fields=("tokens", "loss_mask"))
    tr.step(mbs, tr.denominators(p.tokens, p.seqs))
    with pytest.raises(ValueError, match="donated"):
        sampler.update_params(old)
    sampler.update_params(tr.params)  # the step's output: no copy
    assert jax.tree.leaves(sampler.params)[0] is jax.tree.leaves(tr.params)[0]


def test_bf16_compute_keeps_f32_master_weights_and_moments() -> None:
    """dtype=bfloat16 with param_dtype=float32: weights are cast at use, so params, gradients and
    the Adam moments stay f32, and an update far below bf16's resolution still lands."""
    optim = OptimConfig(lr=1e-5, warmup_steps=0, weight_decay=0.0)
    tr = Trainer(init_model(tiny_config(dtype="bfloat16", param_dtype="float32"), seed=0), optim, OBJECTIVE,
                 reference=True)
    before = _host(tr.params)
    mbs, p = micro_batches(random_rows(6, seed=8), 3, BUCKETS)
    metrics = tr.step(mbs, tr.denominators(p.tokens, p.seqs))
    assert np.isfinite(metrics["loss"]) and metrics["skipped"] == 0.0
    leaves = jax.tree.leaves(tr.state.opt_state) + jax.tree.leaves(tr.params)
    assert all(x.dtype == np.float32 for x in leaves if getattr(x, "ndim", 0) >= 1)
    w0 = next(b for b in before if b.ndim == 3)  # a projection matrix, weights ~0.1
    w1 = next(a for a, b in zip(_host(tr.params), before, strict=True) if b is w0)
    moved = np.abs(w1 - w0)[np.abs(w0) > 0.05]
    # Adam's first step moves each weight by ~lr = 1e-5; bf16 spacing at |w| > 0.05 is >= 2.4e-4
    assert 0.5e-5 < float(np.median(moved)) < 2e-5
    assert float(np.median(moved)) < np.spacing(np.float32(0.05)) * 2 ** 16 / 10


def test_the_kl_reference_is_stored_in_the_compute_dtype_with_identical_log_probs() -> None:
    """bf16 compute: the frozen reference is kept in bf16 (half an f32 copy) and gives exactly the
    log-probs of an f32-stored reference, since weights are cast to the compute dtype at use;
    ``reference_dtype="float32"`` keeps f32, and f32 compute keeps f32 by default."""
    from flax import nnx

    from prove_jax.models import sequence_logprobs

    model = init_model(tiny_config(dtype="bfloat16", param_dtype="float32"), seed=3)
    small = Trainer(model, OptimConfig(), OBJECTIVE, reference=True)
    full = Trainer(model, OptimConfig(), OBJECTIVE, reference=True, reference_dtype="float32")
    assert {x.dtype for x in jax.tree.leaves(small.ref_params)} == {np.dtype("bfloat16")}
    assert {x.dtype for x in jax.tree.leaves(full.ref_params)} == {np.dtype("float32")}
    tokens = np.asarray(random_rows(2, seed=4)[0].tokens[None, :64])
    pos = np.arange(64)[None]

    def logp(params: object) -> np.ndarray:
        ref = nnx.merge(small.graphdef, params)
        return np.asarray(sequence_logprobs(ref, tokens, pos))

    np.testing.assert_array_equal(logp(small.ref_params), logp(full.ref_params))
    f32 = Trainer(init_model(tiny_config(), seed=3), OptimConfig(), OBJECTIVE, reference=True)
    assert {x.dtype for x in jax.tree.leaves(f32.ref_params)} == {np.dtype("float32")}
