"""The sampler under the training mesh (8 simulated CPU devices) gives the single-device tokens."""

from __future__ import annotations

import asyncio
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from prove_jax.engine import GREEDY, Engine, Sampler
from prove_jax.models import load_hf, make_mesh, save_hf
from tests.engine.conftest import ENGINE


def test_sharded_greedy_matches_single_device(sampler: Sampler, model, special, tmp_path) -> None:
    """Rows over fsdp (4 shards of 2 rows), heads over tensor: the page pool is split with the
    rows (each shard holds its rows' pages, with shard-local page ids), its KV heads over tensor.
    More rows than slots (refills), a shared prompt within one shard: the single-device tokens."""
    assert jax.device_count() == 8
    config = dataclasses.replace(ENGINE, slots=8)
    mesh = make_mesh("fsdp=4,tensor=2")
    sharded_model = load_hf(save_hf(model, tmp_path / "tiny"), mesh=mesh, dtype=jnp.float32)
    sharded = Sampler(sharded_model, config, stop_ids=special.stop_ids, vocab_limit=special.vocab_size)
    single = Sampler(model, config, stop_ids=special.stop_ids, vocab_limit=special.vocab_size)
    # Parameters, KV cache and slot state really live on the mesh (the pool: K and V
    # [pages, KV heads, page, D], pages over fsdp with the rows, heads over tensor).
    assert config.paged
    pool = sharded.cache.kv[0][0]
    assert tuple(pool.sharding.spec)[:2] == ("fsdp", "tensor") and sharded.cache.lens.sharding.spec[0] == "fsdp"
    assert pool.addressable_shards[0].data.shape[0] == pool.shape[0] // 4, "each shard holds a quarter of the pages"
    assert sharded.state.tok.sharding.spec[0] == "fsdp"
    assert len(sharded.params["lm_head"][...].sharding.device_set) == 8
    table = sharded.pages
    assert table is not None and table.shards == 4 and single.pages is not None and single.pages.shards == 1

    rng = np.random.default_rng(8)
    prompts = [[int(x) for x in rng.integers(0, special.vocab_size, n)] for n in (4, 11, 30, 17)]
    # rows 4 and 5 (one shard) share a 300-token prompt: the second references the first's pages
    shared = [int(x) for x in rng.integers(0, special.vocab_size, 300)]
    prompts += [shared, [*shared[:280], 7, 8, 9]]
    # row 6 (another shard) has it too: one device shares with it, the split pool prefills it
    prompts += [[*shared[:290], 4, 5]]
    prompts += [[int(x) for x in rng.integers(0, special.vocab_size, n)] for n in (700, 25, 9)]
    sp = dataclasses.replace(GREEDY, max_new_tokens=20)
    seen: list[tuple[int, int]] = []

    async def go(s: Sampler) -> tuple[list[list[int]], int]:
        async with Engine(s, config, sampling=sp) as eng:
            async def one(p: list[int], seed: int) -> list[int]:
                async with eng.session(seed) as sess:
                    g = await sess.generate(p)
                    if eng.pages is not None:  # the row's pages: its shard's own (local ids)
                        row = eng.pages.rows[sess.slot.index]
                        seen.extend((eng.pages.shard(sess.slot.index), p // eng.pages.shard_pages) for p in row)
                    return g.ids

            ids = await asyncio.gather(*(one(p, i) for i, p in enumerate(prompts)))
            return list(ids), eng.stats.prefix_copies

    one, copies_one = asyncio.run(go(single))
    seen.clear()
    many, copies_many = asyncio.run(go(sharded))
    assert copies_one == 2 and copies_many == 1  # pages are shared within a shard only
    assert one == many
    assert seen and all(shard == home for shard, home in seen), "a row took a page of another shard"
    assert len({shard for shard, _ in seen}) == 4
    assert tuple(sharded.cache.kv[0][0].sharding.spec)[:2] == ("fsdp", "tensor"), "the pool stayed sharded"
    assert sharded.cache.lens.sharding.spec[0] == "fsdp"
