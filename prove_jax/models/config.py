"""Model configuration: one frozen dataclass for every dense decoder family, and the family registry.

The families (Qwen2.5 = HF ``qwen2``, Qwen3, Granite-4.1 dense, Llama 2/3 and SmolLM = HF ``llama``,
and whatever else registers) share one decoder; they differ only in a handful of flags (q/k/v/o
bias, MLP bias, qk-norm, the four Granite multipliers, tied head, the RoPE frequency schedule).
The config is frozen and hashable because NNX keeps it in the static graph definition: two models
with equal configs share one jit compilation.

What a family *is* lives in one :class:`ModelFamily` registration (config class, HF names and
hooks, tensor table, chat format): the built-in ones in :mod:`prove_jax.models.families`. This
module holds the registry, not the families, so nothing here names one: ``from_hf_dict``, the
``config.json`` writer and :data:`FAMILY_CLASSES` all read the registry.

Reading HF ``config.json`` follows the transformers 5.x rules (``rope_parameters`` *or* legacy
``rope_theta``/``rope_scaling``) and fails loudly on anything the decoder does not implement
(RoPE scaling other than Llama 3's, sliding windows, other activations, quantised checkpoints)
instead of silently producing wrong logits.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import jax.numpy as jnp

from prove_jax.models.sharding import DEFAULT_RULES, Rules

if TYPE_CHECKING:
    from prove_jax.models.families import MaxTextLayout, TensorRule

REMAT_POLICIES = ("none", "full", "dots")
ROPE_TYPES = ("default", "llama3")
"""RoPE frequency schedules the decoder implements (``layers.rope_inv_freq``)."""
LLAMA3_ROPE_FIELDS = ("rope_factor", "rope_low_freq_factor", "rope_high_freq_factor",
                      "rope_original_max_position_embeddings")
"""The ``rope_type="llama3"`` parameters, in ModelConfig (HF names without the ``rope_`` prefix)."""
ATTENTION_IMPLS = ("xla", "cudnn", "splash", "head_major")
"""``attention_impl`` values besides None / ``"auto"`` (mirrored by ``attention.IMPLS``)."""


def check_attention_impl(impl: str | None) -> str | None:
    """``impl`` validated, ``"auto"`` normalised to None (so equal choices give equal, hashable
    configs and share one compilation).  Here, not at trace time, so a launch config's typo fails
    at config check."""
    if impl is None or impl == "auto":
        return None
    if impl not in ATTENTION_IMPLS:
        raise ValueError(f"attention_impl must be one of {ATTENTION_IMPLS} or auto/null, got {impl!r}")
    return impl


class UnsupportedConfigError(ValueError):
    """The HF config asks for a feature this decoder does not implement (it would give wrong logits)."""


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """Architecture of one decoder plus the runtime options that change the compiled program.

    Architecture fields mirror HF names where they exist.  ``attention_scale=None`` means the
    usual ``head_dim ** -0.5`` (Qwen); Granite sets it to its ``attention_multiplier``.
    """

    family: str
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    rope_theta: float = 10000.0
    rope_type: str = "default"
    """``"default"`` or ``"llama3"``: Llama 3.1+ rescales the low RoPE frequencies by the four
    ``rope_*`` parameters below (HF ``rope_scaling``), which are set exactly when it is
    ``"llama3"`` (None otherwise, so a config without scaling equals one that never knew of it)."""
    rope_factor: float | None = None
    rope_low_freq_factor: float | None = None
    rope_high_freq_factor: float | None = None
    rope_original_max_position_embeddings: int | None = None
    rms_norm_eps: float = 1e-6
    max_position_embeddings: int = 32768
    tie_word_embeddings: bool = False
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    qk_norm: bool = False
    embedding_multiplier: float = 1.0
    residual_multiplier: float = 1.0
    attention_scale: float | None = None
    logits_scaling: float = 1.0
    initializer_range: float = 0.02
    bos_token_id: int | None = None
    eos_token_id: int | tuple[int, ...] | None = None
    pad_token_id: int | None = None
    # --- runtime options (not part of the checkpoint) ---
    dtype: str = "bfloat16"
    """Activation dtype (residual stream, matmul inputs, KV cache)."""
    param_dtype: str = "bfloat16"
    """Storage dtype of the weights; weights are cast to ``dtype`` at use."""
    logits_dtype: str = "float32"
    """lm_head accumulates and returns in this dtype, so log-probs are computed in f32."""
    scan_layers: bool = False
    """Stack layer params on a leading ``layers`` axis and run them with ``lax.scan`` (one trace)."""
    remat: str = "none"
    """Per-layer rematerialisation: ``none``, ``full`` (save nothing) or ``dots`` (save matmuls)."""
    attention_impl: str | None = None
    """Attention without a cache (training, scoring; ``attention.attend``): ``"splash"`` (Pallas
    TPU kernel), ``"cudnn"`` (CUDA only), ``"xla"`` (materialises ``[heads, T, T]`` scores: tens
    of GiB per layer at 16k tokens), ``"head_major"`` (the CPU einsum form), or None / ``"auto"``:
    splash on TPU, cuDNN on GPU where it takes the dtype and head dim, head_major on CPU."""
    sharding_rules: Rules = DEFAULT_RULES

    def __post_init__(self) -> None:
        if self.family not in _REGISTRY:
            raise UnsupportedConfigError(f"unknown family {self.family!r}; supported: {sorted(_REGISTRY)}")
        if self.num_heads % self.num_kv_heads:
            raise UnsupportedConfigError(
                f"num_heads={self.num_heads} is not a multiple of num_kv_heads={self.num_kv_heads}"
            )
        if self.head_dim % 2:
            raise UnsupportedConfigError(f"RoPE needs an even head_dim, got {self.head_dim}")
        self._check_rope()
        if self.remat not in REMAT_POLICIES:
            raise ValueError(f"remat must be one of {REMAT_POLICIES}, got {self.remat!r}")
        object.__setattr__(self, "attention_impl", check_attention_impl(self.attention_impl))
        if isinstance(self.eos_token_id, list):
            object.__setattr__(self, "eos_token_id", tuple(self.eos_token_id))
        for name in ("dtype", "param_dtype", "logits_dtype"):
            object.__setattr__(self, name, jnp.dtype(getattr(self, name)).name)

    def _check_rope(self) -> None:
        """The llama3 parameters are given with ``rope_type="llama3"`` and only then (a stray
        ``rope_factor`` on a default-RoPE config would be silently ignored), and are usable; they
        are stored as float/int so configs read from JSON, YAML or ``config.json`` compare equal."""
        if self.rope_type not in ROPE_TYPES:
            raise UnsupportedConfigError(f"rope_type must be one of {ROPE_TYPES}, got {self.rope_type!r}")
        given = {f: getattr(self, f) for f in LLAMA3_ROPE_FIELDS if getattr(self, f) is not None}
        if self.rope_type == "default":
            if given:
                raise UnsupportedConfigError(f"{sorted(given)} only apply with rope_type='llama3'")
            return
        missing = sorted(set(LLAMA3_ROPE_FIELDS) - set(given))
        if missing:
            raise UnsupportedConfigError(f"rope_type='llama3' needs {missing}")
        factor, low, high, original = (float(given[f]) for f in LLAMA3_ROPE_FIELDS)
        if not (factor > 0 and 0 < low < high and original > 0 and original == int(original)):
            raise UnsupportedConfigError(
                "llama3 RoPE needs factor > 0, 0 < low_freq_factor < high_freq_factor and an integer "
                f"original_max_position_embeddings > 0, got {given}")
        for name, value in zip(LLAMA3_ROPE_FIELDS, (factor, low, high, int(original)), strict=True):
            object.__setattr__(self, name, value)

    def hf_rope_parameters(self) -> dict[str, Any]:
        """The RoPE scaling entry of ``config.json`` (HF names), empty for default RoPE."""
        if self.rope_type == "default":
            return {}
        params = {f.removeprefix("rope_"): getattr(self, f) for f in LLAMA3_ROPE_FIELDS}
        return {"rope_type": self.rope_type, **params}

    # -- derived -----------------------------------------------------------------------------
    @property
    def scale(self) -> float:
        """Softmax temperature applied to q·k (Granite replaces 1/sqrt(d) by attention_multiplier)."""
        return self.head_dim**-0.5 if self.attention_scale is None else self.attention_scale

    @property
    def act_dtype(self) -> jnp.dtype:
        return jnp.dtype(self.dtype)

    @property
    def weight_dtype(self) -> jnp.dtype:
        return jnp.dtype(self.param_dtype)

    def replace(self, **changes: Any) -> ModelConfig:
        """A copy with some fields changed (runtime options such as dtype, scan_layers, remat)."""
        return dataclasses.replace(self, **changes)

    # -- HF interop -----------------------------------------------------------------------------
    @classmethod
    def from_hf_dict(cls, hf: dict[str, Any], **runtime: Any) -> ModelConfig:
        """Build from a parsed HF ``config.json``; ``runtime`` overrides dtype/scan/remat/etc."""
        fields = _parse_hf(hf)
        family_cls = model_family(fields["family"]).config_cls if cls is ModelConfig else cls
        return family_cls(**fields, **runtime)

    @classmethod
    def from_hf_dir(cls, path: str | Path, **runtime: Any) -> ModelConfig:
        """Read ``path/config.json``."""
        with open(Path(path) / "config.json") as f:
            return cls.from_hf_dict(json.load(f), **runtime)

    def to_hf_dict(self, torch_dtype: str | None = None) -> dict[str, Any]:
        """A ``config.json`` that transformers 4.x and 5.x both read as this architecture.

        Writes legacy ``rope_theta``/``rope_scaling`` (4.x readers ignore ``rope_parameters`` and
        would fall back to theta=10000) *and* the 5.x ``rope_parameters``; llama3 scaling goes in
        both (``rope_scaling`` without theta, which 4.x keeps at the top level).
        """
        scaling = self.hf_rope_parameters()
        dtype_name = torch_dtype or self.param_dtype
        family = model_family(self.family)
        out: dict[str, Any] = {
            "architectures": [family.architectures[0]],
            "model_type": self.family,
            "vocab_size": self.vocab_size,
            "hidden_size": self.hidden_size,
            "intermediate_size": self.intermediate_size,
            "num_hidden_layers": self.num_layers,
            "num_attention_heads": self.num_heads,
            "num_key_value_heads": self.num_kv_heads,
            "head_dim": self.head_dim,
            "hidden_act": "silu",
            "max_position_embeddings": self.max_position_embeddings,
            "rms_norm_eps": self.rms_norm_eps,
            "rope_theta": self.rope_theta,
            "rope_scaling": scaling or None,
            "rope_parameters": {"rope_theta": self.rope_theta, "rope_type": "default", **scaling},
            "tie_word_embeddings": self.tie_word_embeddings,
            "initializer_range": self.initializer_range,
            "attention_dropout": 0.0,
            "use_cache": True,
            "torch_dtype": dtype_name,
            "bos_token_id": self.bos_token_id,
            "eos_token_id": list(self.eos_token_id)
            if isinstance(self.eos_token_id, tuple)
            else self.eos_token_id,
            "pad_token_id": self.pad_token_id,
        }
        out.update(family.to_hf(self))
        return out


class FamilyConfig(ModelConfig):
    """Base of a family's config class: fixes ``family`` and the family's flag defaults.

    A subclass sets ``FAMILY`` (its registered name) and ``DEFAULTS`` (fields it sets unless
    given, e.g. Qwen3's ``qk_norm``). The class exists so ``type(cfg)`` says the family and
    ``Qwen3Config(...)`` reads like the HF class; ``dataclasses.replace`` passes ``family`` back
    in, which is accepted only if it agrees.
    """

    FAMILY: ClassVar[str] = ""
    DEFAULTS: ClassVar[Mapping[str, Any]] = {}

    def __init__(self, **kw: Any) -> None:
        for name, value in self.DEFAULTS.items():
            kw.setdefault(name, value)
        given = kw.pop("family", self.FAMILY)
        if given != self.FAMILY:
            raise ValueError(f"family={given!r} contradicts the {self.FAMILY} config class")
        super().__init__(family=self.FAMILY, **kw)


def _no_keys(_: Any) -> dict[str, Any]:
    return {}


@dataclasses.dataclass(frozen=True)
class ModelFamily:
    """Everything the model side knows of one family, in one registration.

    ``config_cls.FAMILY`` is the name: ``ModelConfig.family`` *and* the HF ``model_type`` read and
    written. ``architectures[0]`` is written into ``config.json``. ``tensors`` is the HF <-> JAX
    weight table (:class:`~prove_jax.models.families.TensorRule`s, in HF save order; rules whose
    ``when`` flag is off are skipped). ``from_hf`` maps an HF ``config.json`` to the family's own
    fields (flags, multipliers, defaults that differ from the generic reading) and ``to_hf`` writes
    them back, so ``from_hf_dict(cfg.to_hf_dict()) == cfg``. ``chat_family`` is the chat template
    a tokenizer of ours (tiny BPE) speaks for this family, a name registered in
    :mod:`prove_jax.chat.families` (a real tokenizer says its own). ``maxtext`` says how MaxText's
    decoder block for the family stores the same tensors (:mod:`prove_jax.models.maxtext_io`);
    None: no MaxText import/export for this family.
    """

    config_cls: type[FamilyConfig]
    tensors: tuple[TensorRule, ...]
    architectures: tuple[str, ...]
    chat_family: str
    from_hf: Callable[[Mapping[str, Any]], dict[str, Any]] = _no_keys
    to_hf: Callable[[ModelConfig], dict[str, Any]] = _no_keys
    maxtext: MaxTextLayout | None = None

    @property
    def name(self) -> str:
        return self.config_cls.FAMILY

    def __post_init__(self) -> None:
        if not (isinstance(self.config_cls, type) and issubclass(self.config_cls, FamilyConfig) and self.name):
            raise ValueError(f"{self.config_cls!r} must be a FamilyConfig subclass with FAMILY set")
        if not self.architectures or not self.tensors:
            raise ValueError(f"model family {self.name!r} needs architectures and a tensor table")
        flags = {f.name for f in dataclasses.fields(ModelConfig)} | {"untied"}
        unknown = sorted({r.when for r in self.tensors if r.when is not None} - flags)
        if unknown:  # a typo here would silently drop the tensor from load and export
            raise ValueError(f"model family {self.name!r}: tensor rules depend on unknown flags {unknown}")


_REGISTRY: dict[str, ModelFamily] = {}


def register_model_family(family: ModelFamily) -> ModelFamily:
    """Add ``family`` (a name is registered once: a second one would silently change checkpoints)."""
    if family.name in _REGISTRY:
        raise ValueError(f"model family {family.name!r} is registered twice")
    _REGISTRY[family.name] = family
    return family


def unregister_model_family(name: str) -> None:
    """Remove a family (tests and plugins that registered one for a while)."""
    _REGISTRY.pop(name, None)


def model_family(name: str) -> ModelFamily:
    """The registration of ``name`` (= HF ``model_type``); unknown names list the choices."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnsupportedConfigError(f"unknown model family {name!r}; supported: {sorted(_REGISTRY)}") from None


class _ConfigClasses(Mapping[str, type[ModelConfig]]):
    """``family -> config class``, read live from the registry."""

    def __getitem__(self, name: str) -> type[ModelConfig]:
        return _REGISTRY[name].config_cls

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(_REGISTRY))

    def __len__(self) -> int:
        return len(_REGISTRY)

    def __repr__(self) -> str:
        return f"FAMILY_CLASSES({dict(self)!r})"


