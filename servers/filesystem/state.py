"""Records and state of the virtual filesystem domain.

The filesystem is a Table of nodes keyed by their normalised absolute *virtual* path ("/home/ana/notes.txt").
Keying by path keeps every write copy-on-write friendly: creating or editing a file touches one record
(plus its parent directory's mtime), and moving a directory re-keys only that subtree — a session never
copies the tree. Nothing here is ever backed by the host filesystem.
"""

from __future__ import annotations

from dataclasses import dataclass

from servers.kit import Cell, State, Table

FILE, DIRECTORY, SYMLINK = "file", "directory", "symlink"


@dataclass
class ArchiveEntry:
    """One member of a simulated .zip/.tar archive (paths are relative, '/'-separated)."""

    path: str
    kind: str  # file | directory | symlink
    mode: str
    size: int = 0
    content: str = ""
    binary: bool = False
    target: str | None = None


@dataclass
class Node:
    """A file, directory or symbolic link.

    ``mode`` is the octal permission text ("0644", "2775" with setgid, "1777" with the sticky bit).
    Binary files (photos, PDFs, archives) carry a short descriptor as ``content`` and a declared
    ``size``; text files have ``size`` = UTF-8 length of ``content``.
    """

    path: str
    kind: str
    owner: str
    group: str
    mode: str
    mtime: str
    content: str = ""
    size: int = 0
    binary: bool = False
    target: str | None = None  # symlinks: the target text exactly as given to create_symlink
    archive_format: str | None = None  # zip | tar | tar.gz for archive files
    archive: list[ArchiveEntry] | None = None


@dataclass
class User:
    username: str
    uid: int
    full_name: str
    groups: list[str]  # the first one is the primary group new files get
    home: str
    password: str
    quota_bytes: int  # 0 = unlimited


@dataclass
class Shell:
    """The interactive shell of the session: who is logged in and where they are."""

    user: str
    cwd: str


class FsState(State):
    nodes: Table[Node]
    users: Table[User]
    shell: Cell[Shell]
