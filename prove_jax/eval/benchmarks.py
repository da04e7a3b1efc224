"""The registered benchmarks: BFCL Multi-Turn, τ²-bench and T-Eval, each one :func:`register` call.

Each entry adapts its module (:mod:`~prove_jax.eval.bfcl`, :mod:`~prove_jax.eval.tau2`,
:mod:`~prove_jax.eval.teval`) to the registry: runner, headline column and detail section of the
report, how its numbers become fractions, what its subcommand prints. Registration order is the
report's order (Table 3: BFCL-MT, τ² avg, T-Eval). Adding a benchmark: its module plus one
``register(Benchmark(...))`` here.

The runtime modules are imported inside the runners, not at the top: the launcher's config builds
``BenchmarksConfig`` from these entries, and importing a config must not start bfcl's executor
machinery or τ²'s subprocess driver (only the settings, :mod:`prove_jax.eval.settings`, are needed).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from prove_jax.eval.markdown import mean, num, pct, table
from prove_jax.eval.registry import Benchmark, Result, Rows, RunContext, register
from prove_jax.eval.settings import CATEGORIES, SHORT, BfclConfig, Tau2Config, TevalConfig

TEVAL_ABILITIES = ("instruct", "plan", "reason", "retrieve", "understand", "review")


# ---- BFCL Multi-Turn ------------------------------------------------------------------------------
async def _run_bfcl(cfg: BfclConfig, ctx: RunContext) -> Result:
    from prove_jax.eval import bfcl

    return await bfcl.evaluate(ctx.client, ctx.out_dir, ctx.name, cfg, progress=ctx.progress)


def _bfcl_section(rows: Rows) -> list[str]:
    def cats(r: Mapping[str, Any]) -> dict[str, Any]:
        return dict(r.get("categories") or {})

    out = ["", "## BFCL Multi-Turn (bfcl-eval's data and multi_turn_checker)", ""]
    return out + table(
        ["model", "overall", *(SHORT[c] for c in CATEGORIES), "entries", "steps/entry"],
        [[m, pct(r.get("overall")), *(pct(cats(r).get(c, {}).get("accuracy")) for c in CATEGORIES),
          str(sum(c["total"] for c in cats(r).values())),
          num(mean([c["steps_per_entry"] for c in cats(r).values()]), 2)] for m, r in rows])


def _bfcl_brief(s: Mapping[str, Any]) -> Result:
    return ({c: round(v["accuracy"] * 100, 2) for c, v in s["categories"].items()}
            | {"overall": round(s["overall"] * 100, 2), "wall_s": s["wall_s"]})


def _bfcl_root(out_dir: Path) -> Path:
    from prove_jax.eval import bfcl

    return bfcl.bfcl_root(out_dir)


def _bfcl_oracle() -> Any:
    from prove_jax.eval import bfcl

    return bfcl.oracle()


register(Benchmark(
    name="bfcl", title="BFCL Multi-Turn through bfcl-eval", settings=BfclConfig,
    suite_default=BfclConfig(), cli_default=BfclConfig(enabled=True),  # eval all: on unless --no-bfcl
    run=_run_bfcl,
    headline=("bfcl_mt_overall", "BFCL-MT overall", lambda r: r.get("overall")),
    section=_bfcl_section, brief=_bfcl_brief,
    prepare=_bfcl_root,  # BFCL_PROJECT_ROOT under --out, before bfcl_eval is imported anywhere
    oracle=_bfcl_oracle))


# ---- τ²-bench -------------------------------------------------------------------------------------
async def _run_tau2(cfg: Tau2Config, ctx: RunContext) -> Result:
    from prove_jax.eval import tau2

    if cfg.runner == "native":
        from prove_jax.eval import tau2_run

        return await tau2_run.run_suite(cfg, ctx)
    if ctx.url is None:
        raise ValueError("τ² needs the policy over HTTP (serve it, or pass --url)")
    # the agent is the policy under evaluation; user simulator and judge default to it (Tau2Config.user)
    run = dataclasses.replace(cfg, agent_model=ctx.served_name or ctx.name, agent_base_url=ctx.url)
    return await asyncio.to_thread(tau2.run_tau2, run, ctx.out_dir)


def _as_frac(x: Any) -> float | None:
    """τ² numbers arrive in percent (the tau2 summary's scale); the table cells want fractions."""
    return None if x is None else float(x) / 100.0


def _tau2_section(rows: Rows) -> list[str]:
    out = ["", "## τ²-bench (pass^k per domain)", ""]
    ks = sorted({k for _, r in rows for d in (r.get("domains") or {}).values() for k in d if k.startswith("pass^")},
                key=lambda k: int(k.split("^")[1]))
    cells = [[m, dom, *(pct(_as_frac(d.get(k))) for k in ks), str(d.get("n_tasks", "–"))]
             for m, r in rows for dom, d in (r.get("domains") or {}).items()]
    out += table(["model", "domain", *ks, "tasks"], cells)
    notes = {str(r["note"]) for _, r in rows if r.get("note")}
    return [*out, "", *(f"> {n}" for n in sorted(notes))]


def _tau2_normalise(r: Mapping[str, Any]) -> Result:
    return {**r, "avg": _as_frac(r["avg"])} if r.get("avg") is not None else dict(r)


def _tau2_main(argv: list[str]) -> int:
    """``eval tau2``: the native harness on the wheels' data and servers (:mod:`~prove_jax.eval.tau2_run`);
    the tau2-CLI recipe stays ``python -m prove_jax.eval.tau2`` (the suite's runner above)."""
    from prove_jax.eval import tau2_run

    return tau2_run.main(argv)


def _tau2_oracle() -> Any:
    from prove_jax.eval import tau2_run

    return tau2_run.Tau2Oracle()


register(Benchmark(
    name="tau2", title="τ²-bench, native and offline (see python -m prove_jax.eval tau2 --help)",
    settings=Tau2Config, suite_default=Tau2Config(domains=()), run=_run_tau2,
    headline=("tau2_avg", "τ² avg", lambda r: r.get("avg")), section=_tau2_section, normalise=_tau2_normalise,
    needs_url=lambda cfg: cfg.runner != "native", suite_skip=("agent_model", "agent_base_url"),  # the suite points them at the policy
    main=_tau2_main, oracle=_tau2_oracle))


# ---- T-Eval ---------------------------------------------------------------------------------------
async def _run_teval(cfg: TevalConfig, ctx: RunContext) -> Result:
    from prove_jax.eval.teval import build_embedder, run_teval

    if not cfg.data:
        raise ValueError("T-Eval needs data: a directory holding T-Eval's JSON files")
    if not cfg.embedder:
        raise ValueError("T-Eval needs an embedder: a local all-mpnet-base-v2 directory")
    return await run_teval(ctx.client, cfg.data, out_dir=ctx.out_dir, embedder=build_embedder(cfg.embedder),
                           limit=cfg.limit, concurrency=cfg.concurrency, subset=cfg.subset, progress=ctx.progress)


def _teval_section(rows: Rows) -> list[str]:
    out = ["", "## T-Eval (six abilities; overall = their mean)", ""]
    return out + table(["model", "overall", *TEVAL_ABILITIES],
                       [[m, pct(r.get("overall")), *(pct(r.get(a)) for a in TEVAL_ABILITIES)] for m, r in rows])


def _teval_normalise(r: Mapping[str, Any]) -> Result:
    """T-Eval reports 0-100; the report holds fractions."""
    return {**r, **{k: float(r[k]) / 100.0 for k in ("overall", *TEVAL_ABILITIES) if r.get(k) is not None}}


register(Benchmark(
    name="teval", title="T-Eval from its data files", settings=TevalConfig, suite_default=TevalConfig(),
    run=_run_teval, headline=("teval", "T-Eval", lambda r: r.get("overall")), section=_teval_section,
    normalise=_teval_normalise, brief=lambda r: {k: r.get(k) for k in ("overall", *TEVAL_ABILITIES)},
    required=("data", "embedder")))
