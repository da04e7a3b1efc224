"""Shared helpers for server tests: runtimes, scenario runners, transports."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from functools import cache
from typing import Any

from servers import DOMAINS
from servers.kit import SESSION_META_KEY, DomainRuntime

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


@cache
def runtime(domain: str) -> DomainRuntime:
    """One runtime per domain per test process (tests use distinct session ids)."""
    return DomainRuntime(importlib.import_module(f"servers.{domain}").domain)


def scenario(domain: str) -> Callable[[Call], Awaitable[None]]:
    return importlib.import_module(f"tests.servers.scenarios.{domain}").smoke


def record_smoke(domain: str, seed: int = 0) -> list[tuple[str, dict[str, Any]]]:
    """The smoke scenario's calls (reads and writes) in order, recorded on a private session."""
    rt = DomainRuntime(runtime(domain).domain)
    calls: list[tuple[str, dict[str, Any]]] = []

    async def call(name: str, args: dict[str, Any]) -> Any:
        out = rt.call(name, args, "rec", seed)
        assert not out.is_error, out.text
        calls.append((name, args))
        return out.json()

    # Driven by hand rather than with asyncio.run, so a running event loop (a benchmark) can record
    # too: a scenario awaits nothing but ``call``, which never suspends here.
    coro = scenario(domain)(call)
    try:
        while True:
            coro.send(None)
    except StopIteration:
        pass
    return calls


def ok(rt: DomainRuntime, sid: str, seed: int, name: str, args: dict[str, Any]) -> Any:
    out = rt.call(name, args, sid, seed)
    assert not out.is_error, f"{name}({args}) failed: {out.text}"
    return out.json()


def fails(rt: DomainRuntime, sid: str, seed: int, name: str, args: dict[str, Any], *needles: str) -> str:
    """The call is an error naming the rule/field, and the session state is exactly unchanged."""
    before = snapshot(rt, sid, seed)
    out = rt.call(name, args, sid, seed)
    assert out.is_error, f"{name}({args}) unexpectedly succeeded: {out.text[:300]}"
    for needle in needles:
        assert needle in out.text, f"{needle!r} not in {out.text!r}"
    assert snapshot(rt, sid, seed) == before, f"{name} changed state although it failed"
    return out.text


def advance(rt: DomainRuntime, sid: str, seed: int, minutes: int) -> None:
    """Move one session's clock on through the hidden ``<domain>_session_advance_clock`` helper."""
    ok(rt, sid, seed, rt.clock_tool, {"minutes": minutes})


def direct_call(rt: DomainRuntime, session_id: str, seed: int, seen: set[str] | None = None) -> Call:
    """A scenario ``call`` on the kit's dispatcher that fails the test on any error result."""

    async def call(name: str, args: dict[str, Any]) -> Any:
        out = rt.call(name, args, session_id, seed)
        assert not out.is_error, f"{name}({args}) failed: {out.text}"
        if seen is not None:
            seen.add(name)
        return out.json()

    return call


def mcp_call(client: Any, session_id: str, seed: int, seen: set[str] | None = None) -> Call:
    """A scenario ``call`` through an ``mcp.Client`` (any transport)."""

    async def call(name: str, args: dict[str, Any]) -> Any:
        res = await client.call_tool(name, args, meta={SESSION_META_KEY: {"id": session_id, "seed": seed}})
        text = "\n".join(c.text for c in res.content if c.type == "text")
        assert not res.is_error, f"{name}({args}) failed: {text}"
        if seen is not None:
            seen.add(name)
        return json.loads(text)

    return call


def snapshot(rt: DomainRuntime, session_id: str, seed: int) -> str:
    out = rt.call(f"{rt.name}_session_snapshot", {}, session_id, seed)
    assert not out.is_error, out.text
    return out.text


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_http_server(domain: str, port: int) -> subprocess.Popen[bytes]:
    """``python -m servers.<domain> --transport http`` on loopback; returns once it accepts."""
    proc = subprocess.Popen(
        [sys.executable, "-m", f"servers.{domain}", "--transport", "http", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{domain} http server exited: {proc.stderr.read().decode()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc
        time.sleep(0.1)
    proc.kill()
    raise TimeoutError(f"{domain} http server did not start")


def run(coro: Awaitable[Any]) -> Any:
    return asyncio.run(coro)  # type: ignore[arg-type]


ALL_DOMAINS: tuple[str, ...] = (
    tuple(d for d in os.environ["PROVE_TEST_DOMAINS"].split(",") if d)
    if os.environ.get("PROVE_TEST_DOMAINS") else DOMAINS
)
"""The domains the cross-domain server tests cover: every registered domain, or the comma-separated
``PROVE_TEST_DOMAINS`` while a new domain is being written (``PROVE_TEST_DOMAINS=trading pytest ...``)."""
