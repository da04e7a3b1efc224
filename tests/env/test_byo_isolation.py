"""Per-session private state for three third-party MCP servers run one process per session.

Each test runs several sessions concurrently, every one writing and then reading back what its
server shows, and compares each with a solo replay of the same steps in a fresh session: equal
results and equal final snapshots mean no session saw another's writes, and that nothing in the
results depends on where a session's copy lives (the path alias) or when it ran (pinned git
dates, masked mtimes).
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from prove_jax.env.byo import PINNED_ENV, ServerSpec
from tests.env.byo_testlib import Step, filesystem_spec, git_spec, memory_spec, play, pool_of
from tests.servers.harness import free_port, run

NOTES_HTTP = Path(__file__).resolve().parent / "byo_servers" / "notes_http.py"

N = 3


async def _concurrent_vs_solo(pool: Any, server: str, scripts: list[list[Step]]) -> list[tuple[list[str], Any]]:
    together = await asyncio.gather(*(play(pool, server, s, pause_s=0.02) for s in scripts))
    for script, got in zip(scripts, together, strict=True):
        solo = await play(pool, server, script)
        assert got == solo, f"a concurrent session differs from its solo replay:\n{got}\n---\n{solo}"
    return together


def _memory_script(k: int) -> list[Step]:
    return [("create_entities", {"entities": [{"name": f"E{k}", "entityType": "person", "observations": [f"o{k}"]}]}),
            ("read_graph", {}),
            ("add_observations", {"observations": [{"entityName": f"E{k}", "contents": [f"more {k}"]}]}),
            ("create_relations", {"relations": [{"from": f"E{k}", "to": "Seed", "relationType": "knows"}]}),
            ("search_nodes", {"query": "E"}),
            ("read_graph", {})]


def test_memory_sessions_are_isolated(tmp_path: Path) -> None:
    async def go() -> None:
        async with pool_of([memory_spec(tmp_path)], tmp_path / "run") as pool:
            together = await _concurrent_vs_solo(pool, "memory", [_memory_script(k) for k in range(N)])
            for k, (results, snapshot) in enumerate(together):
                names = {line["name"] for line in _jsonl(snapshot) if line["type"] == "entity"}
                assert names == {"Seed", f"E{k}"}
                assert "E" + str((k + 1) % N) not in results[-1]

    run(go())


def _jsonl(snapshot: Any) -> list[dict[str, Any]]:
    import json

    if isinstance(snapshot, dict):
        return [snapshot]
    return [json.loads(line) for line in snapshot.splitlines() if line.strip()]


def _files_script(k: int) -> list[Step]:
    return [("create_directory", {"path": "/workspace/notes"}),
            ("write_file", {"path": f"/workspace/notes/n{k}.txt", "content": f"note {k}\n"}),
            ("edit_file", {"path": "docs/readme.txt", "edits": [{"oldText": "seed", "newText": f"session {k}"}]}),
            ("list_directory", {"path": "/workspace/notes"}),
            ("get_file_info", {"path": f"notes/n{k}.txt"}),
            ("read_text_file", {"path": "/workspace/docs/readme.txt"}),
            ("directory_tree", {"path": "/workspace/notes"})]


def test_filesystem_sessions_are_isolated(tmp_path: Path) -> None:
    async def go() -> None:
        async with pool_of([filesystem_spec(tmp_path)], tmp_path / "run") as pool:
            together = await _concurrent_vs_solo(pool, "files", [_files_script(k) for k in range(N)])
            for k, (results, snapshot) in enumerate(together):
                assert sorted(snapshot) == ["docs", "docs/readme.txt", "notes", f"notes/n{k}.txt"]  # the link out is not followed
                assert snapshot["notes"] is None  # a directory: state, with no text
                assert snapshot["docs/readme.txt"] == f"hello from the session {k}\n"
                assert results[3] == f"False [FILE] n{k}.txt", "another session's file is visible"
                assert "<time>" in results[4]

    run(go())


def _git_script(k: int) -> list[Step]:
    return [("git_create_branch", {"repo_path": "/workspace", "branch_name": f"b{k}"}),
            ("git_checkout", {"repo_path": ".", "branch_name": f"b{k}"}),
            ("git_add", {"repo_path": "/workspace", "files": [f"file{k}.txt"]}),
            ("git_commit", {"repo_path": "/workspace", "message": f"add file {k}"}),
            ("git_log", {"repo_path": "/workspace", "max_count": 5}),
            ("git_branch", {"repo_path": "/workspace", "branch_type": "local"}),
            ("git_status", {"repo_path": "."})]


def test_git_sessions_are_isolated_and_commits_are_pinned(tmp_path: Path) -> None:
    async def go() -> None:
        async with pool_of([git_spec(tmp_path, warm=1)], tmp_path / "run", call_timeout_s=30) as pool:
            together = await _concurrent_vs_solo(pool, "git", [_git_script(k) for k in range(N)])
            for k, (results, snapshot) in enumerate(together):
                assert f"b{k}" in results[5] and all(f"b{j}" not in results[5] for j in range(N) if j != k)
                assert "Date: 2024-01-01 00:00:00+00:00" in results[4], "commit dates are pinned"
                assert f"{PINNED_ENV['GIT_AUTHOR_NAME']} " in snapshot
                assert snapshot.count("\n") >= 2  # the seed commit and this session's own
            hashes = {r[3] for r, _ in together}
            assert len(hashes) == N, "different files make different commits"

    run(go())


def _notes_server(port: int) -> subprocess.Popen[bytes]:
    """tests/env/byo_servers/notes_http.py on loopback; returns once it accepts."""
    proc = subprocess.Popen([sys.executable, str(NOTES_HTTP), str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"notes server exited: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc
        time.sleep(0.1)
    proc.kill()
    raise TimeoutError("notes server did not start")


def test_a_url_server_that_isolates_connections_keeps_sessions_apart(tmp_path: Path) -> None:
    """``isolation: server``: one shared HTTP server, one MCP connection per session. Concurrent
    sessions equal their solo replays and list only their own notes; a reset is a new connection."""
    port = free_port()
    proc = _notes_server(port)
    spec = ServerSpec(name="notes", url=f"http://127.0.0.1:{port}/mcp", isolation="server", warm=1)

    def script(k: int) -> list[Step]:
        return [("add_note", {"text": f"mine {k}"}), ("list_notes", {}), ("add_note", {"text": f"more {k}"}),
                ("list_notes", {})]

    async def go() -> None:
        async with pool_of([spec], tmp_path / "run") as pool:
            together = await _concurrent_vs_solo(pool, "notes", [script(k) for k in range(N)])
            for k, (results, _) in enumerate(together):
                assert results[-1] == f'False ["mine {k}", "more {k}"]', results
            async with pool.episode(["notes"], seed=0) as ep:
                await ep.call("add_note", {"text": "before the reset"})
                await ep.reset()
                assert (await ep.call("list_notes", {})).text == "[]"

    try:
        run(go())
    finally:
        proc.kill()
        proc.wait()


def test_a_directory_a_session_makes_changes_its_filesystem_snapshot(tmp_path: Path) -> None:
    """Synthesis keeps a write only if it changes the snapshot: a snapshot blind to directories made
    ``create_directory`` look like a no-op, so its call was dropped while its directory stayed."""
    async def go() -> None:
        async with pool_of([filesystem_spec(tmp_path)], tmp_path / "run") as pool:
            results, snapshot = await play(pool, "files", [("create_directory", {"path": "/workspace/empty"})])
            assert results == ["False Successfully created directory /workspace/empty"]
            assert "empty" in snapshot and snapshot["empty"] is None

    run(go())


def test_a_url_server_replays_its_seed_calls_on_every_connection(tmp_path: Path) -> None:
    """``isolation: server`` has no directory to copy: the seed calls (``byo_seed.json``) are
    replayed on each new connection, a reset included, and one session's writes stay its own."""
    from prove_jax.env import MCPPool
    from prove_jax.env.byo import ByoBackend
    from prove_jax.env.byo.seeding import SeedCall

    port = free_port()
    proc = _notes_server(port)
    spec = ServerSpec(name="notes", url=f"http://127.0.0.1:{port}/mcp", isolation="server", warm=1)
    seeded = [SeedCall("add_note", {"text": "from the seed"}), SeedCall("add_note", {"text": "and another"})]

    async def go() -> None:
        async with MCPPool({"notes": ByoBackend(spec, tmp_path / "run", seeded)}) as pool, \
                pool.episode(["notes"], seed=0) as a, pool.episode(["notes"], seed=0) as b:
            await a.call("add_note", {"text": "a's own"})
            assert (await b.call("list_notes", {})).text == '["from the seed", "and another"]'
            assert (await a.call("list_notes", {})).text == '["from the seed", "and another", "a\'s own"]'
            await a.reset()
            assert (await a.call("list_notes", {})).text == '["from the seed", "and another"]'

    try:
        run(go())
    finally:
        proc.kill()
        proc.wait()
