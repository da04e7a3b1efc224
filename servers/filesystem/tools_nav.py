"""Shell, navigation and inspection tools: pwd, cd, ls, tree, stat, realpath, find, counts, du, quota, su."""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Annotated, Literal

from pydantic import Field

from servers.filesystem.state import DIRECTORY, FILE, SYMLINK, FsState, Node
from servers.filesystem.vfs import (
    R,
    W,
    X,
    allowed,
    base_name,
    children,
    describe,
    human,
    lookup,
    lookup_dir,
    me,
    need,
    resolve,
    usage,
    walk,
)
from servers.kit import Sensitive, ToolError, tool

Kind = Literal["file", "directory", "symlink"]
_MIME = {"txt": "text/plain", "md": "text/markdown", "csv": "text/csv", "py": "text/x-python",
         "sh": "text/x-shellscript", "yaml": "application/yaml", "json": "application/json",
         "html": "text/html", "log": "text/plain", "jpg": "image/jpeg", "png": "image/png",
         "pdf": "application/pdf", "zip": "application/zip", "gz": "application/gzip", "tar": "application/x-tar"}
MAX_TREE_LINES = 500


def extension(path: str) -> str:
    name = base_name(path)
    return name.rsplit(".", 1)[-1].lower() if "." in name.lstrip(".") else ""


def _visible(node: Node, show_hidden: bool) -> bool:
    return show_hidden or not base_name(node.path).startswith(".")


# ---------------------------------------------------------------- shell session
@tool(produces=("directory_path",), read_only=True)
def print_working_directory(s: FsState) -> dict:
    """Show the current working directory of the shell (like pwd); relative paths start from here."""
    return {"cwd": s.shell.get().cwd}


@tool(consumes=("directory_path",), produces=("directory_path",))
def change_directory(s: FsState, path: str) -> dict:
    """Change the shell's current working directory (like cd). Needs search (x) permission on it.

    Args:
        path: Directory to enter: absolute (/var/log), relative (../docs), '~' or '~/sub' for the home
            directory. Symbolic links are resolved to the physical directory.
    """
    target, node = lookup_dir(s, path, "path")
    need(s, node, X, "enter directory", "path")
    s.shell.edit().cwd = target
    return {"cwd": target}


@tool(produces=("username",), read_only=True)
def get_current_shell_user(s: FsState) -> dict:
    """Show who is logged in to the shell (like whoami/id): username, groups, home and cwd."""
    user = me(s)
    return {"username": user.username, "uid": user.uid, "full_name": user.full_name, "groups": user.groups,
            "primary_group": user.groups[0], "home": user.home, "cwd": s.shell.get().cwd}


@tool(consumes=("username",), produces=("username",))
def switch_shell_user(s: FsState, username: str, password: Sensitive) -> dict:
    """Log the shell in as another user (like `su - user`); the working directory becomes their home.
    Direct root login is disabled on this machine.

    Args:
        username: The account to switch to.
        password: That account's password, exactly as the user provided it.
    """
    if username == "root":
        raise ToolError("username: root login is disabled on this system; use an account in the 'wheel' group",
                        field="username", code="permission_denied")
    user = s.users.get(username)
    if user is None:
        raise ToolError(f"unknown username '{username}'", field="username", code="not_found")
    if user.password != password:
        raise ToolError(f"authentication failure for '{username}': wrong password", field="password", code="auth")
    home = s.nodes.get(user.home)
    cwd = user.home if home is not None and home.kind == DIRECTORY else "/"  # like login: no home -> "/"
    shell = s.shell.edit()
    shell.user, shell.cwd = username, cwd
    return {"username": username, "groups": user.groups, "home": user.home, "cwd": cwd}


# ---------------------------------------------------------------- listings
@tool(consumes=("directory_path",), produces=("path",), read_only=True)
def list_directory(s: FsState, path: str = ".", show_hidden: bool = False, long_format: bool = False,
                   sort_by: Literal["name", "size", "modified", "type"] = "name", reverse: bool = False) -> dict:
    """List a directory's entries (like ls). Needs read permission on the directory; a file path lists
    just that file.

    Args:
        path: Directory (or file) to list; default the current directory.
        show_hidden: Include entries whose names start with '.' (like ls -a).
        long_format: Include type, size, owner, group, permissions and modification time (like ls -l).
        sort_by: name (alphabetical), size (largest first), modified (newest first) or type
            (directories first).
        reverse: Reverse the chosen order.
    """
    target, node = lookup(s, path, "path")
    if node.kind == DIRECTORY:
        need(s, node, R, "list directory", "path")
        if long_format:
            need(s, node, X, "read entry details of", "path")
        entries = [n for n in children(s, target) if _visible(n, show_hidden)]
    else:
        entries = [node]
    entries.sort(key=lambda n: (base_name(n.path).casefold(), n.path))
    if sort_by == "size":
        entries.sort(key=lambda n: n.size, reverse=True)
    elif sort_by == "modified":
        entries.sort(key=lambda n: n.mtime, reverse=True)
    elif sort_by == "type":
        entries.sort(key=lambda n: n.kind != DIRECTORY)
    if reverse:
        entries.reverse()
    rows = [describe(n) if long_format else
            {"name": base_name(n.path), "type": n.kind} | ({"target": n.target} if n.kind == SYMLINK else {})
            for n in entries]
    return {"path": target, "count": len(rows), "entries": rows}


