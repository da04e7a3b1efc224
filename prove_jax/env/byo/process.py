"""One connection to a user's MCP server: a process of our own over stdio, or an HTTP connection.

Why not the SDK's ``stdio_client``: it keeps the process to itself, and the pool needs it. A call
that hangs must kill its process at once (the SDK's shutdown waits out a grace period and a SIGTERM
first), and a process that died between two calls is seen by its exit status before the next call
is sent, so it can be restarted over the same session directory instead of failing the call. The
transport below is the SDK's wire format (newline-delimited JSON-RPC, parsed by ``mcp_types``) over
pipes we own; the MCP session on top is the official ``mcp.Client``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import anyio
import mcp_types
from anyio.abc import Process
from mcp import Client
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

log = logging.getLogger(__name__)

_STDERR_TAIL = 1500


@dataclass(frozen=True)
class Launch:
    """How to start one server process (already templated for its session directory)."""

    argv: list[str]
    cwd: Path
    env: dict[str, str]
    stderr: Path


class Connection:
    """One MCP client session held open by its own task (the SDK's streams must be entered and left
    in one task); :meth:`start` waits until it is ready or failed, :meth:`kill` ends it now."""

    def __init__(self, label: str, *, launch: Launch | None = None, url: str = "",
                 session_dir: Path | None = None) -> None:
        self.label = label
        self.launch = launch
        self.url = url
        self.session_dir = session_dir
        self.client: Client | None = None
        self.listed: list[Any] = []
        self.error: str | None = None
        self.process: Process | None = None
        self.eof = False
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self.done = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def alive(self) -> bool:
        """Connected, and (for a process) neither exited nor at the end of its stdout."""
        if self.client is None or self._stop.is_set():
            return False
        return self.process is None or (self.process.returncode is None and not self.eof
                                        and not _exited(self.process.pid))

    async def start(self, timeout_s: float) -> None:
        """Connect (spawn, MCP handshake, tool listing); on failure ``error`` says why, with the
        tail of the server's stderr."""
        self._task = asyncio.create_task(self._run(), name=f"byo-{self.label}")
        try:
            await asyncio.wait_for(self._ready.wait(), timeout_s)
        except TimeoutError:
            self.error = f"no answer to the MCP handshake within {timeout_s:.0f}s"
            self.kill()
        if self.error is not None:
            self.kill()
            await self.closed()
            tail = self.stderr_tail()
            self.error = self.error + (f"; its stderr ends:\n{tail}" if tail else "")

    async def _run(self) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                if self.launch is not None:
                    errlog = stack.enter_context(open(self.launch.stderr, "ab"))  # noqa: SIM115
                    transport: Any = self._pipes(await self._spawn(errlog))
                else:
                    transport = self.url
                # A URL is isolation: server, i.e. state kept per MCP session (mcp-session-id), which only
                # the initialize handshake opens: the modern protocol ('auto' finds it) is stateless per
                # request, so every connection would share one state.
                mode = "legacy" if self.launch is None else "auto"
                client = await stack.enter_async_context(Client(transport, cache=None, mode=mode))
                listing = await client.list_tools()
                self.listed, self.client = list(listing.tools), client
                self._ready.set()
                await self._stop.wait()
        except Exception as exc:  # spawn failures, a server that exits at once, protocol errors
            if self.error is None and not self._ready.is_set():
                self.error = _describe(exc)
            log.debug("byo connection %s ended: %r", self.label, exc)
        finally:
            self.client = None
            self._kill_process()
            if self.process is not None:  # reap it and close its pipes while the loop still runs
                with anyio.CancelScope(shield=True), anyio.move_on_after(5), contextlib.suppress(Exception):
                    await self.process.aclose()
            self._ready.set()
            self.done.set()

    async def _spawn(self, errlog: IO[bytes]) -> Process:
        assert self.launch is not None
        launch = self.launch
        env = get_default_environment() | launch.env
        try:
            self.process = await anyio.open_process(
                launch.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog, cwd=launch.cwd,
                env=env, start_new_session=True)  # its own process group: a kill takes its children too
        except OSError as exc:
            self.error = f"cannot run {launch.argv[0]!r}: {exc.strerror or exc}"
            raise
        return self.process

    @contextlib.asynccontextmanager
    async def _pipes(self, process: Process) -> AsyncIterator[Any]:
        """A ``Transport``: JSON-RPC lines over the process's stdin/stdout."""
        read_in, read_out = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_in, write_out = anyio.create_memory_object_stream[SessionMessage](0)

        async def reader() -> None:
            assert process.stdout is not None
            buffer = b""
            async with read_in:
                with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError,
                                         OSError):
                    async for chunk in process.stdout:
                        *lines, buffer = (buffer + chunk).split(b"\n")
                        for line in lines:
                            if line.strip():
                                await read_in.send(_parse(line))
                self.eof = True  # the session sees its stream end: pending requests fail at once

        async def writer() -> None:
            assert process.stdin is not None
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                async with write_out:
                    async for message in write_out:
                        data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                        await process.stdin.send((data + "\n").encode())
            await read_in.aclose()  # a broken stdin ends the session instead of leaving requests waiting

        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            tg.start_soon(writer)
            try:
                yield read_out, write_in
            finally:
                self._kill_process()
                tg.cancel_scope.cancel()

    def _kill_process(self) -> None:
        proc = self.process
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)

    def kill(self) -> None:
        """End the connection now: SIGKILL to the process group, then the session unwinds."""
        self._kill_process()
        self._stop.set()

    async def closed(self, timeout_s: float = 5.0) -> None:
        """Wait (bounded) until the connection's task has finished."""
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self.done.wait()), timeout_s)
        proc = self.process
        if proc is not None:
            with contextlib.suppress(TimeoutError, ProcessLookupError, OSError):
                await asyncio.wait_for(proc.wait(), timeout_s)

    def stderr_tail(self) -> str:
        if self.launch is None or not self.launch.stderr.exists():
            return ""
        return self.launch.stderr.read_bytes()[-_STDERR_TAIL:].decode(errors="replace").strip()


def _exited(pid: int) -> bool:
    """Whether the process has exited, asked of the kernel without reaping it (the event loop's child
    watcher reaps, and learns of a death only on a later loop turn: a call sent in between would be
    lost with the process instead of going to its restart)."""
    if not hasattr(os, "waitid"):
        return False
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # already reaped
        return True


def _parse(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:  # a stray print on stdout: the session logs it and goes on
        return exc


def _describe(exc: BaseException) -> str:
    """The innermost useful message of an exception group from the SDK's task groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    if "closed" in text.lower():
        return f"the server closed the connection before the MCP handshake finished ({text})"
    return text
