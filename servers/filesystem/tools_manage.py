"""Tools that create, remove, copy, move and re-permission nodes (mkdir, rmdir, touch, rm, cp, mv, ln,
chmod, chown, structure copies and pattern moves)."""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from typing import Annotated

from pydantic import Field

from servers.filesystem.state import DIRECTORY, FILE, SYMLINK, FsState, Node
from servers.filesystem.vfs import (
    R,
    W,
    X,
    base_name,
    check_name,
    check_path_text,
    children,
    copy_tree,
    enforce_quota,
    fmt_mode,
    guard_busy,
    is_empty_dir,
    join,
    lookup,
    lookup_dir,
    make_node,
    me,
    mode_bits,
    move_tree,
    need,
    need_entry_write,
    new_target,
    now,
    parent_of,
    remove_tree,
    resolve,
    start,
    subtree,
    walk,
    within,
)
from servers.kit import ToolError, tool

OctalMode = Annotated[str, Field(pattern=r"^[0-7]{3,4}$")]
ModeSpec = Annotated[str, Field(pattern=r"^(?:[0-7]{3,4}|[ugoa]*[-+=][rwxXst]*(?:,[ugoa]*[-+=][rwxXst]*)*)$")]
_CLAUSE = re.compile(r"^([ugoa]*)([-+=])([rwxXst]*)$")
_SHIFT = {"u": 6, "g": 3, "o": 0}
_SPECIAL = {"u": 0o4000, "g": 0o2000, "o": 0o1000}


def apply_mode(old: int, spec: str, is_dir: bool) -> int:
    """New mode bits from an octal ('640') or symbolic ('u+x,go-w', 'a=r') chmod specification."""
    if spec.isdigit():
        value = int(spec, 8)
        return value | (old & 0o7000) if len(spec) == 3 and is_dir else value
    mode = old
    for clause in spec.split(","):
        m = _CLAUSE.match(clause)
        assert m is not None  # guaranteed by the schema pattern
        who = m.group(1).replace("a", "ugo") or "ugo"
        add = 0
        for w in set(who):
            for p in m.group(3):
                if p in "rwx":
                    add |= {"r": 4, "w": 2, "x": 1}[p] << _SHIFT[w]
                elif p == "X" and (is_dir or old & 0o111):
                    add |= 1 << _SHIFT[w]
                elif p == "s" and w in "ug":
                    add |= _SPECIAL[w]
                elif p == "t" and w == "o":
                    add |= 0o1000
        if m.group(2) == "+":
            mode |= add
        elif m.group(2) == "-":
            mode &= ~add
        else:
            for w in set(who):
                mode &= ~((7 << _SHIFT[w]) | _SPECIAL[w])
            mode |= add
    return mode


def _destination(s: FsState, src: str, destination: str) -> tuple[str, Node | None]:
    """cp/mv destination rule: an existing directory (or a link to one) receives the source under its
    own name; any other existing entry, a symbolic link included, is the destination itself."""
    dest, node = resolve(s, destination, "destination", follow=False, must_exist=False)
    if node is not None and node.kind == SYMLINK:
        try:
            target, tnode = resolve(s, destination, "destination", must_exist=False)
        except ToolError:
            tnode = None  # a looping or unreachable link is just an entry to replace
        if tnode is not None and tnode.kind == DIRECTORY:
            dest, node = target, tnode
    if node is not None and node.kind == DIRECTORY:
        dest = join(dest, base_name(src))
        node = s.nodes.get(dest)
    return dest, node


