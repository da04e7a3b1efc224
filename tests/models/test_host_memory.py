"""configure_host_allocator: a train step whose XLA temporaries pass glibc's 32 MiB mmap cap
stops faulting its pages in again every step (measured in fresh processes, as the setting is
process-wide)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from prove_jax.host_memory import configure_host_allocator

REPO = Path(__file__).resolve().parents[2]

# The tiny Qwen3 fwd+bwd at 10 x 129 tokens: ~36 MB of XLA temporaries, just past the cap.
PROBE = r"""
import json, resource, sys
import jax, jax.numpy as jnp, numpy as np
from flax import nnx
from prove_jax.host_memory import configure_host_allocator
from prove_jax.models import Qwen3Config, init_model, sequence_logprobs
applied = configure_host_allocator() if sys.argv[1] == "on" else None
cfg = Qwen3Config(vocab_size=1000, hidden_size=64, intermediate_size=128, num_layers=2, num_heads=4,
                  num_kv_heads=2, head_dim=32, tie_word_embeddings=True, dtype="float32", param_dtype="float32")
graph, state = nnx.split(init_model(cfg))
tok = jnp.asarray(np.random.default_rng(0).integers(0, 1000, (10, 129)), jnp.int32)
pos = jnp.broadcast_to(jnp.arange(129, dtype=jnp.int32), (10, 129))
step = jax.jit(lambda s: jax.grad(lambda s: -sequence_logprobs(nnx.merge(graph, s), tok, pos).mean())(s))
temp = step.lower(state).compile().memory_analysis().temp_size_in_bytes
for _ in range(3):
    jax.block_until_ready(step(state))
faults = []
for _ in range(9):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    jax.block_until_ready(step(state))
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(json.dumps({"applied": applied, "temp_bytes": temp, "faults_per_step": sorted(faults)[4]}))
"""


def _probe(mode: str) -> dict:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, env=env,
                         timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc mallopt")
def test_train_step_temporaries_stay_mapped() -> None:
    off, on = _probe("off"), _probe("on")
    assert off["temp_bytes"] > 32 * 2**20  # the scenario: past glibc's dynamic mmap threshold
    pages = off["temp_bytes"] / 4096
    # median step: with default glibc every page of the temporaries faults in again
    assert off["faults_per_step"] > 0.5 * pages, off
    assert on["applied"] is True
    assert on["faults_per_step"] < 0.15 * pages, (off, on)


def test_rejects_non_positive_sizes() -> None:
    with pytest.raises(ValueError, match="retain_bytes"):
        configure_host_allocator(0)
