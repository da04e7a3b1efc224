"""MaxText Orbax checkpoints straight into our sharded Model, and ours out in MaxText's layout
(Qwen2.5, Qwen3 and Llama: every family with a ``maxtext=MaxTextLayout(...)`` registration).

Usage (functions only; the config says the architecture, since a MaxText checkpoint stores none)::

    from prove_jax.models import ModelConfig, make_mesh
    from prove_jax.models.maxtext_io import load_maxtext, save_maxtext

    cfg = ModelConfig.from_hf_dir("/models/Qwen3-8B", dtype="bfloat16", scan_layers=True)
    model = load_maxtext("gs://bucket/qwen3-8b/0/items", cfg, mesh=make_mesh("fsdp=4,tensor=2"))
    save_maxtext(model, "/ckpt/qwen3-8b-mt", scanned=True)  # writes /ckpt/qwen3-8b-mt/0/items
    # MaxText: load_parameters_path=/ckpt/qwen3-8b-mt/0/items model_name=qwen3-8b scan_layers=true

**On disk.** MaxText saves a ``TrainState`` as the Orbax PyTree item ``items`` of step ``<step>``:
``<root>/<step>/items`` holding ``params/params/{token_embedder, decoder}/...`` (Flax's ``params``
collection inside the state's ``params``), beside ``step`` and ``opt_state`` (``{}`` for the
converter's params-only checkpoints), and that directory is what ``load_parameters_path`` names.
We read only ``params/params``; we write only it (params-only), with ``custom_metadata``
``scan_layers`` as MaxText records it. Written through the Orbax v0 API; MaxText 0.2.5 reads the
same layout through v1 (``tests/models/test_maxtext_io.py`` reads ours that way).

**The mapping** (reference: ``maxtext/checkpoint_conversion/utils/param_mapping.py`` of the
``maxtext`` wheel: ``QWEN_MAXTEXT_TO_HF_PARAM_MAPPING`` / ``_HOOK_FN`` for Qwen2.5 and Qwen3,
``LLAMA31_MAXTEXT_TO_HF_PARAM_MAPPING`` / ``_HOOK_FN`` for Llama). MaxText keeps heads split (``DenseGeneral`` kernels are
``in_features + out_features``), so against our layout every tensor is a pure axis permutation,
no reshape: :data:`MAXTEXT_NAMES` gives each of our parameters its MaxText path and axis letters,
the letters of the family's :class:`~prove_jax.models.families.TensorRule` (``e`` hidden, ``v``
vocab, ``h``/``k`` query/kv heads, ``d`` head_dim, ``m`` mlp). The HF name stays in the family
table, so a family is still one registration: its ``maxtext=MaxTextLayout(...)`` adds only what
MaxText's block does to values (Qwen: nothing; Llama:
``MaxTextLayout("llama2", query_scale=True, rope_interleave=True, without=<the biases>)``, what
``LLAMA31_MAXTEXT_TO_HF_PARAM_HOOK_FN`` does to q/k, in the same f32 arithmetic).

**Scanned layers.** MaxText's ``nn.scan`` inserts the layer axis at ``param_scan_axis`` (1 by
default) of every layer parameter, so a norm scale is ``[e, L]`` and a query kernel
``[e, L, h, d]``; unscanned, layer ``i`` lives under ``decoder/layers_{i}``. Our own stacking is a
leading axis; both layouts load into and export from both of ours.

**Sharding.** Each MaxText tensor is restored with the sharding of our target parameter, its
partition spec permuted like the axes, so every device reads from storage only its own block; one
jitted permutation per tensor then lands it in the target sharding (no host copy). Export runs the
inverse permutations on device and Orbax writes each shard from where it lives, so it holds a
second copy of the permuted kernels on device until the write ends.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import orbax.checkpoint as ocp
from etils import epath
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from prove_jax.models.config import FAMILY_CLASSES, ModelConfig, UnsupportedConfigError, model_family
from prove_jax.models.decoder import Model, abstract_model
from prove_jax.models.families import MaxTextLayout, TensorRule, rules_for
from prove_jax.models.hf_io import CheckpointMismatchError
from prove_jax.models.sharding import param_sharding

ITEM = "items"
"""The Orbax item name MaxText gives its train state (``<root>/<step>/items``)."""
PREFIX = ("params", "params")
"""Where the weights sit inside the item: the state's ``params``, then Flax's ``params`` collection."""
_LAYERS = "L"
"""The stacked layers axis in a layout (no tensor letter is upper case)."""


@dataclasses.dataclass(frozen=True)
class MaxTextName:
    """Where one of our parameters lives in a MaxText checkpoint, and its axis order there."""

    path: str
    """Below ``params/params``; a per-layer path is below ``decoder/layers`` (scanned) or
    ``decoder/layers_{i}`` (unscanned)."""
    dims: str
    """One layer's axes in MaxText's order, in the letters of the family's ``TensorRule.jax_dims``."""
    role: str | None = None
    """``query``/``key``: what a family's ``query_scale``/``rope_interleave`` apply to."""


