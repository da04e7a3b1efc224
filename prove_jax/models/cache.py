"""Fixed-shape KV cache with a per-row write index, for prefill + decode and continuous batching.

Layout (all shapes static, so one compiled decode step serves the whole rollout)::

    k, v : per layer [batch, kv_heads, capacity, head_dim]    post-RoPE keys/values (not repeated
           (a tuple of ``num_layers`` arrays; one stacked       over query groups), activation dtype
           [layers, batch, kv_heads, capacity, head_dim]
           array when the model scans its layers)
    pos  : int32 [batch, capacity]   position id of the token held in each slot; -1 = empty slot
                                     or a padding token (never attended to)
    end  : int32 [batch]             next free slot of each row (= number of slots written)
    kv_block : int (static)          slots per block of the attention's read (``KV_BLOCK``)

Why this layout: a decode step must touch only the new token's K/V and read only the slots rows
hold.  The attention (``cached_attention.py``) reads the cache in blocks of slots up to the
furthest slot any row can see (a dynamic loop bound), so a step's cost follows the rows' fill
level, not the capacity.  Separate per-layer buffers are updated in place (the step donates the
cache); a scanned model (``scan_layers``) keeps one stacked buffer that the scan carries, and
each layer writes its new tokens into it and reads its blocks straight out of it (slicing a
layer out first copied the layer's whole cache on every step: a tiny model at capacity 2048
once spent 97 % of its decode step copying).  ``kv_heads`` before ``capacity`` puts the cache
in the canonical ``[batch..., seq, head_dim]`` form of both attention dots (scores contract
``head_dim``, the value product contracts ``capacity``), so no step transposes the cache.

A forward call with ``T`` new tokens writes them into slots ``end[b] .. end[b]+T-1`` of every
row ``b`` (each row at its own offset) and advances ``end`` by ``T``.  Query ``t`` of row ``b``
attends to slot ``j`` iff ``j <= end[b] + t`` (slot order is causal order) and ``pos[b, j] >= 0``.
Tokens marked invalid by the caller's ``attention_mask`` (left padding, idle rows) are written
with ``pos = -1``, so they occupy a slot but are masked for every later query.  RoPE uses the
caller's positions (e.g. ``cumsum(mask) - 1``), never the slot index, so left-padded rows decode
exactly like unpadded ones.

Rows are independent: ``reset_rows`` frees rows, ``take_rows``/``put_rows`` move a set of rows
out of and back into the cache, and a row can be prefilled on its own in a 1-row cache
(``KVCache.init(cfg, 1, capacity)``) and copied in with ``set_row`` while the other rows keep
decoding — this is what the rollout engine's continuous batching builds on.
The caller must keep ``end[b] + T <= capacity`` (XLA clamps out-of-range writes).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax.sharding import Mesh

from prove_jax.models.config import ModelConfig
from prove_jax.models.sharding import Rules, named_sharding

KV_AXES = ("batch", "kv_heads", "cache_seq", "head_dim")
"""Logical axes of one layer's K or V buffer (a stacked buffer has ``layers`` in front)."""

LayerKV = Any  # a tuple of per-layer arrays, or one stacked array (scanned models)

