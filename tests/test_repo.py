"""Repository invariants: the README's two commands, CI calling the same test command, layering."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _readme_commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    return [b.strip() for b in blocks]


def test_readme_has_exactly_two_setup_commands() -> None:
    cmds = _readme_commands()
    assert len(cmds) == 2
    assert "python -m prove_jax.launch" in cmds[0]
    assert "pytest" in cmds[1]


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert _readme_commands()[1] in ci


def _imports(path: Path) -> set[str]:
    mods: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            mods |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            mods.add(node.module)
    return mods


def _forbidden(package: str, prefixes: tuple[str, ...]) -> list[str]:
    bad = []
    for path in (ROOT / package).rglob("*.py"):
        for mod in _imports(path):
            if any(mod == p or mod.startswith(p + ".") for p in prefixes):
                bad.append(f"{path.relative_to(ROOT)} imports {mod}")
    return bad


def test_layering_rules() -> None:
    """DESIGN.md: servers stand alone; rewards are pure; models/chat know nothing of env/rl."""
    assert not _forbidden("servers", ("prove_jax", "data"))
    assert not _forbidden("prove_jax/rewards", ("prove_jax.env", "prove_jax.engine", "prove_jax.models", "servers"))
    for pkg in ("prove_jax/models", "prove_jax/chat"):
        assert not _forbidden(pkg, ("prove_jax.env", "prove_jax.rewards", "prove_jax.rl", "servers", "torch",
                                    "transformers"))


def test_files_stay_small() -> None:
    big = [f"{p.relative_to(ROOT)}: {n}" for p in ROOT.glob("[ps]*/**/*.py")
           if ".venv" not in p.parts and (n := len(p.read_text().splitlines())) > 650]
    assert not big, big


def test_libtpu_is_pinned_to_what_the_pinned_jax_names() -> None:
    """The deviceless TPU compiles need the libtpu built for this jax: the test extra must pin the
    version ``jax[tpu]`` names, and jax itself must be pinned to the installed version."""
    import re
    import tomllib
    from importlib.metadata import requires, version

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert f"jax=={version('jax')}" in [d.split(";")[0].strip() for d in project["dependencies"]]
    ours = [d for d in project["optional-dependencies"]["test"] if d.startswith("libtpu")]
    theirs = [r for r in requires("jax") or [] if r.startswith("libtpu") and 'extra == "tpu"' in r]
    assert len(ours) == 1 and len(theirs) == 1
    pin = lambda s: re.match(r"libtpu\s*(==[^;\s]+)", s).group(1)  # noqa: E731
    assert pin(ours[0]) == pin(theirs[0])
