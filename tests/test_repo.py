"""Repository invariants: the README's two commands, CI calling the same test command, layering."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
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
    """DESIGN.md: servers stand alone; data never imports the training side; rewards are pure;
    models/chat know nothing of env/rl and never import torch or transformers; nor does the GGUF
    converter, which must run without them."""
    assert not _forbidden("servers", ("prove_jax", "data"))
    assert not _forbidden("data", ("prove_jax.models", "prove_jax.engine", "prove_jax.rl"))
    assert not _forbidden("prove_jax/rewards", ("prove_jax.env", "prove_jax.engine", "prove_jax.models", "servers"))
    assert not _forbidden("prove_jax/convert", ("torch", "transformers"))  # test-only references
    for pkg in ("prove_jax/models", "prove_jax/chat"):
        assert not _forbidden(pkg, ("prove_jax.env", "prove_jax.rewards", "prove_jax.rl", "servers", "torch",
                                    "transformers"))


# ---- every package of prove_jax: which of ours it may import (WORKSPACE.md's map) ----------------------
EVERYTHING = "everything"
ALL_BUT_LAUNCH = "everything but launch"
FOUNDATIONS = frozenset({"io_util", "yamlconf", "host_memory", "records"})
"""Small modules that import nothing of ours: any layer but the pure ones may use them (``records``:
the typed Example and Rollout, which every stage passes)."""
PURE = frozenset({"prove_jax", "rewards", "chat", "models", *FOUNDATIONS})
LAYERS: dict[str, frozenset[str] | str] = {
    # nothing of ours
    "prove_jax": frozenset(),  # the package __init__
    "io_util": frozenset(),
    "yamlconf": frozenset(),
    "host_memory": frozenset(),
    "records": frozenset(),  # stdlib and numpy only: the pure reward package reads the typed records
    "metrics": frozenset(),
    "rewards": frozenset({"records"}),
    "chat": frozenset(),
    "models": frozenset(),
    "convert": frozenset(),  # GGUF -> HF directory: gguf, tokenizers, safetensors only
    # a model family as one object: its models half and its chat half, registered together
    "family": frozenset({"chat", "models"}),
    # a model directory that describes itself (model.json, tokenizer files, Orbax params)
    "model_record": frozenset({"chat", "models"}),
    "checkpoint": frozenset({"chat", "models", "model_record"}),
    # policies in environments, and training them
    "engine": frozenset({"models", "chat"}),
    "cli": frozenset({"engine"}),  # flags from config dataclasses (the engine's among them)
    "env": frozenset({"chat", "engine", "rewards", "servers"}),
    "loaders": frozenset({"env"}),
    "rl": frozenset({"models", "chat", "engine", "env", "rewards", "loaders", "checkpoint", "metrics"}),
    "plan": frozenset({"config", "models", "model_record", "engine", "rl"}),
    # on top: products of a run, used without the launcher
    "export": frozenset({"checkpoint", "model_record", "models", "chat"}),
    "inspect": frozenset({"rl"}),
    "byo": frozenset({"config", "env", "data"}),  # `python -m prove_jax.byo check`: synthesis's own steps, no training  # reads GRPO's rollout dumps (rl.dump) without JAX
    "serve": frozenset({"checkpoint", "model_record", "models", "chat", "engine", "cli"}),
    "eval": frozenset({"serve", "checkpoint", "model_record", "models", "chat", "engine", "env", "rewards", "loaders",
                       "cli"}),
    # the launcher: the config composes every concern's section; only the pipeline and launch wire a run
    "config": frozenset({"checkpoint", "env", "engine", "models", "model_record", "rewards", "rl", "plan", "data", "convert",
                         "servers", "eval.config"}),
    "pipeline": ALL_BUT_LAUNCH,
    "launch": EVERYTHING,
}
SETTINGS_ENTRIES = {"prove_jax.eval.config": "eval.config"}
"""Light modules of a top package that the launcher's config composes (their own unit here): they
import no runtime, which :func:`test_the_config_loads_no_eval_runtime` checks on a live import."""
KNOWN_EXCEPTIONS: dict[tuple[str, str], str] = {}


def _unit(module: str) -> str | None:
    """The package of ours a dotted module belongs to (``prove_jax.serve.load`` -> ``serve``)."""
    if module in SETTINGS_ENTRIES:
        return SETTINGS_ENTRIES[module]
    parts = module.split(".")
    if parts[0] in ("servers", "data"):
        return parts[0]
    if parts[0] != "prove_jax":
        return None
    return parts[1] if len(parts) > 1 else "prove_jax"


def _file_unit(rel: str) -> str:
    parts = Path(rel).with_suffix("").parts  # ("prove_jax", "serve", "load") / ("prove_jax", "export")
    return "prove_jax" if parts[1:] == ("__init__",) else parts[1]


def _layer_violations(imports: dict[str, set[str]]) -> tuple[list[str], set[tuple[str, str]]]:
    """``imports``: repository-relative file -> modules it imports. Returns the imports the table
    forbids (known exceptions left out) and the known exceptions that occurred."""
    bad, seen = [], set()
    for rel, mods in sorted(imports.items()):
        unit = _file_unit(rel)
        allowed = LAYERS.get(unit)
        for mod in sorted(mods):
            target = _unit(mod)
            package = target and target.split(".")[0]  # a settings entry belongs to its package too
            if target is None or package == unit or allowed == EVERYTHING:
                continue
            if allowed == ALL_BUT_LAUNCH and target != "launch":
                continue
            if isinstance(allowed, frozenset) and (target in allowed or package in allowed):
                continue
            if unit not in PURE and target in FOUNDATIONS:
                continue
            if (rel, mod) in KNOWN_EXCEPTIONS:
                seen.add((rel, mod))
                continue
            bad.append(f"{rel} ({unit}) imports {mod} ({target})")
    return bad, seen


def _prove_jax_imports() -> dict[str, set[str]]:
    return {str(p.relative_to(ROOT)): _imports(p) for p in (ROOT / "prove_jax").rglob("*.py")}


def test_every_package_imports_only_what_its_layer_allows() -> None:
    """Export, serve and eval load a model directory without the launcher (no pipeline, no launch,
    no launch config); nothing below the top imports eval, serve or launch."""
    imports = _prove_jax_imports()
    units = {_file_unit(rel) for rel in imports}
    assert units == set(LAYERS), f"place these in LAYERS: {sorted(units - set(LAYERS))}; gone: {sorted(set(LAYERS) - units)}"
    bad, seen = _layer_violations(imports)
    assert not bad, "\n".join(bad)
    stale = set(KNOWN_EXCEPTIONS) - seen
    assert not stale, f"fixed, so delete from KNOWN_EXCEPTIONS: {sorted(stale)}"


def test_the_layer_check_catches_an_upward_import() -> None:
    """The table bites: an export or server that reached back into the launcher is reported."""
    bad, _ = _layer_violations({"prove_jax/export.py": {"prove_jax.pipeline.context", "prove_jax.models"},
                                "prove_jax/serve/load.py": {"prove_jax.launch", "prove_jax.checkpoint"},
                                "prove_jax/config.py": {"prove_jax.eval.bfcl"},
                                "prove_jax/pipeline/stages.py": {"prove_jax.launch", "prove_jax.eval"},
                                "prove_jax/models/decoder.py": {"prove_jax.chat"}})
    assert bad == ["prove_jax/config.py (config) imports prove_jax.eval.bfcl (eval)",
                   "prove_jax/export.py (export) imports prove_jax.pipeline.context (pipeline)",
                   "prove_jax/models/decoder.py (models) imports prove_jax.chat (chat)",
                   "prove_jax/pipeline/stages.py (pipeline) imports prove_jax.launch (launch)",
                   "prove_jax/serve/load.py (serve) imports prove_jax.launch (launch)"]


def test_the_config_loads_no_eval_runtime() -> None:
    """The launcher's config composes the eval's settings (``eval.config``) without importing a
    benchmark's runtime, the engine-backed in-domain eval or serve: checked on a fresh interpreter,
    since a top-level import anywhere below ``eval.config`` would pull them in."""
    code = ("import sys, prove_jax.config; print('\\n'.join(m for m in sys.modules "
            "if m.startswith(('prove_jax.eval', 'prove_jax.serve', 'bfcl_eval', 'prove_jax.pipeline'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                         env={**os.environ, "JAX_PLATFORMS": "cpu"}).stdout.split()
    light = {"prove_jax.eval", "prove_jax.eval.config", "prove_jax.eval.benchmarks", "prove_jax.eval.registry",
             "prove_jax.eval.settings", "prove_jax.eval.markdown"}
    assert "prove_jax.eval.config" in out
    assert set(out) <= light, sorted(set(out) - light)


def test_files_stay_small() -> None:
    """Files under ~600 lines in the shipped packages (the developers' guide)."""
    files = [p for pkg in ("prove_jax", "servers", "data") for p in (ROOT / pkg).rglob("*.py")]
    assert len(files) > 300
    big = [f"{p.relative_to(ROOT)}: {n}" for p in files if (n := len(p.read_text().splitlines())) > 600]
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