MAXTEXT_NAMES: Mapping[str, MaxTextName] = MappingProxyType({
    "embed_tokens": MaxTextName("token_embedder/embedding", "v e"),
    "layers.{i}.input_norm.weight": MaxTextName("pre_self_attention_layer_norm/scale", "e"),
    "layers.{i}.attn.q_proj": MaxTextName("self_attention/query/kernel", "e h d", "query"),
    "layers.{i}.attn.k_proj": MaxTextName("self_attention/key/kernel", "e k d", "key"),
    "layers.{i}.attn.v_proj": MaxTextName("self_attention/value/kernel", "e k d"),
    "layers.{i}.attn.o_proj": MaxTextName("self_attention/out/kernel", "h d e"),
    "layers.{i}.attn.q_bias": MaxTextName("self_attention/query/bias", "h d", "query"),
    "layers.{i}.attn.k_bias": MaxTextName("self_attention/key/bias", "k d", "key"),
    "layers.{i}.attn.v_bias": MaxTextName("self_attention/value/bias", "k d"),
    "layers.{i}.attn.q_norm.weight": MaxTextName("self_attention/query_norm/scale", "d"),
    "layers.{i}.attn.k_norm.weight": MaxTextName("self_attention/key_norm/scale", "d"),
    "layers.{i}.post_norm.weight": MaxTextName("post_self_attention_layer_norm/scale", "e"),
    "layers.{i}.mlp.gate_proj": MaxTextName("mlp/wi_0/kernel", "e m"),
    "layers.{i}.mlp.up_proj": MaxTextName("mlp/wi_1/kernel", "e m"),
    "layers.{i}.mlp.down_proj": MaxTextName("mlp/wo/kernel", "m e"),
    "final_norm.weight": MaxTextName("decoder/decoder_norm/scale", "e"),
    # Only for an untied head; a tied one is MaxText's logits_via_embedding (no tensor).
    "lm_head": MaxTextName("decoder/logits_dense/kernel", "e v"),
})
"""Our JAX path (as in the family tensor tables) -> MaxText name and axis order; the same for every
dense MaxText block (``QWEN_`` and ``LLAMA31_MAXTEXT_TO_HF_PARAM_MAPPING`` agree on the names)."""


def maxtext_layout(cfg: ModelConfig) -> MaxTextLayout:
    """The family's MaxText layout, after refusing what MaxText's block cannot hold."""
    family = model_family(cfg.family)
    layout = family.maxtext
    if layout is None:
        able = [n for n in FAMILY_CLASSES if model_family(n).maxtext is not None]
        raise UnsupportedConfigError(
            f"family {cfg.family!r} has no MaxText layout; MaxText import/export supports {able}"
        )
    on = [flag for flag in layout.without if getattr(cfg, flag)]
    if on:
        raise UnsupportedConfigError(
            f"MaxText's {layout.decoder_block} decoder block has no tensors for {on}; this config sets them"
        )
    if cfg.qk_norm and (layout.query_scale or layout.rope_interleave):
        # RMS-normalising q would undo a folded scale, and the norm weights would need the RoPE
        # reordering too: no MaxText block combines them, so nothing to check a mapping against.
        raise UnsupportedConfigError(f"{layout.decoder_block}: qk_norm with query_scale/rope_interleave")
    unnamed = [r for r in rules_for(cfg) if r.jax not in MAXTEXT_NAMES]
    if unnamed:
        raise UnsupportedConfigError(
            "no MaxText tensor for " + ", ".join(f"{r.jax} ({r.hf})" for r in unnamed)
            + f" in MaxText's {layout.decoder_block} block"
        )
    return layout


