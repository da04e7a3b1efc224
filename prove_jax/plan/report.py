"""The planner's table and JSON: per program per-device bytes, per phase the peak against HBM."""

from __future__ import annotations

import dataclasses
from typing import Any

from prove_jax.plan.planner import PlanReport
from prove_jax.plan.topology import GiB


def _g(b: float) -> str:
    return f"{b / GiB:8.3f}"


def format_report(r: PlanReport) -> str:
    t = r.topology
    lines = [
        f"plan: {r.run} on {t.name} ({t.chips} x {t.chip.kind}, {t.hosts} host(s), HBM {r.hbm / GiB:.1f} GiB/chip) "
        f"- {r.method}",
        f"model: {r.model}",
        "",
        f"{'program':<22}{'args GiB':>9}{'temp GiB':>9}{'out GiB':>9}{'live GiB':>9}{'TFLOP':>10}{'compile s':>10}  note",
    ]
    for p in r.programs:
        lines.append(f"{p.name:<22}{_g(p.arguments):>9}{_g(p.temporaries):>9}{_g(p.outputs):>9}{_g(p.live):>9}"
                     f"{p.flops / 1e12:10.1f}{p.compile_s:10.1f}  {p.note}")
    lines += ["", "resident per device: " + ", ".join(f"{k} {v / GiB:.2f} GiB" for k, v in r.resident.items()), "",
              f"{'phase':<10}{'program':<22}{'resident':>9}{'live':>9}{'peak GiB':>9}  vs budget {r.budget / GiB:.1f}"]
    for ph in r.phases:
        flag = "ok" if ph.peak <= r.budget else "DOES NOT FIT"
        lines.append(f"{ph.name:<10}{ph.program:<22}{_g(ph.resident):>9}{_g(ph.live):>9}{_g(ph.peak):>9}  {flag}")
    peak = r.peak
    lines += ["", f"peak: {peak.peak / GiB:.2f} GiB per device in {peak.name} ({peak.program}); "
                  f"{'fits' if r.fits else 'does NOT fit'} ({peak.peak / r.hbm:.0%} of HBM)",
              f"transcripts: planned at {r.max_tokens} tokens; longest that fits (estimate): "
              f"{r.longest_fit if r.longest_fit is not None else 'n/a'}",
              f"update FLOPs per GRPO step (all rows at the planned length): {r.flops_per_step:.3e}; "
              f"at 40% MFU {r.step_s_at_40:.1f} s"]
    if r.decode:
        d = r.decode
        lines.append(f"decode: {d['bytes_full'] / GiB:.2f} GiB read per step per chip with full rows "
                     f"({d['bytes_quarter'] / GiB:.2f} at a quarter) -> HBM roofline {d['tok_s_full']:.0f} "
                     f"({d['tok_s_quarter']:.0f}) tokens/s per engine")
    if r.decode and "slots_fit" in r.decode:
        d = r.decode
        ratios = ", ".join(f"{q}% {d[f'paged_over_ideal_q{q}']:.2f}x (dense {d[f'dense_over_ideal_q{q}']:.2f}x)"
                           for q in (25, 50, 100))
        lines.append(f"paged decode: bytes per step over the ideal (weights + live KV), one row at the cap, mean "
                     f"fill {ratios}; the pool holds {d['pool_tokens']:.0f} tokens = {d['slots_fit']:.0f} rows of "
                     f"the {d['mean_transcript_tokens']:.0f}-token mean transcript")
    if r.transfer:
        x = r.transfer
        lines.append(f"weight transfer: {x['bytes_total'] / GiB:.2f} GiB in the engine dtype, "
                     f"{x['bytes_per_chip'] / GiB:.2f} GiB per chip, ~{x['seconds_est'] * 1e3:.0f} ms at the "
                     "interconnect's bandwidth (estimate)")
    lines += [f"note: {n}" for n in r.notes]
    refusal = r.refusal()
    if refusal:
        lines.append(refusal)
    return "\n".join(lines)


def to_json(r: PlanReport) -> dict[str, Any]:
    return {
        "run": r.run, "topology": r.topology.name, "chips": r.topology.chips, "method": r.method, "model": r.model,
        "hbm_bytes": r.hbm, "budget_bytes": r.budget, "fits": r.fits, "refusal": r.refusal(),
        "programs": [dataclasses.asdict(p) | {"live": p.live} for p in r.programs],
        "phases": [dataclasses.asdict(p) | {"peak": p.peak} for p in r.phases],
        "resident": r.resident, "max_tokens": r.max_tokens, "longest_fit": r.longest_fit,
        "flops_per_step": r.flops_per_step, "step_s_at_40": r.step_s_at_40, "decode": r.decode,
        "transfer": r.transfer, "notes": r.notes,
    }
