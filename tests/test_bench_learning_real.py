"""``benchmarks/bench_learning_real.py``'s defaults fit its 90-min budget, by its own unit costs; the
equal-compute controls' length (both learning benchmarks) matches a GRPO run's update tokens."""

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_learning_real.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_learning_real", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_learning_real", mod)
    spec.loader.exec_module(mod)
    return mod


def test_defaults_fit_the_budget_and_each_knob_costs_time() -> None:
    b = _bench()
    a = b.parse_args([])
    assert a.seeds == [0, 1, 2] and a.grpo_lr == 2e-4
    est = b.budget_minutes(a.sft_steps, a.grpo_steps, len(a.seeds), a.eval_limit)
    assert 0 < est <= b.BUDGET_MIN
    assert b.budget_minutes(a.sft_steps, a.grpo_steps + 1, len(a.seeds), a.eval_limit) > est
    assert b.budget_minutes(a.sft_steps, a.grpo_steps, len(a.seeds), a.eval_limit + 8) > est
    assert all(v > 0 for v in b.UNIT.values())


def test_equal_compute_steps_match_the_grpo_tokens() -> None:
    sys.path.insert(0, str(BENCH.parent))
    import _learning_lib as lib

    # the real arm's three seeds (mean 53,072 tokens) over its 4,282-token warm-up steps: 12.4 -> 13
    assert lib.equal_compute_steps([55_667, 44_557, 58_992], 4_282.0) == 13
    assert lib.equal_compute_steps([8_000.0], 4_000.0) == 2  # exact: no extra step
    assert lib.equal_compute_steps([10.0], 4_000.0) == 1  # rounded up, never zero
    with pytest.raises(ValueError, match="GRPO runs"):
        lib.equal_compute_steps([], 4_000.0)
