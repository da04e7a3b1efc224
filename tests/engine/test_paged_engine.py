"""The paged engine (``EngineConfig.kv='paged'``, the default) against the dense one, and its page
bookkeeping: sharing, release, pool exhaustion, preemption, refusal of a pool too small."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import numpy as np
import pytest

from prove_jax.engine import GREEDY, Engine, EngineConfig, Sampler, SamplingConfig
from prove_jax.engine.pages import PagePoolTooSmall, PageTable, pages_for
from tests.engine.conftest import ENGINE

LP_TOL = 1e-4  # f32 log-probs: the paged and dense reads sum in different orders


def prompts_of(lengths: list[int], limit: int, seed: int) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    return [[int(x) for x in rng.integers(0, limit, n)] for n in lengths]


def _run(sampler: Sampler, prompts: list[list[int]], sp: SamplingConfig, seeds: list[int]) -> tuple[list, Engine]:
    async def go() -> tuple[list, Engine]:
        async with Engine(sampler, sampler.config, sampling=sp) as eng:
            return await eng.generate(prompts, seeds=seeds), eng

    return asyncio.run(go())


@pytest.fixture(scope="module")
def dense(model, special) -> Sampler:
    return Sampler(model, dataclasses.replace(ENGINE, kv="dense"), stop_ids=special.stop_ids,
                   vocab_limit=special.vocab_size)


def test_paged_matches_dense_on_ragged_rows(sampler: Sampler, dense: Sampler, special) -> None:
    """One row near the cap beside short ones, more rows than slots (refills), a shared prompt,
    sampled at T 1: the same tokens as the dense engine, and both log-probs within f32 summation
    order (greedy agreement is the T 0 case of the same draws, and the model tests check it)."""
    temperature = 1.0
    assert sampler.config.paged and not dense.config.paged
    limit = special.vocab_size
    prompts = prompts_of([1200, 7, 40, 300, 90, 5, 600], limit, seed=3)
    prompts.append(prompts[6][:560] + prompts_of([20], limit, seed=4)[0])  # shares two 256-token chunks
    sp = SamplingConfig(temperature=temperature, max_new_tokens=24)
    seeds = list(range(len(prompts)))
    paged, eng = _run(sampler, prompts, sp, seeds)
    ref, _ = _run(dense, prompts, sp, seeds)
    for a, b in zip(paged, ref, strict=True):
        assert a.ids == b.ids and a.finish == b.finish
        np.testing.assert_allclose(a.logprobs, b.logprobs, atol=LP_TOL)
        np.testing.assert_allclose(a.sample_logprobs, b.sample_logprobs, atol=LP_TOL)
    assert eng.stats.prefix_copies == 1 and eng.stats.shared_pages == 512 // ENGINE.page_len
    assert "copy_prefix" not in {kind for kind, _ in sampler.programs}  # shared by reference, never copied


def test_a_row_holds_only_its_tokens_pages(sampler: Sampler, special) -> None:
    """After each turn a row keeps exactly the pages of the tokens it holds (the turn's unused
    allowance goes back); a group's prompt pages are referenced by every row that shares them."""
    limit = special.vocab_size
    base = prompts_of([600], limit, seed=21)[0]
    sp = SamplingConfig(temperature=1.0, max_new_tokens=12)
    held: dict[int, tuple[int, int, int]] = {}

    async def go() -> None:
        async with Engine(sampler, sampler.config, sampling=sp) as eng:
            table = eng.pages
            assert isinstance(table, PageTable) and table.in_use == 0

            async def one(seed: int) -> None:
                async with eng.session(seed) as sess:
                    await sess.generate(base)
                    slot = sess.slot
                    held[seed] = (table.held(slot.index), len(slot.fed), table.shared_pages(slot.index))

            await asyncio.gather(*(one(s) for s in range(3)))
            eng.forget_cached_rows()
            assert table.in_use == 0 and (table.refs == 0).all()  # every page back in the free list

    asyncio.run(go())
    page = ENGINE.page_len
    for n_pages, fed, shared in held.values():
        assert n_pages == pages_for(fed, page)
        assert shared == 512 // page  # the two shared 256-token chunks: 8 pages referenced by 3 rows


