"""Ways to reach one domain's MCP server: in-process, stdio subprocesses, or HTTP URLs.

Every backend answers the same four questions for the pool: which tools exist, run a call in a
session, run a session-plumbing operation (:meth:`Backend.session_op`: reset / snapshot / diff /
close), and is the session still alive. For the kit's servers a session operation is a hidden helper
tool of the server (``<domain>_session_<op>``); a backend for someone else's server
(``prove_jax.env.byo``) does it itself (fresh copy + restart, a snapshot command). For the kit,
session state lives in the server, keyed by the session id carried in each request's ``_meta``
(see ``servers.kit.runtime.SESSION_META_KEY``); a backend with several processes pins a session to
one process by hashing its id, and remembers the process *generation* it was opened on so a session
that lived in a process that died is reported lost instead of silently restarting from its seed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
import zlib
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from servers.kit.mcp_adapter import build_server
from servers.kit.runtime import LIST_HIDDEN_META_KEY, SESSION_META_KEY, DomainRuntime

log = logging.getLogger(__name__)

ErrorKind = Literal["tool", "timeout", "server_died", "session_lost", "unknown_tool", "transport"]
HelperOp = Literal["reset", "snapshot", "diff", "close"]


class _HiddenToolWarningFilter(logging.Filter):
    """The SDK client warns when calling a tool it has not seen listed; helpers are hidden on purpose."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "not listed by server" not in record.getMessage()


logging.getLogger("client").addFilter(_HiddenToolWarningFilter())  # the SDK client's logger name


@dataclass(frozen=True)
class ToolHints:
    """A tool's MCP annotations (``ToolAnnotations``), as a typed record beside its OpenAI schema.

    ``None`` means the server did not say. Kept out of the OpenAI-format tool dicts on purpose: those
    are rendered into prompts and hashed by their consumers, and a new key would change both."""

    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None
    title: str | None = None

    @classmethod
    def of(cls, tool: Any, *, read_only: bool = False) -> ToolHints:
        """The hints of an MCP ``Tool``; ``read_only=True`` (a user's hint) overrides the server."""
        ann = getattr(tool, "annotations", None)
        if ann is None:
            return cls(read_only=True if read_only else None)
        return cls(read_only=True if read_only else ann.read_only_hint, destructive=ann.destructive_hint,
                   idempotent=ann.idempotent_hint, open_world=ann.open_world_hint, title=ann.title)


@dataclass(frozen=True)
class CallResult:
    """One tool call's outcome as an episode sees it."""

    text: str
    is_error: bool
    error_kind: ErrorKind | None = None
    latency_s: float = 0.0

    @property
    def executed_ok(self) -> bool:
        return not self.is_error


class Backend(Protocol):
    domain: str

    async def start(self) -> None: ...
    async def stop(self) -> None: ...
    def tools(self) -> list[dict[str, Any]]: ...
    def hidden_tools(self) -> list[str]: ...
    def tool_hints(self) -> dict[str, ToolHints]: ...
    async def pin(self, session_id: str, timeout_s: float) -> Any: ...
    async def call(self, pin: Any, session_id: str, seed: int, name: str, args: Any) -> CallResult: ...
    async def session_op(self, pin: Any, session_id: str, seed: int, op: HelperOp) -> CallResult: ...


def _openai_tool(tool: Any) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description or "", "parameters": tool.input_schema},
    }


def _text_of(result: Any) -> str:
    parts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
    return "\n".join(parts)


