"""KV cache layout: per-row write index, independent row prefill (continuous batching), reset."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from models_testlib import CAPACITY, PREFILL, batch, cached_step, forward, j

from prove_jax.models import KVCache, load_hf


@pytest.fixture(scope="module")
def model(hf_cases):
    return load_hf(hf_cases["granite"].path, dtype=jnp.float32)


def test_cache_bookkeeping(model):
    tokens, mask, positions = batch()
    cache = KVCache.init(model.config, 2, CAPACITY)
    assert len(cache.k) == 2 and not cache.stacked  # one [B, KV, S, D] buffer per layer
    assert cache.k[0].shape == (2, 2, CAPACITY, 16) and cache.k[0].dtype == jnp.float32
    assert (np.asarray(cache.pos) == -1).all() and (np.asarray(cache.end) == 0).all()
    _, cache = cached_step(model, *j(tokens[:, :PREFILL], positions[:, :PREFILL], mask[:, :PREFILL]), cache)
    pos = np.asarray(cache.pos)
    np.testing.assert_array_equal(np.asarray(cache.end), [PREFILL, PREFILL])
    np.testing.assert_array_equal(pos[0, :PREFILL], np.arange(PREFILL))
    np.testing.assert_array_equal(pos[1, :PREFILL], [-1, -1, -1, 0, 1, 2, 3, 4])  # left pads masked
    assert (pos[:, PREFILL:] == -1).all()
    np.testing.assert_array_equal(np.asarray(cache.next_positions()), [PREFILL, PREFILL - 3])
    reset = cache.reset_rows(jnp.array([False, True]))
    np.testing.assert_array_equal(np.asarray(reset.end), [PREFILL, 0])
    assert (np.asarray(reset.pos)[1] == -1).all() and (np.asarray(reset.pos)[0] == pos[0]).all()


def test_row_prefilled_independently_then_inserted(model):
    """Row 1 is prefilled alone in a 1-row cache and copied in: decoding matches a full forward."""
    tokens, mask, positions = batch()
    ref = np.asarray(forward(model, *j(tokens, positions, mask)))

    big = KVCache.init(model.config, 2, CAPACITY)
    # Row 0's prefill happens in the batch cache; row 1 is a dummy (all padding) there.
    dummy_mask = mask[:, :PREFILL].copy()
    dummy_mask[1] = False
    _, big = cached_step(model, *j(tokens[:, :PREFILL], positions[:, :PREFILL], dummy_mask), big)
    # Row 1 (with its own 3 left pads) is prefilled independently, then inserted.
    small = KVCache.init(model.config, 1, CAPACITY)
    logits_row1, small = cached_step(
        model, *j(tokens[1:, :PREFILL], positions[1:, :PREFILL], mask[1:, :PREFILL]), small
    )
    np.testing.assert_allclose(
        np.asarray(logits_row1)[0][mask[1, :PREFILL]], ref[1, :PREFILL][mask[1, :PREFILL]], atol=1e-5
    )
    big = big.reset_rows(jnp.array([False, True])).set_row(1, small)
    np.testing.assert_array_equal(np.asarray(big.row(1).pos), np.asarray(small.pos))
    outs = []
    for t in range(PREFILL, tokens.shape[1]):
        sl = slice(t, t + 1)
        logits, big = cached_step(model, *j(tokens[:, sl], positions[:, sl], mask[:, sl]), big)
        outs.append(np.asarray(logits))
    decoded = np.concatenate(outs, axis=1)
    np.testing.assert_allclose(decoded, ref[:, PREFILL:], atol=1e-5)
    with pytest.raises(ValueError, match="1-row cache"):
        big.set_row(0, big)


def test_idle_rows_do_not_disturb_others(model):
    """Decoding with row 1 masked (idle) leaves row 0's logits unchanged and row 1's cache unreachable."""
    tokens, mask, positions = batch()
    cache = KVCache.init(model.config, 2, CAPACITY)
    _, cache = cached_step(model, *j(tokens[:, :PREFILL], positions[:, :PREFILL], mask[:, :PREFILL]), cache)
    step = (tokens[:, PREFILL : PREFILL + 1], positions[:, PREFILL : PREFILL + 1])
    a, _ = cached_step(model, *j(*step, np.array([[True], [True]])), cache)
    b, cache_b = cached_step(model, *j(*step, np.array([[True], [False]])), cache)
    np.testing.assert_array_equal(np.asarray(a)[0], np.asarray(b)[0])
    assert np.asarray(cache_b.pos)[1, PREFILL] == -1 and np.asarray(cache_b.pos)[0, PREFILL] == PREFILL
    assert np.isfinite(np.asarray(b)).all()