def test_pool_exhaustion_waits_evicts_and_preempts(model, special, sampler: Sampler) -> None:
    """A pool of one ``max_len`` row and two two-turn episodes whose histories do not both fit:
    the newest episode's pages are freed and its second turn recomputed, never a failed step or a
    corrupted row: every turn's tokens equal a run with a pool that holds everything."""
    small = Sampler(model, dataclasses.replace(ENGINE, pages=ENGINE.max_len // ENGINE.page_len),
                    stop_ids=special.stop_ids, vocab_limit=special.vocab_size)
    limit = special.vocab_size
    first = prompts_of([600, 650], limit, seed=5)
    more = prompts_of([280, 250], limit, seed=6)
    sp = dataclasses.replace(GREEDY, max_new_tokens=12)

    def episodes(s: Sampler) -> tuple[list[list[int]], Any]:
        out: list[list[int]] = [[], [], [], []]

        async def go() -> Any:
            async with Engine(s, s.config, sampling=sp) as eng:
                barrier = asyncio.Barrier(2)

                async def one(i: int) -> None:
                    async with eng.session(i) as sess:
                        g1 = await sess.generate(first[i])
                        await barrier.wait()  # both histories are held before either second turn
                        g2 = await sess.generate(first[i] + g1.ids + more[i])
                        out[i], out[2 + i] = g1.ids, g2.ids

                await asyncio.gather(one(0), one(1))
                return eng.stats

        return out, asyncio.run(go())

    got, stats = episodes(small)
    ref, ref_stats = episodes(sampler)
    assert got == ref
    assert ref_stats.preemptions == 0 and ref_stats.page_waits == 0
    assert stats.preemptions >= 1 and stats.page_waits >= 1


def test_idle_rows_cached_pages_are_evicted_before_any_episode_is_preempted(model, special) -> None:
    """A finished episode's row keeps its pages as a prefix cache; a new turn that needs them
    evicts that idle row (oldest first) instead of waiting or preempting a live episode."""
    small = Sampler(model, dataclasses.replace(ENGINE, pages=ENGINE.max_len // ENGINE.page_len),
                    stop_ids=special.stop_ids, vocab_limit=special.vocab_size)
    first, second = prompts_of([600, 1200], special.vocab_size, seed=7)
    sp = dataclasses.replace(GREEDY, max_new_tokens=12)

    async def go() -> Any:
        async with Engine(small, small.config, sampling=sp) as eng:
            await eng.generate([first], seeds=[0])
            assert eng.pages is not None and eng.pages.in_use == pages_for(600 + 11, ENGINE.page_len)
            await eng.generate([second], seeds=[1])
            return eng.stats

    stats = asyncio.run(go())
    assert stats.evictions == 1 and stats.preemptions == 0


def test_a_pool_too_small_for_one_episode_is_refused(model, special) -> None:
    cfg = dataclasses.replace(ENGINE, pages=ENGINE.max_len // ENGINE.page_len - 1)
    with pytest.raises(PagePoolTooSmall, match=r"engine.pages=23 cannot hold one episode of max_len=1536.*MiB"):
        Sampler(model, cfg, stop_ids=special.stop_ids, vocab_limit=special.vocab_size)


def test_pages_must_divide_the_shared_chunk() -> None:
    with pytest.raises(ValueError, match=r"must divide engine\.max_chunk"):
        EngineConfig(max_chunk=32, page_size=64)
    assert EngineConfig(max_chunk=32).page_len == 32 and EngineConfig(max_chunk=256).page_len == 64


def test_page_table_bookkeeping() -> None:
    t = PageTable(pages=6, page_size=4, slots=3, max_pages=4)
    assert t.ensure(0, 9) and t.held(0) == 3 and t.free == 3  # 9 tokens: 3 pages
    assert not t.ensure(1, 17) and t.held(1) == 0 and t.free == 3  # all or nothing
    t.share(1, 0, 8)  # two whole pages referenced, not copied
    assert t.rows[1] == t.rows[0][:2] and t.free == 3 and t.shared_pages(0) == 2
    with pytest.raises(ValueError, match="whole pages"):
        t.share(2, 0, 6)
    assert t.ensure(1, 12) and t.rows[1][2] not in t.rows[0]  # its own page past the shared ones
    t.release(0)
    assert t.free == 3 - 1 + 1  # row 0's own third page freed; the shared two still held by row 1
    t.release(1)
    assert t.free == 6 and (t.refs == 0).all() and t.version > 0
