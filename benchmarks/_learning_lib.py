"""Helpers of ``benchmarks/bench_learning.py``: its runs, the over-calling dataset, the Fig. 3 plot.

Every arm is an ordinary ``prove_jax.launch`` run in its own directory, made from a copy of the base
run (dataset, tokenizer, transcript caps, the evaluations already done), so arms differ only in
what the benchmark changes: the stages, the seed, the start checkpoint, the reward.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import shutil
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from prove_jax.launch import main as launch
from prove_jax.records import Example, GoldCall, GoldStep, Rollout

ROOT = Path(__file__).resolve().parent.parent
CONFIG = str(ROOT / "configs" / "runs" / "tiny_cpu.yaml")
# dynamic sampling off (the default run has it on): up to 4 refill rounds a step would multiply the
# rollouts of 40 x 3 seeds past the 90-min budget; the equal-compute control counts update tokens
GRPO = ["grpo.prompts_per_step=8", "grpo.group_size=8", "grpo.rows_per_micro=8", "grpo.sampling.max_new_tokens=256",
        "grpo.loss.kl_coef=0.01", "grpo.optim.schedule=constant", "grpo.dynamic_sampling=false", "checkpoint.every=1000"]
FIG3_KEYS = ("reward", "reward/val", "reward/cov", "reward/eff", "reward/name", "reward/arg", "reward/abstain",
             "calls_per_episode")
"""The Fig. 3 panels: the training reward, each component (R_eff on its own axis: it is small and
<= 0, so it would vanish beside the others) and the calls per episode that R_eff penalises."""
PAPER_TERMS = ("reward/val", "reward/cov", "reward/eff", "reward/name", "reward/arg")
"""Panels titled with the paper's name of the term (``R_eff: penalty for ...``)."""


def data_args(seed: int) -> list[str]:
    """The dataset override: the synthesis seed (``data.seed``: ``data.build.build(seed=...)``), so
    the benchmark can be rerun on other data. The default run's dataset already holds >= 64
    held-out tool examples (``tiny_cpu.yaml``'s ``data.synth``)."""
    return [f"data.seed={seed}"]


def read_eval(run: Path, name: str) -> dict[str, Any]:
    """The ``tool`` section of ``<run>/eval/<name>.json`` (held-out tool examples, greedy)."""
    return json.loads((run / "eval" / f"{name}.json").read_text())["tool"]


def metrics(run: Path, stage: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run / stage / "metrics.jsonl").read_text().splitlines() if x.strip()]


def copy_run(src: Path, dst: Path, drop: Sequence[str] = ()) -> Path:
    """``src`` copied to a fresh ``dst`` without its GRPO stage, export and summaries (plus the
    top-level entries in ``drop``), so a launch there reruns only the stages it is given; the
    evaluations it keeps are not redone (the eval stage skips a model with a ``<name>.json``)."""
    if dst.exists():
        shutil.rmtree(dst)
    top = {"grpo", "hf", "hf_peft", "export.json", "summary.json", *drop}
    shutil.copytree(src, dst, ignore=lambda d, names: [n for n in names if Path(d) == src and n in top])
    for stale in ("grpo.json", "summary.json", "eval.png", "report.md"):
        (dst / "eval" / stale).unlink(missing_ok=True)
    return dst


# ---- arms ----------------------------------------------------------------------------------------
def grpo_run(start: Path, dst: Path, seed: int, steps: int, lr: float, data: list[str], extra: Sequence[str] = (),
             *, config: str = CONFIG, grpo: Sequence[str] = GRPO) -> dict[str, Any]:
    """GRPO from ``start``'s SFT checkpoint (``stages=[grpo, eval]``; the seed changes the prompt
    order and every sampling seed) under launch config ``config`` with the overrides ``grpo``.
    Returns :func:`grpo_result`."""
    run = copy_run(start, dst)
    launch(["--config", config, f"out_dir={run}", f"seed={seed}", "stages=[grpo, eval]", *data, *grpo,
            f"grpo.steps={steps}", f"grpo.optim.lr={lr}", *extra])
    return grpo_result(run, seed)


def grpo_arm(start: Path, dst: Path, seed: int, steps: int, lr: float, data: list[str], extra: Sequence[str] = (),
             *, config: str = CONFIG, grpo: Sequence[str] = GRPO) -> tuple[dict[str, Any], bool]:
    """:func:`grpo_run`, or, when ``dst`` already holds its eval (a rerun of a benchmark that was
    cut short), that run read back; the flag says which."""
    if (dst / "eval" / "grpo.json").exists():
        return grpo_result(dst, seed), True
    return grpo_run(start, dst, seed, steps, lr, data, extra, config=config, grpo=grpo), False


