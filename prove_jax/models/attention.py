"""Attention without a KV cache (training, scoring, reference log-probs): one entry point,
:func:`attend`, and the kernel it dispatches to (``ModelConfig.attention_impl`` /
``model.attention_impl`` in a launch config).

Why there is a choice at all: ``jax.nn.dot_product_attention``'s XLA path materialises the
``[B, heads, T, T]`` f32 scores and probabilities, and keeps them for the backward pass.  For a
Qwen3-8B layer at 16k tokens that is tens of GiB per chip on TPU v5p, while JAX's own Pallas
splash-attention kernel (blockwise online softmax, only a log-sum-exp per query kept) needs well
under 1 GiB.  On GPU cuDNN's fused kernel does the same job.  On CPU the einsum form in
``layers.head_major_attention`` is fastest and is what the tiny CPU runs have always used, so
the CPU default stays numerically identical.

Implementations (``impl``):

* ``"xla"``: ``jax.nn.dot_product_attention(implementation="xla")`` with K/V repeated to the query
  heads (cheaper there than its GQA vmap over query groups).
* ``"cudnn"``: ``jax.nn.dot_product_attention(implementation="cudnn")``, native GQA; CUDA only.
* ``"splash"``: the Pallas TPU splash kernel (:func:`splash_attention`); under a mesh it runs per
  device in ``jax.shard_map`` (batch over the ``batch`` rule, heads over ``act_heads``).  Off TPU
  it runs in Pallas interpret mode: correct but slow, for tests.
* ``"head_major"``: ``layers.head_major_attention`` (the CPU path).
* ``None`` (auto): CPU -> head_major, TPU -> splash, GPU -> cudnn for bf16/fp16 with a head dim
  cuDNN's flash kernel takes, else xla.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as splash
from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask as splash_mask
from jax.sharding import Mesh, PartitionSpec

from prove_jax.models.config import ATTENTION_IMPLS
from prove_jax.models.sharding import DEFAULT_RULES, Rules, logical_to_spec

IMPLS: tuple[str, ...] = ATTENTION_IMPLS
"""Accepted values of ``attention_impl`` besides None (auto)."""

SPLASH_MAX_BLOCK = 512
"""Largest splash tile (query and key blocks): MaxText's default; 128 is the lane-width minimum."""
_LANES = 128


def _backend(mesh: Mesh | None = None) -> str:
    """The platform attention will run on: the mesh's devices (a TPU topology can be compiled
    for from a CPU process), else the default backend.  One function so tests can fake a GPU."""
    if mesh is not None:
        return str(mesh.devices.flat[0].platform)
    return jax.default_backend()


def _cudnn_max_head_dim() -> int:
    """cuDNN flash attention takes head dims up to 256 on Hopper and later, 128 before."""
    try:
        cc = getattr(jax.devices()[0], "compute_capability", "0.0")
        return 256 if tuple(int(x) for x in str(cc).split(".")[:2]) >= (9, 0) else 128
    except (ValueError, RuntimeError):
        return 128


CUDNN_SEQ_MULTIPLE = 64
"""cuDNN's flash attention trains (has a backward) only on sequence lengths that are multiples of 64
(``check_is_flash_attention``, found on an H200 with a 6,143-token forward); auto falls back to XLA."""


def resolve_impl(impl: str | None, backend: str, dtype: jnp.dtype, head_dim: int, seq_len: int | None = None) -> str:
    """The implementation ``impl`` means on ``backend`` (None = auto, see the module docstring).

    Forcing ``"cudnn"`` off a GPU fails here, naming the knob, rather than as an XLA lowering
    error deep inside a jitted train step."""
    if impl is not None and impl not in IMPLS:
        raise ValueError(f"attention_impl must be one of {IMPLS} or None (auto), got {impl!r}")
    if impl == "cudnn" and backend not in ("gpu", "cuda"):
        raise ValueError(
            f"attention_impl='cudnn' (model.attention_impl) needs a CUDA GPU, but attention runs on "
            f"{backend!r}; use 'splash' on TPU, 'head_major' or 'xla' on CPU, or null for automatic"
        )
    if impl is not None:
        return impl
    if backend == "cpu":
        return "head_major"
    if backend == "tpu":
        return "splash"
    if backend in ("gpu", "cuda"):
        half = jnp.dtype(dtype) in (jnp.dtype(jnp.bfloat16), jnp.dtype(jnp.float16))
        aligned = seq_len is None or seq_len % CUDNN_SEQ_MULTIPLE == 0
        if half and aligned and head_dim % 8 == 0 and head_dim <= _cudnn_max_head_dim():
            return "cudnn"
    return "xla"