FAMILY_CLASSES: Mapping[str, type[ModelConfig]] = _ConfigClasses()
"""A view of the registry kept for its callers (launch-config check, model records, the planner)."""


def _parse_rope(hf: dict[str, Any]) -> dict[str, Any]:
    """``rope_theta`` and the scaling fields, after rejecting every RoPE variant other than plain
    RoPE and Llama 3's (``rope_type: llama3``): linear, dynamic, yarn, longrope... change the
    frequencies or the positions in ways this decoder does not, so their logits would be wrong.

    Same precedence as transformers 5.x: a non-null ``rope_scaling`` replaces ``rope_parameters``;
    theta inside the dict wins over the top-level ``rope_theta``; default 10000; llama3's
    ``original_max_position_embeddings`` is the top-level key if there is one, else the dict's,
    else ``max_position_embeddings`` (``standardize_rope_params``).
    """
    source = "rope_scaling" if hf.get("rope_scaling") else "rope_parameters"
    params = hf.get(source) or {}
    if not isinstance(params, dict):
        raise UnsupportedConfigError(f"cannot read rope parameters {params!r}")
    if any(isinstance(v, dict) for v in params.values()):
        raise UnsupportedConfigError(f"per-layer-type RoPE parameters are not supported: {params}")
    rope_type = params.get("rope_type", params.get("type", "default"))
    if rope_type not in ROPE_TYPES:
        raise UnsupportedConfigError(
            f"{source}.rope_type={rope_type!r} ({source}={params}) is not supported; only default RoPE "
            "and 'llama3' are implemented. Remove the entry to run at the native context length."
        )
    prf = params.get("partial_rotary_factor", hf.get("partial_rotary_factor"))
    if prf is not None and float(prf) != 1.0:
        raise UnsupportedConfigError(f"partial_rotary_factor={prf} is not supported")
    out: dict[str, Any] = {"rope_theta": float(params.get("rope_theta", hf.get("rope_theta", 10000.0)))}
    if rope_type == "llama3":
        original = hf.get("original_max_position_embeddings") or params.get(
            "original_max_position_embeddings", hf.get("max_position_embeddings"))
        missing = [k for k in ("factor", "low_freq_factor", "high_freq_factor") if params.get(k) is None]
        if missing or original is None:
            lacks = missing or ["original_max_position_embeddings"]
            raise UnsupportedConfigError(f"{source} of rope_type 'llama3' lacks {lacks}")
        out.update(rope_type="llama3", rope_factor=params["factor"], rope_original_max_position_embeddings=original,
                   rope_low_freq_factor=params["low_freq_factor"], rope_high_freq_factor=params["high_freq_factor"])
    return out


