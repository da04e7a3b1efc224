"""Logical-axis sharding: parameter axes are named once, a rules table maps names to mesh axes.

Every parameter carries logical axis names (``embed``, ``mlp``, ``heads``, ``kv_heads``,
``head_dim``, ``vocab``, ``layers``) as NNX sharding metadata.  The mesh has up to three axes,
``data`` (pure data parallel, weights replicated), ``fsdp`` (data parallel with weights sharded)
and ``tensor`` (Megatron-style tensor parallel).  Changing the parallelism layout is a change of
the rules table or the mesh spec, never of the model code.

A mesh axis is dropped from a dimension it does not divide (e.g. 2 KV heads on tensor=4): the
parameter is then replicated along that mesh axis instead of failing, which is what small
models on wide meshes need.  A mesh axis is also never used twice in one array.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import jax
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec

MESH_AXES: tuple[str, ...] = ("data", "fsdp", "tensor")

MeshAxes = str | tuple[str, ...] | None
Rules = tuple[tuple[str, MeshAxes], ...]

DEFAULT_RULES: Rules = (
    # activations
    ("batch", ("data", "fsdp")),
    ("seq", None),
    ("cache_seq", None),
    ("cache_pages", None),  # the paged KV pool: every data replica holds the pages of its rows (see paged.py)
    ("act_embed", None),
    ("act_heads", "tensor"),
    ("act_vocab", "tensor"),
    # parameters
    ("vocab", "tensor"),
    ("embed", "fsdp"),
    ("mlp", "tensor"),
    ("heads", "tensor"),
    ("kv_heads", "tensor"),
    ("head_dim", None),
    ("layers", None),
    ("norm", None),
)
"""FSDP over ``embed`` + tensor parallel over heads/mlp/vocab (the MaxText/Tunix default layout)."""


def parse_mesh_spec(spec: str | dict[str, int] | None) -> dict[str, int]:
    """Parse ``"fsdp=4,tensor=2"`` into ``{"data": 1, "fsdp": 4, "tensor": 2}``.

    One axis may be ``-1`` (fill with the remaining devices).  Unknown axis names are rejected
    so a typo cannot silently fall back to replication.
    """
    if spec is None or spec == "":
        sizes: dict[str, int] = {}
    elif isinstance(spec, dict):
        sizes = {str(k): int(v) for k, v in spec.items()}
    else:
        sizes = {}
        for part in spec.replace(" ", "").split(","):
            if not part:
                continue
            name, sep, value = part.partition("=")
            if not sep:
                raise ValueError(f"bad mesh spec element {part!r} in {spec!r}; expected axis=size")
            if name in sizes:
                raise ValueError(f"mesh axis {name!r} given twice in {spec!r}")
            sizes[name] = int(value)
    unknown = set(sizes) - set(MESH_AXES)
    if unknown:
        raise ValueError(f"unknown mesh axes {sorted(unknown)}; allowed: {MESH_AXES}")
    return {axis: sizes.get(axis, 1) for axis in MESH_AXES}


def make_mesh(spec: str | dict[str, int] | None = None, devices: Sequence[Any] | None = None) -> Mesh:
    """Build a ``(data, fsdp, tensor)`` mesh from a spec string; unspecified axes have size 1.

    With no ``-1`` axis the product must equal the device count exactly (use ``devices=`` to
    build a mesh over a subset).  All axes are ``Auto`` so XLA's propagation handles activations.
    """
    devs = list(devices) if devices is not None else jax.devices()
    sizes = parse_mesh_spec(spec)
    fill = [a for a, s in sizes.items() if s == -1]
    if len(fill) > 1:
        raise ValueError("at most one mesh axis may be -1")
    known = math.prod(s for s in sizes.values() if s != -1)
    if fill:
        if len(devs) % known:
            raise ValueError(f"{len(devs)} devices cannot be split by {sizes}")
        sizes[fill[0]] = len(devs) // known
    if math.prod(sizes.values()) != len(devs):
        raise ValueError(f"mesh {sizes} needs {math.prod(sizes.values())} devices, have {len(devs)}")
    shape = tuple(sizes[a] for a in MESH_AXES)
    return jax.make_mesh(shape, MESH_AXES, axis_types=(AxisType.Auto,) * len(MESH_AXES), devices=devs)


def _as_tuple(axes: MeshAxes) -> tuple[str, ...]:
    if axes is None:
        return ()
    return (axes,) if isinstance(axes, str) else tuple(axes)


def logical_to_spec(
    logical_axes: Iterable[str | None],
    rules: Rules = DEFAULT_RULES,
    shape: Sequence[int] | None = None,
    mesh: Mesh | None = None,
) -> PartitionSpec:
    """Translate logical axis names to a PartitionSpec.

    With ``shape`` and ``mesh`` given, mesh axes of size 1, axes absent from the mesh, axes that
    do not divide the dimension, and axes already used by an earlier dimension are dropped.
    Unknown logical names map to no mesh axis (replicated) — but the name must be in the table,
    so a misspelt name in model code fails here rather than silently replicating.
    """
    table = dict(rules)
    logical = tuple(logical_axes)
    used: set[str] = set()
    out: list[MeshAxes] = []
    for i, name in enumerate(logical):
        if name is None:
            out.append(None)
            continue
        if name not in table:
            raise KeyError(f"logical axis {name!r} has no entry in the sharding rules {sorted(table)}")
        chosen: list[str] = []
        remaining = shape[i] if shape is not None else None
        for axis in _as_tuple(table[name]):
            if axis in used:
                continue
            if mesh is not None:
                size = mesh.shape.get(axis, 1) if axis in mesh.axis_names else 0
                if size <= 1:
                    continue
                if remaining is not None:
                    if remaining % size:
                        continue
                    remaining //= size
            chosen.append(axis)
            used.add(axis)
        out.append(None if not chosen else chosen[0] if len(chosen) == 1 else tuple(chosen))
    while out and out[-1] is None:
        out.pop()
    return PartitionSpec(*out)


def named_sharding(
    mesh: Mesh, logical_axes: Iterable[str | None], shape: Sequence[int], rules: Rules = DEFAULT_RULES
) -> NamedSharding:
    """NamedSharding for an array of ``shape`` with the given logical axes on ``mesh``."""
    return NamedSharding(mesh, logical_to_spec(logical_axes, rules, shape, mesh))


def constrain(x: jax.Array, logical_axes: Sequence[str | None], mesh: Mesh | None, rules: Rules) -> jax.Array:
    """``with_sharding_constraint`` by logical names; a no-op without a mesh (single device)."""
    if mesh is None:
        return x
    return jax.lax.with_sharding_constraint(x, named_sharding(mesh, logical_axes, x.shape, rules))


def param_sharding(var: Any, mesh: Mesh | None, rules: Rules) -> jax.sharding.Sharding:
    """Target sharding of one NNX Variable (abstract or concrete) from its logical-axis metadata."""
    if mesh is None:
        return jax.sharding.SingleDeviceSharding(jax.devices()[0])
    axes = var.get_metadata().get("out_sharding") or (None,) * len(var.shape)
    return named_sharding(mesh, axes, var.shape, rules)


def describe(mesh: Mesh) -> str:
    """``data=1,fsdp=4,tensor=2`` — the spec string of a mesh (for logs and benchmark output)."""
    return ",".join(f"{a}={mesh.shape[a]}" for a in mesh.axis_names)


def device_count(mesh: Mesh | None) -> int:
    return 1 if mesh is None else int(np.prod(list(mesh.shape.values())))
