"""A tiny streamable-HTTP MCP server (official SDK) that keeps each MCP connection's state apart,
for the byo backend's ``isolation: server`` tests: ``python notes_http.py PORT``.

State lives per MCP session (the ``mcp-session-id`` the transport gave the connection), as a server
that isolates sessions itself does; tools: ``add_note`` (a write) and ``list_notes`` (read-only).
"""

from __future__ import annotations

import json
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("notes")
_notes: dict[str, list[str]] = {}


def _mine(ctx: Context) -> list[str]:
    request = ctx.request_context.request
    sid = request.headers.get("mcp-session-id") if request is not None else None
    if not sid:
        raise ValueError("no MCP session: this server keeps state per connection")
    return _notes.setdefault(sid, [])


@server.tool()
def add_note(text: str, ctx: Context) -> str:
    """Keep ``text`` in this connection's notes."""
    _mine(ctx).append(text)
    return f"{len(_mine(ctx))} notes"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def list_notes(ctx: Context) -> str:
    """This connection's notes."""
    return json.dumps(_mine(ctx))


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
