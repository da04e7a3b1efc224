"""A user's server that misbehaves: hangs, answers with the wrong id, dies, or never starts.

The misbehaving server (``byo_servers/misbehaving.py``) is a real stdio MCP server on the official
SDK; the pool reaches it through the same backend as any user's server.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from prove_jax.env import EnvConfig, MCPPool
from prove_jax.env.byo import ByoBackend, ByoStartError, ServerSpec
from prove_jax.yamlconf import ConfigError, load
from tests.env.byo_testlib import MISBEHAVING, memory_spec, pool_of
from tests.servers.harness import run


def _spec(**kw: object) -> ServerSpec:
    args = {"name": "odd", "command": [sys.executable, str(MISBEHAVING)], "warm": 1, **kw}
    return ServerSpec(**args)  # type: ignore[arg-type]


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    with open(f"/proc/{pid}/stat") as f:  # a zombie is dead too, only not yet reaped
        return f.read().split(") ")[1].startswith("Z")


async def _kill_and_wait(conn: Any) -> None:
    """SIGKILL from outside, then wait, without letting the event loop run, until the kernel reports
    the process exited: the next call is sent before the loop has seen the death (its child watcher,
    the end of stdout), as when a server dies between two calls of a busy pool."""
    os.kill(conn.pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while os.waitid(os.P_PID, conn.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        assert time.monotonic() < deadline, "the killed process did not exit"
        time.sleep(0.005)


async def _hangs_then_recovers(pool: MCPPool, tool: str, limit_s: float) -> None:
    async with pool.episode(["odd"], seed=0) as ep:
        assert (await ep.call("echo", {"text": "hi"})).text == "hi"
        pid = ep._pins["odd"].conn.pid
        start = time.monotonic()
        res = await ep.call(tool, {})
        assert res.error_kind == "timeout" and ep.failed, res
        assert time.monotonic() - start < limit_s
        for _ in range(40):  # killed by the timeout itself, not only when the episode closes
            if _gone(pid):
                break
            await asyncio.sleep(0.05)
        assert _gone(pid), "the hung process was killed"
        assert (await ep.call("echo", {"text": "again"})).is_error, "a failed episode stays failed"
    async with pool.episode(["odd"], seed=0) as ep:  # the pool goes on
        assert (await ep.call("echo", {"text": "fine"})).text == "fine" and not ep.failed


@pytest.mark.parametrize("tool", ["sleep_forever", "wrong_id"])
def test_a_call_without_its_answer_times_out_and_kills_the_process(tmp_path: Path, tool: str) -> None:
    """The server's own limit (call_timeout_s), below the pool's."""

    async def go() -> None:
        async with pool_of([_spec(call_timeout_s=1.0)], tmp_path, call_timeout_s=30) as pool:
            await _hangs_then_recovers(pool, tool, limit_s=5)

    run(go())


def test_the_pools_timeout_kills_the_process_too(tmp_path: Path) -> None:
    async def go() -> None:
        async with pool_of([_spec(call_timeout_s=60)], tmp_path, call_timeout_s=1.0) as pool:
            await _hangs_then_recovers(pool, "sleep_forever", limit_s=5)

    run(go())


def test_an_episode_whose_second_server_cannot_be_pinned_closes_the_first(tmp_path: Path) -> None:
    """The first server's session process is closed when pinning the second raises (or is
    cancelled by the caller's timeout): a half-opened episode leaks no process."""

    class Unpinnable(ByoBackend):
        async def pin(self, session_id: str, timeout_s: float) -> Any:
            raise RuntimeError("cannot pin")

    async def go() -> None:
        first = ByoBackend(_spec(), tmp_path)
        other = Unpinnable(memory_spec(tmp_path), tmp_path)
        pool = MCPPool({"odd": first, other.domain: other})
        async with pool:
            with pytest.raises(RuntimeError, match="cannot pin"):
                async with pool.episode(["odd", other.domain], seed=0):
                    pass
            assert not first._live, "the first server's session was closed"

    run(go())


