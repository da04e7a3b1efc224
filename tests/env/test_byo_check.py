"""``python -m prove_jax.byo check``: every warning fires on a small server built to trigger it
(``byo_servers/lint.py``, official SDK, real stdio), each naming its tool and knob, and a tool that
behaves (``add_label``) gets none; warnings alone exit 0, errors that would stop training exit 1."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from prove_jax.byo.__main__ import main

HERE = Path(__file__).resolve().parent
LINT = HERE / "byo_servers" / "lint.py"
ROOT = HERE.parents[1]


@dataclass
class Checked:
    returncode: int
    stdout: str


@pytest.fixture(scope="module")
def lint_check(tmp_path_factory: pytest.TempPathFactory) -> Checked:
    """The command's ``main`` over ``lint.yaml`` (the seed names its own path; the snapshot prints
    the server's pid), run once for the module, in-process (the CLI itself: the last test)."""
    tmp = tmp_path_factory.mktemp("lint")
    seed = tmp / "lint_fixture"
    seed.mkdir()
    (seed / "state.json").write_text(json.dumps({"labels": ["alpha", "beta", "gamma"]}))
    (seed / "where.txt").write_text(f"built in {seed.resolve()}\n")
    (tmp / "lint.yaml").write_text(
        "episode: {max_result_chars: 400}\nenv:\n  domains: []\n  byo:\n    - name: lint\n"
        f"      command: ['{{python}}', {str(LINT)!r}]\n      seed: lint_fixture\n"
        "      snapshot: [sh, -c, 'cat state.json boot.txt']\n      warm: 0\n")
    out = io.StringIO()
    # 1 conversation, not the default 5: each costs two sessions, a second of CPU each (the SDK's import)
    with contextlib.redirect_stdout(out):
        code = main(["check", str(tmp / "lint.yaml"), "--conversations", "1"])
    return Checked(code, out.getvalue())


def _warnings(out: str) -> dict[tuple[str, str], str]:
    """(where, knob) -> the warning's text, from the closing lines."""
    found = {}
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("warning: "):
            where, rest = line.removeprefix("warning: ").split(": ", 1)
            text, knob = rest.rsplit(" [knob: ", 1)
            found[where, knob.removesuffix("]")] = text
    return found


def test_each_warning_names_its_tool_and_knob(lint_check: Checked) -> None:
    assert lint_check.returncode == 0, lint_check.stdout
    got = _warnings(lint_check.stdout)
    assert got[("lint.list_labels", "episode.max_result_chars")].startswith("results up to ")
    assert got[("lint.open_vault", "env.byo[].seed")].startswith("never exercised")
    assert "'Error executing tool open_vault'" in got[("lint.open_vault", "the server: raise ToolError('<what was wrong>')")]
    assert "left the snapshot unchanged" in got[("lint.stamp_label", "env.byo[].snapshot (or env.byo[].read_only)")]
    assert got[("lint", "env.byo[].rewrite")].startswith("the snapshot differs between two fresh sessions")
    assert "names the fixture's own path" in got[("lint", "env.byo[].seed")]
    assert len(got) == 6 and not any("add_label" in where for where, _ in got), got


def test_the_listing_graph_and_the_conversations_are_printed(lint_check: Checked) -> None:
    out = lint_check.stdout
    assert "  list_labels  read-only by annotation; readOnlyHint=True\n" in out
    assert "  stamp_label  write     by annotation; readOnlyHint=False destructiveHint=False\n" in out
    assert "graph (" in out and "evidence: " in out
    assert out.count("  [1] conversation\n      user: ") == 1 and "  1 realised of " in out


def test_only_errors_that_stop_training_exit_non_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dead = tmp_path / "dead.yaml"
    dead.write_text("env:\n  domains: []\n  byo:\n    - {name: dead, command: ['{python}', '-c', 'import sys; sys.exit(3)'], "
                    "start_timeout_s: 5, warm: 0}\n")
    assert main(["check", str(dead)]) == 1
    out = capsys.readouterr().out
    assert "error: dead: " in out and "does not start" in out and "[knob: env.byo[].command]" in out
    missing = tmp_path / "missing.yaml"
    missing.write_text("env:\n  domains: []\n  byo:\n    - {name: gone, command: ['{python}', gone.py], seed: nothing}\n")
    assert main(["check", str(missing)]) == 1
    assert f"seed fixture {tmp_path / 'nothing'} does not exist" in capsys.readouterr().out


def test_the_command_line(tmp_path: Path) -> None:
    """``python -m prove_jax.byo check`` itself: a config error exits 1, naming the file."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("env: {domains: [], byo: [{name: x, command: [a], colour: blue}]}\n")
    res = subprocess.run([sys.executable, "-m", "prove_jax.byo", "check", str(bad)], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120, env={**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONPATH": str(ROOT)})
    assert res.returncode == 1 and f"error: {bad}: " in res.stderr and "colour" in res.stderr, res.stderr
