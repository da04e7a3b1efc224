"""CPU attention (``head_major_attention``): causal query blocks against
``jax.nn.dot_product_attention``, values and gradients, with either mask layout.

A query row with every key masked (a padding query) is finite either way but not comparable: it
gets uniform weights over the keys its block computes, the reference over all keys.  Such rows
feed only padding positions, so they are checked for finiteness and left out of the comparison.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from prove_jax.models.layers import head_major_attention

B, T, N, D = 2, 11, 2, 8


def _inputs() -> tuple[jax.Array, ...]:
    rng = np.random.default_rng(0)
    return tuple(jnp.asarray(rng.standard_normal((B, T, N, D)), jnp.float32) for _ in range(4))


def _masks() -> dict[str, jax.Array]:
    pad = np.ones((B, T), bool)
    pad[1, :4] = False  # left padding on row 1
    rows = np.broadcast_to(pad[:, None, None, :], (B, 1, T, T)).copy()
    rows[0, 0, 5, :3] = False  # a per-query mask entry the key-padding layout cannot express
    return {"keys": jnp.asarray(pad[:, None, None, :]), "rows": jnp.asarray(rows), "none": None}


@pytest.mark.parametrize("mask_kind", ["keys", "rows", "none"])
@pytest.mark.parametrize("query_block", [6, 4, 1, 64])  # T=11 as 6+5, 4+4+3, 2-row blocks (capped), one
def test_causal_query_blocks_match_dot_product_attention(mask_kind: str, query_block: int) -> None:
    q, k, v, g = _inputs()
    mask = _masks()[mask_kind]
    scale = D**-0.5
    keep = np.tril(np.ones((T, T), bool))[None, None] & (True if mask is None else np.asarray(mask))
    seen = np.broadcast_to(keep.any(-1)[:, 0], (B, T))  # query rows with at least one visible key
    assert not seen.all() or mask_kind == "none"  # the test does contain fully masked rows
    g = g * jnp.asarray(seen)[:, :, None, None]

    def ours(q, k, v):
        return head_major_attention(q, k, v, mask, True, scale, query_block=query_block)

    def reference(q, k, v):
        return jax.nn.dot_product_attention(q, k, v, mask=mask, scale=scale, is_causal=True, implementation="xla")

    # values and the gradients of sum(out * g) from one vjp each
    out, ours_vjp = jax.vjp(ours, q, k, v)
    ref, ref_vjp = jax.vjp(reference, q, k, v)
    assert np.isfinite(np.asarray(out)).all()
    np.testing.assert_allclose(np.asarray(out)[seen], np.asarray(ref)[seen], atol=1e-6)
    ours_grads, ref_grads = ours_vjp(g), ref_vjp(g)
    for name, a, b in zip("qkv", ours_grads, ref_grads, strict=True):
        assert np.abs(np.asarray(b)).max() > 0, name
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=1e-5, err_msg=name)


def test_non_causal_attention_is_one_block() -> None:
    q, k, v, _ = _inputs()
    mask = _masks()["keys"]
    out = head_major_attention(q, k, v, mask, False, 0.3, query_block=4)
    ref = jax.nn.dot_product_attention(q, k, v, mask=mask, scale=0.3, is_causal=False, implementation="xla")
    np.testing.assert_allclose(np.asarray(out), np.asarray(ref), atol=1e-6)