KV_BLOCK = 512
"""Default slots per block of the cached attention's read (``KVCache.kv_block``).  Its overhead is
per block (on a GPU each loop iteration launches its kernels and reads the loop predicate back;
on CPU each is a few dispatches) and a read wastes at most one partial block: 512 keeps a
4k-token row at 8 blocks with under ~6 % of it wasted, and a prefill chunk's scores at
``[B, KV, g*C, 512]`` f32 (16 MiB per row and layer at C=512 with 16 query heads)."""


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class KVCache:
    """See the module docstring for the layout.  A pytree: pass it through ``jit`` freely."""

    k: LayerKV
    v: LayerKV
    pos: jax.Array
    end: jax.Array
    kv_block: int = dataclasses.field(default=KV_BLOCK, metadata={"static": True})
    """Slots per block the attention reads (static: part of the compiled program)."""

    @classmethod
    def init(
        cls,
        config: ModelConfig,
        batch: int,
        capacity: int,
        dtype: jnp.dtype | str | None = None,
        mesh: Mesh | None = None,
        kv_block: int = KV_BLOCK,
    ) -> KVCache:
        """An empty cache (all slots ``pos=-1``); placed by the rules table when ``mesh`` is given."""
        if kv_block < 1:
            raise ValueError(f"kv_block must be >= 1, got {kv_block}")
        dt = jnp.dtype(dtype or config.dtype)
        shape = (batch, config.num_kv_heads, capacity, config.head_dim)
        if config.scan_layers:
            k: LayerKV = jnp.zeros((config.num_layers, *shape), dt)
            v: LayerKV = jnp.zeros((config.num_layers, *shape), dt)
        else:
            k = tuple(jnp.zeros(shape, dt) for _ in range(config.num_layers))
            v = tuple(jnp.zeros(shape, dt) for _ in range(config.num_layers))
        pos, end = jnp.full((batch, capacity), -1, jnp.int32), jnp.zeros((batch,), jnp.int32)
        cache = cls(k=k, v=v, pos=pos, end=end, kv_block=kv_block)
        return cache if mesh is None else cache.shard(mesh, config.sharding_rules)

    @property
    def batch_size(self) -> int:
        return self.pos.shape[0]

    @property
    def capacity(self) -> int:
        return self.pos.shape[1]

    @property
    def stacked(self) -> bool:
        """K/V held as one ``[layers, ...]`` array (scanned models) rather than one per layer."""
        return not isinstance(self.k, tuple)

    @property
    def kv_bytes(self) -> int:
        """Bytes of the K and V buffers (the blocked attention reads only the blocks rows hold)."""
        return sum(x.size * x.dtype.itemsize for x in jax.tree.leaves((self.k, self.v)))

    def kv_axes(self) -> tuple[str, ...]:
        """Logical axes of each K/V leaf."""
        return ("layers", *KV_AXES) if self.stacked else KV_AXES

    def _map(self, fn: Callable[[jax.Array, Any, int], jax.Array], src: KVCache | None = None) -> KVCache:
        """Every array through ``fn(x, y, batch_axis)``; ``y`` is ``src``'s matching array (or
        ``x`` itself). K/V keep their container form (per-layer tuple or stacked array)."""
        other = self if src is None else src
        axis = 1 if self.stacked else 0
        k = jax.tree.map(lambda x, y: fn(x, y, axis), self.k, other.k)
        v = jax.tree.map(lambda x, y: fn(x, y, axis), self.v, other.v)
        return dataclasses.replace(self, k=k, v=v, pos=fn(self.pos, other.pos, 0), end=fn(self.end, other.end, 0))

    def _placed(self, mesh: Mesh, rules: Rules, put: Callable[[jax.Array, Any], jax.Array]) -> KVCache:
        kv_axes = self.kv_axes()
        axes = {self.pos.ndim: ("batch", "cache_seq"), self.end.ndim: ("batch",)}

        def place(x: jax.Array, _: Any, axis: int) -> jax.Array:
            logical = kv_axes if x.ndim == len(kv_axes) else axes[x.ndim]
            return put(x, named_sharding(mesh, logical, x.shape, rules))

        return self._map(place)

    def shard(self, mesh: Mesh, rules: Rules) -> KVCache:
        """Place the buffers: batch over data/fsdp, kv heads over tensor (per the rules)."""
        return self._placed(mesh, rules, jax.device_put)

    def constrain(self, mesh: Mesh, rules: Rules) -> KVCache:
        """``with_sharding_constraint`` to the canonical placement (inside jit)."""
        return self._placed(mesh, rules, jax.lax.with_sharding_constraint)

    def next_positions(self) -> jax.Array:
        """``int32 [B]``: the position id that follows the last valid token of each row."""
        return jnp.max(self.pos, axis=1) + 1

    def reset_rows(self, rows: jax.Array) -> KVCache:
        """Free the rows where ``rows: bool [B]`` is set (their K/V become unreachable)."""
        pos = jnp.where(rows[:, None], -1, self.pos)
        end = jnp.where(rows, 0, self.end)
        return dataclasses.replace(self, pos=pos, end=end)

    def take_rows(self, rows: jax.Array) -> KVCache:
        """The rows ``rows: int [R]`` as an ``R``-row cache (out-of-range indices are clipped)."""
        return self._map(lambda x, _, axis: jnp.take(x, rows, axis=axis, mode="clip"))

    def put_rows(self, rows: jax.Array, src: KVCache) -> KVCache:
        """Write the ``R`` rows of ``src`` back at ``rows`` (out-of-range indices are dropped)."""
        return self._map(
            lambda x, y, axis: x.at[(slice(None),) * axis + (rows,)].set(y.astype(x.dtype), mode="drop"), src
        )

    def row(self, b: int | jax.Array) -> KVCache:
        """A 1-row cache holding row ``b`` (same capacity)."""
        return self._map(lambda x, _, axis: jax.lax.dynamic_slice_in_dim(x, b, 1, axis=axis))

    def set_row(self, b: int | jax.Array, src: KVCache) -> KVCache:
        """Copy the single row of ``src`` (e.g. an independently prefilled prompt) into row ``b``."""
        if src.batch_size != 1 or src.capacity != self.capacity or src.stacked != self.stacked:
            raise ValueError(
                f"set_row needs a 1-row cache of capacity {self.capacity} (stacked={self.stacked}), got "
                f"batch={src.batch_size} capacity={src.capacity} stacked={src.stacked}"
            )
        return self._map(
            lambda x, y, axis: jax.lax.dynamic_update_slice_in_dim(x, y.astype(x.dtype), b, axis=axis), src
        )

    # ---- the model's write protocol (``Model.hidden_states``; shared with ``paged.PagedKVCache``) ----
    def begin_write(self, positions: jax.Array, attention_mask: jax.Array | None) -> Any:
        """The :class:`~prove_jax.models.cached_attention.KVWrite` of ``T`` new tokens."""
        from prove_jax.models.cached_attention import KVWrite

        new_pos, start, new_end = self.plan_write(positions, attention_mask)
        return KVWrite(self.k, self.v, start, new_pos, end=new_end, kv_block=self.kv_block)

    def end_write(self, write: Any, bufs: Any) -> KVCache:
        """The cache after ``write``: the layers' buffers ``bufs`` (``(k, v)`` stacked, or one
        ``(k, v)`` per layer) and every row's ``end`` advanced by ``T``."""
        if self.stacked:
            k, v = bufs
        else:
            k, v = tuple(b[0] for b in bufs), tuple(b[1] for b in bufs)
        return dataclasses.replace(self, k=k, v=v, pos=write.pos, end=write.end)

    def plan_write(
        self, positions: jax.Array, attention_mask: jax.Array | None
    ) -> tuple[jax.Array, jax.Array, jax.Array]:
        """Slot bookkeeping for writing ``T`` new tokens: ``(new_pos [B, S], start [B], new_end [B])``.

        No ``[B, T, S]`` mask is built here: the attention derives the mask of each block of slots
        it reads from ``new_pos`` and ``start`` (:func:`slot_keep`), so nothing scales with the
        capacity beyond the ``pos`` row itself.
        """
        b, t = positions.shape
        valid = jnp.ones((b, t), bool) if attention_mask is None else attention_mask.astype(bool)
        start = self.end
        new_pos = write_rows(self.pos, jnp.where(valid, positions, -1).astype(jnp.int32), start, axis=1)
        return new_pos, start, start + t


