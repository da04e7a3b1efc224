"""Attention over the KV cache, read in blocks up to the furthest slot any row can see.

Why blocks, and why a dynamic trip count: the cache is dense (``capacity`` slots per row, sized
for the longest transcript), but rows mostly hold far fewer tokens.  Attending over the whole
capacity made every decode step read all of it (at a 28.7k capacity and rows of a few thousand
tokens, 5-10x more bytes than the rows hold) and made a prefill chunk of ``C`` tokens materialise
``[B, KV, g*C, capacity]`` f32 scores (~2 GB per row per layer at C=512, 29k slots, 32 heads).
Here the slots are visited ``kv_block`` at a time with an online (flash-style) softmax, and the
loop stops after the block holding slot ``max(start) + T - 1``: the mask is causal by slot, so
no query of any row can see a slot past that, and the blocks beyond are never read.  The bound
is a traced value (a ``while`` loop), so one compiled step serves every fill level.

Scanned models keep one stacked ``[L, B, KV, S, D]`` buffer carried by the layer scan; the
attention is handed that buffer and the layer index, writes the new tokens straight into it
(``dynamic_update_slice``: in place) and reads its blocks with ``dynamic_slice`` — slicing the
layer out first would copy the layer's whole cache on every step.

Numerics: f32 scores (the dots accumulate in f32), scale, masked scores set to a finite large
negative, running max / sum / output accumulated in f32, probabilities cast to the value dtype
for the value product (f32 accumulation).  For an f32 model the result equals the dense
formula up to f32 summation order.  A query row whose every visible slot is masked (a padding
query) gets uniform weights over the slots visited instead of over the whole capacity: finite,
and such rows only feed padding positions.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax
import jax.numpy as jnp

from prove_jax.models.cache import KV_BLOCK, slot_keep, write_rows

MASKED_SCORE = -0.7 * float(jnp.finfo(jnp.float32).max)
"""Score of a masked slot: finite, so a query row with every slot masked gets uniform weights
(``exp(0)``) rather than NaN, and a real score makes every masked term exactly ``exp(-huge) = 0``."""


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class KVWrite:
    """What a layer needs to write its new tokens into the cache and attend over it.

    ``k``/``v``: one layer's ``[B, KV, S, D]`` buffers, or the stacked ``[L, B, KV, S, D]``
    buffers of a scanned model with ``layer`` (a traced int32) naming the layer.  ``start``:
    ``int32 [B]``, the first slot each row writes.  ``pos``: ``int32 [B, S]``, the slots' position
    ids *after* this write (-1 = masked), from :meth:`KVCache.plan_write`.  ``kv_block``: slots
    per block of the read (the cache's own ``kv_block``).
    """

    k: jax.Array
    v: jax.Array
    start: jax.Array
    pos: jax.Array
    layer: jax.Array | None = None
    kv_block: int = dataclasses.field(default=KV_BLOCK, metadata={"static": True})
    end: jax.Array | None = None  # int32 [B]: each row's ``end`` after the write

    # the decoder's buffer protocol (shared with ``paged.PagedWrite``): what one layer gets
    def layer_bufs(self, i: int) -> tuple[jax.Array, jax.Array]:
        return self.k[i], self.v[i]

    def stacked_bufs(self) -> tuple[jax.Array, jax.Array]:
        return self.k, self.v

    def for_layer(self, bufs: tuple[jax.Array, jax.Array], layer: jax.Array | None) -> KVWrite:
        return dataclasses.replace(self, k=bufs[0], v=bufs[1], layer=layer)


def kv_block_count(start: jax.Array, t: int, capacity: int, kv_block: int = KV_BLOCK) -> jax.Array:
    """``int32 []``: the number of ``kv_block``-slot blocks the attention visits.

    Query ``t'`` of row ``b`` sits at slot ``start[b] + t'`` and sees only slots up to it, so the
    furthest slot any query sees is ``max(start) + t - 1``: the blocks up to the one holding it.
    """
    kb = min(kv_block, capacity)
    needed = jnp.max(start).astype(jnp.int32) + t
    return jnp.clip((needed + kb - 1) // kb, 1, math.ceil(capacity / kb)).astype(jnp.int32)


def write_tokens(buf: jax.Array, new: jax.Array, start: jax.Array, layer: jax.Array | None) -> jax.Array:
    """Write ``new: [B, T, KV, D]`` at slot ``start[b]`` of each row, into a layer buffer
    ``[B, KV, S, D]`` or into layer ``layer`` of a stacked ``[L, B, KV, S, D]`` one; only the new
    entries are touched, so XLA updates a donated (or scan-carried) buffer in place.

    The stacked write is one scatter indexed ``[layer, b, :, start[b] + t, :]`` on the buffer as it
    lies: a ``vmap`` of ``dynamic_update_slice`` over its batch axis (axis 1) made XLA transpose
    the whole stack to batch-major and back, and change the carried buffer's layout, on every
    layer of every step (a tiny scanned model's decode step was ~50x slower than unscanned).
    Out-of-range slots are dropped (the caller keeps ``start[b] + T <= S``).
    """
    new = new.astype(buf.dtype)
    if layer is None:
        return write_rows(buf, new.transpose(0, 2, 1, 3), start, axis=2)
    b, t = new.shape[:2]
    rows = jnp.arange(b, dtype=jnp.int32)[:, None]  # [B, 1]
    slots = start.astype(jnp.int32)[:, None] + jnp.arange(t, dtype=jnp.int32)[None, :]  # [B, T]
    # advanced indices (layer, rows, slots) broadcast to [B, T] and lead: the update is [B, T, KV, D]
    return buf.at[layer.astype(jnp.int32), rows, :, slots, :].set(new, mode="drop", unique_indices=True)


def _read_block(buf: jax.Array, layer: jax.Array | None, slot0: jax.Array, size: int) -> jax.Array:
    """Slots ``slot0 .. slot0 + size - 1`` of every row: ``[B, KV, size, D]``."""
    if layer is None:
        return jax.lax.dynamic_slice_in_dim(buf, slot0, size, axis=2)
    _, b, kv, _, d = buf.shape
    zero = jnp.int32(0)
    blk = jax.lax.dynamic_slice(buf, (layer.astype(jnp.int32), zero, zero, slot0, zero), (1, b, kv, size, d))
    return blk[0]


def blocked_attention(
    q: jax.Array,
    k_buf: jax.Array,
    v_buf: jax.Array,
    pos: jax.Array,
    start: jax.Array,
    scale: float,
    layer: jax.Array | None = None,
    kv_block: int = KV_BLOCK,
) -> jax.Array:
    """GQA attention of ``q: [B, T, H, D]`` over the cache, ``kv_block`` slots at a time, visiting
    only :func:`kv_block_count` blocks; returns ``[B, T, H, D]`` in ``q``'s dtype.

    ``k_buf``/``v_buf`` are ``[B, KV, S, D]`` or, with ``layer``, stacked ``[L, B, KV, S, D]``.
    Query ``t`` of row ``b`` attends to slot ``j`` iff ``j <= start[b] + t`` and ``pos[b, j] >= 0``
    (:func:`~prove_jax.models.cache.slot_keep`).  Both dots keep the cache in its stored layout
    (batch dims ``B, KV`` leading), so no block is transposed or repeated over query groups.
    When ``S`` is not a multiple of the block, the last block is read at ``S - kv_block`` and
    its slots already visited are masked out.
    """
    b, t, h, d = q.shape
    s_cap = pos.shape[1]
    kv = k_buf.shape[-3]
    g = h // kv
    kb = min(kv_block, s_cap)
    n_blocks = kv_block_count(start, t, s_cap, kb)
    qg = q.reshape(b, t, kv, g, d).transpose(0, 2, 3, 1, 4).reshape(b, kv, g * t, d)
    scale32 = jnp.asarray(scale, jnp.float32)
    offsets = jnp.arange(kb, dtype=jnp.int32)

    def body(i: jax.Array, carry: tuple[jax.Array, jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array, jax.Array]:
        m, denom, acc = carry  # [B, KV, g, T], [B, KV, g, T], [B, KV, g*T, D]  (f32)
        first = i * kb  # slots before it were visited by earlier blocks
        slot0 = jnp.minimum(first, s_cap - kb)  # the last block is read flush with the end
        slots = slot0 + offsets
        k_blk = _read_block(k_buf, layer, slot0, kb)
        v_blk = _read_block(v_buf, layer, slot0, kb)
        pos_blk = jax.lax.dynamic_slice_in_dim(pos, slot0, kb, axis=1)
        keep = slot_keep(pos_blk, slots, start, t) & (slots >= first)[None, None, :]  # [B, T, kb]
        sc = jnp.einsum("bkqd,bksd->bkqs", qg, k_blk.astype(q.dtype), preferred_element_type=jnp.float32)
        sc = sc.reshape(b, kv, g, t, kb) * scale32
        sc = jnp.where(keep[:, None, None], sc, MASKED_SCORE)
        m_new = jnp.maximum(m, jnp.max(sc, axis=-1))
        corr = jnp.exp(m - m_new)
        p = jnp.exp(sc - m_new[..., None])
        denom = denom * corr + jnp.sum(p, axis=-1)
        pv = jnp.einsum("bkqs,bksd->bkqd", p.reshape(b, kv, g * t, kb).astype(v_blk.dtype), v_blk,
                        preferred_element_type=jnp.float32)
        acc = acc * corr.reshape(b, kv, g * t, 1) + pv
        return m_new, denom, acc

    init = (
        jnp.full((b, kv, g, t), MASKED_SCORE, jnp.float32),
        jnp.zeros((b, kv, g, t), jnp.float32),
        jnp.zeros((b, kv, g * t, d), jnp.float32),
    )
    _, denom, acc = jax.lax.fori_loop(jnp.int32(0), n_blocks, body, init)
    o = acc / denom.reshape(b, kv, g * t, 1)
    return o.reshape(b, kv, g, t, d).transpose(0, 3, 1, 2, 4).reshape(b, t, h, d).astype(q.dtype)


def _dense_cudnn(q: jax.Array, write: KVWrite, scale: float) -> jax.Array:
    """The cuDNN kernel over the whole capacity (it takes ``[B, S, KV, D]`` keys, so the layer's
    cache is transposed for it; a stacked buffer's layer is sliced out first)."""
    k_buf, v_buf = write.k, write.v
    if write.layer is not None:
        k_buf = jax.lax.dynamic_index_in_dim(k_buf, write.layer, 0, keepdims=False)
        v_buf = jax.lax.dynamic_index_in_dim(v_buf, write.layer, 0, keepdims=False)
    s_cap = write.pos.shape[1]
    mask = slot_keep(write.pos, jnp.arange(s_cap, dtype=jnp.int32), write.start, q.shape[1])[:, None]
    kt, vt = k_buf.transpose(0, 2, 1, 3), v_buf.transpose(0, 2, 1, 3)
    return jax.nn.dot_product_attention(q, kt.astype(q.dtype), vt.astype(q.dtype), mask=mask, scale=scale,
                                        implementation="cudnn")


def cached_attention(
    q: jax.Array,
    k: jax.Array,
    v: jax.Array,
    write: Any,
    scale: float,
    impl: str | None = None,
) -> tuple[jax.Array, Any]:
    """Write the new post-RoPE ``k, v: [B, T, KV, D]`` into the cache, then attend ``q: [B, T, H, D]``
    over it.  Returns the output ``[B, T, H, D]`` and the updated buffers (in the form given:
    per layer or stacked).  ``impl="cudnn"`` runs cuDNN over the whole capacity.  A paged cache's
    write (``paged.PagedWrite``) goes to the paged attention (its own kernel choice)."""
    from prove_jax.models.paged import PagedWrite, paged_cached_attention

    if isinstance(write, PagedWrite):
        return paged_cached_attention(q, k, v, write, scale)
    start = write.start
    k_buf = write_tokens(write.k, k, start, write.layer)
    v_buf = write_tokens(write.v, v, start, write.layer)
    written = dataclasses.replace(write, k=k_buf, v=v_buf)
    if impl == "cudnn":
        out = _dense_cudnn(q, written, scale)
    else:
        out = blocked_attention(q, k_buf, v_buf, write.pos, start, scale, write.layer, write.kv_block)
    return out, (k_buf, v_buf)