class InProcessBackend:
    """The domain runtime in this process.

    ``via_mcp=False`` (default) calls the kit's dispatcher directly: the same validation, transaction
    and serialisation code as the MCP path, minus protocol framing — the fastest way to run many
    episodes on one host. ``via_mcp=True`` goes through the official SDK's in-process client.
    """

    def __init__(self, domain: str, *, via_mcp: bool = False, runtime: DomainRuntime | None = None) -> None:
        from servers.kit.cli import load_domain_runtime

        self.domain = domain
        self.runtime = runtime or load_domain_runtime(domain)
        self.via_mcp = via_mcp
        self._client: Client | None = None
        self._stack: contextlib.AsyncExitStack | None = None

    async def start(self) -> None:
        if self.via_mcp:
            self._stack = contextlib.AsyncExitStack()
            self._client = await self._stack.enter_async_context(Client(build_server(self.runtime)))

    async def stop(self) -> None:
        if self._stack is not None:
            await self._stack.aclose()
            self._stack = self._client = None

    def tools(self) -> list[dict[str, Any]]:
        return self.runtime.table.openai_tools()

    def hidden_tools(self) -> list[str]:
        return [n for n, s in self.runtime.table.specs.items() if not s.visible] + [
            *self.runtime.session_tools, self.runtime.clock_tool]

    def tool_hints(self) -> dict[str, ToolHints]:
        return {}  # the kit publishes no MCP annotations (its read/write split is its own metadata)

    async def pin(self, session_id: str, timeout_s: float) -> Any:
        return 0

    async def session_op(self, pin: Any, session_id: str, seed: int, op: HelperOp) -> CallResult:
        """The kit's hidden ``<domain>_session_<op>`` helper tool."""
        return await self.call(pin, session_id, seed, f"{self.domain}_session_{op}", {})

    async def call(self, pin: Any, session_id: str, seed: int, name: str, args: Any) -> CallResult:
        if self._client is None:
            out = self.runtime.call(name, args, session_id, seed)
            return CallResult(out.text, out.is_error, "tool" if out.is_error else None)
        res = await self._client.call_tool(name, args, meta={SESSION_META_KEY: {"id": session_id, "seed": seed}})
        return CallResult(_text_of(res), bool(res.is_error), "tool" if res.is_error else None)


class _Worker:
    """One MCP client connection, kept alive (and restarted) by a supervisor task."""

    def __init__(self, label: str, connect: Any) -> None:
        self.label = label
        self._connect = connect
        self.client: Client | None = None
        self.generation = 0
        self.restarts = 0
        self.ready = asyncio.Event()
        self._dead = asyncio.Event()
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self.listed: list[Any] = []
        self.hidden: list[str] = []

    def start(self) -> None:
        self._task = asyncio.create_task(self._supervise(), name=f"mcp-worker-{self.label}")

    async def _supervise(self) -> None:
        backoff = 0.05
        while not self._stopping:
            try:
                async with self._connect() as client:
                    listing = await client.list_tools(meta={LIST_HIDDEN_META_KEY: True})
                    kinds = {t.name: (t.meta or {}).get("io.prove/kind", "user") for t in listing.tools}
                    self.listed = [t for t in listing.tools if kinds[t.name] == "user"]
                    self.hidden = [n for n, k in kinds.items() if k != "user"]
                    self.client = client
                    self.generation += 1
                    self.ready.set()
                    backoff = 0.05
                    await self._dead.wait()
            except Exception as exc:  # spawn failures, protocol errors: retry with backoff
                log.warning("worker %s failed: %r", self.label, exc)
            finally:
                self.client = None
                self.ready.clear()
                self._dead.clear()
            if not self._stopping:
                self.restarts += 1
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)

    def mark_dead(self, generation: int) -> None:
        """Called by a request that saw the connection drop; only the first report counts."""
        if generation == self.generation and self.client is not None:
            self._dead.set()

    async def stop(self) -> None:
        self._stopping = True
        self._dead.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._task, timeout=10)


