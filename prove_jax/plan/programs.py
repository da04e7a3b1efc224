"""Every program a GRPO (or SFT) run executes, lowered and compiled against abstract inputs.

The planner builds the *same* jitted functions the run uses (``rl.step.train_programs``, the
engine's prefill/decode programs, the trainer -> engine weight transfer) and feeds them
``jax.ShapeDtypeStruct`` leaves carrying the run's real shardings on the target's devices: no
array is ever allocated, so an 8B model plans on a laptop. Each compiled program's
``memory_analysis()`` is per device (SPMD); ``cost_analysis()`` gives its FLOPs.

What lives where during a step (per device):

* always: the train state (f32 params + AdamW moments), the frozen reference (when ``kl_coef >
  0``, in its storage dtype), the engine's params (engine dtype, on the engine's mesh);
* rollouts: + the KV cache and slot state (the decode/prefill programs' arguments) + their
  temporaries;
* update: + the f32 gradient accumulator + one micro-batch + the accumulate program's
  temporaries (the KV cache is released first in synchronous GRPO), then the apply program.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import time
from collections.abc import Iterator
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from prove_jax.engine.config import EngineConfig
from prove_jax.engine.weights import decode_config, replica_meshes
from prove_jax.models import ModelConfig, abstract_model
from prove_jax.models.sharding import logical_to_spec, make_mesh
from prove_jax.plan.topology import Topology


@dataclasses.dataclass(frozen=True)
class Compiled:
    """One compiled program's per-device figures (bytes) and its FLOPs (all devices)."""

    name: str
    arguments: int
    temporaries: int
    outputs: int
    aliased: int
    flops: float
    compile_s: float
    note: str = ""

    @property
    def live(self) -> int:
        """Bytes the program needs while it runs: inputs, outputs not written in place, scratch."""
        return self.arguments + self.outputs - self.aliased + self.temporaries


def nbytes_per_device(tree: Any) -> int:
    """Per-device bytes of abstract (or real) arrays by their shardings' shard shapes."""
    total = 0
    for x in jax.tree.leaves(tree):
        shape = x.sharding.shard_shape(x.shape) if getattr(x, "sharding", None) is not None else x.shape
        total += int(np.prod(shape)) * jnp.dtype(x.dtype).itemsize
    return total


def abstract(tree: Any, shardings: Any) -> Any:
    """``ShapeDtypeStruct`` leaves with the given shardings (tree structures must agree)."""
    return jax.tree.map(lambda x, s: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=s), tree, shardings)


_HBM_OOM = re.compile(r"CompileTimeHbmOom.*?temporaries \(([0-9.]+)([KMGT])\)", re.S)


def compile_program(name: str, jitted: Any, *args: Any, note: str = "") -> Compiled:
    """Lower ``jitted`` on ``args`` and compile (see :func:`compile_lowered`)."""
    return compile_lowered(name, jitted.lower(*args), args, note=note)


def compile_lowered(name: str, lowered: Any, args: Any, note: str = "") -> Compiled:
    """Compile; a TPU compiler that refuses the program for its size (``CompileTimeHbmOom``) is an
    answer too: the program is reported with the temporaries the compiler asked for (``args``:
    the abstract inputs, for their bytes)."""
    t = time.perf_counter()
    try:
        exe = lowered.compile()
    except jax.errors.JaxRuntimeError as e:
        m = _HBM_OOM.search(str(e))
        if not m:
            raise
        temp = int(float(m.group(1)) * 1024 ** " KMGT".index(m.group(2)))
        args_b = nbytes_per_device([x for x in jax.tree.leaves(args) if hasattr(x, "shape") and hasattr(x, "dtype")])
        return Compiled(name, args_b, temp, 0, 0, 0.0, time.perf_counter() - t,
                        f"{note}; REFUSED by the compiler: {temp / 1024**3:.1f} GiB of temporaries")
    dt = time.perf_counter() - t
    mem = exe.memory_analysis()
    cost = exe.cost_analysis()
    cost = cost[0] if isinstance(cost, (list, tuple)) else cost
    flops = float((cost or {}).get("flops", 0.0))
    return Compiled(name, int(mem.argument_size_in_bytes), int(mem.temp_size_in_bytes), int(mem.output_size_in_bytes),
                    int(mem.alias_size_in_bytes), flops, dt, note)


