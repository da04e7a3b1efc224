"""Trainer -> engine weight transfer per GRPO step: bytes and seconds (``engine.weights.WeightSync``).

CPU proxy (measured): the tiny_cpu model (configs/runs/tiny_cpu.yaml's architecture, 3,008-entry
vocabulary) with f32 master weights on 8 simulated CPU devices (``fsdp=4,tensor=2``), synced to a
bf16 engine: one jitted cast + reshard on device, timed to ``block_until_ready``, median of
``--reps`` after a warm-up call (the compile). For reference, the path it replaces: every param
copied to host numpy (f32) and ``device_put`` back into the engine's shardings.

Analytic (not measured): Qwen3-8B's exact parameter count (from the model's abstract shapes)
x 2 bytes (bf16) per engine replica per step, and the time to move it at a stated interconnect
bandwidth; beside it, the f32 bytes the old multi-host path pushed through host memory.

Run: ``python benchmarks/bench_weight_sync.py [--reps N] [--ici-gbs GB_PER_S]``.
"""

from __future__ import annotations

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse
import math
import statistics
import time
from typing import Any

import jax
import numpy as np
from flax import nnx

from prove_jax.engine.weights import WeightSync
from prove_jax.models import Qwen3Config, abstract_model, init_model, make_mesh

TINY = {"vocab_size": 3008, "hidden_size": 128, "intermediate_size": 384, "num_layers": 3, "num_heads": 4,
        "num_kv_heads": 2, "head_dim": 32, "rope_theta": 1e6, "max_position_embeddings": 32768,
        "tie_word_embeddings": False}
QWEN3_8B = {"vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 12288, "num_layers": 36,
            "num_heads": 32, "num_kv_heads": 8, "head_dim": 128, "rope_theta": 1e6, "max_position_embeddings": 40960,
            "tie_word_embeddings": False, "qk_norm": True}
V5P_ICI_GBS = 600.0  # Google's published v5p inter-chip interconnect bandwidth: 4,800 Gbps per chip


def _n_params(state: Any) -> int:
    return sum(math.prod(x.shape) for x in jax.tree.leaves(state))


def _median_s(fn: Any, reps: int) -> float:
    fn()  # compile / warm up
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--ici-gbs", type=float, default=V5P_ICI_GBS, help="interconnect GB/s for the analytic time")
    args = p.parse_args()

    mesh = make_mesh("fsdp=4,tensor=2")
    cfg = Qwen3Config(**TINY, dtype="float32", param_dtype="float32")
    params = nnx.split(init_model(cfg, seed=0, mesh=mesh))[1]
    sync = WeightSync(cfg, params, dtype="bfloat16")
    assert sync.describe()["mode"] == "one program"
    n = _n_params(params)
    sync_s = _median_s(lambda: sync(params), args.reps)
    seconds = [sync.last_seconds]

    def host_roundtrip() -> None:  # the replaced path: f32 to host numpy, then device_put
        out = [jax.device_put(np.asarray(x), x.sharding) for x in jax.tree.leaves(params)]
        jax.block_until_ready(out)

    host_s = _median_s(host_roundtrip, args.reps)
    print(f"# tiny model: {n:,} params on {jax.device_count()} CPU devices (fsdp=4,tensor=2), f32 -> bf16; "
          f"last sync {seconds[-1] * 1e3:.2f} ms")
    print(f"RESULT weight_sync_bytes_per_step {sync.bytes} B goal=<={2 * n} (n_params x 2, bf16)")
    print(f"RESULT weight_sync_s {sync_s:.6f} s goal=<{host_s:.6f} (the host round trip below)")
    print(f"RESULT weight_sync_host_roundtrip_f32_s {host_s:.6f} s goal=none (replaced path, reference)")

    big = _n_params(nnx.split(abstract_model(Qwen3Config(**QWEN3_8B, dtype="bfloat16", param_dtype="float32")))[1])
    bytes_8b = 2 * big
    print(f"# analytic: Qwen3-8B {big:,} params; time = bf16 bytes of one engine replica / {args.ici_gbs:.0f} GB/s "
          f"(--ici-gbs; default v5p's per-chip ICI), as if one chip's links carried the whole copy (each chip "
          f"of a replica receives only the part it lacks, in parallel with the others)")
    print(f"RESULT weight_sync_8b_bytes_per_step_analytic {bytes_8b} B goal=none")
    print(f"RESULT weight_sync_8b_s_analytic {bytes_8b / (args.ici_gbs * 1e9):.4f} s goal=none")
    print(f"RESULT weight_sync_8b_old_host_f32_bytes_analytic {4 * big} B goal=none (gathered to host per process)")


if __name__ == "__main__":
    main()
