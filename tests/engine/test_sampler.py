"""The sampler and the continuous-batching engine on one CPU device (tiny random Qwen3, f32)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from prove_jax.engine import GREEDY, Engine, EngineConfig, Generation, Sampler, SamplingConfig, select
from prove_jax.engine.sampler import compiled_program_count
from prove_jax.engine.sampling import TOP_CANDIDATES, _truncate, first_argmax
from tests.engine import engine_testlib as lib
from tests.engine.conftest import ENGINE

LP_TOL = 1e-4  # f32 log-probs: cached/chunked vs one full forward


def run(sampler: Sampler, prompts: Sequence[Sequence[int]], sampling: SamplingConfig,
        seeds: Sequence[int] | None = None) -> tuple[list[Generation], Engine]:
    async def go() -> tuple[list[Generation], Engine]:
        async with Engine(sampler, sampler.config, sampling=sampling) as eng:
            return await eng.generate(prompts, seeds=seeds), eng

    return asyncio.run(go())


def prompts_of(lengths: Sequence[int], limit: int, seed: int = 0) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    return [[int(x) for x in rng.integers(0, limit, n)] for n in lengths]


def test_engine_config_buckets() -> None:
    cfg = EngineConfig(slots=2, max_len=100, min_chunk=16, max_chunk=64)
    assert cfg.buckets == (16, 32, 64) and cfg.capacity == 164
    assert [cfg.bucket(n) for n in (1, 16, 17, 33, 64)] == [16, 16, 32, 64, 64]
    assert cfg.split(150) == [64, 64, 22] and cfg.split(64) == [64] and cfg.split(0) == []
    with pytest.raises(ValueError, match="power of two"):
        EngineConfig(min_chunk=24)
    with pytest.raises(ValueError, match="top_p"):
        SamplingConfig(top_p=0.0)


def test_greedy_equals_argmax_of_uncached_forward(sampler: Sampler, model, special) -> None:
    """Each greedy token is the argmax (over real vocabulary ids) of a full cache-less forward
    over everything before it — the forward is causal, so one forward over the final sequence
    gives every step's uncached prediction — and its model log-prob matches to 1e-4."""
    limit = special.vocab_size
    prompts = prompts_of([5, 37, 300, 600], limit)
    gens, eng = run(sampler, prompts, dataclasses.replace(GREEDY, max_new_tokens=24))
    for prompt, gen in zip(prompts, gens, strict=True):
        assert gen.finish == ("stop" if gen.ids[-1] in special.stop_ids else "length")
        assert len(gen.ids) == 24 or gen.finish == "stop"
        seq = prompt + gen.ids
        lp = lib.full_logprobs(model, seq[:-1], ENGINE.max_len)
        rows = lp[len(prompt) - 1 :]
        expect = np.argmax(np.where(np.arange(lp.shape[1]) < limit, rows, -np.inf), axis=-1)
        np.testing.assert_array_equal(gen.ids, expect)
        np.testing.assert_allclose(gen.logprobs, rows[np.arange(len(gen.ids)), gen.ids], atol=LP_TOL)
        assert gen.sample_logprobs == [0.0] * len(gen.ids)  # greedy: a point mass
    assert eng.stats.generated_tokens == sum(len(g.ids) for g in gens)
    assert eng.stats.decode_steps > 0 and 0.0 <= eng.stats.device_wait_fraction <= 1.0


