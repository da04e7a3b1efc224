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
    assert jax.device_count() == 8
    mesh = make_mesh("fsdp=4,tensor=2")
    sharded_model = load_hf(save_hf(model, tmp_path / "tiny"), mesh=mesh, dtype=jnp.float32)
    sharded = Sampler(sharded_model, ENGINE, stop_ids=special.stop_ids, vocab_limit=special.vocab_size)
    # Parameters, KV cache and slot state really live on the mesh: rows over fsdp, heads over tensor
    # (the page pool: K and V [pages, KV heads, page, D], heads over tensor).
    assert ENGINE.paged
    assert sharded.cache.kv[0][0].sharding.spec[1] == "tensor" and sharded.cache.lens.sharding.spec[0] == "fsdp"
    assert sharded.state.tok.sharding.spec[0] == "fsdp"
    assert len(sharded.params["lm_head"][...].sharding.device_set) == 8

    rng = np.random.default_rng(8)
    prompts = [[int(x) for x in rng.integers(0, special.vocab_size, n)] for n in (4, 11, 30, 17, 25)]
    # two more rows share a 300-token prompt: the second copies the first one's K/V row on device
    shared = [int(x) for x in rng.integers(0, special.vocab_size, 300)]
    prompts += [shared, [*shared[:280], 7, 8, 9]]
    sp = dataclasses.replace(GREEDY, max_new_tokens=20)

    async def go(s: Sampler) -> tuple[list[list[int]], int]:
        async with Engine(s, ENGINE, sampling=sp) as eng:
            return [g.ids for g in await eng.generate(prompts)], eng.stats.prefix_copies

    one, copies_one = asyncio.run(go(sampler))
    many, copies_many = asyncio.run(go(sharded))
    assert copies_one == copies_many == 1
    assert one == many
    assert sharded.cache.kv[0][0].sharding.spec[1] == "tensor", "the pool stayed sharded through the programs"
    assert sharded.cache.lens.sharding.spec[0] == "fsdp"
