"""Logits parity against transformers (torch CPU, eager attention, float32) on tiny random models."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx
from models_testlib import FAMILIES, SEQ, batch, cached_step, forward, j, prefill_decode

from prove_jax.models import KVCache, load_hf
from prove_jax.models.layers import CAUSAL_QUERY_BLOCK

TOL = 1e-4


# Scanned + remat variants: qwen3 (qk-norm) and granite_bias (every optional tensor) cover the
# stacked mapping of all tensor kinds; fewer variants keep the suite's compile time down.
SCANNED = ("qwen3", "granite_bias")


@pytest.fixture(scope="module")
def models(hf_cases):
    """f32 JAX models loaded from the HF directories: unrolled, and scanned + remat."""
    plain = {n: load_hf(c.path, dtype=jnp.float32) for n, c in hf_cases.items()}
    scanned = {
        n: load_hf(hf_cases[n].path, dtype=jnp.float32, scan_layers=True, remat="full") for n in SCANNED
    }
    return plain, scanned


@pytest.fixture(scope="module")
def reference(hf_cases):
    tokens, mask, positions = batch()
    return {n: c.logits(tokens, mask, positions) for n, c in hf_cases.items()}


def _max_diff(ours: np.ndarray, ref: np.ndarray, mask: np.ndarray) -> float:
    assert ours.shape == ref.shape
    assert np.isfinite(ours).all()
    return float(np.abs(ours - ref)[mask].max())


@pytest.mark.parametrize("name", FAMILIES)
def test_full_forward_matches_transformers(name, models, reference):
    tokens, mask, positions = batch()
    logits = forward(models[0][name], *j(tokens, positions, mask))
    assert logits.dtype == jnp.float32
    # Logits spread >> tolerance, so the comparison is not vacuous (Granite divides by 16).
    assert np.abs(reference[name][mask]).std() > 100 * TOL
    assert _max_diff(np.asarray(logits), reference[name], mask) <= TOL


@pytest.mark.parametrize("name", FAMILIES)
def test_prefill_then_decode_matches_transformers(name, models, reference):
    tokens, mask, positions = batch()
    assert SEQ - 8 >= 4  # >= 4 cached decode steps after an 8-token prefill
    logits = prefill_decode(models[0][name], tokens, mask, positions)
    assert _max_diff(logits, reference[name], mask) <= TOL


@pytest.mark.parametrize("name", SCANNED)
def test_scanned_remat_model_matches_transformers(name, models, reference):
    tokens, mask, positions = batch()
    model = models[1][name]
    assert model.layers.attn.q_proj.shape[0] == 2  # params stacked on the layers axis
    logits = forward(model, *j(tokens, positions, mask))
    assert _max_diff(np.asarray(logits), reference[name], mask) <= TOL
    if name == "qwen3":
        assert _max_diff(prefill_decode(model, tokens, mask, positions), reference[name], mask) <= TOL


def test_long_causal_attention_in_query_blocks_matches_transformers(models, hf_cases):
    """150 tokens with left padding: CPU attention runs in 3 causal query blocks (only the key
    prefix each block can see); logits still match transformers."""
    seq = 150
    assert seq > 2 * CAUSAL_QUERY_BLOCK  # the blocked path, not the single-block one
    tokens, mask, positions = batch(seed=1, seq=seq)
    for name in ("qwen3", "granite_bias"):
        ours = np.asarray(forward(models[0][name], *j(tokens, positions, mask)))
        ref = hf_cases[name].logits(tokens, mask, positions)
        assert _max_diff(ours, ref, mask) <= TOL, name


def test_qwen3_head_dim_differs_from_hidden_over_heads(models):
    cfg = models[0]["qwen3"].config
    assert cfg.head_dim == 32 != cfg.hidden_size // cfg.num_heads
    assert models[0]["qwen3"].layers[0].attn.q_proj.shape == (4, 32, 64)  # [heads, head_dim, embed]


def test_tied_and_untied_heads(models):
    assert models[0]["qwen2"].config.tie_word_embeddings is False and hasattr(models[0]["qwen2"], "lm_head")
    assert models[0]["granite_bias"].config.tie_word_embeddings is False
    for name in ("qwen3", "granite"):
        assert models[0][name].config.tie_word_embeddings is True
        assert not hasattr(models[0][name], "lm_head")


def _loss(model, tokens, positions, mask):
    logits = model(tokens, positions, attention_mask=mask)[0]
    logp = jax.nn.log_softmax(logits, axis=-1)
    picked = jnp.take_along_axis(logp[:, :-1], tokens[:, 1:, None], axis=-1)[..., 0]
    w = (mask[:, 1:] & mask[:, :-1]).astype(jnp.float32)
    return -(picked * w).sum() / jnp.maximum(w.sum(), 1.0)


@nnx.jit
def _value_and_grad(model, tokens, positions, mask):
    return nnx.value_and_grad(_loss)(model, tokens, positions, mask)


def test_padding_never_produces_nan_and_remat_grads_match(models):
    """A fully padded row and left padding: finite logits, loss and gradients; remat/scan grads equal."""
    tokens, mask, positions = batch()
    mask[0, :] = False  # row 0 is padding only
    positions = np.maximum(np.cumsum(mask, axis=1) - 1, 0).astype(np.int32)
    args = j(tokens, positions, mask)
    loss_a, grads_a = _value_and_grad(models[0]["qwen3"], *args)
    loss_b, grads_b = _value_and_grad(models[1]["qwen3"], *args)
    assert np.isfinite(float(loss_a)) and abs(float(loss_a) - float(loss_b)) < 1e-5
    flat_a = {"/".join(map(str, p)): np.asarray(v[...]) for p, v in nnx.to_flat_state(grads_a)}
    flat_b = {"/".join(map(str, p)): np.asarray(v[...]) for p, v in nnx.to_flat_state(grads_b)}
    for key, g in flat_a.items():
        assert np.isfinite(g).all(), key
    # Unrolled layer 1's q_proj grad equals slice 1 of the scanned stack.
    qa = flat_a["layers/1/attn/q_proj"]
    qb = flat_b["layers/attn/q_proj"][1]
    assert np.abs(qa).max() > 0
    np.testing.assert_allclose(qa, qb, atol=1e-6)
    # The padded row's logits are finite through the cache path too.
    cache = KVCache.init(models[0]["qwen3"].config, tokens.shape[0], 16)
    logits, cache = cached_step(models[0]["qwen3"], *args, cache)
    assert np.isfinite(np.asarray(logits)).all()
    assert np.isfinite(np.asarray(cache.k)).all()


def test_bfloat16_model_close_to_float32_reference(hf_cases, reference):
    """bf16 params/activations, f32 logits: drift vs the f32 reference stays at bf16 rounding level."""
    model = load_hf(hf_cases["qwen2"].path, dtype=jnp.bfloat16)
    assert model.layers[0].attn.q_proj[...].dtype == jnp.bfloat16
    tokens, mask, positions = batch()
    logits = forward(model, *j(tokens, positions, mask))
    assert logits.dtype == jnp.float32
    ref = reference["qwen2"]
    diff = np.abs(np.asarray(logits) - ref)[mask]
    # bf16 has 8 mantissa bits: relative error ~4e-3 per op; a 2-layer model stays within ~3%.
    assert diff.max() <= 0.03 * np.abs(ref).max()
    assert diff.max() > 0  # it really ran in bf16
