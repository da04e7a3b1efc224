"""The paper recipe's truncated IS keeps PPO clipping off bf16 engine/trainer numerics.

On-policy, the ratio pi_theta / pi_sampler is 1 only up to numerics: the engine (bf16, KV cache,
its own kernels) and the trainer (bf16 full forward) disagree per token. Without TIS the +-0.2
clip then acts on that noise and silently zeroes gradients of the tokens it hits. With the
recipe's ``tis_cap`` the clip acts on pi_theta / sg(pi_theta) and the mismatch goes into the
capped, detached IS weight. Rollouts here are sampled by the real engine from a tiny bf16-compute
model (f32 master weights, as in a run) and scored by the real GRPO objective with the same
weights, i.e. at step 0.

The model's init scale (1.0) gives it a trained policy's confidence (entropy ~0.7 nats/token): a
flat random model's small logits hide the bf16 error, a peaked one shows it, as large models do.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from prove_jax.chat import special_ids
from prove_jax.config import LaunchConfig, load
from prove_jax.engine import Engine, EngineConfig, Sampler, SamplingConfig
from prove_jax.env import EpisodeConfig, MCPPool, run_rollouts
from prove_jax.models import init_model
from prove_jax.records import Rollout
from prove_jax.rl.batch import Row, length_buckets, micro_batches
from prove_jax.rl.losses import Denominators, LossConfig
from prove_jax.rl.objectives import GRPOObjective
from tests.engine import engine_testlib as lib

RECIPE = Path(__file__).resolve().parents[2] / "configs" / "recipes" / "prove_grpo.yaml"
MAX_LEN = 2048
ENGINE = EngineConfig(slots=4, max_len=MAX_LEN, min_chunk=32, max_chunk=256, prefill_rows=2)


def step0_metrics(model: Any, rows: list[Row], loss: LossConfig) -> dict[str, float]:
    """The GRPO objective's metrics of one step over ``rows`` (one micro-batch, no reference)."""
    (mb,), plan = micro_batches(rows, len(rows), length_buckets(MAX_LEN))
    den = Denominators(jnp.float32(plan.tokens), jnp.float32(plan.seqs))
    fn = nnx.jit(lambda m, b, d: GRPOObjective(loss)(m, None, b, d)[1])
    return {k: float(v) for k, v in fn(model, {k: jnp.asarray(v) for k, v in mb.items()}, den).items()}


@pytest.fixture(scope="module")
def bf16_rollouts(live: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, list[Row]]:
    tok = lib.build_tokenizer(live, tmp_path_factory.mktemp("tok"))
    tpl = lib.template()
    sp = special_ids(tpl, tok)
    model = init_model(lib.tiny_config(len(tok), dtype="bfloat16", param_dtype="float32", initializer_range=1.0),
                       seed=0)
    sampler = Sampler(model, ENGINE, stop_ids=sp.stop_ids, vocab_limit=sp.vocab_size)
    sampling = SamplingConfig(temperature=1.0, max_new_tokens=32)

    async def go() -> list[Rollout]:
        async with MCPPool.from_spec(lib.DOMAINS, "inprocess") as pool, \
                Engine(sampler, ENGINE, sampling=sampling) as eng:
            return await run_rollouts(eng, pool, lib.domain_examples(live), tpl, tok, n_samples=2, seed=0,
                                      config=EpisodeConfig(max_tokens=MAX_LEN, max_assistant_turns=3))

    ros = asyncio.run(go())
    assert not any(r.failed for r in ros)
    # advantages of both signs, so clipping on either side of the range is counted
    rows = [Row(r.tokens, r.loss_mask, r.sample_logprobs, (-1.0) ** i) for i, r in enumerate(ros)]
    return model, rows


def test_recipe_tis_keeps_the_clip_off_bf16_mismatch(bf16_rollouts) -> None:
    model, rows = bf16_rollouts
    recipe = load(LaunchConfig, str(RECIPE), []).grpo.loss
    assert model.config.dtype == "bfloat16" and sum(r.target_tokens for r in rows) >= 500
    with_tis = step0_metrics(model, rows, recipe)
    without = step0_metrics(model, rows, dataclasses.replace(recipe, tis_cap=None))
    print(f"\nbf16 step 0: with tis_cap={recipe.tis_cap}: {with_tis}\nwithout TIS: {without}")
    # the engine and trainer really disagree (numerics only: no truncation, no padded vocabulary)
    assert 0 < with_tis["abs_log_ratio"] == without["abs_log_ratio"] < 0.1
    assert without["clip_frac"] > 1e-3, "the scenario must show the clip acting on numerics without TIS"
    assert with_tis["clip_frac"] < 1e-3
    assert np.isfinite(with_tis["loss"]) and np.isfinite(without["loss"])
