"""Filesystem: a virtual in-memory POSIX-like filesystem with a shell session (40 user tools).

Layout: ``state`` (records), ``world`` (seeded generator), ``vfs`` (path resolution, permissions and
node primitives — the only code that interprets paths, never touching the host filesystem),
``registry`` (the Domain), and the tool modules ``tools_nav`` (shell, listings, searches),
``tools_manage`` (mkdir/rm/cp/mv/ln/chmod/chown), ``tools_text`` (contents) and ``tools_archive``
(archives + hidden discovery tools). Importing this package registers every tool.
"""

from servers.filesystem import tools_archive, tools_manage, tools_nav, tools_text
from servers.filesystem.registry import domain

__all__ = ["domain", "tools_archive", "tools_manage", "tools_nav", "tools_text"]
