"""LoRA and QLoRA adapters on the decoder's projections: apply, split, merge, export to PEFT.

    lora = LoraConfig(rank=16, alpha=32, targets="all_linear", quant="nf4")
    model = apply_lora(base, lora)               # a new Model sharing base's arrays, B = 0
    trainer = Trainer(model, optim, objective)   # trains only the adapters (rl/step.py)
    save_peft(model, "out/adapter")              # PeftModel.from_pretrained(hf_base, "out/adapter")
    save_merged(model, "out/hf")                 # W + (alpha/r) B A, a plain HF directory

An adapter of projection ``W [*out, *in]`` (HF ``nn.Linear`` orientation, see layers.py) is
``A [r, *in]`` and ``B [*out, r]`` (PEFT's ``lora_A.weight [r, in]`` / ``lora_B.weight [out, r]``
after a reshape), stored as ``nnx.LoRAParam`` attributes ``<name>_lora_a`` / ``<name>_lora_b``
of the Attention / MLP module beside ``W``, with static ``lora_rank`` / ``lora_alpha``. The
forward (``layers.project``) adds ``(alpha / r) * (x A^T) B^T``. ``A`` starts as PEFT's default
(Kaiming-uniform, bound ``1/sqrt(fan_in)``) and ``B`` as zeros, so a fresh adapter changes
nothing. Adapters are f32 whatever the base dtype: they are small, and Adam's moments and the
accumulated gradients are f32 anyway.

Why by hand and not ``qwix.LoraProvider`` / ``qwix.apply_lora_to_model`` (probed against qwix
0.1.8; its LoRA is interception: it patches ``jnp.einsum`` / ``lax.dot_general`` while the model's
``__call__`` runs, finds the weight operand among the *current module's* attributes, and creates
``<name>_lora_a/b`` on that module the first time):

* our layers never run on the model's own module objects: ``Model._run_layers`` calls each layer
  as ``nnx.merge(graphdef, state)`` (so remat and ``lax.scan`` see pure functions), so qwix
  creates its adapter params on a temporary copy (with no ``qwix_rngs`` there it raises
  "Cannot find rngs in the current module"; with them the params would be dropped) and, with
  ``scan_layers``, inside a ``lax.scan`` body where creating state is impossible (it fails);
* qwix intercepts one method of an NNX model, while training and scoring run
  ``Model.hidden_states`` + ``token_logprobs`` (fused head) and the engine its own cached path;
* ``layers.dense`` flattens 3-D kernels (``q_proj [heads, head_dim, embed]``) to 2-D before its
  einsum, so qwix's weight lookup falls back to shape matching, which is ambiguous for
  ``gate_proj`` / ``up_proj`` (equal shapes: qwix then silently applies no adapter).

Keeping the adapter an attribute of the module read by ``layers.project`` makes it travel through
split/merge, scan (stacked on the ``layers`` axis like every weight), remat, sharding rules and
the train step's filters like any other weight. qwix *is* used for QLoRA's numerics:
``qwix.quantize`` / ``qwix.dequantize`` (int8 and NF4, with per-block scales) store the frozen
base projections as codes + scales (``layers.QuantizedWeight``), dequantised at use inside a
rematerialised matmul (the backward pass dequantises again rather than keep float weights).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from prove_jax.models.decoder import Model
from prove_jax.models.layers import QuantizedWeight, weight
from prove_jax.models.sharding import param_sharding

PROJECTIONS: dict[str, tuple[str, int]] = {
    "q_proj": ("attn", 1), "k_proj": ("attn", 1), "v_proj": ("attn", 1), "o_proj": ("attn", 2),
    "gate_proj": ("mlp", 1), "up_proj": ("mlp", 1), "down_proj": ("mlp", 1),
}
"""Every projection: the module that owns it and how many trailing (input) axes its kernel has."""
TARGET_SETS: dict[str, tuple[str, ...]] = {
    "attention": ("q_proj", "k_proj", "v_proj", "o_proj"),
    "mlp": ("gate_proj", "up_proj", "down_proj"),
    "all_linear": tuple(PROJECTIONS),  # PEFT's "all-linear": every projection, not the head
}
QUANT_TYPES = ("int8", "nf4")
PEFT_CONFIG = "adapter_config.json"
PEFT_WEIGHTS = "adapter_model.safetensors"
_LORA_ATTRS = ("lora_rank", "lora_alpha")


@dataclasses.dataclass(frozen=True)
class LoraConfig:
    """LoRA settings (YAML section ``lora``). ``rank: 0`` is off: full fine-tuning.

    ``targets``: ``attention`` | ``mlp`` | ``all_linear`` or a list of projection names.
    ``quant`` (QLoRA): the frozen base projections stored as ``int8`` or ``nf4`` codes with one
    scale per ``quant_block`` inputs of each output row (0: one per row); embeddings, norms and
    the head stay as they are. ``dropout`` is declared for PEFT's schema but must be 0: the train
    step carries no random key for it yet.
    """

    rank: int = 0
    alpha: float = 16.0
    targets: str | tuple[str, ...] = "all_linear"
    dropout: float = 0.0
    quant: str | None = None
    quant_block: int = 64
    seed: int = 0

    def __post_init__(self) -> None:
        if self.rank < 0 or self.alpha <= 0 or self.quant_block < 0:
            raise ValueError("rank must be >= 0, alpha > 0 and quant_block >= 0")
        if self.dropout != 0.0:
            raise ValueError("dropout: only 0 is supported (the train step has no random key for it)")
        if self.quant not in (None, *QUANT_TYPES):
            raise ValueError(f"quant must be null or one of {QUANT_TYPES}, got {self.quant!r}")
        if isinstance(self.targets, list):
            object.__setattr__(self, "targets", tuple(self.targets))
        self.target_names  # noqa: B018  (validates)

    @property
    def enabled(self) -> bool:
        return self.rank > 0

    @property
    def target_names(self) -> tuple[str, ...]:
        if isinstance(self.targets, str):
            if self.targets not in TARGET_SETS:
                raise ValueError(f"targets must be one of {sorted(TARGET_SETS)} or a list of {list(PROJECTIONS)}")
            return TARGET_SETS[self.targets]
        unknown = [t for t in self.targets if t not in PROJECTIONS]
        if unknown or not self.targets:
            raise ValueError(f"targets: unknown projection(s) {unknown}; known: {list(PROJECTIONS)}")
        return tuple(dict.fromkeys(self.targets))


# ---- walking the model ----------------------------------------------------------------------------
def _layers(model: Model) -> list[tuple[int | None, nnx.Module]]:
    """(index, layer): one stacked layer (index None) for a scanned model, else each layer."""
    if model.config.scan_layers:
        return [(None, model.layers)]
    return list(enumerate(model.layers))


def _sites(model: Model, names: tuple[str, ...] = tuple(PROJECTIONS)) -> Iterator[tuple[int | None, nnx.Module, str]]:
    for i, layer in _layers(model):
        for name in names:
            yield i, getattr(layer, PROJECTIONS[name][0]), name


def _axes(var: nnx.Variable) -> tuple[Any, ...]:
    return tuple(var.get_metadata().get("out_sharding") or (None,) * var.ndim)


def _variable(cls: type[nnx.Variable], value: jax.Array, axes: tuple[Any, ...], model: Model) -> nnx.Variable:
    """A variable with logical axes, placed where the model's rules put it."""
    var = cls(value, sharding=axes, eager_sharding=False)
    return var.replace(jax.device_put(value, param_sharding(var, model.mesh, model.config.sharding_rules)))


