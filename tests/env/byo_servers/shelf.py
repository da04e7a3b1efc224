"""A tiny stdio MCP server (official SDK) whose tools each break one rule of byo synthesis, for the
tests that delete a rule and watch a test fail: ``python shelf.py`` in a session directory.

State: ``items.json`` in the working directory (a list of names; empty or missing: two items).
* ``list_items`` (read-only) — the names, as JSON: what a chain can build on;
* ``peek_item`` (read-only) — always an empty result: a read that finds nothing;
* ``find_item`` (read-only) — "Error: no item matches ..." as plain text, not ``isError``;
* ``touch_item`` (write) — answers "done" and changes nothing;
* ``add_item`` (write) — appends a name: a write that changes the snapshot.
"""

from __future__ import annotations

import json
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

READ = ToolAnnotations(read_only_hint=True)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False)
STATE = Path("items.json")
server = MCPServer("shelf")


def _items() -> list[str]:
    return json.loads(STATE.read_text()) if STATE.exists() and STATE.read_text().strip() else ["anvil", "bucket"]


@server.tool(annotations=READ)
def list_items() -> str:
    """The names on the shelf."""
    return json.dumps({"items": [{"name": n} for n in _items()]})


@server.tool(annotations=READ)
def peek_item(name: str) -> str:
    """Nothing, ever."""
    return ""


@server.tool(annotations=READ)
def find_item(query: str) -> str:
    """An error said in text."""
    return f"Error: no item matches {query!r}"


@server.tool(annotations=WRITE)
def touch_item(name: str) -> str:
    """Claims to write; writes nothing."""
    return "done"


@server.tool(annotations=WRITE)
def add_item(name: str) -> str:
    """Put a new name on the shelf."""
    STATE.write_text(json.dumps([*_items(), name]))
    return f"added {name}"


if __name__ == "__main__":
    server.run()
