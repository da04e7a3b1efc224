"""``python -m prove_jax.eval {bfcl,teval,tau2,all} ...`` — the paper's evaluations with one command.

  bfcl   BFCL Multi-Turn (base, miss_func, miss_param, long_context) through bfcl-eval's checker
  teval  T-Eval's six abilities from its data files (``--data DIR``)
  tau2   τ²-bench through the user's ``tau2`` CLI against OpenAI-compatible endpoints
  all    in-domain held-out eval + BFCL + (given data) T-Eval and τ² for one or more ``--model``
         directories, then ``report.md`` / ``report.json`` in the paper's Table 3 layout

The policy is ``--model DIR`` (an HF directory or a training checkpoint, run on the JAX engine in
this process) or, for bfcl/teval, ``--url http://host:port/v1 --served-model NAME`` (any
OpenAI-compatible server, e.g. ``python -m prove_jax.serve``).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from prove_jax.serve.load import add_engine_args, engine_config


def _policy_args(p: argparse.ArgumentParser, *, multiple: bool = False) -> None:
    if multiple:
        p.add_argument("--model", action="append", required=True, help="model dir (repeat: one report row each)")
    else:
        p.add_argument("--model", default=None, help="HF directory or training run/stage/checkpoints directory")
        p.add_argument("--url", default=None, help="an OpenAI-compatible /v1 URL instead of --model")
        p.add_argument("--served-model", default=None, help="model name at --url")
    p.add_argument("--name", action="append", default=None, help="display name per --model (default: dir name)")
    add_engine_args(p, slots=16, max_len=16384)
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--mesh", default=None, help="mesh spec, e.g. 'tensor=2' (default: one device)")
    p.add_argument("--concurrency", type=int, default=32, help="benchmark items in flight")
    p.add_argument("--out", default="runs/eval", help="output directory")


async def _with_policy(args: argparse.Namespace, fn: Any) -> Any:
    """Run ``fn(client, name)`` with the policy ``args`` name (engine in-process, or a URL)."""
    from prove_jax.serve import EngineChat, OpenAIChat, load_policy

    if args.url:
        if not args.served_model:
            raise SystemExit("--url needs --served-model")
        async with OpenAIChat(args.url, args.served_model) as client:
            return await fn(client, args.served_model)
    if not args.model:
        raise SystemExit("give --model DIR or --url URL")
    name = args.name[0] if args.name else None
    policy = load_policy(args.model, dtype=args.dtype, mesh=args.mesh, name=name)
    engine = policy.engine(engine_config(args))
    async with engine:
        return await fn(EngineChat(engine, policy.template, policy.tokenizer), policy.name)


def cmd_bfcl(args: argparse.Namespace) -> dict[str, Any]:
    from prove_jax.eval import bfcl

    cfg = bfcl.BfclConfig(categories=tuple(args.categories), limit=args.limit, max_tokens=args.max_tokens,
                          concurrency=args.concurrency, workers=args.workers)
    out = Path(args.out)
    bfcl.bfcl_root(out)
    summary = asyncio.run(_with_policy(args, lambda client, name: bfcl.evaluate(client, out, name, cfg)))
    print(json.dumps({c: round(v["accuracy"] * 100, 2) for c, v in summary["categories"].items()}
                     | {"overall": round(summary["overall"] * 100, 2), "wall_s": summary["wall_s"]}))
    return summary


def cmd_teval(args: argparse.Namespace) -> dict[str, Any]:
    from prove_jax.eval.teval import build_embedder, run_teval

    embedder = build_embedder(args.embedder)
    res = asyncio.run(_with_policy(args, lambda client, name: run_teval(
        client, args.data, out_dir=Path(args.out), embedder=embedder, limit=args.limit,
        concurrency=args.concurrency, subset=args.subset)))
    print(json.dumps({k: res.get(k) for k in ("overall", "instruct", "plan", "reason", "retrieve", "understand",
                                               "review")}))
    return res


def cmd_all(args: argparse.Namespace) -> Path:
    from prove_jax.eval.report import write_report
    from prove_jax.eval.suite import BenchmarksConfig
    from prove_jax.pipeline.context import write_json

    bench = BenchmarksConfig(
        bfcl=not args.no_bfcl, bfcl_limit=args.bfcl_limit, bfcl_max_tokens=args.max_tokens,
        teval_data=args.teval_data, teval_embedder=args.teval_embedder, teval_limit=args.teval_limit,
        tau2_domains=tuple(args.tau2_domains or ()), tau2_trials=args.tau2_trials, tau2_user_url=args.tau2_user_url,
        tau2_user_model=args.tau2_user_model, tau2_num_tasks=args.tau2_num_tasks,
        tau2_executable=args.tau2_executable, tau2_python=args.tau2_python, concurrency=args.concurrency)
    out = Path(args.out)
    rows = []
    names = args.name or []
    for i, model_dir in enumerate(args.model):
        row = evaluate_model(model_dir, names[i] if i < len(names) else None, out, bench, args)
        write_json(out / row["model"] / "results.json", row)
        rows.append(row)
    path = write_report(rows, out)
    print(path.read_text())
    return path


def evaluate_model(model_dir: str, name: str | None, out: Path, bench: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Every evaluation of one model directory; returns its report row."""
    from prove_jax.eval import bfcl
    from prove_jax.eval.suite import run_benchmarks, served
    from prove_jax.serve import EngineChat, OpenAIChat, load_policy

    policy = load_policy(model_dir, dtype=args.dtype, mesh=args.mesh, name=name)
    engine = policy.engine(engine_config(args))
    chat = EngineChat(engine, policy.template, policy.tokenizer)
    mdir = out / policy.name
    if bench.bfcl:
        bfcl.bfcl_root(out)
    row: dict[str, Any] = {"model": policy.name, "source": policy.source}

    async def in_process() -> None:
        async with engine:
            if args.data:
                row["in_domain"] = await in_domain(engine, policy, args)
            local = dataclasses.replace(bench, tau2_domains=())  # τ² needs HTTP: served below
            if local.any:
                row.update(await run_benchmarks(chat, policy.name, mdir, local))

    asyncio.run(in_process())
    if bench.tau2_domains:
        with served(engine, chat, policy.name) as url:
            async def tau() -> dict[str, Any]:
                async with OpenAIChat(url, policy.name) as client:
                    only = dataclasses.replace(bench, bfcl=False, teval_data=None)
                    return await run_benchmarks(client, policy.name, mdir, only, url=url, served_name=policy.name)

            row.update(asyncio.run(tau()))
    return row