def test_a_later_pool_on_the_same_run_directory_skips_the_sessions_an_earlier_one_left(tmp_path: Path) -> None:
    """The launcher's stages open pools one after another on one run directory; a session directory
    the last one left (a warm fill cancelled by stop()) made the eval's first session fail with
    FileExistsError. Now it is skipped, left as it was, and a cancelled fill leaves nothing."""
    stale = tmp_path / "odd" / "s000001"
    stale.mkdir(parents=True)
    (stale / "counter.txt").write_text("41")

    async def go() -> None:
        async with pool_of([_spec(warm=2)], tmp_path) as pool, pool.episode(["odd"], seed=0) as ep:
            assert (await ep.call("bump", {})).text == "1"  # a fresh copy, not the stale one
        # stop() cancelled the warm fills still starting: no session directory of this pool is left
        assert sorted(p.name for p in (tmp_path / "odd").glob("s*")) == ["s000001"]

    run(go())
    assert (stale / "counter.txt").read_text() == "41"


def test_a_killed_server_restarts_over_the_same_state(tmp_path: Path) -> None:
    """Killed between calls: restarted over the session's directory, the call goes on. Dying during
    a call fails that episode cleanly; the next episode gets a working server."""

    async def go() -> None:
        backend_pool = pool_of([_spec()], tmp_path)
        async with backend_pool as pool:
            async with pool.episode(["odd"], seed=0) as ep:
                assert (await ep.call("bump", {})).text == "1"
                pid = ep._pins["odd"].conn.pid
                await _kill_and_wait(ep._pins["odd"].conn)
                res = await ep.call("bump", {})
                assert (res.text, res.is_error, ep.failed) == ("2", False, False), res
                assert ep._pins["odd"].restarts == 1 and ep._pins["odd"].conn.pid != pid
                crash = await ep.call("crash", {})
                assert crash.error_kind == "server_died" and ep.failed
            async with pool.episode(["odd"], seed=0) as ep:
                assert (await ep.call("bump", {})).text == "1", "a new session starts from the seed"
            assert pool.stats.server_deaths == 1

    run(go())


def test_a_killed_node_server_restarts_with_its_session_state(tmp_path: Path) -> None:
    async def go() -> None:
        async with pool_of([memory_spec(tmp_path, warm=0)], tmp_path / "run") as pool, \
                pool.episode(["memory"], seed=0) as ep:
            await ep.call("create_entities", {"entities": [{"name": "Kept", "entityType": "t", "observations": []}]})
            await _kill_and_wait(ep._pins["memory"].conn)
            res = await ep.call("open_nodes", {"names": ["Kept"]})
            assert not res.is_error and '"Kept"' in res.text and ep._pins["memory"].restarts == 1

    run(go())


@pytest.mark.parametrize(("command", "why"), [
    (["/nonexistent/mcp-server"], "cannot run '/nonexistent/mcp-server'"),
    ([sys.executable, str(MISBEHAVING), "--exit-at-once"], "refusing to start (--exit-at-once)"),
])
def test_a_server_that_does_not_start_fails_at_start_up_naming_it(tmp_path: Path, command: list[str],
                                                                  why: str) -> None:
    async def go() -> None:
        with pytest.raises(ByoStartError) as err:
            async with pool_of([_spec(name="broken", command=command, start_timeout_s=20)], tmp_path):
                pass
        assert "byo server 'broken' did not start" in str(err.value) and why in str(err.value), err.value

    run(go())


def test_specs_load_through_the_strict_config_parser(tmp_path: Path) -> None:
    cfg_file = tmp_path / "env.yaml"
    cfg_file.write_text(f"""
domains: []
byo_dir: {tmp_path / "run"}
byo:
  - name: odd
    command: ["{{python}}", "{MISBEHAVING}"]
    read_only: [echo]
    rewrite: [{{pattern: "\\\\d+", replace: N}}]
    warm: 0
""")
    cfg = load(EnvConfig, cfg_file)
    (spec,) = cfg.byo
    assert spec.command[0] == "{python}" and spec.rewrite[0].replace == "N" and spec.read_only == ["echo"]

    async def go() -> None:
        async with MCPPool.from_config(cfg) as pool:
            hints = pool.tool_hints(["odd"])
            assert hints["echo"].read_only is True and hints["bump"].read_only is None
            assert all(set(t) == {"type", "function"} for t in pool.tools(["odd"])), "OpenAI dicts unchanged"
            async with pool.episode(["odd"], seed=0) as ep:
                assert (await ep.call("echo", {"text": "a1b22"})).text == "aNbN"

    run(go())
    with pytest.raises(ConfigError, match=r"byo\[0\].*unknown key.*comand"):
        load(EnvConfig, None, ["byo=[{name: x, comand: [y]}]"])
    with pytest.raises(ConfigError, match="exactly one of command"):
        load(EnvConfig, None, ["byo=[{name: x}]"])
