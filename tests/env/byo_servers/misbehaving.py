"""A tiny stdio MCP server (official SDK) that misbehaves on request, for the byo backend's tests.

``python misbehaving.py [--exit-at-once]``. Tools: ``echo`` (well-behaved), ``bump`` (a counter in
``counter.txt`` in the working directory: state in the session directory), ``sleep_forever`` (never
answers), ``wrong_id`` (answers, but with another request's id) and ``crash`` (the process exits in
the middle of the call).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import anyio
import mcp_types
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

WRONG = "answer-with-a-wrong-id"
server = MCPServer("misbehaving")


@server.tool()
def echo(text: str) -> str:
    """Say ``text`` back."""
    return text


@server.tool()
def bump() -> str:
    """Add one to the counter in this session's directory."""
    path = Path("counter.txt")
    n = int(path.read_text()) + 1 if path.exists() else 1
    path.write_text(str(n))
    return str(n)


@server.tool()
async def sleep_forever() -> str:
    """Never answer."""
    await asyncio.sleep(10**6)
    return "unreachable"


@server.tool()
def wrong_id() -> str:
    """Answer under another id (the transport below rewrites it)."""
    return WRONG


@server.tool()
def crash() -> str:
    """Die mid-call."""
    os._exit(3)


async def main() -> None:
    async with stdio_server() as (read, write):
        send, receive = anyio.create_memory_object_stream[SessionMessage](0)

        async def forward() -> None:
            async with receive:
                async for msg in receive:
                    m = msg.message
                    if isinstance(m, mcp_types.JSONRPCResponse) and WRONG in m.model_dump_json():
                        msg = SessionMessage(m.model_copy(update={"id": f"{m.id}-not-yours"}))
                    await write.send(msg)

        async with anyio.create_task_group() as tg:
            tg.start_soon(forward)
            low = server._lowlevel_server
            await low.run(read, send, low.create_initialization_options())
            tg.cancel_scope.cancel()


if __name__ == "__main__":
    if "--exit-at-once" in sys.argv:
        print("misbehaving: refusing to start (--exit-at-once)", file=sys.stderr)
        sys.exit(2)
    anyio.run(main)
