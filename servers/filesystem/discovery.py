"""Hidden discovery tools: every user, node and attribute value, ignoring permissions, so synthesis can
ground tasks in real paths (never shown to the model)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.filesystem.state import FILE, FsState
from servers.filesystem.tools_nav import extension
from servers.filesystem.vfs import base_name, describe, normalize_static, subtree
from servers.kit import ToolError, discovery, value_counts


@discovery(produces=("username",))
def filesystem_list_users(s: FsState) -> list:
    """Every account with its password, groups, home and quota (for grounding synthesised tasks)."""
    current = s.shell.get().user
    return [{"username": u.username, "uid": u.uid, "full_name": u.full_name, "groups": u.groups, "home": u.home,
             "password": u.password, "quota_bytes": u.quota_bytes, "logged_in": u.username == current}
            for u in s.users.values()]


@discovery(produces=("path", "file_path", "directory_path", "archive_path"))
def filesystem_find_nodes(s: FsState, path_prefix: str = "/", kind: Literal["file", "directory", "symlink"] | None = None,
                          name_contains: str | None = None, owner: str | None = None,
                          extension_is: str | None = None, limit: Annotated[int, Field(ge=1, le=2000)] = 200) -> list:
    """Every node below a path, ignoring permissions (metadata only, no content).

    Args:
        path_prefix: Absolute directory to enumerate below.
        kind: Only nodes of this type.
        name_contains: Case-insensitive substring of the name.
        owner: Only nodes owned by this username.
        extension_is: Only files with this extension (without the dot), e.g. 'csv'.
        limit: Maximum number of nodes.
    """
    top = normalize_static(path_prefix, "path_prefix")
    needle = (name_contains or "").lower()
    rows = [describe(n) for n in subtree(s, top)
            if (kind is None or n.kind == kind) and needle in base_name(n.path).lower()
            and (owner is None or n.owner == owner)
            and (extension_is is None or (n.kind == FILE and extension(n.path) == extension_is.lower()))]
    return rows[:limit]


@discovery(consumes=("path",))
def filesystem_get_node(s: FsState, path: str) -> dict:
    """One node's full record, content included, ignoring permissions.

    Args:
        path: Absolute virtual path.
    """
    target = normalize_static(path, "path")
    node = s.nodes.get(target)
    if node is None:
        raise ToolError(f"path: no node at '{target}'", field="path", code="not_found")
    return node


@discovery
def filesystem_get_unique_values(s: FsState, field: Literal["owner", "group", "type", "extension", "mode"]) -> list:
    """Distinct values of a node attribute with their counts.

    Args:
        field: Which attribute to enumerate.
    """
    values = ({"owner": n.owner, "group": n.group, "type": n.kind, "mode": n.mode,
               "extension": extension(n.path) if n.kind == FILE else None}[field] for n in s.nodes.values())
    return value_counts(v or "(none)" for v in values if v is not None)