async def in_domain(engine: Any, policy: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The held-out split of a synthesized dataset, greedy, against in-process live servers."""
    from prove_jax.env import EpisodeConfig, MCPPool
    from prove_jax.eval.indomain import EvalConfig, evaluate
    from prove_jax.loaders import load_split

    examples = load_split(args.data, args.split, None, limit=args.indomain_limit)
    domains = sorted({s for ex in examples for s in ex["servers"]})
    episode = EpisodeConfig(max_tokens=engine.config.max_len)
    async with MCPPool.from_spec(domains, "inprocess") as pool:
        return await evaluate(engine, pool, examples, policy.template, policy.tokenizer, episode,
                              EvalConfig(split=args.split, max_new_tokens=args.max_tokens))


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m prove_jax.eval", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bfcl", help="BFCL Multi-Turn through bfcl-eval")
    _policy_args(b)
    from prove_jax.eval.bfcl import CATEGORIES

    b.add_argument("--categories", nargs="+", default=list(CATEGORIES), choices=CATEGORIES)
    b.add_argument("--limit", type=int, default=None, help="first N entries per category")
    b.add_argument("--max-tokens", type=int, default=1024, help="per assistant message")
    b.add_argument("--workers", type=int, default=2, help="executor processes")
    t = sub.add_parser("teval", help="T-Eval from its data files")
    _policy_args(t)
    t.add_argument("--data", required=True, help="directory with T-Eval's JSON files")
    t.add_argument("--embedder", required=True, help="local sentence-embedding model dir (all-mpnet-base-v2)")
    t.add_argument("--limit", type=int, default=None, help="first N samples per file")
    t.add_argument("--subset", action="store_true", help="use the *_subset files")
    sub.add_parser("tau2", help="τ²-bench via the tau2 CLI (see python -m prove_jax.eval tau2 --help)",
                   add_help=False)
    a = sub.add_parser("all", help="every evaluation for one or more models, one report")
    _policy_args(a, multiple=True)
    a.add_argument("--data", default=None, help="synthesized dataset dir for the in-domain eval")
    a.add_argument("--split", default="test")
    a.add_argument("--indomain-limit", type=int, default=None)
    a.add_argument("--max-tokens", type=int, default=1024)
    a.add_argument("--no-bfcl", action="store_true")
    a.add_argument("--bfcl-limit", type=int, default=None)
    a.add_argument("--teval-data", default=None)
    a.add_argument("--teval-embedder", default=None)
    a.add_argument("--teval-limit", type=int, default=None)
    a.add_argument("--tau2-domains", nargs="*", default=None)
    a.add_argument("--tau2-trials", type=int, default=4)
    a.add_argument("--tau2-user-url", default=None)
    a.add_argument("--tau2-user-model", default=None)
    a.add_argument("--tau2-num-tasks", type=int, default=None)
    a.add_argument("--tau2-executable", default="tau2", help="the tau2 CLI (installed from its repository)")
    a.add_argument("--tau2-python", default=None, help="run tau2 as `PY -m tau2.cli` (another venv)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> Any:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["tau2"]:
        from prove_jax.eval import tau2

        raise SystemExit(tau2.main(argv[1:]))
    args = parse(argv)
    from prove_jax.host_memory import configure_host_allocator

    configure_host_allocator()
    return {"bfcl": cmd_bfcl, "teval": cmd_teval, "all": cmd_all}[args.cmd](args)


if __name__ == "__main__":
    main()