def _replace_existing(s: FsState, src: Node, dest: Node, overwrite: bool) -> None:
    """What an existing destination allows before it is replaced (mv semantics)."""
    if not overwrite:
        raise ToolError(f"destination '{dest.path}' already exists (set overwrite=true to replace it)",
                        field="destination", code="exists")
    if dest.kind == DIRECTORY and src.kind != DIRECTORY:
        raise ToolError(f"destination: cannot overwrite directory '{dest.path}' with a non-directory", field="destination",
                        code="is_a_directory")
    if src.kind == DIRECTORY and dest.kind != DIRECTORY:
        raise ToolError(f"destination: cannot overwrite non-directory '{dest.path}' with a directory", field="destination",
                        code="not_a_directory")
    if dest.kind == DIRECTORY and not is_empty_dir(s, dest.path):
        raise ToolError(f"destination: cannot replace '{dest.path}': directory not empty", field="destination", code="not_empty")


def _move(s: FsState, src_path: str, src: Node, dest: str, dnode: Node | None, overwrite: bool) -> None:
    if src_path == "/":
        raise ToolError("source: cannot move the root directory", field="source", code="busy")
    if dest == src_path:
        raise ToolError(f"destination: '{src_path}' and '{dest}' are the same file", field="destination", code="exists")
    if src.kind == DIRECTORY and within(dest, src_path):
        raise ToolError(f"destination: cannot move directory '{src_path}' into itself ('{dest}')", field="destination",
                        code="invalid_move")
    need_entry_write(s, parent_of(src_path), "source", src)
    need_entry_write(s, parent_of(dest), "destination", dnode)
    if dnode is not None:
        _replace_existing(s, src, dnode, overwrite)
        guard_busy(s, dest, "destination")
        s.nodes.delete(dest)
    move_tree(s, src_path, dest)


# ---------------------------------------------------------------- create / remove
@tool(consumes=("directory_path",), produces=("directory_path",))
def make_directory(s: FsState, path: str, parents: bool = False, mode: OctalMode | None = None) -> dict:
    """Create a directory (like mkdir). Needs write permission on the parent directory.

    Args:
        path: The directory to create.
        parents: Also create missing parent directories and do not fail if it already exists (mkdir -p).
        mode: Octal permissions such as '750'; default 755 (umask 022).
    """
    bits = int(mode, 8) if mode else None
    if not parents:
        target = new_target(s, path, "path")
        make_node(s, target, DIRECTORY, mode=bits)
        return {"path": target, "created": [target]}
    base, comps = start(s, path, "path")
    created: list[str] = []
    target = base
    for i in range(len(comps)):
        target, node = resolve(s, base + "/" + "/".join(comps[: i + 1]), "path", must_exist=False)
        if node is None:
            need_entry_write(s, parent_of(target), "path")
            make_node(s, target, DIRECTORY, mode=bits)
            created.append(target)
        elif node.kind != DIRECTORY:
            raise ToolError(f"path: '{target}' exists and is not a directory", field="path", code="not_a_directory")
    return {"path": target, "created": created}


@tool(consumes=("directory_path",))
def remove_directory(s: FsState, path: str) -> dict:
    """Remove an empty directory (like rmdir). Needs write permission on its parent.

    Args:
        path: The empty directory to remove.
    """
    target, node = lookup(s, path, "path", follow=False)
    if node.kind != DIRECTORY:
        raise ToolError(f"path '{path}' is not a directory", field="path", code="not_a_directory")
    if not is_empty_dir(s, target):
        raise ToolError(f"cannot remove '{target}': directory not empty (use delete_path with recursive=true)",
                        field="path", code="not_empty")
    guard_busy(s, target, "path")
    need_entry_write(s, parent_of(target), "path", node)
    s.nodes.delete(target)
    s.nodes.edit(parent_of(target)).mtime = now(s)
    return {"removed": target}


@tool(consumes=("path",), produces=("file_path",))
def touch_file(s: FsState, path: str) -> dict:
    """Create an empty file, or set an existing file's modification time to now (like touch).

    Args:
        path: The file to create or touch.
    """
    target, node = resolve(s, path, "path", must_exist=False)
    if node is None:
        need_entry_write(s, parent_of(target), "path")
        make_node(s, target, FILE)
        return {"path": target, "created": True}
    if node.owner != me(s).username:
        need(s, node, W, "update the timestamp of", "path")
    s.nodes.edit(target).mtime = now(s)
    return {"path": target, "created": False, "modified": now(s)}


