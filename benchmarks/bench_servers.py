"""Server throughput: every domain mixed, and the kit vs a bare MCPServer per transport, in one run.

    python benchmarks/bench_servers.py [--calls 2000] [--domain banking] [--episodes 400]

Mixed workload (the issue's figures): episodes round-robin over every registered domain, each
replaying that domain's smoke scenario (every user tool, reads and writes, all succeeding) in a fresh
session — in-process through the kit's dispatcher and through the rollout pool, and over stdio (one
server process per domain, 16 episodes in flight, the pool's stdio backend). Reported: calls/s, p50
and p99 latency per call, and memory per open session (tracemalloc: a fresh session, and one after
its whole scenario ran), which bounds how many episodes one host can keep open.

For each transport (in-process, stdio, HTTP) it measures sequential calls/s with p50/p99 latency and
concurrent calls/s (16 in flight, what the rollout pool does), for (a) a kit domain tool that does
real state work and (b) the reference: a bare ``MCPServer`` with one trivial tool over the same
transport. The ratio kit/bare shows the kit's overhead on top of the SDK. Processes are pinned:
the client to CPU 0, server subprocesses to CPU 1 ("one core" each), when the machine has two.
Also: session open+close per second (direct and through the pool).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from prove_jax.env import InProcessBackend, MCPPool  # noqa: E402
from prove_jax.env.backends import StdioBackend  # noqa: E402
from servers import DOMAINS  # noqa: E402
from servers.kit import SESSION_META_KEY, DomainRuntime  # noqa: E402
from servers.kit.cli import load_domain_runtime  # noqa: E402
from servers.kit.mcp_adapter import build_server  # noqa: E402
from tests.servers.harness import free_port, record_smoke, start_http_server  # noqa: E402

CPUS = sorted(os.sched_getaffinity(0))
SERVER_CPU = CPUS[1] if len(CPUS) > 1 else CPUS[0]


def pin_self() -> None:
    os.sched_setaffinity(0, {CPUS[0]})


def taskset(cmd: list[str]) -> list[str]:
    return ["taskset", "-c", str(SERVER_CPU), *cmd]


async def measure(call: Callable[[], Awaitable[Any]], n: int, concurrency: int = 16) -> dict[str, float]:
    for _ in range(min(50, n)):
        await call()
    lat = []
    t0 = time.perf_counter()
    for _ in range(n):
        s = time.perf_counter()
        await call()
        lat.append(time.perf_counter() - s)
    seq = n / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    for _ in range(max(1, n // concurrency)):
        await asyncio.gather(*(call() for _ in range(concurrency)))
    conc = (n // concurrency) * concurrency / (time.perf_counter() - t0)
    lat.sort()
    return {"seq": seq, "conc": conc, "p50_ms": 1e3 * statistics.median(lat), "p99_ms": 1e3 * lat[int(0.99 * len(lat))]}


def kit_call(client: Client, account: str) -> Callable[[], Awaitable[Any]]:
    meta = {SESSION_META_KEY: {"id": "bench", "seed": 0}}
    return lambda: client.call_tool("get_account_balance", {"account_id": account}, meta=meta)


def bare_call(client: Client) -> Callable[[], Awaitable[Any]]:
    return lambda: client.call_tool("ping", {"account_id": "ACC-0001"})


def row(label: str, m: dict[str, float]) -> None:
    print(f"{label:<34} seq {m['seq']:8.0f}/s  conc {m['conc']:8.0f}/s  p50 {m['p50_ms']:6.2f} ms  "
          f"p99 {m['p99_ms']:6.2f} ms")


def _median(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


async def run_transport(name: str, kit_target: Any, bare_target: Any, n: int, rounds: int = 3
                        ) -> tuple[dict, dict]:
    """Kit and bare measured alternately over ``rounds`` (medians), so load drifts hit both alike."""
    kit_runs, bare_runs = [], []
    async with Client(kit_target, cache=None) as kit, Client(bare_target, cache=None) as bare:
        for _ in range(rounds):
            kit_runs.append(await measure(kit_call(kit, "ACC-0001"), n // rounds))
            bare_runs.append(await measure(bare_call(bare), n // rounds))
    k, b = _median(kit_runs), _median(bare_runs)
    row(f"{name}: kit (banking)", k)
    row(f"{name}: bare MCPServer", b)
    return k, b


def _lat(lat: list[float]) -> tuple[float, float]:
    lat = sorted(lat)
    return 1e3 * statistics.median(lat), 1e3 * lat[int(0.99 * (len(lat) - 1))]


async def mixed(episodes: int) -> None:
    """Every domain's smoke scenario as episodes, round robin: in-process, pool, stdio; memory."""
    import tracemalloc

    scripts = {d: record_smoke(d) for d in DOMAINS}
    plan = [DOMAINS[i % len(DOMAINS)] for i in range(episodes)]
    n_calls = sum(len(scripts[d]) for d in plan)
    print(f"mixed workload: {len(DOMAINS)} domains, {episodes} episodes, {n_calls} calls "
          f"({n_calls / episodes:.1f} per episode)")

    runtimes = {d: DomainRuntime(load_domain_runtime(d).domain) for d in DOMAINS}
    for d in DOMAINS:
        runtimes[d].sessions.world(0)
    lat: list[float] = []
    t0 = time.perf_counter()
    for i, d in enumerate(plan):
        rt, sid = runtimes[d], f"e{i}"
        for name, args in scripts[d]:
            s = time.perf_counter()
            rt.call(name, args, sid, 0)
            lat.append(time.perf_counter() - s)
        rt.sessions.close(sid)
    direct = n_calls / (time.perf_counter() - t0)
    p50, p99 = _lat(lat)
    print(f"in-process kit dispatch, mixed: {direct:8.0f} calls/s  p50 {p50:.2f} ms  p99 {p99:.2f} ms")

    async def through(pool: MCPPool, concurrency: int) -> tuple[float, list[float]]:
        lat: list[float] = []
        queue = list(plan)

        async def worker() -> None:
            while queue:
                d = queue.pop()
                async with pool.episode([d], seed=0) as ep:
                    for name, args in scripts[d]:
                        s = time.perf_counter()
                        await ep.call(name, args)
                        lat.append(time.perf_counter() - s)

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return n_calls / (time.perf_counter() - t0), lat

    async with MCPPool({d: InProcessBackend(d, runtime=runtimes[d]) for d in DOMAINS}) as pool:
        pooled, lat = await through(pool, 16)
    p50p, p99p = _lat(lat)
    print(f"in-process rollout pool, mixed:  {pooled:8.0f} calls/s  p50 {p50p:.2f} ms  p99 {p99p:.2f} ms")

    async with MCPPool({d: StdioBackend(d) for d in DOMAINS}, call_timeout_s=60) as pool:
        await through(pool, 16)  # warm: every process up, worlds built
        stdio, lat = await through(pool, 16)
    p50s, p99s = _lat(lat)
    print(f"stdio (1 process per domain), mixed: {stdio:8.0f} calls/s  p50 {p50s:.2f} ms  p99 {p99s:.2f} ms")

    fresh, used = {}, {}
    for d in DOMAINS:
        rt = runtimes[d]
        k = 200
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        for i in range(k):
            rt.sessions.open(f"m{i}", 0)
        fresh[d] = (tracemalloc.get_traced_memory()[0] - base) / k
        for i in range(k):
            for name, args in scripts[d]:
                rt.call(name, args, f"m{i}", 0)
        used[d] = (tracemalloc.get_traced_memory()[0] - base) / k
        tracemalloc.stop()
        for i in range(k):
            rt.sessions.close(f"m{i}")
    for d in DOMAINS:
        print(f"  memory per session {d:<15} fresh {fresh[d] / 1024:6.1f} KiB   after its scenario "
              f"{used[d] / 1024:7.1f} KiB")
    mean_fresh = statistics.mean(fresh.values()) / 1024
    mean_used = statistics.mean(used.values()) / 1024
    print(f"RESULT servers_mixed_inprocess_calls_per_s {direct:.0f} 1/s goal=2000")
    print(f"RESULT servers_mixed_pool_calls_per_s {pooled:.0f} 1/s goal=none")
    print(f"RESULT servers_mixed_stdio_calls_per_s {stdio:.0f} 1/s goal=500")
    print(f"RESULT servers_mixed_inprocess_p99_ms {p99:.2f} ms goal=none")
    print(f"RESULT servers_mixed_stdio_p99_ms {p99s:.2f} ms goal=none")
    print(f"RESULT servers_session_memory_fresh_kib {mean_fresh:.1f} KiB goal=none")
    print(f"RESULT servers_session_memory_after_scenario_kib {mean_used:.1f} KiB goal=none")


