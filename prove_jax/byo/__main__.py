"""``python -m prove_jax.byo check CONFIG [key=value ...]``: see :mod:`prove_jax.byo.check`."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m prove_jax.byo", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    chk = sub.add_parser("check", help="look at a run's own MCP servers before training (about a minute)")
    chk.add_argument("config", help="a run YAML with env.byo servers")
    chk.add_argument("overrides", nargs="*", help="dotted overrides, as for the launcher")
    chk.add_argument("--conversations", type=int, default=5, help="synthesized conversations to realise and print")
    args = ap.parse_args(argv)
    from prove_jax.config import LaunchConfig, load
    from prove_jax.yamlconf import ConfigError

    try:
        cfg = load(LaunchConfig, args.config, args.overrides)
    except (ConfigError, ValueError, OSError) as exc:
        print(f"error: {args.config}: {exc}", file=sys.stderr)
        return 1
    if not cfg.env.byo:
        print(f"error: {args.config}: env.byo lists no server", file=sys.stderr)
        return 1
    from prove_jax.byo.check import run_check

    report = run_check(cfg.env.byo, cfg.episode.max_result_chars, seed=cfg.data.seed, conversations=args.conversations)
    return 1 if report.errors else 0


if __name__ == "__main__":
    sys.exit(main())
