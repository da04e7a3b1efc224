"""Simulated archives: zip / tar / tar.gz files stored as archive nodes, created, listed and extracted."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.filesystem.state import DIRECTORY, FILE, SYMLINK, ArchiveEntry, FsState
from servers.filesystem.vfs import (
    UMASK,
    R,
    W,
    X,
    base_name,
    enforce_quota,
    join,
    lookup,
    lookup_dir,
    lookup_file,
    make_node,
    me,
    need,
    need_entry_write,
    resolve,
    subtree,
)
from servers.filesystem.world import archive_descriptor, archive_size
from servers.kit import ToolError, tool

Format = Literal["zip", "tar", "tar.gz"]
_SUFFIXES = ((".tar.gz", "tar.gz"), (".tgz", "tar.gz"), (".tar", "tar"), (".zip", "zip"))


def _archive_of(s: FsState, raw: str, field: str):
    path, node = lookup_file(s, raw, field)
    need(s, node, R, "read", field)
    if node.archive is None:
        raise ToolError(f"'{path}' is not an archive (zip, tar or tar.gz)", field=field, code="not_an_archive")
    return path, node


@tool(consumes=("path",), produces=("archive_path",))
def create_file_archive(s: FsState, archive_path: str,
                        sources: Annotated[list[str], Field(min_length=1, max_length=50)],
                        format: Format | None = None, overwrite: bool = False) -> dict:
    """Pack files and directories into a new zip, tar or tar.gz archive (like zip -r / tar -czf). Every
    file packed must be readable; the archive counts toward your quota.

    Args:
        archive_path: The archive file to create, e.g. '~/backup.tar.gz'.
        sources: Files or directories to include; each is stored under its own name.
        format: Archive format; default inferred from archive_path's extension (.zip, .tar, .tar.gz, .tgz).
        overwrite: Replace an existing archive at archive_path.
    """
    if format is None:
        format = next((f for suffix, f in _SUFFIXES if archive_path.lower().endswith(suffix)), None)
        if format is None:
            raise ToolError("cannot infer the format: archive_path must end with .zip, .tar, .tar.gz or .tgz, "
                            "or give format", field="format")
    entries: list[ArchiveEntry] = []
    seen: set[str] = set()
    for raw in sources:
        src_path, _src = lookup(s, raw, "sources")
        name = base_name(src_path) if src_path != "/" else "root"
        for node in subtree(s, src_path):
            if node.kind == DIRECTORY:
                need(s, node, R | X, "read directory", "sources")
            elif node.kind == FILE:
                need(s, node, R, "read", "sources")
            rel = name + node.path[len(src_path):]
            if rel in seen:
                raise ToolError(f"two sources would both be stored as '{rel}'", field="sources", code="exists")
            seen.add(rel)
            entries.append(ArchiveEntry(rel, node.kind, node.mode, node.size, node.content, node.binary, node.target))
    target, existing = resolve(s, archive_path, "archive_path", must_exist=False)
    if existing is not None:
        if not overwrite:
            raise ToolError(f"archive_path: '{target}' already exists (set overwrite=true to replace it)", field="archive_path",
                            code="exists")
        if existing.kind == DIRECTORY:
            raise ToolError(f"archive_path '{target}' is a directory", field="archive_path", code="is_a_directory")
        need(s, existing, W, "write", "archive_path")
        rec = s.nodes.edit(target)
    else:
        need_entry_write(s, target.rsplit("/", 1)[0] or "/", "archive_path")
        rec = s.nodes.edit(make_node(s, target, FILE, binary=True, size=0).path)
    rec.content, rec.size = archive_descriptor(format, entries), archive_size(format, entries)
    rec.binary, rec.archive, rec.archive_format = True, entries, format
    enforce_quota(s, rec.owner, "archive_path")
    return {"archive_path": target, "format": format, "members": len(entries), "size": rec.size}


@tool(consumes=("archive_path",), read_only=True)
def list_file_archive(s: FsState, archive_path: str) -> dict:
    """List the members of a zip/tar archive without extracting it (like unzip -l / tar -tvf).

    Args:
        archive_path: The archive file.
    """
    path, node = _archive_of(s, archive_path, "archive_path")
    members = [{"path": e.path, "type": e.kind, "size": e.size, "mode": e.mode} for e in node.archive or []]
    return {"archive_path": path, "format": node.archive_format, "members": members,
            "total_uncompressed": sum(e.size for e in node.archive or []), "archive_size": node.size}


@tool(consumes=("archive_path", "directory_path"), produces=("path",))
def extract_file_archive(s: FsState, archive_path: str, destination: str = ".", overwrite: bool = False) -> dict:
    """Extract a zip/tar archive into an existing directory (like unzip -d / tar -xf -C). Members that
    would land outside the destination ('../' or absolute paths) make the whole extraction fail.

    Args:
        archive_path: The archive file.
        destination: Existing directory to extract into; default the current directory.
        overwrite: Replace existing files that have the same path as a member.
    """
    path, node = _archive_of(s, archive_path, "archive_path")
    dest, dnode = lookup_dir(s, destination, "destination")
    need(s, dnode, W | X, "create entries in", "destination")
    members = node.archive or []
    for entry in members:
        parts = entry.path.split("/")
        if entry.path.startswith("/") or ".." in parts or "\x00" in entry.path:
            raise ToolError(f"archive_path: refusing to extract: member '{entry.path}' would be written outside the "
                            f"destination (path traversal)", field="archive_path", code="unsafe_archive")
    extracted = []
    for entry in sorted(members, key=lambda e: e.path):
        parts = [p for p in entry.path.split("/") if p not in ("", ".")]
        cur = dest
        for i, part in enumerate(parts):
            cur = join(cur, part)
            existing = s.nodes.get(cur)
            last = i == len(parts) - 1
            if existing is not None and (not last or entry.kind == DIRECTORY):
                if existing.kind != DIRECTORY:
                    raise ToolError(f"destination: cannot extract '{entry.path}': '{cur}' exists and is not a directory",
                                    field="destination", code="not_a_directory")
                need(s, existing, W | X, "create entries in", "destination")
                continue
            if existing is None and (not last or entry.kind == DIRECTORY):
                need_entry_write(s, cur.rsplit("/", 1)[0] or "/", "destination")
                mode = int(entry.mode, 8) & 0o777 if last else None
                make_node(s, cur, DIRECTORY, mode=mode)
                continue
            if existing is not None:
                if not overwrite:
                    raise ToolError(f"destination: '{cur}' already exists (set overwrite=true to replace it)",
                                    field="destination", code="exists")
                if existing.kind == DIRECTORY:
                    raise ToolError(f"destination: cannot replace directory '{cur}' with a file", field="destination",
                                    code="is_a_directory")
                need(s, existing, W, "write", "destination")
                need_entry_write(s, cur.rsplit("/", 1)[0] or "/", "destination", existing)
                s.nodes.delete(cur)
            need_entry_write(s, cur.rsplit("/", 1)[0] or "/", "destination")
            bits = int(entry.mode, 8) & 0o777 & ~UMASK
            make_node(s, cur, entry.kind if entry.kind == SYMLINK else FILE, mode=bits, content=entry.content,
                      size=entry.size, binary=entry.binary, target=entry.target)
        extracted.append(cur)
    enforce_quota(s, me(s).username, "destination")
    return {"archive_path": path, "destination": dest, "extracted": len(extracted), "members": extracted[:100]}