# --- the plan: which of our arrays <-> which MaxText keys --------------------------------------


@dataclasses.dataclass(frozen=True)
class _Tensor:
    """One table row for one model: our arrays (1, or one per layer) and MaxText's (same)."""

    rule: TensorRule
    name: MaxTextName
    ours: tuple[str, ...]
    theirs: tuple[tuple[str, ...], ...]
    ours_stacked: bool
    theirs_stacked: bool

    @property
    def per_layer(self) -> bool:
        return self.rule.per_layer

    def our_letters(self) -> list[str]:
        own = self.rule.jax_dims.split()
        return [_LAYERS, *own] if self.ours_stacked else own

    def their_letters(self, scan_axis: int) -> list[str]:
        theirs = self.name.dims.split()
        if self.theirs_stacked:
            theirs.insert(_layer_axis(len(theirs), scan_axis), _LAYERS)
        return theirs


def _layer_axis(ndim: int, scan_axis: int) -> int:
    """MaxText's stacking axis for a layer tensor of ``ndim`` axes (to_maxtext.py: axis 0 only for
    tensors too small to have ``param_scan_axis``)."""
    return scan_axis if scan_axis <= ndim else 0


def _plan(cfg: ModelConfig, theirs_scanned: bool) -> list[_Tensor]:
    out = []
    n = cfg.num_layers
    for rule in rules_for(cfg):
        name = MAXTEXT_NAMES[rule.jax]
        if not rule.per_layer:
            out.append(_Tensor(rule, name, (rule.jax,), (tuple(name.path.split("/")),), False, False))
            continue
        ours = (rule.jax_path(None),) if cfg.scan_layers else tuple(rule.jax_path(i) for i in range(n))
        blocks = ["layers"] if theirs_scanned else [f"layers_{i}" for i in range(n)]
        theirs = tuple(("decoder", b, *name.path.split("/")) for b in blocks)
        out.append(_Tensor(rule, name, ours, theirs, cfg.scan_layers, theirs_scanned))
    return out


def _dotted(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path)


def _sharding_like(src: Any, src_letters: list[str], dst_letters: list[str], dst_shape: tuple[int, ...]) -> Any:
    """``src`` (a sharding over ``src_letters``) moved onto the same letters in another order.

    An axis the target does not divide (MaxText's padded vocab) is left unsharded.
    """
    if not isinstance(src, NamedSharding):
        return src
    spec = tuple(src.spec) + (None,) * (len(src_letters) - len(src.spec))
    by_letter = dict(zip(src_letters, spec, strict=True))
    out = []
    for letter, size in zip(dst_letters, dst_shape, strict=True):
        axes = by_letter.get(letter)
        names = () if axes is None else (axes,) if isinstance(axes, str) else tuple(axes)
        split = math.prod(src.mesh.shape[a] for a in names)
        out.append(axes if names and size % split == 0 else None)
    return NamedSharding(src.mesh, PartitionSpec(*out))


def _family_values(m: jax.Array, t: _Tensor, layout: MaxTextLayout, cfg: ModelConfig, *, lead: int,
                   to_maxtext: bool) -> jax.Array:
    """Apply (export) or undo (import) the family's value changes on a MaxText-ordered array."""
    if t.name.role is None or not (layout.rope_interleave or layout.query_scale):
        return m
    if layout.rope_interleave:
        axis = lead + t.name.dims.split().index("d")
        m = jnp.moveaxis(m, axis, -1)
        if to_maxtext:  # HF halves (i, i + d/2) -> MaxText pairs (2i, 2i+1)
            half = m.shape[-1] // 2
            m = jnp.stack([m[..., :half], m[..., half:]], axis=-1).reshape(m.shape)
        else:
            m = jnp.concatenate([m[..., ::2], m[..., 1::2]], axis=-1)
        m = jnp.moveaxis(m, -1, axis)
    if layout.query_scale and t.name.role == "query":
        # MaxText's constants exactly (1/sqrt(d), not d**-0.5: f64 may round them differently).
        scale = np.float32(1 / np.sqrt(cfg.head_dim) if to_maxtext else np.sqrt(cfg.head_dim))
        m = (m.astype(jnp.float32) * scale).astype(m.dtype)  # in f32, as MaxText's hook does
    return m


