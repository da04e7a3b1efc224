"""Per-token log-probs of chosen ids, straight from final hidden states (fused head + log-softmax).

RL and SFT losses only ever need ``log p(target_t)`` for one id per position, never the
``[tokens, vocab]`` log-softmax.  Going through full logits costs, per step, a ``[N, V]`` f32
logits buffer, its log-softmax, a zero-filled ``[N, V]`` cotangent scattered at the targets and
its sum with the softmax term; at Qwen's V = 151,936 and N = 16k tokens the logits alone are
10 GB.  :func:`token_logprobs` computes the same numbers with a custom VJP:

* forward, per chunk of tokens: logits (f32 accumulation), ``logsumexp`` and the target logit;
  only the ``[N]`` normaliser is kept for the backward pass;
* backward, per chunk: logits recomputed, the softmax part of ``dlogits = (onehot - softmax) * g``
  formed in one fused elementwise pass, ``dh = dlogits @ W`` and ``dW += dlogits^T h``; the
  one-hot part is a row gather of ``W`` and a scatter-add of ``g * h`` (one entry per token).

Peak memory is one ``[chunk, V]`` block instead of several ``[N, V]`` buffers, and on the tiny CPU
model the train step is ~5-10 % faster than differentiating ``log_softmax`` + ``take_along_axis``
(``benchmarks/bench_models.py`` prints both; at 16 x 128 tokens, ~40 %).  Values and gradients
equal the plain path to f32 rounding (``tests/models/test_logprobs.py``).  ``temperature`` divides the logits (the sampling
distribution of a rollout at ``T != 1``); Granite's ``logits_scaling`` is folded in the same way.
"""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp

from prove_jax.models.decoder import Model

DEFAULT_CHUNK_TOKENS = 4096


def token_logprobs(
    model: Model,
    hidden: jax.Array,
    targets: jax.Array,
    *,
    temperature: float = 1.0,
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
) -> jax.Array:
    """``log_softmax(model.logits(hidden) / temperature)[targets]`` as f32 ``[B, T]``.

    ``hidden``: final-norm hidden states ``[B, T, E]`` (``Model.hidden_states``); ``targets``: int
    ``[B, T]``.  Differentiable w.r.t. ``hidden`` and the head weights (tied embedding or
    ``lm_head``), memory O(chunk x vocab).
    """
    cfg = model.config
    w = model.embed_tokens[...] if cfg.tie_word_embeddings else model.lm_head[...]
    scale = 1.0 / (float(cfg.logits_scaling) * float(temperature))
    return fused_logprobs(hidden, w, targets.astype(jnp.int32), scale, chunk_tokens)


def sequence_logprobs(
    model: Model,
    tokens: jax.Array,
    positions: jax.Array,
    attention_mask: jax.Array | None = None,
    *,
    temperature: float = 1.0,
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
) -> jax.Array:
    """Teacher-forced ``log p(tokens[:, t+1] | tokens[:, :t+1])`` as f32 ``[B, T-1]``.

    The forward runs over all ``T`` tokens and drops the last hidden state (causal attention: it
    changes no earlier position), so attention sees the length bucket itself: ``T - 1`` tokens
    fit no kernel tile (splash's blocks, cuDNN's multiple of 64)."""
    h, _ = model.hidden_states(tokens, positions, attention_mask=attention_mask)
    return token_logprobs(model, h[:, :-1], tokens[:, 1:], temperature=temperature, chunk_tokens=chunk_tokens)


