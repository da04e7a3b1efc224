"""The ``demo`` stage: the environment on its own (servers + pool + a grounded random policy).

Starts every configured MCP server through the asyncio pool (in-process, stdio subprocesses or
HTTP), runs concurrent episodes with a schema-aware random policy grounded in each world's live
state, and writes a summary (JSON + PNG) of calls, success rates, error kinds and latencies.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from prove_jax.config import LaunchConfig
from prove_jax.env import MCPPool
from prove_jax.env.random_policy import RandomPolicy, ground


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
