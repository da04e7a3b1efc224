"""The launcher's stages: ``synth -> tokenizer -> sft -> grpo -> eval -> export``.

Each stage reads what the earlier ones wrote under ``out_dir`` and is skipped when its own output
is complete (``summary.json`` is written last and atomically: it is the done marker). The
training stages resume from their newest checkpoint when they were interrupted, so rerunning the
same command after a crash or a SIGTERM continues the run. Every stage returns a small summary
dict that the launcher prints.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from pathlib import Path
from typing import Any

import jax

from prove_jax.checkpoint import load_checkpoint
from prove_jax.io_util import read_json, write_json
from prove_jax.model_record import read_record
from prove_jax.models.lora import has_adapters, merge_lora
from prove_jax.pipeline.context import Run
from prove_jax.records import Rollout
from prove_jax.rl.loop import StageRunner


def _sync(name: str) -> None:
    if jax.process_count() > 1:
        from jax.experimental import multihost_utils

        multihost_utils.sync_global_devices(name)


def _done(path: Any) -> dict[str, Any] | None:
    return read_json(path) if path.exists() else None


# ---- synth ------------------------------------------------------------------------------------
def synth(run: Run) -> dict[str, Any]:
    cfg = run.cfg
    if cfg.data.dir:
        return {"skipped": f"using data.dir {cfg.data.dir}"}
    stats = run.data_dir / "stats.json"
    if stats.exists():
        return {"skipped": "dataset exists", "dir": str(run.data_dir)}
    if jax.process_index() == 0:
        from data.config import from_mapping

        t = time.perf_counter()
        synth_cfg = from_mapping(cfg.data.size, cfg.data.synth)
        if "max_result_chars" not in cfg.data.synth:  # gold values must lie inside the clip episodes show
            synth_cfg = dataclasses.replace(synth_cfg, max_result_chars=cfg.episode.max_result_chars)
        if cfg.env.tau2 and not cfg.env.domains and not cfg.env.byo:  # τ²'s own tasks, nothing synthesised
            from data.tau2 import build_tau2

            if len(cfg.env.tau2) != 1:
                raise SystemExit(f"env.tau2: one τ² domain per run, got {cfg.env.tau2}")
            made = build_tau2(run.data_dir, cfg.env.tau2[0])
        elif cfg.env.byo and not cfg.env.domains:  # the user's own servers (data.byo.synth), same layout
            from data.byo.synth import synthesise

            made = synthesise(run.data_dir, cfg.env.byo, seed=cfg.data.seed, cfg=synth_cfg,
                              run_dir=Path(cfg.env.byo_dir or run.out / "byo") / "synth", progress=cfg.progress).stats
        else:
            from data.build import build

            made = build(run.data_dir, seed=cfg.data.seed, size=cfg.data.size, cfg=synth_cfg, progress=cfg.progress,
                          domains=tuple(cfg.env.domains)).stats
        out = {"dir": str(run.data_dir), "examples": made["total"], "splits": made["splits"],
               "seconds": round(time.perf_counter() - t, 1)}
    else:
        out = {"dir": str(run.data_dir)}
    _sync("synth")
    return out


# ---- tokenizer ----------------------------------------------------------------------------------
def tokenizer(run: Run) -> dict[str, Any]:
    cfg = run.cfg
    if cfg.tokenizer.dir or cfg.model.hf_dir:
        return {"skipped": f"using {run.tokenizer_dir}"}
    if (run.tokenizer_dir / "tokenizer.json").exists():
        return {"skipped": "tokenizer exists", "dir": str(run.tokenizer_dir)}
    if jax.process_index() == 0:
        from prove_jax.chat import train_tiny_tokenizer
        from prove_jax.env.corpus import tokenizer_corpus
        from prove_jax.loaders import load_split

        t = time.perf_counter()
        examples = load_split(run.data_dir, cfg.data.train_split, cfg.view, limit=cfg.tokenizer.corpus_examples)
        template = run.template_for_family()

        async def corpus() -> list[str]:
            async with run.pool() as pool:
                return await tokenizer_corpus(examples, pool, template, max_result_chars=cfg.episode.max_result_chars)

        texts = asyncio.run(corpus())
        train_tiny_tokenizer(template.family, texts, cfg.tokenizer.vocab_size, out_dir=run.tokenizer_dir,
                             seed=cfg.seed)
        out = {"dir": str(run.tokenizer_dir), "vocab_size": cfg.tokenizer.vocab_size, "corpus_texts": len(texts),
               "corpus_chars": sum(map(len, texts)), "seconds": round(time.perf_counter() - t, 1)}
    else:
        out = {"dir": str(run.tokenizer_dir)}
    _sync("tokenizer")
    return out


# ---- sft ----------------------------------------------------------------------------------------
SFT_PANELS = {"loss": ["loss"], "speed": ["speed/tokens_per_s"]}


def sft(run: Run) -> dict[str, Any]:
    from prove_jax.loaders import load_split
    from prove_jax.rl.caps import UNCAPPED, completed_lengths
    from prove_jax.rl.objectives import SFTObjective
    from prove_jax.rl.sft import gold_rollouts, gold_rows, train_sft
    from prove_jax.rl.step import Trainer

    cfg = run.cfg
    out_dir = run.stage_dir("sft")
    if (done := _done(out_dir / "summary.json")) is not None:
        return {"skipped": "done", **done}
    t = time.perf_counter()
    examples = load_split(run.data_dir, cfg.data.train_split, cfg.view)

    async def replay() -> list[Rollout]:
        async with run.pool() as pool:
            return await gold_rollouts(examples, pool, run.template, run.tokenizer,
                                       run.episode_config(max_tokens=UNCAPPED))

    ros = asyncio.run(replay())
    caps = run.caps(completed_lengths(ros))
    rows, dropped = gold_rows(ros, caps.max_tokens)
    model = run.initial_model()
    trainer = Trainer(run.trained_model(model), cfg.sft.optim, SFTObjective())
    runner = StageRunner("sft", out_dir, trainer, cfg.sft.steps(len(rows)), checkpoint=cfg.checkpoint,
                         config=run.config_dict, panels=SFT_PANELS, progress=cfg.progress)
    try:  # model.json + tokenizer copy (+ the frozen base with LoRA)
        runner.ckpt.describe(run.model_record(model), run.tokenizer_dir, base=model if trainer.lora else None)
        summary = train_sft(trainer, rows, cfg.sft, runner, seed=cfg.seed, max_len=caps.max_tokens)
    finally:
        runner.close()
    summary.update(rows=len(rows), dropped=dropped, examples=len(examples), model=run.model_summary(model),
                   seconds=round(time.perf_counter() - t, 1),
                   target_token_share=sum(r.target_tokens for r in rows) / max(1, sum(len(r) for r in rows)))
    if not summary["preempted"]:
        write_json(out_dir / "summary.json", summary)
    return summary


# ---- grpo ---------------------------------------------------------------------------------------
def grpo(run: Run) -> dict[str, Any]:
    from prove_jax.loaders import prompt_batches
    from prove_jax.rl.grpo import PANELS, GRPOContext, train_grpo
    from prove_jax.rl.objectives import GRPOObjective
    from prove_jax.rl.step import Trainer

    cfg = run.cfg
    g = cfg.grpo
    out_dir = run.stage_dir("grpo")
    # Done unless the command now asks for more steps: then it continues from the last checkpoint.
    if (done := _done(out_dir / "summary.json")) is not None and done.get("steps", 0) >= g.steps:
        return {"skipped": "done", **done}
    t = time.perf_counter()
    start_from = "sft" if (run.stage_dir("sft") / "summary.json").exists() else "initial model"
    model = (load_checkpoint(run.stage_dir("sft"), mesh=cfg.model.mesh, config=run.model_config()).model
             if start_from == "sft" else run.initial_model())
    if has_adapters(model):  # a LoRA SFT: its merged policy is this stage's start (and base)
        model = merge_lora(model)
    trainer = Trainer(run.trained_model(model), g.optim, GRPOObjective(g.loss, g.sampling.temperature),
                      reference=g.loss.kl_coef > 0, reference_dtype=g.reference_dtype)
    if g.prompts_per_step % jax.process_count():
        raise SystemExit(f"grpo.prompts_per_step={g.prompts_per_step} must split evenly over "
                         f"{jax.process_count()} processes")
    loader = prompt_batches(run.data_dir, cfg.data.train_split, g.prompts_per_step // jax.process_count(),
                            seed=cfg.seed, view=cfg.view)
    caps = run.caps()
    runner = StageRunner("grpo", out_dir, trainer, g.steps, checkpoint=cfg.checkpoint, config=run.config_dict,
                         panels=PANELS, progress=cfg.progress)
    runner.ckpt.describe(run.model_record(model), run.tokenizer_dir, base=model if trainer.lora else None)

    engine_model, to_engine = run.engine_model(trainer)  # to_engine None: decodes from the trainer's buffers

    async def go() -> dict[str, Any]:
        async with run.pool() as pool:
            ctx = GRPOContext(trainer=trainer, engine=run.engine(engine_model), pool=pool, template=run.template,
                              tokenizer=run.tokenizer, episode=run.episode_config(),
                              reward=cfg.reward, max_len=caps.max_tokens, to_engine=to_engine)
            return await train_grpo(ctx, g, loader, runner, seed=cfg.seed)

    try:
        summary = asyncio.run(go())
    finally:
        runner.close()
    summary.update(start_from=start_from, seconds=round(time.perf_counter() - t, 1), reward=cfg.reward.name,
                   reward_config=cfg.reward.to_dict(),
                   view=cfg.view.describe(),
                   weight_sync=to_engine.describe() if to_engine is not None else {"mode": "zero-copy"})
    if not summary["preempted"]:
        write_json(out_dir / "summary.json", summary)
    return summary


# ---- eval ---------------------------------------------------------------------------------------
def trained_stages(run: Run) -> list[str]:
    return [s for s in ("sft", "grpo") if (run.stage_dir(s) / "summary.json").exists()]


def evaluate(run: Run) -> dict[str, Any]:
    """Greedy held-out eval of the initial model and of every trained stage (one file each; a model
    already evaluated is not redone). One pool and one sampler serve all models, and the gold
    final states are replayed once. Every model is scored on the paper's reward (the yardstick
    all runs share) and, when this run's ``reward`` section differs, on that too (``train_reward``)."""
    from flax import nnx

    from prove_jax.eval.indomain import evaluate as run_eval
    from prove_jax.eval.indomain import gold_final_states, needs_end_states
    from prove_jax.eval.report import write_report
    from prove_jax.eval.suite import run_benchmarks
    from prove_jax.loaders import load_split
    from prove_jax.serve import EngineChat

    cfg = run.cfg
    out_dir = run.stage_dir("eval")
    names = ["initial", *trained_stages(run)]
    bench = cfg.eval.benchmarks.local()  # those needing an HTTP endpoint (τ²) run from `eval all`
    if cfg.eval.benchmarks.over_http().any:
        print("eval: τ² needs the policy behind an HTTP endpoint; run `python -m prove_jax.eval all --model "
              f"{run.out / 'hf'} --tau2-domains ...` after export (or launch/tau2.sh)", flush=True)
    results: dict[str, Any] = {n: read_json(out_dir / f"{n}.json") for n in names if (out_dir / f"{n}.json").exists()}
    todo = [n for n in names if n not in results]
    reward = cfg.reward
    # the caps replay the gold transcripts through the pool on a loop of their own: derived here, not
    # inside go()'s loop (an eval-only run has no SFT/GRPO stage that derived them first)
    episode = run.episode_config()

    async def go() -> None:
        examples = load_split(run.data_dir, cfg.eval.split, cfg.view, limit=cfg.eval.limit)
        sampler, sync = None, None
        async with run.pool() as pool:
            gold = (await gold_final_states(examples, pool, run.template, run.tokenizer, episode)
                    if needs_end_states(cfg.eval, reward) else None)
            for name in todo:
                model = (run.initial_model() if name == "initial" else
                         load_checkpoint(run.stage_dir(name), mesh=cfg.model.mesh, config=run.model_config()).model)
                if has_adapters(model):  # a LoRA stage: evaluated merged, as it exports and serves
                    model = merge_lora(model)
                params = nnx.split(model)[1]
                if sampler is None:  # the engine the rollouts use: its dtype, per-layer caches, its layout
                    sync = run.eval_sync(model)
                    sampler = run.sampler(model if sync is None else sync.engine_model(params))
                else:
                    sampler.update_params(params if sync is None else sync(params))
                t = time.perf_counter()
                async with run.engine(sampler) as engine:
                    res = await run_eval(engine, pool, examples, run.template, run.tokenizer, episode,
                                         cfg.eval, seed=cfg.seed, gold_states=gold, reward=reward)
                    if bench.any:  # BFCL / T-Eval on the same engine, through the chat interface
                        chat = EngineChat(engine, run.template, run.tokenizer)
                        res["benchmarks"] = await run_benchmarks(chat, name, out_dir / "benchmarks" / name, bench,
                                                                 progress=jax.process_index() == 0)
                res.update(model=name, seconds=round(time.perf_counter() - t, 1), view=cfg.view.describe())
                write_json(out_dir / f"{name}.json", res)
                results[name] = res

    if todo:
        asyncio.run(go())
    results = {n: results[n] for n in names}
    table = {name: _table_row(r) for name, r in results.items()}
    write_json(out_dir / "summary.json", table)
    _plot_eval(table, out_dir / "eval.png", cfg.view.describe())
    if jax.process_index() == 0:  # the same report `python -m prove_jax.eval all` writes
        write_report([{"model": n, "in_domain": r, **r.get("benchmarks", {})} for n, r in results.items()], out_dir,
                     title=f"Evaluation of {cfg.name}")
    return table


