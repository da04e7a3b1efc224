"""Trainer benchmarks: the SFT train step vs torch, and where a GRPO step's time goes.

    python benchmarks/bench_trainer.py                      # everything (~10 min on 2 cores)
    python benchmarks/bench_trainer.py --quick              # ~2 min smoke (needs an existing SFT run)
    python benchmarks/bench_trainer.py --async              # also the one-step off-policy GRPO speedup
    python benchmarks/bench_trainer.py --run runs/tiny_cpu --skip-update

Figures (``RESULT <name> <value> <unit> goal=<goal>``):

* ``update_tokens_per_s_vs_torch``: tokens/s of one optimizer step of our ``Trainer`` with
  ``SFTObjective`` (micro-batches from ``rl.batch.micro_batches``, then accumulate + clip + AdamW)
  over the same step in torch eager: transformers ``Qwen3ForCausalLM`` loaded from our weights
  (``save_hf`` -> ``from_pretrained``, f32), forward with ``labels=`` (-100 off the loss mask, i.e.
  the same masked token-mean NLL), backward, ``clip_grad_norm_`` (our step clips too) and
  ``torch.optim.AdamW`` (weight decay on matrices only, like ours). Model: the tiny launch model
  of ``configs/runs/tiny_cpu.yaml`` (vocabulary 3,000 padded to 3,008). Both sides process the
  whole batch as one micro-batch; tokens/s counts every position of the batch on both sides.
  torch runs in its own worker process with 2 threads (``bench_models.TorchWorker``'s protocol),
  in blocks alternating with ours after a pause; each side's figure is the minimum over blocks
  of the block's median step time. The headline is the first ``--shapes`` entry (8 x 1024); the
  others get their own ``_<rows>x<len>`` lines. transformers' default ``sdpa`` attention is the
  reference (``--torch-attention sdpa,eager`` times both and takes the faster).
* ``grpo_step_host_share`` and ``grpo_rollout_device_s`` / ``grpo_host_s`` / ``grpo_update_s`` /
  ``grpo_step_s``: medians over GRPO steps (the first, compiling step excluded) of the GRPO
  loop's own metrics rows (``rl/grpo.py``: ``time/rollout_device`` is the engine's busy device
  time, ``time/host`` the rest of the rollout phase plus rewards/advantages/batching,
  ``time/update`` the train step), from a real ``prove_jax.launch`` run of ``stages=[grpo]``
  (stdio MCP servers, the tiny_cpu recipe) in a scratch copy of a run directory that already
  has ``data/``, ``tokenizer/`` and a finished ``sft/``. ``grpo_compiled_programs`` is read from
  that run's ``grpo/summary.json``.
* ``grpo_async_speedup`` (``--async``): median sync step time over median async step time
  (``grpo.async_rollouts=true``: the next batch's rollouts overlap this batch's update), first
  two steps of each excluded.

``--run DIR`` (default ``runs/tiny_cpu``, what ``python -m prove_jax.launch`` writes) must hold a
finished SFT stage. If it does not, a short one (60 SFT steps) is built into ``--base-dir``
(default ``runs/bench_trainer_base``), *not* into DIR: a finished-looking 60-step ``sft/`` in
the default run directory would make the next default launch skip its real SFT.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_models import TorchWorker, result  # noqa: E402  (worker protocol + RESULT format, one definition)

from prove_jax.host_memory import configure_host_allocator  # noqa: E402

TINY_CONFIG = REPO / "configs" / "runs" / "tiny_cpu.yaml"
TINY_VOCAB = 3008  # the tiny tokenizer's 3,000 ids padded to a multiple of 64 (pipeline/context.py)
PAUSE_S = 0.3
GRPO_OVERRIDES = ["grpo.drop_constant_groups=false"]
"""A briefly trained tiny model often earns equal rewards within a group; dropped constant groups
would leave steps with no update to time. Kept, they train on zero advantages at the same cost."""

# --- (a) train step vs torch ---------------------------------------------------------------------

# The torch side, in its own process (see bench_models: neither runtime's thread pool or this
# process's allocator settings then touch the other's timings). Same line protocol as
# bench_models' worker: a JSON hello, then "<impl> <iters>" -> {"times": [...], "faults": [...]}.
_TORCH_TRAIN_WORKER = """
import json, resource, sys
import time
import numpy as np, torch, transformers
path, impls, threads = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
torch.set_num_threads(threads)
spec = json.loads(sys.stdin.readline())
data = np.load(spec["data"])
tokens = torch.from_numpy(data["tokens"].astype(np.int64))
labels = torch.where(torch.from_numpy(data["loss_mask"]), tokens, torch.full_like(tokens, -100))
models, opts = {}, {}
for impl in impls:
    m = transformers.Qwen3ForCausalLM.from_pretrained(path, dtype=torch.float32, attn_implementation=impl).train()
    decay = [p for p in m.parameters() if p.ndim >= 2]
    rest = [p for p in m.parameters() if p.ndim < 2]
    models[impl] = m
    opts[impl] = torch.optim.AdamW([{"params": decay, "weight_decay": spec["weight_decay"]},
                                    {"params": rest, "weight_decay": 0.0}],
                                   lr=spec["lr"], betas=(spec["b1"], spec["b2"]), eps=spec["eps"])
