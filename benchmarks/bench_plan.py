"""Fit at the paper's scale, proven on this CPU box: the planner over the four paper recipes.

    python benchmarks/bench_plan.py                          # v5p-32 (compiled) + 8xh100 (analytic), v5e-4 refusal
    python benchmarks/bench_plan.py --recipes qwen3_8b --topologies v5p-32
    python benchmarks/bench_plan.py --recipes granite_4_1_8b --topologies v5p-32 --skip-refusal \
        --tag _lora16 lora.rank=16 lora.alpha=32                   # the same recipe with LoRA

Each plan runs ``python -m prove_jax.plan`` in its own process (libtpu's deviceless topology, or
the analytic GPU model) and reads its JSON. Figures (``RESULT <name> <value> <unit> goal=<goal>``):

* ``plan_peak_gib_<recipe>_<topology>``: per-chip peak over a GRPO step, goal <= the budget
  (HBM less 10 % headroom);
* ``plan_resident_gib_<recipe>_<topology>``: the train state held through the step per chip
  (params + AdamW + reference; with LoRA adapters + AdamW + the frozen base) and the engine's
  weights, the part LoRA shrinks;
* ``plan_longest_fit_<recipe>_<topology>``: the longest transcript that fits (estimate from two
  compiled buckets), goal >= the recipe's 28,768-token cap;
* ``plan_step_tflop_<recipe>``: model FLOPs of one GRPO update (256 rows at the cap), and
  ``plan_step_s_at_40mfu_<recipe>_<topology>`` the time that implies at 40 % MFU;
* ``decode_gib_per_step_<recipe>_<topology>`` and ``decode_roofline_tok_s_<recipe>_<topology>``:
  bytes one decode step reads per chip (bf16 engine weights + a full KV cache) and the HBM
  roofline tokens/s of one engine;
* ``weight_transfer_gib_<recipe>`` / ``weight_transfer_ms_<recipe>_<topology>``: bytes of the
  trainer -> engine transfer in the engine dtype and its time at the interconnect's bandwidth;
* ``decode_bytes_over_ideal_q25`` / ``_q50`` / ``_q100`` (paged engine): bytes one decode step
  reads over the ideal (weights + the live KV) for ragged batches of the engine's slots, one row
  at the cap and the mean fill 25/50/100 % of it; counted from page tables and block sizes
  (``planner.paged_decode_bytes`` says how; ``cost_analysis`` charges a Pallas call for the
  whole pool), with the dense cache's figure beside it;
* ``engine_slots_fit``: rows of the mean transcript (``planner.MEAN_TRANSCRIPT_TOKENS``) the pool
  sized from the budget holds, goal >= 3x the dense cache's 54;
* ``plan_refuses_qwen3_8b_v5e_4``: 1 when the planner refuses the 8B recipe on a v5e-4 (16 GiB
  chips) and names a knob, goal 1.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RECIPES = ("qwen3_4b", "qwen3_8b", "qwen2_5_7b", "granite_4_1_8b")
GiB = 1024**3
DENSE_SLOTS = 54  # the 8B recipe's engine.slots=0 on a v5p-32 with the dense cache (2026-11-28)


def plan(recipe: str, topology: str, out: Path, extra: list[str]) -> tuple[int, dict, str]:
    js = out / f"{recipe}_{topology}.json"
    cmd = [sys.executable, "-m", "prove_jax.plan", "--config", f"configs/runs/{recipe}_prove.yaml",
           "--topology", topology, "--json", str(js), *extra]
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    t = time.perf_counter()
    p = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    print(f"# {recipe} on {topology}: exit {p.returncode} in {time.perf_counter() - t:.0f} s", flush=True)
    print(p.stdout, flush=True)
    tail = "\n".join(line for line in p.stderr.splitlines() if not line.startswith(("W", "I0", "E0")))[-1500:]
    if p.returncode not in (0, 3):
        print(tail, file=sys.stderr)
    return p.returncode, (json.loads(js.read_text()) if js.exists() else {}), p.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--recipes", nargs="*", default=list(RECIPES))
    ap.add_argument("--topologies", nargs="*", default=["v5p-32", "8xh100"])
    ap.add_argument("--skip-refusal", action="store_true")
    ap.add_argument("--tag", default="", help="suffix of every figure name (e.g. _lora16 with lora overrides)")
    ap.add_argument("overrides", nargs="*", help="dotted config overrides for every plan, e.g. lora.rank=16")
    args = ap.parse_args()
    out = Path(tempfile.mkdtemp(prefix="bench_plan_"))
    results: list[str] = []
    for recipe in args.recipes:
        for topo in args.topologies:
            rc, r, _ = plan(recipe, topo, out, args.overrides)
            if not r:
                results.append(f"RESULT plan_ok_{recipe}_{topo} 0 bool goal=1")
                continue
            tag = f"{recipe}_{topo}{args.tag}"
            method = "analytic" if r["method"] == "analytic" else "compiled"
            peak = max(p["peak"] for p in r["phases"])
            results += [
                f"RESULT plan_peak_gib_{tag} {peak / GiB:.2f} GiB({method}) goal=<={r['budget_bytes'] / GiB:.1f}",
                f"RESULT plan_resident_gib_{tag} {sum(r['resident'].values()) / GiB:.2f} GiB({method}) goal=info",
                f"RESULT plan_longest_fit_{tag} {r['longest_fit'] or 0} tokens({method}) goal=>={r['max_tokens']}",
                f"RESULT plan_step_s_at_40mfu_{tag} {r['step_s_at_40']:.1f} s goal=info",
            ]
            if r["decode"]:
                results += [f"RESULT decode_gib_per_step_{tag} {r['decode']['bytes_full'] / GiB:.2f} GiB goal=info",
                            f"RESULT decode_roofline_tok_s_{tag} {r['decode']['tok_s_full']:.0f} tok/s goal=info"]
            if "slots_fit" in r.get("decode", {}):  # a paged engine (planner.paged_decode_bytes)
                d = r["decode"]
                for q in (25, 50, 100):
                    results.append(f"RESULT decode_bytes_over_ideal_q{q}{args.tag} {d[f'paged_over_ideal_q{q}']:.3f} x "
                                   f"goal={'<=1.3' if q == 25 else 'info'} (dense {d[f'dense_over_ideal_q{q}']:.3f})")
                results.append(f"RESULT engine_slots_fit{args.tag} {d['slots_fit']:.0f} slots goal=>={3 * DENSE_SLOTS} "
                               f"(3x the dense {DENSE_SLOTS}; {d['mean_transcript_tokens']:.0f}-token mean transcript)")
            results.append(f"RESULT weight_transfer_ms_{tag} {r['transfer']['seconds_est'] * 1e3:.0f} "
                           f"ms(analytic) goal=info")
            if topo == args.topologies[0]:
                results += [f"RESULT plan_step_tflop_{recipe}{args.tag} {r['flops_per_step'] / 1e12:.0f} TFLOP goal=info",
                            f"RESULT weight_transfer_gib_{recipe}{args.tag} {r['transfer']['bytes_total'] / GiB:.2f} GiB goal=info"]
    if not args.skip_refusal:
        rc, r, text = plan("qwen3_8b", "v5e-4", out, args.overrides)
        named = "Change:" in text
        results.append(f"RESULT plan_refuses_qwen3_8b_v5e_4 {int(rc == 3 and named)} bool goal=1")
    print("\n".join(results))


if __name__ == "__main__":
    main()