def has_adapters(model: Model) -> bool:
    return bool(jax.tree.leaves(nnx.state(model, nnx.LoRAParam)))


def adapter_targets(model: Model) -> tuple[str, ...]:
    """The projections that carry an adapter."""
    _, layer = _layers(model)[0]
    return tuple(n for n in PROJECTIONS if hasattr(getattr(layer, PROJECTIONS[n][0]), f"{n}_lora_a"))


def _inherit_source(new: Model, old: Model) -> Model:
    from prove_jax.models.hf_io import inherit_source

    inherit_source(new, old)
    return new


# ---- apply ----------------------------------------------------------------------------------------
@partial(jax.jit, static_argnums=(1, 2))
def _kaiming_a(key: jax.Array, shape: tuple[int, ...], fan_in: int) -> jax.Array:
    bound = 1.0 / math.sqrt(fan_in)  # PEFT: kaiming_uniform_(a=sqrt(5)) = U(-1/sqrt(fan_in), ..)
    return jax.random.uniform(key, shape, jnp.float32, -bound, bound)


@partial(jax.jit, static_argnums=(1, 2))
def _quantize(w: jax.Array, qtype: str, block: int) -> tuple[jax.Array, jax.Array]:
    """Codes and scales of ``w``: one scale per ``block`` entries of the last (input) axis of
    every row, the other axes channelwise."""
    import qwix

    n = w.shape[-1]
    tiled = {w.ndim - 1: block} if 0 < block < n and n % block == 0 else {}
    q = qwix.quantize(w.astype(jnp.float32), jnp.int8 if qtype == "int8" else qtype,
                      channelwise_axes=tuple(range(w.ndim - 1)), tiled_axes=tiled)
    return q.qvalue, q.scale.astype(w.dtype)


