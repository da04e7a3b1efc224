"""Token selection from f32 logits: vocabulary masking, temperature, top-k / top-p, greedy.

Pure ``jnp`` functions, traced into the engine's prefill and decode programs. Everything is
per row: each row has its own temperature, top-k, top-p and PRNG key, so requests with
different sampling settings share one compiled program.

Two log-probs come back for every chosen token, because RL needs both:

* ``model_logprob``: ``log_softmax(logits)[tok]`` over the *unmodified* logits (f32, every row
  of the embedding table, no temperature). This is what a teacher-forced forward of the
  trainer reproduces, i.e. the old-policy log-prob of PPO/GRPO ratios.
* ``sample_logprob``: the log-prob under the distribution the token was actually drawn from
  (padded vocabulary masked, divided by the temperature, truncated by top-k/top-p and
  renormalised; 0 for greedy rows, a point mass). This is the behaviour policy, needed for
  an exact importance correction when sampling is not plain ``T = 1``.

Sampling uses the Gumbel-max trick with a key derived from ``(seed, stream, index)`` alone, so a
row's draws do not depend on which slot it occupies or on what the other rows are doing.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

NEG_INF = -jnp.inf


def mask_vocab(logits: jax.Array, vocab_limit: int) -> jax.Array:
    """Forbid ids ``>= vocab_limit``: embedding tables are padded past the tokenizer (Qwen3:
    151936 rows for 151669 ids), and a padded id has no text and would corrupt the transcript."""
    if vocab_limit >= logits.shape[-1]:
        return logits
    ids = jnp.arange(logits.shape[-1], dtype=jnp.int32)
    return jnp.where(ids < vocab_limit, logits, NEG_INF)


TOP_CANDIDATES = 256
"""Ranks examined by the fast top-k/top-p path; rows whose nucleus is wider use a full sort."""


def _truncate(scaled: jax.Array, top_k: jax.Array, top_p: jax.Array) -> jax.Array:
    """Mask ``scaled [B, V]`` outside each row's top-k and top-p nucleus (at least one id kept).

    The threshold is the smallest kept value in sorted order; ties with it are kept too, which
    keeps the rule a pure function of the logits (no dependence on sort stability).

    Sorting the whole vocabulary is slow (16 x 151,936 on CPU: 236 ms), and the kept set is
    almost always small, so the ranks come from ``lax.top_k`` over ``TOP_CANDIDATES`` values
    with probabilities normalised over the full row; only when some row's nucleus may extend
    past those candidates does the step fall back to the full sort (same rule, exact).
    """
    v = scaled.shape[-1]
    cands = min(TOP_CANDIDATES, v)
    k = jnp.where(top_k > 0, top_k, v)[:, None]

    def threshold(srt: jax.Array, lse: jax.Array) -> tuple[jax.Array, jax.Array]:
        probs = jnp.exp(srt - lse[:, None])
        before = jnp.cumsum(probs, axis=-1) - probs  # mass strictly above each rank
        rank = jnp.arange(srt.shape[-1], dtype=jnp.int32)[None, :]
        keep = (rank < k) & ((before < top_p[:, None]) | (rank == 0))
        n_keep = jnp.sum(keep, axis=-1)
        return jnp.take_along_axis(srt, (n_keep - 1)[:, None], axis=-1), n_keep

    lse = jax.nn.logsumexp(scaled, axis=-1)
    thr, n_keep = threshold(jax.lax.top_k(scaled, cands)[0], lse)
    # the candidates decide every row unless some row kept all of them and could keep more
    undecided = jnp.any((n_keep >= cands) & (k[:, 0] > cands))
    thr = jax.lax.cond(
        undecided, lambda: threshold(jnp.sort(scaled, axis=-1, descending=True), lse)[0], lambda: thr
    )
    return jnp.where(scaled >= thr, scaled, NEG_INF)


def row_keys(seed: jax.Array, stream: jax.Array, index: jax.Array) -> jax.Array:
    """One key per row from ``(seed, stream, index)`` (uint32/int32 ``[B]`` each)."""

    def one(s: jax.Array, st: jax.Array, i: jax.Array) -> jax.Array:
        return jax.random.fold_in(jax.random.fold_in(jax.random.key(s), st), i)

    return jax.vmap(one)(seed, stream, index)


def first_argmax(x: jax.Array) -> jax.Array:
    """``argmax`` over the last axis (lowest index among ties), as max + min-of-matching-index.

    Same result as ``jnp.argmax`` for finite inputs, but two plain reductions instead of XLA's
    variadic (value, index) reduce, which XLA:CPU runs 3-4x slower (16 x 152k: 1.0 vs 4.0 ms).
    A row without a match (NaN) yields index 0, never an out-of-range id.
    """
    v = x.shape[-1]
    ids = jnp.arange(v, dtype=jnp.int32)
    hit = x == jnp.max(x, axis=-1, keepdims=True)
    first = jnp.min(jnp.where(hit, ids, v), axis=-1)
    return jnp.where(first < v, first, 0).astype(jnp.int32)


def select(
    logits: jax.Array,
    keys: jax.Array,
    temperature: jax.Array,
    top_k: jax.Array,
    top_p: jax.Array,
    vocab_limit: int,
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Pick one token per row of ``logits [B, V]`` (f32).

    Returns ``(tokens int32 [B], sample_logprob f32 [B], model_logprob f32 [B])``; see the
    module docstring for the two log-probs. Rows with ``temperature == 0`` are greedy. The
    sampling half (noise, truncation, its log-normaliser) only runs when some row samples, and
    log-probs are ``logit - logsumexp`` of the chosen id (no ``[B, V]`` log-softmax).
    """
    logits = logits.astype(jnp.float32)
    masked = mask_vocab(logits, vocab_limit)
    greedy = temperature <= 0.0
    greedy_tok = first_argmax(masked)
    take = lambda a, t: jnp.take_along_axis(a, t[:, None], axis=-1)[:, 0]  # noqa: E731

    def sample(_: None) -> tuple[jax.Array, jax.Array]:
        safe_t = jnp.where(greedy, 1.0, temperature)
        scaled = masked / safe_t[:, None]
        need_trunc = jnp.any(~greedy & ((top_k > 0) | (top_p < 1.0)))
        scaled = jax.lax.cond(need_trunc, _truncate, lambda s, k, p: s, scaled, top_k, top_p)
        gumbel = jax.vmap(lambda k: jax.random.gumbel(k, (logits.shape[-1],), jnp.float32))(keys)
        tok = jnp.where(greedy, greedy_tok, first_argmax(scaled + gumbel))
        lp = take(scaled, tok) - jax.nn.logsumexp(scaled, axis=-1)
        return tok, jnp.where(greedy, 0.0, lp)

    def all_greedy(_: None) -> tuple[jax.Array, jax.Array]:
        return greedy_tok, jnp.zeros(greedy_tok.shape, jnp.float32)

    tokens, sample_lp = jax.lax.cond(jnp.any(~greedy), sample, all_greedy, None)
    model_lp = take(logits, tokens) - jax.nn.logsumexp(logits, axis=-1)
    return tokens, sample_lp, model_lp
