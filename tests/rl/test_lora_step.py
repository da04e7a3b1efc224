"""The train step with LoRA (rl/step.py + models/lora.py): only adapters get gradients and Adam
state, the frozen base is untouched, and GRPO's reference is that base, not a copy of it."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from prove_jax.models import init_model, make_mesh
from prove_jax.models.lora import PROJECTIONS, LoraConfig, adapter_state, apply_lora
from prove_jax.rl.batch import length_buckets, micro_batches
from prove_jax.rl.losses import LossConfig
from prove_jax.rl.objectives import GRPOObjective, SFTObjective, _logprobs
from prove_jax.rl.step import OptimConfig, Trainer, bind
from tests.rl.rl_testlib import random_rows, tiny_config

OPTIM = OptimConfig(lr=3e-3, warmup_steps=0, decay_steps=10, weight_decay=0.01, clip_norm=1.0)
GRPO = GRPOObjective(LossConfig(kl_coef=0.05, eps_high=0.28), temperature=0.9)
BUCKETS = length_buckets(256, 64)
LORA = LoraConfig(rank=4, alpha=8.0)


def _batches(trainer: Trainer, seed: int, n: int = 8) -> tuple[list, object]:
    mbs, p = micro_batches(random_rows(n, seed=seed), 4, BUCKETS)
    return mbs, trainer.denominators(p.tokens, p.seqs)


def _shapes(tree: object) -> list[tuple[int, ...]]:
    return sorted(tuple(x.shape) for x in jax.tree.leaves(tree))


@pytest.mark.parametrize("quant", [None, "int8", "nf4"])
def test_only_the_adapters_get_gradients_and_optimizer_state(quant):
    base = init_model(tiny_config(), seed=1)
    model = apply_lora(base, LoraConfig(rank=4, alpha=8.0, quant=quant))
    frozen_before = [np.asarray(x) for x in jax.tree.leaves(nnx.state(model, nnx.Not(nnx.LoRAParam)))]
    tr = Trainer(model, OPTIM, GRPO, reference=True)
    adapters = _shapes(adapter_state(model))
    n = 2 * len(PROJECTIONS) * model.config.num_layers
    assert len(adapters) == n and _shapes(tr.params) == adapters

    mbs, den = _batches(tr, seed=3)
    grads = tr.gradients(mbs, den)["grads"]
    assert _shapes(grads) == adapters  # no base gradient is even computed
    b_grads = [np.asarray(g) for p, g in nnx.to_flat_state(grads) if str(p[-1]).endswith("_lora_b")]
    assert len(b_grads) == n // 2 and all(np.abs(g).max() > 0 for g in b_grads)  # B = 0: A's are 0, B's not
    # AdamW: mu and nu per adapter, the rest scalars (counts)
    moments = [x for x in jax.tree.leaves(tr.state.opt_state) if x.ndim > 0]
    assert len(moments) == 2 * n and _shapes(moments) == sorted(adapters * 2)

    adapters_before = [np.asarray(x) for x in jax.tree.leaves(tr.params)]  # the step donates them
    metrics = tr.step(mbs, den)
    assert metrics["skipped"] == 0.0 and metrics["kl"] == 0.0  # B = 0: the policy is the reference
    frozen_after = [np.asarray(x) for x in jax.tree.leaves(tr.ref_params)]
    assert len(frozen_after) == len(frozen_before)
    for x, y in zip(frozen_before, frozen_after, strict=True):
        np.testing.assert_array_equal(x, y)
    moved = [np.abs(np.asarray(a) - b).max() for a, b in zip(jax.tree.leaves(tr.params), adapters_before, strict=True)]
    assert min(moved) > 0  # every adapter moved (B by its gradient, A by weight decay and then B's)
    assert tr.step(*_batches(tr, seed=4))["kl"] > 0


def test_the_reference_is_the_frozen_base_not_a_copy():
    base = init_model(tiny_config(), seed=2)
    tr = Trainer(apply_lora(base, LORA), OPTIM, GRPO, reference=True)
    base_arrays = {id(x) for x in jax.tree.leaves(nnx.state(base))}
    assert all(id(x) in base_arrays for x in jax.tree.leaves(tr.ref_params))  # the base's own buffers
    for k in range(2):
        tr.step(*_batches(tr, seed=10 + k))
    tokens = jnp.asarray(random_rows(2, seed=7, lengths=(64, 65))[0].tokens[None])
    policy, ref = bind(tr.static, tr.params, tr.ref_params)
    assert ref is not None and not jax.tree.leaves(adapter_state(ref))
    want = np.asarray(_logprobs(base, tokens, 0.9))
    np.testing.assert_array_equal(np.asarray(_logprobs(ref, tokens, 0.9)), want)
    assert np.abs(np.asarray(_logprobs(policy, tokens, 0.9)) - want).max() > 1e-4  # and training moved the policy
    assert np.abs(np.asarray(_logprobs(tr.model(), tokens, 0.9)) - want).max() > 1e-4


def test_sft_with_lora_needs_no_reference():
    tr = Trainer(apply_lora(init_model(tiny_config(), seed=3), LORA), OPTIM, SFTObjective())
    assert bind(tr.static, tr.params, tr.ref_params)[1] is None
    losses = [tr.step(*_batches(tr, seed=20))["loss"] for _ in range(3)]
    assert losses[-1] < losses[0]


def test_sharded_lora_step_equals_single_device():
    rows = random_rows(16, seed=5)
    single = Trainer(apply_lora(init_model(tiny_config(), seed=4), LORA), OPTIM, GRPO, reference=True)
    mesh = make_mesh("fsdp=4,tensor=2")
    sharded = Trainer(apply_lora(init_model(tiny_config(), seed=4, mesh=mesh), LORA), OPTIM, GRPO, reference=True)
    assert any(len(set(x.sharding.spec) - {None}) for x in jax.tree.leaves(sharded.params))  # adapters sharded
    for k in range(2):
        out = []
        for tr in (single, sharded):
            mbs, p = micro_batches(rows[k::2], 4, BUCKETS)
            out.append(tr.step(mbs, tr.denominators(p.tokens, p.seqs)))
        for key in out[0]:
            assert out[1][key] == pytest.approx(out[0][key], rel=1e-5, abs=1e-6), key
    for a, b in zip(jax.tree.leaves(jax.device_get(single.state)), jax.tree.leaves(jax.device_get(sharded.state)),
                    strict=True):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=0, atol=1e-5)


def test_a_checkpoint_holds_the_adapters_and_their_moments_only(tmp_path):
    """The train state is adapters + AdamW: a LoRA checkpoint is small and restores onto the base."""
    from prove_jax.checkpoint import CheckpointConfig, Checkpointer, flatten

    base = init_model(tiny_config(), seed=5)
    tr = Trainer(apply_lora(base, LORA), OPTIM, SFTObjective())
    tr.step(*_batches(tr, seed=30))
    names, _ = flatten(tr.state)
    assert all("_lora_" in k for k in names if k.startswith("params.")) and len(names) > 2 * len(PROJECTIONS)
    ckpt = Checkpointer(tmp_path / "ckpt", CheckpointConfig(async_save=False))
    ckpt.save(1, tr.state, {"note": "lora"}, force=True)
    fresh = Trainer(apply_lora(base, LORA), OPTIM, SFTObjective())
    state, meta, step = ckpt.restore(fresh.state)
    assert step == 1 and meta == {"note": "lora"}
    for a, b in zip(jax.tree.leaves(jax.device_get(tr.state)), jax.tree.leaves(jax.device_get(state)), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    fresh.state = state
    tokens = jnp.asarray(random_rows(1, seed=8, lengths=(40, 41))[0].tokens[None])
    np.testing.assert_array_equal(np.asarray(_logprobs(fresh.model(), tokens)), np.asarray(_logprobs(tr.model(), tokens)))
    ckpt.close()


def _accumulate_scratch(tr: Trainer) -> int:
    mbs, den = _batches(tr, seed=40, n=4)
    placed = tr.place(mbs[0])
    tr._metric_names(placed, den)
    acc = tr._zeros(tr.state.params, tr.metric_names)
    compiled = tr._accumulate.lower(tr.static, tr.state.params, tr.ref_params, acc, placed, den).compile()
    return compiled.memory_analysis().temp_size_in_bytes


def test_a_qlora_step_keeps_no_float_copy_of_the_base():
    """The backward pass dequantises again (layers._dequantized_dense is rematerialised): kept from
    the forward, every projection's f32 weights would sit in the step's scratch."""
    base = init_model(tiny_config(), seed=6)
    lora = _accumulate_scratch(Trainer(apply_lora(base, LORA), OPTIM, SFTObjective()))
    qlora = _accumulate_scratch(Trainer(apply_lora(base, LoraConfig(rank=4, alpha=8.0, quant="nf4")), OPTIM,
                                        SFTObjective()))
    projections = sum(getattr(getattr(layer, owner), n).size * 4 for layer in base.layers
                      for n, (owner, _) in PROJECTIONS.items())
    assert qlora <= lora + projections // 4, (qlora, lora, projections)


@pytest.mark.parametrize("quant", [None, "nf4"])
def test_the_engine_gets_merged_weights_in_its_dtype_from_one_program(quant):
    """With LoRA the weight sync merges ``W + (alpha/r) B A`` (dequantising a QLoRA base) inside its
    transfer program: the engine's params equal a plain sync of ``merge_lora`` of the trained model,
    and the engine decodes a plain model (no adapters, no codes)."""
    from prove_jax.engine.weights import WeightSync
    from prove_jax.models.lora import has_adapters, merge_lora

    cfg = tiny_config().replace(scan_layers=True)
    tr = Trainer(apply_lora(init_model(cfg, seed=5), LoraConfig(rank=4, alpha=8.0, quant=quant)), OPTIM, GRPO)
    tr.step(*_batches(tr, seed=6))  # B != 0 now: the merge matters
    sync = WeightSync(tr.model_config, tr.sync_source, dtype="bfloat16", merge=tr.merge_fn())
    assert not sync.zero_copy and sync.describe()["mode"].startswith("LoRA merge")
    got = sync(tr.sync_source)
    merged = merge_lora(tr.model())
    want = WeightSync(merged.config, nnx.split(merged)[1], dtype="bfloat16")(nnx.split(merged)[1])
    assert jax.tree.structure(got) == jax.tree.structure(want)
    for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True):
        assert a.dtype == jnp.bfloat16
        np.testing.assert_array_equal(np.asarray(a.astype(jnp.float32)), np.asarray(b.astype(jnp.float32)))
    engine = sync.engine_model(tr.sync_source)
    assert not has_adapters(engine) and not engine.config.scan_layers
    # the merge is not a no-op: the base alone differs
    plain = merge_lora(apply_lora(init_model(cfg, seed=5), LoraConfig(rank=4, alpha=8.0, quant=quant)))
    base = WeightSync(plain.config, nnx.split(plain)[1], dtype="bfloat16")(nnx.split(plain)[1])
    assert any(np.abs(np.asarray(a, np.float32) - np.asarray(b, np.float32)).max() > 0
               for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(base), strict=True))
    with pytest.raises(ValueError, match="structure"):
        WeightSync(tr.model_config, tr.sync_source, merge=lambda src: src[0])