def grpo_result(run: Path, seed: int) -> dict[str, Any]:
    """A finished GRPO run's held-out eval, metrics rows and update tokens (every row of every
    update, prompt included: what the equal-compute SFT arm matches)."""
    rows = metrics(run, "grpo")
    return {"seed": seed, "tool": read_eval(run, "grpo"), "rows": rows,
            "update_tokens": sum(float(r.get("update_tokens", 0.0)) for r in rows),
            "train_reward_first": rows[0]["reward"], "train_reward_last": statistics.fmean(r["reward"] for r in rows[-3:])}


def sft_tokens_per_step(run: Path) -> float:
    """Mean tokens of one SFT step of ``run`` (``tokens``: every token of the step's rows)."""
    return statistics.fmean(float(r["tokens"]) for r in metrics(run, "sft"))


def equal_compute_steps(update_tokens: Sequence[float], tokens_per_step: float) -> int:
    """SFT steps of ``tokens_per_step`` that train on as many tokens as a GRPO run's updates
    (``update_tokens``: one total per seed): their mean, rounded up (so at least one step)."""
    if not update_tokens or tokens_per_step <= 0:
        raise ValueError(f"need GRPO runs and a positive SFT step size, got {len(update_tokens)} and {tokens_per_step}")
    return math.ceil(statistics.fmean(update_tokens) / tokens_per_step)


def sft_continued_run(base: Path, dst: Path, seed: int, steps: int, lr: float, data: list[str],
                      initial_eval: Path | None = None) -> dict[str, Any]:
    """SFT continued from ``base``'s exported SFT model (``model.hf_dir=<base>/hf``) for ``steps``
    steps at a constant ``lr`` with a fresh AdamW (the export holds weights only), its own data
    order (``seed``), on ``base``'s dataset and transcript caps; then the eval, whose ``initial``
    model is that export, i.e. the SFT model itself (``initial_eval``: an earlier seed's file of it,
    copied so it is not redone)."""
    run = copy_run(base, dst, drop=("sft", "eval", "tokenizer"))
    if initial_eval is not None:
        (run / "eval").mkdir(exist_ok=True)
        shutil.copy(initial_eval, run / "eval" / "initial.json")
    launch(["--config", CONFIG, f"out_dir={run}", f"seed={seed}", "stages=[sft, eval]", *data,
            f"model.hf_dir={base / 'hf'}", f"sft.max_steps={steps}", "sft.epochs=10000", f"sft.optim.lr={lr}",
            "sft.optim.schedule=constant", "sft.optim.warmup_steps=0", "checkpoint.every=1000"])
    rows = metrics(run, "sft")
    return {"seed": seed, "tool": read_eval(run, "sft"), "start": read_eval(run, "initial"), "steps": len(rows),
            "tokens": sum(float(r["tokens"]) for r in rows), "loss_first": rows[0]["loss"],
            "loss_last": statistics.fmean(r["loss"] for r in rows[-10:])}


def export_matches_sft(base: Path, overrides: list[str]) -> dict[str, Any]:
    """Whether ``<base>/hf``, loaded as the control's launch loads it (``model.hf_dir``, the run's
    ``model.dtype``), is exactly the base SFT checkpoint: same arrays bit for bit (and dtypes),
    same chat template and tokenizer. What an export could lose (a cast, a renamed tensor, another
    template detected from the copied tokenizer) would show here."""
    import jax
    import numpy as np
    from flax import nnx

    from prove_jax.checkpoint import load_checkpoint
    from prove_jax.config import LaunchConfig, load
    from prove_jax.pipeline.context import Run

    sft = Run(load(LaunchConfig, CONFIG, [f"out_dir={base}", *overrides]))
    hf = Run(load(LaunchConfig, CONFIG, [f"out_dir={base}", f"model.hf_dir={base / 'hf'}", *overrides]))
    a = jax.tree.leaves(nnx.state(load_checkpoint(sft.stage_dir("sft"), mesh=None, config=sft.model_config()).model))
    b = jax.tree.leaves(nnx.state(hf.initial_model()))
    same = len(a) == len(b) and all(x.dtype == y.dtype and x.shape == y.shape and np.array_equal(np.asarray(x), np.asarray(y))
                                    for x, y in zip(a, b, strict=True))
    probe = "<tool_call>{\"name\": \"get_account_balance\"}</tool_call> Done."
    return {"weights": same, "arrays": len(a), "dtypes": sorted({str(x.dtype) for x in b}),
            "template": (sft.template.family, hf.template.family),
            "tokenizer": sft.tokenizer.encode(probe) == hf.tokenizer.encode(probe)}