@contextlib.contextmanager
def no_persistent_cache() -> Iterator[None]:
    """Deviceless executables cannot be serialised back from JAX's persistent compilation cache
    (the target has no client), so TPU plans compile with it off (and restore it after)."""
    from jax.experimental.compilation_cache import compilation_cache

    was = jax.config.jax_enable_compilation_cache
    jax.config.update("jax_enable_compilation_cache", False)
    compilation_cache.reset_cache()
    try:
        yield
    finally:
        jax.config.update("jax_enable_compilation_cache", was)
        compilation_cache.reset_cache()


# ---- meshes -----------------------------------------------------------------------------------
def trainer_mesh(spec: str, topo: Topology) -> Mesh:
    assert topo.devices is not None
    return make_mesh(spec or "fsdp=-1", devices=list(topo.devices))


def engine_mesh(spec: Any, devices: list[Any]) -> Mesh:
    """The engine's mesh over one process's devices, built exactly as the run builds it."""
    from prove_jax.engine.weights import local_engine_mesh

    return local_engine_mesh(spec or None, devices)


# ---- the trainer's programs ---------------------------------------------------------------------
@dataclasses.dataclass
class TrainSide:
    """Abstract train state, reference and the step's programs on the trainer mesh."""

    mesh: Mesh
    graphdef: Any
    params: Any
    opt_state: Any
    ref: Any | None
    programs: Any
    static: Any
    metric_names: tuple[str, ...]
    replicated: NamedSharding


def build_train_side(mc: ModelConfig, mesh: Mesh, objective: Any, optim: Any, *, reference: bool,
                     reference_dtype: str | None, lora: Any = None) -> TrainSide:
    """``lora`` (an enabled LoraConfig): the trained params are the adapters, AdamW's moments
    adapter-shaped, and ``ref`` the frozen base (QLoRA: its codes and scales), which is also the
    KL reference: what ``Trainer`` holds for a model with adapters."""
    from prove_jax.rl.step import (
        StepStatic,
        TrainState,
        learning_rate,
        make_optimizer,
        ref_storage_dtype,
        train_programs,
        tree_shardings,
    )

    if lora is not None and lora.enabled:
        return _lora_train_side(mc, mesh, objective, optim, reference=reference, lora=lora)
    graphdef, state = nnx.split(abstract_model(mc, mesh))
    rules = mc.sharding_rules
    p_sh = tree_shardings(state, mesh, rules)
    params = abstract(state, p_sh)
    tx = make_optimizer(optim)
    opt_shape = jax.eval_shape(tx.init, state)
    o_sh = tree_shardings(opt_shape, mesh, rules)
    opt_state = abstract(opt_shape, o_sh)
    replicated = NamedSharding(mesh, PartitionSpec())
    programs = train_programs(tx, learning_rate(optim), p_sh, TrainState(p_sh, o_sh, replicated, replicated),
                              replicated)
    ref = None
    if reference:
        dt = ref_storage_dtype(mc.dtype, reference_dtype)
        ref = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, dt, sharding=x.sharding), params)
    static = StepStatic(graphdef, objective)
    return TrainSide(mesh, graphdef, params, opt_state, ref, programs, static, (), replicated)


