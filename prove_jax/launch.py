"""``python -m prove_jax.launch [--config FILE] [key=value ...]`` — the one entry point for runs.

Stages run in order from ``stages``. Implemented so far:

* ``demo`` — the environment stage on its own: starts every configured MCP server through the
  asyncio pool (in-process, stdio subprocesses or HTTP), runs concurrent episodes with a
  schema-aware random policy grounded in each world's live state, and writes a summary (JSON +
  PNG) of calls, success rates, error kinds and latencies.

The synthesis, SFT, GRPO, eval and export stages arrive with their issues; asking for one that does
not exist yet is an error that says so, never a silent no-op.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from prove_jax.config import LaunchConfig, load, to_dict
from prove_jax.env import MCPPool
from prove_jax.env.random_policy import RandomPolicy, ground
from prove_jax.host_memory import configure_host_allocator

STAGES = ("demo",)
PLANNED = ("synth", "tokenizer", "sft", "grpo", "eval", "export")


async def run_demo(cfg: LaunchConfig, out: Path) -> dict[str, Any]:
    from tqdm import tqdm

    env = cfg.env
    kw: dict[str, Any] = {"call_timeout_s": env.call_timeout_s, "max_concurrent_episodes": env.max_concurrent_episodes}
    if env.backend == "stdio":
        kw["n_procs"] = env.n_procs
    if env.backend == "http":
        raise SystemExit("the demo starts its own servers; use backend=inprocess|inprocess-mcp|stdio")
    stats: dict[str, dict[str, Any]] = defaultdict(lambda: {"calls": 0, "ok": 0, "errors": Counter(), "lat": []})
    t0 = time.perf_counter()
    async with MCPPool.from_spec(env.domains, env.backend, **kw) as pool:
        discovery = {d: [n for n, dom in pool.hidden_routes.items() if dom == d and n.startswith(f"{d}_")
                         and not n.startswith(f"{d}_session") and n != f"{d}_server_info"] for d in env.domains}
        bar = tqdm(total=cfg.demo.episodes, desc=f"demo episodes ({env.backend})", unit="ep")
        sem = asyncio.Semaphore(cfg.demo.concurrency)

        async def episode(i: int) -> None:
            domain = env.domains[i % len(env.domains)]
            async with sem, pool.episode([domain], seed=cfg.seed + i) as ep:
                policy = RandomPolicy(ep.tools, seed=cfg.seed * 10_007 + i)
                await ground(ep, policy, [n for n in discovery[domain] if "unique" not in n])
                for _ in range(cfg.demo.calls_per_episode):
                    name, args = policy.next_call()
                    res = await ep.call(name, args)
                    s = stats[domain]
                    s["calls"] += 1
                    s["lat"].append(res.latency_s)
                    if res.is_error:
                        s["errors"][res.error_kind or "tool"] += 1
                    else:
                        s["ok"] += 1
                        policy.observe(res.text)
                    if ep.failed:
                        break
            bar.update(1)

        await asyncio.gather(*(episode(i) for i in range(cfg.demo.episodes)))
        bar.close()
        pool_stats = vars(pool.stats).copy()
    wall = time.perf_counter() - t0
    summary = {
        "stage": "demo",
        "backend": env.backend,
        "wall_s": round(wall, 2),
        "pool": pool_stats,
        "domains": {
            d: {"calls": s["calls"], "ok": s["ok"], "ok_rate": round(s["ok"] / max(1, s["calls"]), 3),
                "errors": dict(s["errors"]), "p50_ms": round(1e3 * statistics.median(s["lat"]), 3),
                "max_ms": round(1e3 * max(s["lat"]), 3)}
            for d, s in sorted(stats.items())
        },
    }
    (out / "demo_summary.json").write_text(json.dumps(summary, indent=2))
    _plot_demo(summary, out / "demo.png")
    return summary


def _plot_demo(summary: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    domains = list(summary["domains"])
    ok = [summary["domains"][d]["ok"] for d in domains]
    err = [summary["domains"][d]["calls"] - summary["domains"][d]["ok"] for d in domains]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar(domains, ok, label="executed ok")
    ax.bar(domains, err, bottom=ok, label="tool error (state-dependent or invalid)")
    ax.set_ylabel("calls")
    ax.set_title(f"random-policy episodes over {summary['backend']} MCP servers")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m prove_jax.launch", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=None, help="YAML run config (default: configs/runs/tiny_cpu.yaml)")
    parser.add_argument("overrides", nargs="*", help="dotted overrides, e.g. env.backend=stdio demo.episodes=100")
    args = parser.parse_args(argv)
    configure_host_allocator()  # XLA:CPU step temporaries stay mapped between steps (host_memory.py)
    default = Path(__file__).resolve().parent.parent / "configs" / "runs" / "tiny_cpu.yaml"
    path = args.config or (default if default.exists() else None)
    cfg = load(LaunchConfig, path, args.overrides)
    unknown = [s for s in cfg.stages if s not in STAGES]
    if unknown:
        planned = [s for s in unknown if s in PLANNED]
        raise SystemExit(f"stages {unknown} are not implemented yet"
                         + (f" ({planned} arrive with the trainer issues)" if planned else ""))
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(to_dict(cfg), indent=2))
    results: dict[str, Any] = {}
    if "demo" in cfg.stages:
        results["demo"] = asyncio.run(run_demo(cfg, out))
        d = results["demo"]
        print(f"\nRan: the server/pool demo (the trainer stages are not built yet) — {d['pool']['calls']} tool calls "
              f"in {d['pool']['episodes_opened']} episodes over {cfg.env.backend} MCP servers "
              f"({', '.join(cfg.env.domains)}) in {d['wall_s']} s.")
        for dom, s in d["domains"].items():
            print(f"  {dom:<11} calls {s['calls']:4d}  ok {s['ok_rate']:.0%}  p50 {s['p50_ms']:.2f} ms  errors {s['errors']}")
        print(f"Wrote {out / 'demo_summary.json'} and {out / 'demo.png'}")
    return results


if __name__ == "__main__":
    main()
