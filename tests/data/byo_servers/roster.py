"""A tiny stdio MCP server (official SDK) whose listing is longer than the episode's clip: the ids
of the last members lie past character 400 of ``list_members``' result, as a realistic team roster
does. ``python roster.py``; read-only, no state."""

from __future__ import annotations

import json

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

READ = ToolAnnotations(read_only_hint=True)
NAMES = ["Ada Byron", "Alan Kay", "Barbara Liskov", "Donald Knuth", "Edsger Dijkstra", "Frances Allen",
         "Grace Hopper", "John Backus"]
MEMBERS = [{"member_id": f"mbr-{7301 + 17 * i}", "name": n, "role": "engineer" if i % 2 else "reviewer"}
           for i, n in enumerate(NAMES)]
server = MCPServer("roster")


@server.tool(annotations=READ)
def list_members() -> str:
    """Every member of the team."""
    return json.dumps({"members": MEMBERS})


@server.tool(annotations=READ)
def get_member(member_id: str) -> str:
    """One member's profile."""
    for m in MEMBERS:
        if m["member_id"] == member_id:
            return json.dumps({**m, "team": "compilers", "since": 2019})
    raise ToolError(f"no member with id {member_id!r}")


if __name__ == "__main__":
    server.run("stdio")
