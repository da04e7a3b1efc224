"""``python -m prove_jax.plan --config RUN.yaml --topology v5p-32 [--all-buckets] [key=value ...]``

Exits 0 when the run fits, 3 when it does not (the message names the program and the knob), 2 on a
configuration that cannot be planned. ``--json FILE`` writes the report.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

NO_FIT_EXIT = 3


def _prepare_platform(topology: str) -> None:
    """Deviceless TPU compiles run with the CPU as the only real backend; ``cpu-N`` needs N host
    devices, which XLA reads from its flags before jax starts."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    t = topology.lower()
    if t.startswith("cpu-"):
        n = int(t.split("-", 1)[1])
        flags = os.environ.get("XLA_FLAGS", "")
        if "xla_force_host_platform_device_count" not in flags:
            os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={n}".strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m prove_jax.plan", description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="configs/runs/tiny_cpu.yaml")
    ap.add_argument("--topology", required=True, help="v5p-32, v5e-256, v6e-64, v5p:2x2x4, cpu-8, 8xh100, 8xh200")
    ap.add_argument("--all-buckets", action="store_true", help="compile every length bucket, not just the binding ones")
    ap.add_argument("--headroom", type=float, default=0.1, help="fraction of HBM kept free (default 0.1)")
    ap.add_argument("--hbm-gib", type=float, default=None, help="override the chip's HBM (GiB)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("overrides", nargs="*", help="dotted key=value config overrides")
    args = ap.parse_args(argv)
    _prepare_platform(args.topology)

    from prove_jax.config import ConfigError, LaunchConfig, load
    from prove_jax.plan.planner import PlanError, plan_run
    from prove_jax.plan.report import format_report, to_json
    from prove_jax.plan.topology import GiB, resolve

    try:
        cfg = load(LaunchConfig, args.config, args.overrides)
        topo = resolve(args.topology)
        hbm = int(args.hbm_gib * GiB) if args.hbm_gib else None
        report = plan_run(cfg, topo, all_buckets=args.all_buckets, headroom=args.headroom, hbm_bytes=hbm,
                          progress=lambda m: print(m, file=sys.stderr, flush=True))
    except (ConfigError, PlanError, ValueError) as e:
        print(f"plan: {e}", file=sys.stderr)
        return 2
    print(format_report(report))
    if args.json:
        args.json.write_text(json.dumps(to_json(report), indent=2))
    return NO_FIT_EXIT if report.refusal() else 0  # the report's last line says what to change


if __name__ == "__main__":
    raise SystemExit(main())
