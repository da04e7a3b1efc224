"""``prepare``: a fixture that cannot be committed as files (a git repository) is built once at
start-up from a committed folder, with pinned dates, so every run gets the same commit hashes."""

from __future__ import annotations

from pathlib import Path

import pytest

from prove_jax.env.byo import ByoStartError, ServerSpec
from tests.env.byo_testlib import pool_of
from tests.servers.harness import run

ROOT = Path(__file__).resolve().parents[2]
GIT_FIXTURE = ROOT / "configs" / "runs" / "byo_fixtures" / "git"
BUILD = ["sh", "-c", "git init -q -b main && git add README.md && git commit -q -m first"]


def _git(prepare: list[str]) -> ServerSpec:
    return ServerSpec(name="git", command=["{python}", "-m", "mcp_server_git", "--repository", "{session_dir}"],
                      seed=str(GIT_FIXTURE), prepare=prepare, warm=0)


def test_prepare_builds_the_fixture_once_and_its_hashes_are_pinned(tmp_path: Path) -> None:
    async def log(run_dir: Path) -> str:
        async with pool_of([_git(BUILD)], run_dir) as pool, pool.episode(["git"], seed=0) as ep:
            res = await ep.call("git_log", {"repo_path": "/workspace"})
            assert not res.is_error, res.text
            return res.text

    first, second = run(log(tmp_path / "a")), run(log(tmp_path / "b"))
    assert "Message: first" in first and first == second  # the same commit hash in two runs
    assert not (GIT_FIXTURE / ".git").exists(), "the committed folder itself is never touched"


def test_a_failing_prepare_fails_at_start_up_naming_the_command(tmp_path: Path) -> None:
    async def go() -> None:
        async with pool_of([_git(["sh", "-c", "exit 3"])], tmp_path / "run"):
            pass

    with pytest.raises(ByoStartError, match=r"prepare command 'sh -c exit 3' exited 3"):
        run(go())
