"""Serve a :class:`DomainRuntime` through the official MCP SDK (``mcp.server.mcpserver.MCPServer``).

The SDK owns the protocol (framing, transports, listing, schema derivation via its own signature
introspection); the kit owns dispatch. ``tools/list`` shows the model-visible tools only, unless the
server runs with helpers; hidden tools remain callable by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, ListToolsResult, PaginatedRequestParams, TextContent
from mcp_types import Tool as MCPTool

from servers.kit.runtime import DEFAULT_SESSION, LIST_HIDDEN_META_KEY, SESSION_META_KEY, DomainRuntime
from servers.kit.tools import ToolSpec, schema_stub
from servers.kit.wire import answer_unparsed


def session_from_meta(meta: Mapping[str, Any] | None, default_seed: int) -> tuple[str, int]:
    """(session id, seed) from a request's ``_meta``; a client that sends none shares one default
    session seeded with the server's ``--seed`` (so plain MCP clients just work)."""
    info = (meta or {}).get(SESSION_META_KEY)
    if not isinstance(info, Mapping):
        return DEFAULT_SESSION, default_seed
    sid = info.get("id")
    seed = info.get("seed", default_seed)
    if not isinstance(sid, str) or not sid:
        sid = DEFAULT_SESSION
    if not isinstance(seed, int) or isinstance(seed, bool):
        seed = default_seed
    return sid, seed


class KitServer(MCPServer):
    """An MCPServer whose tools come from a domain runtime."""

    def __init__(self, runtime: DomainRuntime, *, with_helpers: bool = False) -> None:
        super().__init__(
            name=runtime.name,
            instructions=runtime.domain.description or None,
            version="0.1.0",
            log_level="WARNING",
        )
        self.runtime = runtime
        self.with_helpers = with_helpers
        table = runtime.table
        every: list[MCPTool] = []
        for name, spec in table.specs.items():
            self.add_tool(schema_stub(spec), name=name, description=spec.description, meta=_tool_meta(runtime, spec))
            every.append(
                MCPTool(
                    name=name, description=spec.description, input_schema=table.schemas[name],
                    _meta=_tool_meta(runtime, spec),
                )
            )
        for name in runtime.session_tools:
            def stub() -> None:  # pragma: no cover - schema only
                """Session plumbing."""
            stub.__name__ = name
            self.add_tool(stub, name=name, description=f"Session plumbing: {name}")
            every.append(
                MCPTool(
                    name=name,
                    description=f"Session plumbing ({name.split('_', 1)[-1]}) for the calling session.",
                    input_schema={"type": "object", "properties": {}, "additionalProperties": False},
                    _meta={"io.prove/kind": "helper", "io.prove/domain": runtime.name},
                )
            )
        def advance_stub(minutes: int) -> None:  # pragma: no cover - schema only
            """Session plumbing."""
        advance_stub.__name__ = runtime.clock_tool
        self.add_tool(advance_stub, name=runtime.clock_tool, description="Advance the session clock")
        every.append(
            MCPTool(
                name=runtime.clock_tool,
                description="Session plumbing: advance the calling session's clock by some minutes.",
                input_schema={"type": "object", "properties": {"minutes": {"type": "integer", "minimum": 0}},
                              "required": ["minutes"], "additionalProperties": False},
                _meta={"io.prove/kind": "helper", "io.prove/domain": runtime.name},
            )
        )
        self._every = every
        self._visible = [t for t in every if (t.meta or {}).get("io.prove/kind") == "user"]

    async def list_tools(self) -> list[MCPTool]:
        return list(self._every if self.with_helpers else self._visible)

    async def _handle_list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        """Model-visible tools only, unless the server runs ``--with-helpers`` or the request's
        ``_meta`` opts in (our pool and synthesis do, so the SDK client knows the hidden tools' names
        and does not re-list on every helper call)."""
        opt_in = bool((ctx.meta or {}).get(LIST_HIDDEN_META_KEY))
        return ListToolsResult(tools=list(self._every) if opt_in else await self.list_tools())

    async def run_stdio_async(self) -> None:
        """The SDK's stdio transport, except that a line it cannot parse gets a JSON-RPC reply.

        The SDK hands unparseable lines (invalid JSON, nesting too deep, a lone surrogate escape,
        valid JSON that is no JSON-RPC message) to the session as exceptions, which drops them: the
        client would wait forever. Every request line must be answered, and with its id whenever the
        id can be read, or the client cannot pair the answer with its request
        (:func:`servers.kit.wire.answer_unparsed`)."""
        import anyio
        from mcp.server.stdio import stdio_server
        from mcp.shared._context_streams import create_context_streams
        from mcp.shared.message import SessionMessage

        async with stdio_server() as (read_stream, write_stream):
            inbox_writer, inbox = create_context_streams[SessionMessage | Exception](0)

            async def screen() -> None:
                async with inbox_writer:
                    async for item in read_stream:
                        if isinstance(item, Exception):
                            await write_stream.send(SessionMessage(answer_unparsed(item)))
                        else:
                            await inbox_writer.send(item)

            async with anyio.create_task_group() as tg:
                tg.start_soon(screen)
                await self._lowlevel_server.run(inbox, write_stream, self._lowlevel_server.create_initialization_options())
                tg.cancel_scope.cancel()

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult:
        meta = None
        if context is not None and context._request_context is not None:
            meta = context.request_context.meta
        sid, seed = session_from_meta(meta, self.runtime.default_seed)
        out = self.runtime.call(name, arguments, sid, seed)
        return CallToolResult(content=[TextContent(type="text", text=out.text)], is_error=out.is_error)


def _tool_meta(runtime: DomainRuntime, spec: ToolSpec) -> dict[str, Any]:
    meta: dict[str, Any] = {"io.prove/kind": spec.kind, "io.prove/domain": runtime.name}
    if spec.produces:
        meta["io.prove/produces"] = list(spec.produces)
    if spec.consumes:
        meta["io.prove/consumes"] = list(spec.consumes)
    if spec.requires:
        meta["io.prove/requires"] = list(spec.requires)
    if spec.establishes:
        meta["io.prove/establishes"] = list(spec.establishes)
    if spec.read_only:
        meta["io.prove/read_only"] = True
    sensitive = runtime.table.sensitive_params(spec.name)
    if sensitive:
        meta["io.prove/sensitive"] = sensitive
    return meta


def build_server(runtime: DomainRuntime, *, with_helpers: bool = False) -> KitServer:
    return KitServer(runtime, with_helpers=with_helpers)
