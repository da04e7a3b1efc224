"""Path resolution, permissions and node primitives of the virtual filesystem.

Security: this module is the only place where paths are interpreted, and it interprets them purely as
strings over the in-memory node table. It never imports ``os``, ``os.path``, ``pathlib`` or calls
``open``: ``..`` above the virtual root stays at the virtual root, absolute paths are virtual, NUL and
control characters, over-long names and paths are rejected, and symbolic links are resolved inside the
table (a link target is just text, so it cannot point anywhere but another virtual node).
"""

from __future__ import annotations

import re
from dataclasses import replace

from servers.filesystem.state import DIRECTORY, FILE, SYMLINK, FsState, Node, User
from servers.kit import ToolError, iso
from servers.kit import now as clock_now

R, W, X = 4, 2, 1
MAX_PATH_BYTES = 4096
MAX_NAME_BYTES = 255
MAX_SYMLINK_HOPS = 40
UMASK = 0o022
SETGID, STICKY = 0o2000, 0o1000
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


# ---------------------------------------------------------------- session basics
def now(s: FsState) -> str:
    """The session clock as modification-time text (the kit's clock moves one minute per call)."""
    return iso(clock_now(s))


def me(s: FsState) -> User:
    return s.users[s.shell.get().user]


def mode_bits(node: Node) -> int:
    return int(node.mode, 8)


def fmt_mode(bits: int) -> str:
    return f"{bits & 0o7777:04o}"


# ---------------------------------------------------------------- pure path strings
def parent_of(path: str) -> str:
    if path == "/":
        return "/"
    cut = path.rfind("/")
    return "/" if cut == 0 else path[:cut]


def base_name(path: str) -> str:
    return path.rsplit("/", 1)[-1] or "/"


def join(directory: str, name: str) -> str:
    return "/" + name if directory == "/" else f"{directory}/{name}"


def within(path: str, ancestor: str) -> bool:
    """Whether ``path`` is ``ancestor`` or lies below it."""
    return ancestor == "/" or path == ancestor or path.startswith(ancestor + "/")


def utf8_len(text: str, field: str) -> int:
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise ToolError(f"{field} contains invalid Unicode (unpaired surrogate)", field=field,
                        code="invalid_path") from None


def check_path_text(raw: str, field: str) -> None:
    """Reject path text that no POSIX system would accept, before interpreting it."""
    if raw == "":
        raise ToolError(f"{field} must not be empty", field=field, code="invalid_path")
    if "\x00" in raw:
        raise ToolError(f"{field} contains a NUL byte; paths cannot contain NUL", field=field,
                        code="invalid_path")
    if _CONTROL.search(raw):
        raise ToolError(f"{field} contains a control character (newline, tab...); not allowed in paths",
                        field=field, code="invalid_path")
    if utf8_len(raw, field) > MAX_PATH_BYTES:
        raise ToolError(f"{field} is too long (more than {MAX_PATH_BYTES} bytes)", field=field,
                        code="invalid_path")


def check_name(name: str, field: str) -> None:
    """A single path component given on its own (a new file name, not a path)."""
    check_path_text(name, field)
    if "/" in name:
        raise ToolError(f"{field} '{name}' must be a plain name without '/'", field=field, code="invalid_path")
    if name in (".", ".."):
        raise ToolError(f"{field} cannot be '.' or '..'", field=field, code="invalid_path")
    if utf8_len(name, field) > MAX_NAME_BYTES:
        raise ToolError(f"{field} is too long (file names are at most {MAX_NAME_BYTES} bytes)", field=field,
                        code="invalid_path")


def _components(text: str, field: str) -> list[str]:
    comps = [c for c in text.split("/") if c not in ("", ".")]
    for comp in comps:
        if utf8_len(comp, field) > MAX_NAME_BYTES:
            raise ToolError(f"{field}: path component '{comp[:40]}...' is longer than {MAX_NAME_BYTES} bytes",
                            field=field, code="invalid_path")
    return comps


def normalize_static(raw: str, field: str) -> str:
    """Lexical normalisation against the virtual root (no cwd, no symlinks) — for discovery tools."""
    check_path_text(raw, field)
    out: list[str] = []
    for comp in _components(raw, field):
        if comp == "..":
            if out:
                out.pop()
        else:
            out.append(comp)
    return "/" + "/".join(out)