def _import_fn(t: _Tensor, layout: MaxTextLayout, cfg: ModelConfig, scan_axis: int, dtype: Any) -> Callable[..., Any]:
    """MaxText arrays of ``t`` -> our arrays of ``t`` (a pure function to jit)."""
    mt = t.name.dims.split()
    own = t.rule.jax_dims.split()

    def one(m: jax.Array, lead: int) -> jax.Array:
        """MaxText-ordered (after ``lead`` layer axes) -> ours."""
        for i, letter in enumerate(mt):
            if letter == "v":  # MaxText may pad the vocab; its own HF export drops the rows too
                m = jax.lax.slice_in_dim(m, 0, cfg.vocab_size, axis=lead + i)
        m = _family_values(m, t, layout, cfg, lead=lead, to_maxtext=False)
        return jnp.transpose(m, [*range(lead), *(lead + mt.index(a) for a in own)]).astype(dtype)

    def convert(*xs: jax.Array) -> tuple[jax.Array, ...]:
        if not (t.ours_stacked or t.theirs_stacked):  # globals, and layer by layer
            return tuple(one(x, 0) for x in xs)
        m = jnp.moveaxis(xs[0], _layer_axis(len(mt), scan_axis), 0) if t.theirs_stacked else jnp.stack(xs)
        y = one(m, 1)
        return (y,) if t.ours_stacked else tuple(y[i] for i in range(cfg.num_layers))

    return convert


def _export_fn(t: _Tensor, layout: MaxTextLayout, cfg: ModelConfig, scan_axis: int, dtype: Any) -> Callable[..., Any]:
    """Our arrays of ``t`` -> MaxText arrays of ``t`` (the inverse of :func:`_import_fn`)."""
    mt = t.name.dims.split()
    own = t.rule.jax_dims.split()

    def one(y: jax.Array, lead: int) -> jax.Array:
        """Ours (after ``lead`` layer axes) -> MaxText-ordered."""
        m = jnp.transpose(y, [*range(lead), *(lead + own.index(a) for a in mt)])
        return _family_values(m, t, layout, cfg, lead=lead, to_maxtext=True).astype(dtype)

    def convert(*xs: jax.Array) -> tuple[jax.Array, ...]:
        if not (t.ours_stacked or t.theirs_stacked):
            return tuple(one(x, 0) for x in xs)
        m = one(xs[0] if t.ours_stacked else jnp.stack(xs), 1)
        if t.theirs_stacked:
            return (jnp.moveaxis(m, 0, _layer_axis(len(mt), scan_axis)),)
        return tuple(m[i] for i in range(cfg.num_layers))

    return convert


# --- reading the checkpoint ----------------------------------------------------------------------


def resolve_items_dir(path: str | epath.PathLike) -> epath.Path:
    """The Orbax item directory holding ``params/params``: ``.../<step>/items`` itself (what
    MaxText's ``load_parameters_path`` names), a ``<step>`` directory, or a checkpoint root (its
    newest step)."""
    p = epath.Path(path)
    if p.name == ITEM or (p / "_METADATA").exists():
        if not p.exists():
            raise FileNotFoundError(f"no MaxText checkpoint item at {p}")
        return p
    if (p / ITEM).exists():
        return p / ITEM
    steps = sorted((int(d.name), d) for d in (p.iterdir() if p.is_dir() else []) if d.name.isdigit() and (d / ITEM).exists())
    if not steps:
        raise FileNotFoundError(
            f"no MaxText checkpoint at {p}: expected <root>/<step>/{ITEM}, a <step> directory or a root holding steps"
        )
    return steps[-1][1] / ITEM