def test_sampled_logprobs_and_padded_vocab(sampler: Sampler, model, special) -> None:
    """Top-k/temperature sampling: tokens come from the top-k of the real vocabulary, the sample
    log-prob is the renormalised truncated distribution's, and the model log-prob is untouched."""
    limit = special.vocab_size
    sp = SamplingConfig(temperature=0.7, top_k=5, max_new_tokens=16)
    prompts = prompts_of([9, 70], limit, seed=1)
    gens, _ = run(sampler, prompts, sp, seeds=[11, 12])
    again, _ = run(sampler, prompts, sp, seeds=[11, 12])
    other, _ = run(sampler, prompts, sp, seeds=[13, 14])
    assert [g.ids for g in gens] == [g.ids for g in again]
    assert [g.ids for g in gens] != [g.ids for g in other]
    for prompt, gen in zip(prompts, gens, strict=True):
        rows = lib.full_logprobs(model, (prompt + gen.ids)[:-1], ENGINE.max_len)[len(prompt) - 1 :]
        for j, tok in enumerate(gen.ids):
            assert tok < limit
            scaled = np.where(np.arange(rows.shape[1]) < limit, rows[j], -np.inf) / 0.7
            top = np.argsort(-scaled)[:5]
            assert tok in top
            trunc = scaled[top] - np.logaddexp.reduce(scaled[top])
            assert abs(gen.sample_logprobs[j] - trunc[list(top).index(tok)]) <= LP_TOL
            assert abs(gen.logprobs[j] - rows[j, tok]) <= LP_TOL


def test_select_masks_padded_vocab() -> None:
    """Unit check of token selection: padded ids (>= vocab_limit) with huge logits are never
    picked, greedy or sampled; the model log-prob still reports the unmasked distribution."""
    v, limit = 12, 8
    logits = jnp.tile(jnp.linspace(0.0, 1.0, v)[None, :], (4, 1)).at[:, limit:].add(100.0)
    keys = jax.vmap(jax.random.key)(jnp.arange(4, dtype=jnp.uint32))
    temperature = jnp.array([0.0, 1.0, 1.0, 2.0])
    top_k = jnp.array([0, 0, 3, 0], jnp.int32)
    top_p = jnp.array([1.0, 1.0, 1.0, 0.5])
    tok, slp, mlp = jax.jit(select, static_argnums=5)(logits, keys, temperature, top_k, top_p, limit)
    tok, slp, mlp = np.asarray(tok), np.asarray(slp), np.asarray(mlp)
    assert tok[0] == limit - 1 and slp[0] == 0.0  # greedy: best real id, point mass
    assert (tok < limit).all() and (mlp < -90).all()
    real = np.linspace(0.0, 1.0, v)[:limit]
    full = real - np.logaddexp.reduce(real)
    np.testing.assert_allclose(slp[1], full[tok[1]], atol=1e-5)  # T=1, no truncation
    top3 = real[-3:] - np.logaddexp.reduce(real[-3:])
    assert tok[2] >= limit - 3
    np.testing.assert_allclose(slp[2], top3[tok[2] - (limit - 3)], atol=1e-5)


def test_first_argmax_matches_argmax_including_ties() -> None:
    """The two-reduction argmax picks the same (lowest) index as numpy, ties and -inf included."""
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, (64, 37)).astype(np.float32)  # many ties per row
    x[3] = -np.inf
    x[5, :10] = np.inf
    np.testing.assert_array_equal(np.asarray(jax.jit(first_argmax)(x)), np.argmax(x, axis=-1))
    assert int(first_argmax(jnp.full((1, 5), jnp.nan))[0]) == 0  # never an out-of-range id


def _truncate_reference(x: np.ndarray, top_k: int, top_p: float) -> np.ndarray:
    """The truncation rule with a full numpy sort: keep ranks < k whose preceding mass < top_p
    (rank 0 always), then every value >= the smallest kept one."""
    srt = np.sort(x)[::-1].astype(np.float64)
    probs = np.exp(srt - np.logaddexp.reduce(srt))
    before = np.cumsum(probs) - probs
    k = top_k if top_k > 0 else len(x)
    keep = (np.arange(len(x)) < k) & ((before < top_p) | (np.arange(len(x)) == 0))
    return x >= srt[keep.sum() - 1]


