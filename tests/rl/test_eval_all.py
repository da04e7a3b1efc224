"""``python -m prove_jax.eval all``: a training checkpoint and an HF directory, in-domain + BFCL, one
report; ``prove_jax.serve``'s loader restores a checkpoint to exactly the trained params."""

from __future__ import annotations

import json
from pathlib import Path

import jax
import numpy as np
import pytest
from flax import nnx

from prove_jax.eval.report import headline, markdown, normalise
from prove_jax.serve import load_policy


def test_serve_loads_a_training_checkpoint(sft_run: Path) -> None:
    from prove_jax.checkpoint import Checkpointer, restore_model
    from prove_jax.config import LaunchConfig, load
    from prove_jax.pipeline.context import Run
    from tests.rl.conftest import base_overrides

    policy = load_policy(sft_run, dtype="float32")
    run = Run(load(LaunchConfig, None, base_overrides(sft_run)))
    ck = Checkpointer(sft_run / "sft" / "checkpoints")  # the reference: the launch config's model, restored
    try:
        ref = restore_model(run.model_config(), ck, ck.latest_step(), run.mesh)
    finally:
        ck.close()
    got, want = jax.tree.leaves(nnx.state(policy.model, nnx.Param)), jax.tree.leaves(nnx.state(ref, nnx.Param))
    assert len(got) == len(want) and all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))
    assert policy.template.family == "qwen3" and len(policy.tokenizer) == len(run.tokenizer)
    assert policy.name.endswith("-sft-24")  # <run>-<stage>-<step>


def test_eval_all_writes_one_report(sft_run: Path, tiny_policy_dir: Path, tmp_path: Path) -> None:
    from prove_jax.eval import bfcl
    from prove_jax.eval.__main__ import main
    from tests.eval.test_teval import _tiny_mpnet, write_fixture_dir

    bfcl.bfcl_root(tmp_path)
    out = tmp_path / "report"
    teval_data = write_fixture_dir(tmp_path / "teval")
    (tmp_path / "mpnet").mkdir()
    _tiny_mpnet(tmp_path / "mpnet", max_seq_length=16)
    main(["all", "--model", str(sft_run), "--model", str(tiny_policy_dir), "--name", "sft", "--name", "tiny",
          "--data", str(sft_run / "data"), "--bfcl-limit", "1", "--bfcl-max-tokens", "24",
          "--indomain-max-new-tokens", "24", "--max-len", "16384",
          "--max-chunk", "256", "--slots", "4", "--dtype", "float32", "--out", str(out),
          "--teval-data", str(teval_data), "--teval-embedder", str(tmp_path / "mpnet")])
    report = json.loads((out / "report.json").read_text())
    rows = {r["model"]: r for r in report["rows"]}
    assert list(rows) == ["sft", "tiny"]
    for r in rows.values():
        assert r["in_domain"]["n_examples"] == 4  # the held-out split of the run's data
        assert set(r["bfcl"]["categories"]) == set(bfcl.CATEGORIES)
        assert r["headline"]["bfcl_mt_overall"] == r["bfcl"]["overall"]
        assert r["headline"]["in_domain_success"] == r["in_domain"]["tool"]["success"]
        abilities = [r["teval"][a] for a in ("instruct", "plan", "reason", "retrieve", "understand", "review")]
        assert r["headline"]["teval"] == pytest.approx(np.mean(abilities) / 100)  # T-Eval reports 0-100
        assert r["headline"]["tau2_avg"] is None
        assert (out / r["model"] / "results.json").exists()
    md = (out / "report.md").read_text()
    assert md.splitlines()[4] == "| model | BFCL-MT overall | τ² avg | T-Eval | in-domain success |"
    assert "## BFCL Multi-Turn" in md and "## In-domain" in md and "## T-Eval" in md and "## τ²" not in md


def test_report_puts_the_papers_numbers_in_table_3_order() -> None:
    """Qwen3-4B's PROVE row from the paper (29.0 / 28.6 / 78.2), fed in each benchmark's own scale."""
    row = {"model": "qwen3-4b-prove",
           "bfcl": {"overall": 0.29, "categories": {c: {"accuracy": 0.29, "total": 200, "steps_per_entry": 3.0}
                                                    for c in bfcl_categories()}},
           "tau2": {"avg": 28.6, "domains": {"airline": {"pass^1": 20.0, "pass^2": 10.0, "n_tasks": 50}},
                    "note": "user simulator and judge were local"},
           "teval": {"overall": 78.2, "instruct": 90.0, "plan": 70.0, "reason": 60.0, "retrieve": 85.0,
                     "understand": 80.0, "review": 84.2},
           "in_domain": {"tool": {"n": 10, "success": 0.5, "reward": 1.2}, "no_call": {"n": 0}}}
    norm = normalise(row)
    assert headline(norm) == pytest.approx({"bfcl_mt_overall": 0.29, "tau2_avg": 0.286, "teval": 0.782,
                                            "in_domain_success": 0.5})
    md = markdown([norm, {"model": "base"}])
    lines = md.splitlines()
    assert lines[6] == "| qwen3-4b-prove | 29.0 | 28.6 | 78.2 | 50.0 |"
    assert lines[7] == "| base | – | – | – | – |"
    assert "| qwen3-4b-prove | airline | 20.0 | 10.0 | 50 |" in md
    assert "| qwen3-4b-prove | 78.2 | 90.0 | 70.0 | 60.0 | 85.0 | 80.0 | 84.2 |" in md
    assert "> user simulator and judge were local" in md


def bfcl_categories() -> tuple[str, ...]:
    from prove_jax.eval.bfcl import CATEGORIES

    return CATEGORIES


def test_launcher_eval_stage_runs_the_same_benchmarks(run_copy: Path) -> None:
    """``stages=[eval]`` with ``eval.benchmarks.bfcl.enabled``: every model also plays BFCL (through the
    chat interface on the stage's own engine) and the stage writes the same report as ``eval all``.
    The cap is left to be derived and none is cached, as in a run whose first stage is the eval: the
    stage derives it (a gold replay through the pool) before its own event loop starts."""
    from prove_jax.launch import main
    from tests.rl.conftest import base_overrides

    caps = run_copy / "caps.json"
    caps.unlink(missing_ok=True)

    main([*base_overrides(run_copy), "stages=[eval]", "eval.benchmarks.bfcl.enabled=true", "eval.benchmarks.bfcl.limit=1",
          "eval.benchmarks.bfcl.categories=[multi_turn_base]", "eval.benchmarks.bfcl.max_tokens=16",
          "engine.max_len=16384", "episode.max_tokens=null"])
    for name in ("initial", "sft"):
        res = json.loads((run_copy / "eval" / f"{name}.json").read_text())
        base = res["benchmarks"]["bfcl"]["categories"]["multi_turn_base"]
        assert base["total"] == 1 and not base["stopped"]  # played to the end, not cut off
        assert (run_copy / "eval" / "benchmarks" / name / "bfcl" / "bfcl.json").exists()
    report = json.loads((run_copy / "eval" / "report.json").read_text())
    assert [r["model"] for r in report["rows"]] == ["initial", "sft"]
    assert all(r["headline"]["bfcl_mt_overall"] is not None for r in report["rows"])
    assert "## BFCL Multi-Turn" in (run_copy / "eval" / "report.md").read_text()
    assert json.loads(caps.read_text())["derived"] == 1
