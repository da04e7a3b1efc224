"""Synthesis throughput: the full paper-size build (13,517 examples) on 2 worker processes.

Runs ``data.build.build`` exactly as ``python -m data.build --size paper`` does (graph from a fresh
cache directory, so the graph stage is included), then reports where the time went per stage
(worker CPU seconds for generate/validate; wall seconds for the rest), examples per second, and
the peak resident memory of the parent and of any worker.

Figures:
* ``synth_paper_build_s`` — wall seconds for the whole build. Goal 900 (15 minutes on 2 cores).
* ``synth_examples_per_s`` — final examples / wall seconds. Goal 15.
* ``synth_peak_rss_mb`` — max(parent, largest worker) peak RSS.

Run: ``python benchmarks/bench_synthesis.py [--size tiny|paper] [--workers 2] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from data.build import build


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", choices=("tiny", "paper"), default="paper")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="output directory (default: a temporary one)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out) if args.out else Path(tmp) / "data"
        t0 = time.perf_counter()
        res = build(out, seed=args.seed, size=args.size, workers=args.workers, cache_dir=Path(tmp) / "graph-cache",
                    progress=True)
        wall = time.perf_counter() - t0
        stats = res.stats
    parent_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child_mb = max(res.worker_peak_rss_mb, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
    total = stats["total"]
    print(f"size={args.size} workers={args.workers} examples={total} slots={res.slots} "
          f"(accept rate {total / max(1, res.slots):.1%})")
    print("stage seconds (generate/validate are summed worker CPU; the rest wall):")
    for stage, secs in sorted(res.timings.items(), key=lambda kv: -kv[1]):
        print(f"  {stage:28s} {secs:8.1f}")
    print(f"kinds {stats['kinds']}  splits {stats['splits']}")
    print(f"knob rates {stats['knob_rates']}")
    print(f"rejections {stats['rejections']}")
    low = stats["tools_below_min"]
    print(f"tools below {stats['config']['min_tool_examples']} examples: {len(low)} {low[:10]}")
    print(f"peak RSS parent {parent_mb:.0f} MB, largest worker {child_mb:.0f} MB")
    label = "synth_paper_build_s" if args.size == "paper" else "synth_tiny_build_s"
    print(f"RESULT {label} {wall:.1f} s goal={900 if args.size == 'paper' else 30}")
    print(f"RESULT synth_examples_per_s {total / wall:.1f} 1/s goal=15")
    print(f"RESULT synth_peak_rss_mb {max(parent_mb, child_mb):.0f} MB goal=none")


if __name__ == "__main__":
    main()
