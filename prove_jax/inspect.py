"""Read one GRPO step's rollouts: ``python -m prove_jax.inspect RUN --step N``.

Prints the step's dump (``<RUN>/<stage>/rollouts/step_<N>.jsonl``, written by
:mod:`prove_jax.rl.dump`) group by group: the prompt's user message, then per sample its reward
and components, the advantage the update gave it, its calls (``✓`` executed, ``✗`` refused or
failed, with the server's answer excerpt), parse errors, finish reason and token counts;
``--full`` adds each transcript (the text after the opening render). ``--group ID`` shows one
group, ``--limit K`` the first K groups. Why a CLI: the metrics say a reward moved, this shows
which calls moved it, without a notebook.

Reads only the dump (no JAX, no model), so it runs on any machine that has the run directory.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from prove_jax.rl.dump import RolloutDump, dump_path, dumped_steps, read_dump

COMPONENT_ORDER = ("val", "cov", "eff", "name", "arg", "abstain", "state")
"""Reward components shown first, in the paper's order; any others follow alphabetically."""
BOOKKEEPING = ("is_abstention", "n_calls", "n_gold", "budget")


def _num(x: float | None, signed: bool = False) -> str:
    if x is None:
        return "-"
    return f"{x:+.3f}" if signed else f"{x:.3f}"


def _components(c: dict[str, float]) -> str:
    keys = [k for k in COMPONENT_ORDER if k in c]
    keys += sorted(k for k in c if k not in keys and k not in BOOKKEEPING)
    return " ".join(f"{k}={c[k]:.2f}" for k in keys)


def _call(line: RolloutDump, i: int) -> str:
    c = line.calls[i]
    mark = "✓" if c.executed_ok else "✗"
    args = json.dumps(c.arguments, ensure_ascii=False, sort_keys=True)
    why = "" if c.executed_ok else f" [{c.error_kind or 'error'}]"
    result = " ".join(c.result.split())
    return f"      {mark} t{c.turn}/a{c.assistant_turn} {c.name}({args}){why} -> {result}"


def format_sample(line: RolloutDump, full: bool = False) -> list[str]:
    """The lines that describe one rollout."""
    head = (f"  #{line.sample_idx} reward={_num(line.reward)} adv={_num(line.advantage, signed=True)} "
            f"finish={line.finish} tokens={line.n_tokens} (generated {line.n_generated}) "
            f"turns={line.n_assistant_turns}")
    if line.failed:
        head += f" FAILED: {line.failure or 'unknown'}"
    out = [head]
    if line.components:
        out.append(f"    {_components(line.components)}")
    out.append(f"    calls ({len(line.calls)}):" if line.calls else "    calls: none")
    out.extend(_call(line, i) for i in range(len(line.calls)))
    out.extend(f"      ! parse error t{e.turn}/a{e.assistant_turn}: {e.reason}" for e in line.parse_errors)
    if full:
        out.append("    transcript:")
        out.extend(f"      | {t}" for t in line.transcript.splitlines())
    return out


def format_step(lines: Sequence[RolloutDump], *, group: str | None = None, limit: int | None = None,
                full: bool = False) -> str:
    """A step's dump as text: one block per group, in dump order."""
    groups: dict[str, list[RolloutDump]] = {}
    for x in lines:
        if group is None or x.group_id == group:
            groups.setdefault(x.group_id, []).append(x)
    out: list[str] = []
    for gid, samples in list(groups.items())[:limit]:
        first = samples[0]
        rewards = [s.reward for s in samples if s.reward is not None]
        spread = f"reward {min(rewards):.3f}..{max(rewards):.3f}" if rewards else "unscored"
        rnd = f", refill round {first.round}" if first.round else ""
        out.append(f"== group {gid} [{first.kind}] {first.group_status}{rnd}: {len(samples)} samples, {spread} ==")
        out.append(f"user: {first.prompt}")
        for s in samples:
            out.extend(format_sample(s, full))
        out.append("")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m prove_jax.inspect", description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path, help="the run directory (holds <stage>/rollouts/)")
    ap.add_argument("--step", type=int, required=True, help="the 0-based step, as in metrics.jsonl")
    ap.add_argument("--stage", default="grpo", help="the stage directory under RUN (default: grpo)")
    ap.add_argument("--group", default=None, help="show only this group (its example id)")
    ap.add_argument("--limit", type=int, default=None, help="show at most this many groups")
    ap.add_argument("--full", action="store_true", help="also print each transcript")
    args = ap.parse_args(argv)
    stage_dir = args.run / args.stage
    path = dump_path(stage_dir, args.step)
    if not path.exists():
        steps = dumped_steps(stage_dir)
        have = f"dumped steps: {steps[0]}..{steps[-1]} ({len(steps)})" if steps else "no rollout dumps there"
        print(f"no dump for step {args.step} at {path}; {have}", file=sys.stderr)
        return 2
    lines = read_dump(path)
    text = format_step(lines, group=args.group, limit=args.limit, full=args.full)
    if not text:
        print(f"step {args.step} has no group {args.group!r}", file=sys.stderr)
        return 2
    print(f"step {args.step}: {len({x.group_id for x in lines})} groups, {len(lines)} rollouts ({path})\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
