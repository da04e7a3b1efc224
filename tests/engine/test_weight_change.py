"""After new weights, no episode starts from K/V the previous policy computed.

The engine shares cached prompt prefixes between rows (a GRPO group's prompt, a common system
prompt + tool list): an idle row still holds what an earlier episode prefilled. Once the weights
change, copying that row would seed a new episode with the old policy's K/V, so its tokens and
log-probs would be neither policy's. ``Engine.forget_cached_rows`` (called by GRPO on every weight
sync) rules it out.
"""

from __future__ import annotations

import asyncio

import jax
import numpy as np
from flax import nnx

from prove_jax.engine import Engine, EngineConfig, Sampler
from prove_jax.engine.config import GREEDY
from prove_jax.models import init_model
from tests.engine.engine_testlib import tiny_config

ENGINE = EngineConfig(slots=2, max_len=256, min_chunk=32, max_chunk=32, share_prefixes=True)
PROMPT = [int(x) for x in np.random.default_rng(0).integers(3, 200, size=70)]  # two whole chunks + 6


async def _gen(engine: Engine) -> list[int]:
    out = await engine.generate([PROMPT], GREEDY)
    return list(out[0].ids)


def _perturbed(params: nnx.State) -> nnx.State:
    leaves, treedef = jax.tree.flatten(params)
    keys = jax.random.split(jax.random.PRNGKey(7), len(leaves))
    return jax.tree.unflatten(treedef, [x + 0.3 * jax.random.normal(k, x.shape, x.dtype)
                                        for x, k in zip(leaves, keys, strict=True)])


def _run(forget: bool) -> tuple[list[int], list[int]]:
    model = init_model(tiny_config(256), seed=1)
    graphdef, params = nnx.split(model)
    new = _perturbed(params)
    engine = Engine(Sampler(model, ENGINE, stop_ids=()), ENGINE)
    fresh = Engine(Sampler(nnx.merge(graphdef, new), ENGINE, stop_ids=()), ENGINE)

    async def go() -> tuple[list[int], list[int]]:
        async with engine:  # one engine run, as a GRPO stage keeps it across steps
            await _gen(engine)  # an idle row now holds PROMPT's K/V under the first weights
            engine.sampler.update_params(new)
            if forget:
                engine.forget_cached_rows()
            after = await _gen(engine)
        async with fresh:
            return after, await _gen(fresh)

    return asyncio.run(go())


def test_new_weights_never_reuse_a_prefix_cached_under_the_old_ones() -> None:
    after, fresh = _run(forget=True)
    assert after == fresh


def test_without_forgetting_the_stale_prefix_is_reused() -> None:
    """The control: the same sequence without ``forget_cached_rows`` diverges from a fresh
    engine, so the test above could fail."""
    after, fresh = _run(forget=False)
    assert after != fresh