def apply_lora(model: Model, cfg: LoraConfig) -> Model:
    """``model`` with adapters on ``cfg``'s targets (and, for QLoRA, its projections quantised).

    Returns a new Model whose base weights are ``model``'s own arrays (nothing is copied; the
    argument itself is left as it was); ``B = 0``, so its logits equal ``model``'s.
    """
    if not cfg.enabled:
        raise ValueError("apply_lora: rank is 0 (LoRA off)")
    if has_adapters(model):
        raise ValueError("apply_lora: the model already carries adapters")
    out = nnx.clone(model)
    stacked = out.config.scan_layers
    key = jax.random.key(cfg.seed)
    for i, module, name in _sites(out):
        w = getattr(module, name)
        lead, in_dims = (1 if stacked else 0), PROJECTIONS[name][1]
        axes, shape = _axes(w), tuple(w.shape)
        if name in cfg.target_names:
            ins, outs = shape[len(shape) - in_dims:], shape[lead:len(shape) - in_dims]
            t = list(PROJECTIONS).index(name)  # layer l's A: the same numbers scanned or not
            keys = [jax.random.fold_in(jax.random.fold_in(key, j), t) for j in ([i] if i is not None else
                                                                                 range(shape[0]))]
            a = [_kaiming_a(k, (cfg.rank, *ins), math.prod(ins)) for k in keys]
            a = jnp.stack(a) if stacked else a[0]
            b = jnp.zeros((*shape[:lead], *outs, cfg.rank), jnp.float32)
            setattr(module, f"{name}_lora_a", _variable(
                nnx.LoRAParam, a, (*axes[:lead], None, *axes[len(axes) - in_dims:]), out))
            setattr(module, f"{name}_lora_b", _variable(nnx.LoRAParam, b, (*axes[: len(axes) - in_dims], None), out))
            module.lora_rank, module.lora_alpha = cfg.rank, float(cfg.alpha)
        if cfg.quant is not None:
            codes, scale = _quantize(w[...], cfg.quant, cfg.quant_block)
            delattr(module, name)
            setattr(module, f"{name}_qvalue", _variable(QuantizedWeight, codes, axes, out))
            setattr(module, f"{name}_scale", _variable(QuantizedWeight, scale, (*axes[:-1], None), out))
            module.quant_qtype = cfg.quant
    return _inherit_source(out, model)


def without_adapters(model: Model) -> Model:
    """The same model with its adapters removed (a QLoRA base stays quantised): the frozen base
    the adapters sit on, sharing its arrays. Its graph is GRPO's reference with LoRA."""
    out = nnx.clone(model)
    for _, module, name in _sites(out):
        for suffix in ("_lora_a", "_lora_b"):
            if hasattr(module, name + suffix):
                delattr(module, name + suffix)
        for attr in _LORA_ATTRS:
            if hasattr(module, attr):
                delattr(module, attr)
    return _inherit_source(out, model)


def adapter_state(model: Model) -> nnx.State:
    """The trainable adapters (``nnx.LoRAParam``); ``nnx.split(model, nnx.LoRAParam, ...)`` gives
    them with the frozen rest."""
    return nnx.state(model, nnx.LoRAParam)


# ---- merge ----------------------------------------------------------------------------------------
def _delta(module: nnx.Module, name: str) -> jax.Array | None:
    """``(alpha / r) * B A`` in ``W``'s layout (f32), or None without an adapter."""
    a = getattr(module, f"{name}_lora_a", None)
    if a is None:
        return None
    a, b = a[...], getattr(module, f"{name}_lora_b")[...]
    rank = module.lora_rank  # type: ignore[attr-defined]
    lead = a.shape[: a.ndim - PROJECTIONS[name][1] - 1]
    ins, outs = a.shape[len(lead) + 1:], b.shape[len(lead):-1]
    a2 = a.astype(jnp.float32).reshape(*lead, rank, math.prod(ins))
    b2 = b.astype(jnp.float32).reshape(*lead, math.prod(outs), rank)
    d = jnp.matmul(b2, a2, precision=jax.lax.Precision.HIGHEST) * (module.lora_alpha / rank)  # type: ignore[attr-defined]
    return d.reshape(*lead, *outs, *ins)