def _chunks(rows: int, length: int, chunk_tokens: int) -> tuple[int, int]:
    """(tokens per row per chunk, number of chunks): chunks cut every row's tokens, about
    ``chunk_tokens`` tokens in all per chunk (of the whole batch); the last one zero-padded."""
    size = max(1, min(length, int(chunk_tokens) // max(1, rows)))
    return size, math.ceil(length / size)


def _chunk_forward(h: jax.Array, w: jax.Array, scale: float) -> tuple[jax.Array, jax.Array]:
    """Scaled f32 logits ``[n, V]`` of one chunk's ``n`` tokens and their log-normaliser ``[n]``."""
    logits = jnp.einsum("ne,ve->nv", h, w.astype(h.dtype), preferred_element_type=jnp.float32) * scale
    return logits, jax.nn.logsumexp(logits, axis=-1)


def _split(x: jax.Array, size: int, count: int) -> jax.Array:
    """``[B, T, ...] -> [count, B, size, ...]`` (T zero-padded to ``count * size``)."""
    pad = size * count - x.shape[1]
    if pad:
        x = jnp.pad(x, [(0, 0), (0, pad)] + [(0, 0)] * (x.ndim - 2))
    return jnp.moveaxis(x.reshape(x.shape[0], count, size, *x.shape[2:]), 1, 0)


def _join(x: jax.Array, length: int) -> jax.Array:
    """Inverse of :func:`_split`: ``[count, B, size, ...] -> [B, length, ...]``."""
    x = jnp.moveaxis(x, 0, 1)
    return x.reshape(x.shape[0], -1, *x.shape[3:])[:, :length]


def _as_rows(h: jax.Array, targets: jax.Array) -> tuple[jax.Array, jax.Array, bool]:
    if h.ndim == 2:  # [N, E]: one row of N tokens
        return h[None], targets[None], True
    return h, targets, False


@partial(jax.custom_vjp, nondiff_argnums=(3, 4))
def fused_logprobs(h: jax.Array, w: jax.Array, targets: jax.Array, scale: float, chunk_tokens: int) -> jax.Array:
    """``log_softmax(scale * h @ w.T)[targets]`` for ``h [B, T, E]`` (or ``[N, E]``), ``w [V, E]``,
    ``targets [B, T]`` (or ``[N]``).

    Chunks cut the token axis of every row, never the rows: the batch axis stays sharded the way
    the caller sharded it (data x fsdp), so each device projects only its own rows onto the
    vocabulary. Flattening rows and tokens into one axis and chunking that made XLA all-gather
    the hidden states of the whole micro-batch to every device and repeat the head on each
    (measured: the 8B accumulate at 32 x 32k tokens would not compile on a 16-chip v5p).
    """
    return _fused_fwd(h, w, targets, scale, chunk_tokens)[0]


def _fused_fwd(
    h: jax.Array, w: jax.Array, targets: jax.Array, scale: float, chunk_tokens: int
) -> tuple[jax.Array, tuple[jax.Array, ...]]:
    h3, t3, flat = _as_rows(h, targets)
    b, n = t3.shape
    size, count = _chunks(b, n, chunk_tokens)

    def one(hc: jax.Array, tc: jax.Array) -> tuple[jax.Array, jax.Array]:
        # [B, c] -> [B * c] inside a chunk keeps the rows' sharding (rows are the major axis) and
        # gives XLA plain 2-D matmuls (a batched [B, c, V] form was 1.7x slower on CPU)
        logits, lse = _chunk_forward(hc.reshape(-1, hc.shape[-1]), w, scale)
        lp = jnp.take_along_axis(logits, tc.reshape(-1, 1), axis=-1)[:, 0] - lse
        return lp.reshape(tc.shape), lse.reshape(tc.shape)

    if count == 1:
        lp, lse = one(h3, t3)
    else:
        lp, lse = jax.lax.map(lambda xs: one(*xs), (_split(h3, size, count), _split(t3, size, count)))
        lp, lse = _join(lp, n), _join(lse, n)
    out = lp[0] if flat else lp
    return out, (h, w, targets, lse)


def _fused_bwd(scale: float, chunk_tokens: int, res: tuple[jax.Array, ...], g: jax.Array) -> tuple[jax.Array, ...]:
    h, w, targets, lse = res
    h3, t3, flat = _as_rows(h, targets)
    g3 = g[None] if flat else g
    b, n = t3.shape
    size, count = _chunks(b, n, chunk_tokens)

    def one(hc: jax.Array, tc: jax.Array, lc: jax.Array, gc: jax.Array) -> tuple[jax.Array, jax.Array]:
        shape = hc.shape
        hc, tc, lc, gc = hc.reshape(-1, shape[-1]), tc.reshape(-1), lc.reshape(-1), gc.reshape(-1)
        logits, _ = _chunk_forward(hc, w, scale)
        gs = gc * scale  # the cotangent times the logit scale
        wc = w.astype(hc.dtype)
        # d logp[t] / d logits = onehot(t) - softmax.  The softmax term is one dense pass over
        # [n, V]; the one-hot term touches one logit per token, so it enters as a gather of W
        # rows (dh) and a scatter-add into dW instead of an [n, V] compare-and-select (which
        # cost more than the exp on CPU).  Matmul inputs in the compute dtype, f32 accumulation.
        dp = (jnp.exp(logits - lc[:, None]) * -gs[:, None]).astype(hc.dtype)
        dh = jnp.einsum("nv,ve->ne", dp, wc, preferred_element_type=jnp.float32)
        dh = dh + gs[:, None] * jnp.take(wc, tc, axis=0).astype(jnp.float32)
        dw = jnp.einsum("nv,ne->ve", dp, hc, preferred_element_type=jnp.float32)
        dw = dw.at[tc].add(gs[:, None] * hc.astype(jnp.float32))
        return dh.astype(h.dtype).reshape(shape), dw

    g3 = g3.astype(jnp.float32)
    if count == 1:
        dh, dw = one(h3, t3, lse, g3)  # lse is kept per row: [B, T]
    else:

        def step(acc: jax.Array, xs: tuple[jax.Array, ...]) -> tuple[jax.Array, jax.Array]:
            dh_c, dw_c = one(*xs)
            return acc + dw_c, dh_c

        xs = tuple(_split(x, size, count) for x in (h3, t3, lse, g3))  # padded tokens have g = 0
        dw, dh = jax.lax.scan(step, jnp.zeros(w.shape, jnp.float32), xs)
        dh = _join(dh, n)
    return (dh[0] if flat else dh), dw.astype(w.dtype), None


fused_logprobs.defvjp(_fused_fwd, _fused_bwd)