def _parse_hf(hf: dict[str, Any]) -> dict[str, Any]:
    """Map HF config keys to ModelConfig fields: the keys every family shares here, then the
    family's own (its ``from_hf``, which also sets its HF class defaults)."""
    family = hf.get("model_type")
    if family not in _REGISTRY:
        raise UnsupportedConfigError(
            f"model_type {family!r} is not supported (supported: {sorted(_REGISTRY)}); hybrid/MoE Granite "
            "(granitemoehybrid) needs Mamba/MoE layers that are not implemented"
        )
    if hf.get("quantization_config"):
        raise UnsupportedConfigError("quantized checkpoints are not supported")
    act = hf.get("hidden_act", "silu")
    if act != "silu":
        raise UnsupportedConfigError(f"hidden_act={act!r} is not supported (only silu / SwiGLU)")
    if hf.get("use_sliding_window"):
        raise UnsupportedConfigError(
            f"sliding-window attention (use_sliding_window=true, sliding_window={hf.get('sliding_window')}) "
            "is not supported"
        )
    layer_types = hf.get("layer_types")
    if layer_types and any(t != "full_attention" for t in layer_types):
        raise UnsupportedConfigError(
            f"only full_attention layers are supported, got {sorted(set(layer_types))}"
        )

    heads = int(hf["num_attention_heads"])
    hidden = int(hf["hidden_size"])
    kv = hf.get("num_key_value_heads") or heads
    eos = hf.get("eos_token_id")
    fields: dict[str, Any] = {
        "family": family,
        "vocab_size": int(hf["vocab_size"]),
        "hidden_size": hidden,
        "intermediate_size": int(hf["intermediate_size"]),
        "num_layers": int(hf["num_hidden_layers"]),
        "num_heads": heads,
        "num_kv_heads": int(kv),
        "head_dim": int(hf.get("head_dim") or hidden // heads),
        **_parse_rope(hf),
        "rms_norm_eps": float(hf.get("rms_norm_eps", 1e-6)),
        "max_position_embeddings": int(hf.get("max_position_embeddings", 32768)),
        "tie_word_embeddings": bool(hf.get("tie_word_embeddings", False)),
        "initializer_range": float(hf.get("initializer_range", 0.02)),
        "bos_token_id": hf.get("bos_token_id"),
        "eos_token_id": tuple(eos) if isinstance(eos, list) else eos,
        "pad_token_id": hf.get("pad_token_id"),
    }
    fields.update(model_family(family).from_hf(hf))
    if hf.get("mlp_bias") and not fields.get("mlp_bias"):
        raise UnsupportedConfigError(f"mlp_bias is not defined for {family}")
    return fields
