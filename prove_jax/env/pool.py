"""The asyncio host pool: many concurrent episodes, each a set of sessions on one or more servers.

    pool = MCPPool({"banking": StdioBackend("banking", n_procs=2), "email": InProcessBackend("email")})
    async with pool:
        async with pool.episode(["banking", "email"], seed=3) as ep:
            result = await ep.call("transfer_funds", {...})   # routed by tool name, per-call timeout
            final = await ep.snapshots()                       # {server: snapshot}

An episode fails cleanly, never hangs: a call that exceeds the timeout, a server process that dies
or a session lost to a restart returns an error :class:`CallResult` and marks only that episode
``failed``; other episodes keep going and the backend restarts the process in the background.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import servers
from prove_jax.env.backends import BACKENDS, Backend, CallResult, HelperOp, ToolHints, make_backend, now
from prove_jax.env.byo import ByoBackend, ServerSpec
from prove_jax.env.byo.seeding import SeedCall
from prove_jax.yamlconf import REPLACE


class ToolNameCollision(ValueError):
    """Two servers publish the same tool name: calls could not be routed unambiguously."""


@dataclass
class PoolStats:
    calls: int = 0
    errors: int = 0
    timeouts: int = 0
    server_deaths: int = 0
    episodes_opened: int = 0
    episodes_failed: int = 0


@dataclass
class EnvConfig:
    """Where tool calls go: which servers, over which transport, with what limits."""

    domains: list[str] = field(default_factory=lambda: list(servers.DOMAINS))  # all twenty
    backend: str = "inprocess"  # inprocess | inprocess-mcp | stdio | http
    n_procs: int = 1  # stdio: server processes per domain
    urls: dict[str, list[str]] = field(default_factory=dict, metadata=REPLACE)  # http: domain -> URLs
    call_timeout_s: float = 10.0
    max_concurrent_episodes: int = 256
    byo: list[ServerSpec] = field(default_factory=list, metadata=REPLACE)  # users' own servers, by name
    byo_dir: str = ""  # where their session directories live (default: <run out_dir>/byo)
    tau2: list[str] = field(default_factory=list, metadata=REPLACE)  # τ² wheels' domains (server tau2_<domain>)

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {self.backend!r}")
        unknown = [d for d in self.domains if d not in servers.DOMAINS]
        if unknown:
            raise ValueError(f"domains: unknown {unknown}; known: {list(servers.DOMAINS)}")
        from prove_jax.env.tau2 import DOMAINS as TAU2_DOMAINS

        bad = sorted(set(self.tau2) - set(TAU2_DOMAINS))
        if bad:
            raise ValueError(f"tau2: unknown {bad}; the wheels carry {sorted(TAU2_DOMAINS)}")
        names = [s.name for s in self.byo]
        clash = sorted({n for n in names if names.count(n) > 1 or n in servers.DOMAINS})
        if clash:
            raise ValueError(f"byo: server names {clash} are used twice or are kit domains")


class MCPPool:
    """Routes calls of concurrent episodes to per-domain backends."""

    def __init__(
        self,
        backends: Mapping[str, Backend],
        *,
        call_timeout_s: float = 10.0,
        max_concurrent_episodes: int = 1024,
    ) -> None:
        self.backends = dict(backends)
        self.call_timeout_s = call_timeout_s
        self._episode_slots = asyncio.Semaphore(max_concurrent_episodes)
        self.stats = PoolStats()
        self.routes: dict[str, str] = {}
        self.hidden_routes: dict[str, str] = {}
        self._tools: dict[str, list[dict[str, Any]]] = {}

    @classmethod
    def from_spec(cls, domains: Iterable[str], kind: str = "inprocess", **kw: Any) -> MCPPool:
        """One backend of ``kind`` per domain (see :func:`make_backend`); pool options via ``kw``."""
        pool_kw = {k: kw.pop(k) for k in ("call_timeout_s", "max_concurrent_episodes") if k in kw}
        return cls({d: make_backend(d, kind, **kw) for d in domains}, **pool_kw)

    @classmethod
    def from_config(cls, cfg: EnvConfig, run_dir: str | Path | None = None,
                    seed_calls: dict[str, list[SeedCall]] | None = None) -> MCPPool:
        """The pool a run's ``env:`` section describes; ``env.byo`` servers keep their sessions under
        ``env.byo_dir``, else ``run_dir`` (the run's ``byo/``), and start from the state their
        ``seed_calls`` build (the dataset's, :func:`prove_jax.env.byo.seeding.read_seed_calls`)."""
        if cfg.backend == "http":
            missing = [d for d in cfg.domains if d not in cfg.urls]
            if missing:
                raise ValueError(f"env.urls has no URLs for {missing}")
            backends = {d: make_backend(d, "http", urls=cfg.urls[d]) for d in cfg.domains}
        else:
            kw: dict[str, Any] = {"n_procs": cfg.n_procs} if cfg.backend == "stdio" else {}
            backends = {d: make_backend(d, cfg.backend, **kw) for d in cfg.domains}
        if cfg.byo:
            where = cfg.byo_dir or run_dir
            if not where:
                raise ValueError("env.byo needs a directory for its sessions: set env.byo_dir")
            seeds = seed_calls or {}
            backends |= {s.name: ByoBackend(s, where, seeds.get(s.name)) for s in cfg.byo}
        if cfg.tau2:  # τ² domains: the wheel's server under byo, its plumbing hidden (prove_jax.env.tau2)
            from prove_jax.env.tau2 import Tau2Domain

            where = cfg.byo_dir or run_dir
            if not where:
                raise ValueError("env.tau2 needs a directory for its sessions: set env.byo_dir")
            for name in cfg.tau2:
                backend = Tau2Domain.load(name).backend(Path(where) / "tau2")
                backends[backend.domain] = backend
        return cls(backends, call_timeout_s=cfg.call_timeout_s, max_concurrent_episodes=cfg.max_concurrent_episodes)

    async def __aenter__(self) -> MCPPool:
        await asyncio.gather(*(b.start() for b in self.backends.values()))
        for domain, backend in self.backends.items():
            tools = backend.tools()
            self._tools[domain] = tools
            for tool in tools:
                name = tool["function"]["name"]
                other = self.routes.setdefault(name, domain)
                if other != domain:
                    raise ToolNameCollision(f"tool {name!r} is published by both {other!r} and {domain!r}")
            for name in backend.hidden_tools():
                self.hidden_routes[name] = domain
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.gather(*(b.stop() for b in self.backends.values()), return_exceptions=True)

    def tools(self, domains: Iterable[str]) -> list[dict[str, Any]]:
        """The model-visible tools of ``domains`` in OpenAI function format."""
        return [t for d in domains for t in self._tools[d]]

    def tool_hints(self, domains: Iterable[str]) -> dict[str, ToolHints]:
        """The MCP annotations (``readOnlyHint``, ...) of the tools :meth:`tools` lists, by tool name.

        A tool whose server published none is absent (the kit's servers publish none)."""
        return {name: hints for d in domains for name, hints in self.backends[d].tool_hints().items()}

    @contextlib.asynccontextmanager
    async def episode(self, domains: Iterable[str], seed: int, *, episode_id: str | None = None
                      ) -> AsyncIterator[Episode]:
        """Open fresh sessions (seeded worlds) on every domain; close them on exit."""
        domains = list(dict.fromkeys(domains))
        missing = [d for d in domains if d not in self.backends]
        if missing:
            raise KeyError(f"episode asks for servers {missing} that this pool does not run")
        async with self._episode_slots:
            ep = Episode(self, domains, seed, episode_id or uuid.uuid4().hex)
            self.stats.episodes_opened += 1
            try:
                # inside the try: a pin that raises or is cancelled (the caller's timeout) still
                # closes the sessions already pinned, e.g. a byo server process started for domain 1
                for d in domains:
                    ep._pins[d] = await self.backends[d].pin(ep.session_id(d), self.call_timeout_s)
                yield ep
            finally:
                if ep.failed:
                    self.stats.episodes_failed += 1
                await ep.close()


@dataclass
class Episode:
    """Sessions of one rollout; ``call`` routes by tool name and never raises for bad input."""

    pool: MCPPool
    domains: list[str]
    seed: int
    episode_id: str
    failed: bool = False
    failure: str | None = None
    _pins: dict[str, Any] = field(default_factory=dict)

    def session_id(self, domain: str) -> str:
        return f"{self.episode_id}:{domain}"

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self.pool.tools(self.domains)

    async def call(self, name: str, arguments: Any, *, timeout_s: float | None = None,
                   allow_hidden: bool = False) -> CallResult:
        """Run one tool call in this episode's session of the server that owns ``name``.

        Model calls reach only model-visible tools; harness code (synthesis, tests) may pass
        ``allow_hidden=True`` to reach discovery and helper tools too."""
        stats = self.pool.stats
        stats.calls += 1
        if self.failed:
            stats.errors += 1
            return CallResult(f"episode already failed: {self.failure}", True, "server_died")
        domain = self.pool.routes.get(name) if isinstance(name, str) else None
        if domain is None and allow_hidden and isinstance(name, str):
            domain = self.pool.hidden_routes.get(name)
        if domain is None or domain not in self.domains:
            stats.errors += 1
            return CallResult(f"unknown tool '{name}'", True, "unknown_tool")
        return await self._dispatch(domain, name, arguments, timeout_s)

    async def helper(self, domain: str, op: HelperOp) -> CallResult:
        """Session plumbing on one server: reset, snapshot, diff or close (the backend's
        :meth:`~prove_jax.env.backends.Backend.session_op`)."""
        backend = self.pool.backends[domain]
        return await self._run(domain, f"{domain}_session_{op}", None, lambda: backend.session_op(
            self._pins[domain], self.session_id(domain), self.seed, op))

    async def _dispatch(self, domain: str, name: str, arguments: Any, timeout_s: float | None) -> CallResult:
        backend = self.pool.backends[domain]
        return await self._run(domain, name, timeout_s, lambda: backend.call(
            self._pins[domain], self.session_id(domain), self.seed, name, arguments))

    async def _run(self, domain: str, name: str, timeout_s: float | None,
                   request: Callable[[], Awaitable[CallResult]]) -> CallResult:
        """One request to ``domain`` under the call timeout; failures of the environment fail the episode."""
        timeout = self.pool.call_timeout_s if timeout_s is None else timeout_s
        start = now()
        try:
            result = await asyncio.wait_for(request(), timeout)
        except TimeoutError:
            self.pool.stats.timeouts += 1
            result = CallResult(f"'{name}' on {domain} timed out after {timeout:.1f}s", True, "timeout")
        result = CallResult(result.text, result.is_error, result.error_kind, now() - start)
        if result.is_error:
            self.pool.stats.errors += 1
        if result.error_kind in ("server_died", "session_lost", "timeout", "transport"):
            if result.error_kind == "server_died":
                self.pool.stats.server_deaths += 1
            self.failed = True
            self.failure = result.text
        return result

    async def snapshots(self) -> dict[str, Any]:
        """Final state of every server of the episode (for final-state checks)."""
        out: dict[str, Any] = {}
        for d in self.domains:
            res = await self.helper(d, "snapshot")
            out[d] = None if res.is_error else json.loads(res.text)
        return out

    async def reset(self) -> None:
        for d in self.domains:
            await self.helper(d, "reset")

    async def close(self) -> None:
        """Free the server-side sessions (best effort: a dead server has already lost them)."""
        for d in [d for d in self.domains if d in self._pins]:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(
                    self.pool.backends[d].session_op(self._pins[d], self.session_id(d), self.seed, "close"),
                    self.pool.call_timeout_s,
                )
