"""Trainer params -> rollout-engine params, on the devices: one jitted cast + reshard per update.

Why this exists: the trainer keeps f32 master weights sharded for training (FSDP x tensor), but
the engine wants weights in its compute dtype (bf16 for the paper recipes: half the bytes to
hold and to read per decode step) and in a layout of its own; on several hosts every process runs
its own engine over its own devices and so needs a whole copy of the weights there. Moving that
copy through host memory (gather every param to numpy, ``device_put`` it back) costs ~33 GB of
f32 per step at 8B; :class:`WeightSync` moves it device to device instead, in the engine dtype.

What runs where:

* **One process, same dtype and layout** (the tiny CPU default: f32 everywhere, one mesh): no
  transfer at all. :attr:`WeightSync.zero_copy` is True and the engine decodes from the trainer's
  own buffers (``Run.engine_model`` returns the trainer's model).
* **One process otherwise**: one jitted program ``cast`` with ``out_shardings`` = the engine's
  shardings (its dtype, its mesh); XLA inserts whatever collectives the relayout needs.
* **Per-layer engine weights.** The engine always decodes an unscanned model
  (:func:`decode_config`): a scanned trainer's stacked ``[layers, ...]`` params are split into
  one array per layer inside the same program. Why: a scanned decode carries the stacked KV cache
  through the layer loop, and the TPU compiler gives a loop-carried buffer a layout of its own,
  so every decode step copied the whole cache in and out of it (a second cache's worth of HBM:
  the 8B recipe's decode at 64 slots asked for 133 GiB on a v5p chip). Per-layer caches are
  entry parameters updated in place (decode temporaries 0.04 vs 0.57 GiB at 4 layers x 16
  slots x 8k; WORKSPACE "Fit at scale").
* **Several processes**: the program's target is a *global* mesh ``(replica, data, fsdp,
  tensor)`` whose replica ``r`` is process ``r``'s local engine mesh. The engine's partition
  specs never name ``replica``, so the output is replicated over processes: XLA all-gathers the
  (already cast) shards across hosts as collectives, nothing passes through host memory. Each
  process then views its replica's shards as an array over its local mesh with
  ``jax.make_array_from_single_device_arrays`` (no copy): its engine holds a full engine-dtype
  copy laid out over its local devices, and decodes with no cross-host traffic.

jit needs one device order for all shardings of a program. When the trainer mesh lists the
devices in another order than the engine target (e.g. a TPU topology-aware trainer mesh that
interleaves hosts), the cast runs on the trainer mesh and ``jax.device_put`` does the reshard
(JAX's device-order reshard: still collectives on device, two programs instead of one). On CPU
with gloo both paths work (tests/rl/test_weight_sync.py, tests/rl/test_multihost_grpo.py).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec, Sharding

from prove_jax.models import Model, abstract_model, make_mesh, parse_mesh_spec, state_shardings
from prove_jax.models.config import ModelConfig
from prove_jax.models.sharding import MESH_AXES

log = logging.getLogger(__name__)

REPLICA = "replica"
MeshSpec = str | dict[str, int] | None


def local_engine_mesh(spec: MeshSpec, devices: Sequence[Any]) -> Mesh:
    """The engine layout over one process's ``devices``: ``spec`` when it fits them (a ``-1``
    axis fills); otherwise the tensor axis is kept when it divides the device count and the
    rest becomes fsdp (a recipe's global mesh, e.g. ``fsdp=4,tensor=2``, on 4 local devices)."""
    try:
        return make_mesh(spec, devices=devices)
    except ValueError:
        tensor = parse_mesh_spec(spec)["tensor"]
        tensor = tensor if tensor > 0 and len(devices) % tensor == 0 else 1
        fallback = {"fsdp": len(devices) // tensor, "tensor": tensor}
        log.warning("engine mesh %r does not fit %d local devices; using %s", spec, len(devices), fallback)
        return make_mesh(fallback, devices=devices)


def decode_layout(config: ModelConfig, devices: int) -> dict[str, int] | None:
    """The engine's default layout over one process's ``devices`` (``engine.mesh`` empty): tensor
    parallel over as many of them as the KV heads split evenly over, data parallel (weights
    replicated) over the rest; never fsdp. None on one device (the trainer's own placement).

    Why: decode is bound by the bytes each chip reads per step. Tensor parallel splits both the
    weights and the KV heads over the chips (each chip reads 1/t of each, for every row), at the
    price of two small all-reduces per layer; fsdp, the trainer's layout, would all-gather every
    weight at every step. Heads that do not split evenly would leave a chip's query heads without
    their KV head, so the tensor axis stops at a divisor of both head counts; the remaining chips
    become data-parallel replicas (each with its own rows)."""
    if devices <= 1:
        return None
    t = max(d for d in range(1, devices + 1)
            if devices % d == 0 and config.num_kv_heads % d == 0 and config.num_heads % d == 0)
    return {"data": devices // t, "fsdp": 1, "tensor": t}


def engine_mesh_spec(spec: MeshSpec, config: ModelConfig, devices: int) -> MeshSpec:
    """``engine.mesh`` as given, or (empty) :func:`decode_layout` over ``devices`` local devices."""
    return spec or decode_layout(config, devices)


def replica_meshes(spec: MeshSpec, by_process: Sequence[Sequence[Any]]) -> tuple[Mesh, list[Mesh]]:
    """The global ``(replica, *engine axes)`` mesh whose replica ``r`` is process ``r``'s local
    engine mesh over ``by_process[r]``, and those local meshes. Every process computes all of them
    the same way (the global mesh stacks them, so all must agree on each one's device order)."""
    first = local_engine_mesh(spec, by_process[0])
    shape = {a: int(first.shape[a]) for a in first.axis_names}
    meshes = [first] + [make_mesh(shape, devices=list(devs)) for devs in by_process[1:]]
    global_mesh = Mesh(np.stack([m.devices for m in meshes]), (REPLICA, *first.axis_names),
                       axis_types=(AxisType.Auto,) * (len(first.axis_names) + 1))
    return global_mesh, meshes


def _device_order(s: Sharding) -> tuple[Any, ...]:
    """The device order jit compares between a program's shardings."""
    if isinstance(s, NamedSharding):
        return tuple(s.mesh.devices.flat)
    return tuple(sorted(s.device_set, key=lambda d: d.id))


def _mesh_of(shardings: Sequence[Sharding]) -> Mesh | None:
    for s in shardings:
        if isinstance(s, NamedSharding):
            return s.mesh
    return None


def decode_config(config: ModelConfig, dtype: Any = None) -> ModelConfig:
    """The model config a rollout engine decodes with: the trainer's architecture in the engine's
    weight ``dtype`` (default: the trainer's), always unscanned (one KV cache per layer, see the
    module docstring), without remat (nothing is differentiated)."""
    return config.replace(param_dtype=jnp.dtype(dtype or config.param_dtype).name, scan_layers=False, remat="none")


Source = tuple[int, int | None]
"""Where an engine leaf comes from: (index of the trainer leaf, layer to take from a stacked leaf)."""


def _path_key(path: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(getattr(k, "key", getattr(k, "name", getattr(k, "idx", k))) for k in path)


def leaf_sources(trainer: Any, engine: Any) -> list[Source]:
    """For each leaf of the ``engine`` state (unscanned), the trainer leaf it is cast from, and the
    layer index when the trainer stacks its layers. Raises when a leaf has no source or the shapes
    disagree (the two models do not describe the same architecture)."""
    src = {_path_key(p): (i, tuple(x.shape)) for i, (p, x) in enumerate(jax.tree_util.tree_flatten_with_path(trainer)[0])}
    out: list[Source] = []
    for p, x in jax.tree_util.tree_flatten_with_path(engine)[0]:
        key = _path_key(p)
        if key in src:
            j, shape, layer = *src[key], None
        elif len(key) > 1 and key[0] == "layers" and isinstance(key[1], int) and ("layers", *key[2:]) in src:
            (j, stacked), layer = src[("layers", *key[2:])], key[1]
            if layer >= stacked[0]:
                raise ValueError(f"engine param {'/'.join(map(str, key))}: the trainer stacks {stacked[0]} layers")
            shape = stacked[1:]
        else:
            raise ValueError(f"the engine model's param {'/'.join(map(str, key))} has no trainer param")
        if shape != tuple(x.shape):
            raise ValueError(f"engine param {'/'.join(map(str, key))}: shape {tuple(x.shape)}, trainer's {shape}")
        out.append((j, layer))
    if len({j for j, _ in out}) != len(src):
        raise ValueError("the engine model's params do not have the trainer's structure")
    return out


def cast_leaves(dtype: Any, sources: tuple[Source, ...], leaves: list[jax.Array]) -> list[jax.Array]:
    return [(leaves[j] if layer is None else leaves[j][layer]).astype(dtype) for j, layer in sources]


def transfer_program(dtype: Any, sources: tuple[Source, ...], src: Sequence[Sharding],
                     targets: Sequence[Sharding], merge: Any = None) -> tuple[Any, bool]:
    """The jitted trainer -> engine program and whether it is the whole transfer. jit needs one
    device order for all of a program's shardings: when the trainer's and the targets' orders
    agree, one program casts and lays out; otherwise it casts where the params are and the caller
    reshards with ``jax.device_put`` (the planner compiles exactly this program). ``merge`` (LoRA):
    a function from the program's input leaves to the plain model's param leaves, traced into the
    same program (``src`` are then the plain params' shardings)."""
    cast = partial(cast_leaves, jnp.dtype(dtype), sources)
    if merge is not None:
        cast = partial(_merge_then_cast, cast, merge)
    if all(_device_order(t) == _device_order(src[0]) for t in [*src, *targets]):
        return jax.jit(cast, out_shardings=list(targets)), True
    return jax.jit(cast, out_shardings=[src[j] if layer is None else _drop_layers(src[j]) for j, layer in sources]), False


def merge_leaves_fn(merge: Any, treedef: Any, leaves: list[jax.Array]) -> list[jax.Array]:
    """``merge`` over flat leaves: the input leaves (of ``treedef``) -> the plain model's leaves."""
    return jax.tree.leaves(merge(jax.tree.unflatten(treedef, leaves)))


def _merge_then_cast(cast: Any, merge: Any, leaves: list[jax.Array]) -> list[jax.Array]:
    return cast(merge(leaves))


class WeightSync:
    """Built once from the trainer's params (their shardings and structure) and the engine's
    dtype and layout; ``sync(params)`` returns the engine's params for new trainer params.

    ``bytes`` is what one transfer writes on the engine side (one engine replica: params x the
    engine dtype's size; 0 when zero-copy); ``last_seconds`` the wall time of the last transfer
    (dispatch to ``block_until_ready``). Every call runs the same compiled program(s): the shapes,
    dtypes and shardings never change, so neither this program nor the engine's recompile.
    """

    def __init__(self, config: ModelConfig, params: Any, *, dtype: Any = None, mesh: MeshSpec = None,
                 merge: Any = None) -> None:
        """``config``/``params``: the trainer's model config and params (arrays or
        ShapeDtypeStructs with shardings). ``dtype``: the engine's weight dtype (default: the
        trainer's). ``mesh``: the engine's mesh spec (default: the trainer's mesh in one process;
        its axis sizes fitted to the local devices on several). ``merge`` (LoRA): ``params`` are
        then whatever the trainer holds (adapters and frozen base) and ``merge(params)`` the plain
        model's params; the merge runs inside the transfer program, so the engine gets merged
        weights in its dtype with no full-precision merged copy in between (never zero-copy)."""
        leaves, self.treedef = jax.tree.flatten(params)
        src = [x.sharding for x in leaves]
        trainer_mesh = _mesh_of(src)
        merge_leaves = None
        if merge is not None:
            plain = nnx.split(abstract_model(config, trainer_mesh))[1]
            if jax.tree.structure(jax.eval_shape(merge, params)) != jax.tree.structure(plain):
                raise ValueError("weight sync: merge(params) does not have the plain model's structure")
            merge_leaves = partial(merge_leaves_fn, merge, self.treedef)
            src = jax.tree.leaves(state_shardings(plain, trainer_mesh, config.sharding_rules))
            params = plain
        self.dtype = jnp.dtype(dtype if dtype is not None else config.param_dtype)
        self.config = decode_config(config, self.dtype)  # what the engine's programs see
        self.processes = jax.process_count()
        self.global_mesh: Mesh | None = None  # several processes: (replica, *local engine mesh)
        if self.processes > 1:
            if trainer_mesh is None:
                raise ValueError("several processes: the trainer params must live on a global mesh")
            spec = mesh if mesh else {a: int(trainer_mesh.shape.get(a, 1)) for a in MESH_AXES}
            self.mesh: Mesh | None = self._replica_meshes(spec)[jax.process_index()]
        elif mesh:
            self.mesh = make_mesh(mesh)
            if trainer_mesh is not None and self.mesh == trainer_mesh:
                self.mesh = trainer_mesh
        else:
            self.mesh = trainer_mesh
        self.graphdef, abstract = nnx.split(abstract_model(self.config, self.mesh))
        self.sources = tuple(leaf_sources(params, abstract))
        self.engine_treedef = jax.tree.structure(abstract)
        self.shardings: list[Sharding] = jax.tree.leaves(state_shardings(abstract, self.mesh,
                                                                         self.config.sharding_rules))
        self.shapes = [tuple(x.shape) for x in jax.tree.leaves(abstract)]
        identity = merge is None and self.sources == tuple((i, None) for i in range(len(leaves)))
        self.zero_copy = identity and self.processes == 1 and self.dtype == jnp.dtype(config.param_dtype) and all(
            d.is_equivalent_to(s, len(shape)) for d, s, shape in zip(self.shardings, src, self.shapes, strict=True))
        per_replica = sum(math.prod(s) for s in self.shapes) * self.dtype.itemsize
        self.bytes = 0 if self.zero_copy else per_replica
        self.targets = self._global_targets() if self.processes > 1 else self.shardings
        self._program, self.one_program = transfer_program(self.dtype, self.sources, src, self.targets,
                                                           merge_leaves)
        self.merges = merge is not None
        if not self.one_program:
            log.warning("weight sync: the trainer mesh orders devices differently from the engine target; "
                        "casting on the trainer mesh, then resharding with jax.device_put")
        self.last_seconds = 0.0
        self.transfers = 0

    # ---- layout ---------------------------------------------------------------------------------
    def _replica_meshes(self, spec: MeshSpec) -> list[Mesh]:
        """Every process's local engine mesh (see :func:`replica_meshes`)."""
        by_process = [[d for d in jax.devices() if d.process_index == p] for p in range(self.processes)]
        self.global_mesh, meshes = replica_meshes(spec, by_process)
        return meshes

    def _global_targets(self) -> list[Sharding]:
        """The engine shardings on the global ``(replica, *local mesh)`` mesh; also checks that each
        local device holds the same block in both (what makes the local view a zero-copy one)."""
        local, global_mesh = self.mesh, self.global_mesh
        assert local is not None and global_mesh is not None
        targets: list[Sharding] = []
        for s, shape in zip(self.shardings, self.shapes, strict=True):
            assert isinstance(s, NamedSharding)
            t = NamedSharding(global_mesh, s.spec)
            mine, theirs = s.devices_indices_map(shape), t.devices_indices_map(shape)
            if any(mine[d] != theirs[d] for d in local.devices.flat):
                raise AssertionError(f"engine block layout differs between local and global mesh for {shape}")
            targets.append(t)
        return targets

    # ---- transfer -------------------------------------------------------------------------------
    def __call__(self, params: Any) -> Any:
        """The engine's params (an ``nnx.State`` like ``params``) for the trainer's ``params``."""
        leaves, treedef = jax.tree.flatten(params)
        if treedef != self.treedef:
            raise ValueError("weight sync: params do not have the structure this sync was built for")
        t0 = time.perf_counter()
        if self.zero_copy:
            out = leaves
        else:
            out = self._program(leaves)
            if not self.one_program:
                out = jax.device_put(out, self.targets)
            if self.processes > 1:
                out = [_local_view(x, s) for x, s in zip(out, self.shardings, strict=True)]
            jax.block_until_ready(out)
        self.last_seconds = time.perf_counter() - t0
        self.transfers += 1
        return jax.tree.unflatten(self.engine_treedef, out)

    def engine_model(self, params: Any) -> Model:
        """A model over the engine's params for ``params`` (the engine's first weights)."""
        return nnx.merge(self.graphdef, self(params))

    def describe(self) -> dict[str, Any]:
        """What the sync does, for logs and summaries."""
        mode = "zero-copy" if self.zero_copy else "one program" if self.one_program else "cast + device_put"
        if self.merges:
            mode = f"LoRA merge + {mode}"
        return {"mode": mode, "dtype": self.dtype.name, "bytes": self.bytes, "processes": self.processes,
                "engine_mesh": None if self.mesh is None else dict(self.mesh.shape)}


def _drop_layers(s: Sharding) -> Sharding:
    """The sharding of one layer taken from a stacked param (its leading ``layers`` axis dropped)."""
    if isinstance(s, NamedSharding):
        return NamedSharding(s.mesh, PartitionSpec(*tuple(s.spec)[1:]))
    return s


def _local_view(x: jax.Array, local: Sharding) -> jax.Array:
    """This process's replica of a global array, as an array over the local mesh (no copy)."""
    shards = {s.device: s.data for s in x.addressable_shards}
    arrays = [shards[d] for d in local.addressable_devices_indices_map(x.shape)]
    return jax.make_array_from_single_device_arrays(x.shape, local, arrays)
