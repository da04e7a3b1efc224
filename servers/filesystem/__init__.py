"""Filesystem: a virtual, in-memory POSIX-like filesystem with a shell session.

Files, directories and symbolic links with owners, groups and rwx modes; a current working directory
and a logged-in user; simulated zip/tar archives. Paths are purely virtual: nothing outside this
simulated machine can be reached (``vfs`` is the only code that interprets paths, as strings over the
node table). State behaviour: permissions are enforced (reading needs r, writing needs w, entering a
directory needs x, creating or deleting an entry needs w on its directory, /tmp is sticky), per-user
disk quotas apply, new nodes get the user's primary group (or the directory's under setgid) and the
umask 022, and every write stamps the node (and its directory) with the session clock's time, which
moves one minute per call.

State-dependent failures an agent must handle: no such file or directory, not a directory, is a
directory, directory not empty, file exists (unless overwrite is set), permission denied (including
the sticky bit and chmod/chown by non-owners), chown by users outside 'wheel' or to groups they are
not in, unknown users or groups, root login, a wrong password, moving or copying a directory into
itself, a source and destination that are the same file, deleting the root or the current directory,
too many levels of symbolic links, a current directory that no longer exists, empty, over-long or
control-character paths and names, names with '/' or '.'/'..', binary files shown or appended to as
text, invalid or catastrophic regular expressions and replacements, bad cut field lists, patterns
matching nothing, archives with an unknown format, members that would escape the destination or
collide, extracting over existing files, and disk quota exceeded — every failure leaves the state
exactly as it was.
"""

from servers.filesystem import discovery, tools_archive, tools_manage, tools_nav, tools_text
from servers.filesystem.state import FsState
from servers.filesystem.world import generate
from servers.kit import Domain

domain = Domain("filesystem", FsState, generate, description=__doc__ or "",
                modules=(tools_nav, tools_archive, tools_manage, tools_text, discovery))

__all__ = ["domain"]
