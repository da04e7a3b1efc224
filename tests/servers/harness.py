"""Shared helpers for server tests: runtimes, scenario runners, transports."""

from __future__ import annotations

import asyncio
import importlib
import itertools
import json
import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from functools import cache
from typing import Any

from servers import DOMAINS
from servers.kit import SESSION_META_KEY, DomainRuntime

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]
_SESSION_NUMBERS = itertools.count()


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

    drive(scenario(domain)(call))
    return calls


def drive(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a scenario coroutine whose ``call`` never suspends, without an event loop.

    Driven by hand rather than with asyncio.run, so a running event loop (a benchmark) can record
    too; a scenario that awaited anything but ``call`` fails loudly instead of hanging."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise AssertionError("the scenario awaited something other than the call function")


def new_sid() -> str:
    """A session id no other test of this process uses: every test opens its own fresh sessions on
    the module's shared runtime."""
    return f"test-{next(_SESSION_NUMBERS)}"


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


def _smoke_then(rt: DomainRuntime, seed: int, after: Sequence[tuple[str, dict[str, Any]]]
                ) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """A fresh session that ran the smoke scenario then ``after``, and every call it made."""
    sid, calls = new_sid(), []

    async def call(name: str, args: dict[str, Any]) -> Any:
        calls.append((name, args))
        return ok(rt, sid, seed, name, args)

    drive(scenario(rt.name)(call))
    for name, args in after:
        calls.append((name, args))
        ok(rt, sid, seed, name, args)
    return sid, calls


def assert_same_state_on_replay(rt: DomainRuntime, session_id: str, seed: int,
                                calls: Sequence[tuple[str, dict[str, Any]]]) -> None:
    """``calls`` replayed on a fresh session (each succeeding) reach exactly ``session_id``'s state."""
    other = new_sid()
    for name, args in calls:
        ok(rt, other, seed, name, args)
    assert snapshot(rt, other, seed) == snapshot(rt, session_id, seed)


def assert_replays_alike(rt: DomainRuntime, seed: int,
                                   after: Sequence[tuple[str, dict[str, Any]]] = ()) -> None:
    """The domain's smoke scenario then the ``after`` calls (a clock advance that fires the domain's
    timed rules), run on two fresh sessions: both make the same calls and end in byte-identical
    states that differ from the seed world, and a reset brings that world back."""
    (first, calls_a), (second, calls_b) = _smoke_then(rt, seed, after), _smoke_then(rt, seed, after)
    assert calls_a == calls_b
    fresh = snapshot(rt, new_sid(), seed)
    assert snapshot(rt, first, seed) == snapshot(rt, second, seed) != fresh
    assert ok(rt, second, seed, f"{rt.name}_session_reset", {})["reset"] is True
    assert snapshot(rt, second, seed) == fresh


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


def state_of(rt: DomainRuntime, session_id: str, seed: int) -> dict[str, Any]:
    """The session's whole state as a dict, for tests that look into one record."""
    return json.loads(snapshot(rt, session_id, seed))


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


def raw_stdio_session(domain: str) -> subprocess.Popen[bytes]:
    """``python -m servers.<domain>`` on stdio after a proper initialize handshake, for tests that
    write raw JSON-RPC lines (what no SDK client lets one send)."""
    proc = subprocess.Popen([sys.executable, "-m", f"servers.{domain}"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    send_line(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    assert read_reply(proc, timeout=60)["id"] == 1
    send_line(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return proc


def send_line(proc: subprocess.Popen[bytes], message: Any) -> None:
    """One line on the server's stdin: a raw string as is, anything else as JSON."""
    line = message if isinstance(message, str) else json.dumps(message)
    assert proc.stdin is not None
    proc.stdin.write(line.encode() + b"\n")
    proc.stdin.flush()


def read_reply(proc: subprocess.Popen[bytes], timeout: float = 20.0) -> dict[str, Any]:
    """The server's next stdout line as JSON; fails if none arrives within ``timeout`` seconds."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, f"no answer within {timeout} s: the server left the request unanswered"
    return json.loads(proc.stdout.readline())


def run(coro: Awaitable[Any]) -> Any:
    return asyncio.run(coro)  # type: ignore[arg-type]


ALL_DOMAINS: tuple[str, ...] = (
    tuple(d for d in os.environ["PROVE_TEST_DOMAINS"].split(",") if d)
    if os.environ.get("PROVE_TEST_DOMAINS") else DOMAINS
)
"""The domains the cross-domain server tests cover: every registered domain, or the comma-separated
``PROVE_TEST_DOMAINS`` while a new domain is being written (``PROVE_TEST_DOMAINS=trading pytest ...``)."""
