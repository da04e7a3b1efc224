"""KV-cache read cost: does a decode step's time follow what the rows hold, or the capacity?

    python benchmarks/bench_kv.py                 # CPU, about a minute on 2 cores

Figure (``RESULT <name> <value> <unit> goal=<goal>``):

* ``decode_step_capacity_ratio``: engine decode step time (``Sampler.decode(block=1)``, 16
  slots, each row holding ~200 tokens) with a cache of capacity 8192 over the same with
  capacity 1024, for a small scanned (``scan_layers``, the layout of the paper's model configs)
  f32 Qwen3-shaped model.  Attention that reads the whole capacity makes it ~8x in the
  attention share of the step; reading only the blocks rows hold keeps it ~1.  The unscanned
  (per-layer buffers) layout is printed as INFO.

Only the public model/engine API is used, so the same script times an older tree (copy it into
that tree's ``benchmarks/`` and run it there).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

if TYPE_CHECKING:
    from prove_jax.engine import Sampler

SHAPE = dict(vocab_size=1024, hidden_size=128, intermediate_size=256, num_layers=4, num_heads=4, num_kv_heads=2,
             head_dim=32, rope_theta=1e6, tie_word_embeddings=True)
SLOTS, HELD, CHUNK, STEPS, ROUNDS = 16, 200, 256, 48, 3


def result(name: str, value: float, unit: str, goal: str) -> None:
    print(f"RESULT {name} {value:.3f} {unit} goal={goal}", flush=True)


def make_sampler(capacity: int, scan: bool) -> Sampler:
    """A sampler whose ``SLOTS`` rows each hold ``HELD`` prompt tokens and are decoding."""
    from prove_jax.engine import EngineConfig, Sampler
    from prove_jax.models import Qwen3Config, init_model

    cfg = Qwen3Config(**SHAPE, dtype="float32", param_dtype="float32", scan_layers=scan)
    model = init_model(cfg, seed=0)
    ecfg = EngineConfig(slots=SLOTS, max_len=capacity - CHUNK, min_chunk=CHUNK, max_chunk=CHUNK, prefill_rows=SLOTS)
    assert ecfg.capacity == capacity
    s = Sampler(model, ecfg, stop_ids=())
    b = s.empty_batch(CHUNK)
    b.rows[:] = np.arange(SLOTS)
    b.tokens[:] = np.random.default_rng(0).integers(0, SHAPE["vocab_size"], (SLOTS, CHUNK))
    b.lens[:] = HELD
    b.reset[:] = True
    b.final[:] = True
    b.max_new[:] = 10**6
    b.temperature[:] = 0.0
    s.prefill(b)
    return s


def step_seconds(s: Sampler) -> float:
    """Seconds per decode step: ``STEPS`` single steps dispatched back to back, one sync."""
    import jax

    jax.block_until_ready(s.decode(block=1))
    t = time.perf_counter()
    for _ in range(STEPS):
        out = s.decode(block=1)
    jax.block_until_ready(out)
    return (time.perf_counter() - t) / STEPS


def measure(scan: bool, capacities: tuple[int, ...]) -> dict[int, float]:
    """Best of ``ROUNDS`` alternating rounds per capacity (rows grow by ``STEPS`` per round, all
    well inside the first 512-slot block)."""
    samplers = {c: make_sampler(c, scan) for c in capacities}
    for s in samplers.values():
        step_seconds(s)  # compile + warm up
    best = {c: float("inf") for c in capacities}
    for _ in range(ROUNDS):
        for c, s in samplers.items():
            best[c] = min(best[c], step_seconds(s))
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--small", type=int, default=1024)
    ap.add_argument("--large", type=int, default=8192)
    args = ap.parse_args()
    caps = (args.small, args.large)
    for scan in (True, False):
        t = measure(scan, caps)
        ratio = t[args.large] / t[args.small]
        layout = "scanned" if scan else "per-layer"
        print(f"INFO {layout}: decode step {t[args.small] * 1e3:.2f} ms at capacity {args.small}, "
              f"{t[args.large] * 1e3:.2f} ms at {args.large} ({SLOTS} rows of ~{HELD} tokens): {ratio:.2f}x",
              flush=True)
        if scan:
            result("decode_step_capacity_ratio", ratio, "x", "<=1.3")


if __name__ == "__main__":
    main()