async def main(n: int, domain: str, episodes: int) -> None:
    pin_self()
    await mixed(episodes)
    results: dict[str, tuple[dict, dict]] = {}
    rt = load_domain_runtime(domain)

    # direct kit dispatch: what the pool's default in-process backend runs
    async def direct() -> Any:
        return rt.call("get_account_balance", {"account_id": "ACC-0001"}, "bench", 0)

    d = await measure(direct, n * 5)
    row("in-process: kit direct dispatch", d)

    sys.path.insert(0, str(HERE))
    import _bare_server

    results["inprocess"] = await run_transport("in-process (mcp.Client)", build_server(rt), _bare_server.server, n)
    py = sys.executable
    stdio_kit = StdioServerParameters(command="taskset", args=["-c", str(SERVER_CPU), py, "-m", f"servers.{domain}"])
    stdio_bare = StdioServerParameters(command="taskset", args=["-c", str(SERVER_CPU), py, str(HERE / "_bare_server.py")])
    results["stdio"] = await run_transport("stdio", stdio_kit, stdio_bare, n)

    kp, bp = free_port(), free_port()
    kit_proc = start_http_server(domain, kp)
    subprocess.run(["taskset", "-p", "-c", str(SERVER_CPU), str(kit_proc.pid)], check=False, capture_output=True)
    bare_proc = subprocess.Popen(taskset([py, str(HERE / "_bare_server.py"), "http", str(bp)]),
                                 stderr=subprocess.DEVNULL)
    try:
        time.sleep(2.5)
        results["http"] = await run_transport(
            "http", f"http://127.0.0.1:{kp}/mcp", f"http://127.0.0.1:{bp}/mcp", max(200, n // 4))
    finally:
        kit_proc.terminate()
        bare_proc.terminate()

    # sessions
    t0 = time.perf_counter()
    m = 20_000
    for i in range(m):
        rt.sessions.open(f"s{i}", 0)
        rt.sessions.close(f"s{i}")
    direct_sessions = m / (time.perf_counter() - t0)
    async with MCPPool({domain: InProcessBackend(domain, runtime=DomainRuntime(rt.domain))}) as pool:
        t0 = time.perf_counter()
        k = 2000
        for _ in range(k):
            async with pool.episode([domain], seed=0) as ep:
                await ep.call("get_account_balance", {"account_id": "ACC-0001"})
        pool_episodes = k / (time.perf_counter() - t0)
    print(f"sessions: open+close direct {direct_sessions:,.0f}/s; pool episode (open+1 call+close) "
          f"{pool_episodes:,.0f}/s")

    ratio = {t: results[t][0]["conc"] / results[t][1]["conc"] for t in results}
    print(f"RESULT server_inprocess_direct_calls_per_s {d['seq']:.0f} 1/s goal=2000")
    print(f"RESULT server_inprocess_mcp_calls_per_s {results['inprocess'][0]['conc']:.0f} 1/s goal=2000")
    print(f"RESULT server_stdio_calls_per_s {results['stdio'][0]['conc']:.0f} 1/s goal=500")
    print(f"RESULT server_http_calls_per_s {results['http'][0]['conc']:.0f} 1/s goal=none")
    for t in results:
        print(f"RESULT server_{t}_kit_over_bare {ratio[t]:.2f} x goal=none")
        print(f"RESULT server_{t}_p50_ms {results[t][0]['p50_ms']:.2f} ms goal=none")
        print(f"RESULT server_{t}_p99_ms {results[t][0]['p99_ms']:.2f} ms goal=none")
    print(f"RESULT server_session_open_close_per_s {direct_sessions:.0f} 1/s goal=none")
    print(f"RESULT server_pool_episodes_per_s {pool_episodes:.0f} 1/s goal=none")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--domain", default="banking")
    ap.add_argument("--episodes", type=int, default=400)
    a = ap.parse_args()
    asyncio.run(main(a.calls, a.domain, a.episodes))
