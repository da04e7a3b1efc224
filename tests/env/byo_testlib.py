"""The three third-party servers of the byo tests as ServerSpecs, their seed fixtures, and helpers.

The node servers come from ``third_party/mcp`` (``npm ci --prefix third_party/mcp`` in the README's
test command); ``mcp-server-git`` from the ``test`` extra. Nothing is fetched at run time.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from prove_jax.env import MCPPool
from prove_jax.env.byo import PINNED_ENV, ByoBackend, Rewrite, ServerSpec

ROOT = Path(__file__).resolve().parents[2]
NODE_MODULES = ROOT / "third_party" / "mcp" / "node_modules" / "@modelcontextprotocol"
MISBEHAVING = Path(__file__).resolve().parent / "byo_servers" / "misbehaving.py"
JS_DATE = Rewrite(r"\w{3} \w{3} \d\d \d{4} \d\d:\d\d:\d\d GMT[+-]\d{4} \([^)]*\)", "<time>")
"""How server-filesystem prints an mtime (``Date.toString``): masked, since a file written during an
episode gets the wall clock."""

SNAPSHOT_FILES = ["{python}", "-c", "import json, pathlib; print(json.dumps({str(p): p.read_text() if p.is_file() else None "
                  "for p in sorted(pathlib.Path('.').rglob('*')) if p.is_file() or (p.is_dir() and not p.is_symlink())}, "
                  "sort_keys=True))"]
"""Every file's text and every directory (as null): a directory a session makes is state too (a
snapshot of files only saw ``create_directory`` change nothing, so synthesis dropped the call but
its directory stayed, and the chain's later calls no longer replayed)."""


def node_server(package: str) -> str:
    script = NODE_MODULES / package / "dist" / "index.js"
    if not script.exists():
        raise RuntimeError(f"{script} is missing: run `npm ci --prefix third_party/mcp` (the README's test command)")
    return str(script)


def memory_spec(fixtures: Path, **kw: Any) -> ServerSpec:
    seed = fixtures / "memory.jsonl"
    seed.write_text(json.dumps({"type": "entity", "name": "Seed", "entityType": "fixture",
                                "observations": ["from the seed"]}) + "\n")
    return ServerSpec(name="memory", command=["node", node_server("server-memory")],
                      env={"MEMORY_FILE_PATH": "{session_dir}/memory.jsonl"}, seed=str(seed),
                      snapshot=["cat", "memory.jsonl"], **kw)


def filesystem_spec(fixtures: Path, **kw: Any) -> ServerSpec:
    seed = fixtures / "files"
    (seed / "docs").mkdir(parents=True, exist_ok=True)
    (seed / "docs" / "readme.txt").write_text("hello from the seed\n")
    escape = seed / "escape"
    if not escape.is_symlink():
        escape.symlink_to("/etc")  # a link out of the copy: the server must refuse to follow it
    return ServerSpec(name="files", command=["node", node_server("server-filesystem"), "{session_dir}"],
                      seed=str(seed), snapshot=SNAPSHOT_FILES, rewrite=[JS_DATE], **kw)


def git_spec(fixtures: Path, **kw: Any) -> ServerSpec:
    """A seeded repository (pinned identities and dates): one commit, three untracked files."""
    repo = fixtures / "repo"
    if not (repo / ".git").exists():
        repo.mkdir(parents=True)
        env = {"PATH": os.environ["PATH"], "HOME": str(fixtures)} | PINNED_ENV
        (repo / "README.md").write_text("seed\n")
        for k in range(3):
            (repo / f"file{k}.txt").write_text(f"content {k}\n")
        for cmd in (["init", "-q", "-b", "main"], ["add", "README.md"], ["commit", "-q", "-m", "seed"]):
            subprocess.run(["git", *cmd], cwd=repo, env=env, check=True)
    return ServerSpec(name="git", command=["{python}", "-m", "mcp_server_git", "--repository", "{session_dir}"],
                      seed=str(repo),
                      snapshot=["sh", "-c", "git log --all --format='%H %an %ad %D %s' && git status --porcelain"],
                      **kw)


def pool_of(specs: list[ServerSpec], run_dir: Path, **kw: Any) -> MCPPool:
    return MCPPool({s.name: ByoBackend(s, run_dir) for s in specs}, **kw)


Step = tuple[str, dict[str, Any]]


async def play(pool: MCPPool, server: str, steps: list[Step], *, pause_s: float = 0.0) -> tuple[list[str], Any]:
    """One episode: each step's (error flag, result text), then the snapshot. ``pause_s`` between
    steps lets concurrent episodes interleave."""
    async with pool.episode([server], seed=0) as ep:
        out = []
        for name, args in steps:
            res = await ep.call(name, args)
            assert res.error_kind not in ("timeout", "server_died", "transport"), res.text
            out.append(f"{res.is_error} {res.text}")
            await asyncio.sleep(pause_s)
        return out, (await ep.snapshots())[server]
