"""Model configuration: one frozen dataclass for the three dense decoder families.

Qwen2.5 (HF ``qwen2``), Qwen3 (``qwen3``) and Granite-4.1 (``granite``) share one decoder; they
differ only in a handful of flags (q/k/v bias, qk-norm, the four Granite multipliers, tied head).
The config is frozen and hashable because NNX keeps it in the static graph definition: two models
with equal configs share one jit compilation.

Reading HF ``config.json`` follows the transformers 5.x rules (``rope_parameters`` *or* legacy
``rope_theta``/``rope_scaling``) and fails loudly on anything the decoder does not implement
(scaled RoPE, sliding windows, other activations, quantised checkpoints) instead of silently
producing wrong logits.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import jax.numpy as jnp

from prove_jax.models.sharding import DEFAULT_RULES, Rules

FAMILIES = ("qwen2", "qwen3", "granite")
REMAT_POLICIES = ("none", "full", "dots")
ATTENTION_IMPLS = ("xla", "cudnn", "splash", "head_major")
"""``attention_impl`` values besides None / ``"auto"`` (mirrored by ``attention.IMPLS``)."""

_ARCHITECTURES = {
    "qwen2": "Qwen2ForCausalLM",
    "qwen3": "Qwen3ForCausalLM",
    "granite": "GraniteForCausalLM",
}


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
        if self.family not in FAMILIES:
            raise UnsupportedConfigError(f"unknown family {self.family!r}; supported: {FAMILIES}")
        if self.num_heads % self.num_kv_heads:
            raise UnsupportedConfigError(
                f"num_heads={self.num_heads} is not a multiple of num_kv_heads={self.num_kv_heads}"
            )
        if self.head_dim % 2:
            raise UnsupportedConfigError(f"RoPE needs an even head_dim, got {self.head_dim}")
        if self.remat not in REMAT_POLICIES:
            raise ValueError(f"remat must be one of {REMAT_POLICIES}, got {self.remat!r}")
        object.__setattr__(self, "attention_impl", check_attention_impl(self.attention_impl))
        if isinstance(self.eos_token_id, list):
            object.__setattr__(self, "eos_token_id", tuple(self.eos_token_id))
        for name in ("dtype", "param_dtype", "logits_dtype"):
            object.__setattr__(self, name, jnp.dtype(getattr(self, name)).name)

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
        family_cls = FAMILY_CLASSES[fields["family"]] if cls is ModelConfig else cls
        return family_cls(**fields, **runtime)

    @classmethod
    def from_hf_dir(cls, path: str | Path, **runtime: Any) -> ModelConfig:
        """Read ``path/config.json``."""
        with open(Path(path) / "config.json") as f:
            return cls.from_hf_dict(json.load(f), **runtime)

    def to_hf_dict(self, torch_dtype: str | None = None) -> dict[str, Any]:
        """A ``config.json`` that transformers 4.x and 5.x both read as this architecture.

        Writes legacy ``rope_theta``/``rope_scaling`` (4.x readers ignore ``rope_parameters`` and
        would fall back to theta=10000) *and* the 5.x ``rope_parameters``.
        """
        dtype_name = torch_dtype or self.param_dtype
        out: dict[str, Any] = {
            "architectures": [_ARCHITECTURES[self.family]],
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
            "rope_scaling": None,
            "rope_parameters": {"rope_theta": self.rope_theta, "rope_type": "default"},
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
        if self.family in ("qwen2", "qwen3"):
            out["use_sliding_window"] = False
            out["sliding_window"] = None
            out["max_window_layers"] = self.num_layers
        if self.family in ("qwen3", "granite"):
            out["attention_bias"] = self.qkv_bias
        if self.family == "granite":
            out["mlp_bias"] = self.mlp_bias
            out["embedding_multiplier"] = self.embedding_multiplier
            out["residual_multiplier"] = self.residual_multiplier
            out["attention_multiplier"] = self.scale
            out["logits_scaling"] = self.logits_scaling
        return out


class Qwen2Config(ModelConfig):
    """Qwen2 / Qwen2.5: q/k/v bias (hard-coded in HF), no o bias, no qk-norm."""

    def __init__(self, **kw: Any) -> None:
        kw.setdefault("qkv_bias", True)
        _check_family(kw, "qwen2")
        super().__init__(family="qwen2", **kw)


class Qwen3Config(ModelConfig):
    """Qwen3: qk-norm over head_dim before RoPE, explicit head_dim (may differ from hidden/heads)."""

    def __init__(self, **kw: Any) -> None:
        kw.setdefault("qk_norm", True)
        _check_family(kw, "qwen3")
        super().__init__(family="qwen3", **kw)


class GraniteConfig(ModelConfig):
    """Granite (dense, HF ``granite``): the four multipliers, usually tied head."""

    def __init__(self, **kw: Any) -> None:
        _check_family(kw, "granite")
        super().__init__(family="granite", **kw)


def _check_family(kw: dict[str, Any], family: str) -> None:
    """Family classes fix ``family``; accept it (dataclasses.replace passes it) only if it agrees."""
    given = kw.pop("family", family)
    if given != family:
        raise ValueError(f"family={given!r} contradicts the {family} config class")


FAMILY_CLASSES: dict[str, type[ModelConfig]] = {}


def _parse_rope(hf: dict[str, Any]) -> float:
    """Return rope_theta after rejecting every RoPE variant other than plain default RoPE.

    Same precedence as transformers 5.x: a non-null ``rope_scaling`` replaces ``rope_parameters``;
    theta inside the dict wins over the top-level ``rope_theta``; default 10000.
    """
    params = hf.get("rope_scaling") or hf.get("rope_parameters") or {}
    if not isinstance(params, dict):
        raise UnsupportedConfigError(f"cannot read rope parameters {params!r}")
    if any(isinstance(v, dict) for v in params.values()):
        raise UnsupportedConfigError(f"per-layer-type RoPE parameters are not supported: {params}")
    rope_type = params.get("rope_type", params.get("type", "default"))
    if rope_type != "default":
        raise UnsupportedConfigError(
            f"rope type {rope_type!r} (rope_scaling={params}) is not supported; only default RoPE "
            "is implemented. Remove the rope_scaling entry to run at the native context length."
        )
    prf = params.get("partial_rotary_factor", hf.get("partial_rotary_factor"))
    if prf is not None and float(prf) != 1.0:
        raise UnsupportedConfigError(f"partial_rotary_factor={prf} is not supported")
    return float(params.get("rope_theta", hf.get("rope_theta", 10000.0)))


def _parse_hf(hf: dict[str, Any]) -> dict[str, Any]:
    """Map HF config keys to ModelConfig fields, with each family's HF class defaults."""
    family = hf.get("model_type")
    if family not in FAMILIES:
        raise UnsupportedConfigError(
            f"model_type {family!r} is not supported (supported: {FAMILIES}); hybrid/MoE Granite "
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
    if hf.get("mlp_bias") and family != "granite":
        raise UnsupportedConfigError("mlp_bias is only defined for granite")

    heads = int(hf["num_attention_heads"])
    hidden = int(hf["hidden_size"])
    default_head_dim = 128 if family == "qwen3" else hidden // heads  # Qwen3Config.head_dim defaults to 128
    kv = hf.get("num_key_value_heads") or heads
    attention_bias = bool(hf.get("attention_bias", False))
    eos = hf.get("eos_token_id")
    fields: dict[str, Any] = {
        "family": family,
        "vocab_size": int(hf["vocab_size"]),
        "hidden_size": hidden,
        "intermediate_size": int(hf["intermediate_size"]),
        "num_layers": int(hf["num_hidden_layers"]),
        "num_heads": heads,
        "num_kv_heads": int(kv),
        "head_dim": int(hf.get("head_dim") or default_head_dim),
        "rope_theta": _parse_rope(hf),
        "rms_norm_eps": float(hf.get("rms_norm_eps", 1e-6)),
        "max_position_embeddings": int(hf.get("max_position_embeddings", 32768)),
        "tie_word_embeddings": bool(hf.get("tie_word_embeddings", False)),
        "initializer_range": float(hf.get("initializer_range", 0.02)),
        "bos_token_id": hf.get("bos_token_id"),
        "eos_token_id": tuple(eos) if isinstance(eos, list) else eos,
        "pad_token_id": hf.get("pad_token_id"),
    }
    if family == "qwen2":
        fields.update(qkv_bias=True, o_bias=False, qk_norm=False)
    elif family == "qwen3":
        fields.update(qkv_bias=attention_bias, o_bias=attention_bias, qk_norm=True)
    else:
        fields.update(
            qkv_bias=attention_bias,
            o_bias=attention_bias,
            mlp_bias=bool(hf.get("mlp_bias", False)),
            embedding_multiplier=float(hf.get("embedding_multiplier", 1.0)),
            residual_multiplier=float(hf.get("residual_multiplier", 1.0)),
            attention_scale=float(hf.get("attention_multiplier", 1.0)),
            logits_scaling=float(hf.get("logits_scaling", 1.0)),
        )
    return fields


FAMILY_CLASSES.update(qwen2=Qwen2Config, qwen3=Qwen3Config, granite=GraniteConfig)
