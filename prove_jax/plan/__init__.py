"""``python -m prove_jax.plan``: a deviceless compile of every program a run executes, at the
run's real shapes, for a topology this machine does not have — per-device memory against HBM,
FLOPs, compile time, the longest transcript that fits, and a refusal naming the knob.

    report = plan_run(load(LaunchConfig, "configs/runs/qwen3_8b_prove.yaml"), resolve("v5p-32"))
    report.fits, report.refusal()

The launcher runs the same check on the real devices before the first rollout
(:func:`check_startup`).
"""

from prove_jax.plan.planner import PlanError, PlanReport, plan_run
from prove_jax.plan.topology import Topology, resolve

__all__ = ["PlanError", "PlanReport", "Topology", "plan_run", "resolve"]
