"""The model families, one :class:`~prove_jax.models.config.ModelFamily` registration each, and
the declarative HF <-> JAX parameter tables they carry.

Adding a model family is one ``register_model_family(ModelFamily(...))`` here (or, from outside the
package, :func:`prove_jax.family.register_family`): its config class and flag defaults, the HF
``model_type``/architectures and config keys, its tensor table, its chat format and, where MaxText
has a decoder block for it, its :class:`MaxTextLayout` (MaxText checkpoints: ``maxtext_io``).
Nothing else in the repository names a family; every consumer reads the registry.

Each :class:`TensorRule` names a JAX parameter (dotted NNX path, ``{i}`` = layer index), the HF
state-dict key, and both layouts as axis-letter strings.  ``"(h d) e"`` means the HF tensor's
first axis is heads and head_dim merged (head-major), its second the hidden size.  Load and
export derive the permutation (transpose) and the reshape from the two strings, so there is no
per-tensor code and a new family is a new table.

Letters: e=embed (hidden), v=vocab, h=heads, k=kv_heads, d=head_dim, m=mlp (intermediate).
HF ``nn.Linear.weight`` is ``[out, in]``.  Our kernels keep that orientation (only split per head,
see layers.py), so for these families every rule is a pure reshape: no host transpose at load or
export.  A layout that differs in axis order (e.g. ``jax_dims="e h d"`` for ``"(h d) e"``) is
handled by the same code as a transpose.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from prove_jax.models.config import (
    FamilyConfig,
    ModelConfig,
    ModelFamily,
    UnsupportedConfigError,
    model_family,
    register_model_family,
)


@dataclasses.dataclass(frozen=True)
class TensorRule:
    """One parameter: JAX path, HF key, their axis layouts, and the config flag it depends on."""

    jax: str
    hf: str
    jax_dims: str
    hf_dims: str
    when: str | None = None
    """Name of a ModelConfig flag that must be true (``untied`` = not tie_word_embeddings)."""

    @property
    def per_layer(self) -> bool:
        return "{i}" in self.hf

    def applies(self, cfg: ModelConfig) -> bool:
        if self.when is None:
            return True
        if self.when == "untied":
            return not cfg.tie_word_embeddings
        return bool(getattr(cfg, self.when))

    def jax_path(self, layer: int | None) -> str:
        """Dotted NNX path; ``layer=None`` is the scanned (stacked) path without the index."""
        return self.jax.replace("{i}.", "") if layer is None else self.jax.format(i=layer)

    def hf_key(self, layer: int | None = None) -> str:
        return self.hf.format(i=layer) if self.per_layer else self.hf


_L = "model.layers.{i}"
BASE: tuple[TensorRule, ...] = (
    TensorRule("embed_tokens", "model.embed_tokens.weight", "v e", "v e"),
    TensorRule("layers.{i}.input_norm.weight", f"{_L}.input_layernorm.weight", "e", "e"),
    TensorRule("layers.{i}.attn.q_proj", f"{_L}.self_attn.q_proj.weight", "h d e", "(h d) e"),
    TensorRule("layers.{i}.attn.k_proj", f"{_L}.self_attn.k_proj.weight", "k d e", "(k d) e"),
    TensorRule("layers.{i}.attn.v_proj", f"{_L}.self_attn.v_proj.weight", "k d e", "(k d) e"),
    TensorRule("layers.{i}.attn.o_proj", f"{_L}.self_attn.o_proj.weight", "e h d", "e (h d)"),
    TensorRule("layers.{i}.post_norm.weight", f"{_L}.post_attention_layernorm.weight", "e", "e"),
    TensorRule("layers.{i}.mlp.gate_proj", f"{_L}.mlp.gate_proj.weight", "m e", "m e"),
    TensorRule("layers.{i}.mlp.up_proj", f"{_L}.mlp.up_proj.weight", "m e", "m e"),
    TensorRule("layers.{i}.mlp.down_proj", f"{_L}.mlp.down_proj.weight", "e m", "e m"),
    TensorRule("final_norm.weight", "model.norm.weight", "e", "e"),
    TensorRule("lm_head", "lm_head.weight", "v e", "v e", when="untied"),
)
QKV_BIAS: tuple[TensorRule, ...] = (
    TensorRule("layers.{i}.attn.q_bias", f"{_L}.self_attn.q_proj.bias", "h d", "(h d)", when="qkv_bias"),
    TensorRule("layers.{i}.attn.k_bias", f"{_L}.self_attn.k_proj.bias", "k d", "(k d)", when="qkv_bias"),
    TensorRule("layers.{i}.attn.v_bias", f"{_L}.self_attn.v_proj.bias", "k d", "(k d)", when="qkv_bias"),
)
O_BIAS: tuple[TensorRule, ...] = (
    TensorRule("layers.{i}.attn.o_bias", f"{_L}.self_attn.o_proj.bias", "e", "e", when="o_bias"),
)
QK_NORM: tuple[TensorRule, ...] = (
    TensorRule("layers.{i}.attn.q_norm.weight", f"{_L}.self_attn.q_norm.weight", "d", "d", when="qk_norm"),
    TensorRule("layers.{i}.attn.k_norm.weight", f"{_L}.self_attn.k_norm.weight", "d", "d", when="qk_norm"),
)
MLP_BIAS: tuple[TensorRule, ...] = (
    TensorRule("layers.{i}.mlp.gate_bias", f"{_L}.mlp.gate_proj.bias", "m", "m", when="mlp_bias"),
    TensorRule("layers.{i}.mlp.up_bias", f"{_L}.mlp.up_proj.bias", "m", "m", when="mlp_bias"),
    TensorRule("layers.{i}.mlp.down_bias", f"{_L}.mlp.down_proj.bias", "e", "e", when="mlp_bias"),
)

IGNORED_HF_SUFFIXES = ("rotary_emb.inv_freq",)
"""Buffers some old checkpoints carry that are recomputed, never loaded."""


def rules_for(cfg: ModelConfig) -> list[TensorRule]:
    """The rules that apply to this config, in HF save order (embed, layers, norm, head)."""
    return [r for r in model_family(cfg.family).tensors if r.applies(cfg)]


@dataclasses.dataclass(frozen=True)
class MaxTextLayout:
    """What MaxText's decoder block for a family does to its tensors beyond names and axis order.

    The MaxText name and axis order of each of our tensors is the same in every dense MaxText block
    (``prove_jax.models.maxtext_io.MAXTEXT_NAMES``, keyed by our JAX path), so a family adds only
    this to its registration; ``maxtext_io`` applies it on import and undoes it on export.
    """

    decoder_block: str
    """MaxText's ``decoder_block`` value for the family; recorded in the checkpoint, named in errors."""
    query_scale: bool = False
    """MaxText folds ``head_dim ** -0.5`` into the query projection instead of scaling the scores."""
    rope_interleave: bool = False
    """MaxText's RoPE rotates pairs ``(2i, 2i+1)`` where HF rotates ``(i, i + d/2)``: q/k
    projections are reordered along head_dim so both give the same attention."""
    without: tuple[str, ...] = ()
    """ModelConfig flags the block has no tensors for: a config with one of them set is refused."""


