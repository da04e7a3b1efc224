"""The byo run configs end to end through the launcher (synth -> tokenizer -> sft -> grpo -> eval ->
export), each shrunk to a CI smoke: a tiny dataset, a tiny model, 2 SFT + 2 GRPO steps."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from prove_jax.config import ConfigError, LaunchConfig, check, load
from prove_jax.launch import main

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ["progress=false", "data.synth.n_conversation=8", "data.synth.n_clarification=2",
         "data.synth.n_abstention_irrelevance=4", "data.synth.irrelevance_rate=0.15",
         "data.synth.splits=[0.6,0.1,0.3]", "tokenizer.vocab_size=500",
         "model.init.hidden_size=64", "model.init.intermediate_size=128", "model.init.num_layers=1",
         "model.init.num_heads=2", "model.init.num_kv_heads=1", "sft.max_steps=2", "grpo.steps=2",
         "grpo.prompts_per_step=2", "grpo.group_size=2", "grpo.dynamic_sampling=false",
         "grpo.sampling.max_new_tokens=48", "eval.max_new_tokens=48", "engine.slots=8"]
STAGES = ["synth", "tokenizer", "sft", "grpo", "eval", "export"]


@pytest.mark.parametrize("run", ["memory", "filesystem", "git"])
def test_a_byo_config_runs_every_stage(run: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / run
    summary = main(["--config", f"configs/runs/byo_{run}.yaml", f"out_dir={out}", *SMOKE])
    disk = json.loads((out / "summary.json").read_text())
    stages = disk["stages"]
    assert set(STAGES) <= set(stages) and set(summary["stages"]) == set(stages)
    data = json.loads((out / "data" / "stats.json").read_text())
    assert stages["synth"]["examples"] == data["total"] >= 10
    assert set(data["kinds"]) == {"conversation", "clarification", "abstention", "irrelevance"}
    assert stages["sft"]["steps"] == 2 and stages["sft"]["rows"] > 0 and stages["sft"]["final_loss"] > 0
    assert stages["grpo"]["steps"] == 2 and stages["grpo"]["failed_episodes"] == 0
    ev = stages["eval"]
    assert {"initial", "sft", "grpo"} <= set(ev)
    assert all(0.0 <= m["tool_reward"] <= 1.5 and m["n_tool"] >= 2 for m in ev.values())
    assert (out / "hf" / "config.json").exists() and stages["export"]["source"] == "grpo"


def test_the_final_state_term_needs_a_snapshot_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    cfg = load(LaunchConfig, ROOT / "configs" / "runs" / "byo_memory.yaml", [f"out_dir={tmp_path}"])
    check(cfg)  # with its snapshot command: fine
    cfg.env.byo[0].snapshot = []
    with pytest.raises(ConfigError, match=r"eval.final_state: byo server\(s\) \['memory'\]"):
        check(cfg)
    cfg.eval = dataclasses.replace(cfg.eval, final_state=False)
    check(cfg)  # the paper's reward has no final-state term
    cfg.reward = load(LaunchConfig, None, ["reward={final_state: true}"]).reward
    with pytest.raises(ConfigError, match=r"reward: the final-state term needs a snapshot command"):
        check(cfg)
