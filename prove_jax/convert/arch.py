"""What a GGUF architecture means in Hugging Face terms: ``config.json`` and tensor names.

llama.cpp's ``convert_hf_to_gguf.py`` renamed every tensor, flattened ``config.json`` into
``{arch}.*`` metadata keys and, for the ``llama`` architecture only, *permuted the rows* of the
query and key projections. This module undoes the three, one table per concern:

* :data:`ARCHITECTURES` — the supported families (``llama`` incl. SmolLM2/Llama/Mistral-style
  checkpoints, ``qwen2`` for Qwen2/Qwen2.5, ``qwen3``): HF ``model_type``/``architectures``, whether
  q/k were permuted, and which optional tensors the HF class needs a config flag for.
* :func:`hf_tensor_name` — llama.cpp tensor name -> HF parameter name (the same for all three).
* :func:`unpermute_rows` — the inverse of llama.cpp's q/k permutation.

Why the permutation exists: llama.cpp's ``llama`` graph applies RoPE to *adjacent* pairs of a
head's dimensions ``(2i, 2i+1)``, while the HF Llama code rotates ``i`` with ``i + d/2``
(``rotate_half``). So the converter reorders each head's rows from ``[first half | second half]``
to interleaved ``[x0, x(d/2), x1, x(d/2+1), ...]``; both then compute the same attention. An HF
model needs the original order back, or its RoPE pairs the wrong dimensions and the logits are
garbage. Qwen2/Qwen3 run with llama.cpp's NeoX-style RoPE (the HF pairing), so their weights were
stored unpermuted and are copied as they are. Quantisation blocks run along a row (32 or 256
input features), so a row permutation commutes with dequantisation: undoing it afterwards is exact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from prove_jax.convert.reader import GGUFConversionError, GGUFFile


@dataclass(frozen=True)
class ArchSpec:
    """One llama.cpp architecture and the transformers class it came from."""

    gguf_arch: str
    model_type: str
    architecture: str
    qk_permuted: bool
    """llama.cpp stored attn_q/attn_k rows interleaved for its RoPE (see the module docstring)."""
    needs_qkv_bias: bool = False
    """The HF class always has q/k/v biases (Qwen2): their absence means a broken file."""
    needs_qk_norm: bool = False
    """The HF class always has per-head RMSNorms on q and k (Qwen3)."""


ARCHITECTURES: dict[str, ArchSpec] = {
    s.gguf_arch: s
    for s in (
        ArchSpec("llama", "llama", "LlamaForCausalLM", qk_permuted=True),
        ArchSpec("qwen2", "qwen2", "Qwen2ForCausalLM", qk_permuted=False, needs_qkv_bias=True),
        ArchSpec("qwen3", "qwen3", "Qwen3ForCausalLM", qk_permuted=False, needs_qk_norm=True),
    )
}


def arch_spec(g: GGUFFile) -> ArchSpec:
    spec = ARCHITECTURES.get(g.arch)
    if spec is None:
        raise GGUFConversionError(
            f"{g.path.name}: architecture {g.arch!r} is not supported; supported: {sorted(ARCHITECTURES)}"
        )
    return spec


# ---- tensor names ---------------------------------------------------------------------------------
_GLOBAL_NAMES = {
    "token_embd.weight": "model.embed_tokens.weight",
    "output_norm.weight": "model.norm.weight",
    "output.weight": "lm_head.weight",
}
_BLOCK_NAMES = {
    "attn_norm": "input_layernorm",
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "attn_q_norm": "self_attn.q_norm",
    "attn_k_norm": "self_attn.k_norm",
    "ffn_norm": "post_attention_layernorm",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}
_BLOCK_RE = re.compile(r"blk\.(\d+)\.(\w+)\.(weight|bias)")

SKIPPED_TENSORS = frozenset({"rope_freqs.weight"})
"""Tensors llama.cpp derives from the config (Llama 3.1+ RoPE divisors): read into config.json
(:func:`_llama3_rope`), not written as weights."""


def hf_tensor_name(name: str) -> str:
    """llama.cpp name -> HF name (``blk.3.attn_q.weight`` -> ``model.layers.3.self_attn.q_proj.weight``).

    An unknown name is an error rather than a silent drop: a tensor we do not place is a part of
    the model the converted directory would lack.
    """
    if name in _GLOBAL_NAMES:
        return _GLOBAL_NAMES[name]
    m = _BLOCK_RE.fullmatch(name)
    if m and m.group(2) in _BLOCK_NAMES:
        return f"model.layers.{m.group(1)}.{_BLOCK_NAMES[m.group(2)]}.{m.group(3)}"
    raise GGUFConversionError(f"tensor {name!r} has no Hugging Face counterpart in the supported architectures")


def unpermute_rows(w: np.ndarray, n_head: int) -> np.ndarray:
    """Inverse of llama.cpp's ``permute(w, n_head)`` on the first axis of a q/k weight or bias.

    llama.cpp views each head's ``d`` rows as ``(2, d/2)`` and transposes to ``(d/2, 2)``,
    interleaving the halves; here each head's rows are viewed as ``(d/2, 2)`` and transposed back.
    ``n_head`` is the number of heads *of that projection* (the kv heads for ``attn_k``).
    """
    rows = w.shape[0]
    if rows % (2 * n_head):
        raise GGUFConversionError(f"cannot un-permute {rows} rows over {n_head} heads (need an even head_dim)")
    return w.reshape(n_head, rows // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def hf_tensor(g: GGUFFile, spec: ArchSpec, name: str, n_heads: int, n_kv_heads: int) -> tuple[str, np.ndarray]:
    """``(hf_name, float32 array)`` of llama.cpp tensor ``name``, q/k rows restored for ``llama``."""
    arr = g.dequantized(name)
    if spec.qk_permuted:
        if ".attn_q." in name:
            arr = unpermute_rows(arr, n_heads)
        elif ".attn_k." in name:
            arr = unpermute_rows(arr, n_kv_heads)
    return hf_tensor_name(name), arr


# ---- config.json ----------------------------------------------------------------------------------
def _f32(x: float) -> float:
    """A float32 metadata value written as the shortest decimal that reads back to it.

    GGUF stores ``1e-5`` as float32 0.0000099999997...; printing it as ``1e-05`` gives the value
    the original ``config.json`` had and that the model computes with in float32 anyway.
    """
    return float(np.format_float_positional(np.float32(x), unique=True, trim="0"))


def _one(g: GGUFFile, key: str, default: Any = None) -> Any:
    """A per-model scalar: llama.cpp may store a per-layer array; accept it only if uniform."""
    value = g.get(key, default)
    if isinstance(value, list):
        if len(set(value)) != 1:
            raise GGUFConversionError(f"{g.path.name}: {key} varies per layer ({value}); not supported")
        value = value[0]
    return value


LLAMA3_ORIGINAL_CONTEXT = 8192
"""The ``original_max_position_embeddings`` llama.cpp computes ``rope_freqs`` with: it reads a
top-level key Llama 3.x configs do not have, so it always falls back to 8192 (which is also the
value those configs state inside ``rope_scaling``)."""


def llama3_rope_factors(theta: float, head_dim: int, factor: float, low: float, high: float,
                        original: int = LLAMA3_ORIGINAL_CONTEXT) -> np.ndarray:
    """The per-frequency divisors of Llama 3.1+ RoPE, as llama.cpp stores them in ``rope_freqs``."""
    freqs = 1.0 / theta ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    wavelen = 2 * np.pi / freqs
    smooth = (original / wavelen - low) / (high - low)
    mid = 1 / ((1 - smooth) / factor + smooth)
    return np.where(wavelen < original / high, 1.0, np.where(wavelen > original / low, factor, mid))


def _llama3_rope(g: GGUFFile, theta: float, head_dim: int) -> dict[str, object]:
    """Recover the ``llama3`` rope_scaling from llama.cpp's ``rope_freqs`` tensor.

    The file keeps only the per-frequency divisors ``v``: 1 for short wavelengths, ``factor`` for
    long ones, and in between ``1 / ((1 - s) / factor + s)`` with ``s`` linear in
    ``original / wavelength`` — so ``factor`` is the largest divisor, and two smoothed frequencies
    give ``low_freq_factor``/``high_freq_factor``. With fewer than two, Llama 3's published values
    (1, 4) are tried. Either way the recovered parameters must reproduce ``v``, or we refuse.
    """
    v = g.dequantized("rope_freqs.weight").astype(np.float64)
    factor = float(v.max())
    low, high = 1.0, 4.0
    freqs = 1.0 / theta ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    x = LLAMA3_ORIGINAL_CONTEXT * freqs / (2 * np.pi)  # original / wavelength
    mid = (v > 1 + 1e-6) & (v < factor * (1 - 1e-6))
    if factor > 1 and mid.sum() >= 2:
        smooth = (1 / v[mid] - 1 / factor) / (1 - 1 / factor)
        slope, intercept = np.polyfit(x[mid], smooth, 1)
        low, high = -intercept / slope, (1 - intercept) / slope
        low, high = (float(np.round(b, 4)) for b in (low, high))
    if v.shape != (head_dim // 2,) or not np.allclose(llama3_rope_factors(theta, head_dim, factor, low, high), v,
                                                     rtol=1e-4, atol=0):
        raise GGUFConversionError(f"{g.path.name}: rope_freqs.weight is not llama3-style RoPE scaling "
                                  f"(llama.cpp's formula with factor {factor}); converting it is not supported")
    return {"rope_type": "llama3", "factor": _f32(factor), "low_freq_factor": low, "high_freq_factor": high,
            "original_max_position_embeddings": LLAMA3_ORIGINAL_CONTEXT}


def _rope_scaling(g: GGUFFile, arch: str, context: int, theta: float, head_dim: int) -> dict[str, object] | None:
    """HF ``rope_scaling`` from ``{arch}.rope.scaling.*`` or ``rope_freqs``, or None for plain RoPE."""
    if "rope_freqs.weight" in g.tensors:
        return _llama3_rope(g, theta, head_dim)
    kind = g.get(f"{arch}.rope.scaling.type")
    if kind in (None, "none"):
        return None
    factor = g.get(f"{arch}.rope.scaling.factor")
    if kind not in ("linear", "yarn") or factor is None:
        raise GGUFConversionError(f"{g.path.name}: RoPE scaling {kind!r} (factor {factor}) is not supported")
    out: dict[str, object] = {"rope_type": kind, "factor": _f32(factor)}
    original = g.get(f"{arch}.rope.scaling.original_context_length")
    if kind == "yarn":
        out["original_max_position_embeddings"] = int(original or context)
    return out


def _token_ids(g: GGUFFile) -> dict[str, int | list[int] | None]:
    eos = g.get("tokenizer.ggml.eos_token_id")
    return {
        "bos_token_id": g.get("tokenizer.ggml.bos_token_id"),
        "eos_token_id": eos,
        "pad_token_id": g.get("tokenizer.ggml.padding_token_id"),
    }


def hf_config(g: GGUFFile, torch_dtype: str) -> dict[str, Any]:
    """``config.json`` for the file's architecture, from its metadata and tensor shapes.

    Shapes win over metadata where both say the same thing (``vocab_size`` = embedding rows,
    ``head_dim`` = q rows / heads): they are what the weights are, and a GGUF may omit the key
    (``{arch}.key_length`` is absent from older files, and Qwen3's head_dim is not hidden / heads).
    """
    spec = arch_spec(g)
    a = spec.gguf_arch
    hidden = int(_one(g, f"{a}.embedding_length"))
    n_heads = int(_one(g, f"{a}.attention.head_count"))
    n_kv = int(_one(g, f"{a}.attention.head_count_kv", n_heads))
    n_layers = int(g.require(f"{a}.block_count"))
    context = int(g.get(f"{a}.context_length", 4096))
    if "blk.0.attn_q.weight" not in g.tensors or "token_embd.weight" not in g.tensors:
        raise GGUFConversionError(f"{g.path.name}: no blk.0.attn_q.weight / token_embd.weight; not a {a} decoder")
    q_rows = g.shape("blk.0.attn_q.weight")[0]
    head_dim = q_rows // n_heads
    if head_dim * n_heads != q_rows:
        raise GGUFConversionError(f"{g.path.name}: attn_q has {q_rows} rows, not a multiple of {n_heads} heads")
    key_length = g.get(f"{a}.attention.key_length")
    if key_length is not None and int(key_length) != head_dim:
        raise GGUFConversionError(f"{g.path.name}: key_length {key_length} but attn_q has {q_rows} rows for {n_heads} heads")
    for need, names in ((spec.needs_qkv_bias, ("attn_q.bias", "attn_k.bias", "attn_v.bias")),
                        (spec.needs_qk_norm, ("attn_q_norm.weight", "attn_k_norm.weight"))):
        missing = [n for n in names if need and f"blk.0.{n}" not in g.tensors]
        if missing:
            raise GGUFConversionError(f"{g.path.name}: a {a} model needs blk.*.{missing[0]}, which is absent")
    theta = _f32(g.get(f"{a}.rope.freq_base", 10000.0))
    scaling = _rope_scaling(g, a, context, theta, head_dim)
    config: dict[str, Any] = {
        "architectures": [spec.architecture],
        "model_type": spec.model_type,
        "vocab_size": g.shape("token_embd.weight")[0],
        "hidden_size": hidden,
        "intermediate_size": int(_one(g, f"{a}.feed_forward_length")),
        "num_hidden_layers": n_layers,
        "num_attention_heads": n_heads,
        "num_key_value_heads": n_kv,
        "head_dim": head_dim,
        "hidden_act": "silu",
        "max_position_embeddings": context,
        "rms_norm_eps": _f32(g.require(f"{a}.attention.layer_norm_rms_epsilon")),
        "rope_theta": theta,
        "rope_scaling": scaling,
        "rope_parameters": {"rope_theta": theta, **(scaling or {"rope_type": "default"})},
        "tie_word_embeddings": "output.weight" not in g.tensors,
        "attention_dropout": 0.0,
        "initializer_range": 0.02,
        "use_cache": True,
        "torch_dtype": torch_dtype,
        **_token_ids(g),
    }
    if spec.model_type in ("llama", "qwen3"):
        config["attention_bias"] = "blk.0.attn_q.bias" in g.tensors
    if spec.model_type == "llama":
        config["mlp_bias"] = "blk.0.ffn_up.bias" in g.tensors
    if spec.model_type in ("qwen2", "qwen3"):
        config["use_sliding_window"] = False
        config["max_window_layers"] = n_layers
    return config


def generation_config(g: GGUFFile) -> dict[str, object]:
    """``generation_config.json``: the token ids, end-of-turn tokens, and sampling defaults if stored.

    Chat GGUFs often mark the end of a turn with a token other than eos (``eot``/``eom``); both
    must stop generation, so ``eos_token_id`` becomes a list when they differ.
    """
    ids = _token_ids(g)
    stops = [i for i in (ids["eos_token_id"], g.get("tokenizer.ggml.eot_token_id"),
                         g.get("tokenizer.ggml.eom_token_id")) if i is not None]
    stops = list(dict.fromkeys(stops))
    out: dict[str, object] = {
        "bos_token_id": ids["bos_token_id"],
        "eos_token_id": stops[0] if len(stops) == 1 else (stops or None),
        "pad_token_id": ids["pad_token_id"],
    }
    sampling = {"temp": "temperature", "top_k": "top_k", "top_p": "top_p"}
    stored = {hf: g.get(f"general.sampling.{key}") for key, hf in sampling.items()}
    stored = {k: (_f32(v) if isinstance(v, float) else v) for k, v in stored.items() if v is not None}
    if stored:
        out.update(do_sample=True, **stored)
    return {k: v for k, v in out.items() if v is not None}