def _flatten(tree: Any, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    if isinstance(tree, Mapping):
        out: dict[tuple[str, ...], Any] = {}
        for k, v in tree.items():
            out.update(_flatten(v, (*prefix, str(k))))
        return out
    return {prefix: tree}


def _nest(flat: Mapping[tuple[str, ...], Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in flat.items():
        node = out
        for part in key[:-1]:
            node = node.setdefault(part, {})
        node[key[-1]] = value
    return out


def _stored_params(items: epath.Path) -> dict[tuple[str, ...], Any]:
    """``{key below params/params: array metadata}`` (shape and dtype) of a MaxText item."""
    meta = ocp.PyTreeCheckpointHandler().metadata(items)
    tree = getattr(meta, "tree", meta)  # TreeMetadata (newer Orbax) or the tree itself
    node = tree
    for part in PREFIX:
        if not isinstance(node, Mapping) or part not in node:
            top = sorted(tree) if isinstance(tree, Mapping) else type(tree).__name__
            raise CheckpointMismatchError(f"{items}: not a MaxText params tree (no {'/'.join(PREFIX)}; top level {top})")
        node = node[part]
    return _flatten(node)


def _scanned(stored: Mapping[tuple[str, ...], Any], where: Any) -> bool:
    blocks = {k[1] for k in stored if len(k) > 1 and k[0] == "decoder" and k[1].startswith("layers")}
    if blocks == {"layers"}:
        return True
    if blocks and "layers" not in blocks:
        return False
    raise CheckpointMismatchError(f"{where}: decoder layers neither scanned (decoder/layers) nor unscanned "
                                  f"(decoder/layers_<i>): found {sorted(blocks)[:4]}")


def _expected_shape(t: _Tensor, sizes: Mapping[str, int], scan_axis: int) -> tuple[int, ...]:
    return tuple(sizes[a] for a in t.their_letters(scan_axis))


def _fits(stored: tuple[int, ...], want: tuple[int, ...], letters: list[str]) -> bool:
    """Equal shapes, except that a vocab axis may be longer (MaxText's padded vocab)."""
    return len(stored) == len(want) and all(
        s == w or (a == "v" and s > w) for s, w, a in zip(stored, want, letters, strict=True)
    )


def load_maxtext(path: str | epath.PathLike, config: ModelConfig, mesh: Mesh | None = None, *,
                 scan_axis: int = 1) -> Model:
    """A Model with ``config``'s architecture and runtime options from a MaxText checkpoint.

    ``path``: see :func:`resolve_items_dir`; scanned or unscanned MaxText layers are detected, and
    load into either of ``config.scan_layers``. ``mesh``: each parameter is restored straight into
    the sharding the rules table gives it. ``scan_axis`` is MaxText's ``param_scan_axis``. Raises
    :class:`UnsupportedConfigError` for a family MaxText cannot hold and
    :class:`~prove_jax.models.hf_io.CheckpointMismatchError` naming any missing, unexpected or
    misshapen tensor.
    """
    cfg = config
    layout = maxtext_layout(cfg)
    items = resolve_items_dir(path)
    stored = _stored_params(items)
    plan = _plan(cfg, _scanned(stored, items))

    graphdef, abstract_state = nnx.split(abstract_model(cfg, mesh))
    flat = list(nnx.to_flat_state(abstract_state))
    by_path = {_dotted(p): v for p, v in flat}
    planned = {p for t in plan for p in t.ours}
    if planned != set(by_path):
        raise RuntimeError(f"MaxText plan out of sync with the model: unmapped {sorted(set(by_path) - planned)}, "
                           f"unknown {sorted(planned - set(by_path))}")

    dtype = cfg.weight_dtype
    request: dict[tuple[str, ...], jax.ShapeDtypeStruct] = {}
    problems: list[str] = []
    for t in plan:
        var = by_path[t.ours[0]]
        own = t.our_letters()
        sizes = dict(zip(own, var.shape, strict=True))
        if t.per_layer:
            sizes[_LAYERS] = cfg.num_layers
        target = param_sharding(var, mesh, cfg.sharding_rules)
        letters = t.their_letters(scan_axis)
        want = _expected_shape(t, sizes, scan_axis)
        for key in t.theirs:
            shown = "/".join((*PREFIX, *key))
            if key not in stored:
                problems.append(f"missing {shown} (our {t.rule.jax}, HF {t.rule.hf})")
                continue
            shape = tuple(stored[key].shape)
            if not _fits(shape, want, letters):
                problems.append(f"{shown}: stored shape {shape}, expected {want} ({' '.join(letters)}; "
                                f"param_scan_axis={scan_axis} for scanned layers)")
                continue
            request[key] = jax.ShapeDtypeStruct(shape, dtype, sharding=_sharding_like(target, own, letters, shape))
    unexpected = sorted("/".join((*PREFIX, *k)) for k in set(stored) - {k for t in plan for k in t.theirs})
    if unexpected:
        hint = " (an untied head: set tie_word_embeddings=False)" if any("logits_dense" in u for u in unexpected) else ""
        problems.append(f"unexpected {unexpected[:8]}{'...' if len(unexpected) > 8 else ''}{hint}")
    if problems:
        raise CheckpointMismatchError(
            f"MaxText checkpoint {items} does not match the {cfg.family} config "
            f"({layout.decoder_block} block): " + "; ".join(problems[:8]) + ("; ..." if len(problems) > 8 else "")
        )

    target_tree = _nest({(*PREFIX, *k): v for k, v in request.items()})
    restored = ocp.PyTreeCheckpointer().restore(items, args=ocp.args.PyTreeRestore(
        target_tree, restore_args=ocp.checkpoint_utils.construct_restore_args(target_tree), partial_restore=True))
    arrays = _flatten(restored)
    del restored  # ``arrays`` holds the only references: each is freed once converted
    loaded: dict[str, jax.Array] = {}
    for t in plan:
        outs = tuple(param_sharding(by_path[p], mesh, cfg.sharding_rules) for p in t.ours)
        inputs = [arrays.pop((*PREFIX, *k)) for k in t.theirs]  # dropped once converted
        result = jax.jit(_import_fn(t, layout, cfg, scan_axis, dtype), out_shardings=outs)(*inputs)
        loaded.update(zip(t.ours, result, strict=True))
    return nnx.merge(graphdef, nnx.from_flat_state([(p, v.replace(loaded[_dotted(p)])) for p, v in flat]))


def maxtext_params(model: Model, *, scanned: bool = True, dtype: Any = None, scan_axis: int = 1) -> dict[str, Any]:
    """The model's weights as MaxText's nested ``{token_embedder, decoder}`` tree (on device,
    sharded like ours): what :func:`save_maxtext` writes below ``params/params``."""
    cfg = model.config
    layout = maxtext_layout(cfg)
    out_dtype = jnp.dtype(dtype) if dtype is not None else cfg.weight_dtype
    by_path = {_dotted(p): v for p, v in nnx.to_flat_state(nnx.state(model, nnx.Param))}
    flat: dict[tuple[str, ...], jax.Array] = {}
    for t in _plan(cfg, scanned):
        xs = [by_path[p][...] for p in t.ours]
        own, letters = t.our_letters(), t.their_letters(scan_axis)
        sizes = dict(zip(own, xs[0].shape, strict=True))
        if t.per_layer:
            sizes[_LAYERS] = cfg.num_layers
        shape = _expected_shape(t, sizes, scan_axis)
        outs = tuple(_sharding_like(xs[0].sharding, own, letters, shape) for _ in t.theirs)
        result = jax.jit(_export_fn(t, layout, cfg, scan_axis, out_dtype), out_shardings=outs)(*xs)
        flat.update(zip(t.theirs, result, strict=True))
    return _nest(flat)


def save_maxtext(model: Model, path: str | epath.PathLike, scanned: bool = True, *, dtype: Any = None,
                 step: int = 0, scan_axis: int = 1) -> epath.Path:
    """Write ``model`` as a params-only MaxText checkpoint ``<path>/<step>/items``; returns that
    directory (MaxText's ``load_parameters_path``).

    ``scanned`` picks MaxText's ``scan_layers`` layout (whatever ours is); ``dtype`` the stored
    weight dtype (default: the model's). Every process of a multi-host run must call it.
    """
    root = epath.Path(path)
    if (root / str(step)).exists():
        raise FileExistsError(f"{root / str(step)} exists; MaxText checkpoints are not overwritten")
    tree = {PREFIX[0]: {PREFIX[1]: maxtext_params(model, scanned=scanned, dtype=dtype, scan_axis=scan_axis)}}
    manager = ocp.CheckpointManager(root, item_names=(ITEM,))
    try:
        manager.save(step, args=ocp.args.Composite(**{ITEM: ocp.args.PyTreeSave(tree)}),
                     custom_metadata={"scan_layers": scanned,
                                      "decoder_block": maxtext_layout(model.config).decoder_block})
        manager.wait_until_finished()
    finally:
        manager.close()
    return root / str(step) / ITEM