class _RemoteBackend:
    """Shared logic of backends that talk MCP to other processes (stdio, HTTP)."""

    domain: str
    workers: list[_Worker]

    async def start(self) -> None:
        for w in self.workers:
            w.start()
        await asyncio.wait_for(asyncio.gather(*(w.ready.wait() for w in self.workers)), timeout=60)

    async def stop(self) -> None:
        await asyncio.gather(*(w.stop() for w in self.workers))

    def tools(self) -> list[dict[str, Any]]:
        return [_openai_tool(t) for t in self.workers[0].listed]

    def hidden_tools(self) -> list[str]:
        return list(self.workers[0].hidden)

    def tool_hints(self) -> dict[str, ToolHints]:
        return {t.name: ToolHints.of(t) for t in self.workers[0].listed}

    async def session_op(self, pin: Any, session_id: str, seed: int, op: HelperOp) -> CallResult:
        """The kit's hidden ``<domain>_session_<op>`` helper tool."""
        return await self.call(pin, session_id, seed, f"{self.domain}_session_{op}", {})

    async def pin(self, session_id: str, timeout_s: float) -> tuple[int, int]:
        """(worker index, generation) the session lives on; the session dies with that generation.

        Waits (up to ``timeout_s``) for a worker that is restarting, so new episodes queue behind a
        restart instead of failing."""
        idx = zlib.crc32(session_id.encode()) % len(self.workers)
        worker = self.workers[idx]
        if worker.client is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(worker.ready.wait(), timeout_s)
        return idx, worker.generation

    async def call(self, pin: Any, session_id: str, seed: int, name: str, args: Any) -> CallResult:
        idx, generation = pin
        worker = self.workers[idx]
        if worker.generation != generation:
            return CallResult(
                f"session {session_id} on {self.domain} was lost: its server process restarted",
                True,
                "session_lost",
            )
        client = worker.client
        if client is None:
            return CallResult(f"{self.domain} server process is down (restarting)", True, "server_died")
        try:
            res = await client.call_tool(name, args, meta={SESSION_META_KEY: {"id": session_id, "seed": seed}})
        except MCPError as exc:
            if "closed" in str(exc).lower():
                worker.mark_dead(generation)
                return CallResult(f"{self.domain} server process died during '{name}': {exc}", True, "server_died")
            return CallResult(f"{self.domain} protocol error during '{name}': {exc}", True, "transport")
        except (OSError, EOFError, ConnectionError) as exc:
            worker.mark_dead(generation)
            return CallResult(f"{self.domain} connection failed during '{name}': {exc!r}", True, "server_died")
        return CallResult(_text_of(res), bool(res.is_error), "tool" if res.is_error else None)


class StdioBackend(_RemoteBackend):
    """``n_procs`` subprocesses ``python -m servers.<domain>``; each restarted if it dies."""

    def __init__(self, domain: str, *, n_procs: int = 1, python: str | None = None, seed: int = 0) -> None:
        self.domain = domain
        params = StdioServerParameters(
            command=python or sys.executable,
            args=["-m", f"servers.{domain}", "--transport", "stdio", "--seed", str(seed)],
        )
        self.workers = [
            _Worker(f"{domain}/{i}", lambda p=params: Client(p, cache=None)) for i in range(n_procs)
        ]


class HttpBackend(_RemoteBackend):
    """Remote streamable-HTTP servers (one connection per URL; sessions hashed across URLs)."""

    def __init__(self, domain: str, urls: list[str]) -> None:
        self.domain = domain
        self.workers = [_Worker(f"{domain}@{u}", lambda u=u: Client(u, cache=None)) for u in urls]


BACKENDS = ("inprocess", "inprocess-mcp", "stdio", "http")
"""The transports a domain's server can be reached over (:func:`make_backend`)."""


def make_backend(domain: str, kind: str, **kw: Any) -> Backend:
    """``inprocess`` | ``inprocess-mcp`` | ``stdio`` | ``http`` (kw: ``n_procs``, ``urls``, ``seed``)."""
    if kind == "inprocess":
        return InProcessBackend(domain)
    if kind == "inprocess-mcp":
        return InProcessBackend(domain, via_mcp=True)
    if kind == "stdio":
        return StdioBackend(domain, n_procs=int(kw.get("n_procs", 1)), seed=int(kw.get("seed", 0)))
    if kind == "http":
        return HttpBackend(domain, list(kw["urls"]))
    raise ValueError(f"unknown backend kind {kind!r} ({', '.join(BACKENDS)})")


def now() -> float:
    return time.perf_counter()