@tool(consumes=("path",))
def delete_path(s: FsState, path: str, recursive: bool = False) -> dict:
    """Delete a file or symbolic link, or a whole directory tree with recursive=true (like rm / rm -r).
    Needs write permission on the containing directory; nothing is deleted if any part is not allowed.

    Args:
        path: What to delete (a symbolic link itself is deleted, not its target).
        recursive: Required to delete a directory and everything in it.
    """
    target, node = lookup(s, path, "path", follow=False)
    if target == "/":
        raise ToolError("path: refusing to delete the root directory", field="path", code="busy")
    if node.kind == DIRECTORY and not recursive:
        raise ToolError(f"'{target}' is a directory (set recursive=true, or use remove_directory if empty)",
                        field="recursive", code="is_a_directory")
    need_entry_write(s, parent_of(target), "path", node)
    if node.kind == DIRECTORY:
        count = remove_tree(s, target, "path")
    else:
        s.nodes.delete(target)
        s.nodes.edit(parent_of(target)).mtime = now(s)
        count = 1
    return {"removed": target, "entries_removed": count}


@tool(consumes=("path",), produces=("path",))
def create_symlink(s: FsState, target: str, link_path: str) -> dict:
    """Create a symbolic link pointing at a target path (like ln -s). The target need not exist.

    Args:
        target: What the link points to, stored as given (relative targets are relative to the link's
            directory).
        link_path: Where to create the link; must not exist yet.
    """
    check_path_text(target, "target")
    path = new_target(s, link_path, "link_path")
    make_node(s, path, SYMLINK, target=target)
    return {"link_path": path, "target": target}


# ---------------------------------------------------------------- copy / move
@tool(consumes=("path",), produces=("path",))
def copy_path(s: FsState, source: str, destination: str, recursive: bool = False, overwrite: bool = False) -> dict:
    """Copy a file, or a directory tree with recursive=true (like cp / cp -r). If the destination is an
    existing directory the copy goes inside it. Copies belong to the current user.

    Args:
        source: File or directory to copy.
        destination: New path, or an existing directory to copy into.
        recursive: Required to copy a directory.
        overwrite: Replace an existing destination file (needs write permission on it).
    """
    src_path, src = lookup(s, source, "source")
    if src.kind == DIRECTORY and not recursive:
        raise ToolError(f"'{src_path}' is a directory (set recursive=true to copy it)", field="recursive",
                        code="is_a_directory")
    dest, dnode = _destination(s, src_path, destination)
    if dnode is not None and dnode.kind == SYMLINK:
        dest, dnode = resolve(s, dest, "destination", must_exist=False)
    if dest == src_path:
        raise ToolError(f"destination: '{src_path}' and '{dest}' are the same file", field="destination", code="exists")
    if src.kind == DIRECTORY and within(dest, src_path):
        raise ToolError(f"destination: cannot copy directory '{src_path}' into itself ('{dest}')", field="destination",
                        code="invalid_move")
    if dnode is None:
        need_entry_write(s, parent_of(dest), "destination")
        count = copy_tree(s, src_path, dest, "source")
        enforce_quota(s, me(s).username, "destination")
        return {"source": src_path, "destination": dest, "entries_copied": count}
    _replace_existing(s, src, dnode, overwrite)
    if dnode.kind == DIRECTORY:
        raise ToolError(f"destination directory '{dest}' already exists; remove it or pick another name",
                        field="destination", code="exists")
    need(s, src, R, "read", "source")
    need(s, dnode, W, "write", "destination")
    rec = s.nodes.edit(dest)
    rec.content, rec.size, rec.binary, rec.mtime = src.content, src.size, src.binary, now(s)
    rec.archive, rec.archive_format = src.archive, src.archive_format
    enforce_quota(s, rec.owner, "destination")
    return {"source": src_path, "destination": dest, "entries_copied": 1, "overwritten": True}


