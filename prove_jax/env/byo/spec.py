"""One user-supplied MCP server as a typed config record (``env.byo`` in a run's YAML).

    env:
      domains: []
      byo:
        - name: memory
          command: [node, third_party/mcp/node_modules/@modelcontextprotocol/server-memory/dist/index.js]
          env: {MEMORY_FILE_PATH: "{session_dir}/memory.jsonl"}
          seed: fixtures/memory.jsonl
          snapshot: [cat, memory.jsonl]

Why these fields: a third-party server knows nothing of our sessions, so the pool gives each session
private state from outside. ``isolation: process`` runs one process per session over its own
*session directory* (a fresh copy of ``seed``); ``{session_dir}`` in ``command``, ``cwd`` and ``env``
is replaced by that directory, which is how a server is told where its state lives (a root on the
command line, a state file in an environment variable, its working directory). ``isolation: server``
is for a URL whose server keeps state per MCP connection itself: each session gets its own connection.

Gold arguments must be the same in every session, so a session's directory is never shown to the
model: ``path_alias`` (``/workspace``) stands for it in arguments (rewritten before a call) and in
results and snapshots (the directory rewritten back to the alias), and relative paths resolve
against it (the process's working directory). ``pin_env`` pins what makes replays differ (git
identities and dates, the time zone, hash seeds); ``rewrite`` masks what cannot be pinned (an
mtime a server prints) in results and snapshots.

Paths (:meth:`ServerSpec.resolve_paths`): ``seed``, ``cwd`` and the local paths in ``command``,
``snapshot`` and ``prepare`` resolve against ``base_dir``, the directory of the YAML file that
declares the server (set by :mod:`prove_jax.yamlconf`; the working directory for a spec built in
code). An argv element is a local path when it exists there (``server.py``,
``../../third_party/.../index.js``); a program with a ``/`` must; a name the session's copy of the
seed holds (``[cat, memory.jsonl]``) is the session's file and is left for the process, which runs
in the session directory; anything else (``-m``, a branch name, shell text) is passed as written.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from pathlib import Path

from prove_jax.yamlconf import BASE_DIR, REPLACE

SESSION_DIR = "{session_dir}"
PYTHON = "{python}"
"""Templates: the session's directory, and this interpreter (``[{python}, -m, some_server]``)."""

PINNED_DATE = "1704067200 +0000"  # git's own format: both git and GitPython read it
PINNED_ENV: dict[str, str] = {
    "TZ": "UTC",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",  # nothing written beside an installed server's sources
    "SOURCE_DATE_EPOCH": "1704067200",
    "GIT_AUTHOR_NAME": "prove",
    "GIT_AUTHOR_EMAIL": "prove@example.invalid",
    "GIT_COMMITTER_NAME": "prove",
    "GIT_COMMITTER_EMAIL": "prove@example.invalid",
    "GIT_AUTHOR_DATE": PINNED_DATE,
    "GIT_COMMITTER_DATE": PINNED_DATE,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_TERMINAL_PROMPT": "0",
}
"""``pin_env``: a commit made in an episode gets the same hash in every session and in its replay."""

ISOLATIONS = ("process", "server")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


@dataclasses.dataclass(frozen=True)
class Rewrite:
    """A regular expression masked in results and snapshots (e.g. a timestamp the server prints)."""

    pattern: str
    replace: str = ""

    def __post_init__(self) -> None:
        try:
            re.compile(self.pattern)
        except re.error as exc:
            raise ValueError(f"rewrite pattern {self.pattern!r} is not a regular expression: {exc}") from exc


