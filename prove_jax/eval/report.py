"""One report for every model evaluated: the paper's Table 3 columns first, then the detail.

A row is one model's results dict ``{"model", "in_domain", "bfcl", "tau2", "teval"}`` (any part
may be missing: that benchmark was not run). ``report.md`` holds

1. the headline table in Table 3's layout — model | BFCL-MT overall | τ² avg | T-Eval — all in
   percent, plus the in-domain success rate;
2. BFCL per category (base, miss_func, miss_param, long_context; overall is their unweighted
   mean, as bfcl's ``data_multi_turn.csv``);
3. τ² per domain (pass^1 … pass^k) with how the user simulator and judge were run;
4. T-Eval per ability (instruct, plan, reason, retrieve, understand, review; overall = mean);
5. in-domain held-out metrics (mean reward and each component, success rate, calls per
   episode, final-state match) for tool and no-call examples;

and ``report.json`` the same numbers, machine-readable.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from prove_jax.eval.bfcl import CATEGORIES, SHORT

TEVAL_ABILITIES = ("instruct", "plan", "reason", "retrieve", "understand", "review")
INDOMAIN_KEYS = ("reward", "val", "cov", "eff", "name", "arg", "success", "calls_per_episode", "final_state_match")


def _pct(x: Any) -> str:
    return "–" if x is None else f"{100 * float(x):.1f}"


def _num(x: Any, digits: int = 3) -> str:
    return "–" if x is None else f"{float(x):.{digits}f}"


def headline(row: Mapping[str, Any]) -> dict[str, float | None]:
    """The Table 3 numbers of one row, as fractions (``None``: not run)."""
    bfcl, tau2, teval, ind = (row.get(k) or {} for k in ("bfcl", "tau2", "teval", "in_domain"))
    return {"bfcl_mt_overall": bfcl.get("overall"), "tau2_avg": tau2.get("avg"), "teval": teval.get("overall"),
            "in_domain_success": (ind.get("tool") or {}).get("success")}


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|",
            *("| " + " | ".join(r) + " |" for r in rows)]


def markdown(rows: Sequence[Mapping[str, Any]], title: str = "Evaluation") -> str:
    out = [f"# {title}", "", "All benchmark numbers in percent. Blank (–): not run for that model.", ""]
    out += _table(["model", "BFCL-MT overall", "τ² avg", "T-Eval", "in-domain success"],
                  [[str(r["model"]), *(_pct(v) for v in headline(r).values())] for r in rows])
    if any(r.get("bfcl") for r in rows):
        out += ["", "## BFCL Multi-Turn (bfcl-eval's data and multi_turn_checker)", ""]
        out += _table(["model", "overall", *(SHORT[c] for c in CATEGORIES), "entries", "steps/entry"],
                      [[str(r["model"]), _pct(r["bfcl"].get("overall")),
                        *(_pct(r["bfcl"]["categories"].get(c, {}).get("accuracy")) for c in CATEGORIES),
                        str(sum(c["total"] for c in r["bfcl"]["categories"].values())),
                        _num(_mean([c["steps_per_entry"] for c in r["bfcl"]["categories"].values()]), 2)]
                       for r in rows if r.get("bfcl")])
    if any(r.get("tau2") for r in rows):
        out += ["", "## τ²-bench (pass^k per domain)", ""]
        ks = sorted({k for r in rows if r.get("tau2") for d in r["tau2"].get("domains", {}).values()
                     for k in d if k.startswith("pass^")}, key=lambda k: int(k.split("^")[1]))
        table_rows = []
        for r in rows:
            for dom, d in (r.get("tau2") or {}).get("domains", {}).items():
                table_rows.append([str(r["model"]), dom, *(_pct(_as_frac(d.get(k))) for k in ks),
                                   str(d.get("n_tasks", "–"))])
        out += _table(["model", "domain", *ks, "tasks"], table_rows)
        notes = {str(r["tau2"].get("note")) for r in rows if r.get("tau2") and r["tau2"].get("note")}
        out += ["", *(f"> {n}" for n in sorted(notes))]
    if any(r.get("teval") for r in rows):
        out += ["", "## T-Eval (six abilities; overall = their mean)", ""]
        out += _table(["model", "overall", *TEVAL_ABILITIES],
                      [[str(r["model"]), _pct(r["teval"].get("overall")),
                        *(_pct(r["teval"].get(a)) for a in TEVAL_ABILITIES)] for r in rows if r.get("teval")])
    if any(r.get("in_domain") for r in rows):
        out += ["", "## In-domain (held-out split, greedy, live servers)", ""]
        table_rows = []
        for r in rows:
            for group in ("tool", "no_call"):
                g = (r.get("in_domain") or {}).get(group)
                if g and g.get("n"):
                    table_rows.append([str(r["model"]), group, str(g["n"]), *(_num(g.get(k)) for k in INDOMAIN_KEYS)])
        out += _table(["model", "examples", "n", *INDOMAIN_KEYS], table_rows)
    return "\n".join(out) + "\n"


def _mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _as_frac(x: Any) -> float | None:
    """τ² numbers arrive in percent (the tau2 summary's scale); the table helper wants fractions."""
    return None if x is None else float(x) / 100.0


def normalise(row: Mapping[str, Any]) -> dict[str, Any]:
    """Put every benchmark on fractions (T-Eval and τ² summaries are on 0-100)."""
    out = dict(row)
    if out.get("teval"):
        t = dict(out["teval"])
        for k in ("overall", *TEVAL_ABILITIES):
            if t.get(k) is not None:
                t[k] = float(t[k]) / 100.0
        out["teval"] = t
    if out.get("tau2") and out["tau2"].get("avg") is not None:
        out["tau2"] = {**out["tau2"], "avg": float(out["tau2"]["avg"]) / 100.0}
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