# --- the built-in families ----------------------------------------------------------------------
class Qwen2Config(FamilyConfig):
    """Qwen2 / Qwen2.5: q/k/v bias (hard-coded in HF), no o bias, no qk-norm."""

    FAMILY = "qwen2"
    DEFAULTS: ClassVar[Mapping[str, Any]] = {"qkv_bias": True}


class Qwen3Config(FamilyConfig):
    """Qwen3: qk-norm over head_dim before RoPE, explicit head_dim (may differ from hidden/heads)."""

    FAMILY = "qwen3"
    DEFAULTS: ClassVar[Mapping[str, Any]] = {"qk_norm": True}


class GraniteConfig(FamilyConfig):
    """Granite (dense, HF ``granite``): the four multipliers, usually tied head."""

    FAMILY = "granite"


class LlamaConfig(FamilyConfig):
    """Llama 2 / 3 / 3.1+ and every other ``LlamaForCausalLM`` (SmolLM, SmolLM2: tied head, ChatML
    tokenizer): optional ``attention_bias`` (q/k/v/o) and ``mlp_bias``, llama3 RoPE scaling (read
    for every family by ``config._parse_rope``), no sliding window."""

    FAMILY = "llama"


def _qwen_window(cfg: ModelConfig) -> dict[str, Any]:
    """Qwen configs spell out "no sliding window" (transformers reads these keys)."""
    return {"use_sliding_window": False, "sliding_window": None, "max_window_layers": cfg.num_layers}


