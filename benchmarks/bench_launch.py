"""End-to-end time of the default launch (``python -m prove_jax.launch``, no arguments).

    .venv/bin/python benchmarks/bench_launch.py [--out DIR] [key=value ...]

Runs the README's main job in a fresh output directory as a subprocess (exactly as a user would,
stdio MCP servers included), then reads its ``summary.json``: wall time per stage and in total
(goal <= 15 min on 2 cores), and whether the trained model is measurably past the untrained one
(the held-out parsed-call fraction and tool-example reward, compact tool view).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None, help="output directory (default: a fresh temporary one)")
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="bench_launch_")) / "run"
    if (out / "summary.json").exists():
        raise SystemExit(f"{out} already holds a run: its stages would be skipped; give a fresh --out")
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "prove_jax.launch", f"out_dir={out}", *args.overrides], cwd=ROOT,
                   check=True)
    wall = time.perf_counter() - t
    summary = json.loads((out / "summary.json").read_text())
    print(f"\ndefault launch: {wall / 60:.1f} min wall; per stage (s): {summary['seconds']}")
    past = summary.get("past_untrained", {})
    print(f"RESULT launch_e2e_minutes {wall / 60:.2f} min goal=<=15")
    for key in ("parsed_call_fraction", "tool_reward"):
        if key in past:
            before, after = past[key]
            print(f"RESULT launch_{key}_trained {after:.4f} {key} goal=>{before:.4f}")


if __name__ == "__main__":
    main()