def _table_row(r: dict[str, Any]) -> dict[str, Any]:
    """One model's line of ``eval/summary.json`` (the launcher prints it). ``tool_reward`` is the
    paper's yardstick; ``tool_train_reward`` (the run's own reward) is there only when the run
    trained on another reward (the no-call reward is the abstention term under every config)."""
    tool, none = r["tool"], r["no_call"]
    row = {"tool_reward": tool.get("reward"), "tool_reward_se": tool.get("reward_se"), "tool_success": tool.get("success"),
           "parsed_call_fraction": tool.get("parsed_call_fraction"), "calls_per_episode": tool.get("calls_per_episode"),
           "final_state_match": tool.get("final_state_match"), "no_call_reward": none.get("reward"),
           "n_tool": tool.get("n"), "n_no_call": none.get("n")}
    if "train_reward" in tool:
        row["tool_train_reward"] = tool["train_reward"]
    return row


def _plot_eval(table: dict[str, dict[str, Any]], path: Any, view: str) -> None:
    if jax.process_index() != 0 or not table:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = ["tool_reward", "tool_success", "parsed_call_fraction", "no_call_reward"]
    labels = ["tool reward ± 1 SE\n(paper's, tool examples)", "success\n(share of tool examples)",
              "parsed-call fraction\n(turns, tool examples)",
              "no-call reward (abstention:\n1 per example answered\nwith no call; a model\nthat never calls gets 1)"]
    if any("tool_train_reward" in r for r in table.values()):  # a run trained on another reward
        keys.insert(1, "tool_train_reward")
        labels.insert(1, "train reward\n(the run's own, tool examples)")
    names = list(table)
    fig, ax = plt.subplots(figsize=(1.75 * len(keys), 3.4))  # 7 wide for the four default groups
    w = 0.8 / len(names)
    for i, n in enumerate(names):
        ax.bar([k + i * w for k in range(len(keys))], [table[n].get(k) or 0.0 for k in keys], w, label=n)
        if table[n].get("tool_reward_se") is not None:  # the tool reward's standard error
            ax.errorbar(i * w, table[n]["tool_reward"] or 0.0, yerr=table[n]["tool_reward_se"], color="black",
                        capsize=3, linewidth=1)
    ax.set_xticks([k + w * (len(names) - 1) / 2 for k in range(len(keys))], labels, fontsize=8)
    ax.set_title(f"in-domain eval (held-out, greedy; {view})", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---- export -------------------------------------------------------------------------------------
def export(run: Run) -> dict[str, Any]:
    """The last trained stage's final checkpoint (or the initial model when nothing was trained)
    as an HF directory; the checkpoint path is :func:`prove_jax.export.export_checkpoint`'s, the
    same code as ``python -m prove_jax.export``."""
    from prove_jax.export import export_checkpoint, export_model

    cfg = run.cfg
    out = cfg.export.dir or str(run.out / "hf")
    stages = trained_stages(run)
    source = stages[-1] if stages else "initial"
    marker = run.out / "export.json"
    if (done := _done(marker)) is not None and done.get("source") == source and done.get("dir") == out:
        return {"skipped": "exported", **done}
    peft = None
    if stages:
        record = read_record(run.stage_dir(source) / "checkpoints")
        if record is not None and record.lora is not None:  # a LoRA stage: its adapters as PEFT too
            peft = cfg.export.peft_dir or str(run.out / "hf_peft")
        # this launch's mesh: it fits the devices at hand even if the stage trained on others
        export_checkpoint(run.stage_dir(source) / "checkpoints", out, dtype=cfg.export.dtype or None,
                          mesh=cfg.model.mesh, peft_dir=peft)
    else:
        model = run.initial_model()
        export_model(model, run.model_record(model), out, source_dir=run.tokenizer_dir, dtype=cfg.export.dtype or None)
    res = {"dir": out, "source": source, **({"peft_dir": peft} if peft else {})}
    write_json(marker, res)
    return res


STAGE_FNS = {"synth": synth, "tokenizer": tokenizer, "sft": sft, "grpo": grpo, "eval": evaluate, "export": export}
