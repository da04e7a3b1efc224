"""Config loading (YAML + dotted overrides, strict) and the launch entry point."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from data.config import from_mapping
from prove_jax.config import ConfigError, LaunchConfig, check, load
from prove_jax.env.pool import EnvConfig
from prove_jax.launch import DEFAULT_CONFIG, main

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


def test_shipped_configs_load_and_check() -> None:
    paths = sorted((ROOT / "configs" / "runs").glob("*.yaml"))
    assert len(paths) >= 5
    for path in paths:
        cfg = load(LaunchConfig, path)
        if not cfg.model.hf_dir:
            check(cfg)


def test_scientific_notation_without_a_dot_is_a_float() -> None:
    cfg = load(LaunchConfig, None, ["grpo.optim.lr=1e-05", "sft.optim.lr=2E-3"])
    assert cfg.grpo.optim.lr == 1e-5 and cfg.sft.optim.lr == 2e-3
    with pytest.raises(ConfigError, match="expected float"):
        load(LaunchConfig, None, ["grpo.optim.lr=1e-5x"])


@pytest.mark.parametrize(
    ("override", "needle"),
    [("grpo.stpes=3", "unknown key"), ("data.synth={distractor_rate: lots}", "distractor_rate"),
     ("data.synth={distractor_rate: 1.5}", "distractor_rate"), ("reward.variant=bogus", "bogus"),
     ("grpo.loss.policy_loss=ppo2", "ppo2"), ("stages=[synth, trian]", "trian"), ("model.mesh=model=2", "mesh"),
     ("grpo.sampling.temperature=0", "temperature"), ("model.init={hidden_sise: 3}", "hidden_sise"),
     ("sft.optim.lr=-1", "lr"), ("env.backend=http", r"env: env.urls has no URLs for \['banking'"),
     ("env.domains=[bankign]", "bankign")],
)
def test_a_config_typo_fails_before_any_work(override: str, needle: str, tmp_path: Path) -> None:
    out = tmp_path / "never"
    with pytest.raises(SystemExit, match=needle):
        main([f"out_dir={out}", override])
    assert not out.exists()


def test_launch_demo_runs_and_reports(tmp_path: Path) -> None:
    out = tmp_path / "run"
    results = main(["stages=[demo]", "env.backend=inprocess", f"out_dir={out}", "demo.episodes=12",
                    "demo.calls_per_episode=5", "env.domains=[banking, vehicle]"])
    summary = json.loads((out / "demo_summary.json").read_text())
    assert summary == json.loads(json.dumps(results["stages"]["demo"]))
    assert summary["pool"]["episodes_opened"] == 12
    assert sum(d["calls"] for d in summary["domains"].values()) == 12 * 5
    assert all(d["ok"] > 0 for d in summary["domains"].values()), "grounded random calls should sometimes succeed"
    assert (out / "demo.png").stat().st_size > 1000


def test_default_launch_pipeline_end_to_end_then_skips_on_rerun(tmp_path: Path) -> None:
    """Every stage of the default run (synth, tokenizer, SFT, GRPO, eval, export) at toy sizes, on
    the shipped tiny_cpu.yaml; a second invocation finds every output and redoes nothing."""
    out = tmp_path / "run"
    args = [f"out_dir={out}", "env.backend=inprocess", "progress=false", "tokenizer.vocab_size=800",
            "tokenizer.corpus_examples=40", "sft.max_steps=2", "sft.rows_per_step=4", "sft.rows_per_micro=4",
            "grpo.steps=1", "grpo.prompts_per_step=2", "grpo.group_size=2", "grpo.sampling.max_new_tokens=24",
            "eval.limit=3", "eval.max_new_tokens=24", "engine.slots=4"]
    summary = main(args)
    stages = summary["stages"]
    assert list(stages) == ["synth", "tokenizer", "sft", "grpo", "eval", "export"]
    mix = from_mapping("tiny", yaml.safe_load(DEFAULT_CONFIG.read_text())["data"]["synth"])
    assert mix.n_conversation == 300 and stages["synth"]["examples"] == mix.total  # the yaml's larger mix
    assert stages["tokenizer"]["vocab_size"] == 800
    assert stages["sft"]["steps"] == 2 and stages["grpo"]["steps"] == 1 and stages["grpo"]["start_from"] == "sft"
    assert set(stages["eval"]) == {"initial", "sft", "grpo"}
    assert all(v["n_tool"] + v["n_no_call"] == 3 for v in stages["eval"].values())
    caps = json.loads((out / "caps.json").read_text())
    # the cap comes from the data (longest gold transcript x 1.25, whole chunks), bounded for the CPU
    assert caps["derived"] == 1
    assert caps["max_tokens"] == min(math.ceil(caps["gold_longest"] * 1.25 / 256) * 256, 2048)
    hf = json.loads((out / "hf" / "config.json").read_text())
    assert hf["model_type"] == "qwen3" and (out / "hf" / "tokenizer.json").exists()
    for png in ("sft/sft_loss.png", "grpo/grpo_reward.png", "eval/eval.png"):
        assert (out / png).stat().st_size > 1000, png
    assert "past_untrained" in summary and summary["tool_view"].startswith("gold tools + 2 others")
    again = main(args)["stages"]
    assert all("skipped" in again[s] for s in ("synth", "tokenizer", "sft", "grpo", "export")), again
    assert again["eval"] == stages["eval"]
