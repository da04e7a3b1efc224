"""The launcher's fit check: the planner over the devices the run really has, before any rollout.

On accelerators the chip's memory comes from ``device.memory_stats()["bytes_limit"]`` (what the
allocator may use); ``plan.hbm_gib`` overrides it (and is the only way to check on CPU, where
there is no HBM to run out of — there the check is skipped unless it is set). A run that does not
fit exits before its first rollout with the planner's message: which phase and program, how much
per device, and the knob to change.
"""

from __future__ import annotations

import sys
from typing import Any

import jax

from prove_jax.plan.config import PlanConfig
from prove_jax.plan.planner import PlanReport, plan_run
from prove_jax.plan.topology import Chip, GiB, Topology


def device_memory(device: Any) -> int | None:
    """Bytes the allocator may use on ``device``, or None where it reports none (CPU)."""
    try:
        stats = device.memory_stats()
    except Exception:  # backends without memory stats
        return None
    return int(stats["bytes_limit"]) if stats and "bytes_limit" in stats else None


def local_topology(hbm_bytes: int) -> Topology:
    devices = tuple(jax.devices())
    d0 = devices[0]
    chip = Chip(str(d0.device_kind), hbm_bytes, 1e12, 1e12, 1e11)
    return Topology(f"{d0.platform}-{len(devices)}", d0.platform, chip, len(devices), jax.local_device_count(),
                    devices, f"compiled (this machine's {d0.platform})")


def check_startup(cfg: Any, plan: PlanConfig) -> PlanReport | None:
    """Plan ``cfg`` on this machine's devices; exits with the refusal when it does not fit.
    Returns the report (None when skipped: the check is off, or CPU without ``plan.hbm_gib``)."""
    if not plan.check or not ({"sft", "grpo"} & set(cfg.stages)):
        return None
    hbm = int(plan.hbm_gib * GiB) if plan.hbm_gib else device_memory(jax.devices()[0])
    if hbm is None:
        return None
    quiet = lambda _msg: None  # noqa: E731
    report = plan_run(cfg, local_topology(hbm), headroom=plan.headroom, hbm_bytes=hbm, progress=quiet)
    refusal = report.refusal()
    if refusal:
        print(refusal, file=sys.stderr)
        raise SystemExit(f"plan: {refusal}")
    return report