def start(s: FsState, raw: str, field: str) -> tuple[str, list[str]]:
    """Where resolution starts (a directory) and the components to walk; expands ``~`` and ``~user``.

    Nothing else is expanded: ``$HOME`` is an ordinary (probably missing) file name.
    """
    check_path_text(raw, field)
    text = raw
    if text == "~" or text.startswith("~/"):
        text = me(s).home + text[1:]
    elif text.startswith("~"):
        name = text[1:].split("/", 1)[0]
        user = s.users.get(name)
        if user is not None:
            text = user.home + text[1 + len(name):]
    base = "/" if text.startswith("/") else s.shell.get().cwd
    here = s.nodes.get(base)
    if here is None or here.kind != DIRECTORY:
        raise ToolError(f"{field}: the current working directory '{base}' no longer exists; use an absolute "
                        "path or change_directory first", field=field, code="not_found")
    return base, _components(text, field)


# ---------------------------------------------------------------- permissions
def allowed(s: FsState, node: Node, want: int) -> bool:
    """POSIX owner/group/other check of ``want`` (R|W|X bits) for the shell's user."""
    user = me(s)
    bits = mode_bits(node)
    if user.uid == 0:
        return not want & X or node.kind == DIRECTORY or bool(bits & 0o111)
    if node.owner == user.username:
        perm = (bits >> 6) & 7
    elif node.group in user.groups:
        perm = (bits >> 3) & 7
    else:
        perm = bits & 7
    return perm & want == want


def denied(s: FsState, path: str, action: str, field: str) -> ToolError:
    return ToolError(f"{field}: permission denied: user '{me(s).username}' may not {action} '{path}'", field=field,
                     code="permission_denied")


def need(s: FsState, node: Node, want: int, action: str, field: str) -> None:
    if not allowed(s, node, want):
        raise denied(s, node.path, action, field)


def need_entry_write(s: FsState, dir_path: str, field: str, victim: Node | None = None) -> None:
    """Creating/removing/renaming an entry needs w+x on its directory (and, in a sticky directory
    such as /tmp, removing needs ownership of the entry or of the directory)."""
    parent = s.nodes[dir_path]
    need(s, parent, W | X, "create or remove entries in", field)
    user = me(s)
    if victim is not None and mode_bits(parent) & STICKY and user.uid != 0 \
            and user.username not in (victim.owner, parent.owner):
        raise ToolError(f"{field}: permission denied: '{dir_path}' is a sticky directory and '{victim.path}' belongs "
                        f"to '{victim.owner}'", field=field, code="permission_denied")


# ---------------------------------------------------------------- resolution
def resolve(s: FsState, raw: str, field: str, *, follow: bool = True, must_exist: bool = True
            ) -> tuple[str, Node | None]:
    """Canonical virtual path of ``raw`` and its node (None if missing and ``must_exist`` is False).

    Every directory walked through needs search (x) permission; symbolic links in the middle are always
    followed, the final one only when ``follow``; ``..`` is physical and stops at the root.
    """
    cur, queue = start(s, raw, field)
    hops = 0
    while queue:
        comp = queue.pop(0)
        here = s.nodes[cur]
        if here.kind != DIRECTORY:
            raise ToolError(f"{field} '{raw}': '{cur}' is not a directory", field=field, code="not_a_directory")
        if not allowed(s, here, X):
            raise denied(s, cur, "search (enter) directory", field)
        if comp == "..":
            cur = parent_of(cur)
            continue
        child = join(cur, comp)
        node = s.nodes.get(child)
        last = not queue
        if node is None:
            if last and not must_exist:
                return child, None
            raise ToolError(f"{field} '{raw}': no such file or directory", field=field, code="not_found")
        if node.kind == SYMLINK and (follow or not last):
            hops += 1
            if hops > MAX_SYMLINK_HOPS:
                raise ToolError(f"{field} '{raw}': too many levels of symbolic links", field=field,
                                code="symlink_loop")
            target = node.target or ""
            queue = _components(target, field) + queue
            if target.startswith("/"):
                cur = "/"
            continue
        cur = child
    node = s.nodes[cur]
    if raw.endswith("/") and node.kind != DIRECTORY:
        raise ToolError(f"{field} '{raw}': not a directory", field=field, code="not_a_directory")
    return cur, node


def lookup(s: FsState, raw: str, field: str, *, follow: bool = True) -> tuple[str, Node]:
    path, node = resolve(s, raw, field, follow=follow)
    assert node is not None
    return path, node


def lookup_dir(s: FsState, raw: str, field: str) -> tuple[str, Node]:
    path, node = lookup(s, raw, field)
    if node.kind != DIRECTORY:
        raise ToolError(f"{field} '{raw}' is not a directory", field=field, code="not_a_directory")
    return path, node