@tool(consumes=("directory_path",), produces=("path",), read_only=True)
def show_directory_tree(s: FsState, path: str = ".", max_depth: Annotated[int, Field(ge=1, le=10)] = 3,
                        show_hidden: bool = False, directories_only: bool = False) -> dict:
    """Draw the directory hierarchy below a directory (like tree). Unreadable directories are marked.

    Args:
        path: Top directory; default the current directory.
        max_depth: How many levels to descend.
        show_hidden: Include dot-files and dot-directories.
        directories_only: Show directories only (like tree -d).
    """
    top, node = lookup_dir(s, path, "path")
    need(s, node, R | X, "list directory", "path")
    nodes, blocked = walk(s, top, max_depth)
    shown = [(n, d) for n, d in nodes if not directories_only or n.kind == DIRECTORY]
    hidden_dirs = [n.path for n, _ in shown if not _visible(n, show_hidden) and n.kind == DIRECTORY]
    shown = [(n, d) for n, d in shown
             if _visible(n, show_hidden) and not any(n.path.startswith(h + "/") for h in hidden_dirs)]
    by_parent: dict[str, list[Node]] = {}
    for n, _ in shown:
        by_parent.setdefault(n.path.rsplit("/", 1)[0] or "/", []).append(n)
    lines = [top]

    def draw(directory: str, prefix: str) -> None:
        kids = by_parent.get(directory, [])
        for i, kid in enumerate(kids):
            if len(lines) >= MAX_TREE_LINES:
                return
            last = i == len(kids) - 1
            label = base_name(kid.path) + ("/" if kid.kind == DIRECTORY else "")
            if kid.kind == SYMLINK:
                label += f" -> {kid.target}"
            if kid.path in blocked:
                label += "  [permission denied]"
            lines.append(prefix + ("└── " if last else "├── ") + label)
            draw(kid.path, prefix + ("    " if last else "│   "))

    draw(top, "")
    return {"path": top, "tree": "\n".join(lines), "directories": sum(n.kind == DIRECTORY for n, _ in shown),
            "files": sum(n.kind != DIRECTORY for n, _ in shown), "truncated": len(lines) >= MAX_TREE_LINES}


@tool(consumes=("path",), read_only=True)
def get_file_info(s: FsState, path: str, follow_symlinks: bool = False) -> dict:
    """Show a file's or directory's metadata (like stat): type, size, owner, group, mode, modification
    time, MIME type, and what the current user may do with it.

    Args:
        path: File, directory or symbolic link to inspect.
        follow_symlinks: Describe the link's target instead of the link itself.
    """
    _, node = lookup(s, path, "path", follow=follow_symlinks)
    info = describe(node)
    info["access"] = {"read": allowed(s, node, R), "write": allowed(s, node, W), "execute": allowed(s, node, X)}
    if node.kind == FILE:
        info["mime_type"] = _MIME.get(extension(node.path), "application/octet-stream" if node.binary
                                      else "text/plain")
        if not node.binary:
            info["lines"] = node.content.count("\n")
    elif node.kind == DIRECTORY and allowed(s, node, R):
        info["entries"] = len(children(s, node.path))
    return info


@tool(consumes=("path",), produces=("path",), read_only=True)
def resolve_real_path(s: FsState, path: str) -> dict:
    """Turn a path into its canonical absolute form with '.', '..', '~' and symbolic links resolved
    (like realpath). The last component may be missing.

    Args:
        path: Any path, relative or absolute.
    """
    real, node = resolve(s, path, "path", must_exist=False)
    return {"input": path, "real_path": real, "exists": node is not None,
            "type": node.kind if node is not None else None}