def _attention_bias(hf: Mapping[str, Any]) -> dict[str, Any]:
    """HF ``attention_bias`` switches the q/k/v *and* o biases (Qwen3, Granite)."""
    bias = bool(hf.get("attention_bias", False))
    return {"qkv_bias": bias, "o_bias": bias}


def _qwen3_from_hf(hf: Mapping[str, Any]) -> dict[str, Any]:
    out = {**_attention_bias(hf), "qk_norm": True}
    if not hf.get("head_dim"):
        out["head_dim"] = 128  # transformers' Qwen3Config default, not hidden / heads
    return out


def _granite_from_hf(hf: Mapping[str, Any]) -> dict[str, Any]:
    return {
        **_attention_bias(hf),
        "mlp_bias": bool(hf.get("mlp_bias", False)),
        "embedding_multiplier": float(hf.get("embedding_multiplier", 1.0)),
        "residual_multiplier": float(hf.get("residual_multiplier", 1.0)),
        "attention_scale": float(hf.get("attention_multiplier", 1.0)),
        "logits_scaling": float(hf.get("logits_scaling", 1.0)),
    }


def _llama_from_hf(hf: Mapping[str, Any]) -> dict[str, Any]:
    """HF ``LlamaConfig`` keys. ``LlamaConfig`` has no ``sliding_window``: one that is set comes
    from a Mistral-style config relabelled ``llama``, whose attention differs past the window."""
    if hf.get("sliding_window") is not None:
        raise UnsupportedConfigError(
            f"sliding_window={hf['sliding_window']} (Mistral-style sliding-window attention) is not supported "
            "for llama: every layer here attends to the whole context; remove the key only if the window is "
            "at least the context length you run"
        )
    return {**_attention_bias(hf), "mlp_bias": bool(hf.get("mlp_bias", False)),
            "max_position_embeddings": int(hf.get("max_position_embeddings", 2048))}  # LlamaConfig's default


def _granite_to_hf(cfg: ModelConfig) -> dict[str, Any]:
    return {"attention_bias": cfg.qkv_bias, "mlp_bias": cfg.mlp_bias, "embedding_multiplier": cfg.embedding_multiplier,
            "residual_multiplier": cfg.residual_multiplier, "attention_multiplier": cfg.scale,
            "logits_scaling": cfg.logits_scaling}


register_model_family(ModelFamily(
    Qwen2Config,
    # q/k/v bias hard-coded on, o_proj without bias.
    tensors=BASE + QKV_BIAS,
    architectures=("Qwen2ForCausalLM",),
    chat_family="qwen2.5",
    from_hf=lambda hf: {"qkv_bias": True, "o_bias": False, "qk_norm": False},
    to_hf=_qwen_window,
    maxtext=MaxTextLayout("qwen2"),
))
register_model_family(ModelFamily(
    Qwen3Config,
    # qk-norm; attention_bias=true (unused by released models) adds q/k/v/o biases.
    tensors=BASE + QK_NORM + QKV_BIAS + O_BIAS,
    architectures=("Qwen3ForCausalLM",),
    chat_family="qwen3",
    from_hf=_qwen3_from_hf,
    to_hf=lambda cfg: {**_qwen_window(cfg), "attention_bias": cfg.qkv_bias},
    # MaxText's qwen3 block builds its attention without biases.
    maxtext=MaxTextLayout("qwen3", without=("qkv_bias", "o_bias")),
))
register_model_family(ModelFamily(
    GraniteConfig,
    # dense Granite: optional attention_bias (q/k/v/o) and mlp_bias.
    tensors=BASE + QKV_BIAS + O_BIAS + MLP_BIAS,
    architectures=("GraniteForCausalLM",),
    chat_family="granite-4.1",
    from_hf=_granite_from_hf,
    to_hf=_granite_to_hf,
))
register_model_family(ModelFamily(
    LlamaConfig,
    # Granite's table without the multipliers: attention_bias switches q/k/v/o biases, mlp_bias the MLP's.
    tensors=BASE + QKV_BIAS + O_BIAS + MLP_BIAS,
    architectures=("LlamaForCausalLM",),
    # ChatML with the Qwen2.5/Hermes tools section: SmolLM2's own template is bare ChatML (no tools),
    # and Llama 3's header format is not implemented, so a tiny tokenizer of ours speaks the ChatML
    # dialect our tool-call parser, transcripts and data already use; a real SmolLM2 tokenizer is
    # detected as the same format (its template's only marker is <|im_start|>). One difference from
    # SmolLM2's template: with no system message, Qwen2.5's default system prompt is written, not SmolLM's.
    chat_family="qwen2.5",
    from_hf=_llama_from_hf,
    to_hf=lambda cfg: {"attention_bias": cfg.qkv_bias, "mlp_bias": cfg.mlp_bias},
    # MaxText's llama2 block (every MaxText Llama, 2 to 3.3) has no attention or MLP biases; its HF
    # converter (LLAMA31 table and hooks) folds head_dim**-0.5 into the query kernel and reorders
    # q/k for its interleaved llama3.1 RoPE.
    maxtext=MaxTextLayout("llama2", query_scale=True, rope_interleave=True,
                          without=("qkv_bias", "o_bias", "mlp_bias")),
))


