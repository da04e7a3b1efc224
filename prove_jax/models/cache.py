"""Fixed-shape KV cache with a per-row write index, for prefill + decode and continuous batching.

Layout (all shapes static, so one compiled decode step serves the whole rollout)::

    k, v : [layers, batch, capacity, kv_heads, head_dim]   post-RoPE keys/values (not repeated
                                                            over query groups), activation dtype
    pos  : int32 [batch, capacity]   position id of the token held in each slot; -1 = empty slot
                                     or a padding token (never attended to)
    end  : int32 [batch]             next free slot of each row (= number of slots written)

A forward call with ``T`` new tokens writes them into slots ``end[b] .. end[b]+T-1`` of every
row ``b`` (each row at its own offset) and advances ``end`` by ``T``.  Query ``t`` of row ``b``
attends to slot ``j`` iff ``j <= end[b] + t`` (slot order is causal order) and ``pos[b, j] >= 0``.
Tokens marked invalid by the caller's ``attention_mask`` (left padding, idle rows) are written
with ``pos = -1``, so they occupy a slot but are masked for every later query.  RoPE uses the
caller's positions (e.g. ``cumsum(mask) - 1``), never the slot index, so left-padded rows decode
exactly like unpadded ones.

Rows are independent: ``reset_rows`` frees rows, and a row can be prefilled on its own in a
1-row cache (``KVCache.init(cfg, 1, capacity)``) and copied in with ``set_row`` while the other
rows keep decoding — this is what the rollout engine's continuous batching builds on.
The caller must keep ``end[b] + T <= capacity`` (XLA clamps out-of-range writes).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
from jax.sharding import Mesh

from prove_jax.models.config import ModelConfig
from prove_jax.models.layers import write_rows
from prove_jax.models.sharding import Rules, named_sharding

KV_AXES = ("layers", "batch", "cache_seq", "kv_heads", "head_dim")


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class KVCache:
    """See the module docstring for the layout.  A pytree: pass it through ``jit`` freely."""

    k: jax.Array
    v: jax.Array
    pos: jax.Array
    end: jax.Array

    @classmethod
    def init(
        cls,
        config: ModelConfig,
        batch: int,
        capacity: int,
        dtype: jnp.dtype | str | None = None,
        mesh: Mesh | None = None,
    ) -> KVCache:
        """An empty cache (all slots ``pos=-1``); placed by the rules table when ``mesh`` is given."""
        dt = jnp.dtype(dtype or config.dtype)
        shape = (config.num_layers, batch, capacity, config.num_kv_heads, config.head_dim)
        cache = cls(
            k=jnp.zeros(shape, dt),
            v=jnp.zeros(shape, dt),
            pos=jnp.full((batch, capacity), -1, jnp.int32),
            end=jnp.zeros((batch,), jnp.int32),
        )
        return cache if mesh is None else cache.shard(mesh, config.sharding_rules)

    @property
    def batch_size(self) -> int:
        return self.pos.shape[0]

    @property
    def capacity(self) -> int:
        return self.pos.shape[1]

    def shard(self, mesh: Mesh, rules: Rules) -> KVCache:
        """Place the buffers: batch over data/fsdp, kv heads over tensor (per the rules)."""
        kv = named_sharding(mesh, KV_AXES, self.k.shape, rules)
        pos = named_sharding(mesh, ("batch", "cache_seq"), self.pos.shape, rules)
        end = named_sharding(mesh, ("batch",), self.end.shape, rules)
        put = jax.device_put
        return KVCache(put(self.k, kv), put(self.v, kv), put(self.pos, pos), put(self.end, end))

    def next_positions(self) -> jax.Array:
        """``int32 [B]``: the position id that follows the last valid token of each row."""
        return jnp.max(self.pos, axis=1) + 1

    def reset_rows(self, rows: jax.Array) -> KVCache:
        """Free the rows where ``rows: bool [B]`` is set (their K/V become unreachable)."""
        pos = jnp.where(rows[:, None], -1, self.pos)
        end = jnp.where(rows, 0, self.end)
        return dataclasses.replace(self, pos=pos, end=end)

    def row(self, b: int | jax.Array) -> KVCache:
        """A 1-row cache holding row ``b`` (same capacity)."""
        take = lambda x, axis: jax.lax.dynamic_slice_in_dim(x, b, 1, axis=axis)  # noqa: E731
        return KVCache(take(self.k, 1), take(self.v, 1), take(self.pos, 0), take(self.end, 0))

    def set_row(self, b: int | jax.Array, src: KVCache) -> KVCache:
        """Copy the single row of ``src`` (e.g. an independently prefilled prompt) into row ``b``."""
        if src.batch_size != 1 or src.capacity != self.capacity:
            raise ValueError(
                f"set_row needs a 1-row cache of capacity {self.capacity}, got "
                f"batch={src.batch_size} capacity={src.capacity}"
            )
        put = lambda x, y, axis: jax.lax.dynamic_update_slice_in_dim(x, y.astype(x.dtype), b, axis=axis)  # noqa: E731
        return KVCache(
            put(self.k, src.k, 1), put(self.v, src.v, 1), put(self.pos, src.pos, 0), put(self.end, src.end, 0)
        )

    def plan_write(
        self, positions: jax.Array, attention_mask: jax.Array | None
    ) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
        """Slot bookkeeping for writing ``T`` new tokens.

        Returns ``(new_pos [B,S], mask [B,1,T,S], start [B], new_end [B])``.  Kept here, not in
        the layers, so every layer reuses one mask and the masking rule lives next to the layout.
        """
        b, t = positions.shape
        valid = jnp.ones((b, t), bool) if attention_mask is None else attention_mask.astype(bool)
        start = self.end
        new_pos = write_rows(self.pos, jnp.where(valid, positions, -1).astype(jnp.int32), start)
        slots = jnp.arange(self.capacity, dtype=jnp.int32)
        q_slot = start[:, None] + jnp.arange(t, dtype=jnp.int32)[None, :]
        mask = (slots[None, None, :] <= q_slot[:, :, None]) & (new_pos[:, None, :] >= 0)
        return new_pos, mask[:, None, :, :], start, start + t