def spread(xs: Sequence[float]) -> float:
    return max(xs) - min(xs)


# ---- the over-calling dataset ------------------------------------------------------------------------
def repeat_calls(ex: Example, copies: int, eligible: Callable[[GoldCall], bool]) -> tuple[Example, list[int]]:
    """``ex`` with every ``eligible`` gold call made ``copies`` times in a row, in its step's own
    assistant turn (``A, A, B`` for a step of parallel calls ``A, B`` with ``B`` not eligible; each
    repeat gets its own tool result), and, for each gold call of the new example in replay order,
    the index of the original call it repeats. Repeats stay inside the step's turn because an
    episode allows 10 assistant turns (``episode.max_assistant_turns``): repeats as turns of their
    own cut long gold replays (and an over-calling policy's rollouts) off at that cap."""
    origin: list[int] = []
    turns = []
    n_orig = 0
    for turn in ex.turns:
        steps: list[GoldStep] = []
        for s in sorted(turn.gold, key=lambda s: s.step):
            calls: list[GoldCall] = []
            for c in s.calls:
                k = copies if eligible(c) else 1
                calls += [c] * k
                origin += [n_orig] * k
                n_orig += 1
            steps.append(dataclasses.replace(s, calls=tuple(calls)))
        turns.append(dataclasses.replace(turn, gold=tuple(steps)))
    cx = dataclasses.replace(ex.complexity, n_calls=len(origin))
    return dataclasses.replace(ex, turns=tuple(turns), complexity=cx), origin


def replay_kept(orig: Rollout, dup: Rollout, origin: Sequence[int]) -> bool:
    """The repeated gold replays as the original does: it completes, every repeat executes as the
    call it repeats did, and every original call returns exactly what it returned without the
    repeats (so the repeats changed nothing the transcript later shows: a repeated write whose
    second run fails, or shifts an id or a balance a later call reads, is refused)."""
    if dup.failed or dup.finish != "done" or len(dup.calls) != len(origin) or len(orig.calls) != len(set(origin)):
        return False
    seen: set[int] = set()
    for call, i in zip(dup.calls, origin, strict=True):
        ref = orig.calls[i]
        if call.executed_ok != ref.executed_ok or (i not in seen and call.result != ref.result):
            return False
        seen.add(i)
    return True


