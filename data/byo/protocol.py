"""The narrow protocol bring-your-own-MCP inference is written against, and its two adapters.

Inference sees exactly what a third-party server gives any MCP client: the ``tools/list`` result
(name, description, input schema, annotations) and a live session it can call and reset. Nothing
else — in particular not the kit's ``_meta`` (``io.prove/produces`` ...), which our own servers attach
to their listing and which is the very thing being inferred. :func:`listing_from_sdk` therefore copies
only the four public fields, so the kit's metadata cannot leak in by accident.

Adapters:

* :class:`EpisodeSession` — one :class:`prove_jax.env.pool.Episode` (our servers over stdio, or any
  backend the pool runs); reset is the session-reset helper the pool already exposes.
* :class:`SdkSession` — a plain official-SDK client of any stdio server; reset restarts the process
  (after the caller's ``on_reset`` hook, e.g. deleting a memory file), since a third-party server has
  no reset tool.

The pool's ``tools()`` returns OpenAI-format dicts without annotations today, so the listing of our
servers comes from the SDK client (:func:`sdk_listing`); once the pool passes annotations through,
:func:`listing_from_sdk` is the one place to point at it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from mcp import Client, StdioServerParameters


@dataclass(frozen=True)
class ToolAnnotations:
    """The MCP ``ToolAnnotations`` hints; ``None`` = the server did not say."""

    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None


@dataclass(frozen=True)
class ToolListing:
    """One entry of ``tools/list`` as inference may read it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    annotations: ToolAnnotations = field(default_factory=ToolAnnotations)

    @property
    def properties(self) -> dict[str, dict[str, Any]]:
        props = self.input_schema.get("properties")
        return props if isinstance(props, dict) else {}

    @property
    def required(self) -> tuple[str, ...]:
        req = self.input_schema.get("required")
        return tuple(r for r in req if r in self.properties) if isinstance(req, list) else ()


BROKEN_KINDS = frozenset({"timeout", "server_died", "session_lost", "transport"})


@dataclass(frozen=True)
class CallOutcome:
    text: str
    is_error: bool
    broken: bool = False  # the session itself failed (timeout, dead server): the text says nothing of the call


class Session(Protocol):
    """A live, resettable session on one server."""

    async def call(self, name: str, args: dict[str, Any]) -> CallOutcome: ...

    async def reset(self) -> None: ...


def listing_from_sdk(tools: Sequence[Any]) -> list[ToolListing]:
    """SDK ``Tool`` objects -> listings: name, description, inputSchema, annotations; ``_meta`` dropped."""
    out = []
    for t in tools:
        ann = getattr(t, "annotations", None)
        hints = ToolAnnotations(
            read_only=getattr(ann, "read_only_hint", None), destructive=getattr(ann, "destructive_hint", None),
            idempotent=getattr(ann, "idempotent_hint", None), open_world=getattr(ann, "open_world_hint", None),
        ) if ann is not None else ToolAnnotations()
        out.append(ToolListing(t.name, t.description or "", dict(t.input_schema or {}), hints))
    return out


async def sdk_listing(params: StdioServerParameters) -> list[ToolListing]:
    """``tools/list`` of a stdio server through the official SDK client (a plain request: no opt-in
    to hidden tools, exactly what a third-party client sees)."""
    async with Client(params, cache=None) as client:
        return listing_from_sdk((await client.list_tools()).tools)


def _text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


class EpisodeSession:
    """A pool episode's sessions as a :class:`Session` (reset = the pool's session-reset helper)."""

    def __init__(self, episode: Any) -> None:
        self.episode = episode
        self.calls = 0

    async def call(self, name: str, args: dict[str, Any]) -> CallOutcome:
        self.calls += 1
        res = await self.episode.call(name, args)
        return CallOutcome(res.text, res.is_error, res.error_kind in BROKEN_KINDS)

    async def reset(self) -> None:
        await self.episode.reset()


class SdkSession:
    """A third-party stdio server behind the official SDK client; reset = restart the process."""

    def __init__(self, params: StdioServerParameters, on_reset: Callable[[], None] | None = None) -> None:
        self.params = params
        self.on_reset = on_reset
        self.calls = 0
        self._stack: contextlib.AsyncExitStack | None = None
        self._client: Client | None = None

    async def __aenter__(self) -> SdkSession:
        await self._open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._close()

    async def _open(self) -> None:
        self._stack = contextlib.AsyncExitStack()
        self._client = await self._stack.enter_async_context(Client(self.params, cache=None))

    async def _close(self) -> None:
        if self._stack is not None:
            await self._stack.aclose()
        self._stack = self._client = None

    async def listing(self) -> list[ToolListing]:
        assert self._client is not None
        return listing_from_sdk((await self._client.list_tools()).tools)

    async def call(self, name: str, args: dict[str, Any]) -> CallOutcome:
        assert self._client is not None
        self.calls += 1
        try:
            res = await self._client.call_tool(name, args)
        except Exception as exc:  # protocol-level rejection (bad arguments): an error like any other
            return CallOutcome(str(exc), True)
        return CallOutcome(_text_of(res), bool(res.is_error))

    async def reset(self) -> None:
        await self._close()
        if self.on_reset is not None:
            self.on_reset()
        await self._open()