# --- layout algebra ---------------------------------------------------------------------------


def parse_dims(spec: str) -> list[list[str]]:
    """``"(h d) e"`` -> ``[["h", "d"], ["e"]]``: one group per HF axis, letters in memory order."""
    groups: list[list[str]] = []
    current: list[str] | None = None
    for tok in spec.replace("(", " ( ").replace(")", " ) ").split():
        if tok == "(":
            if current is not None:
                raise ValueError(f"nested group in {spec!r}")
            current = []
        elif tok == ")":
            if not current:
                raise ValueError(f"empty or unopened group in {spec!r}")
            groups.append(current)
            current = None
        elif current is not None:
            current.append(tok)
        else:
            groups.append([tok])
    if current is not None:
        raise ValueError(f"unclosed group in {spec!r}")
    return groups


def _sizes(jax_dims: str, jax_shape: Sequence[int]) -> dict[str, int]:
    letters = jax_dims.split()
    if len(letters) != len(jax_shape):
        raise ValueError(f"layout {jax_dims!r} does not match shape {tuple(jax_shape)}")
    return dict(zip(letters, jax_shape, strict=True))


def hf_shape(rule: TensorRule, jax_shape: Sequence[int]) -> tuple[int, ...]:
    """Shape of the HF tensor for a JAX parameter of ``jax_shape`` (one layer)."""
    size = _sizes(rule.jax_dims, jax_shape)
    return tuple(math.prod(size[a] for a in g) for g in parse_dims(rule.hf_dims))


def jax_to_hf(rule: TensorRule, x: np.ndarray) -> np.ndarray:
    """Rearrange one layer's JAX array into the HF layout (transpose, then merge groups)."""
    letters = rule.jax_dims.split()
    groups = parse_dims(rule.hf_dims)
    order = [letters.index(a) for g in groups for a in g]
    return np.ascontiguousarray(np.transpose(x, order)).reshape(hf_shape(rule, x.shape))


def hf_read_plan(
    rule: TensorRule, jax_shape: Sequence[int], index: Sequence[slice]
) -> tuple[tuple[slice, ...], Callable[[np.ndarray], np.ndarray]]:
    """How to produce ``jax_array[index]`` (one layer) from a *slice* of the HF tensor.

    Returns the HF slices to read and a function turning the read block into the JAX block.  For
    a merged HF axis only the outer letter's range is narrowed (inner letters are read whole and
    sliced after the reshape), so a tensor-parallel shard of whole heads is one contiguous read.
    """
    letters = rule.jax_dims.split()
    size = _sizes(rule.jax_dims, jax_shape)
    sl = {a: index[i].indices(size[a])[:2] for i, a in enumerate(letters)}
    groups = parse_dims(rule.hf_dims)
    hf_slices = []
    block_shape: list[int] = []
    post: list[slice] = []
    for g in groups:
        inner = math.prod(size[a] for a in g[1:])
        lo, hi = sl[g[0]]
        hf_slices.append(slice(lo * inner, hi * inner))
        block_shape.append(hi - lo)
        post.append(slice(None))
        for a in g[1:]:
            block_shape.append(size[a])
            post.append(slice(*sl[a]))
    flat_letters = [a for g in groups for a in g]
    order = [flat_letters.index(a) for a in letters]

    def finish(block: np.ndarray) -> np.ndarray:
        return np.transpose(block.reshape(block_shape)[tuple(post)], order)

    return tuple(hf_slices), finish
