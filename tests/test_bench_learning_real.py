"""``benchmarks/bench_learning_real.py``'s defaults fit its 90-min budget, by its own unit costs."""

import importlib.util
import sys
from pathlib import Path

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
