"""One report for every model evaluated: the paper's Table 3 columns first, then the detail.

A row is one model's results dict ``{"model", "in_domain", <benchmark name>: result, ...}`` (any
part may be missing: that benchmark was not run). ``report.md`` holds

1. the headline table in Table 3's layout — model | each registered benchmark's headline column
   (BFCL-MT overall | τ² avg | T-Eval) — all in percent, plus the in-domain success rate;
2. each benchmark's own detail section, in registry order (:mod:`prove_jax.eval.benchmarks`:
   BFCL per category, τ² pass^k per domain with how user simulator and judge were run, T-Eval
   per ability), and a note per benchmark that failed;
3. in-domain held-out metrics (mean reward and each component, success rate, calls per
   episode, final-state match) for tool and no-call examples; ``reward`` is the paper's (the
   yardstick of every run), and a run trained on another reward adds ``train_reward`` beside it;

and ``report.json`` the same numbers, machine-readable. The columns come from the registry, so a
new benchmark reports itself; the in-domain part is the launcher's own eval and lives here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from prove_jax.eval import benchmarks as _registered  # noqa: F401 - registers the benchmarks
from prove_jax.eval.benchmarks import TEVAL_ABILITIES  # noqa: F401 - re-exported (report.TEVAL_ABILITIES)
from prove_jax.eval.markdown import num, pct, table
from prove_jax.eval.registry import all_benchmarks
from prove_jax.rewards import PAPER_COMPONENTS

INDOMAIN_KEYS = ("reward", *PAPER_COMPONENTS, "success", "calls_per_episode", "final_state_match")


def headline(row: Mapping[str, Any]) -> dict[str, float | None]:
    """The Table 3 numbers of one (normalised) row, as fractions (``None``: not run)."""
    out = {key: fn(row.get(b.name) or {}) for b in all_benchmarks() for key, _, fn in [b.headline]}
    out["in_domain_success"] = ((row.get("in_domain") or {}).get("tool") or {}).get("success")
    return out


def markdown(rows: Sequence[Mapping[str, Any]], title: str = "Evaluation") -> str:
    benches = all_benchmarks()
    out = [f"# {title}", "", "All benchmark numbers in percent. Blank (–): not run for that model.", ""]
    out += table(["model", *(b.headline[1] for b in benches), "in-domain success"],
                 [[str(r["model"]), *(pct(v) for v in headline(r).values())] for r in rows])
    for b in benches:
        ran = [(str(r["model"]), r[b.name]) for r in rows if r.get(b.name)]
        if ran:
            out += b.section(ran)
            out += [f"> {b.name} failed for {m}: {res['error']}" for m, res in ran if res.get("error")]
    if any(r.get("in_domain") for r in rows):
        out += ["", "## In-domain (held-out split, greedy, live servers)", ""]
        groups = [(str(r["model"]), group, g) for r in rows for group in ("tool", "no_call")
                  if (g := (r.get("in_domain") or {}).get(group)) and g.get("n")]
        keys = INDOMAIN_KEYS
        if any("train_reward" in g for _, _, g in groups):
            keys = (keys[0], "train_reward", *keys[1:])
            out += ["`reward`: the paper's reward, the yardstick every run is evaluated on; `train_reward`: the "
                    "run's own training reward (its `reward:` section), which differs from the paper's.", ""]
        out += table(["model", "examples", "n", *keys],
                     [[m, group, str(g["n"]), *(num(g.get(k)) for k in keys)] for m, group, g in groups])
    return "\n".join(out) + "\n"


def normalise(row: Mapping[str, Any]) -> dict[str, Any]:
    """Put every benchmark on fractions (each benchmark says how: T-Eval and τ² report 0-100)."""
    out = dict(row)
    for b in all_benchmarks():
        if out.get(b.name) and not out[b.name].get("error"):
            out[b.name] = b.normalise(out[b.name])
    return out


def write_report(rows: Sequence[Mapping[str, Any]], out_dir: str | Path, title: str = "Evaluation") -> Path:
    """Write ``report.md`` and ``report.json`` (rows as given, plus each row's headline)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    norm = [normalise(r) for r in rows]
    (out / "report.md").write_text(markdown(norm, title))
    (out / "report.json").write_text(json.dumps(
        {"rows": [{**r, "headline": headline(n)} for r, n in zip(rows, norm, strict=True)]}, indent=2, default=str))
    return out / "report.md"
