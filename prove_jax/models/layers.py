"""Small shared layers: RMSNorm, RoPE (default and Llama 3 scaled), GQA attention, SwiGLU MLP, embedding.

Numerics follow transformers exactly (see reference/model_architectures.md §4) so a bf16 model
stays close to the HF one and an f32 model matches it to ~1e-6:

* RMSNorm normalises in f32, casts back to the activation dtype, *then* multiplies the weight.
* RoPE is the NeoX half-split form; frequencies (llama3-rescaled where the config says) and
  angles in f32, cos/sin cast to the activation dtype.
* Attention without a cache (training, scoring) goes through ``jax.nn.dot_product_attention`` (f32
  logits and softmax; a boolean mask becomes a large finite negative, so fully-masked pad rows
  give uniform weights, never NaN) so cuDNN / TPU kernels can be selected with
  ``ModelConfig.attention_impl``; on CPU ``head_major_attention`` computes the same numbers in
  causal query blocks.  With a KV cache, ``cached_attention.py`` reads the cache in its stored
  layout, in blocks up to the furthest slot the rows hold (see its docstring for why).

Weights keep the HF ``nn.Linear`` orientation ``[out..., in...]`` with one named axis per
dimension (q kernel ``[heads, head_dim, embed]``, o kernel ``[embed, heads, head_dim]``): XLA's dot
does not care which side is contracted, and loading/exporting then needs no host-side transpose
(a 1 GB checkpoint spent most of its load time transposing).  Tensor parallelism shards whole heads.

Every projection goes through :func:`project`, which also applies a LoRA adapter and reads a
quantised (QLoRA) base weight when :mod:`prove_jax.models.lora` has put them on the module: the
adapter is an attribute of the module, so it travels through ``nnx.split``/``merge``, the layer
scan and remat like any weight (why LoRA is not qwix's interception: see ``lora.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import Mesh

from prove_jax.models.attention import attend
from prove_jax.models.cached_attention import KVWrite, cached_attention
from prove_jax.models.config import ModelConfig


def _param(
    rngs: nnx.Rngs | None,
    shape: Sequence[int],
    axes: tuple[str, ...],
    dtype: jnp.dtype,
    init: str,
    std: float = 0.02,
) -> nnx.Param:
    """A Param with logical axis names.  Eager sharding is off: placement is decided by hf_io /
    ``init_model`` from the rules table, not at construction time."""
    if init == "normal":
        assert rngs is not None
        value = (jax.random.normal(rngs.params(), tuple(shape), jnp.float32) * std).astype(dtype)
    elif init == "ones":
        value = jnp.ones(tuple(shape), dtype)
    else:
        value = jnp.zeros(tuple(shape), dtype)
    return nnx.Param(value, sharding=axes, eager_sharding=False)


def dense(x: jax.Array, w: jax.Array, in_dims: int = 1, **kw: object) -> jax.Array:
    """``x [B, T, *in] @ w [*out, *in] -> [B, T, *out]`` as one 2-D matmul.

    Both operands are flattened first (free reshapes of contiguous arrays): the leading ``[B, T]``
    into one token axis, and the weight's ``*out`` / ``*in`` groups into one axis each.  XLA:CPU
    keeps a 2-D dot in canonical form, but for a dot with two token axes it transposes the
    activations (weight gradients: 2.3x slower MLP fwd+bwd), and for 3-D weights such as
    ``q_proj [heads, head_dim, embed]`` it transposed the *weights* on every call (every decode
    step copied all attention weights).
    """
    b, t = x.shape[:2]
    in_shape, out_shape = x.shape[2:], w.shape[: w.ndim - in_dims]
    if w.shape[w.ndim - in_dims :] != in_shape:
        raise ValueError(f"dense: weight {w.shape} does not end with the input feature dims {in_shape}")
    x2 = x.reshape(b * t, math.prod(in_shape))
    w2 = w.astype(x.dtype).reshape(math.prod(out_shape), math.prod(in_shape))
    y = jnp.einsum("ni,oi->no", x2, w2, **kw)  # type: ignore[arg-type]
    return y.reshape(b, t, *out_shape)


class QuantizedWeight(nnx.Variable):
    """A frozen base weight stored quantised for QLoRA: ``<name>_qvalue`` holds the codes and
    ``<name>_scale`` the scales (qwix's ``QArray`` fields). Not a Param on purpose: nothing
    differentiates it, and HF export (``nnx.Param`` only) cannot write codes as weights."""


def _dequantize(codes: jax.Array, scale: jax.Array, qtype: str) -> jax.Array:
    from qwix import QArray, dequantize  # only a QLoRA model needs qwix

    return dequantize(QArray(codes, scale, None, jnp.int8 if qtype == "int8" else qtype))


def weight(module: nnx.Module, name: str, dtype: jnp.dtype) -> jax.Array:
    """The weight ``name`` of ``module``: the Param, or the QLoRA codes dequantised to ``dtype``."""
    codes = getattr(module, f"{name}_qvalue", None)
    if codes is None:
        return getattr(module, name)[...]
    scale = getattr(module, f"{name}_scale")[...].astype(dtype)
    return _dequantize(codes[...], scale, module.quant_qtype)  # type: ignore[attr-defined]


@partial(jax.checkpoint, static_argnums=(3, 4))
def _dequantized_dense(x: jax.Array, codes: jax.Array, scale: jax.Array, qtype: str, in_dims: int) -> jax.Array:
    """``dense`` over a dequantised weight, rematerialised: the backward pass (``dx = dy W``)
    dequantises again instead of keeping every layer's float weights alive from the forward, which
    would hand back the memory QLoRA saves (measured: +4 bytes per base weight in the step's
    scratch without it)."""
    return dense(x, _dequantize(codes, scale, qtype), in_dims)


def project(module: nnx.Module, name: str, x: jax.Array, in_dims: int = 1) -> jax.Array:
    """``dense(x, module.<name>)`` plus, when the module carries a LoRA adapter for it,
    ``(alpha / rank) * (x A^T) B^T`` (PEFT's LoRA; ``A [r, *in]``, ``B [*out, r]``). The adapter
    path is two thin matmuls: the ``[*out, *in]`` update ``B A`` is never formed."""
    codes = getattr(module, f"{name}_qvalue", None)
    if codes is None:
        y = dense(x, getattr(module, name)[...], in_dims)
    else:
        scale = getattr(module, f"{name}_scale")[...].astype(x.dtype)
        y = _dequantized_dense(x, codes[...], scale, module.quant_qtype, in_dims)  # type: ignore[attr-defined]
    a = getattr(module, f"{name}_lora_a", None)
    if a is None:
        return y
    b = getattr(module, f"{name}_lora_b")
    scale = module.lora_alpha / module.lora_rank  # type: ignore[attr-defined]
    return y + dense(dense(x, a[...], in_dims), b[...]) * jnp.asarray(scale, y.dtype)


def rms_norm(x: jax.Array, weight: jax.Array, eps: float) -> jax.Array:
    """HF ``RMSNorm``: f32 statistics, cast back, then scale by the weight."""
    x32 = x.astype(jnp.float32)
    y = x32 * jax.lax.rsqrt(jnp.mean(x32 * x32, axis=-1, keepdims=True) + eps)
    return weight.astype(x.dtype) * y.astype(x.dtype)


class RMSNorm(nnx.Module):
    """RMSNorm over the last axis (hidden size, or head_dim for Qwen3 qk-norm)."""

    def __init__(self, size: int, eps: float, axis_name: str, dtype: jnp.dtype) -> None:
        self.eps = eps
        self.weight = _param(None, (size,), (axis_name,), dtype, "ones")

    def __call__(self, x: jax.Array) -> jax.Array:
        return rms_norm(x, self.weight[...], self.eps)


def rope_inv_freq(cfg: ModelConfig) -> jax.Array:
    """RoPE inverse frequencies ``[head_dim // 2]`` (f32) of ``cfg``'s schedule.

    Default: ``1 / theta ** (arange(0, D, 2) / D)``.  ``rope_type="llama3"`` (Llama 3.1+) then
    rescales by wavelength ``2 pi / f``, as transformers' ``_compute_llama3_parameters`` does
    (the same f32 operations: equal to a few ulp, XLA's and torch's ``pow`` differ): bands whose wavelength is longer than
    ``original_max_position_embeddings / low_freq_factor`` were never seen whole in pretraining
    and are slowed by ``factor``; bands shorter than ``original / high_freq_factor`` are kept; in
    between, a linear blend in ``original / wavelength``.  It is a function of the config alone, so
    every family without scaling gets exactly the default table.
    """
    d = cfg.head_dim
    inv_freq = 1.0 / (cfg.rope_theta ** (jnp.arange(0, d, 2, dtype=jnp.float32) / d))
    if cfg.rope_type == "default":
        return inv_freq
    if cfg.rope_type != "llama3":  # ModelConfig admits only ROPE_TYPES; a new one must be added here
        raise NotImplementedError(f"rope_type {cfg.rope_type!r}")
    factor, low, high = cfg.rope_factor, cfg.rope_low_freq_factor, cfg.rope_high_freq_factor
    original = cfg.rope_original_max_position_embeddings
    assert factor is not None and low is not None and high is not None and original is not None
    low_freq_wavelen, high_freq_wavelen = original / low, original / high
    wavelen = 2 * math.pi / inv_freq
    scaled = jnp.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth = (original / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < high_freq_wavelen) & ~(wavelen > low_freq_wavelen)
    return jnp.where(medium, smoothed, scaled)


def rope_cos_sin(positions: jax.Array, inv_freq: jax.Array, dtype: jnp.dtype) -> tuple[jax.Array, jax.Array]:
    """cos/sin tables ``[B, T, head_dim // 2]`` for integer positions ``[B, T]``.

    Angles ``pos * inv_freq`` in f32 (``inv_freq`` from :func:`rope_inv_freq`), cast to the
    activation dtype like HF does.  HF's tables are ``cat(freqs, freqs)``: both halves are equal,
    so one half is kept.
    """
    angles = positions.astype(jnp.float32)[..., None] * inv_freq
    return jnp.cos(angles).astype(dtype), jnp.sin(angles).astype(dtype)


def apply_rope(x: jax.Array, cos: jax.Array, sin: jax.Array) -> jax.Array:
    """HF's ``x * cos + rotate_half(x) * sin`` on ``x: [B, T, N, D]`` (half-split, not
    interleaved), written per half: ``[x1 c - x2 s, x2 c + x1 s]``.  The same products and sums,
    so the same values; but the gradient is two elementwise halves and one concatenate instead
    of slices, a negation and pad-and-add fusions (~8 % of a CPU train step)."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    c, s = cos[:, :, None, :], sin[:, :, None, :]
    return jnp.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1)


class Attention(nnx.Module):
    """Grouped-query self-attention with optional q/k/v/o biases and Qwen3 qk-norm."""

    def __init__(self, cfg: ModelConfig, *, rngs: nnx.Rngs, mesh: Mesh | None = None) -> None:
        d, h, kv, hd = cfg.hidden_size, cfg.num_heads, cfg.num_kv_heads, cfg.head_dim
        pd, std = cfg.weight_dtype, cfg.initializer_range
        self.cfg = cfg
        self.mesh = mesh  # the model's mesh: a per-device attention kernel runs under shard_map on it
        self.q_proj = _param(rngs, (h, hd, d), ("heads", "head_dim", "embed"), pd, "normal", std)
        self.k_proj = _param(rngs, (kv, hd, d), ("kv_heads", "head_dim", "embed"), pd, "normal", std)
        self.v_proj = _param(rngs, (kv, hd, d), ("kv_heads", "head_dim", "embed"), pd, "normal", std)
        self.o_proj = _param(rngs, (d, h, hd), ("embed", "heads", "head_dim"), pd, "normal", std)
        if cfg.qkv_bias:
            self.q_bias = _param(None, (h, hd), ("heads", "head_dim"), pd, "zeros")
            self.k_bias = _param(None, (kv, hd), ("kv_heads", "head_dim"), pd, "zeros")
            self.v_bias = _param(None, (kv, hd), ("kv_heads", "head_dim"), pd, "zeros")
        if cfg.o_bias:
            self.o_bias = _param(None, (d,), ("embed",), pd, "zeros")
        if cfg.qk_norm:
            self.q_norm = RMSNorm(hd, cfg.rms_norm_eps, "head_dim", pd)
            self.k_norm = RMSNorm(hd, cfg.rms_norm_eps, "head_dim", pd)

    def _project(self, x: jax.Array, name: str) -> jax.Array:
        """``x @ W`` into ``[B, T, heads, head_dim]`` (+ bias for Qwen2 / attention_bias)."""
        y = project(self, f"{name}_proj", x)
        if self.cfg.qkv_bias:
            y = y + getattr(self, f"{name}_bias")[...].astype(x.dtype)
        return y

    def __call__(
        self,
        x: jax.Array,
        cos: jax.Array,
        sin: jax.Array,
        mask: jax.Array | None,
        is_causal: bool,
        kv_write: KVWrite | None,
    ) -> tuple[jax.Array, tuple[jax.Array, jax.Array] | None]:
        """Attend ``x: [B, T, E]``.

        Without a cache, keys are the current tokens (``is_causal`` plus an optional key-padding
        ``mask``).  With ``kv_write`` (a :class:`KVWrite`: the layer's cache buffers, or the stacked
        ones and the layer index) the new post-RoPE K/V are written at per-row slot ``start[b]``
        and the queries attend over the slots rows hold (``cached_attention.py``; ``mask`` is
        unused).  Returns the output and the updated buffers.
        """
        cfg = self.cfg
        q, k, v = self._project(x, "q"), self._project(x, "k"), self._project(x, "v")
        if cfg.qk_norm:
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if kv_write is not None:
            out, new_kv = cached_attention(q, k, v, kv_write, cfg.scale, cfg.attention_impl)
        else:
            # training / scoring: splash (TPU), cuDNN (GPU), head-major (CPU) or XLA by
            # cfg.attention_impl; see attention.py
            new_kv = None
            out = attend(q, k, v, mask, is_causal, cfg.scale, cfg.attention_impl, self.mesh, cfg.sharding_rules)
        y = project(self, "o_proj", out, in_dims=2)
        if cfg.o_bias:
            y = y + self.o_bias[...].astype(x.dtype)
        return y, new_kv


_MASKED = -0.7 * float(jnp.finfo(jnp.float32).max)
"""Score of a masked key: finite, so a row with every key masked gets uniform weights, not NaN."""


def _attention_probs(scores: jax.Array, keep: jax.Array | None, scale: float, dtype: jnp.dtype) -> jax.Array:
    """The XLA ``dot_product_attention`` numerics on f32 ``scores``: scale, mask to a finite
    large negative, f32 softmax, probabilities cast to the value dtype."""
    scores = scores * jnp.asarray(scale, jnp.float32)
    if keep is not None:
        scores = jnp.where(keep, scores, _MASKED)
    return jax.nn.softmax(scores, axis=-1).astype(dtype)


CAUSAL_QUERY_BLOCK = 64
"""Query rows per block in :func:`head_major_attention`'s causal path (at least)."""
MAX_CAUSAL_BLOCKS = 8
"""At most this many query blocks: each is a few more ops to compile and dispatch, and past ~8
the saving stops paying for them (2 CPU cores: 1023 tokens ran fastest in 8 blocks)."""


def head_major_attention(
    q: jax.Array,
    k: jax.Array,
    v: jax.Array,
    mask: jax.Array | None,
    is_causal: bool,
    scale: float,
    query_block: int = CAUSAL_QUERY_BLOCK,
) -> jax.Array:
    """Attention of ``q, k, v: [B, T, N, D]`` (K/V already repeated to N heads) with the numerics
    of ``jax.nn.dot_product_attention``'s XLA path, computed head-major.

    Used without a cache when no implementation is requested and the backend is CPU: transposing
    q/k/v to ``[B, N, T, D]`` once and running both dots in canonical batched form is ~10 % faster
    per train step on XLA:CPU than the XLA path, which transposes inside each dot and its
    gradients.  Elsewhere ``dot_product_attention`` is used so cuDNN / TPU kernels can be chosen.

    Causal attention over more than ``query_block`` queries runs in blocks of about that many
    query rows (at most ``MAX_CAUSAL_BLOCKS`` blocks), each against only the key prefix it can
    see: the fully masked upper-right blocks are never computed.  At 127 tokens (2 blocks) that
    is a quarter less work and ~25 % less time for attention forward + backward on 2 CPU cores,
    at 255 (4 blocks) ~35 %; a masked key contributes exactly zero either way, so only f32
    summation order differs.  The exception
    is a query row with every key masked (a padding query): it gets uniform weights over the keys
    of its block instead of over all keys, still finite, and it only feeds padding positions.
    """
    t, s = q.shape[1], k.shape[1]
    qh, kh, vh = (x.transpose(0, 2, 1, 3) for x in (q, k, v))
    n_blocks = min(MAX_CAUSAL_BLOCKS, math.ceil(t / query_block)) if is_causal and query_block > 0 else 1
    rows = math.ceil(t / n_blocks)
    outs = []
    for start in range(0, t, rows):
        stop = min(t, start + rows)
        keys = min(s, stop) if is_causal else s  # query i sees keys <= i (top-left aligned)
        scores = jnp.einsum(
            "bntd,bnsd->bnts", qh[:, :, start:stop], kh[:, :, :keys], preferred_element_type=jnp.float32
        )
        keep = None
        if is_causal:
            keep = (jnp.arange(start, stop)[:, None] >= jnp.arange(keys)[None, :])[None, None]
        if mask is not None:
            block_mask = mask[..., :keys] if mask.shape[2] == 1 else mask[:, :, start:stop, :keys]
            keep = block_mask if keep is None else keep & block_mask
        p = _attention_probs(scores, keep, scale, v.dtype)
        outs.append(jnp.einsum("bnts,bnsd->bntd", p, vh[:, :, :keys]))
    out = outs[0] if len(outs) == 1 else jnp.concatenate(outs, axis=2)
    return out.transpose(0, 2, 1, 3)


class MLP(nnx.Module):
    """SwiGLU: ``down(silu(gate(x)) * up(x))``; biases only for Granite with ``mlp_bias``."""

    def __init__(self, cfg: ModelConfig, *, rngs: nnx.Rngs) -> None:
        d, m, pd, std = cfg.hidden_size, cfg.intermediate_size, cfg.weight_dtype, cfg.initializer_range
        self.use_bias = cfg.mlp_bias
        self.gate_proj = _param(rngs, (m, d), ("mlp", "embed"), pd, "normal", std)
        self.up_proj = _param(rngs, (m, d), ("mlp", "embed"), pd, "normal", std)
        self.down_proj = _param(rngs, (d, m), ("embed", "mlp"), pd, "normal", std)
        if cfg.mlp_bias:
            self.gate_bias = _param(None, (m,), ("mlp",), pd, "zeros")
            self.up_bias = _param(None, (m,), ("mlp",), pd, "zeros")
            self.down_bias = _param(None, (d,), ("embed",), pd, "zeros")

    def __call__(self, x: jax.Array) -> jax.Array:
        dt = x.dtype
        gate = project(self, "gate_proj", x)
        up = project(self, "up_proj", x)
        if self.use_bias:
            gate = gate + self.gate_bias[...].astype(dt)
            up = up + self.up_bias[...].astype(dt)
        y = project(self, "down_proj", jax.nn.silu(gate) * up)
        if self.use_bias:
            y = y + self.down_bias[...].astype(dt)
        return y