@pytest.mark.parametrize("flat", [False, True])
def test_fast_truncation_matches_full_sort(flat: bool) -> None:
    """The top-candidates path and its full-sort fallback keep exactly the ids of the rule, for
    peaked rows (decided among the candidates) and flat ones (nucleus wider than them)."""
    rng = np.random.default_rng(5)
    v = 1000
    scale = 0.05 if flat else 3.0
    x = (rng.standard_normal((6, v)) * scale).astype(np.float32)
    top_k = np.array([0, 5, 0, 300, 0, 1], np.int32)
    top_p = np.array([0.9, 1.0, 0.5, 0.99, 0.999, 0.3], np.float32)
    out = np.asarray(jax.jit(_truncate)(jnp.asarray(x), jnp.asarray(top_k), jnp.asarray(top_p)))
    kept = np.isfinite(out)
    for r in range(len(x)):
        want = _truncate_reference(x[r], int(top_k[r]), float(top_p[r]))
        np.testing.assert_array_equal(kept[r], want, err_msg=f"row {r}")
    if flat:
        assert kept[4].sum() > TOP_CANDIDATES  # the fallback really ran for this row


def test_padded_vocab_rows_are_never_sampled(sampler: Sampler, special) -> None:
    """At T=5 the distribution is nearly flat over all 1088 rows; without the mask ~6% of draws
    would be padded ids (over 200 draws that is certain), with it none is."""
    gens, _ = run(sampler, prompts_of([12, 40, 5, 90], special.vocab_size, seed=2),
                  SamplingConfig(temperature=5.0, max_new_tokens=50))
    ids = [t for g in gens for t in g.ids]
    assert len(ids) >= 150 and max(ids) < special.vocab_size
    assert len(set(ids)) > 50  # really spread out, so the check above means something


def test_refill_does_not_change_rows(sampler: Sampler, special) -> None:
    """7 prompts through 4 slots (rows finish at different times and slots are refilled) give
    exactly what each prompt gives alone, for the same seed."""
    sp = SamplingConfig(temperature=0.9, top_p=0.9, top_k=40, max_new_tokens=30)
    prompts = prompts_of([3, 120, 17, 300, 45, 8, 260], special.vocab_size, seed=3)
    prompts_caps = [dataclasses.replace(sp, max_new_tokens=m) for m in (30, 7, 19, 30, 3, 25, 11)]

    async def together() -> list[Generation]:
        async with Engine(sampler, sampler.config, sampling=sp) as eng:
            async def one(i: int) -> Generation:
                async with eng.session(100 + i) as sess:
                    return await sess.generate(prompts[i], prompts_caps[i])

            out = await asyncio.gather(*(one(i) for i in range(len(prompts))))
            assert eng.stats.turns == len(prompts)
            return list(out)

    async def alone(i: int) -> Generation:
        async with Engine(sampler, sampler.config, sampling=sp) as eng, \
                eng.session(100 + i) as sess:
            return await sess.generate(prompts[i], prompts_caps[i])

    batched = asyncio.run(together())
    for i, gen in enumerate(batched):
        solo = asyncio.run(alone(i))
        assert gen.ids == solo.ids and gen.logprobs == solo.logprobs
        assert gen.sample_logprobs == solo.sample_logprobs and gen.finish == solo.finish
        cap = prompts_caps[i].max_new_tokens  # each row runs to its own cap (or samples a stop id)
        assert (len(gen.ids) == cap and gen.finish == "length") or (
            gen.finish == "stop" and len(gen.ids) <= cap and gen.ids[-1] in special.stop_ids)
    assert sum(g.finish == "length" for g in batched) >= 4, "rows must end at different times"