def _lora_train_side(mc: ModelConfig, mesh: Mesh, objective: Any, optim: Any, *, reference: bool,
                     lora: Any) -> TrainSide:
    from prove_jax.models.decoder import Model
    from prove_jax.models.lora import apply_lora, without_adapters
    from prove_jax.rl.step import (
        StepStatic,
        TrainState,
        learning_rate,
        make_optimizer,
        train_programs,
        tree_shardings,
    )

    model = nnx.eval_shape(lambda: apply_lora(Model(mc, rngs=nnx.Rngs(0), mesh=mesh), lora))
    graphdef, adapters, frozen = nnx.split(model, nnx.LoRAParam, ...)
    rules = mc.sharding_rules
    p_sh = tree_shardings(adapters, mesh, rules)
    tx = make_optimizer(optim)
    opt_shape = jax.eval_shape(tx.init, adapters)
    o_sh = tree_shardings(opt_shape, mesh, rules)
    replicated = NamedSharding(mesh, PartitionSpec())
    programs = train_programs(tx, learning_rate(optim), p_sh, TrainState(p_sh, o_sh, replicated, replicated),
                              replicated)
    static = StepStatic(graphdef, objective, nnx.graphdef(without_adapters(model)), reference)
    return TrainSide(mesh, graphdef, abstract(adapters, p_sh), abstract(opt_shape, o_sh),
                     abstract(frozen, tree_shardings(frozen, mesh, rules)), programs, static, (), replicated)


def micro_batch(side: TrainSide, rows: int, length: int, rules: Any, grpo: bool) -> dict[str, Any]:
    """An abstract micro-batch of ``rows`` global rows of ``length`` tokens, sharded as
    ``Trainer.place`` shards it (rows over data x fsdp)."""
    def sds(shape: tuple[int, ...], dtype: Any) -> jax.ShapeDtypeStruct:
        spec = logical_to_spec(("batch",) + (None,) * (len(shape) - 1), rules)
        return jax.ShapeDtypeStruct(shape, dtype, sharding=NamedSharding(side.mesh, spec))

    out = {"tokens": sds((rows, length), jnp.int32), "loss_mask": sds((rows, length), jnp.bool_)}
    if grpo:
        out["sample_logprobs"] = sds((rows, length), jnp.float32)
        out["advantages"] = sds((rows,), jnp.float32)
    return out


def denominators(side: TrainSide) -> Any:
    from prove_jax.rl.losses import Denominators

    s = jax.ShapeDtypeStruct((), jnp.float32, sharding=side.replicated)
    return Denominators(s, s)


def accumulator(side: TrainSide, batch: dict[str, Any]) -> dict[str, Any]:
    den = denominators(side)
    if not side.metric_names:
        from prove_jax.rl.step import bind

        def metrics(p: Any, r: Any, b: Any, d: Any) -> Any:
            if side.static.base is None:  # full fine-tuning: the reference has the params' structure
                r = None if r is None else p
            return side.static.objective(*bind(side.static, p, r), b, d)[1]

        shapes = jax.eval_shape(metrics, side.params, side.ref, batch, den)
        side.metric_names = tuple(sorted(shapes))
    grads = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, jnp.float32, sharding=x.sharding), side.params)
    scalar = jax.ShapeDtypeStruct((), jnp.float32, sharding=side.replicated)
    return {"grads": grads, "metrics": dict.fromkeys(side.metric_names, scalar)}


def compile_accumulate(side: TrainSide, rows: int, length: int, rules: Any, grpo: bool) -> Compiled:
    batch = micro_batch(side, rows, length, rules, grpo)
    acc = accumulator(side, batch)
    note = f"{rows} rows x {length} tokens" + (" (+ reference forward)" if side.ref is not None else "")
    return compile_program(f"accumulate[{length}]", side.programs.accumulate, side.static, side.params, side.ref,
                           acc, batch, denominators(side), note=note)


def compile_apply(side: TrainSide) -> Compiled:
    from prove_jax.rl.step import TrainState

    scalar = jax.ShapeDtypeStruct((), jnp.int32, sharding=side.replicated)
    state = TrainState(side.params, side.opt_state, scalar, scalar)
    if not side.metric_names:
        raise ValueError("compile an accumulate program first: it fixes the accumulator's metric names")
    acc = accumulator(side, {})
    return compile_program("update", side.programs.apply, state, acc, note="clip + AdamW + NaN guard")