@dataclasses.dataclass
class ServerSpec:
    """A user's MCP server as a pool backend (:class:`prove_jax.env.byo.ByoBackend`).

    ``command`` (argv; a stdio server) or ``url`` (streamable HTTP); ``seed`` a directory (its
    contents) or a file copied into every fresh session directory; ``read_only`` tool names the user
    declares read-only (on top of the server's own ``readOnlyHint``); ``snapshot`` argv run in the
    session directory whose stdout is the session's final state (JSON, or kept as text); ``prepare``
    argv run once, at start-up, in a copy of ``seed`` (pinned env), whose result is the fixture every
    session copies: what cannot be committed as files (a git repository built from plain files, with
    pinned dates, so its hashes are the same in every run); ``warm``
    processes started ahead of the sessions that will take them (start-up is 0.2-0.8 s a process).
    """

    name: str = ""
    command: list[str] = dataclasses.field(default_factory=list, metadata=REPLACE)
    url: str = ""
    isolation: str = "process"  # process | server
    cwd: str = SESSION_DIR
    env: dict[str, str] = dataclasses.field(default_factory=dict, metadata=REPLACE)
    seed: str = ""
    read_only: list[str] = dataclasses.field(default_factory=list, metadata=REPLACE)
    snapshot: list[str] = dataclasses.field(default_factory=list, metadata=REPLACE)
    prepare: list[str] = dataclasses.field(default_factory=list, metadata=REPLACE)
    path_alias: str = "/workspace"
    rewrite: list[Rewrite] = dataclasses.field(default_factory=list, metadata=REPLACE)
    pin_env: bool = True
    warm: int = 2
    start_timeout_s: float = 30.0
    call_timeout_s: float = 10.0
    snapshot_timeout_s: float = 10.0
    base_dir: str = dataclasses.field(default="", metadata=BASE_DIR)  # the declaring YAML's directory

    def __post_init__(self) -> None:
        self.rewrite = [r if isinstance(r, Rewrite) else Rewrite(**r) for r in self.rewrite]
        if not _NAME.fullmatch(self.name):
            raise ValueError(f"byo server name {self.name!r}: letters, digits, '_' and '-', starting with a letter")
        where = f"byo server {self.name!r}"
        if bool(self.command) == bool(self.url):
            raise ValueError(f"{where}: give exactly one of command (a stdio server) or url")
        if self.isolation not in ISOLATIONS:
            raise ValueError(f"{where}: isolation must be one of {ISOLATIONS}, got {self.isolation!r}")
        if self.url and self.isolation != "server":
            raise ValueError(f"{where}: a url is one shared server, so isolation must be 'server' "
                             "(it keeps each MCP connection's state apart itself)")
        if self.isolation == "server" and (self.seed or self.snapshot or self.prepare):
            raise ValueError(f"{where}: seed, prepare and snapshot need a session directory (isolation: process)")
        if not self.path_alias.startswith("/") or self.path_alias.rstrip("/") != self.path_alias:
            raise ValueError(f"{where}: path_alias must be an absolute path without a trailing '/'")
        if self.warm < 0:
            raise ValueError(f"{where}: warm must be >= 0")
        for field in ("start_timeout_s", "call_timeout_s", "snapshot_timeout_s"):
            if getattr(self, field) <= 0:
                raise ValueError(f"{where}: {field} must be > 0")

    @property
    def anchor(self) -> Path:
        """What relative paths resolve against: ``base_dir``, else the working directory."""
        return Path(self.base_dir or os.getcwd()).absolute()

    def anchor_said(self) -> str:
        """The anchor in words, for an error message."""
        if self.base_dir:
            return f"resolved against {self.anchor}, the directory of the YAML file that declares it"
        return f"resolved against the working directory {self.anchor} (the server was not declared in a YAML file)"

    def seed_path(self) -> Path | None:
        """The seed fixture, absolute; an error names the resolved path and the anchor."""
        if not self.seed:
            return None
        path = Path(os.path.normpath(self.anchor / self.seed))
        if not path.exists():
            raise ValueError(f"byo server {self.name!r}: seed fixture {path} does not exist "
                             f"(seed {self.seed!r} {self.anchor_said()})")
        return path

    def resolve_paths(self) -> ResolvedPaths:
        """Every path of the entry made absolute (see the module docstring); errors name the
        resolved path and what it was resolved against."""
        seed = self.seed_path()
        cwd = self.cwd
        if SESSION_DIR not in cwd and not Path(cwd).is_absolute():
            cwd = os.path.normpath(self.anchor / cwd)
        return ResolvedPaths(seed, [self._local(a, i, "command", seed) for i, a in enumerate(self.command)],
                             [self._local(a, i, "snapshot", seed) for i, a in enumerate(self.snapshot)],
                             [self._local(a, i, "prepare", seed) for i, a in enumerate(self.prepare)], cwd)

    def _local(self, arg: str, index: int, field: str, seed: Path | None) -> str:
        if ("{" in arg or not arg or arg.startswith("-") or Path(arg).is_absolute() or any(c.isspace() for c in arg)
                or (index == 0 and "/" not in arg)):  # a template, a flag, shell text, a program on PATH
            return arg
        if seed is not None and ((seed / arg).exists() if seed.is_dir() else arg == seed.name):
            return arg  # the session's own copy (the process runs in its session directory)
        here = Path(os.path.normpath(self.anchor / arg))
        if here.exists():
            return str(here)
        where = f"byo server {self.name!r}: {field}[{index}] {arg!r}"
        if index == 0:
            raise ValueError(f"{where}: {here} does not exist ({self.anchor_said()})")
        if "/" in arg and Path(arg).exists() and Path.cwd() != self.anchor:
            hint = os.path.relpath(Path(arg).absolute(), self.anchor)
            raise ValueError(f"{where}: {here} does not exist ({self.anchor_said()}); it exists relative to the "
                             f"working directory {Path.cwd()}: write {hint!r}")
        return arg

    def process_env(self, session_dir: Path, base: dict[str, str]) -> dict[str, str]:
        """Pins (``pin_env``), then ``base`` (the backend's ``HOME``/``TMPDIR``), then the user's own
        ``env`` (templated): the user has the last word."""
        pins = dict(PINNED_ENV) if self.pin_env else {}
        return pins | base | {k: template(v, session_dir) for k, v in self.env.items()}


@dataclasses.dataclass(frozen=True)
class ResolvedPaths:
    """A spec's paths, absolute (:meth:`ServerSpec.resolve_paths`)."""

    seed: Path | None
    command: list[str]
    snapshot: list[str]
    prepare: list[str]
    cwd: str


def template(value: str, session_dir: Path) -> str:
    """Plain replacement, not ``str.format``: arguments may hold braces of their own (JSON, globs)."""
    return value.replace(SESSION_DIR, str(session_dir)).replace(PYTHON, sys.executable)
