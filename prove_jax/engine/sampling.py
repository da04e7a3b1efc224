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

Sampling draws by inverse CDF with a key derived from ``(seed, stream, index)`` alone, so a row's
draws do not depend on which slot it occupies or on what the other rows are doing.
"""

from __future__ import annotations

from collections.abc import Sequence

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


MODES = ("greedy", "sample", "truncate")
"""What a program's rows need, decided on the host from their sampling settings (the scheduler
knows them all): ``greedy`` (every row at temperature 0), ``sample`` (some row samples, none
truncates) or ``truncate`` (some sampling row has top-k or top-p). One compiled variant each, so
no program asks the device which path to take: a ``lax.cond`` on a device predicate is a host
read-back on GPU at every step."""


def sampling_mode(temperature: Sequence[float], top_k: Sequence[int], top_p: Sequence[float]) -> str:
    """The least general mode that is exact for rows with these settings."""
    sampling = [i for i, t in enumerate(temperature) if t > 0]
    if not sampling:
        return "greedy"
    return "truncate" if any(top_k[i] > 0 or top_p[i] < 1.0 for i in sampling) else "sample"


def select(
    logits: jax.Array,
    keys: jax.Array,
    temperature: jax.Array,
    top_k: jax.Array,
    top_p: jax.Array,
    vocab_limit: int,
    mode: str = "truncate",
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Pick one token per row of ``logits [B, V]`` (f32).

    Returns ``(tokens int32 [B], sample_logprob f32 [B], model_logprob f32 [B])``; see the
    module docstring for the two log-probs. Rows with ``temperature == 0`` are greedy; ``mode``
    (:data:`MODES`, static) says what the other rows may need. Log-probs are ``logit -
    logsumexp`` of the chosen id (no ``[B, V]`` log-softmax).

    A sampling row draws by inverse CDF: one uniform ``u`` from its key, and the first id whose
    cumulative probability exceeds ``u``. Exact like the Gumbel-max trick, but one random number
    per row instead of one per vocabulary entry, so a cheaper PRNG (rbg) would buy nothing; keys
    still come from ``(seed, stream, index)`` alone. Greedy rows are computed and discarded by a select.
    """
    if mode not in MODES:
        raise ValueError(f"sampling mode must be one of {MODES}, got {mode!r}")
    logits = logits.astype(jnp.float32)
    masked = mask_vocab(logits, vocab_limit)
    greedy = temperature <= 0.0
    tokens = first_argmax(masked)
    take = lambda a, t: jnp.take_along_axis(a, t[:, None], axis=-1)[:, 0]  # noqa: E731
    sample_lp = jnp.zeros(tokens.shape, jnp.float32)
    if mode != "greedy":
        safe_t = jnp.where(greedy, 1.0, temperature)
        scaled = masked / safe_t[:, None]
        if mode == "truncate":
            scaled = _truncate(scaled, top_k, top_p)
        lse = jax.nn.logsumexp(scaled, axis=-1)
        cdf = jnp.cumsum(jnp.exp(scaled - lse[:, None]), axis=-1)
        u = jax.vmap(lambda k: jax.random.uniform(k, (), jnp.float32))(keys)
        drawn = jnp.sum(cdf <= (u * cdf[:, -1])[:, None], axis=-1).astype(jnp.int32)
        drawn = jnp.minimum(drawn, logits.shape[-1] - 1)
        tokens = jnp.where(greedy, tokens, drawn)
        sample_lp = jnp.where(greedy, 0.0, take(scaled, tokens) - lse)
    model_lp = take(logits, tokens) - jax.nn.logsumexp(logits, axis=-1)
    return tokens, sample_lp, model_lp