def lookup_file(s: FsState, raw: str, field: str) -> tuple[str, Node]:
    path, node = lookup(s, raw, field)
    if node.kind == DIRECTORY:
        raise ToolError(f"{field} '{raw}' is a directory", field=field, code="is_a_directory")
    return path, node


def read_text(s: FsState, raw: str, field: str) -> tuple[str, Node]:
    """Path and node of a readable text file (binary files cannot be shown as text)."""
    path, node = lookup_file(s, raw, field)
    need(s, node, R, "read", field)
    if node.binary:
        kind = f"{node.archive_format} archive" if node.archive is not None else "binary file"
        raise ToolError(f"{field} '{path}' is a {kind} ({node.size} bytes) and cannot be shown as text",
                        field=field, code="binary")
    return path, node


def new_target(s: FsState, raw: str, field: str, *, follow: bool = False) -> str:
    """Canonical path for a node about to be created: must not exist; its directory must be writable.
    ``follow``: a dangling symlink names the node to create (as for writing a file through it)."""
    path, node = resolve(s, raw, field, follow=follow, must_exist=False)
    if node is not None:
        raise ToolError(f"{field} '{raw}' already exists", field=field, code="exists")
    need_entry_write(s, parent_of(path), field)
    return path


# ---------------------------------------------------------------- tree queries
def children(s: FsState, directory: str) -> list[Node]:
    """Direct entries of a directory, sorted by name."""
    prefix = "/" if directory == "/" else directory + "/"
    out = [s.nodes[k] for k in s.nodes
           if k != "/" and k.startswith(prefix) and "/" not in k[len(prefix):]]
    return sorted(out, key=lambda n: n.path)


def subtree(s: FsState, top: str) -> list[Node]:
    """``top`` and everything below it, parents before children."""
    return sorted((s.nodes[k] for k in s.nodes if within(k, top)), key=lambda n: n.path)


def walk(s: FsState, top: str, max_depth: int | None = None) -> tuple[list[tuple[Node, int]], list[str]]:
    """Everything below ``top`` (not ``top`` itself) with its depth, as the shell's user can see it:
    directories without read+search permission are listed but not entered (returned as denied)."""
    out: list[tuple[Node, int]] = []
    blocked: list[str] = []
    base_depth = 0 if top == "/" else top.count("/")
    for node in subtree(s, top)[1:]:
        if any(within(node.path, b) for b in blocked):
            continue
        depth = node.path.count("/") - base_depth
        if max_depth is not None and depth > max_depth:
            continue
        out.append((node, depth))
        if node.kind == DIRECTORY and not allowed(s, node, R | X):
            blocked.append(node.path)
    return out, blocked


def is_empty_dir(s: FsState, path: str) -> bool:
    prefix = "/" if path == "/" else path + "/"
    return not any(k != "/" and k.startswith(prefix) for k in s.nodes)


# ---------------------------------------------------------------- writes
def touch_dir(s: FsState, path: str) -> None:
    node = s.nodes[path]
    if node.mtime != now(s):
        s.nodes.edit(path).mtime = now(s)


def make_node(s: FsState, path: str, kind: str, *, mode: int | None = None, content: str = "",
              size: int | None = None, binary: bool = False, target: str | None = None) -> Node:
    """Create a node owned by the shell's user (group from a setgid parent, like Linux)."""
    user = me(s)
    parent = s.nodes[parent_of(path)]
    inherit = bool(mode_bits(parent) & SETGID)
    group = parent.group if inherit else user.groups[0]
    if mode is None:
        mode = {DIRECTORY: 0o777, FILE: 0o666, SYMLINK: 0o777}[kind] & ~(0 if kind == SYMLINK else UMASK)
    if kind == DIRECTORY and inherit:
        mode |= SETGID
    if size is None:
        size = {FILE: utf8_len(content, "content"), DIRECTORY: 4096, SYMLINK: len(target or "")}[kind]
    node = Node(path, kind, user.username, group, fmt_mode(mode), now(s), content, size, binary, target)
    s.nodes.put(path, node)
    touch_dir(s, parent.path)
    return node


def set_text(s: FsState, path: str, text: str, field: str = "content") -> Node:
    """Replace a file's content (it becomes a text file)."""
    node = s.nodes.edit(path)
    node.content, node.size, node.binary = text, utf8_len(text, field), False
    node.archive, node.archive_format, node.mtime = None, None, now(s)
    return node


