"""``python -m prove_jax.launch [--config FILE] [key=value ...]`` — the one entry point for runs.

Stages run in the order given by ``stages`` (default: all of them):

    synth -> tokenizer -> sft -> grpo -> eval -> export        (plus ``demo``: the environment alone)

With no arguments it runs ``configs/runs/tiny_cpu.yaml``: a tiny dataset, a small BPE tokenizer
with the family's chat/tool tokens, a small Qwen3-architecture model, SFT, a few GRPO steps,
held-out eval of the model before training and after each stage, HF export, plots and a printed
summary with paths. The whole config is parsed and checked before any work starts (a typo fails
at once, naming the key); each stage is skipped when its output exists and resumes from its last
checkpoint when it was interrupted, so rerunning a command continues the run.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

from prove_jax.config import ConfigError, LaunchConfig, check, load, to_dict
from prove_jax.host_memory import configure_host_allocator

AUTO_SLOTS_FALLBACK = 16  # engine.slots=0 where no device reports its memory (CPU without plan.hbm_gib)
PREEMPTED_EXIT = 143  # 128 + SIGTERM, after a clean checkpoint
DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "configs" / "runs" / "tiny_cpu.yaml"


def parse(argv: list[str] | None) -> LaunchConfig:
    parser = argparse.ArgumentParser(prog="python -m prove_jax.launch", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=None, help="YAML run config (default: configs/runs/tiny_cpu.yaml)")
    parser.add_argument("overrides", nargs="*", help="dotted overrides, e.g. grpo.steps=4 env.backend=stdio")
    args = parser.parse_args(argv)
    path = args.config or (DEFAULT_CONFIG if DEFAULT_CONFIG.exists() else None)
    try:
        cfg = load(LaunchConfig, path, args.overrides)
        check(cfg)
    except ConfigError as exc:
        raise SystemExit(f"config error: {exc}") from None
    return cfg


def _fmt(v: Any) -> str:
    return "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)


def summarize(run: Any, results: dict[str, Any], seconds: dict[str, float]) -> dict[str, Any]:
    """The run summary (printed and written to ``<out>/summary.json``)."""
    out: dict[str, Any] = {"name": run.cfg.name, "out_dir": str(run.out), "stages": results,
                           "seconds": seconds, "total_seconds": round(sum(seconds.values()), 1),
                           "tool_view": run.cfg.view.describe()}
    table = results.get("eval")
    if isinstance(table, dict) and "initial" in table and len(table) > 1:
        first, last = table["initial"], table[list(table)[-1]]
        out["past_untrained"] = {
            "parsed_call_fraction": [first["parsed_call_fraction"], last["parsed_call_fraction"]],
            "tool_reward": [first["tool_reward"], last["tool_reward"]],
            "ok": bool((last["parsed_call_fraction"] or 0) > (first["parsed_call_fraction"] or 0)
                       and (last["tool_reward"] or 0) > (first["tool_reward"] or 0)),
        }
        if {"sft", "grpo"} <= set(table) and (pair := grpo_vs_sft(run.stage_dir("eval"))) is not None:
            out["grpo_vs_sft"] = {**dataclasses.asdict(pair), "verdict": pair.verdict("SFT", "GRPO")}
    return out


def grpo_vs_sft(eval_dir: Path) -> Any:
    """GRPO's held-out tool reward minus SFT's, paired over the examples both were evaluated on
    (:class:`prove_jax.eval.stats.PairedDifference`); ``None`` when an eval file predates the
    per-example rewards."""
    from prove_jax.eval.stats import paired_difference

    per = [json.loads((eval_dir / f"{n}.json").read_text()).get("tool_rewards") for n in ("sft", "grpo")]
    if not all(per):
        return None
    return paired_difference(per[0], per[1])


# What each column of the in-domain table measures, printed under it: the same numbers for every
# model (e.g. "state" of a read-only example, which a model making no call matches) are otherwise
# easy to misread as a bug or as progress.
EVAL_LEGEND = (
    ("tool reward", "mean total reward on tool examples under the paper's reward (weighted val/cov/eff/name/arg): "
                    "the yardstick every run is evaluated on, whatever it trained on"),
    ("se", "standard error of that mean (sample sd / sqrt(n)): differences within it are noise"),
    ("success", "tool examples with every gold call made with all argument values, within the call budget"),
    ("parsed", "assistant turns on tool examples holding a parsed <tool_call>"),
    ("calls/ep", "calls made per tool example"),
    ("state", "tool examples whose servers end in the gold replay's state (a read-only one matches with no call)"),
    ("no-call reward", "the abstention term: no-call examples answered without a call (1 each, else 0)"),
)


#: The column shown beside "tool reward" only for a run that trained on another reward (an ablation).
TRAIN_REWARD_LEGEND = ("train reward", "the same tool examples under this run's own training reward (its `reward:` "
                                       "section), shown because it differs from the paper's")


def eval_table(table: dict[str, Any]) -> list[str]:
    """The launcher's in-domain table: a line naming which examples each column averages over,
    the header, one row per model, then what each column measures (numbers as ``summary.json``).
    A ``train reward`` column follows ``tool reward`` when the rows carry ``tool_train_reward``."""
    first: dict[str, Any] = next(iter(table.values()), {})
    n_tool, n_none = first.get("n_tool"), first.get("n_no_call")
    train = any("tool_train_reward" in r for r in table.values())
    extra = 13 if train else 0
    lines = [f"{'':<9}{'|---- tool examples (n=' + _fmt(n_tool) + ') ----|':^{52 + extra}}"
             f"{'no-call (n=' + _fmt(n_none) + ')':>16}",
             f"{'model':<9}{'tool reward':>12}{'se':>7}{'train reward' if train else '':>{extra}}{'success':>9}"
             f"{'parsed':>8}{'calls/ep':>9}{'state':>7}{'no-call reward':>16}"]
    for name, r in table.items():
        lines.append(f"{name:<9}{_fmt(r['tool_reward']):>12}{_fmt(r.get('tool_reward_se')):>7}"
                     f"{_fmt(r.get('tool_train_reward')) if train else '':>{extra}}"
                     f"{_fmt(r['tool_success']):>9}{_fmt(r['parsed_call_fraction']):>8}{_fmt(r['calls_per_episode']):>9}"
                     f"{_fmt(r['final_state_match']):>7}{_fmt(r['no_call_reward']):>16}")
    legend = [*EVAL_LEGEND[:2], TRAIN_REWARD_LEGEND, *EVAL_LEGEND[2:]] if train else list(EVAL_LEGEND)
    lines += [f"{col:>14}: {what}" for col, what in legend]
    lines.append(f"{'':>16}tool examples: kinds conversation, clarification; no-call: abstention, irrelevance")
    return lines


def print_summary(run: Any, summary: dict[str, Any]) -> None:
    res = summary["stages"]
    print(f"\n== {summary['name']}: {', '.join(res)} in {summary['total_seconds']:.0f} s "
          f"({', '.join(f'{k} {v:.0f}s' for k, v in summary['seconds'].items())})")
    if "sft" in res and "final_loss" in res["sft"]:
        s = res["sft"]
        print(f"SFT   {s['steps']} steps, loss {_fmt(s['final_loss'])}, {s.get('rows', '?')} gold transcripts")
    if "grpo" in res and "reward_last5" in res["grpo"]:
        s = res["grpo"]
        print(f"GRPO  {s['steps']} steps, train reward {_fmt(s['reward_first'])} -> {_fmt(s['reward_last5'])} "
              f"(last 5), skipped updates {s['skipped_updates']}, failed episodes {s['failed_episodes']}, "
              f"compiled programs {s['compiled_programs']} train + {s.get('engine_programs', '?')} engine")
        if "reward_curve" in s:
            print(f"      train reward per step (every group drawn, refills included) "
                  f"{' '.join(_fmt(v) for v in s['reward_curve'])}; calls/episode "
                  f"{' '.join(_fmt(v) for v in s['calls_per_episode_curve'])}; {s['constant_groups']} of "
                  f"{s['groups']} groups constant (no gradient), {s['no_update_steps']} step(s) without an "
                  f"update, {s['resampled_prompts']} prompts added by dynamic sampling")
    table = res.get("eval")
    if isinstance(table, dict):
        print(f"In-domain eval (held-out, greedy; tool view: {summary['tool_view']}):")
        for line in eval_table(table):
            print(f"  {line}")
    if "past_untrained" in summary:
        p = summary["past_untrained"]
        verdict = "past the untrained model" if p["ok"] else "NOT past the untrained model"
        print(f"  -> {verdict}: parsed-call fraction {_fmt(p['parsed_call_fraction'][0])} -> "
              f"{_fmt(p['parsed_call_fraction'][1])}, tool reward {_fmt(p['tool_reward'][0])} -> "
              f"{_fmt(p['tool_reward'][1])}")
    if "grpo_vs_sft" in summary:
        print(f"  -> {summary['grpo_vs_sft']['verdict']}")
    if isinstance(table, dict) and (run.stage_dir("eval") / "report.md").exists():
        print(f"Eval report (Table 3 layout; benchmarks per eval.benchmarks): {run.stage_dir('eval') / 'report.md'}")
    if "export" in res:
        print(f"HF export: {res['export'].get('dir')}")
    print(f"Run directory: {run.out} (metrics.jsonl, tb/ and PNGs per stage; summary.json)")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    cfg = parse(argv)
    from prove_jax.pipeline.distributed import maybe_initialize

    maybe_initialize(cfg.distributed)
    if cfg.model.gguf:  # an HF directory from the GGUF, once per run directory (prove_jax.convert.source)
        from prove_jax.convert import converted

        hf_dir = converted(cfg.model.gguf, cfg.model.hf_dir or Path(cfg.out_dir) / "model_hf")
        cfg.model = dataclasses.replace(cfg.model, hf_dir=str(hf_dir))
    configure_host_allocator()  # XLA:CPU step temporaries stay mapped between steps (host_memory.py)
    from prove_jax.io_util import write_json
    from prove_jax.pipeline.context import Run
    from prove_jax.pipeline.stages import STAGE_FNS

    run = Run(cfg)
    write_json(run.out / "config.json", to_dict(cfg))
    from prove_jax.plan.startup import check_startup

    report = check_startup(cfg, cfg.plan)  # a run that cannot fit stops here, naming the knob
    if cfg.engine.slots == 0:  # sized from the device's memory by the plan (a default where none)
        slots = report.engine_slots if report is not None and report.engine_slots else AUTO_SLOTS_FALLBACK
        cfg.engine = dataclasses.replace(cfg.engine, slots=slots)
        print(f"engine.slots=0 -> {cfg.engine.slots} slots", file=sys.stderr)
    results: dict[str, Any] = {}
    seconds: dict[str, float] = {}
    for stage in cfg.stages:
        t = time.perf_counter()
        if stage == "demo":
            from prove_jax.pipeline.demo import run_demo

            results[stage] = asyncio.run(run_demo(cfg, run.out))
        else:
            results[stage] = STAGE_FNS[stage](run)
        seconds[stage] = round(time.perf_counter() - t, 1)
        if isinstance(results[stage], dict) and results[stage].get("preempted"):
            print(f"\n{stage} stopped on SIGTERM at step {results[stage]['steps']}: rerun the same command to resume.",
                  file=sys.stderr)
            break
    summary = summarize(run, results, seconds)
    write_json(run.out / "summary.json", summary)
    print_summary(run, summary)
    if any(isinstance(r, dict) and r.get("preempted") for r in results.values()):
        raise SystemExit(PREEMPTED_EXIT)  # checkpointed; a scheduler sees a stop, not a finished run
    return json.loads(json.dumps(summary, default=str))


if __name__ == "__main__":
    main()