def test_group_prompt_is_prefilled_once(sampler: Sampler, special) -> None:
    """A GRPO group (one prompt, several seeds) arriving together: the prompt's whole chunks are
    prefilled once and copied on device to the other rows (a prompt that diverges mid-chunk
    shares the chunks before it); every sample equals its own run from scratch, ids and
    log-probs."""
    sp = SamplingConfig(temperature=1.0, max_new_tokens=12)
    limit = special.vocab_size
    base = prompts_of([600], limit, seed=21)[0]  # two full 256-token chunks + 88
    variant = base[:300] + prompts_of([100], limit, seed=22)[0]  # shares one full chunk
    prompts, seeds = [base, base, base, variant], [1, 2, 3, 4]
    gens, eng = run(sampler, prompts, sp, seeds=seeds)
    assert eng.stats.prefix_copies == 3 and eng.stats.prefix_tokens == 512 + 512 + 256
    assert eng.stats.prefill_tokens == 600 + 88 + 88 + 144  # only the unshared tails prefilled
    assert len({tuple(g.ids) for g in gens[:3]}) > 1  # different seeds really sampled differently
    for prompt, seed, gen in zip(prompts, seeds, gens, strict=True):
        (alone,), solo = run(sampler, [prompt], sp, seeds=[seed])
        assert solo.stats.prefix_copies == 0
        assert alone.ids == gen.ids
        np.testing.assert_allclose(alone.logprobs, gen.logprobs, atol=1e-6)


def test_prefix_copy_falls_back_when_the_leader_moves_on(sampler: Sampler) -> None:
    """If the leader row no longer holds (or plans) the prefix when the copy would be made, the
    waiting row prefills the prefix itself: chunks in from-scratch order, no copy."""
    eng = Engine(sampler, sampler.config)
    chunk = sampler.config.max_chunk
    prefix, tail = list(range(2 * chunk)), [7, 8, 9]
    follower, leader = eng.slots[0], eng.slots[1]
    follower.copy_wait = (leader.index, prefix)
    follower.pending.append(tail)
    leader.fed = [5] * (2 * chunk)  # the leader's row was reused for another sequence
    eng._dispatch_copies()
    assert follower.copy_wait is None and follower.reset and eng.stats.prefix_copies == 0
    assert [len(c) for c in follower.pending] == [chunk, chunk, 3]
    assert [t for c in follower.pending for t in c] == prefix + tail


def test_stop_token_and_capacity(sampler: Sampler, special) -> None:
    """A turn stops at the template's end-of-turn id (which is returned as the last id); a row
    that reaches max_len stops with ``capacity``; a full context returns no ids at once."""
    limit, eot = special.vocab_size, special.end_of_turn
    prompt = prompts_of([20], limit, seed=4)[0]
    greedy = dataclasses.replace(GREEDY, max_new_tokens=6)
    (first,), _ = run(sampler, [prompt], greedy)
    target = first.ids[0]
    original = sampler.params
    params = jax.tree.map(lambda x: x, original)
    head = params["lm_head"][...]
    params["lm_head"] = params["lm_head"].replace(head.at[eot].set(head[target] * 1.5))
    sampler.update_params(params)
    try:
        (stopped,), _ = run(sampler, [prompt], greedy)
    finally:
        sampler.update_params(original)
    assert stopped.ids == [eot] and stopped.finish == "stop"

    near_full = prompts_of([ENGINE.max_len - 3], limit, seed=5)[0]
    (capped,), _ = run(sampler, [near_full], dataclasses.replace(GREEDY, max_new_tokens=10))
    assert len(capped.ids) == 3 and capped.finish == "capacity"
    (full,), _ = run(sampler, [[*near_full, 1, 2, 3]], GREEDY)
    assert full.ids == [] and full.finish == "capacity"


def test_no_recompilation_across_lengths(sampler: Sampler, special) -> None:
    """Prompt lengths only select among the fixed buckets: a second run with new lengths in
    already-used buckets compiles nothing."""
    sp = dataclasses.replace(GREEDY, max_new_tokens=4)
    run(sampler, prompts_of([3, 40, 100, 200], special.vocab_size, seed=6), sp)
    before = compiled_program_count()
    run(sampler, prompts_of([7, 33, 90, 250, 31], special.vocab_size, seed=7), sp)
    assert compiled_program_count() == before
    kinds = {k for k, _ in sampler.programs}
    assert kinds <= {"decode", "prefill", "copy_prefix"} and {"decode", "prefill"} <= kinds
    assert {c for k, c in sampler.programs if k == "prefill"} <= set(ENGINE.buckets)


