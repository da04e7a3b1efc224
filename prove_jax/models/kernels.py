"""The field's paged-attention kernels over our page pool (``paged.py``), and which one runs where.

* TPU: ``jax.experimental.pallas.ops.tpu.ragged_paged_attention`` (ships with jax; prefill and
  decode in one ragged call).  Our pool is already its ``[pages, page_size, 2 * KV, D]`` layout
  (K at even, V at odd combined heads), so the call copies nothing.  Its block sizes are passed
  explicitly: its tuned table reads ``jax.devices()``, which is the CPU in a deviceless compile.
* Everywhere else, and for shapes the kernel refuses: the XLA work-list path
  (``paged.paged_attention_xla``), which also reads only live pages.

:func:`choose_kernel` decides once per engine and says why; the planner prints it beside each
program, so a slow path is never silent.
"""

from __future__ import annotations

import dataclasses
import logging

import jax
import jax.numpy as jnp

from prove_jax.models.paged import PagedWrite

log = logging.getLogger(__name__)

KERNELS = ("auto", "xla", "tpu")
"""Values of ``engine.kernel``: ``auto`` picks the TPU kernel on TPU and the XLA path elsewhere."""


@dataclasses.dataclass(frozen=True)
class KernelChoice:
    name: str  # "xla" | "tpu"
    reason: str


def choose_kernel(requested: str, platform: str, *, head_dim: int, page_size: int, dtype: str) -> KernelChoice:
    """The kernel an engine on ``platform`` uses for this shape (``requested`` from the config)."""
    if requested not in KERNELS:
        raise ValueError(f"engine.kernel must be one of {KERNELS}, got {requested!r}")
    if requested == "xla":
        return KernelChoice("xla", "engine.kernel=xla")
    if platform != "tpu":
        if requested == "tpu":
            raise ValueError(f"engine.kernel=tpu needs a TPU, but the engine runs on {platform}")
        return KernelChoice("xla", f"no paged kernel wired for {platform}: the XLA work-list path (live pages only)")
    packing = 32 // (jnp.dtype(dtype).itemsize * 8)  # rows per 32-bit sublane
    if head_dim % 128 or page_size % (8 * packing):
        why = (f"ragged_paged_attention wants head_dim % 128 == 0 and page_size % {8 * packing} == 0 "
               f"(got head_dim {head_dim}, page_size {page_size}, {dtype}): the XLA paged path instead")
        if requested == "tpu":
            raise ValueError(why)
        log.warning(why)
        return KernelChoice("xla", why)
    return KernelChoice("tpu", "jax.experimental.pallas.ops.tpu.ragged_paged_attention")


def _block_sizes(page_size: int, max_pages: int, tokens: int) -> tuple[int, int]:
    """(kv pages, queries) per kernel block: ~512 tokens of KV per block (as the kernel's own
    tuned table picks for these sizes), at most the table's width; queries in blocks of up to 32."""
    pages = max(1, min(max_pages, 512 // page_size))
    while max_pages % pages:
        pages -= 1
    return pages, max(1, min(32, tokens))


@dataclasses.dataclass(frozen=True)
class RaggedInputs:
    """Our right-padded ``[B, T]`` queries in the kernel's ragged form (see
    :func:`ragged_inputs`); ``dest [B, T]`` maps each query to its packed row."""

    q: jax.Array  # [B * T, H, D]
    kv_lens: jax.Array  # [B]
    table: jax.Array  # [B, max_pages]
    cu_q_lens: jax.Array  # [B + 1]
    num_seqs: jax.Array  # [1]
    dest: jax.Array


def ragged_inputs(q: jax.Array, table: jax.Array, start: jax.Array, new_lens: jax.Array) -> RaggedInputs:
    """Pack each row's valid queries back to back (``cu_q_lens``), padding queries after every
    valid one; each row's KV length is its length *after* the write, so its queries are causal
    within its own new tokens (the kernel's contract)."""
    b, t, h, d = q.shape
    n_valid = new_lens - start
    cu = jnp.concatenate([jnp.zeros((1,), jnp.int32), jnp.cumsum(n_valid).astype(jnp.int32)])
    offs = jnp.arange(t, dtype=jnp.int32)[None, :]
    valid = offs < n_valid[:, None]
    pad_rank = jnp.cumsum(~valid.reshape(-1)).reshape(b, t) - 1
    dest = jnp.where(valid, cu[:-1, None] + offs, cu[-1] + pad_rank)
    flat = jnp.zeros((b * t, h, d), q.dtype).at[dest.reshape(-1)].set(q.reshape(b * t, h, d), unique_indices=True)
    return RaggedInputs(flat, new_lens.astype(jnp.int32), table.astype(jnp.int32), cu,
                        jnp.array([b], jnp.int32), dest)


def tpu_ragged_paged_attention(q: jax.Array, pool: jax.Array, w: PagedWrite, scale: float) -> jax.Array:
    """``q: [B, T, H, D]`` (each row's valid queries a prefix) through the TPU kernel; padding
    queries come back as whatever the kernel left there (discarded, as on the XLA path). Called
    per shard under a mesh (``paged.paged_cached_attention``'s ``shard_map``): ``pool`` and the
    table's page ids are the shard's own, and rows it does not serve (``w.live`` False) get no
    queries.

    Not runnable in interpret mode on the CPU with jax 0.12.0.1: both Pallas TPU interpreters
    stop on this kernel's ref reshapes (``ReshapeTransform``).  The tests check
    :func:`ragged_inputs` through the kernel's own reference (``ref_ragged_paged_attention``,
    same signature and semantics) and compile the kernel itself deviceless for a TPU.
    """
    # a scanned model's stacked pool: the kernel takes one layer
    pool_l = pool if w.layer is None else jax.lax.dynamic_index_in_dim(pool, w.layer, 0, keepdims=False)
    new_lens = w.new_lens if w.live is None else jnp.where(w.live, w.new_lens, w.start)
    return _rpa_local(q, pool_l, w.table, w.start, new_lens, w.page_size, scale)


def _rpa_local(q: jax.Array, pool: jax.Array, table: jax.Array, start: jax.Array, new_lens: jax.Array,
               page_size: int, scale: float) -> jax.Array:
    from jax.experimental.pallas.ops.tpu.ragged_paged_attention import ragged_paged_attention

    b, t, h, d = q.shape
    r = ragged_inputs(q, table, start, new_lens)
    pages_blk, q_blk = _block_sizes(page_size, table.shape[1], b * t)
    out = ragged_paged_attention(r.q, pool, r.kv_lens, r.table, r.cu_q_lens, r.num_seqs, sm_scale=scale,
                                 num_kv_pages_per_block=pages_blk, num_queries_per_block=q_blk)
    return out[r.dest.reshape(-1)].reshape(b, t, h, d)