def slot_keep(pos: jax.Array, slots: jax.Array, start: jax.Array, t: int) -> jax.Array:
    """``bool [B, T, n]``: query ``q`` of row ``b`` (at slot ``start[b] + q``) may attend to the
    slot ``slots[j]`` whose position id is ``pos[b, j]``.

    The one masking rule of the cache: slot order is causal order (``slot <= query slot``) and
    empty or padding slots (``pos < 0``) are never attended.  ``pos: int32 [B, n]`` and
    ``slots: int32 [n]`` describe any set of slots (the whole capacity, or one block of it).
    """
    q_slot = start[:, None] + jnp.arange(t, dtype=jnp.int32)[None, :]
    return (slots[None, None, :] <= q_slot[:, :, None]) & (pos[:, None, :] >= 0)


def write_rows(buf: jax.Array, new: jax.Array, start: jax.Array, axis: int) -> jax.Array:
    """Write ``new`` into ``buf`` at offset ``start[b]`` along ``axis`` of each batch row ``b``.

    ``buf`` is ``[B, ...]`` and ``new`` has the same shape except along ``axis`` (counted in
    ``buf``, batch included).  A vmapped ``dynamic_update_slice`` keeps shapes fixed while every
    row has its own write index (continuous batching), and touches only the new entries: XLA
    updates a donated buffer in place.  The caller guarantees ``start[b] + T <= S``.
    """

    def one(b: jax.Array, n: jax.Array, s: jax.Array) -> jax.Array:
        return jax.lax.dynamic_update_slice_in_dim(b, n, s, axis=axis - 1)

    return jax.vmap(one)(buf, new, start)
