"""Does GRPO teach the tiny model something SFT did not? SFT once, then GRPO against an equal-compute SFT.

    .venv/bin/python benchmarks/bench_learning.py [--part learning|ablation|all] [--seeds 0 1 2]
        [--data-seed 0] [--grpo-steps 40] [--out runs/bench_learning]

1. **Base** (``<out>/base``): the default launch config (``configs/runs/tiny_cpu.yaml``: compact
   tool view, ~1M-parameter Qwen3) on a dataset whose test split has >= 64 tool examples
   (``--data-seed`` seeds its synthesis, ``data.seed``); stages synth, tokenizer, SFT, eval (the
   untrained and the SFT model, greedy, held out) and export (the SFT model as ``<base>/hf``).
   Both parts start from it; a second part in the same ``--out`` reuses it (each stage is skipped
   when done: give each ``--data-seed`` its own ``--out``).
2. **Learning** (``--part learning``): GRPO x seeds from the SFT checkpoint (the seed changes the
   prompt order and every sampling seed), and the **equal-compute control**: SFT continued from
   the same SFT model for as many update tokens as a GRPO run trained on (the sum of
   ``update_tokens`` over its steps, mean over seeds: every token of every row of every update,
   prompt included, as SFT's ``tokens`` counts them; tokens, not wall time), in steps of the
   base SFT's mean tokens per step, with its own seeds of data order. Each control seed is a
   launch with ``model.hf_dir=<base>/hf`` (the export reloads bit-exactly: float32 weights, the
   same tokenizer and chat template; the eval of its ``initial`` model is the SFT model's, checked
   against the base eval and printed). Its learning-rate schedule: **constant at 2e-4 with a
   fresh AdamW, no warm-up** (``--sft-continued-lr``): 2e-4 is where the base SFT's cosine ended
   (2e-3 x ``end_lr_ratio`` 0.1), so the control continues that schedule instead of re-warming
   to 2e-3 (a new run that first shakes the converged model) or dropping to GRPO's 5e-5 (a rate
   tuned for a policy-gradient loss, which would handicap the control); the export holds weights
   only, so AdamW's moments start fresh. Printed: the SFT tool-example reward, GRPO's and the
   control's means and spreads over seeds (max - min), the margins over both, and calls per
   episode (which must not blow up). GRPO helps when every seed beats SFT, the margin over SFT
   exceeds the GRPO spread and the margin over the control exceeds both spreads.
3. **Reward ablation where the budget binds** (``--part ablation``; paper Table 5: the
   recall-only reward makes the policy call more tools than full PROVE). The SFT policy calls
   fewer tools than the gold count (1.58 vs 4.04 per episode), so R_eff's budget
   (n_gt + ceil(n_gt / 2) calls) never bound. So GRPO starts from an **over-calling** policy: a
   second SFT (same steps) on the base's train examples with gold calls made ``--overcall-copies``
   (3) times in a row inside their assistant turn, each with its own tool result. A repeated
   write may fail or change what later calls return, so per example the benchmark replays the
   gold live and keeps the first variant that replays exactly as the original (every repeat
   executes as its call did, every original call returns the same text): every call repeated,
   else only read-only tools' calls, else unchanged (counts printed; on data seed 0: 52 / 94 /
   29 of 175 tool examples, 3.31 -> 6.56 gold calls per tool example, ~2x). That SFT's transcript
   cap is the longest repeated gold transcript, so it trains on the same examples as the base
   SFT. Then GRPO with full PROVE vs ``reward.variant=recall_only`` from it, seeds each: calls
   per episode, coverage and R_eff, and the over-calling start's calls per episode. Arms run
   seed-major (full, then recall-only, per seed), so a run cut short leaves paired arms; a rerun in
   the same ``--out`` reads back the over-calling SFT, its start's eval and every finished arm.
   ``--ablation-temperature T`` samples the arms' GRPO at T (their directories and RESULT names
   get ``_tT``, a dot spelled ``p``): at the config's 1.0 the over-calling start's training
   episodes make 1.4-2.1 calls, under its 2.93 greedy ones, so R_eff barely binds where GRPO
   learns (2026-11-28 runs); a lower T keeps the samples nearer the greedy policy.
   ``--learning-temperature T`` does the same for the learning part's GRPO arms and their
   controls (a control's length follows its arms' update tokens).
4. **Paper Fig. 3** as PNGs under ``--out``: ``fig3_grpo.png`` (the learning part's GRPO) and
   ``fig3_ablation.png`` (full vs recall-only): the training reward and each component per step,
   bold the mean over seeds, faint each seed, R_eff on its own axis.

Figures are on the compact tool view (gold tools + 2 others): an easier task than the paper's full
lists. ``RESULT`` lines at the end (those of the parts run).

Time on 2 quiet cores (estimated; the old benchmark, base + 4 GRPO runs of 40 steps, took 25-35
min). Measured unit costs: an SFT step of 8 rows (~12k tokens) ~1.6 s on a quiet machine; under
load (a test suite beside it) an SFT step 5-6 s and a full GRPO update (64 rows, every group
informative, ~95k tokens) 45-50 s, the same ~2k tokens/s, so the control costs what the GRPO
updates cost; a GRPO step's rollouts (8 x 8 episodes) 8-15 s under load. Only the informative
groups are updated (the old run: ~4 s per GRPO step in all), so the figures scale with how many
there are. **Base ~11 min** (SFT 300 steps ~8 min, two evals), **learning part ~20-30 min** more
(3 GRPO runs of 40 steps ~4-7 min each with eval, 3 control runs ~2-4 min each), **ablation part
~40-50 min** more (the over-calling SFT, 300 steps of ~15k tokens: ~10 min; 6 GRPO runs of 25
steps ~4-6 min each with eval); ``--part all`` ~75-90 min, so run the parts one after the other
(``--part learning`` then ``--part ablation`` in the same ``--out``: the second reuses the base)
when the margin matters. Peak memory ~8.5 GB (the over-calling SFT's ~4k-token rows), else ~3.5 GB.

Measured (``--part learning``, data seed 0, 67 held-out tool examples; 5,484 CPU-s on a loaded box):
SFT 0.083; GRPO 0.103 / 0.142 / 0.116 (mean 0.120, spread 0.039); equal-compute SFT (70 steps,
~794k tokens) 0.100 / 0.101 / 0.101. GRPO beats both on every seed, but its margin over the control
(+0.020) is inside its own seed spread: on the tiny model, not shown beyond more SFT.
At ``--learning-temperature 0.7`` (46.8 min alone, 5,191 CPU-s): GRPO 0.110 / 0.120 / 0.125 (mean
0.118, spread 0.015: +0.035 over SFT, outside it); the control (114 steps, ~1.29M tokens) 0.117 /
0.073 / 0.095 (mean 0.095, spread 0.045); margin +0.023 (paired over the 67 examples, seed means:
+0.023 ± 0.015), again inside the control's spread. Ablation at ``--ablation-temperature 0.7``
(3 seeds): full PROVE 1.83 calls/ep vs recall-only 4.14, every seed pair, coverage 0.053 vs 0.060.

The tiny model's GRPO learning rate (the paper's 1e-6..5e-8 are for 4-8B models; SFT's 2e-3
collapses the policy in a few steps): from the SFT checkpoint, 15 steps of 8 x 8, held-out tool
reward 0.093 (SFT) -> 0.083 at 1e-5 (no gain), 0.114 at 5e-5, 0.110 at 2e-4 (KL to the reference
grows 10x faster). 5e-5 is the default here and in ``tiny_cpu.yaml``.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import _learning_lib as lib

from prove_jax.launch import main as launch

Result = tuple[str, float, str, str]


def temperature(t: float | None) -> tuple[list[str], str]:
    """GRPO sampling at ``t`` (None: the config's): its override and the tag its directories,
    figure and RESULT names get (``_t0p7``), because another temperature is another experiment."""
    if t is None:
        return [], ""
    return [f"grpo.sampling.temperature={t}"], f"_t{t:g}".replace(".", "p")


def base_run(out: Path, args: argparse.Namespace, common: list[str]) -> Path:
    """The base run (made once per ``--out``: a rerun skips its finished stages)."""
    base = out / "base"
    made = base / "config.json"
    if made.exists() and (seed := json.loads(made.read_text())["data"]["seed"]) != args.data_seed:
        raise SystemExit(f"{base} holds data seed {seed}, not --data-seed {args.data_seed}: give it another --out")
    launch(["--config", lib.CONFIG, f"out_dir={base}", "stages=[synth, tokenizer, sft, eval, export]", *common,
            f"sft.max_steps={args.sft_steps}", f"sft.optim.decay_steps={args.sft_steps}", "checkpoint.every=1000"])
    return base


def learning(out: Path, base: Path, args: argparse.Namespace, common: list[str]) -> list[Result]:
    """GRPO x seeds and the equal-compute continued-SFT control x seeds, from the base SFT."""
    sft, initial = lib.read_eval(base, "sft"), lib.read_eval(base, "initial")
    print(f"\nheld-out tool examples: {sft['n']}; initial reward {initial['reward']:.3f}, SFT {sft['reward']:.3f} "
          f"(parsed {sft['parsed_call_fraction']:.2f}, calls/ep {sft['calls_per_episode']:.2f})", flush=True)
    temp, tag = temperature(args.learning_temperature)
    runs = []
    for s in args.seeds:  # a rerun in the same --out reads back each finished arm
        res, done_arm = lib.grpo_arm(base, out / f"grpo{tag}_seed{s}", s, args.grpo_steps, args.grpo_lr, common, temp)
        runs.append(res)
        print(f"  GRPO seed {s}: tool reward {res['tool']['reward']:.3f}{' (read back)' if done_arm else ''}", flush=True)
    rewards = [r["tool"]["reward"] for r in runs]
    mean, spread = statistics.fmean(rewards), lib.spread(rewards)
    margin = mean - sft["reward"]
    calls = statistics.fmean(r["tool"]["calls_per_episode"] for r in runs)

    tokens = statistics.fmean(r["update_tokens"] for r in runs)
    per_step = lib.sft_tokens_per_step(base)
    steps = lib.equal_compute_steps([r["update_tokens"] for r in runs], per_step)
    print(f"\nequal-compute control: a GRPO run updated on {tokens:,.0f} tokens (mean over seeds) = {steps} SFT steps "
          f"of {per_step:,.0f} tokens; SFT continued from {base / 'hf'} at a constant lr {args.sft_continued_lr:g}, "
          "fresh AdamW, no warm-up", flush=True)
    check = lib.export_matches_sft(base, common)
    print(f"export check: {base / 'hf'} loads to the SFT checkpoint's weights bit for bit: {check['weights']} "
          f"({check['arrays']} arrays, {', '.join(check['dtypes'])}); chat template {check['template'][1]} "
          f"(SFT {check['template'][0]}); same tokenization: {check['tokenizer']}", flush=True)
    conts: list[dict[str, Any]] = []
    for s in args.seeds:
        # the control's step count follows its GRPO arms' tokens: a temperature's controls are its own
        first = out / f"sft_continued{tag}_seed{args.seeds[0]}" / "eval" / "initial.json"
        conts.append(lib.sft_continued_run(base, out / f"sft_continued{tag}_seed{s}", s, steps, args.sft_continued_lr,
                                           common, initial_eval=first if conts else None))
    start = conts[0]["start"]  # greedy eval of the same weights: every figure must agree exactly
    same = all(start.get(k) == v for k, v in sft.items() if isinstance(v, int | float))
    base_loss = statistics.fmean(r["loss"] for r in lib.metrics(base, "sft")[-10:])
    print(f"control start check: its initial model (the export) scores {start['reward']:.4f} reward, "
          f"{start['calls_per_episode']:.3f} calls/ep; the base SFT eval {sft['reward']:.4f}, "
          f"{sft['calls_per_episode']:.3f} -> {'identical' if same else 'NOT identical'}; first continued "
          f"loss {conts[0]['loss_first']:.3f} (base SFT's last 10 steps {base_loss:.3f})", flush=True)
    c_rewards = [c["tool"]["reward"] for c in conts]
    c_mean, c_spread = statistics.fmean(c_rewards), lib.spread(c_rewards)
    c_margin = mean - c_mean

    for r in runs:
        t = r["tool"]
        print(f"  GRPO seed {r['seed']}: tool reward {t['reward']:.3f} (cov {t['cov']:.3f}, success {t['success']:.3f}, "
              f"calls/ep {t['calls_per_episode']:.2f}); train reward {r['train_reward_first']:.3f} -> "
              f"{r['train_reward_last']:.3f}; {r['update_tokens']:,.0f} update tokens")
    for c in conts:
        t = c["tool"]
        print(f"  SFT-continued seed {c['seed']}: tool reward {t['reward']:.3f} (cov {t['cov']:.3f}, success "
              f"{t['success']:.3f}, calls/ep {t['calls_per_episode']:.2f}); {c['steps']} steps, {c['tokens']:,.0f} tokens, "
              f"loss {c['loss_first']:.3f} -> {c['loss_last']:.3f}")
    ok = all(x > sft["reward"] for x in rewards) and margin > spread
    print(f"GRPO over {len(runs)} seeds: mean {mean:.3f}, spread {spread:.3f}, SFT {sft['reward']:.3f}, "
          f"margin {margin:+.3f} -> {'outside' if ok else 'NOT outside'} the seed spread; calls/ep "
          f"{sft['calls_per_episode']:.2f} -> {calls:.2f} (gold {sft['gold_calls_per_episode']:.2f})")
    both = max(spread, c_spread)
    print(f"GRPO vs equal-compute SFT: {mean:.3f} vs {c_mean:.3f} (control spread {c_spread:.3f}), margin "
          f"{c_margin:+.3f} -> {'GRPO helps beyond more SFT' if c_margin > both else 'NOT beyond more SFT'} "
          f"(needs > {both:.3f}, the larger spread)", flush=True)
    ran = json.loads((out / f"grpo{tag}_seed{args.seeds[0]}" / "config.json").read_text())["grpo"]["sampling"]
    fig = lib.plot_fig3({"GRPO, full PROVE reward": [r["rows"] for r in runs]}, out / f"fig3_grpo{tag}.png",
                        f"Paper Fig. 3 on the tiny model: GRPO (T {ran['temperature']:g}) training reward and its "
                        "components per step "
                        f"({args.grpo_steps} steps of 8 prompts x 8 samples from the SFT checkpoint; bold: mean over "
                        f"{len(runs)} seeds, faint: each seed)")
    print(f"Fig. 3: {fig}")
    rows: list[Result] = [
        ("learning_sft_tool_reward", sft["reward"], "reward", "none"),
        ("learning_grpo_tool_reward_mean", mean, "reward", "> sft + spread"),
        ("learning_grpo_seed_spread", spread, "reward", "none"),
        ("learning_grpo_margin_over_sft", margin, "reward", f"> {spread:.3f}"),
        ("learning_grpo_calls_per_episode", calls, "calls", f"<= {1.5 * sft['gold_calls_per_episode']:.2f}"),
        ("learning_held_out_tool_examples", sft["n"], "examples", ">= 64"),
        ("learning_sft_continued_tool_reward", c_mean, "reward", "none"),
        ("learning_sft_continued_seed_spread", c_spread, "reward", "none"),
        ("learning_grpo_margin_over_sft_continued", c_margin, "reward", f"> {both:.3f}"),
        ("learning_sft_continued_steps", steps, "steps", "none"),
    ]
    same_base = ("learning_sft_tool_reward", "learning_held_out_tool_examples")
    return [(n if n in same_base else n + tag, v, u, g) for n, v, u, g in rows]


def ablation(out: Path, base: Path, args: argparse.Namespace, common: list[str]) -> list[Result]:
    """Full PROVE vs recall-only GRPO x seeds from an over-calling SFT start."""
    stats = lib.overcall_dataset(base, out / "data_overcall", args.overcall_copies, common)
    print(f"\nover-calling train split ({args.overcall_copies} copies of a call): of {stats['base_sft_examples']} "
          f"base-SFT examples, every call repeated in {stats['every_call']}, only read-only calls in "
          f"{stats['read_only_calls']}, unchanged {stats['unchanged']} (their repeats replay differently), no-call "
          f"{stats['no_call']}; gold calls per tool example {stats['gold_calls_per_tool_example'][0]:.2f} -> "
          f"{stats['gold_calls_per_tool_example'][1]:.2f}; transcript cap {stats['max_tokens']} "
          f"(base {stats['base_cap']})", flush=True)
    # a rerun in the same --out reads back what a killed run finished (the over-calling SFT is
    # ~1 h on 2 cores; each arm ~10 min): the SFT, the start's eval, each finished arm
    over = out / "sft_overcall"
    if not (over / "sft" / "summary.json").exists():
        lib.copy_run(base, over, drop=("sft", "eval", "data", "caps.json"))
        launch(["--config", lib.CONFIG, f"out_dir={over}", "stages=[sft]", *common, f"data.dir={out / 'data_overcall'}",
                f"episode.max_tokens={stats['max_tokens']}", f"engine.max_len={stats['max_tokens']}",
                f"sft.max_steps={args.sft_steps}", f"sft.optim.decay_steps={args.sft_steps}", "checkpoint.every=1000"])
    done = json.loads((over / "sft" / "summary.json").read_text())
    print(f"over-calling SFT: {done['steps']} steps on {done['rows']} gold transcripts (left out: {done['dropped']})")
    start = out / "overcall_start"
    if not (start / "eval" / "sft.json").exists():
        lib.copy_run(base, start, drop=("sft",))  # base data, caps and eval of initial
        (start / "eval" / "sft.json").unlink(missing_ok=True)  # the base SFT's: the start's is evaluated
        shutil.copytree(over / "sft", start / "sft")
        launch(["--config", lib.CONFIG, f"out_dir={start}", "stages=[eval]", *common])
    oc = lib.read_eval(start, "sft")
    budget = 1.5 * oc["gold_calls_per_episode"]
    print(f"over-calling SFT start: calls/ep {oc['calls_per_episode']:.2f} (gold {oc['gold_calls_per_episode']:.2f}, "
          f"budget ~{budget:.2f}), R_eff {oc['eff']:.3f}, coverage {oc['cov']:.3f}, tool reward {oc['reward']:.3f}",
          flush=True)

    temp, tag = temperature(args.ablation_temperature)
    arms: dict[str, list[dict[str, Any]]] = {"full PROVE": [], "recall-only": []}
    for s in args.seeds:  # seed-major: a run cut short still leaves paired arms
        for name, extra in (("full PROVE", temp), ("recall-only", [*temp, "reward.variant=recall_only"])):
            dst = out / f"ablation_{name.split()[0].replace('-', '_')}{tag}_seed{s}"
            res, done_arm = lib.grpo_arm(start, dst, s, args.ablation_grpo_steps, args.grpo_lr, common, extra)
            arms[name].append(res)
            print(f"  {name} seed {s}: calls/ep {arms[name][-1]['tool']['calls_per_episode']:.2f}"
                  f"{' (read back)' if done_arm else ''}", flush=True)
    means: dict[str, dict[str, float]] = {}
    for name, runs in arms.items():
        m = {k: statistics.fmean(r["tool"][k] for r in runs) for k in ("calls_per_episode", "cov", "eff", "reward")}
        m["train_eff_first"] = statistics.fmean(r["rows"][0].get("reward/eff", math.nan) for r in runs)
        m["train_eff_last"] = statistics.fmean(statistics.fmean(x.get("reward/eff", math.nan) for x in r["rows"][-3:])
                                               for r in runs)
        means[name] = m
        per_seed = ", ".join(f"{r['tool']['calls_per_episode']:.2f}" for r in runs)
        print(f"  {name:<12} calls/ep {m['calls_per_episode']:.2f} (seeds {per_seed})  coverage {m['cov']:.3f}  "
              f"R_eff {m['eff']:.3f} (train {m['train_eff_first']:.3f} -> {m['train_eff_last']:.3f})  "
              f"tool reward {m['reward']:.3f}")
    full, recall = means["full PROVE"], means["recall-only"]
    print(f"recall-only vs full PROVE from the over-calling start ({oc['calls_per_episode']:.2f} calls/ep): "
          f"{recall['calls_per_episode']:.2f} vs {full['calls_per_episode']:.2f} calls/ep -> "
          f"{'more verbose, as in the paper' if recall['calls_per_episode'] > full['calls_per_episode'] else 'NOT more verbose'}"
          , flush=True)
    ran = json.loads((out / f"ablation_full{tag}_seed{args.seeds[0]}" / "config.json").read_text())["grpo"]["sampling"]
    fig = lib.plot_fig3({n: [r["rows"] for r in runs] for n, runs in arms.items()}, out / f"fig3_ablation{tag}.png",
                        f"Reward ablation from an over-calling SFT start: GRPO (T {ran['temperature']:g}) training reward "
                        "and components per step "
                        f"(totals differ by design: recall-only's is R_cov; bold: mean over {len(args.seeds)} seeds, "
                        "faint: each seed)")
    print(f"Fig. 3 (ablation): {fig}")
    rows: list[Result] = [
        ("ablation_overcall_sft_calls_per_episode", oc["calls_per_episode"], "calls", f"> {budget:.2f} (budget)"),
        ("ablation_full_calls_per_episode", full["calls_per_episode"], "calls", "none"),
        ("ablation_recall_only_calls_per_episode", recall["calls_per_episode"], "calls", "> full (paper)"),
        ("ablation_full_coverage", full["cov"], "cov", "none"),
        ("ablation_recall_only_coverage", recall["cov"], "cov", "none"),
        ("ablation_full_eff", full["eff"], "reward", "none"),
        ("ablation_recall_only_eff", recall["eff"], "reward", "< full"),
    ]
    return [(n if n.startswith("ablation_overcall") else n + tag, v, u, g) for n, v, u, g in rows]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(lib.ROOT / "runs" / "bench_learning"))
    ap.add_argument("--part", choices=("learning", "ablation", "all"), default="all")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--data-seed", type=int, default=0, help="synthesis seed of the dataset (data.seed)")
    ap.add_argument("--grpo-steps", type=int, default=40)
    ap.add_argument("--grpo-lr", type=float, default=5e-5)
    ap.add_argument("--sft-steps", type=int, default=300)
    ap.add_argument("--sft-continued-lr", type=float, default=2e-4,
                    help="the equal-compute control's constant rate (default: where the base SFT's cosine ends)")
    ap.add_argument("--learning-temperature", type=float, default=None,
                    help="the learning part's GRPO sampling temperature (default: the config's)")
    ap.add_argument("--ablation-grpo-steps", type=int, default=25)
    ap.add_argument("--ablation-temperature", type=float, default=None,
                    help="the ablation's GRPO sampling temperature (default: the config's)")
    ap.add_argument("--overcall-copies", type=int, default=3, help="times each gold call is made in the over-calling SFT")
    ap.add_argument("--eval-limit", type=int, default=0, help="evaluate on this many held-out examples (0: all; smoke runs)")
    ap.add_argument("--no-ablation", action="store_true", help="the same as --part learning")
    args = ap.parse_args()
    part = "learning" if args.no_ablation else args.part
    out = Path(args.out)
    common = lib.data_args(args.data_seed) + ([f"eval.limit={args.eval_limit}"] if args.eval_limit else [])
    t0 = time.perf_counter()
    base = base_run(out, args, common)
    results: list[Result] = []
    if part in ("learning", "all"):
        results += learning(out, base, args, common)
    if part in ("ablation", "all"):
        results += ablation(out, base, args, common)
    print(f"bench_learning ({part}) took {(time.perf_counter() - t0) / 60:.1f} min")
    for name, value, unit, goal in results:
        print(f"RESULT {name} {value:.4f} {unit} goal={goal}")


if __name__ == "__main__":
    main()
