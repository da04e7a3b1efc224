"""Paths in a run YAML resolve against the YAML file (an included file's against its own), whatever
the working directory; errors name the resolved path and what it was resolved against."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from prove_jax.config import LaunchConfig, load
from prove_jax.env import MCPPool
from tests.servers.harness import run

ROOT = Path(__file__).resolve().parents[2]
SHELF = Path(__file__).resolve().parent / "byo_servers" / "shelf.py"


def _project(tmp_path: Path) -> Path:
    """``proj/run.yaml`` including ``proj/servers/shelf.yaml``, whose server, seed and data sit beside it."""
    servers = tmp_path / "proj" / "servers"
    (servers / "fixtures").mkdir(parents=True)
    shutil.copy(SHELF, servers / "shelf.py")
    (servers / "fixtures" / "items.json").write_text(json.dumps(["crate", "drum"]))
    (servers / "shelf.yaml").write_text(
        "env:\n  domains: []\n  byo:\n    - name: shelf\n      command: ['{python}', shelf.py]\n"
        "      seed: fixtures/items.json\n      snapshot: [cat, items.json]\n      warm: 0\n")
    (tmp_path / "proj" / "run.yaml").write_text("include: [servers/shelf.yaml]\nout_dir: out\n"
                                                "data: {dir: datasets/d1}\nmodel: {hf_dir: models/m}\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    return tmp_path / "proj"


def test_paths_resolve_against_the_declaring_yaml_from_any_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proj = _project(tmp_path)
    monkeypatch.chdir(tmp_path / "elsewhere")
    cfg = load(LaunchConfig, proj / "run.yaml", ["tokenizer.dir=tok"])
    (spec,) = cfg.env.byo
    assert spec.base_dir == str(proj / "servers"), "the included file declares the server"
    assert cfg.data.dir == str(proj / "datasets" / "d1") and cfg.model.hf_dir == str(proj / "models" / "m")
    assert cfg.out_dir == "out", "outputs stay relative to the working directory"
    assert cfg.tokenizer.dir == "tok", "an override is not in a file: the working directory's"
    paths = MCPPool.from_config(cfg.env, tmp_path / "run").backends["shelf"].paths  # type: ignore[attr-defined]
    assert paths.seed == proj / "servers" / "fixtures" / "items.json"
    assert paths.command[1] == str(proj / "servers" / "shelf.py")
    assert paths.snapshot == ["cat", "items.json"], "the session's copy of the seed, read in the session directory"

    async def go() -> None:
        async with MCPPool.from_config(cfg.env, tmp_path / "run") as pool, pool.episode(["shelf"], seed=0) as ep:
            listed = await ep.call("list_items", {})
            assert json.loads(listed.text) == {"items": [{"name": "crate"}, {"name": "drum"}]}
            assert not (await ep.call("add_item", {"name": "easel"})).is_error
            assert json.loads((await ep.helper("shelf", "snapshot")).text) == ["crate", "drum", "easel"]

    run(go())


def test_errors_name_the_resolved_path_and_the_anchor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proj = _project(tmp_path)
    monkeypatch.chdir(tmp_path / "elsewhere")
    (proj / "servers" / "fixtures" / "items.json").unlink()
    cfg = load(LaunchConfig, proj / "run.yaml")
    with pytest.raises(ValueError) as err:
        MCPPool.from_config(cfg.env, tmp_path / "run")
    said = str(err.value)
    assert str(proj / "servers" / "fixtures" / "items.json") in said
    assert f"resolved against {proj / 'servers'}, the directory of the YAML file" in said
    # a path written relative to the working directory (the old rule): the fix is named
    (tmp_path / "elsewhere" / "bin").mkdir()
    (tmp_path / "elsewhere" / "bin" / "srv.py").write_text("")
    (proj / "servers" / "fixtures" / "items.json").write_text("[]")
    (proj / "servers" / "shelf.yaml").write_text(
        "env:\n  domains: []\n  byo:\n    - {name: shelf, command: ['{python}', bin/srv.py], seed: fixtures/items.json}\n")
    cfg = load(LaunchConfig, proj / "run.yaml")
    with pytest.raises(ValueError, match=r"command\[1\] 'bin/srv.py': .*/proj/servers/bin/srv.py does not exist .*"
                                         r"it exists relative to the working directory .*write '../../elsewhere/bin/srv.py'"):
        MCPPool.from_config(cfg.env, tmp_path / "run")


@pytest.mark.parametrize("name", ["memory", "filesystem", "git"])
def test_shipped_byo_yamls_resolve_from_another_cwd(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = load(LaunchConfig, ROOT / "configs" / "runs" / f"byo_{name}.yaml")
    (backend,) = MCPPool.from_config(cfg.env, tmp_path / "run").backends.values()
    paths = backend.paths  # type: ignore[attr-defined]
    assert paths.seed is not None and paths.seed.is_relative_to(ROOT / "configs" / "runs" / "byo_fixtures")
    assert all(Path(a).exists() for a in paths.command if a.startswith("/")), paths.command
    if name != "git":
        assert paths.command[1].startswith(str(ROOT / "third_party" / "mcp")), paths.command