# ---- the engine's programs ----------------------------------------------------------------------
@dataclasses.dataclass
class EngineSide:
    mesh: Mesh
    config: EngineConfig
    lowered: Any  # engine.lowering.LoweredEngine

    @property
    def leaves(self) -> list[Any]:
        return self.lowered.params

    @property
    def cache(self) -> Any:
        return self.lowered.cache

    @property
    def state(self) -> Any:
        return self.lowered.state


def build_engine_side(mc: ModelConfig, mesh: Mesh, ecfg: EngineConfig, engine_dtype: str) -> EngineSide:
    """The run's engine (``decode_config``: engine dtype, per-layer caches) lowered on ``mesh``."""
    from prove_jax.engine.lowering import lower_engine
    from prove_jax.models.decoder import state_shardings

    emc = decode_config(mc, engine_dtype)
    graphdef, state = nnx.split(abstract_model(emc, mesh))
    params = abstract(state, state_shardings(state, mesh, emc.sharding_rules))
    return EngineSide(mesh, ecfg, lower_engine(emc, graphdef, params, ecfg, mesh))


def compile_decode(side: EngineSide) -> Compiled:
    k = side.config.decode_block
    note = f"{side.config.slots} slots" + (f" x block {k}" if k > 1 else "")
    return compile_lowered("decode", side.lowered.decode, (side.leaves, side.cache, side.state), note=note)


def compile_prefill(side: EngineSide) -> Compiled:
    note = f"{side.config.prefill_rows} rows x chunk {side.config.max_chunk}"
    return compile_lowered("prefill", side.lowered.prefill, (side.leaves, side.cache, side.state), note=note)


# ---- the weight transfer ------------------------------------------------------------------------
def transfer_mesh(spec: Any, topo: Topology) -> Mesh:
    """All devices as (hosts x one engine layout), built as the run's WeightSync builds it: params
    replicated over hosts, sharded within one, so each process's engine shards are its
    addressable shards of one global array."""
    return replica_meshes(spec or None, [topo.host_devices(h) for h in range(topo.hosts)])[0]


def compile_transfer(train: TrainSide, mc: ModelConfig, mesh: Mesh, engine_dtype: str) -> Compiled:
    """The run's trainer -> engine program (``WeightSync``'s): cast to the engine dtype, split
    stacked layers, lay out on the engine mesh replicated over hosts (``mesh``: the replica mesh).
    When the trainer mesh orders devices differently (a topology-aware pod mesh), the run casts in
    the trainer's layout and reshards with ``jax.device_put``: that cast is what compiles here."""
    from prove_jax.engine.weights import leaf_sources, transfer_program
    from prove_jax.models.decoder import state_shardings

    emc = decode_config(mc, engine_dtype)
    _, state = nnx.split(abstract_model(emc, mesh))
    targets = jax.tree.leaves(state_shardings(state, mesh, emc.sharding_rules))
    if train.static.base is not None:  # LoRA: the run's WeightSync merges inside the same program
        from prove_jax.engine.weights import merge_leaves_fn
        from prove_jax.rl.step import merged_params

        leaves, treedef = jax.tree.flatten((train.params, train.ref))
        merge = partial(merge_leaves_fn, partial(merged_params, train.static), treedef)
        plain = nnx.split(abstract_model(mc, train.mesh))[1]
        src = jax.tree.leaves(state_shardings(plain, train.mesh, mc.sharding_rules))
        jitted, one = transfer_program(engine_dtype, tuple(leaf_sources(plain, state)), src, targets, merge)
        what = "LoRA merge (adapters + frozen base) -> "
    else:
        leaves = jax.tree.leaves(train.params)
        jitted, one = transfer_program(engine_dtype, tuple(leaf_sources(train.params, state)),
                                       [x.sharding for x in leaves], targets)
        what = "f32 trainer layout -> "
    how = "on device" if one else "cast in the trainer layout, then a device_put reshard"
    return compile_program("weight_transfer", jitted, leaves,
                           note=f"{what}{engine_dtype} per-layer engine layout, {how}")