def test_decode_block_gives_the_same_tokens(model, special) -> None:
    """``decode_block`` > 1 runs several steps per program; stops are decided on device, so rows
    that stop mid-block must produce exactly the one-step-per-program result (ids and log-probs)."""
    sp = SamplingConfig(temperature=0.8, top_k=50, max_new_tokens=21)
    prompts = prompts_of([5, 40, 90], special.vocab_size, seed=11)
    caps = [dataclasses.replace(sp, max_new_tokens=m) for m in (21, 6, 13)]

    def generate(block: int) -> list[Generation]:
        cfg = dataclasses.replace(ENGINE, decode_block=block)
        s = Sampler(model, cfg, stop_ids=special.stop_ids, vocab_limit=special.vocab_size)

        async def go() -> list[Generation]:
            async with Engine(s, cfg, sampling=sp) as eng:
                async def one(i: int) -> Generation:
                    async with eng.session(7 + i) as sess:
                        return await sess.generate(prompts[i], caps[i])

                return list(await asyncio.gather(*(one(i) for i in range(len(prompts)))))

        return asyncio.run(go())

    one_step, blocked = generate(1), generate(4)
    for a, b in zip(one_step, blocked, strict=True):
        assert a.ids == b.ids and a.finish == b.finish
        np.testing.assert_allclose(a.logprobs, b.logprobs, atol=1e-6)
    assert [len(g.ids) for g in blocked] == [21, 6, 13]


def test_sampling_modes_are_exact_and_decided_on_the_host() -> None:
    """The host picks the least general mode its rows allow; ``sample`` draws by inverse CDF
    with the softmax's frequencies (20k draws, within 4 standard errors), greedy rows in a
    sampling program still take the argmax, and the rollouts' programs hold no conditional
    (a device-predicated ``lax.cond`` is a host read-back per step on GPU)."""
    from prove_jax.engine.sampling import sampling_mode

    assert sampling_mode([0.0, 0.0], [5, 0], [0.5, 1.0]) == "greedy"  # truncation of greedy rows: moot
    assert sampling_mode([0.0, 1.0], [0, 0], [1.0, 1.0]) == "sample"
    assert sampling_mode([1.0, 0.0], [0, 0], [0.9, 1.0]) == "truncate"
    n, v = 20000, 6
    logits = jnp.tile(jnp.array([[2.0, 1.0, 0.5, 0.0, -1.0, 3.0]]), (n, 1))
    keys = jax.vmap(jax.random.key)(jnp.arange(n, dtype=jnp.uint32))
    temperature = jnp.full((n,), 0.5).at[0].set(0.0)
    args = (logits, keys, temperature, jnp.zeros((n,), jnp.int32), jnp.ones((n,)), v)
    fn = jax.jit(select, static_argnums=(5, 6))
    tok, slp, _ = (np.asarray(x) for x in fn(*args, "sample"))
    probs = np.exp(np.asarray(logits[0]) / 0.5 - np.logaddexp.reduce(np.asarray(logits[0]) / 0.5))
    freq = np.bincount(tok[1:], minlength=v) / (n - 1)
    assert np.all(np.abs(freq - probs) <= 4 * np.sqrt(probs * (1 - probs) / (n - 1)) + 1e-9), (freq, probs)
    np.testing.assert_allclose(slp[1:], np.log(probs[tok[1:]]), atol=1e-5)
    assert tok[0] == 5 and slp[0] == 0.0  # the greedy row
    assert (np.asarray(fn(*args, "greedy")[0]) == 5).all()
    for mode in ("greedy", "sample"):
        hlo = fn.lower(*args, mode).as_text()
        assert "stablehlo.case" not in hlo and "stablehlo.if" not in hlo, mode
