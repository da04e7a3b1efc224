"""Config loading (YAML + dotted overrides, strict) and the launch entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prove_jax.config import ConfigError, EnvConfig, LaunchConfig, load
from prove_jax.launch import main

ROOT = Path(__file__).resolve().parent.parent


def test_defaults_yaml_and_overrides_compose(tmp_path: Path) -> None:
    f = tmp_path / "run.yaml"
    f.write_text("name: x\nenv:\n  backend: stdio\n  n_procs: 3\n")
    cfg = load(LaunchConfig, f, ["env.call_timeout_s=2", "env.domains=[banking, email]", "seed=7"])
    assert cfg.name == "x" and cfg.seed == 7
    assert cfg.env == EnvConfig(domains=["banking", "email"], backend="stdio", n_procs=3, call_timeout_s=2.0)
    assert cfg.demo.episodes == LaunchConfig().demo.episodes


@pytest.mark.parametrize(
    ("override", "needle"),
    [("env.backnd=stdio", "unknown key"), ("env.n_procs=two", "expected int"), ("seed", "key=value"),
     ("env.n_procs=true", "boolean")],
)
def test_bad_overrides_are_errors(override: str, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        load(LaunchConfig, None, [override])


def test_shipped_configs_load() -> None:
    for path in (ROOT / "configs" / "runs").glob("*.yaml"):
        assert isinstance(load(LaunchConfig, path), LaunchConfig)


def test_launch_demo_runs_and_reports(tmp_path: Path) -> None:
    out = tmp_path / "run"
    results = main(["env.backend=inprocess", f"out_dir={out}", "demo.episodes=12", "demo.calls_per_episode=5",
                    "env.domains=[banking, vehicle]"])
    summary = json.loads((out / "demo_summary.json").read_text())
    assert summary == json.loads(json.dumps(results["demo"]))
    assert summary["pool"]["episodes_opened"] == 12
    assert sum(d["calls"] for d in summary["domains"].values()) == 12 * 5
    assert all(d["ok"] > 0 for d in summary["domains"].values()), "grounded random calls should sometimes succeed"
    assert (out / "demo.png").stat().st_size > 1000


def test_unimplemented_stage_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="not implemented yet"):
        main([f"out_dir={tmp_path}", "stages=[demo, grpo]"])
