"""A paged KV cache: a pool of fixed-size pages, a page table and a length per row.

Why pages: the dense cache (``cache.py``) reserves ``capacity`` slots for every row whatever it
holds, and its read visits blocks up to the fullest row for every row.  Rollouts are ragged (one
row near the transcript cap, most far below it), so both the memory and the bytes a decode step
moves followed the longest row.  Here a row holds only the pages its tokens fill, rows may share
pages (a GRPO group's prompt is stored once), and the attention visits exactly the pages each
row holds.

Layout (all shapes static, so one compiled program serves every fill level)::

    kv    : the pool, in the layout its attention reads (``kernel``):
            xla: (k, v), each [pages, kv_heads, page_size, head_dim]   a page's keys already in
                                                                       the dots' [.., seq, D] form
            tpu: (kv,),  [pages, page_size, 2 * kv_heads, head_dim]    keys at even combined heads,
                                                                       values at odd ones: the TPU
                                                                       ragged paged attention
                                                                       kernel's layout
            one such tuple per layer, or (``scanned``) one tuple of [layers, ...] stacked arrays
    lens  : int32 [B]              tokens each row holds (= the slot its next token is written to)
    table : int32 [B, max_pages]   the pool page holding each row's j-th page; entries past a
                                   row's pages are never read unmasked (any value is fine)

Who owns what: the *host* allocates pages (``engine/pages.py``: free list, reference counts,
prefix sharing) and hands the device the table; the device writes tokens into the pages the table
names and attends over them.  A write of ``T`` new tokens puts token ``t`` of row ``b`` at slot
``lens[b] + t`` (page ``table[b, slot // page_size]``, offset ``slot % page_size``) and advances
``lens[b]`` by the row's valid tokens.  Valid tokens are a prefix of each row's ``T`` (right
padding: ``attention_mask[b] = t < n_valid[b]``); invalid ones are not written at all (their
scatter index is out of range and dropped), so padding never lands in a page another row reads.
Positions are the caller's (RoPE); the mask is causal by slot.

The attention (:func:`paged_attention`) is ragged: a *work list* of (row, page) entries covers
exactly the pages of the rows that have a valid query this call, and a ``while`` loop visits it
``pages_per_block`` entries at a time, merging each entry's scores into its row's online softmax.
A step's reads and FLOPs follow the live tokens, not ``B x`` the fullest row.  On TPU the
same pool feeds ``jax.experimental.pallas.ops.tpu.ragged_paged_attention`` (``kernels.py``).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from prove_jax.models.config import ModelConfig
from prove_jax.models.sharding import Rules, logical_to_spec

POOL_AXES = {"split": ("cache_pages", "kv_heads", None, "head_dim"),
             "combined": ("cache_pages", None, "kv_heads", "head_dim")}
"""Logical axes of one layer's pool arrays, per layout (a stacked pool has ``layers`` in front).
The combined heads axis shards like kv heads: a head's key and value are adjacent, so a shard
holds pairs."""


def pool_layout(kernel: str) -> str:
    """``combined`` for the TPU kernel, ``split`` (a page's K and V apart) for the XLA path: on
    CPU, splitting the combined heads of gathered pages cost the decode ~20 % (measured)."""
    return "combined" if kernel == "tpu" else "split"

PAGE_SIZE = 64
"""Default tokens per page: small enough that a row wastes at most 63 slots, large enough that a
page is a worthwhile unit of work (and a multiple of 16, which the TPU kernel wants for bf16)."""

PAGES_PER_BLOCK = 8
"""Default pages per unit of the XLA path's work (512 tokens at 64): a row's pages are grouped in
units from its first page, and a unit is one dot per KV head.  With one page a unit and 8 units
an iteration, a tiny model's decode over full 3.8k-token rows ran 0.44x the dense read on
XLA:CPU (small dots, 8x the loop trips; measured); a row wastes at most one partial unit."""

DECODE_WIDTH = 8
"""Units a decode iteration scores (of any rows): a decode query is one token, so a unit is cheap
and the loop's per-iteration cost is what to amortise."""

MASKED_SCORE = -0.7 * float(jnp.finfo(jnp.float32).max)
"""Score of a masked slot (as in ``cached_attention``): finite, so ``exp(masked - real)`` is 0."""


def row_shard_axes(mesh: Mesh | None, rules: Rules, batch: int) -> tuple[str, ...]:
    """The mesh axes ``batch`` rows are split over (the ``batch`` rule where it divides them):
    the pool's pages are split over the same ones (:attr:`PagedKVCache.shard_axes`)."""
    if mesh is None:
        return ()
    spec = tuple(logical_to_spec(("batch",), rules, (batch,), mesh))
    entry = spec[0] if spec else None
    return () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)


