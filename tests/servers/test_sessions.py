"""Sessions: the smoke scenario in several seed worlds, same seed → identical state (even across
processes), reset, and zero cross-session leakage under 200 concurrent sessions doing random writes."""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from prove_jax.env import InProcessBackend, MCPPool, StdioBackend
from servers.kit import DomainRuntime, snapshot_json
from tests.servers.harness import ALL_DOMAINS, record_smoke, run, runtime, snapshot


def recorded_calls(domain: str, seed: int = 0) -> list[tuple[str, dict[str, Any]]]:
    return record_smoke(domain, seed)


_RECORDED: dict[str, list[tuple[str, dict[str, Any]]]] = {}


def calls_of(domain: str) -> list[tuple[str, dict[str, Any]]]:
    if domain not in _RECORDED:
        _RECORDED[domain] = recorded_calls(domain)
    return _RECORDED[domain]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("domain", ALL_DOMAINS)
def test_smoke_succeeds_and_covers_every_user_tool(domain: str, seed: int) -> None:
    """Each domain's realistic scenario runs without an error in six seed worlds (the transports run
    it in seed 0 only) and calls every user tool."""
    called = {name for name, _ in recorded_calls(domain, seed)}
    assert {t.name for t in runtime(domain).domain.user_tools} <= called


@pytest.mark.parametrize("domain", ALL_DOMAINS)
def test_same_seed_same_world_and_seeds_differ(domain: str) -> None:
    d = runtime(domain).domain
    a, b, c = (snapshot_json(d.new_world(s).snapshot()) for s in (3, 3, 4))
    assert a == b
    assert a != c


@pytest.mark.parametrize("domain", ALL_DOMAINS)
def test_world_is_identical_in_another_process(domain: str) -> None:
    """A stdio server (fresh interpreter, different hash seed) builds byte-identical worlds."""
    env = {**os.environ, "PYTHONHASHSEED": "12345"}

    async def go() -> list[str]:
        params = StdioServerParameters(command=sys.executable, args=["-m", f"servers.{domain}"], env=env)
        async with Client(params, cache=None) as client:
            out = []
            for seed in (0, 11):
                res = await client.call_tool(f"{domain}_session_snapshot", {},
                                             meta={"io.prove/session": {"id": f"d{seed}", "seed": seed}})
                out.append(snapshot_json(json.loads(res.content[0].text)))
            return out

    remote = run(go())
    local = [snapshot_json(runtime(domain).domain.new_world(s).snapshot()) for s in (0, 11)]
    assert remote == local


@pytest.mark.parametrize("domain", ALL_DOMAINS)
def test_reset_restores_seed_state(domain: str) -> None:
    rt = DomainRuntime(runtime(domain).domain)
    fresh = snapshot(rt, "r", 5)
    calls = recorded_calls(domain, seed=5)
    for name, args in calls:
        rt.call(name, args, "r", 5)
    assert snapshot(rt, "r", 5) != fresh, "the scenario should change state"
    assert not rt.call(f"{domain}_session_reset", {}, "r", 5).is_error
    assert snapshot(rt, "r", 5) == fresh


async def _run_sessions(pool: MCPPool, work: list[tuple[str, list[int]]],
                        rng: random.Random) -> tuple[list[list[str]], list[Any]]:
    """Run every (domain, plan) in its own episode concurrently, interleaving at random points."""

    async def one(domain: str, plan: list[int]) -> tuple[list[str], Any]:
        calls = calls_of(domain)
        async with pool.episode([domain], seed=0) as ep:
            texts = []
            for idx in plan:
                name, args = calls[idx]
                res = await ep.call(name, args, allow_hidden=True)
                texts.append(res.text)
                for _ in range(rng.randrange(3)):
                    await asyncio.sleep(0)
            return texts, (await ep.snapshots())[domain]

    results = await asyncio.gather(*(one(d, p) for d, p in work))
    return [r[0] for r in results], [r[1] for r in results]


_REFERENCE: dict[str, DomainRuntime] = {}


def _solo(domain: str, plan: list[int], calls: list[Any]) -> tuple[list[str], Any]:
    """Replay ``plan`` alone, in a fresh session of a separate reference runtime."""
    if domain not in _REFERENCE:
        _REFERENCE[domain] = DomainRuntime(runtime(domain).domain)
    rt = _REFERENCE[domain]
    sid = f"solo-{len(rt.sessions)}"
    texts = [rt.call(calls[i][0], calls[i][1], sid, 0).text for i in plan]
    final = json.loads(snapshot(rt, sid, 0))
    rt.sessions.close(sid)
    return texts, final


def test_1000_concurrent_sessions_across_every_domain() -> None:
    """1,000 episodes spread over all domains, interleaved at random in one event loop: each
    session's results and final state equal a solo replay of its own calls, and every session is
    closed afterwards (no leak)."""
    rng = random.Random(1000)
    work = []
    for i in range(1000):
        domain = ALL_DOMAINS[i % len(ALL_DOMAINS)]
        n = len(calls_of(domain))
        work.append((domain, sorted(rng.sample(range(n), k=rng.randint(1, min(n, 10))))))
    runtimes = {d: DomainRuntime(runtime(d).domain) for d in ALL_DOMAINS}

    async def go() -> tuple[list[list[str]], list[Any]]:
        backends = {d: InProcessBackend(d, runtime=rt) for d, rt in runtimes.items()}
        async with MCPPool(backends) as pool:
            return await _run_sessions(pool, work, rng)

    texts, finals = run(go())
    for (domain, plan), got_texts, got_final in zip(work, texts, finals, strict=True):
        want_texts, want_final = _solo(domain, plan, calls_of(domain))
        assert got_texts == want_texts, domain
        assert got_final == want_final, domain
    assert {d: len(rt.sessions) for d, rt in runtimes.items()} == dict.fromkeys(ALL_DOMAINS, 0)


def test_200_concurrent_sessions_over_stdio() -> None:
    """The same isolation in real server processes (2 stdio processes, sessions hashed across them)."""
    domain = ALL_DOMAINS[0]
    calls = calls_of(domain)
    rng = random.Random(7)
    work = [(domain, sorted(rng.sample(range(len(calls)), k=rng.randint(1, 6)))) for _ in range(200)]

    async def go() -> tuple[list[list[str]], list[Any]]:
        async with MCPPool({domain: StdioBackend(domain, n_procs=2)}, call_timeout_s=30) as pool:
            return await _run_sessions(pool, work, rng)

    texts, finals = run(go())
    for (_, plan), got_texts, got_final in zip(work, texts, finals, strict=True):
        want_texts, want_final = _solo(domain, plan, calls)
        assert got_texts == want_texts
        assert got_final == want_final
