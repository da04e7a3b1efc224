"""The asyncio host pool over real transports: routing, timeouts, dead servers, restarts."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from typing import Any

import pytest

from prove_jax.env import HttpBackend, InProcessBackend, MCPPool, StdioBackend, ToolNameCollision
from tests.servers.harness import free_port, run, start_http_server


async def _pid(pool: MCPPool, domain: str, episode_seed: int = 0) -> tuple[int, Any]:
    async with pool.episode([domain], seed=episode_seed) as ep:
        res = await ep.call(f"{domain}_server_info", {}, allow_hidden=True)
        return json.loads(res.text)["pid"], ep._pins[domain]


def test_routes_calls_across_domains_and_isolates_episodes() -> None:
    async def go() -> None:
        async with MCPPool.from_spec(["banking", "vehicle"]) as pool:
            async with pool.episode(["banking", "vehicle"], seed=1) as ep:
                names = {t["function"]["name"] for t in ep.tools}
                assert {"transfer_funds", "start_engine"} <= names
                assert len(names) == 17 + 20
                bal = await ep.call("get_account_balance", {"account_id": "ACC-0001"})
                fleet = await ep.call("list_connected_vehicles", {})
                assert not bal.is_error and not fleet.is_error
                assert json.loads(bal.text)["account_id"] == "ACC-0001"
                unknown = await ep.call("launch_rocket", {})
                assert unknown.is_error and unknown.error_kind == "unknown_tool"
                hidden = await ep.call("banking_list_all_accounts", {})
                assert hidden.is_error and hidden.error_kind == "unknown_tool", "models cannot reach hidden tools"
                assert not (await ep.call("banking_list_all_accounts", {}, allow_hidden=True)).is_error
                bad = await ep.call("get_account_balance", {"account": "x"})
                assert bad.is_error and bad.error_kind == "tool" and not ep.failed
            async with pool.episode(["banking"], seed=1) as only_bank:
                res = await only_bank.call("start_engine", {"vehicle_id": "x"})
                assert res.error_kind == "unknown_tool", "tools of servers outside the episode are not routed"
            assert pool.stats.episodes_opened == 2 and pool.stats.episodes_failed == 0

    run(go())


def test_tool_name_collision_is_refused() -> None:
    async def go() -> None:
        pool = MCPPool({"banking": InProcessBackend("banking")})
        pool.backends["banking2"] = InProcessBackend("banking")
        with pytest.raises(ToolNameCollision):
            await pool.__aenter__()
        await pool.__aexit__(None, None, None)

    run(go())


def test_hung_server_times_out_and_only_its_episode_fails() -> None:
    """SIGSTOP freezes a real server process: the call on it times out; other servers keep working."""

    async def go() -> None:
        pool = MCPPool({"banking": StdioBackend("banking"), "vehicle": StdioBackend("vehicle")},
                       call_timeout_s=1.0)
        async with pool:
            pid, _ = await _pid(pool, "banking")
            os.kill(pid, signal.SIGSTOP)
            try:
                async with pool.episode(["banking", "vehicle"], seed=0) as frozen, \
                        pool.episode(["vehicle"], seed=0) as healthy:
                    start = time.monotonic()
                    res = await frozen.call("get_account_balance", {"account_id": "ACC-0001"})
                    assert res.error_kind == "timeout" and frozen.failed
                    assert time.monotonic() - start < 5
                    after = await frozen.call("list_connected_vehicles", {})
                    assert after.is_error, "a failed episode stays failed"
                    ok = await healthy.call("list_connected_vehicles", {})
                    assert not ok.is_error and not healthy.failed
            finally:
                os.kill(pid, signal.SIGCONT)
            assert pool.stats.timeouts >= 1

    run(go())


def test_killed_server_fails_its_episodes_others_continue_and_it_restarts() -> None:
    async def go() -> None:
        backend = StdioBackend("banking", n_procs=2)
        async with MCPPool({"banking": backend}, call_timeout_s=20) as pool:
            victim_pid, _ = await _pid(pool, "banking")
            victim_idx = -1
            for i, worker in enumerate(backend.workers):
                info = await backend.call((i, worker.generation), "probe", 0, "banking_server_info", {})
                if json.loads(info.text)["pid"] == victim_pid:
                    victim_idx = i
            assert victim_idx >= 0
            started = asyncio.Event()

            async def episode(i: int) -> tuple[int, bool, str | None]:
                async with pool.episode(["banking"], seed=i % 3) as ep:
                    for k in range(8):
                        res = await ep.call("get_account_balance", {"account_id": "ACC-0001"})
                        if k == 1:
                            started.set()
                        if res.is_error:
                            return ep._pins["banking"][0], True, res.error_kind
                        await asyncio.sleep(0.05)
                    return ep._pins["banking"][0], False, None

            tasks = [asyncio.create_task(episode(i)) for i in range(12)]
            await started.wait()
            os.kill(victim_pid, signal.SIGKILL)
            results = await asyncio.wait_for(asyncio.gather(*tasks), timeout=30)
            on_victim = [r for r in results if r[0] == victim_idx]
            others = [r for r in results if r[0] != victim_idx]
            assert on_victim and others, "sessions should be spread over both processes"
            assert all(r[1] and r[2] in ("server_died", "session_lost") for r in on_victim)
            assert not any(r[1] for r in others)
            # the pool restarts the process; a new episode pinned there works again
            await asyncio.wait_for(backend.workers[victim_idx].ready.wait(), timeout=30)
            assert backend.workers[victim_idx].restarts >= 1
            new_pid = json.loads((await backend.call(
                (victim_idx, backend.workers[victim_idx].generation), "probe2", 0, "banking_server_info", {}
            )).text)["pid"]
            assert new_pid != victim_pid
            assert pool.stats.episodes_failed == len(on_victim)

    run(go())


def test_http_backend_with_a_local_server() -> None:
    port = free_port()
    proc = start_http_server("vehicle", port)
    try:
        async def go() -> None:
            async with MCPPool({"vehicle": HttpBackend("vehicle", [f"http://127.0.0.1:{port}/mcp"])}) as pool:
                assert len(pool.tools(["vehicle"])) == 20
                async with pool.episode(["vehicle"], seed=2) as a, pool.episode(["vehicle"], seed=2) as b:
                    fleet = json.loads((await a.call("list_connected_vehicles", {})).text)
                    vid = fleet[0]["vehicle_id"]
                    lit = await a.call("set_vehicle_lights", {"vehicle_id": vid, "hazards_on": True})
                    assert not lit.is_error, lit.text
                    snap_a, snap_b = (await a.snapshots())["vehicle"], (await b.snapshots())["vehicle"]
                    assert snap_a != snap_b, "a's write must not show in b"

        run(go())
    finally:
        proc.terminate()
        proc.wait(timeout=10)
