"""A tiny stdio MCP server (official SDK) built to set off every warning of ``python -m prove_jax.byo
check``: ``python lint.py`` in a session directory whose ``state.json`` (the seed) holds a list of
labels.

* ``list_labels`` (read-only): the labels and a long changelog, over 400 characters;
* ``open_vault`` (read-only): raises a plain exception, which the SDK reports only as "Error
  executing tool open_vault": never exercised, and a generic error;
* ``stamp_label`` (write): answers "stamped" and writes nothing: the snapshot stays as it was;
* ``add_label`` (write): appends a label: a write the snapshot sees.

At start-up it writes its pid to ``boot.txt``: a snapshot that prints it differs between two fresh
sessions and stays the same within one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

READ = ToolAnnotations(read_only_hint=True)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False)
STATE = Path("state.json")
server = MCPServer("lint")


def _labels() -> list[str]:
    return json.loads(STATE.read_text())["labels"] if STATE.exists() else ["alpha", "beta"]


@server.tool(annotations=READ)
def list_labels() -> str:
    """The labels, and what changed."""
    log = [f"revision {k}: relabelled the shelf after the audit of week {k}" for k in range(12)]
    return json.dumps({"labels": [{"label": x} for x in _labels()], "changelog": log})


@server.tool(annotations=READ)
def open_vault(code: str) -> str:
    """Fails, and says nothing about why."""
    raise RuntimeError(f"vault {code} is sealed")


@server.tool(annotations=WRITE)
def stamp_label(label: str) -> str:
    """Claims to stamp a label; writes nothing."""
    return "stamped"


@server.tool(annotations=WRITE)
def add_label(label: str) -> str:
    """A new label."""
    labels = _labels()
    if label in labels:
        raise ToolError(f"label {label!r} exists")
    STATE.write_text(json.dumps({"labels": [*labels, label]}))
    return f"added {label}"


if __name__ == "__main__":
    Path("boot.txt").write_text(f"{os.getpid()}\n")
    server.run()