def overcall_dataset(base: Path, dst: Path, copies: int, overrides: list[str]) -> dict[str, Any]:
    """``<base>/data`` copied to ``dst`` with its train split made over-calling: the examples the
    base SFT trained on (gold replay complete, within the base run's transcript cap), each with
    its gold calls made ``copies`` times, whichever of these its live gold replay accepts first
    (:func:`replay_kept`): every call repeated; the calls of read-only tools (``read_only`` in the
    server kit) repeated; unchanged. Validation and test are untouched (the eval scores against
    the real gold). Returns the counts and ``max_tokens``, the longest new gold transcript (the
    over-calling SFT's transcript cap, so it trains on the same examples as the base SFT)."""
    from data.catalog import get_catalog
    from data.writer import SplitWriter, dumps
    from prove_jax.config import LaunchConfig, load
    from prove_jax.env.view import apply_view
    from prove_jax.loaders import load_split
    from prove_jax.pipeline.context import Run
    from prove_jax.rl.caps import UNCAPPED
    from prove_jax.rl.sft import gold_rollouts

    run = Run(load(LaunchConfig, CONFIG, [f"out_dir={base}", *overrides]))
    cfg = run.cfg
    catalog = get_catalog(tuple(cfg.env.domains))
    cap = run.caps().max_tokens
    raw = load_split(run.data_dir, cfg.data.train_split)
    tiers = {"every_call": lambda c: True, "read_only_calls": lambda c: catalog.tools[c.name].read_only}
    variants = {name: [repeat_calls(ex, copies, f) for ex in raw] for name, f in tiers.items()}

    async def replay(exs: list[Example]) -> list[Rollout]:
        async with run.pool() as pool:
            return await gold_rollouts([apply_view(e, cfg.view) for e in exs], pool, run.template, run.tokenizer,
                                       run.episode_config(max_tokens=UNCAPPED))

    n = len(raw)
    ros = asyncio.run(replay(raw + [e for v in variants.values() for e, _ in v]))
    orig = ros[:n]
    replays = {name: ros[n * (k + 1):n * (k + 2)] for k, name in enumerate(variants)}
    out: list[tuple[Example, Example]] = []  # (original, written)
    counts = {"base_sft_examples": 0, **dict.fromkeys(tiers, 0), "unchanged": 0, "no_call": 0}
    lengths: list[int] = []
    for i, ex in enumerate(raw):
        if orig[i].failed or orig[i].finish != "done" or len(orig[i].tokens) > cap:
            continue  # not in the base SFT either
        counts["base_sft_examples"] += 1
        chosen, length, tier = ex, len(orig[i].tokens), "unchanged" if ex.n_gold_calls else "no_call"
        for name, v in variants.items():
            new, origin = v[i]
            if ex.n_gold_calls and new.n_gold_calls > ex.n_gold_calls and replay_kept(orig[i], replays[name][i], origin):
                chosen, length, tier = new, len(replays[name][i].tokens), name
                break
        counts[tier] += 1
        out.append((ex, chosen))
        lengths.append(length)
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(run.data_dir, dst)
    split = cfg.data.train_split
    for p in [*(dst / "arrayrecord").glob(f"{split}-*.array_record"), dst / f"{split}.jsonl"]:
        p.unlink()
    writer = SplitWriter(dst, split, len(out), shard_size=max(1, len(out)))
    try:
        for _, ex in out:
            writer.write(dumps(ex.to_dict()))
    finally:
        writer.close()
    tool = [(a.n_gold_calls, b.n_gold_calls) for a, b in out if a.n_gold_calls]
    stats = {"copies": copies, "train_examples": n, **counts,
             "gold_calls_per_tool_example": [statistics.fmean(a for a, _ in tool), statistics.fmean(b for _, b in tool)],
             "base_cap": cap, "max_tokens": -(-max(lengths) // 128) * 128}
    (dst / "overcall.json").write_text(json.dumps(stats, indent=1))
    return stats


# ---- Fig. 3 --------------------------------------------------------------------------------------
def _mean_curve(runs: Sequence[Sequence[dict[str, Any]]], key: str) -> tuple[list[int], list[float]]:
    """Per step, the mean over the runs that logged ``key`` at that step (NaNs left out)."""
    by_step: dict[int, list[float]] = {}
    for rows in runs:
        for r in rows:
            v = r.get(key)
            if isinstance(v, int | float) and math.isfinite(v):
                by_step.setdefault(int(r["step"]), []).append(float(v))
    steps = sorted(by_step)
    return steps, [statistics.fmean(by_step[s]) for s in steps]


def plot_fig3(arms: dict[str, Sequence[Sequence[dict[str, Any]]]], path: Path, title: str) -> Path | None:
    """The paper's Fig. 3 for our runs: per term of :data:`FIG3_KEYS`, its value at every GRPO step,
    one colour per arm: bold the mean over the arm's seeds, faint each seed. Titles say what each
    term measures (``prove_jax.metrics.MEANING``); every value is the mean over the step's episodes."""
    from prove_jax.metrics import MEANING, wrap_title

    present = [k for k in FIG3_KEYS if any(k in r for runs in arms.values() for rows in runs for r in rows)]
    if not present:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    ncols = min(4, len(present))
    nrows = -(-len(present) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.3 * ncols, 3.3 * nrows), squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, key in zip(axes.flat, present, strict=False):
        for colour, (arm, runs) in zip(colours, arms.items(), strict=False):
            for rows in runs:
                xs, ys = _mean_curve([rows], key)
                ax.plot(xs, ys, color=colour, lw=0.8, alpha=0.25)
            xs, ys = _mean_curve(runs, key)
            ax.plot(xs, ys, color=colour, lw=1.8, label=f"{arm} (mean of {len(runs)})")
        if key == "reward/eff":
            ax.axhline(0.0, color="grey", lw=0.6, ls=":")
        ax.set_title(wrap_title(("R_" if key in PAPER_TERMS else "") + MEANING.get(key, key), 50), fontsize=8)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("GRPO step", fontsize=8)
        ax.set_ylabel("calls per episode" if key == "calls_per_episode" else "mean over the step's episodes",
                      fontsize=7)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(present):]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