def choose_impl(impl: str | None, q: jax.Array, mesh: Mesh | None = None) -> str:
    """What :func:`attend` will run for queries like ``q`` on ``mesh`` (or the default backend)."""
    return resolve_impl(impl, _backend(mesh), q.dtype, q.shape[-1], q.shape[1])


def _repeat_kv(q: jax.Array, k: jax.Array, v: jax.Array) -> tuple[jax.Array, jax.Array]:
    """K/V repeated to the query heads (query head ``i`` uses KV head ``i // groups``)."""
    groups = q.shape[2] // k.shape[2]
    if groups == 1:
        return k, v
    return jnp.repeat(k, groups, axis=2), jnp.repeat(v, groups, axis=2)


def attend(
    q: jax.Array,
    k: jax.Array,
    v: jax.Array,
    mask: jax.Array | None,
    is_causal: bool,
    scale: float,
    impl: str | None = None,
    mesh: Mesh | None = None,
    rules: Rules = DEFAULT_RULES,
    *,
    interpret: bool | None = None,
    max_block: int = SPLASH_MAX_BLOCK,
) -> jax.Array:
    """Self-attention of ``q: [B, T, N, D]`` over ``k, v: [B, T, KV, D]`` (not repeated; ``N`` a
    multiple of ``KV``, query head ``i`` reading KV head ``i // (N // KV)``) -> ``[B, T, N, D]``.

    ``mask``: optional bool, True = attend; ``[B, 1, 1, T]`` key padding (what the model passes)
    or, except for splash, ``[B, 1, T, T]``.  ``scale`` multiplies q·k.  ``impl``: see the module
    docstring.  ``mesh``/``rules`` place the splash kernel's ``shard_map`` (the XLA paths are
    partitioned by XLA itself).  ``interpret`` forces Pallas interpret mode for splash (default:
    off on TPU, on elsewhere); ``max_block`` caps its tile size.

    Rows of padding queries are finite everywhere but defined differently (splash: the padding
    keys up to them; XLA / head-major: the real keys they see, or uniform weights when they see
    none); they only ever feed padding positions, whose loss weight is zero.
    """
    chosen = choose_impl(impl, q, mesh)
    if chosen == "cudnn":
        return jax.nn.dot_product_attention(q, k, v, mask=mask, scale=scale, is_causal=is_causal,
                                            implementation="cudnn")
    if chosen == "splash":
        if interpret is None:
            interpret = _backend(mesh) != "tpu"
        return splash_attention(q, k, v, mask, is_causal, scale, mesh, rules, interpret=interpret,
                                max_block=max_block)
    k, v = _repeat_kv(q, k, v)
    if chosen == "head_major":
        # imported here, not at the top: layers imports this module for Attention
        from prove_jax.models.layers import head_major_attention

        return head_major_attention(q, k, v, mask, is_causal, scale)
    return jax.nn.dot_product_attention(q, k, v, mask=mask, scale=scale, is_causal=is_causal, implementation="xla")


# --- splash -------------------------------------------------------------------------------------


def splash_block(t: int, max_block: int = SPLASH_MAX_BLOCK) -> tuple[int, int]:
    """``(block, padded_t)``: the sequence is padded to a multiple of 128 (the kernel's lane width)
    and the tile is the largest power-of-two multiple of 128, at most ``max_block``, dividing it."""
    padded = math.ceil(t / _LANES) * _LANES
    block = _LANES
    while block * 2 <= max_block and padded % (block * 2) == 0:
        block *= 2
    return block, padded


def _splash_kernel(heads: int, t: int, block: int, is_causal: bool, interpret: bool) -> splash.SplashAttentionKernel:
    """The per-device kernel for ``heads`` query heads over ``t`` tokens: built at trace time from
    a lazy mask (its block maps are cached by the Pallas ops), so no mask array is stored."""
    base = splash_mask.CausalMask((t, t)) if is_causal else splash_mask.FullMask((t, t))
    sizes = splash.BlockSizes(
        block_q=block, block_kv=block, block_kv_compute=block,
        block_q_dkv=block, block_kv_dkv=block, block_kv_dkv_compute=block,
        block_q_dq=block, block_kv_dq=block,
    )
    return splash.make_splash_mha(splash_mask.MultiHeadMask((base,) * heads), block_sizes=sizes, head_shards=1,
                                  q_seq_shards=1, interpret=interpret)


