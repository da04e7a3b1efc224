"""Lowering the engine's programs on abstract inputs (``python -m prove_jax.plan``): the same jitted
decode and prefill a :class:`~prove_jax.engine.sampler.Sampler` runs, over ``ShapeDtypeStruct``
weights, cache and slot state placed by the same rules, on any devices (a TPU topology this
host does not have included)."""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any

import jax
from flax import nnx
from jax.sharding import Mesh

from prove_jax.engine.config import EngineConfig
from prove_jax.engine.pages import engine_kernel, sharded_pool_pages
from prove_jax.engine.sampler import (
    SlotState,
    _batch_axes,
    _decode_block_jit,
    _decode_jit,
    _GraphKey,
    _prefill_jit,
    _Static,
    empty_prefill_batch,
)
from prove_jax.models import KVCache
from prove_jax.models.config import ModelConfig
from prove_jax.models.kernels import KernelChoice
from prove_jax.models.paged import PagedKVCache, row_shards
from prove_jax.models.sharding import named_sharding


@dataclasses.dataclass(frozen=True)
class LoweredEngine:
    """The engine's decode and prefill programs lowered on abstract inputs (see :func:`lower_engine`)."""

    decode: Any  # jax.stages.Lowered
    prefill: Any
    params: list[Any]  # the abstract weights, as the programs take them (a flat list)
    cache: Any  # KVCache or PagedKVCache, abstract, placed as the sampler places it
    state: SlotState
    kernel: KernelChoice | None = None  # the paged attention the programs use (None: dense cache)


def lower_engine(model_config: ModelConfig, graphdef: nnx.GraphDef, params: nnx.State, config: EngineConfig,
                 mesh: Mesh | None, *, vocab_limit: int | None = None) -> LoweredEngine:
    """Lower the programs a :class:`Sampler` over this model would run, without any array: ``params``
    are ``jax.ShapeDtypeStruct`` leaves carrying their shardings (on any devices, e.g. a TPU
    topology this host does not have), the cache and slot state are built abstract and placed by
    the same rules. What ``python -m prove_jax.plan`` compiles and measures."""
    leaves, treedef = jax.tree.flatten(params)
    graph = _GraphKey(graphdef, treedef)
    rules = model_config.sharding_rules

    def place(x: Any, logical: tuple[str | None, ...]) -> jax.ShapeDtypeStruct:
        sharding = None if mesh is None else named_sharding(mesh, logical, x.shape, rules)
        return jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding)

    kernel = engine_kernel(config, model_config, mesh, None) if config.paged else None
    table = None
    if config.paged:
        assert kernel is not None
        pages = sharded_pool_pages(config, row_shards(mesh, rules, config.slots))
        cache: Any = jax.eval_shape(lambda: PagedKVCache.init(
            model_config, config.slots, pages, config.max_pages, page_size=config.page_len,
            pages_per_block=config.pages_per_block, kernel=kernel.name))
        if mesh is not None:  # placed as the sampler places it (pages split over the row shards)
            cache = cache.with_mesh(mesh, rules)
            pool, lens, tab = cache.placements()
            sds = lambda x, s: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=s)  # noqa: E731
            cache = dataclasses.replace(cache, kv=jax.tree.map(sds, cache.kv, pool), lens=sds(cache.lens, lens),
                                        table=sds(cache.table, tab))
        table = cache.table
    else:
        shape = jax.eval_shape(lambda: KVCache.init(model_config, config.slots, config.capacity))
        kv_axes = shape.kv_axes()
        cache = dataclasses.replace(
            shape,
            k=jax.tree.map(lambda x: place(x, kv_axes), shape.k),
            v=jax.tree.map(lambda x: place(x, kv_axes), shape.v),
            pos=place(shape.pos, ("batch", "cache_seq")),
            end=place(shape.end, ("batch",)),
        )
    state = jax.tree.map(lambda x: place(x, _batch_axes(x)), jax.eval_shape(lambda: SlotState.init(config.slots)))
    limit = model_config.vocab_size if vocab_limit is None else vocab_limit
    st = _Static(stop_ids=(0,), vocab_limit=limit, max_len=config.max_len, mesh=mesh, rules=rules,
                 paged=config.paged)
    k = config.decode_block
    empty = empty_prefill_batch(config, config.max_chunk)
    batch = {f.name: jax.ShapeDtypeStruct(getattr(empty, f.name).shape, getattr(empty, f.name).dtype)
             for f in dataclasses.fields(empty)}
    # a Pallas TPU kernel lowers for the mesh's (possibly deviceless) devices under its abstract mesh
    ctx = (jax.sharding.use_abstract_mesh(mesh.abstract_mesh) if mesh is not None and kernel is not None
           and kernel.name == "tpu" else contextlib.nullcontext())
    with ctx:
        # the rollouts' programs: rows that sample (GRPO's temperature), no top-k/top-p
        if k == 1:
            decode = _decode_jit.lower(graph, leaves, cache, state, table, st, "sample")
        else:
            decode = _decode_block_jit.lower(graph, leaves, cache, state, table, st, k, "sample")
        prefill = _prefill_jit.lower(graph, leaves, cache, state, batch, table, st, "sample")
    return LoweredEngine(decode, prefill, leaves, cache, state, kernel)