# ---------------------------------------------------------------- searches and summaries
@tool(consumes=("directory_path",), produces=("path",), read_only=True)
def find_files(s: FsState, path: str = ".", name_pattern: str | None = None, kind: Kind | None = None,
               min_size: Annotated[int, Field(ge=0, le=10**12)] | None = None,
               max_size: Annotated[int, Field(ge=0, le=10**12)] | None = None,
               max_depth: Annotated[int, Field(ge=1, le=20)] | None = None, owner: str | None = None,
               limit: Annotated[int, Field(ge=1, le=500)] = 100) -> dict:
    """Search a directory tree for entries matching all given criteria (like find). Directories the
    current user cannot read are reported in permission_denied and not searched.

    Args:
        path: Directory to search from; default the current directory.
        name_pattern: Shell glob matched against the entry name, e.g. '*.csv' or 'report_*'
            (case-sensitive).
        kind: Only entries of this type.
        min_size: Only entries of at least this many bytes.
        max_size: Only entries of at most this many bytes.
        max_depth: Descend at most this many levels (1 = direct entries only).
        owner: Only entries owned by this username.
        limit: Maximum number of matches returned.
    """
    top, node = lookup_dir(s, path, "path")
    need(s, node, R | X, "search directory", "path")
    nodes, blocked = walk(s, top, max_depth)
    matches = [n for n, _ in nodes
               if (name_pattern is None or fnmatchcase(base_name(n.path), name_pattern))
               and (kind is None or n.kind == kind) and (owner is None or n.owner == owner)
               and (min_size is None or n.size >= min_size) and (max_size is None or n.size <= max_size)]
    return {"path": top, "count": len(matches),
            "matches": [{"path": n.path, "type": n.kind, "size": n.size} for n in matches[:limit]],
            "truncated": len(matches) > limit, "permission_denied": blocked}


@tool(consumes=("directory_path",), read_only=True)
def count_directory_entries(s: FsState, path: str = ".", recursive: bool = False,
                            include_hidden: bool = True) -> dict:
    """Count files, directories and symbolic links in a directory, with a per-extension breakdown.

    Args:
        path: Directory to count in; default the current directory.
        recursive: Count the whole tree below it instead of its direct entries only.
        include_hidden: Count entries whose names start with '.'.
    """
    top, node = lookup_dir(s, path, "path")
    need(s, node, R | X, "list directory", "path")
    nodes, blocked = walk(s, top, None if recursive else 1)
    if not include_hidden:
        nodes = [(n, d) for n, d in nodes if not any(part.startswith(".") for part in n.path[len(top):].split("/"))]
    by_ext: dict[str, int] = {}
    for n, _ in nodes:
        if n.kind == FILE:
            ext = extension(n.path) or "(none)"
            by_ext[ext] = by_ext.get(ext, 0) + 1
    counts = {k: sum(n.kind == k for n, _ in nodes) for k in (FILE, DIRECTORY, SYMLINK)}
    return {"path": top, "files": counts[FILE], "directories": counts[DIRECTORY], "symlinks": counts[SYMLINK],
            "total": len(nodes), "by_extension": dict(sorted(by_ext.items())), "permission_denied": blocked}


@tool(consumes=("path",), read_only=True)
def get_disk_usage(s: FsState, path: str = ".") -> dict:
    """Total size of a file or directory tree (like du), with the size of each direct entry, largest
    first. Parts the current user cannot read are listed in permission_denied and not counted.

    Args:
        path: File or directory to measure; default the current directory.
    """
    top, node = lookup(s, path, "path")
    if node.kind != DIRECTORY:
        return {"path": top, "total_bytes": node.size, "human": human(node.size), "entries": [],
                "permission_denied": []}
    need(s, node, R | X, "read directory", "path")
    nodes, blocked = walk(s, top)
    per_child: dict[str, int] = {}
    total = 0
    for n, _ in nodes:
        if n.kind == FILE:
            total += n.size
            first = n.path[len(top):].lstrip("/").split("/", 1)[0]
            per_child[first] = per_child.get(first, 0) + n.size
    for n in children(s, top):
        per_child.setdefault(base_name(n.path), 0)
    entries = sorted(per_child.items(), key=lambda kv: (-kv[1], kv[0]))
    return {"path": top, "total_bytes": total, "human": human(total),
            "entries": [{"name": k, "bytes": v, "human": human(v)} for k, v in entries],
            "permission_denied": blocked}


@tool(consumes=("username",), read_only=True)
def get_disk_quota(s: FsState, username: str | None = None) -> dict:
    """Show a user's disk quota: bytes used by files they own anywhere, the limit and what is left.

    Args:
        username: Whose quota to show; default the logged-in user.
    """
    name = username or me(s).username
    user = s.users.get(name)
    if user is None:
        raise ToolError(f"unknown username '{name}'", field="username", code="not_found")
    used = usage(s, name)
    if user.quota_bytes <= 0:
        return {"username": name, "used_bytes": used, "quota_bytes": None, "available_bytes": None,
                "percent_used": None, "unlimited": True}
    return {"username": name, "used_bytes": used, "quota_bytes": user.quota_bytes,
            "available_bytes": max(0, user.quota_bytes - used), "used_human": human(used),
            "quota_human": human(user.quota_bytes), "percent_used": round(100 * used / user.quota_bytes, 1),
            "unlimited": False}