@tool(consumes=("path",), produces=("path",))
def move_path(s: FsState, source: str, destination: str, overwrite: bool = False) -> dict:
    """Move or rename a file or directory (like mv). If the destination is an existing directory the
    source goes inside it. Needs write permission on both containing directories; a directory cannot
    be moved into itself.

    Args:
        source: File, directory or link to move.
        destination: New path, or an existing directory to move into.
        overwrite: Replace an existing destination file (or empty directory, when moving a directory).
    """
    src_path, src = lookup(s, source, "source", follow=False)
    dest, dnode = _destination(s, src_path, destination)
    _move(s, src_path, src, dest, dnode, overwrite)
    return {"source": src_path, "destination": dest}


@tool(consumes=("path",), produces=("path",))
def rename_path(s: FsState, path: str, new_name: str) -> dict:
    """Rename a file or directory in place, keeping it in the same directory.

    Args:
        path: The entry to rename.
        new_name: The new name only (no '/'), e.g. 'report_final.md'.
    """
    check_name(new_name, "new_name")
    src_path, src = lookup(s, path, "path", follow=False)
    dest = join(parent_of(src_path), new_name)
    if s.nodes.get(dest) is not None:
        raise ToolError(f"new_name: '{dest}' already exists", field="new_name", code="exists")
    _move(s, src_path, src, dest, None, False)
    return {"old_path": src_path, "new_path": dest}


@tool(consumes=("directory_path",), produces=("path",))
def move_files_by_pattern(s: FsState, source_directory: str, pattern: str, destination_directory: str,
                          overwrite: bool = False) -> dict:
    """Move every entry of a directory whose name matches a glob into another directory
    (like `mv src/*.log dest/`). Hidden entries match only a pattern starting with '.'.

    Args:
        source_directory: Directory whose direct entries are matched.
        pattern: Shell glob such as '*.csv' or 'IMG_*'.
        destination_directory: Existing directory receiving the entries.
        overwrite: Replace existing files of the same name in the destination.
    """
    check_path_text(pattern, "pattern")
    src_dir, snode = lookup_dir(s, source_directory, "source_directory")
    need(s, snode, R | X, "list directory", "source_directory")
    dest_dir, _ = lookup_dir(s, destination_directory, "destination_directory")
    matches = [n for n in children(s, src_dir) if fnmatchcase(base_name(n.path), pattern)
               and (pattern.startswith(".") or not base_name(n.path).startswith("."))]
    if not matches:
        raise ToolError(f"no entries in '{src_dir}' match pattern '{pattern}'", field="pattern", code="not_found")
    moved = []
    for node in matches:
        dest = join(dest_dir, base_name(node.path))
        if within(dest_dir, node.path):
            raise ToolError(f"destination_directory: cannot move '{node.path}' into itself", field="destination_directory",
                            code="invalid_move")
        _move(s, node.path, node, dest, s.nodes.get(dest), overwrite)
        moved.append({"from": node.path, "to": dest})
    return {"moved": moved, "count": len(moved)}


@tool(consumes=("directory_path",), produces=("directory_path",))
def copy_directory_structure(s: FsState, source: str, destination: str) -> dict:
    """Recreate a directory's folder hierarchy (directories only, no files) at a new path, e.g. to set up
    an empty project skeleton. Unreadable sub-directories are skipped and reported.

    Args:
        source: Directory whose sub-directory layout is copied.
        destination: New directory to create (must not exist).
    """
    src_dir, snode = lookup_dir(s, source, "source")
    need(s, snode, R | X, "read directory", "source")
    dest = new_target(s, destination, "destination")
    if within(dest, src_dir):
        raise ToolError(f"destination: cannot copy the structure of '{src_dir}' into itself", field="destination",
                        code="invalid_move")
    nodes, blocked = walk(s, src_dir)
    make_node(s, dest, DIRECTORY, mode=mode_bits(snode) & 0o777)
    created = [dest]
    for node, _ in nodes:
        if node.kind == DIRECTORY:
            path = dest + node.path[len(src_dir):]
            make_node(s, path, DIRECTORY, mode=mode_bits(node) & 0o777 | 0o700)
            created.append(path)
    return {"destination": dest, "directories_created": len(created), "created": created, "skipped": blocked}