def merge_lora(model: Model) -> Model:
    """A plain model (Params only) with ``W + (alpha / r) B A`` in every adapted projection; a
    QLoRA base is dequantised first (to ``config.param_dtype``). The merge is done in f32."""
    out = without_adapters(model)
    for (_, src, name), (_, module, _) in zip(_sites(model), _sites(out), strict=True):
        quantised = hasattr(module, f"{name}_qvalue")
        delta = _delta(src, name)
        if delta is None and not quantised:
            continue
        meta = (getattr(module, f"{name}_qvalue") if quantised else getattr(module, name)).get_metadata()
        w = weight(module, name, jnp.dtype(jnp.float32)).astype(jnp.float32)
        dtype = model.config.weight_dtype if quantised else getattr(module, name).dtype
        merged = (w if delta is None else w + delta).astype(dtype)
        if quantised:
            delattr(module, f"{name}_qvalue")
            delattr(module, f"{name}_scale")
        setattr(module, name, nnx.Param(merged, **meta))
    for _, module, _ in _sites(out):
        if hasattr(module, "quant_qtype"):
            delattr(module, "quant_qtype")
    return _inherit_source(out, model)


def save_merged(model: Model, path: str | Path, **kw: Any) -> Path:
    """``save_hf(merge_lora(model), path, **kw)``: a transformers directory with no adapters."""
    from prove_jax.models.hf_io import save_hf

    return save_hf(merge_lora(model), path, **kw)


# ---- PEFT -----------------------------------------------------------------------------------------
def _hf_module(model: Model, name: str, layer: int) -> str:
    """``model.layers.{layer}.self_attn.q_proj`` from the family's tensor table (which must map
    the kernel by a pure reshape, as every built-in family does)."""
    from prove_jax.models.families import rules_for

    jax_path = f"layers.{{i}}.{PROJECTIONS[name][0]}.{name}"
    (rule,) = [r for r in rules_for(model.config) if r.jax == jax_path]
    if rule.hf_dims.replace("(", "").replace(")", "") != rule.jax_dims or not rule.hf.endswith(".weight"):
        raise NotImplementedError(f"{rule.hf}: PEFT export needs a reshape-only tensor rule, got {rule}")
    return rule.hf_key(layer)[: -len(".weight")]


def peft_tensors(model: Model, dtype: Any = np.float32) -> dict[str, np.ndarray]:
    """The adapters under PEFT's names: ``base_model.model.<module>.lora_A.weight [r, in]`` and
    ``...lora_B.weight [out, r]``."""
    out: dict[str, np.ndarray] = {}
    for i in range(model.config.num_layers):
        for layer_idx, module, name in _sites(model, adapter_targets(model)):
            if layer_idx not in (None, i):
                continue
            a, b = (np.asarray(jax.device_get(getattr(module, f"{name}_lora_{s}")[...])) for s in "ab")
            if layer_idx is None:
                a, b = a[i], b[i]
            prefix = f"base_model.model.{_hf_module(model, name, i)}"
            out[f"{prefix}.lora_A.weight"] = a.reshape(a.shape[0], -1).astype(dtype)
            out[f"{prefix}.lora_B.weight"] = b.reshape(-1, b.shape[-1]).astype(dtype)
    return out


def peft_config(model: Model, base_model_name_or_path: str = "") -> dict[str, Any]:
    """``adapter_config.json`` for the adapters ``model`` carries (rank, alpha, targets)."""
    _, layer = _layers(model)[0]
    targets = adapter_targets(model)
    owner = getattr(layer, PROJECTIONS[targets[0]][0])
    return {
        "peft_type": "LORA", "task_type": "CAUSAL_LM", "base_model_name_or_path": base_model_name_or_path,
        "r": int(owner.lora_rank), "lora_alpha": float(owner.lora_alpha), "lora_dropout": 0.0,
        "target_modules": sorted(targets), "bias": "none", "fan_in_fan_out": False, "use_rslora": False,
        "use_dora": False, "init_lora_weights": True, "inference_mode": True, "modules_to_save": None,
        "layers_to_transform": None, "layers_pattern": None, "rank_pattern": {}, "alpha_pattern": {},
    }


def save_peft(model: Model, path: str | Path, *, base_model_name_or_path: str = "",
              dtype: Any = np.float32) -> Path:
    """A PEFT adapter directory: ``PeftModel.from_pretrained(hf_base, path)`` gives the logits of
    ``model`` (the HF base being ``model``'s base, e.g. :func:`save_hf` of
    :func:`without_adapters` — for QLoRA that base is the dequantised one)."""
    from prove_jax.models.safetensors_io import write_safetensors

    if not has_adapters(model):
        raise ValueError("save_peft: the model carries no adapters")
    path = Path(path)
    tensors = peft_tensors(model, dtype)
    if jax.process_index() == 0:
        path.mkdir(parents=True, exist_ok=True)
        (path / PEFT_CONFIG).write_text(json.dumps(peft_config(model, base_model_name_or_path), indent=2))
        write_safetensors(path / PEFT_WEIGHTS,
                          [(k, v.shape, v.dtype, lambda v=v: v) for k, v in sorted(tensors.items())])
    return path