def step(impl):
    m, opt = models[impl], opts[impl]
    opt.zero_grad(set_to_none=True)
    loss = m(input_ids=tokens, labels=labels).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(m.parameters(), spec["clip_norm"])
    opt.step()
    return float(loss.detach())
losses = {impl: step(impl) for impl in impls}
print(json.dumps({"losses": losses, "threads": torch.get_num_threads()}), flush=True)
for line in sys.stdin:
    impl, iters = line.split()
    step(impl)
    times, faults = [], []
    for _ in range(int(iters)):
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t0 = time.perf_counter()
        step(impl)
        times.append(time.perf_counter() - t0)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
    print(json.dumps({"times": times, "faults": faults}), flush=True)
"""


class TorchTrainWorker(TorchWorker):
    """``bench_models.TorchWorker`` (pipe protocol, ``block``, ``close``) running a full AdamW
    train step instead of forward+backward."""

    def __init__(self, model_dir: Path, data: Path, impls: list[str], optim: dict[str, float],
                 threads: int) -> None:
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _TORCH_TRAIN_WORKER, str(model_dir), ",".join(impls), str(threads)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
        )
        hello = self._ask(json.dumps({"data": str(data), **optim}))
        self.losses, self.threads = hello["losses"], hello["threads"]


def _progress(total: int, desc: str) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="block", dynamic_ncols=True, leave=False)


def tiny_model_init(config: Path) -> dict[str, Any]:
    """``model.init`` of a run config (the architecture the launcher initialises)."""
    from prove_jax.config import LaunchConfig, load

    return dict(load(LaunchConfig, config, []).model.init)


def sft_batch(rows: int, seq: int, vocab: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Random ids and an SFT-like loss mask: a prompt (no loss), then alternating assistant spans
    (loss) and tool-result spans (no loss), so about half the positions are targets."""
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, vocab, (rows, seq)).astype(np.int32)
    mask = np.zeros((rows, seq), bool)
    for r in range(rows):
        pos, on = int(rng.integers(seq // 8, seq // 4)), True
        while pos < seq:
            span = int(rng.integers(16, 96))
            mask[r, pos:pos + span] = on
            pos, on = pos + span, not on
    return tokens, mask


def bench_update(workdir: Path, arch: dict[str, Any], rows: int, seq: int, rounds: int, iters: int,
                 impls: list[str], threads: int) -> dict[str, float]:
    """One shape: our trainer step vs the torch worker's, alternating blocks; returns tokens/s."""
    from prove_jax.models import Qwen3Config, init_model, save_hf
    from prove_jax.rl.batch import Row, length_buckets, micro_batches
    from prove_jax.rl.objectives import SFTObjective
    from prove_jax.rl.step import OptimConfig, Trainer

    label = f"{rows}x{seq}"
    cfg = Qwen3Config(vocab_size=TINY_VOCAB, **arch, dtype="float32", param_dtype="float32")
    model = init_model(cfg, seed=0)
    save_hf(model, workdir / "model")  # before the trainer: its first step donates these buffers
    optim = OptimConfig(lr=1e-4, schedule="constant", weight_decay=0.01, clip_norm=1.0)
    trainer = Trainer(model, optim, SFTObjective())
    del model
    tokens, mask = sft_batch(rows, seq, cfg.vocab_size)
    np.savez(workdir / f"batch_{label}.npz", tokens=tokens, loss_mask=mask)
    batch = [Row(tokens[i], mask[i]) for i in range(rows)]
    mbs, plan = micro_batches(batch, rows, length_buckets(seq), fields=("tokens", "loss_mask"))
    assert len(mbs) == 1 and mbs[0]["tokens"].shape == (rows, seq), "the batch must be one unpadded micro-batch"
    den = trainer.denominators(plan.tokens, plan.seqs)
    t0 = time.perf_counter()
    first_loss = trainer.step(mbs, den)["loss"]
    compile_s = time.perf_counter() - t0

    def ours_block(n: int) -> dict[str, list[float]]:
        trainer.step(mbs, den)
        times = []
        for _ in range(n):
            t = time.perf_counter()
            trainer.step(mbs, den)
            times.append(time.perf_counter() - t)
        return {"times": times}

    worker = TorchTrainWorker(workdir / "model", workdir / f"batch_{label}.npz", impls,
                              {"lr": optim.lr, "b1": optim.b1, "b2": optim.b2, "eps": optim.eps,
                               "weight_decay": optim.weight_decay, "clip_norm": optim.clip_norm}, threads)
    sides: dict[str, Callable[[], dict[str, list[float]]]] = {"ours": lambda: ours_block(iters)}
    for impl in impls:
        sides[f"torch {impl}"] = lambda impl=impl: worker.block(impl, iters)
    medians: dict[str, list[float]] = {s: [] for s in sides}
    bar = _progress(rounds * len(sides), f"update {label}")
    try:
        for _ in range(rounds):
            for side, run in sides.items():
                time.sleep(PAUSE_S)  # let the other runtime's spinning worker threads go idle
                medians[side].append(statistics.median(run()["times"]))
                bar.update(1)
    finally:
        bar.close()
        worker.close()
    best = {s: min(m) for s, m in medians.items()}
    ref = min(impls, key=lambda i: best[f"torch {i}"])
    n_tok = rows * seq
    ours_tps, torch_tps = n_tok / best["ours"], n_tok / best[f"torch {ref}"]
    torch_losses = ", ".join(f"{i} {v:.5f}" for i, v in worker.losses.items())
    print(f"update {label}: tiny launch model (Qwen3 {arch}, vocab {cfg.vocab_size}), f32, one micro-batch, "
          f"{int(plan.tokens)} target tokens; min over {rounds} alternating blocks of the block median "
          f"of {iters} steps", flush=True)
    print(f"  first-step loss: ours {first_loss:.5f}, torch {torch_losses} (same weights and mask)")
    print(f"  ours: compile+first step {compile_s:.1f} s, {best['ours'] * 1e3:.0f} ms/step, "
          f"{ours_tps:.0f} tok/s; programs {trainer.compiled_programs()} "
          f"(per-block medians {[round(m * 1e3) for m in medians['ours']]} ms)")
    for impl in impls:
        side = f"torch {impl}"
        print(f"  torch eager + AdamW, attention={impl}, threads={worker.threads}: {best[side] * 1e3:.0f} ms/step, "
              f"{n_tok / best[side]:.0f} tok/s (per-block medians {[round(m * 1e3) for m in medians[side]]} ms)"
              + ("  <- reference" if impl == ref else ""), flush=True)
    return {"ours": ours_tps, "torch": torch_tps, "ratio": ours_tps / torch_tps}


# --- (b) GRPO step split from a real launcher run ------------------------------------------------


def ensure_base(run: Path, base_dir: Path, config: Path, sft_steps: int) -> Path:
    """A run directory with data/, tokenizer/ and a finished sft/: ``run`` if it has one, else a
    short SFT built (or reused) in ``base_dir``."""
    if (run / "sft" / "summary.json").exists():
        return run
    if (base_dir / "sft" / "summary.json").exists():
        print(f"{run} has no finished SFT stage; using the benchmark's own base run {base_dir}", flush=True)
        return base_dir
    print(f"{run} has no finished SFT stage; building one ({sft_steps} SFT steps) in {base_dir} "
          "(a few minutes, once)", flush=True)
    from prove_jax.launch import main

    main(["--config", str(config), "stages=[synth,tokenizer,sft]", f"out_dir={base_dir}",
          f"sft.max_steps={sft_steps}"])
    return base_dir


def run_grpo(base: Path, config: Path, steps: int, async_rollouts: bool, overrides: list[str]
             ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``stages=[grpo]`` through the launcher in a scratch run directory that links ``base``'s
    data and tokenizer and copies its sft/ (the GRPO stage's start) and caps.json."""
    for need in ("data", "tokenizer"):
        if not (base / need).exists():
            raise SystemExit(f"{base / need} is missing: --run must be a launcher output directory")
    with tempfile.TemporaryDirectory(prefix="bench_grpo_") as tmp:
        out = Path(tmp)
        for need in ("data", "tokenizer"):
            (out / need).symlink_to((base / need).resolve())
        shutil.copytree(base / "sft", out / "sft")
        if (base / "caps.json").exists():
            shutil.copy(base / "caps.json", out / "caps.json")
        from prove_jax.launch import main

        argv = ["--config", str(config), "stages=[grpo]", f"out_dir={out}", f"grpo.steps={steps}",
                f"grpo.async_rollouts={'true' if async_rollouts else 'false'}", *GRPO_OVERRIDES, *overrides]
        print(f"GRPO run ({'async' if async_rollouts else 'sync'}): python -m prove_jax.launch "
              f"{' '.join(argv)}", flush=True)
        with contextlib.redirect_stdout(io.StringIO()):  # the launcher's run summary: not needed here
            main(argv)
        rows = [json.loads(line) for line in (out / "grpo" / "metrics.jsonl").read_text().splitlines() if line]
        summary = json.loads((out / "grpo" / "summary.json").read_text())
    return rows, summary


def _median(rows: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(float(r[key]) for r in rows))


def grpo_figures(rows: list[dict[str, Any]], summary: dict[str, Any], skip: int) -> list[tuple[str, float, str, str]]:
    """Print the run's per-step split and return its figures (medians over steps after ``skip``)."""
    kept = rows[skip:]
    if not kept:
        raise SystemExit(f"only {len(rows)} GRPO steps ran: need more than {skip}")
    print(f"  seconds per step ({len(rows)} steps, the first {skip} excluded from the medians):", flush=True)
    for r in rows:
        print(f"  step {r['step']}: step {r['time/step']:.2f}, rollout {r['time/rollout']:.2f} "
              f"(device {r['time/rollout_device']:.2f}), host {r['time/host']:.2f}, update {r['time/update']:.2f}, "
              f"host_share {r['host_share']:.3f}; reward {r.get('reward', float('nan')):.3f}, constant groups "
              f"{r.get('constant_groups', 0):.0f}, calls/episode {r.get('calls_per_episode', 0):.2f}, "
              f"generated/episode {r.get('len/generated', 0):.0f}, update rows {r.get('rows', 0):.0f} "
              f"({r.get('update_tokens', 0):.0f} tokens)", flush=True)
    if all(r.get("calls_per_episode", 0) == 0 for r in rows):
        print("  WARNING: the model made no tool calls, so time/host holds no tool execution and the host "
              "share is a lower bound; --run a fully trained launch output (python -m prove_jax.launch) for "
              "the representative split", flush=True)
    return [("grpo_step_host_share", _median(kept, "host_share"), "frac", "0.20"),
            ("grpo_rollout_device_s", _median(kept, "time/rollout_device"), "s", "none"),
            ("grpo_host_s", _median(kept, "time/host"), "s", "none"),
            ("grpo_update_s", _median(kept, "time/update"), "s", "none"),
            ("grpo_step_s", _median(kept, "time/step"), "s", "none"),
            ("grpo_compiled_programs", float(summary["compiled_programs"]), "programs", "none")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", type=Path, default=REPO / "runs" / "tiny_cpu",
                    help="launcher output with data/, tokenizer/ and a finished sft/")
    ap.add_argument("--base-dir", type=Path, default=REPO / "runs" / "bench_trainer_base",
                    help="where to build a short SFT run when --run has none")
    ap.add_argument("--config", type=Path, default=TINY_CONFIG, help="the run config --run was made with")
    ap.add_argument("--quick", action="store_true", help="~2 min smoke: small shapes, 3 GRPO steps")
    ap.add_argument("--async", dest="async_", action="store_true", help="also time grpo.async_rollouts=true")
    ap.add_argument("--shapes", default=None, help="ROWSxLEN,... for the update figure (default 8x1024,4x2048)")
    ap.add_argument("--torch-attention", default="sdpa", help="transformers attention(s) to time, e.g. sdpa,eager")
    ap.add_argument("--torch-threads", type=int, default=2)
    ap.add_argument("--grpo-steps", type=int, default=None, help="GRPO steps per run (default 6, quick 3)")
    ap.add_argument("--sft-steps", type=int, default=60, help="SFT steps when a base run must be built")
    ap.add_argument("--skip-update", action="store_true")
    ap.add_argument("--skip-grpo", action="store_true")
    ap.add_argument("overrides", nargs="*", help="extra launcher overrides for the GRPO runs, e.g. engine.slots=32")
    args = ap.parse_args()
    shapes_arg = args.shapes or ("8x256,4x512" if args.quick else "8x1024,4x2048")
    shapes = [tuple(int(v) for v in s.split("x")) for s in shapes_arg.split(",") if s]
    rounds, iters = (2, 2) if args.quick else (3, 3)
    grpo_steps = args.grpo_steps or (3 if args.quick else 6)
    if args.async_ and grpo_steps < 3:
        ap.error("--async needs --grpo-steps >= 3 (the first two steps are excluded)")
    print(f"host allocator configured: {configure_host_allocator()}", flush=True)

    figures: list[tuple[str, float, str, str]] = []
    try:
        if not args.skip_update:
            arch = tiny_model_init(args.config)
            impls = [i for i in args.torch_attention.split(",") if i]
            for k, (rows, seq) in enumerate(shapes):
                with tempfile.TemporaryDirectory(prefix="bench_trainer_") as tmp:
                    out = bench_update(Path(tmp), arch, rows, seq, rounds, iters, impls, args.torch_threads)
                suffix = "" if k == 0 else f"_{rows}x{seq}"
                figures += [(f"update_tokens_per_s_vs_torch{suffix}", out["ratio"], "x", "1"),
                            (f"update_tokens_per_s_ours{suffix}", out["ours"], "tok/s", "none"),
                            (f"update_tokens_per_s_torch{suffix}", out["torch"], "tok/s", "none")]
        if not args.skip_grpo:
            base = ensure_base(args.run, args.base_dir, args.config, args.sft_steps)
            rows_sync, summary = run_grpo(base, args.config, grpo_steps, False, args.overrides)
            figures += grpo_figures(rows_sync, summary, skip=1)
            if args.async_:
                rows_async, summary_async = run_grpo(base, args.config, grpo_steps, True, args.overrides)
                grpo_figures(rows_async, summary_async, skip=2)  # printed only: the figures are the sync run's
                sync_s, async_s = _median(rows_sync[2:], "time/step"), _median(rows_async[2:], "time/step")
                print(f"  median step after the first two: sync {sync_s:.2f} s, async {async_s:.2f} s", flush=True)
                figures.append(("grpo_async_speedup", sync_s / async_s, "x", "none"))
    finally:  # whatever was measured, even when a later part failed
        for fig in figures:
            result(*fig)

if __name__ == "__main__":
    main()
