"""Standard errors of the held-out figures and the paired GRPO-vs-SFT comparison, against values
worked out by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from prove_jax.eval.indomain import Scored, summarize
from prove_jax.eval.stats import PairedDifference, mean_se, paired_difference
from prove_jax.launch import grpo_vs_sft
from prove_jax.records import Rollout


def test_mean_se_by_hand() -> None:
    # 0, 1, 2, 3: mean 1.5, sample variance (2.25+0.25+0.25+2.25)/3 = 5/3, se = sqrt(5/3/4)
    m, se = mean_se([0.0, 1.0, 2.0, 3.0])
    assert m == 1.5 and se == pytest.approx(math.sqrt(5 / 12))
    assert mean_se([0.25]) == (0.25, None)  # one value: no error bar
    assert mean_se([0.5, 0.5, 0.5]) == (0.5, 0.0)
    with pytest.raises(ValueError, match="no values"):
        mean_se([])


def test_paired_difference_uses_the_shared_examples_only() -> None:
    a = {"x": 0.1, "y": 0.5, "z": 0.2, "only_a": 9.0}
    b = {"x": 0.3, "y": 0.5, "z": 0.0, "only_b": -9.0}
    # differences 0.2, 0.0, -0.2: mean 0, sample variance 0.08/2 = 0.04, se = sqrt(0.04/3)
    d = paired_difference(a, b)
    assert d.n == 3 and d.diff == pytest.approx(0.0, abs=1e-12) and d.se == pytest.approx(math.sqrt(0.04 / 3))
    with pytest.raises(ValueError, match="share no example"):
        paired_difference({"x": 1.0}, {"y": 1.0})


@pytest.mark.parametrize(("diff", "se", "word"), [(0.01, 0.02, "within one standard error of"),
                                                  (-0.05, 0.02, "below"), (0.05, 0.02, "above")])
def test_verdict_places_the_difference_against_its_error(diff: float, se: float, word: str) -> None:
    line = PairedDifference(diff, se, 40).verdict("SFT", "GRPO")
    assert line.startswith(f"GRPO {word} SFT") and f"{diff:+.3f} ± {se:.3f}" in line and "n=40" in line


def test_eval_summary_carries_the_standard_errors() -> None:
    def scored(total: float, i: int) -> Scored:
        z = np.zeros(1)
        r = Rollout(example_id=f"e{i}", group_id=f"e{i}", sample_idx=0, kind="conversation", n_gold_calls=1,
                    opening=1, tokens=z.astype(np.int32), loss_mask=z.astype(bool), logprobs=z, sample_logprobs=z,
                    calls=(), parse_errors=(), final_state=None, finish="done", n_assistant_turns=1,
                    n_user_turns=1, failed=False)
        comps = {"total": total, "val": 1.0, "cov": 1.0 if total > 0.5 else 0.0, "eff": 0.0, "name": 1.0,
                 "arg": 1.0}
        return Scored(r, comps)

    out = summarize([scored(t, i) for i, t in enumerate((0.0, 1.0, 1.0, 0.0))])
    assert out["reward"] == 0.5 and out["reward_se"] == pytest.approx(math.sqrt(1 / 3 / 4))
    assert out["success"] == 0.5 and out["success_se"] == pytest.approx(math.sqrt(1 / 3 / 4))


def test_launcher_compares_grpo_with_sft_paired(tmp_path: Path) -> None:
    for name, rewards in (("sft", {"a": 0.2, "b": 0.4}), ("grpo", {"a": 0.3, "b": 0.7})):
        (tmp_path / f"{name}.json").write_text(json.dumps({"tool": {}, "tool_rewards": rewards}))
    d = grpo_vs_sft(tmp_path)
    assert d.n == 2 and d.diff == pytest.approx(0.2) and d.se == pytest.approx(0.1)
    (tmp_path / "sft.json").write_text(json.dumps({"tool": {}}))  # an eval file from before the field
    assert grpo_vs_sft(tmp_path) is None