def guard_busy(s: FsState, path: str, field: str) -> None:
    cwd = s.shell.get().cwd
    if path == "/" or within(cwd, path):
        raise ToolError(f"{field} '{path}' is the root or contains the current working directory ({cwd}); "
                        "change directory first", field=field, code="busy")


def remove_tree(s: FsState, top: str, field: str) -> int:
    """Delete ``top`` and its subtree; every inner directory must be readable, writable and searchable.
    All-or-nothing: a permission failure anywhere removes nothing (the call is rolled back)."""
    guard_busy(s, top, field)
    nodes = subtree(s, top)
    for node in nodes[1:]:
        parent = s.nodes[parent_of(node.path)]
        need(s, parent, R | W | X, "remove entries of", field)
        need_entry_write(s, parent.path, field, node)
    for node in nodes:
        s.nodes.delete(node.path)
    touch_dir(s, parent_of(top))
    return len(nodes)


def move_tree(s: FsState, src: str, dst: str) -> None:
    """Re-key ``src`` and its subtree under ``dst`` (the shell's cwd follows a moved directory)."""
    moved = [(n, dst + n.path[len(src):]) for n in subtree(s, src)]
    for node, _ in moved:
        s.nodes.delete(node.path)
    for node, new_path in moved:
        s.nodes.put(new_path, replace(node, path=new_path))
    touch_dir(s, parent_of(src))
    touch_dir(s, parent_of(dst))
    cwd = s.shell.get().cwd
    if within(cwd, src):
        s.shell.edit().cwd = dst + cwd[len(src):]


def copy_tree(s: FsState, src: str, dst: str, field: str) -> int:
    """Copy ``src`` (and its subtree) to the new path ``dst``, owned by the shell's user.
    Files need read permission, directories read and search; symlinks are copied as links."""
    nodes = subtree(s, src)
    for node in nodes:
        if node.kind == DIRECTORY:
            need(s, node, R | X, "read directory", field)
        elif node.kind == FILE:
            need(s, node, R, "read", field)
    for node in nodes:
        path = dst + node.path[len(src):]
        bits = mode_bits(node) & 0o777 & ~UMASK if node.kind != SYMLINK else 0o777
        made = make_node(s, path, node.kind, mode=bits, content=node.content, size=node.size,
                         binary=node.binary, target=node.target)
        if node.archive is not None:
            rec = s.nodes.edit(made.path)
            rec.archive, rec.archive_format = list(node.archive), node.archive_format
    return len(nodes)


# ---------------------------------------------------------------- quotas
def usage(s: FsState, username: str) -> int:
    return sum(n.size for n in s.nodes.values() if n.owner == username and n.kind == FILE)


def enforce_quota(s: FsState, username: str, field: str) -> None:
    user = s.users.get(username)
    if user is None or user.quota_bytes <= 0:
        return
    used = usage(s, username)
    if used > user.quota_bytes:
        raise ToolError(f"{field}: disk quota exceeded for user '{username}': this would use {used} bytes of a "
                        f"{user.quota_bytes}-byte quota", field=field, code="quota")


# ---------------------------------------------------------------- presentation
def perm_string(kind: str, mode: str) -> str:
    bits = int(mode, 8)
    out = [{DIRECTORY: "d", SYMLINK: "l"}.get(kind, "-")]
    for shift, special, mark in ((6, 0o4000, "s"), (3, SETGID, "s"), (0, STICKY, "t")):
        trio = (bits >> shift) & 7
        out.append("r" if trio & 4 else "-")
        out.append("w" if trio & 2 else "-")
        if bits & special:
            out.append(mark if trio & 1 else mark.upper())
        else:
            out.append("x" if trio & 1 else "-")
    return "".join(out)


def human(size: int) -> str:
    value = float(size)
    for unit in ("B", "K", "M", "G"):
        if value < 1024 or unit == "G":
            return f"{int(value)}{unit}" if unit == "B" else f"{value:.1f}{unit}"
        value /= 1024
    return f"{size}B"


def describe(node: Node) -> dict:
    """The metadata a long listing shows."""
    out: dict = {"path": node.path, "name": base_name(node.path), "type": node.kind, "size": node.size,
                 "owner": node.owner, "group": node.group, "mode": node.mode,
                 "permissions": perm_string(node.kind, node.mode), "modified": node.mtime}
    if node.kind == SYMLINK:
        out["target"] = node.target
    if node.binary:
        out["binary"] = True
    if node.archive_format:
        out["archive_format"] = node.archive_format
    return out
