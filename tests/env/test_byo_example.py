"""The README's worked example (``examples/byo_todo``) is the shipped one, and it runs: loaded from
another directory, over real stdio, its state a private copy of the seed per session."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from prove_jax.config import LaunchConfig, load
from prove_jax.env import MCPPool
from tests.servers.harness import run

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "byo_todo"


def test_the_readme_shows_the_shipped_files() -> None:
    readme = (ROOT / "README.md").read_text()
    for name in ("server.py", "todo.yaml"):
        block = re.search(rf"```\w+\n# examples/byo_todo/{re.escape(name)}\n(.*?)```", readme, re.S)
        assert block is not None, name
        assert block.group(1) in (EXAMPLE / name).read_text(), f"README's {name} differs from the shipped file"


def test_the_example_runs_from_another_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = load(LaunchConfig, EXAMPLE / "todo.yaml")
    assert cfg.name == "byo_todo" and [s.name for s in cfg.env.byo] == ["todo"]

    async def go() -> None:
        async with MCPPool.from_config(cfg.env, tmp_path / "run") as pool:
            async with pool.episode(["todo"], seed=0) as ep:
                assert [t["id"] for t in json.loads((await ep.call("list_tasks", {"only_open": True})).text)] == ["t1", "t3"]
                done = await ep.call("complete_task", {"task_id": "t2"})
                assert done.is_error and "task t2 is already done" in done.text, "a ToolError's own message"
                assert not (await ep.call("complete_task", {"task_id": "t1"})).is_error
                assert json.loads((await ep.helper("todo", "snapshot")).text)[0]["done"] is True
            async with pool.episode(["todo"], seed=0) as ep:
                assert json.loads((await ep.helper("todo", "snapshot")).text)[0]["done"] is False, "a fresh copy"
        assert json.loads((EXAMPLE / "fixture" / "tasks.json").read_text())[0]["done"] is False

    run(go())