def row_shards(mesh: Mesh | None, rules: Rules, batch: int) -> int:
    """How many shards ``batch`` rows (and the pool) are split into on ``mesh``."""
    return 1 if mesh is None else math.prod(int(mesh.shape[a]) for a in row_shard_axes(mesh, rules, batch))


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class PagedKVCache:
    """See the module docstring.  A pytree: pass it through ``jit`` freely."""

    kv: Any
    lens: jax.Array
    table: jax.Array
    page_size: int = dataclasses.field(default=PAGE_SIZE, metadata={"static": True})
    pages_per_block: int = dataclasses.field(default=PAGES_PER_BLOCK, metadata={"static": True})
    kernel: str = dataclasses.field(default="xla", metadata={"static": True})
    """Attention implementation: ``xla`` (the work-list loop, any backend) or ``tpu`` (ragged paged
    attention, Pallas; ``kernels.choose_kernel``).  It fixes the pool's layout (``pool_layout``)."""
    stacked: bool = dataclasses.field(default=False, metadata={"static": True})
    """One tuple of ``[layers, ...]`` arrays (a scanned model) rather than one tuple per layer."""
    mesh: Mesh | None = dataclasses.field(default=None, metadata={"static": True})
    rules: Rules = dataclasses.field(default=(), metadata={"static": True})
    """Where the pool lives: under a mesh the attention runs per shard (``shard_map``)."""
    shard_axes: tuple[str, ...] = dataclasses.field(default=(), metadata={"static": True})
    """Mesh axes the rows (``batch``: data/fsdp) are split over, and with them the pool's pages:
    shard ``i`` of ``S`` holds rows ``[i B/S, (i+1) B/S)`` and pool pages ``[i P/S, (i+1) P/S)``,
    and its rows' table entries are page ids *within the shard* (the host allocates them so,
    ``engine/pages.py``). A data-parallel replica thus holds only its own rows' pages instead of
    a copy of the whole pool."""
    owner: jax.Array | None = None
    """int32 [B]: the shard holding each row, when the rows are not laid out like the pool (a
    prefill's chosen rows: every shard sees them all and serves its own); None otherwise."""

    @classmethod
    def init(cls, config: ModelConfig, batch: int, pages: int, max_pages: int, *,
             page_size: int = PAGE_SIZE, dtype: Any = None, mesh: Mesh | None = None,
             pages_per_block: int = PAGES_PER_BLOCK, kernel: str = "xla") -> PagedKVCache:
        """An empty cache: ``pages`` pool pages, ``batch`` rows of at most ``max_pages`` pages."""
        if page_size < 1 or pages < 1 or max_pages < 1 or pages_per_block < 1:
            raise ValueError(f"page_size, pages, max_pages and pages_per_block must be >= 1, got "
                             f"{page_size}, {pages}, {max_pages}, {pages_per_block}")
        dt = jnp.dtype(dtype or config.dtype)
        kvh, d = config.num_kv_heads, config.head_dim
        if pool_layout(kernel) == "combined":
            shapes = [(pages, page_size, 2 * kvh, d)]
        else:
            shapes = [(pages, kvh, page_size, d)] * 2
        if config.scan_layers:
            kv: Any = tuple(jnp.zeros((config.num_layers, *sh), dt) for sh in shapes)
        else:
            kv = tuple(tuple(jnp.zeros(sh, dt) for sh in shapes) for _ in range(config.num_layers))
        cache = cls(kv=kv, lens=jnp.zeros((batch,), jnp.int32), table=jnp.zeros((batch, max_pages), jnp.int32),
                    page_size=page_size, pages_per_block=pages_per_block, kernel=kernel, stacked=config.scan_layers)
        return cache if mesh is None else cache.shard(mesh, config.sharding_rules)

    @property
    def batch_size(self) -> int:
        return self.lens.shape[0]

    @property
    def num_pages(self) -> int:
        return jax.tree.leaves(self.kv)[0].shape[-4]

    @property
    def max_pages(self) -> int:
        return self.table.shape[1]

    @property
    def capacity(self) -> int:
        """Most tokens one row can hold (its table's width in tokens)."""
        return self.max_pages * self.page_size

    @property
    def kv_bytes(self) -> int:
        return sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(self.kv))

    def pool_axes(self) -> tuple[str | None, ...]:
        axes = POOL_AXES[pool_layout(self.kernel)]
        return ("layers", *axes) if self.stacked else axes

    def with_mesh(self, mesh: Mesh, rules: Rules) -> PagedKVCache:
        """This cache described on ``mesh`` (nothing moves; see :meth:`shard`): its rows split over
        the mesh axes the ``batch`` rule gives them, the pool's pages over the same axes."""
        axes = row_shard_axes(mesh, rules, self.batch_size)
        shards = math.prod(int(mesh.shape[a]) for a in axes)
        if self.num_pages % shards:
            raise ValueError(f"{self.num_pages} pool pages do not split over {shards} row shards {axes}")
        return dataclasses.replace(self, mesh=mesh, rules=rules, shard_axes=axes)

    @property
    def shards(self) -> int:
        return 1 if self.mesh is None else math.prod(int(self.mesh.shape[a]) for a in self.shard_axes)

    def placements(self) -> tuple[Any, NamedSharding, NamedSharding]:
        """Shardings of (the pool's arrays, ``lens``, ``table``) on this cache's mesh."""
        assert self.mesh is not None
        rows = self.shard_axes or None
        pool = jax.tree.map(lambda x: NamedSharding(self.mesh, _pool_spec(self, x.shape, rows)), self.kv)
        return (pool, NamedSharding(self.mesh, PartitionSpec(rows)), NamedSharding(self.mesh, PartitionSpec(rows)))

    def _placed(self, mesh: Mesh, rules: Rules, put: Any) -> PagedKVCache:
        c = self.with_mesh(mesh, rules)
        pool, lens, table = c.placements()
        kv = jax.tree.map(put, c.kv, pool)
        return dataclasses.replace(c, kv=kv, lens=put(c.lens, lens), table=put(c.table, table))

    def shard(self, mesh: Mesh, rules: Rules) -> PagedKVCache:
        return self._placed(mesh, rules, jax.device_put)

    def constrain(self, mesh: Mesh, rules: Rules) -> PagedKVCache:
        return self._placed(mesh, rules, jax.lax.with_sharding_constraint)

    def next_positions(self) -> jax.Array:
        return self.lens

    # ---- the model's write protocol (``Model.hidden_states``) --------------------------------
    def begin_write(self, positions: jax.Array, attention_mask: jax.Array | None) -> PagedWrite:
        """Plan a write of ``T`` new tokens per row (valid ones a prefix of each row). On one
        device the write plan (destinations, work list) is made here, once for every layer; under
        a mesh each shard makes its own inside the layer's ``shard_map`` (its page ids and rows
        are its own)."""
        b, t = positions.shape
        n_valid = (jnp.full((b,), t, jnp.int32) if attention_mask is None
                   else jnp.sum(attention_mask.astype(jnp.int32), axis=1))
        w = PagedWrite(kv=self.kv, table=self.table, start=self.lens, new_lens=self.lens + n_valid, owner=self.owner,
                       page_size=self.page_size, pages_per_block=self.pages_per_block, kernel=self.kernel,
                       mesh=self.mesh, rules=self.rules, shard_axes=self.shard_axes)
        return w if w.sharded else w.planned(t, jnp.ones((b,), jnp.bool_))

    def end_write(self, write: PagedWrite, bufs: Any) -> PagedKVCache:
        kv = tuple(bufs)
        return dataclasses.replace(self, kv=kv, lens=write.new_lens)

