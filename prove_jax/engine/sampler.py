"""Device programs of the rollout engine: chunked prefill into chosen slots, and one decode step.

The engine keeps two pytrees on the device between calls and threads them through every
program (donated, so XLA updates them in place):

* the model's :class:`~prove_jax.models.KVCache` over ``slots`` rows, and
* :class:`SlotState`: per row the token to feed next, its position, whether the row is
  decoding, how many tokens this turn has sampled, the turn's cap, and the row's sampling
  settings and PRNG stream.

Both are allocated lazily: ``Sampler.release`` deletes them (a GRPO update needs the memory
more than an idle engine) and the next program call re-creates them empty. The weights are in
the engine's own dtype (``model.config.param_dtype``, checked), e.g. bf16 synced from an f32
trainer by ``engine.weights.WeightSync``.

Because the per-row bookkeeping (stop tokens, ``max_new``, ``max_len``) lives on the device, the
host never has to read a step's result before dispatching the next one: a row that stops in step
``k`` is already idle in step ``k + 1``. That is what lets the scheduler (``scheduler.py``) run
one step ahead of the host and overlap tool execution with decoding.

Programs (and so compilations) per engine: one decode program over all slots, and one prefill
program per chunk bucket (``EngineConfig.buckets``) over ``prefill_rows`` rows. Prefill gathers
its rows out of the big cache, runs the model over a right-padded chunk, scatters the rows back
and, for rows whose turn prompt is now complete, samples the turn's first token and switches
the row to decoding. Rows not involved are untouched, so refilling a slot never disturbs others.

Two details of the cache contract (``models/cache.py``) matter here and are handled locally:
``Model.__call__`` advances ``end`` by the chunk length for every row, also masked ones, so the
programs restore ``end`` for idle rows (decode) and set it to ``end + valid`` after a right-padded
chunk (prefill); and a write past ``capacity`` would be *clamped* by XLA onto valid entries, which
the ``max_chunk`` of slack in ``EngineConfig.capacity`` rules out.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx
from jax.sharding import Mesh

from prove_jax.engine.config import EngineConfig
from prove_jax.engine.pages import PageTable, check_pool, engine_kernel, sharded_pool_pages
from prove_jax.engine.sampling import row_keys, sampling_mode, select
from prove_jax.models import KVCache, Model
from prove_jax.models.kernels import KernelChoice
from prove_jax.models.paged import PagedKVCache, row_shards
from prove_jax.models.sharding import Rules, named_sharding

Cache = KVCache | PagedKVCache
log = logging.getLogger(__name__)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class SlotState:
    """Per-row decoding state, all ``[slots]`` arrays (see the module docstring)."""

    tok: jax.Array  # int32: sampled token to feed in the next decode step
    pos: jax.Array  # int32: its position id
    active: jax.Array  # bool: the row is decoding
    n_new: jax.Array  # int32: tokens sampled in the current turn
    max_new: jax.Array  # int32: the current turn's cap
    seed: jax.Array  # uint32: PRNG seed of the row's request
    stream: jax.Array  # int32: PRNG stream (e.g. the turn index) of the row's request
    temperature: jax.Array  # float32 (0 = greedy)
    top_k: jax.Array  # int32 (0 = off)
    top_p: jax.Array  # float32 (1 = off)

    @classmethod
    def init(cls, slots: int) -> SlotState:
        z = np.zeros((slots,), np.int32)
        return cls(
            tok=z, pos=z, active=np.zeros((slots,), bool), n_new=z, max_new=np.ones((slots,), np.int32),
            seed=np.zeros((slots,), np.uint32), stream=z, temperature=np.ones((slots,), np.float32),
            top_k=z, top_p=np.ones((slots,), np.float32),
        )


@dataclasses.dataclass(frozen=True)
class StepOut:
    """What the host reads back from one program, per row of that program (numpy, ``[R]`` each,
    or ``[block, R]`` for a decode block).

    On the device the five fields travel packed into one int32 ``[..., 5, R]`` array (floats
    bit-cast), so reading a step back is one transfer instead of five: on a small model each
    transfer costs about as much host time as the step's compute.
    """

    tok: np.ndarray
    sample_logprob: np.ndarray
    model_logprob: np.ndarray
    emitted: np.ndarray  # bool: ``tok`` is a new token of the row's turn
    stopped: np.ndarray  # bool: the turn ended with this token

    @classmethod
    def unpack(cls, packed: np.ndarray) -> StepOut:
        a = np.asarray(packed)
        return cls(tok=a[..., 0, :], sample_logprob=a[..., 1, :].view(np.float32),
                   model_logprob=a[..., 2, :].view(np.float32), emitted=a[..., 3, :] != 0,
                   stopped=a[..., 4, :] != 0)


def _pack(tok: jax.Array, slp: jax.Array, mlp: jax.Array, emitted: jax.Array, stopped: jax.Array) -> jax.Array:
    """The device side of :meth:`StepOut.unpack`."""
    bits = lambda x: jax.lax.bitcast_convert_type(x.astype(jnp.float32), jnp.int32)  # noqa: E731
    fields = [tok.astype(jnp.int32), bits(slp), bits(mlp), emitted.astype(jnp.int32), stopped.astype(jnp.int32)]
    return jnp.stack(fields, axis=-2)


@dataclasses.dataclass(frozen=True)
class PrefillBatch:
    """Host-side inputs of one prefill call (numpy, ``[prefill_rows]`` / ``[prefill_rows, C]``).

    Unused entries have ``rows == slots`` (an out-of-range index: gathered with clipping,
    scattered with ``mode="drop"``, i.e. computed and discarded) and ``lens == 0``.
    """

    rows: np.ndarray
    tokens: np.ndarray
    lens: np.ndarray
    start: np.ndarray  # position of each row's first chunk token (= tokens already in the row)
    reset: np.ndarray  # bool: the row starts a new sequence (drop its old cache)
    final: np.ndarray  # bool: last chunk of the turn's prompt -> sample and start decoding
    max_new: np.ndarray
    seed: np.ndarray
    stream: np.ndarray
    temperature: np.ndarray
    top_k: np.ndarray
    top_p: np.ndarray


class _GraphKey:
    """A jit static argument wrapping the model's graph definition.

    Hashing an NNX ``GraphDef`` walks the whole module tree (~150 us for a 2-layer model, more
    for 36 layers) and jit hashes static arguments on *every* call; this wrapper computes the
    hash once and compares by identity first, which takes dispatch overhead off the decode loop.
    """

    __slots__ = ("_hash", "graphdef", "treedef")

    def __init__(self, graphdef: nnx.GraphDef, treedef: Any) -> None:
        self.graphdef = graphdef
        self.treedef = treedef  # of the params: they travel as a flat list of leaves (see Sampler)
        self._hash = hash((graphdef, treedef))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return (isinstance(other, _GraphKey) and self._hash == other._hash and self.graphdef == other.graphdef
                and self.treedef == other.treedef)

    def merge(self, leaves: list[jax.Array]) -> Model:
        return nnx.merge(self.graphdef, jax.tree.unflatten(self.treedef, leaves))


@dataclasses.dataclass(frozen=True)
class _Static:
    """Compile-time constants shared by the programs (hashable: a jit static argument)."""

    stop_ids: tuple[int, ...]
    vocab_limit: int
    max_len: int
    mesh: Mesh | None
    rules: Rules
    paged: bool = False


def _batch_axes(x: jax.Array) -> tuple[str | None, ...]:
    return ("batch",) + (None,) * (x.ndim - 1)


def _place(cache: KVCache, state: SlotState, st: _Static) -> tuple[KVCache, SlotState]:
    """Pin the carried pytrees to their canonical shardings, so every call sees the same input
    shardings (no recompiles) and the batch stays split over data/fsdp."""
    if st.mesh is None:
        return cache, state
    c = jax.lax.with_sharding_constraint
    row = lambda x: c(x, named_sharding(st.mesh, _batch_axes(x), x.shape, st.rules))  # noqa: E731
    return cache.constrain(st.mesh, st.rules), jax.tree.map(row, state)


def _is_stop(tok: jax.Array, stop_ids: tuple[int, ...]) -> jax.Array:
    if not stop_ids:
        return jnp.zeros(tok.shape, bool)
    return jnp.any(tok[:, None] == jnp.asarray(stop_ids, jnp.int32)[None, :], axis=-1)


def _decode(
    graph: _GraphKey, params: list[jax.Array], cache: Cache, state: SlotState, table: jax.Array | None,
    st: _Static, mode: str = "truncate"
) -> tuple[Cache, SlotState, jax.Array]:
    model: Model = graph.merge(params)
    active = state.active
    if st.paged:  # the host's page table (rows write only into pages it gave them)
        cache = dataclasses.replace(cache, table=table)
    logits, new = model(state.tok[:, None], state.pos[:, None], cache, attention_mask=active[:, None])
    if st.paged:
        end = new.lens  # a paged row advances by its valid tokens only
    else:
        end = jnp.where(active, new.end, cache.end)  # idle rows keep their slots
        new = dataclasses.replace(new, end=end)
    keys = row_keys(state.seed, state.stream, state.n_new)
    tok, slp, mlp = select(logits[:, 0], keys, state.temperature, state.top_k, state.top_p, st.vocab_limit, mode)
    n_new = state.n_new + 1
    stopped = active & (_is_stop(tok, st.stop_ids) | (n_new >= state.max_new) | (end + 1 >= st.max_len))
    state = dataclasses.replace(
        state,
        tok=jnp.where(active, tok, state.tok),
        pos=state.pos + active.astype(jnp.int32),
        n_new=jnp.where(active, n_new, state.n_new),
        active=active & ~stopped,
    )
    new, state = _place(new, state, st)
    return new, state, _pack(tok, slp, mlp, active, stopped)


def _prefill(
    graph: _GraphKey,
    params: list[jax.Array],
    cache: Cache,
    state: SlotState,
    batch: dict[str, jax.Array],
    table: jax.Array | None,
    st: _Static,
    mode: str = "truncate",
) -> tuple[Cache, SlotState, jax.Array]:
    model: Model = graph.merge(params)
    b = batch
    rows, lens = b["rows"], b["lens"]
    c = b["tokens"].shape[1]
    offs = jnp.arange(c, dtype=jnp.int32)[None, :]
    positions = b["start"][:, None] + offs
    mask = offs < lens[:, None]
    if st.paged:
        # in place: the chunk's rows see the pool through their own table rows; a row holds
        # ``start`` tokens (0 for a reset row: the host gave it fresh or shared pages)
        slots = cache.lens.shape[0]
        # a pool split over row shards: every shard sees the chunk's rows and serves its own
        owner = rows // (slots // cache.shards) if cache.shards > 1 else None
        sub = dataclasses.replace(cache, table=jnp.take(table, rows, axis=0, mode="clip"),
                                  lens=jnp.where(rows < slots, b["start"], 0), owner=owner)
    else:
        sub = cache.take_rows(rows).reset_rows(b["reset"])
    h, new = model.hidden_states(b["tokens"], positions, sub, attention_mask=mask)
    end = new.lens if st.paged else sub.end + lens  # right padding: the pad slots are free again
    last = jnp.take_along_axis(h, jnp.maximum(lens - 1, 0)[:, None, None], axis=1)
    logits = model.logits(last)[:, 0]
    keys = row_keys(b["seed"], b["stream"], jnp.zeros_like(lens))
    tok, slp, mlp = select(logits, keys, b["temperature"], b["top_k"], b["top_p"], st.vocab_limit, mode)
    final = b["final"]
    stopped = final & (_is_stop(tok, st.stop_ids) | (b["max_new"] <= 1) | (end + 1 >= st.max_len))

    if st.paged:
        cache = dataclasses.replace(cache, kv=new.kv, table=table, lens=cache.lens.at[rows].set(end, mode="drop"))
    else:
        cache = cache.put_rows(rows, dataclasses.replace(new, end=end))
    frows = jnp.where(final, rows, state.tok.shape[0])  # only finished prompts change the row state
    upd = lambda x, y: x.at[frows].set(jnp.asarray(y).astype(x.dtype), mode="drop")  # noqa: E731
    state = SlotState(
        tok=upd(state.tok, tok),
        pos=upd(state.pos, b["start"] + lens),
        active=upd(state.active, ~stopped),
        n_new=upd(state.n_new, jnp.ones_like(lens)),
        max_new=upd(state.max_new, b["max_new"]),
        seed=upd(state.seed, b["seed"]),
        stream=upd(state.stream, b["stream"]),
        temperature=upd(state.temperature, b["temperature"]),
        top_k=upd(state.top_k, b["top_k"]),
        top_p=upd(state.top_p, b["top_p"]),
    )
    cache, state = _place(cache, state, st)
    return cache, state, _pack(tok, slp, mlp, final, stopped)


def _decode_block(
    graph: _GraphKey,
    params: list[jax.Array],
    cache: Cache,
    state: SlotState,
    table: jax.Array | None,
    st: _Static,
    k: int,
    mode: str = "truncate",
) -> tuple[Cache, SlotState, jax.Array]:
    """Up to ``k`` decode steps in one program. Outputs ``[k, 5, R]``; steps not run are all
    zeros, i.e. nothing emitted, so the host reads them as empty.

    Rows whose turn ends inside the block idle in place (computed and discarded, as in a single
    step) while the others go on: the block stops early only when no row is left decoding. The
    host pays its per-program cost (dispatch, read-back) once per ``k`` tokens whatever the rows
    do, and new prompts are prefilled between blocks (JetStream's insert/generate split, vLLM's
    multi-step scheduling); a finished turn reaches the host at the end of its block.
    """
    rows = state.tok.shape[0]

    def cond(c: tuple[Any, ...]) -> jax.Array:
        i, _, s, _ = c
        return (i < k) & jnp.any(s.active)

    def body(c: tuple[Any, ...]) -> tuple[Any, ...]:
        i, ca, s, outs = c
        ca, s, out = _decode(graph, params, ca, s, table, st, mode)
        outs = jax.lax.dynamic_update_slice(outs, out[None], (i, jnp.int32(0), jnp.int32(0)))
        return i + 1, ca, s, outs

    init = (jnp.int32(0), cache, state, jnp.zeros((k, 5, rows), jnp.int32))
    _, cache, state, outs = jax.lax.while_loop(cond, body, init)
    return cache, state, outs


def _copy_prefix(cache: KVCache, dst: jax.Array, src: jax.Array, length: jax.Array, st: _Static) -> KVCache:
    """Row ``dst`` := the first ``length`` slots of row ``src`` (the rest of ``dst`` freed)."""
    row = cache.row(src)
    keep = jnp.arange(cache.capacity, dtype=jnp.int32)[None, :] < length
    row = dataclasses.replace(row, pos=jnp.where(keep, row.pos, -1), end=jnp.full((1,), length, jnp.int32))
    out = cache.set_row(dst, row)
    return out if st.mesh is None else out.constrain(st.mesh, st.rules)


_decode_jit = jax.jit(_decode, static_argnums=(0, 5, 6), donate_argnums=(2, 3))
_copy_prefix_jit = jax.jit(_copy_prefix, static_argnums=(4,), donate_argnums=(0,))
_decode_block_jit = jax.jit(_decode_block, static_argnums=(0, 5, 6, 7), donate_argnums=(2, 3))
_prefill_jit = jax.jit(_prefill, static_argnums=(0, 6, 7), donate_argnums=(2, 3))


class Sampler:
    """The device half of the engine: owns the model params, the KV cache and the slot state.

    Methods dispatch asynchronously (JAX async dispatch) and return device arrays; nothing here
    blocks on the device. Programs are module-level ``jax.jit`` functions keyed on the model's
    graph definition and a small static tuple, so two samplers over equal models and configs
    share their compilations.
    """

    def __init__(
        self,
        model: Model,
        config: EngineConfig,
        *,
        stop_ids: Sequence[int],
        vocab_limit: int | None = None,
        cache_dtype: Any = None,
    ) -> None:
        config.require_resolved()
        self.config = config
        self.model_config = model.config
        self.mesh: Mesh | None = model.mesh
        graphdef, self.params = nnx.split(model)
        # The programs take the params as a flat list of arrays: jit's dispatch of an ``nnx.State``
        # argument can cost milliseconds per call (measured 7.8 vs 1.9 ms for a tiny decode step).
        leaves, treedef = jax.tree.flatten(self.params)
        self._leaves: list[jax.Array] | None = leaves
        self.graph = _GraphKey(graphdef, treedef)
        # what every later set of weights must match (the compiled programs' parameter signature)
        self._signature = [(x.shape, x.dtype, x.sharding) for x in leaves]
        limit = model.config.vocab_size if vocab_limit is None else min(int(vocab_limit), model.config.vocab_size)
        self.static = _Static(
            stop_ids=tuple(int(i) for i in stop_ids),
            vocab_limit=limit,
            max_len=config.max_len,
            mesh=self.mesh,
            rules=model.config.sharding_rules,
            paged=config.paged,
        )
        self.cache_dtype = cache_dtype
        self.programs: set[tuple[str, int]] = set()
        self.kernel: KernelChoice | None = None
        self.pages: PageTable | None = None
        self._table: jax.Array | None = None
        self._table_version = -1
        if config.paged:
            self.kernel = engine_kernel(config, model.config, self.mesh, cache_dtype)
            shards = row_shards(self.mesh, model.config.sharding_rules, config.slots)
            check_pool(config, model.config, cache_dtype, shards)
            self.pages = PageTable(sharded_pool_pages(config, shards), config.page_len, config.slots,
                                   config.max_pages, shards=shards)
        want = jnp.dtype(model.config.param_dtype)
        wrong = {str(x.dtype) for x in leaves if jnp.issubdtype(x.dtype, jnp.floating) and x.dtype != want}
        if wrong:  # the programs are traced for these leaves; the config must describe them
            raise ValueError(f"the model's weights are {sorted(wrong)} but its config says param_dtype={want}")
        self._cache: KVCache | None = None
        self._state: SlotState | None = None
        self._cache, self._state = self.init_buffers()

    # ---- device buffers (released while the trainer needs the memory, re-created on next use) ----
    @property
    def cache(self) -> KVCache:
        if self._cache is None:
            self._cache = self._init_cache()
        return self._cache

    @cache.setter
    def cache(self, value: KVCache) -> None:
        self._cache = value

    @property
    def state(self) -> SlotState:
        if self._state is None:
            self._state = self.init_state()
        return self._state

    @state.setter
    def state(self, value: SlotState) -> None:
        self._state = value

    @property
    def buffers_live(self) -> bool:
        """Whether the KV cache and slot state are allocated (False after :meth:`release`)."""
        return self._cache is not None or self._state is not None

    def release(self, *, params: bool = False) -> None:
        """Free the KV cache and the slot state now (their buffers are deleted, not left to the
        garbage collector), e.g. while a train step needs the memory; both are re-created empty
        on the next program call. ``params``: also drop this sampler's references to its weights
        (a weight sync replaces them anyway); :meth:`update_params` must come before the next use.

        The cache's rows are gone: a scheduler must forget what it thought they held (the GRPO
        loop resets the engine's rows after every weight update for the same reason)."""
        for x in jax.tree.leaves((self._cache, self._state)):
            if isinstance(x, jax.Array) and not x.is_deleted():
                x.delete()
        self._cache, self._state = None, None
        if params:
            self.params, self._leaves = None, None

    def _init_cache(self) -> Cache:
        cfg = self.config
        if cfg.paged:
            assert self.kernel is not None and self.pages is not None
            cache: Cache = PagedKVCache.init(
                self.model_config, cfg.slots, self.pages.num_pages, cfg.max_pages, page_size=cfg.page_len,
                dtype=self.cache_dtype, mesh=self.mesh, pages_per_block=cfg.pages_per_block, kernel=self.kernel.name)
        else:
            cache = KVCache.init(self.model_config, cfg.slots, cfg.capacity, dtype=self.cache_dtype, mesh=self.mesh)
        return jax.device_put(cache, jax.devices()[0]) if self.mesh is None else cache

    def _table_arg(self) -> jax.Array | None:
        """The page table as the programs take it: uploaded again only after the host changed it."""
        if self.pages is None:
            return None
        if self._table is None or self._table_version != self.pages.version:
            table = self.pages.table.copy()
            if self.mesh is None:
                self._table = jax.device_put(table, jax.devices()[0])
            else:
                self._table = jax.device_put(
                    table, named_sharding(self.mesh, ("batch", None), table.shape, self.static.rules))
            self._table_version = self.pages.version
        return self._table

    def _params(self) -> list[jax.Array]:
        if self._leaves is None:
            raise RuntimeError("the sampler's weights were released; call update_params first")
        return self._leaves

    def init_buffers(self) -> tuple[KVCache, SlotState]:
        """Fresh (empty) cache and idle slot state, placed on the mesh when there is one."""
        return self._init_cache(), self.init_state()

    def init_state(self) -> SlotState:
        """All rows idle (e.g. when a new engine run starts over an existing cache)."""
        state = SlotState.init(self.config.slots)
        if self.mesh is None:  # committed like the programs' outputs, so the jit cache key is stable
            device = jax.devices()[0]
            return jax.tree.map(lambda x: jax.device_put(x, device), state)
        rules = self.static.rules
        return jax.tree.map(
            lambda x: jax.device_put(x, named_sharding(self.mesh, _batch_axes(x), x.shape, rules)), state
        )

    def update_params(self, params: nnx.State) -> None:
        """Swap in new weights, e.g. after a GRPO step. They must have the sampler's shapes, its
        weight dtype (the engine dtype: ``engine.weights.WeightSync`` casts the trainer's) and its
        shardings, so every compiled program is reused as is (no recompilation).

        The sampler keeps references, not copies: colocated with the trainer it decodes from the
        trainer's own buffers. A train step that donates its params invalidates them, so call
        this with the step's output before the next decode (or hand over a copy when decoding
        overlaps the update, as the async GRPO mode does)."""
        leaves, treedef = jax.tree.flatten(params)
        if treedef != self.graph.treedef:
            raise ValueError("update_params: the new params do not have the model's structure")
        if any(getattr(x, "is_deleted", lambda: False)() for x in leaves):
            raise ValueError("update_params: these params were donated to (deleted by) a train step; "
                             "pass the step's output params instead")
        for new, (shape, dtype, sharding) in zip(leaves, self._signature, strict=True):
            if new.shape != shape or new.dtype != dtype:
                raise ValueError(f"update_params: {new.shape} {new.dtype} does not match {shape} {dtype}")
            if not new.sharding.is_equivalent_to(sharding, new.ndim):
                raise ValueError(f"update_params: sharding {new.sharding} does not match {sharding}")
        self.params, self._leaves = params, leaves

    def decode(self, block: int | None = None, mode: str = "truncate") -> jax.Array:
        """One token for every decoding row (idle rows are computed and discarded), or with a
        block > 1 (default ``config.decode_block``) up to that many steps (rows whose turn ends
        idle in place; the block stops early only when none decodes); packed, read with
        ``StepOut.unpack`` (a block adds a leading ``[block]`` axis). ``mode``: what the decoding
        rows' sampling needs (``sampling.sampling_mode``; the default serves any row)."""
        k = self.config.decode_block if block is None else int(block)
        self.programs.add(("decode", k))
        table = self._table_arg()
        if k == 1:
            self.cache, self.state, out = _decode_jit(self.graph, self._params(), self.cache, self.state, table,
                                                      self.static, mode)
        else:
            self.cache, self.state, out = _decode_block_jit(
                self.graph, self._params(), self.cache, self.state, table, self.static, k, mode
            )
        return out

    def prefill(self, batch: PrefillBatch, mode: str | None = None) -> jax.Array:
        """Write one chunk into each listed row; rows whose prompt is complete start decoding.
        Returns the packed per-row outputs (``StepOut.unpack``). ``mode``: as for :meth:`decode`
        (default: the least general one the batch's rows allow)."""
        self.programs.add(("prefill", int(batch.tokens.shape[1])))
        arrays = {f.name: getattr(batch, f.name) for f in dataclasses.fields(batch)}
        if mode is None:
            used = batch.rows < self.config.slots  # unused entries sample nothing
            mode = sampling_mode(batch.temperature[used].tolist(), batch.top_k[used].tolist(),
                                 batch.top_p[used].tolist())
        self.cache, self.state, out = _prefill_jit(
            self.graph, self._params(), self.cache, self.state, arrays, self._table_arg(), self.static, mode
        )
        return out

    def copy_prefix(self, dst: int, src: int, length: int) -> None:
        """Start row ``dst`` with the first ``length`` cached tokens of row ``src`` (e.g. the
        shared prompt of a GRPO group): a device copy instead of prefilling them again. Dense
        cache only: a paged row shares the pages instead (``PageTable.share``)."""
        if self.config.paged:
            raise RuntimeError("copy_prefix is for the dense cache; a paged engine shares pages")
        self.programs.add(("copy_prefix", 0))
        self.cache = _copy_prefix_jit(self.cache, np.int32(dst), np.int32(src), np.int32(length), self.static)

    def empty_batch(self, chunk: int) -> PrefillBatch:
        """A prefill batch with every entry unused (the scheduler fills some of them in)."""
        return empty_prefill_batch(self.config, chunk)


def empty_prefill_batch(config: EngineConfig, chunk: int) -> PrefillBatch:
    """A prefill batch of ``config.prefill_rows`` unused entries of ``chunk`` tokens."""
    p, s = config.prefill_rows, config.slots
    zi = np.zeros((p,), np.int32)
    return PrefillBatch(
        rows=np.full((p,), s, np.int32), tokens=np.zeros((p, chunk), np.int32), lens=zi.copy(),
        start=zi.copy(), reset=np.zeros((p,), bool), final=np.zeros((p,), bool),
        max_new=np.ones((p,), np.int32), seed=np.zeros((p,), np.uint32), stream=zi.copy(),
        temperature=np.ones((p,), np.float32), top_k=zi.copy(), top_p=np.ones((p,), np.float32),
    )


def compiled_program_count() -> int:
    """Programs compiled so far by all samplers in this process (decode + prefill variants)."""
    jits = (_decode_jit, _decode_block_jit, _prefill_jit, _copy_prefix_jit)
    return int(sum(j._cache_size() for j in jits))  # type: ignore[attr-defined]
