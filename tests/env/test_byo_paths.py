"""A filesystem server only ever sees its session's copy; gold paths mean the same in every session;
the servers' MCP annotations reach the pool's ``tool_hints`` and leave ``tools()`` as it was."""

from __future__ import annotations

from pathlib import Path

from tests.env.byo_testlib import filesystem_spec, git_spec, memory_spec, pool_of
from tests.servers.harness import run


def test_paths_outside_the_session_copy_are_refused(tmp_path: Path) -> None:
    async def go() -> None:
        spec = filesystem_spec(tmp_path, warm=1)
        async with pool_of([spec], tmp_path / "run") as pool, pool.episode(["files"], seed=0) as a, \
                pool.episode(["files"], seed=0) as b:
            dir_a = a._pins["files"].conn.session_dir
            dir_b = b._pins["files"].conn.session_dir
            assert dir_a != dir_b and dir_a.parent == dir_b.parent == tmp_path.resolve() / "run" / "files"
            ok = await b.call("write_file", {"path": "/workspace/secret.txt", "content": "b's"})
            assert not ok.is_error and ok.text == "Successfully wrote to /workspace/secret.txt"
            assert (dir_b / "secret.txt").read_text() == "b's"
            for path in (str(dir_b / "secret.txt"), "../" + dir_b.name + "/secret.txt", "/etc/hostname",
                         "escape/hostname", str(Path(spec.seed) / "docs" / "readme.txt")):
                res = await a.call("read_text_file", {"path": path})
                assert res.is_error and res.error_kind == "tool" and "b's" not in res.text, (path, res.text)
                assert str(dir_a) not in res.text, "a session's real directory is never shown"
            wrote = await a.call("write_file", {"path": str(dir_b / "x.txt"), "content": "no"})
            assert wrote.is_error and not (dir_b / "x.txt").exists()
            roots = await a.call("list_allowed_directories", {})
            assert roots.text == "Allowed directories:\n/workspace"
            assert not a.failed and not b.failed


    run(go())


def test_annotations_reach_tool_hints_and_tools_stay_openai_dicts(tmp_path: Path) -> None:
    async def go() -> None:
        specs = [memory_spec(tmp_path, warm=0), git_spec(tmp_path, warm=0, read_only=["git_add"])]
        async with pool_of(specs, tmp_path / "run") as pool:
            hints = pool.tool_hints(["memory", "git"])
            tools = pool.tools(["memory", "git"])
            assert {t["function"]["name"] for t in tools} == set(hints)
            assert all(set(t) == {"type", "function"} for t in tools)
            assert hints["read_graph"].read_only is True and hints["create_entities"].read_only is False
            assert hints["git_log"].read_only is True and hints["git_commit"].read_only is False
            assert hints["git_add"].read_only is True, "the user's read_only hint wins"
            assert hints["git_log"].idempotent is True and hints["git_log"].open_world is False

    run(go())
