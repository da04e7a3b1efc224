"""The filesystem Domain object (its own module so every tool module can import it)."""

from __future__ import annotations

from servers.filesystem.state import FsState
from servers.filesystem.world import generate
from servers.kit import Domain

DESCRIPTION = """Filesystem: a virtual, in-memory POSIX-like filesystem with a shell session.

Files, directories and symbolic links with owners, groups and rwx modes; a current working directory
and a logged-in user. Permissions are enforced (read needs r, writing needs w, entering a directory
needs x, creating or deleting an entry needs w on its directory, /tmp is sticky), per-user disk quotas
apply, and realistic errors are returned: no such file or directory, not a directory, is a directory,
directory not empty, file exists, permission denied, moving a directory into itself, quota exceeded.
Paths are purely virtual: nothing outside this simulated machine can be reached."""

domain = Domain("filesystem", FsState, generate, description=DESCRIPTION)
