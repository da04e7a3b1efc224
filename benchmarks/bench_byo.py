"""Per-session start-up of the three third-party byo servers and episodes/s through the pool.

``python benchmarks/bench_byo.py [--episodes 20]``: for each server, the cold start of one session's
process (spawn + MCP handshake + tool listing) with no warm process, then episodes of 3 calls with
``warm`` processes started ahead. Scratch under a temporary directory.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.env.byo_testlib import filesystem_spec, git_spec, memory_spec, pool_of

CALLS = {
    "memory": [("create_entities", {"entities": [{"name": "A", "entityType": "t", "observations": []}]}),
               ("read_graph", {}), ("search_nodes", {"query": "A"})],
    "files": [("write_file", {"path": "/workspace/a.txt", "content": "a"}), ("list_directory", {"path": "."}),
              ("read_text_file", {"path": "a.txt"})],
    "git": [("git_status", {"repo_path": "."}), ("git_log", {"repo_path": "."}),
            ("git_branch", {"repo_path": ".", "branch_type": "local"})],
}


async def measure(make, name: str, episodes: int, warm: int, tmp: Path) -> None:
    async with pool_of([make(tmp, warm=0)], tmp / "cold") as pool:
        t = time.perf_counter()
        for _ in range(5):
            async with pool.episode([name], seed=0) as ep:
                pass
        cold = (time.perf_counter() - t) / 5
    async with pool_of([make(tmp, warm=warm)], tmp / "warm") as pool:
        await asyncio.sleep(3)  # let the warm processes start
        t = time.perf_counter()
        for _ in range(episodes):
            async with pool.episode([name], seed=0) as ep:
                for tool, args in CALLS[name]:
                    assert not (await ep.call(tool, args)).is_error
        rate = episodes / (time.perf_counter() - t)
    print(f"RESULT byo_{name}_session_start {cold:.3f} s goal=<1")
    print(f"RESULT byo_{name}_episodes_per_s_warm{warm} {rate:.2f} episodes/s goal=>1")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=20)
    ap.add_argument("--warm", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        for make, name in ((memory_spec, "memory"), (filesystem_spec, "files"), (git_spec, "git")):
            asyncio.run(measure(make, name, args.episodes, args.warm, Path(d)))


if __name__ == "__main__":
    main()