def _splash_local(
    q: jax.Array, k: jax.Array, v: jax.Array, segments: jax.Array | None, *, block: int, is_causal: bool,
    interpret: bool,
) -> jax.Array:
    """One device's share: ``[b, T, n, D]`` q and ``[b, T, kv, D]`` k/v in, ``[b, T, n, D]`` out.

    The MHA kernel groups query heads per KV head itself (query head ``h`` reads KV head
    ``h // (n // kv)``, the ``jnp.repeat`` order), as MaxText uses it: K/V are never repeated."""
    qh, kh, vh = (x.transpose(0, 2, 1, 3) for x in (q, k, v))
    kernel = _splash_kernel(qh.shape[1], qh.shape[2], block, is_causal, interpret)

    def one(a: jax.Array, b: jax.Array, c: jax.Array, s: jax.Array | None) -> jax.Array:
        out = kernel(a, b, c, segment_ids=None if s is None else splash.SegmentIds(q=s, kv=s))
        assert isinstance(out, jax.Array)  # no residuals asked for
        return out

    return jax.vmap(one)(qh, kh, vh, segments).transpose(0, 2, 1, 3)


def splash_attention(
    q: jax.Array,
    k: jax.Array,
    v: jax.Array,
    mask: jax.Array | None,
    is_causal: bool,
    scale: float,
    mesh: Mesh | None = None,
    rules: Rules = DEFAULT_RULES,
    *,
    interpret: bool = False,
    max_block: int = SPLASH_MAX_BLOCK,
) -> jax.Array:
    """:func:`attend` through the Pallas splash kernel (shapes as there; ``mask`` key padding only).

    * The kernel takes no softmax scale: q is multiplied by ``scale`` in f32 and cast back to its
      dtype (for bf16 that is one extra rounding of q, well inside bf16 tolerance).
    * Key padding becomes segment ids (1 = real token, 0 = padding) on both queries and keys, so
      real queries never see padding keys.  A padding query then sees the padding keys up to
      itself (never an empty row, which the kernel cannot take), where the XLA path would give it
      the real keys or uniform weights: such rows only feed padding positions.
    * The sequence is padded to a tile multiple; causal attention hides the appended keys from
      every real query, otherwise they get segment id 0 too.
    * With a mesh the kernel runs per device under ``jax.shard_map``: batch as the ``batch`` rule
      says, heads as ``act_heads`` says (decided on the KV head count so every device holds whole
      query groups), the sequence never split (each kernel needs whole sequences).
    """
    b, t = q.shape[:2]
    if mask is not None and (mask.ndim != 4 or mask.shape[1] != 1 or mask.shape[2] != 1 or mask.shape[0] != b):
        raise ValueError(f"splash attention takes a key-padding mask [B, 1, 1, T], got {mask.shape}")
    block, padded = splash_block(t, max_block)
    q = (q.astype(jnp.float32) * jnp.float32(scale)).astype(q.dtype)
    segments = None if mask is None else mask[:, 0, 0, :].astype(jnp.int32)
    if padded != t:
        widths = ((0, 0), (0, padded - t), (0, 0), (0, 0))
        q, k, v = (jnp.pad(x, widths) for x in (q, k, v))
        if segments is None and not is_causal:
            segments = jnp.ones((b, t), jnp.int32)
        if segments is not None:
            segments = jnp.pad(segments, ((0, 0), (0, padded - t)))
    local = functools.partial(_splash_local, block=block, is_causal=is_causal, interpret=interpret)
    if mesh is None:
        out = local(q, k, v, segments)
    else:
        # ("batch", "seq", "act_heads", None) with the sequence left whole: a sequence rule must
        # not claim a mesh axis here, the kernel sees whole sequences.
        parts = tuple(logical_to_spec(("batch", None, "act_heads", None), rules, k.shape, mesh))
        batch_axes, head_axes = (parts + (None,) * 4)[0], (parts + (None,) * 4)[2]
        qkv_spec = PartitionSpec(batch_axes, None, head_axes, None)
        seg_spec = PartitionSpec(batch_axes, None)
        if segments is None:
            out = jax.shard_map(lambda a, b_, c: local(a, b_, c, None), mesh=mesh, in_specs=(qkv_spec,) * 3,
                                out_specs=qkv_spec, check_vma=False)(q, k, v)
        else:
            out = jax.shard_map(local, mesh=mesh, in_specs=(qkv_spec,) * 3 + (seg_spec,), out_specs=qkv_spec,
                                check_vma=False)(q, k, v, segments)
    return out[:, :t] if padded != t else out