def work_list(kv_lens: jax.Array, live: jax.Array, page_size: int, max_pages: int, unit: int = 1
              ) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The (row, unit-of-row) entries covering every page of the ``live`` rows, row-major; a unit
    is ``unit`` consecutive pages of one row, counted from the row's first page (so how a row's
    pages are grouped never depends on the other rows).

    Returns ``rows int32 [B * ceil(max_pages / unit)]`` (``B`` past the end: no entry), ``first``
    (the unit's first page index within its row) and ``n`` (int32 [], entries in use).  Static
    length, dynamic count: the attention loop's trip count follows ``n``.
    """
    b = kv_lens.shape[0]
    per_row = -(-max_pages // unit)
    pages = jnp.minimum((kv_lens + page_size - 1) // page_size, max_pages)
    counts = jnp.where(live, (pages + unit - 1) // unit, 0)
    ends = jnp.cumsum(counts)
    e = jnp.arange(b * per_row, dtype=jnp.int32)
    row = jnp.searchsorted(ends, e, side="right").astype(jnp.int32)  # first row whose end > e
    idx = e - jnp.take(ends - counts, jnp.minimum(row, b - 1))
    n = ends[-1].astype(jnp.int32)
    row = jnp.where(e < n, row, b)
    return row, (jnp.where(e < n, idx, 0) * unit).astype(jnp.int32), n


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class PagedWrite:
    """What a layer needs to write its new tokens into the pool and attend over it (built once per
    forward by :meth:`PagedKVCache.begin_write`; ``kv`` is the layer's pool, or the stacked pool
    with ``layer`` naming the layer)."""

    kv: Any
    table: jax.Array  # [B, max_pages]
    start: jax.Array  # [B] slot of each row's first new token
    new_lens: jax.Array  # [B] tokens each row holds after the write
    owner: jax.Array | None = None  # [B] shard of each row when rows are not laid out like the pool
    # the write plan (:meth:`planned`; None until made: under a mesh, per shard inside the layer)
    dest_page: jax.Array | None = None  # [B, T] pool page of each new token (num_pages: not written)
    dest_off: jax.Array | None = None  # [B, T] its offset in the page
    rows: jax.Array | None = None  # [N] work list: row of each entry (B: none)
    jpage: jax.Array | None = None  # [N] the entry's first page index within its row
    n_entries: jax.Array | None = None  # [] entries in use
    live: jax.Array | None = None  # [B] rows this shard attends and writes
    layer: jax.Array | None = None
    page_size: int = dataclasses.field(default=PAGE_SIZE, metadata={"static": True})
    pages_per_block: int = dataclasses.field(default=PAGES_PER_BLOCK, metadata={"static": True})
    kernel: str = dataclasses.field(default="xla", metadata={"static": True})
    mesh: Mesh | None = dataclasses.field(default=None, metadata={"static": True})
    rules: Rules = dataclasses.field(default=(), metadata={"static": True})
    shard_axes: tuple[str, ...] = dataclasses.field(default=(), metadata={"static": True})

    @property
    def sharded(self) -> bool:
        """Whether the attention runs per shard (``shard_map``) rather than on global arrays."""
        return self.mesh is not None and self.mesh.size > 1

    def planned(self, t: int, mine: jax.Array) -> PagedWrite:
        """The write plan for ``t`` new tokens a row over this (local) pool, for the rows ``mine``
        (the others write nothing and are not attended: another shard serves them)."""
        n_valid = jnp.where(mine, self.new_lens - self.start, 0)
        num_pages = _pool_pages(self.kv)
        offs = jnp.arange(t, dtype=jnp.int32)[None, :]
        slot = self.start[:, None] + offs  # [B, T]
        max_pages = self.table.shape[1]
        j = slot // self.page_size
        page = jnp.take_along_axis(self.table, jnp.clip(j, 0, max_pages - 1), axis=1)
        ok = (offs < n_valid[:, None]) & (j < max_pages)
        rows, jpage, n = work_list(self.new_lens, n_valid > 0, self.page_size, max_pages, self.pages_per_block)
        return dataclasses.replace(self, dest_page=jnp.where(ok, page, num_pages),  # out of range: dropped
                                   dest_off=slot % self.page_size, rows=rows, jpage=jpage, n_entries=n,
                                   live=n_valid > 0)

    # the decoder's buffer protocol (shared with ``cached_attention.KVWrite``)
    def layer_bufs(self, i: int) -> Any:
        return self.kv[i]

    def stacked_bufs(self) -> Any:
        return self.kv

    def for_layer(self, bufs: Any, layer: jax.Array | None) -> PagedWrite:
        return dataclasses.replace(self, kv=bufs, layer=layer)


def write_pages(parts: tuple[jax.Array, ...], k: jax.Array, v: jax.Array, w: PagedWrite) -> tuple[jax.Array, ...]:
    """Scatter ``k, v: [B, T, KV, D]`` into the layer's pool arrays at ``(dest_page, dest_off)``;
    invalid tokens (``dest_page`` out of range) are dropped."""
    b, t, kvh, d = k.shape
    page, off = w.dest_page.reshape(-1), w.dest_off.reshape(-1)
    lead = () if w.layer is None else (w.layer.astype(jnp.int32),)
    if len(parts) == 1:  # combined: K at even, V at odd heads
        new = jnp.stack([k, v], axis=3).reshape(b * t, 2 * kvh, d).astype(parts[0].dtype)
        return (parts[0].at[(*lead, page, off)].set(new, mode="drop"),)
    kp, vp = parts  # split: [.., P, KV, ps, D]; the advanced (page, off) dims lead the update
    return (kp.at[(*lead, page, slice(None), off)].set(k.reshape(b * t, kvh, d).astype(kp.dtype), mode="drop"),
            vp.at[(*lead, page, slice(None), off)].set(v.reshape(b * t, kvh, d).astype(vp.dtype), mode="drop"))


def _gather_pages(pool: jax.Array, layer: jax.Array | None, pages: jax.Array) -> jax.Array:
    """Pool pages ``pages [E]`` of the layer (the pool's own per-page layout)."""
    if layer is None:
        return jnp.take(pool, pages, axis=0, mode="clip")
    return pool[layer.astype(jnp.int32), jnp.clip(pages, 0, pool.shape[1] - 1)]


def _pages_kv(parts: tuple[jax.Array, ...], layer: jax.Array | None, table_rows: jax.Array, jp: jax.Array
              ) -> tuple[jax.Array, jax.Array]:
    """K and V of pages ``table_rows[.., jp]``: ``[..., KV, n * page_size, D]`` each (``jp [..., n]``)."""
    pages = jnp.take_along_axis(table_rows, jnp.clip(jp, 0, table_rows.shape[-1] - 1), axis=-1)
    lead, n = jp.shape[:-1], jp.shape[-1]
    if len(parts) == 1:  # combined [ps, 2KV, D] pages
        blk = _gather_pages(parts[0], layer, pages.reshape(-1))
        ps, kv2, d = blk.shape[1:]
        blk = blk.reshape(*lead, n * ps, kv2 // 2, 2, d)
        return jnp.moveaxis(blk[..., 0, :], -2, -3), jnp.moveaxis(blk[..., 1, :], -2, -3)
    out = []
    for pool in parts:  # split [KV, ps, D] pages
        blk = _gather_pages(pool, layer, pages.reshape(-1))
        kvh, ps, d = blk.shape[1:]
        blk = blk.reshape(*lead, n, kvh, ps, d)
        if n > 1:
            blk = jnp.moveaxis(blk, -3, -4)
        out.append(blk.reshape(*lead, kvh, n * ps, d))
    return out[0], out[1]


def paged_attention_xla(q: jax.Array, pool: tuple[jax.Array, ...], w: PagedWrite, scale: float) -> jax.Array:
    """GQA attention of ``q: [B, T, H, D]`` over the pages of each row with a valid query, by the
    work list (see the module docstring); ``[B, T, H, D]`` in ``q``'s dtype.  A row with no live
    page (an idle decode row) gets zeros.

    A row's result never depends on the other rows (refill invariance, to the bit): its pages are
    grouped from its own first page, and every floating-point step on them is the same whatever
    the neighbours hold.  Two shapes of loop keep it so:

    * decode (``T == 1``): each iteration scores ``DECODE_WIDTH`` units (``pages_per_block`` pages
      of one row each, of any rows) and keeps each unit's partial softmax (its max, sum and
      weighted values); after the loop a row's partials are merged in unit order (flash-decoding's
      split-K);
    * prefill chunks (``T > 1``): each iteration takes ``pages_per_block`` pages of one row and
      updates that row's online softmax, units in row order (few rows, many queries a unit).

    Numerics follow ``cached_attention.blocked_attention``: f32 scores, probabilities cast to the
    value dtype for the value product, f32 accumulation.
    """
    if q.shape[1] == 1:
        return _decode_split(q, pool, w, scale)
    return _prefill_units(q, pool, w, scale)


def _grouped(q: jax.Array, kvh: int) -> jax.Array:
    b, t, h, d = q.shape
    return q.reshape(b, t, kvh, h // kvh, d).transpose(0, 2, 3, 1, 4).reshape(b, kvh, (h // kvh) * t, d)


def _ungrouped(o: jax.Array, t: int) -> jax.Array:
    b, kvh, gt, d = o.shape
    g = gt // t
    return o.reshape(b, kvh, g, t, d).transpose(0, 3, 1, 2, 4).reshape(b, t, kvh * g, d)


def _kv_heads(parts: tuple[jax.Array, ...]) -> int:
    return parts[0].shape[-2] // 2 if len(parts) == 1 else parts[0].shape[-3]


def _decode_split(q: jax.Array, pool: tuple[jax.Array, ...], w: PagedWrite, scale: float) -> jax.Array:
    b, _, h, d = q.shape
    kvh = _kv_heads(pool)
    g = h // kvh
    ps, u = w.page_size, w.pages_per_block
    eb = min(DECODE_WIDTH, w.rows.shape[0])
    qg = _grouped(q, kvh)  # [B, KV, g, D]
    n_total = w.rows.shape[0] + (-w.rows.shape[0]) % eb
    rows = jnp.pad(w.rows, (0, n_total - w.rows.shape[0]), constant_values=b)
    jpage = jnp.pad(w.jpage, (0, n_total - w.jpage.shape[0]))
    unit_slots = jnp.arange(u * ps, dtype=jnp.int32)

    def body(i: jax.Array, bufs: tuple[jax.Array, jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array, jax.Array]:
        pm, pl, pacc = bufs  # per unit: max [N, KV, g], sum [N, KV, g], values [N, KV, g, D]
        r = jax.lax.dynamic_slice_in_dim(rows, i * eb, eb)
        first = jax.lax.dynamic_slice_in_dim(jpage, i * eb, eb)
        rc = jnp.minimum(r, b - 1)
        jp = first[:, None] + jnp.arange(u, dtype=jnp.int32)[None, :]  # [E, u]
        k_blk, v_blk = _pages_kv(pool, w.layer, w.table[rc], jp)  # [E, KV, u * ps, D]
        slots = first[:, None] * ps + unit_slots[None, :]
        # slots past the table (a last unit wider than the row's table) read a clipped page: masked
        keep = (slots <= w.start[rc][:, None]) & (r < b)[:, None] & (slots < w.table.shape[1] * ps)
        sc = jnp.einsum("ekgd,eksd->ekgs", qg[rc], k_blk.astype(q.dtype), preferred_element_type=jnp.float32)
        sc = jnp.where(keep[:, None, None], sc * jnp.asarray(scale, jnp.float32), MASKED_SCORE)
        m = jnp.max(sc, axis=-1)
        p = jnp.exp(sc - m[..., None])
        pv = jnp.einsum("ekgs,eksd->ekgd", p.astype(v_blk.dtype), v_blk, preferred_element_type=jnp.float32)
        put = lambda buf, x: jax.lax.dynamic_update_slice_in_dim(buf, x, i * eb, axis=0)  # noqa: E731
        return put(pm, m), put(pl, jnp.sum(p, axis=-1)), put(pacc, pv)

    init = (jnp.full((n_total, kvh, g), MASKED_SCORE, jnp.float32), jnp.zeros((n_total, kvh, g), jnp.float32),
            jnp.zeros((n_total, kvh, g, d), jnp.float32))
    trips = (w.n_entries + eb - 1) // eb
    pm, pl, pacc = jax.lax.fori_loop(jnp.int32(0), trips, body, init)
    # merge each row's partials in page order (a scatter adds its updates in index order)
    m_row = jnp.full((b + 1, kvh, g), MASKED_SCORE, jnp.float32).at[rows].max(pm)
    wgt = jnp.exp(pm - m_row[rows])
    denom = jnp.zeros((b + 1, kvh, g), jnp.float32).at[rows].add(pl * wgt)[:b]
    acc = jnp.zeros((b + 1, kvh, g, d), jnp.float32).at[rows].add(pacc * wgt[..., None])[:b]
    o = jnp.where(denom[..., None] > 0, acc / jnp.where(denom > 0, denom, 1.0)[..., None], 0.0)
    return _ungrouped(o, 1).astype(q.dtype)


def _prefill_units(q: jax.Array, pool: tuple[jax.Array, ...], w: PagedWrite, scale: float) -> jax.Array:
    b, t, h, d = q.shape
    kvh = _kv_heads(pool)
    g = h // kvh
    ps, eb = w.page_size, w.pages_per_block
    qg = _grouped(q, kvh)  # [B, KV, g*T, D]
    q_slot = w.start[:, None] + jnp.arange(t, dtype=jnp.int32)[None, :]  # [B, T]
    slots_in_unit = jnp.arange(eb * ps, dtype=jnp.int32)

    def body(i: jax.Array, carry: tuple[jax.Array, jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array, jax.Array]:
        m_all, l_all, acc_all = carry  # [B+1, KV, g, T], [B+1, KV, g, T], [B+1, KV, g*T, D]
        r = w.rows[i]
        rc = jnp.minimum(r, b - 1)
        jp = w.jpage[i] + jnp.arange(eb, dtype=jnp.int32)
        k_blk, v_blk = _pages_kv(pool, w.layer, w.table[rc], jp)  # [KV, eb*ps, D]
        slots = w.jpage[i] * ps + slots_in_unit
        keep = (slots[None, :] <= q_slot[rc][:, None]) & (jp[:, None] < w.table.shape[1]).repeat(ps, 1).reshape(-1)
        sc = jnp.einsum("kqd,ksd->kqs", qg[rc], k_blk.astype(q.dtype), preferred_element_type=jnp.float32)
        sc = sc.reshape(kvh, g, t, eb * ps) * jnp.asarray(scale, jnp.float32)
        sc = jnp.where(keep[None, None], sc, MASKED_SCORE)
        m = m_all[r]
        m_new = jnp.maximum(m, jnp.max(sc, axis=-1))
        corr = jnp.exp(m - m_new)
        p = jnp.exp(sc - m_new[..., None])
        denom = l_all[r] * corr + jnp.sum(p, axis=-1)
        pv = jnp.einsum("kqs,ksd->kqd", p.reshape(kvh, g * t, eb * ps).astype(v_blk.dtype), v_blk,
                        preferred_element_type=jnp.float32)
        acc = acc_all[r] * corr.reshape(kvh, g * t, 1) + pv
        return m_all.at[r].set(m_new), l_all.at[r].set(denom), acc_all.at[r].set(acc)

    init = (jnp.full((b + 1, kvh, g, t), MASKED_SCORE, jnp.float32), jnp.zeros((b + 1, kvh, g, t), jnp.float32),
            jnp.zeros((b + 1, kvh, g * t, d), jnp.float32))
    _, denom, acc = jax.lax.fori_loop(jnp.int32(0), w.n_entries, body, init)
    denom = denom[:b].reshape(b, kvh, g * t, 1)
    o = jnp.where(denom > 0, acc[:b] / jnp.where(denom > 0, denom, 1.0), 0.0)
    return _ungrouped(o, t).astype(q.dtype)


def paged_cached_attention(q: jax.Array, k: jax.Array, v: jax.Array, w: PagedWrite, scale: float
                           ) -> tuple[jax.Array, tuple[jax.Array, ...]]:
    """Write the new ``k, v: [B, T, KV, D]`` into the pool, then attend ``q`` over each row's
    pages.  Returns the output ``[B, T, H, D]`` and the layer's updated pool (as given).

    Under a mesh both run per shard (``shard_map``): a shard holds its rows' pages and its KV
    heads (over ``tensor`` when the KV heads split evenly), so nothing is gathered around the
    attention. Rows laid out like the pool (decode) are split with it. A prefill's few chosen
    rows (``w.owner``) are seen whole by every shard; each writes and attends only the rows it
    holds and the outputs are summed over the row shards (one shard's output, others' zeros:
    exact)."""
    if not w.sharded:
        return _attend_local(q, k, v, w, scale)
    from jax.sharding import PartitionSpec as P

    rows = w.shard_axes or None
    heads = _heads_axis(w)
    replicated = w.owner is not None
    b_ax = None if replicated else rows
    act = P(b_ax, None, heads, None)
    pool_specs = tuple(_pool_spec(w, x.shape, rows) for x in w.kv)
    row = P(b_ax)
    layer = w.layer

    def local(q: jax.Array, k: jax.Array, v: jax.Array, kv: tuple[jax.Array, ...], table: jax.Array,
              start: jax.Array, new_lens: jax.Array, owner: jax.Array, layer: jax.Array
              ) -> tuple[jax.Array, tuple[jax.Array, ...]]:
        lw = dataclasses.replace(w, kv=kv, table=table, start=start, new_lens=new_lens, owner=None,
                                 layer=None if w.layer is None else layer)
        mine = owner == _shard_index(w.shard_axes) if replicated else jnp.ones(start.shape, jnp.bool_)
        out, new_kv = _attend_local(q, k, v, lw.planned(q.shape[1], mine), scale)
        if replicated:
            out = jnp.where(mine[:, None, None, None], out, jnp.zeros_like(out))
            if w.shard_axes:
                out = jax.lax.psum(out, w.shard_axes)
        return out, new_kv

    owner = w.owner if replicated else jnp.zeros((), jnp.int32)
    lay = jnp.zeros((), jnp.int32) if layer is None else layer
    fn = jax.shard_map(local, mesh=w.mesh,
                       in_specs=(act, act, act, pool_specs, P(b_ax, None), row, row, P(b_ax) if replicated else P(), P()),
                       out_specs=(act, pool_specs), check_vma=False)
    return fn(q, k, v, tuple(w.kv), w.table, w.start, w.new_lens, owner, lay)


def _attend_local(q: jax.Array, k: jax.Array, v: jax.Array, w: PagedWrite, scale: float
                  ) -> tuple[jax.Array, tuple[jax.Array, ...]]:
    """One shard's (or the only device's) write and attention, over its pool with its page ids."""
    pool = write_pages(w.kv, k, v, w)
    if w.kernel == "tpu":
        from prove_jax.models.kernels import tpu_ragged_paged_attention

        out = tpu_ragged_paged_attention(q, pool[0], w, scale)
    else:
        out = paged_attention_xla(q, pool, w, scale)
    return out, pool


def _pool_pages(kv: tuple[jax.Array, ...]) -> int:
    return jax.tree.leaves(kv)[0].shape[-4]


def _shard_index(axes: tuple[str, ...]) -> jax.Array:
    """This shard's index over the row-shard ``axes`` (major to minor, as ``PartitionSpec`` splits)."""
    idx = jnp.zeros((), jnp.int32)
    for a in axes:
        idx = idx * jax.lax.axis_size(a) + jax.lax.axis_index(a)
    return idx


def _heads_axis(c: Any) -> str | tuple[str, ...] | None:
    """The mesh axes the pool's KV heads are split over (the ``kv_heads`` rule, where it divides)."""
    kv = jax.tree.leaves(c.kv)[0]
    spec = logical_to_spec(POOL_AXES[pool_layout(c.kernel)], c.rules, kv.shape[-4:], c.mesh)
    heads_dim = 1 if pool_layout(c.kernel) == "split" else 2
    return tuple(spec)[heads_dim] if len(spec) > heads_dim else None


def _pool_spec(c: Any, shape: tuple[int, ...], rows: tuple[str, ...] | None) -> PartitionSpec:
    """One pool array's spec: pages over the row shards, KV heads by the rules."""
    heads = _heads_axis(c)
    split = pool_layout(c.kernel) == "split"
    per_layer = [rows, heads, None, None] if split else [rows, None, heads, None]
    return PartitionSpec(*([None] * (len(shape) - 4) + per_layer))