# ---------------------------------------------------------------- permissions and ownership
@tool(consumes=("path",))
def change_file_permissions(s: FsState, path: str, mode: ModeSpec, recursive: bool = False) -> dict:
    """Change permission bits (like chmod). Only the owner may do this.

    Args:
        path: File or directory (symbolic links are followed).
        mode: Octal ('640', '2775') or symbolic ('u+x', 'go-rwx', 'a=r,u+w').
        recursive: Apply to the whole directory tree (all entries must belong to you).
    """
    top, node = lookup(s, path, "path")
    if recursive and node.kind == DIRECTORY:
        nodes, blocked = walk(s, top)
        if blocked:
            raise ToolError(f"path: cannot read directory '{blocked[0]}' to change permissions below it", field="path",
                            code="permission_denied")
        targets = [node] + [n for n, _ in nodes if n.kind != SYMLINK]
    else:
        targets = [node]
    user = me(s)
    changed = []
    for target in targets:
        if user.uid != 0 and target.owner != user.username:
            raise ToolError(f"operation not permitted: '{target.path}' belongs to '{target.owner}', only the "
                            "owner may change its mode", field="path", code="permission_denied")
        new = fmt_mode(apply_mode(mode_bits(target), mode, target.kind == DIRECTORY))
        if new != target.mode:
            s.nodes.edit(target.path).mode = new
        changed.append({"path": target.path, "mode": new})
    return {"changed": changed[:50], "count": len(changed)}


@tool(consumes=("path", "username"))
def change_file_owner(s: FsState, path: str, owner: str | None = None, group: str | None = None,
                      recursive: bool = False) -> dict:
    """Change a file's owner and/or group (like chown / chgrp). Changing the owner requires membership
    of 'wheel' (sudo); changing the group requires owning the file and belonging to the new group.

    Args:
        path: File or directory (symbolic links are followed).
        owner: New owning username.
        group: New group name.
        recursive: Apply to the whole directory tree.
    """
    if owner is None and group is None:
        raise ToolError("nothing to change: give owner and/or group", field="owner")
    if owner is not None and s.users.get(owner) is None:
        raise ToolError(f"unknown user '{owner}'", field="owner", code="not_found")
    known = {g for u in s.users.values() for g in u.groups} | {n.group for n in s.nodes.values()}
    if group is not None and group not in known:
        raise ToolError(f"unknown group '{group}'", field="group", code="not_found")
    top, node = lookup(s, path, "path")
    targets = subtree(s, top) if recursive and node.kind == DIRECTORY else [node]
    user = me(s)
    admin = user.uid == 0 or "wheel" in user.groups
    for target in targets:
        if owner is not None and owner != target.owner and not admin:
            raise ToolError(f"operation not permitted: only root or members of 'wheel' may change the owner of "
                            f"'{target.path}'", field="owner", code="permission_denied")
        if group is not None and group != target.group and not admin:
            if target.owner != user.username:
                raise ToolError(f"operation not permitted: '{target.path}' belongs to '{target.owner}'",
                                field="path", code="permission_denied")
            if group not in user.groups:
                raise ToolError(f"operation not permitted: you are not a member of group '{group}'",
                                field="group", code="permission_denied")
        if (owner or target.owner) != target.owner or (group or target.group) != target.group:
            rec = s.nodes.edit(target.path)
            rec.owner, rec.group = owner or rec.owner, group or rec.group
    if owner is not None:
        enforce_quota(s, owner, "owner")
    return {"path": top, "owner": owner or node.owner, "group": group or node.group, "count": len(targets)}
