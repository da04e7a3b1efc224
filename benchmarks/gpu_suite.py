"""Every GPU figure in one command: train-step MFU, rollout decode vs the HBM roofline, GRPO update time.

    python benchmarks/gpu_suite.py                       # on a GPU: Qwen3-4B shape (one H100 SXM)
    python benchmarks/gpu_suite.py --peak-tflops 989 --hbm-gbps 4800   # H200: same peak, faster HBM
    python benchmarks/gpu_suite.py --shape tiny          # any backend: the same code at the tiny launch
                                                         # model's shape (the CPU default; a smoke test)

Imports only jax/flax/optax/numpy and ``prove_jax.models``, ``prove_jax.engine``,
``prove_jax.rl.step``/``objectives``/``losses`` (none of which imports grain, mcp or tensorboardX),
so it runs on a machine with nothing but the JAX stack. ``prove_jax.rl.batch`` imports grain at
import time: the few lines of right-padding it would do are below (``random_micro_batch``).

Figures (``RESULT <name> <value> <unit> goal=<goal>``):

* ``update_mfu_qwen3_4b_bf16``: model FLOPs utilisation of one optimizer step of ``Trainer`` +
  ``SFTObjective`` (``remat="full"``, ``scan_layers=True``, bf16 compute, f32 master weights,
  AdamW state and gradient accumulator) on a random-init Qwen3-4B-shaped model (hidden 2560,
  MLP 9728, 36 layers, 32 query / 8 KV heads of 128, vocabulary 151,936, tied embeddings,
  qk-norm), ``--micro-batches`` micro-batches of ``--rows`` x ``--seq`` random tokens.
  FLOPs per step = ``6 * N * T + 6 * L * H * D * sum_rows(S**2)``: ``N`` the matmul parameters
  (every parameter except the input embedding table, which is a lookup, unless it is tied and
  so also the head), ``T`` the tokens of the step, and per sequence of length ``S`` the causal
  attention score and value products, ``12 * L * H * D * S**2 / 2`` (forward ``4 L H D S**2``
  for the full square, x3 for forward + backward, halved for the causal mask). Rematerialised
  forward passes are not counted (the usual MFU convention), so ``remat="full"`` caps MFU near
  3/4 of the hardware utilisation. Peak: ``--peak-tflops`` (989 = H100 SXM bf16 dense). Goal 0.40.
* ``grpo_update_s_per_step_qwen3_4b``: seconds the update of one paper-recipe GRPO batch (16
  prompts x 16 samples = ``--grpo-rows`` 256 rows of ``--grpo-tokens`` 6,000 tokens) takes at the
  measured tokens/s. Without the KL reference forward (``kl_coef > 0`` adds one forward pass,
  about +1/3 of the FLOPs; printed as an INFO line).
* ``decode_tokens_per_s_vs_roofline``: steady-state decode tokens/s of the rollout ``Engine``
  (continuous-batching scheduler, ``decode_block`` steps per program, temperature-1 sampling, all
  ``--slots`` rows busy, ``--context``-token prompts) over the HBM roofline
  ``slots * hbm_bytes_per_s / bytes_per_step`` with bytes per step = the params as the engine
  holds them (``engine.weights.decode_config``: the unscanned, per-layer-cache copy in the engine
  dtype, bf16 by default as in the paper recipes; ``--decode-param-dtype float32`` for f32) + the
  whole KV cache (dense decode attention reads every slot of every row). Steady state = the difference of two runs with
  ``--new-short`` and ``--new-long`` new tokens, which cancels prefill and startup. ``--hbm-gbps``
  3350 = H100 SXM.

Memory (one H100, 80 GB): f32 params + Adam moments + gradient accumulator are 4 x 16 GB for
Qwen3-4B, and a step's gradients are one more transient copy; with activations that is about the
whole device. ``XLA_PYTHON_CLIENT_MEM_FRACTION`` defaults to 0.95 here (JAX's own default, 0.75,
leaves too little). If the update runs out of memory the script says so and retries with fewer
layers (``--layers``; MFU per layer barely depends on the depth) and marks the unit accordingly;
on an H200 the full depth fits.

On a CPU (or with ``--shape tiny``) the same code runs at the tiny launch model's shape
(``configs/runs/tiny_cpu.yaml``: hidden 128, MLP 384, 3 layers, 4/2 heads of 32, vocabulary
3,008) in under 3 minutes; every RESULT line then carries ``cpu-smoke-not-a-GPU-figure`` in its
unit and the peak/HBM figures are meaningless.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.95")

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

QWEN3_4B = dict(vocab_size=151936, hidden_size=2560, intermediate_size=9728, num_layers=36, num_heads=32,
                num_kv_heads=8, head_dim=128, rope_theta=1e6, tie_word_embeddings=True)
TINY = dict(vocab_size=3008, hidden_size=128, intermediate_size=384, num_layers=3, num_heads=4, num_kv_heads=2,
            head_dim=32, rope_theta=1e6, tie_word_embeddings=False)


@dataclasses.dataclass(frozen=True)
class Shape:
    """Model and workload sizes of one run of the suite."""

    name: str
    model: dict[str, Any]
    rows: int  # rows per micro-batch
    seq: int  # tokens per row (a length bucket: 6144 holds the typical ~6k-token GRPO transcript)
    micro_batches: int
    steps: int  # timed optimizer steps (after two warm-up steps)
    slots: int  # decode batch
    context: int  # prompt tokens per row before decoding
    new_short: int
    new_long: int
    max_chunk: int


SHAPES = {
    "4b": Shape("4b", QWEN3_4B, rows=2, seq=6144, micro_batches=4, steps=5, slots=64, context=2048,
                new_short=128, new_long=384, max_chunk=512),
    "tiny": Shape("tiny", TINY, rows=2, seq=256, micro_batches=2, steps=3, slots=16, context=128,
                  new_short=16, new_long=64, max_chunk=128),
}


def result(name: str, value: float, unit: str, goal: str) -> None:
    print(f"RESULT {name} {value:.4g} {unit} goal={goal}", flush=True)


def _bar(total: int, desc: str) -> Any:
    """tqdm when installed (it may not be on a bare JAX machine), else a no-op stand-in."""
    try:
        from tqdm import tqdm

        return tqdm(total=total, desc=desc, dynamic_ncols=True, leave=False)
    except ImportError:
        class _NoBar:
            def update(self, n: int = 1) -> None: ...
            def close(self) -> None: ...

        return _NoBar()


def memory_note() -> str:
    import jax

    stats = jax.devices()[0].memory_stats() or {}
    if "peak_bytes_in_use" not in stats:
        return "no device memory stats"
    return (f"device memory peak {stats['peak_bytes_in_use'] / 2**30:.1f} GiB of "
            f"{stats.get('bytes_limit', 0) / 2**30:.1f} GiB")


# --- update MFU -----------------------------------------------------------------------------------


def random_micro_batch(rng: np.random.Generator, rows: int, seq: int, vocab: int) -> dict[str, np.ndarray]:
    """What ``rl.batch.micro_batches`` yields for full-length rows (no padding needed): ids and a
    loss mask on every position after a short prompt."""
    tokens = rng.integers(0, vocab, (rows, seq)).astype(np.int32)
    mask = np.ones((rows, seq), bool)
    mask[:, : min(seq // 8, 256)] = False
    return {"tokens": tokens, "loss_mask": mask}


def matmul_params(state: Any, cfg: Any) -> int:
    """Parameters that enter a matmul per token (see the module docstring)."""
    import jax

    total = sum(int(np.prod(x.shape)) for x in jax.tree.leaves(state))
    return total if cfg.tie_word_embeddings else total - cfg.vocab_size * cfg.hidden_size


def step_flops(n_matmul: int, cfg: Any, rows: int, seq: int) -> float:
    tokens = rows * seq
    attention = 6.0 * cfg.num_layers * cfg.num_heads * cfg.head_dim * rows * seq**2
    return 6.0 * n_matmul * tokens + attention


def bench_update(shape: Shape, layers: int, mode: str = "full") -> dict[str, float]:
    """Optimizer steps over ``shape.micro_batches`` random micro-batches; median seconds per step.
    ``mode`` ``lora`` / ``qlora_nf4``: rank-16 adapters on every projection (over an NF4 base)."""
    from flax import nnx

    from prove_jax.models import Qwen3Config, init_model
    from prove_jax.models.lora import LoraConfig, apply_lora
    from prove_jax.rl.objectives import SFTObjective
    from prove_jax.rl.step import OptimConfig, Trainer

    cfg = Qwen3Config(**{**shape.model, "num_layers": layers}, dtype="bfloat16", param_dtype="float32",
                      remat="full", scan_layers=True, max_position_embeddings=max(32768, shape.seq))
    model = init_model(cfg, seed=0)
    n_matmul = matmul_params(nnx.state(model), cfg)
    if mode != "full":
        model = apply_lora(model, LoraConfig(rank=16, alpha=32.0, quant="nf4" if mode == "qlora_nf4" else None))
    trainer = Trainer(model, OptimConfig(lr=1e-6, schedule="constant"), SFTObjective())
    del model
    rng = np.random.default_rng(0)
    mbs = [random_micro_batch(rng, shape.rows, shape.seq, cfg.vocab_size) for _ in range(shape.micro_batches)]
    targets = sum(float(np.count_nonzero(m["loss_mask"][:, 1:])) for m in mbs)
    den = trainer.denominators(targets, shape.rows * shape.micro_batches)
    bar = _bar(shape.steps + 2, f"update {shape.name}")
    t0 = time.perf_counter()
    trainer.step(mbs, den)  # compiles accumulate + apply
    compile_s = time.perf_counter() - t0
    bar.update(1)
    trainer.step(mbs, den)
    bar.update(1)
    times = []
    for _ in range(shape.steps):
        t = time.perf_counter()
        metrics = trainer.step(mbs, den)
        times.append(time.perf_counter() - t)
        bar.update(1)
    bar.close()
    step_s = statistics.median(times)
    tokens = shape.rows * shape.seq * shape.micro_batches
    flops = shape.micro_batches * step_flops(n_matmul, cfg, shape.rows, shape.seq)
    print(f"INFO update ({mode}): {layers} layers, {n_matmul / 1e9:.3f} B matmul params, {shape.micro_batches} micro-batches "
          f"of {shape.rows} x {shape.seq}, {tokens} tokens/step; first step {compile_s:.1f} s; steps "
          f"{[round(t, 3) for t in times]} s (median {step_s:.3f}); {tokens / step_s:.0f} tok/s, "
          f"{flops / step_s / 1e12:.1f} model TFLOP/s; loss {metrics['loss']:.3f}; {memory_note()}", flush=True)
    del trainer, mbs
    gc.collect()
    return {"step_s": step_s, "tokens_per_s": tokens / step_s, "flops_per_s": flops / step_s,
            "flops_per_token": flops / tokens, "matmul_params": float(n_matmul)}


def _out_of_memory(exc: BaseException) -> bool:
    text = f"{type(exc).__name__}: {exc}"
    return "RESOURCE_EXHAUSTED" in text or "out of memory" in text.lower()


def bench_update_fitting(shape: Shape, layers: int, mode: str = "full") -> tuple[dict[str, float], int]:
    """``bench_update``, retried with fewer layers while the device runs out of memory."""
    while True:
        try:
            return bench_update(shape, layers, mode), layers
        except Exception as exc:  # XlaRuntimeError's type moves between jax versions
            if not _out_of_memory(exc) or layers <= 4:
                raise
            why = str(exc)[:160]
        gc.collect()  # out of the except block: the traceback no longer holds the failed step's arrays
        smaller = max(4, layers * 2 // 3)
        print(f"INFO update with {layers} layers ran out of device memory ({why}...); retrying with "
              f"{smaller} layers", flush=True)
        layers = smaller


# --- decode vs roofline ---------------------------------------------------------------------------


def bench_decode(shape: Shape, param_dtype: str, hbm_gbps: float, rounds: int = 2,
                 attention: str | None = None) -> dict[str, float]:
    """Engine decode tokens/s in steady state (long minus short run) and its roofline fraction."""
    import jax
    from flax import nnx

    from prove_jax.engine import Engine, EngineConfig, Sampler, SamplingConfig
    from prove_jax.engine.weights import WeightSync
    from prove_jax.models import Qwen3Config, init_model

    # attention: None = auto (the blocked cache read), "cudnn" = cuDNN over the whole capacity
    trainer_cfg = Qwen3Config(**shape.model, dtype="bfloat16", param_dtype="float32", scan_layers=True,
                              remat="full", max_position_embeddings=max(32768, shape.context + shape.new_long + 1),
                              attention_impl=attention)
    t0 = time.perf_counter()
    trainer_model = init_model(trainer_cfg, seed=0)
    sync = WeightSync(trainer_cfg, nnx.split(trainer_model)[1], dtype=param_dtype)  # as the GRPO run does
    model = sync.engine_model(nnx.split(trainer_model)[1])
    cfg = sync.config
    del trainer_model
    print(f"INFO decode: trainer init + weight sync {time.perf_counter() - t0:.1f} s", flush=True)
    ecfg = EngineConfig(slots=shape.slots, max_len=shape.context + shape.new_long + 1, min_chunk=shape.max_chunk,
                        max_chunk=shape.max_chunk, prefill_rows=min(4, shape.slots), decode_block=8)
    sampler = Sampler(model, ecfg, stop_ids=(), vocab_limit=cfg.vocab_size)
    del model
    prompts = np.random.default_rng(0).integers(0, cfg.vocab_size, (shape.slots, shape.context)).tolist()

    async def run(new: int) -> tuple[float, int, float]:
        sampling = SamplingConfig(temperature=1.0, max_new_tokens=new)
        engine = Engine(sampler, ecfg, sampling=sampling)
        async with engine:
            t = time.perf_counter()
            gens = await engine.generate(prompts)
            wall = time.perf_counter() - t
        assert all(len(g.ids) == new for g in gens), "every row must decode to max_new_tokens"
        return wall, engine.stats.decode_steps, engine.stats.device_busy_s

    bar = _bar(2 + 2 * rounds, f"decode {shape.name}")
    for new in (shape.new_short, shape.new_long):  # warm-up: compiles prefill, single and block decode
        asyncio.run(run(new))
        bar.update(1)
    short, long_ = [], []
    for _ in range(rounds):
        short.append(asyncio.run(run(shape.new_short)))
        bar.update(1)
        long_.append(asyncio.run(run(shape.new_long)))
        bar.update(1)
    bar.close()
    dt = min(r[0] for r in long_) - min(r[0] for r in short)
    tokens_per_s = shape.slots * (shape.new_long - shape.new_short) / dt
    param_bytes = sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(sampler.params))
    valid = (shape.context + (shape.new_short + shape.new_long) / 2) / ecfg.capacity
    if ecfg.paged:  # a paged decode reads the live KV: the roofline over weights + the rows' tokens
        cfg_m = sampler.model_config
        itemsize = jax.tree.leaves(sampler.cache.kv)[0].dtype.itemsize
        kv_tok = 2 * cfg_m.num_layers * cfg_m.num_kv_heads * cfg_m.head_dim * itemsize
        kv_bytes = int(shape.slots * (shape.context + (shape.new_short + shape.new_long) / 2) * kv_tok)
    else:
        kv_bytes = sampler.cache.kv_bytes
    step_bytes = param_bytes + kv_bytes
    roofline = shape.slots * hbm_gbps * 1e9 / step_bytes
    print(f"INFO decode: {shape.slots} rows x {shape.context}-token prompts, {shape.new_short} vs {shape.new_long} "
          f"new tokens, runs {[round(r[0], 3) for r in short]} vs {[round(r[0], 3) for r in long_]} s "
          f"({long_[-1][1]} decode steps in the long run, device busy {long_[-1][2]:.2f} s); steady "
          f"{tokens_per_s:.0f} tok/s = {dt / (shape.new_long - shape.new_short) * 1e3:.2f} ms/step", flush=True)
    print(f"INFO decode bytes/step: params {param_bytes / 1e9:.2f} GB ({param_dtype}) + KV "
          f"{kv_bytes / 1e9:.2f} GB ({ecfg.kv}: {'the live tokens' if ecfg.paged else 'the whole cache'}; "
          f"capacity {ecfg.capacity}/row, ~{valid:.0%} holding tokens); roofline "
          f"{roofline:.0f} tok/s at {hbm_gbps:.0f} GB/s; {memory_note()}", flush=True)
    gc.collect()
    return {"tokens_per_s": tokens_per_s, "roofline_tokens_per_s": roofline}


def bench_plan_here(config: str | None, gpu: bool, tag: str) -> list[tuple[str, float, str, str]]:
    """The planner's programs (accumulate at the binding bucket and its half, update, decode,
    prefill, weight transfer) compiled for THIS machine's devices: the compiler's per-device
    bytes next to the device's own limit. On one 80 GB GPU the 4B recipe is planned with the
    mesh over one device, which is expected not to fit (f32 master weights + Adam = 48 GB)."""
    try:
        from prove_jax.config import LaunchConfig, load
        from prove_jax.plan.planner import plan_run
        from prove_jax.plan.report import format_report
        from prove_jax.plan.startup import device_memory, local_topology
    except ImportError as e:  # the GPU box may lack grain/mcp: the rest of the suite still runs
        print(f"NOTE: planner skipped ({e})", flush=True)
        return []
    import jax

    path = config or str(REPO / ("configs/runs/qwen3_4b_prove.yaml" if gpu else "configs/runs/tiny_cpu.yaml"))
    cfg = load(LaunchConfig, path, ["model.mesh=fsdp=-1", "grpo.rows_per_micro=1"] if gpu else [])
    hbm = device_memory(jax.devices()[0]) or 8 * 1024**3
    report = plan_run(cfg, local_topology(hbm), hbm_bytes=hbm, progress=lambda m: print("INFO", m, flush=True))
    print(format_report(report), flush=True)
    gib = 1024**3
    peak = report.peak
    out = [(f"plan_here_peak_gib_{cfg.name}", peak.peak / gib, f"GiB{tag}", f"<={report.budget / gib:.1f}")]
    out += [(f"plan_here_{p.name.replace('[', '_').rstrip(']')}_live_gib", p.live / gib, f"GiB{tag}", "info")
            for p in report.programs]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", choices=sorted(SHAPES), default=None,
                    help="4b (default on a GPU) or tiny (default elsewhere: a smoke test)")
    ap.add_argument("--peak-tflops", type=float, default=989.0, help="peak dense bf16 TFLOP/s (H100 SXM 989)")
    ap.add_argument("--hbm-gbps", type=float, default=3350.0, help="peak HBM GB/s (H100 SXM 3350, H200 4800)")
    ap.add_argument("--layers", type=int, default=None, help="decoder layers for the update (default: the model's)")
    ap.add_argument("--rows", type=int, default=None, help="rows per micro-batch")
    ap.add_argument("--seq", type=int, default=None, help="tokens per row (a length bucket)")
    ap.add_argument("--micro-batches", type=int, default=None)
    ap.add_argument("--decode-param-dtype", default="bfloat16",
                    help="the engine's weight dtype (bfloat16 = the paper recipes' engine.dtype)")
    ap.add_argument("--decode-attention", default=None, choices=["cudnn", "xla"],
                    help="the engine's attention_impl (default: auto, the blocked cache read)")
    ap.add_argument("--decode-rounds", type=int, default=2, help="timed short/long decode pairs")
    ap.add_argument("--grpo-rows", type=int, default=256, help="rows of one GRPO batch (16 prompts x 16)")
    ap.add_argument("--grpo-tokens", type=int, default=6000, help="typical tokens per GRPO transcript")
    ap.add_argument("--update-mode", default="full", choices=["full", "lora", "qlora_nf4"],
                    help="full fine-tuning (the MFU figure) or rank-16 LoRA on every projection, over an "
                         "f32 or NF4 base (tokens/s and peak memory; MFU is not defined for it)")
    ap.add_argument("--skip-update", action="store_true")
    ap.add_argument("--skip-decode", action="store_true")
    ap.add_argument("--skip-plan", action="store_true")
    ap.add_argument("--plan-config", default=None,
                    help="run config the planner compiles on this machine's devices (default: the 4B recipe "
                         "on a GPU, the tiny CPU run elsewhere)")
    args = ap.parse_args()

    import jax

    backend = jax.default_backend()
    gpu = backend == "gpu"
    name = args.shape or ("4b" if gpu else "tiny")
    if name == "4b" and not gpu:
        raise SystemExit(f"--shape 4b needs a GPU (jax backend is {backend!r}); use --shape tiny")
    shape = SHAPES[name]
    shape = dataclasses.replace(shape, **{k: v for k, v in (("rows", args.rows), ("seq", args.seq),
                                                            ("micro_batches", args.micro_batches)) if v})
    smoke = not (gpu and name == "4b")
    tag = "-cpu-smoke-not-a-GPU-figure" if not gpu else "-tiny-smoke-not-a-figure" if smoke else ""
    print(f"INFO backend {backend} ({jax.devices()[0].device_kind}), shape {name}"
          + (": a smoke run of the GPU suite's code, NOT GPU figures" if smoke else ""), flush=True)

    figures: list[tuple[str, float, str, str]] = []
    try:
        if not args.skip_update:
            layers = args.layers or shape.model["num_layers"]
            upd, used = bench_update_fitting(shape, layers, args.update_mode)
            layer_tag = "" if used == shape.model["num_layers"] else f"-{used}of{shape.model['num_layers']}layers"
        if not args.skip_update and args.update_mode != "full":
            peak = (jax.devices()[0].memory_stats() or {}).get("peak_bytes_in_use", 0) / 2**30
            figures.append((f"update_tokens_per_s_qwen3_4b_{args.update_mode}", upd["tokens_per_s"],
                            f"tok/s{layer_tag}{tag}", "none"))
            figures.append((f"update_peak_gib_qwen3_4b_{args.update_mode}", peak, f"GiB{layer_tag}{tag}", "none"))
        elif not args.skip_update:
            mfu = upd["flops_per_s"] / (args.peak_tflops * 1e12)
            grpo_tokens = args.grpo_rows * args.grpo_tokens
            update_s = grpo_tokens / upd["tokens_per_s"]
            print(f"INFO GRPO batch {args.grpo_rows} x {args.grpo_tokens} tokens: {update_s:.1f} s at "
                  f"{upd['tokens_per_s']:.0f} tok/s; with the KL reference forward (+2N FLOPs/token) about "
                  f"{update_s * (1 + 2 * upd['matmul_params'] / upd['flops_per_token']):.1f} s", flush=True)
            figures.append(("update_mfu_qwen3_4b_bf16", mfu, f"frac{layer_tag}{tag}", "0.40"))
            figures.append(("update_tokens_per_s_qwen3_4b", upd["tokens_per_s"], f"tok/s{layer_tag}{tag}", "none"))
            figures.append(("grpo_update_s_per_step_qwen3_4b", update_s, f"s{layer_tag}{tag}", "none"))
        if not args.skip_decode:
            dec = bench_decode(shape, args.decode_param_dtype, args.hbm_gbps, args.decode_rounds, args.decode_attention)
            figures.append(("decode_tokens_per_s_vs_roofline", dec["tokens_per_s"] / dec["roofline_tokens_per_s"],
                            f"frac{tag}", "none"))
            figures.append(("decode_tokens_per_s_qwen3_4b", dec["tokens_per_s"], f"tok/s{tag}", "none"))
        if not args.skip_plan:
            figures += bench_plan_here(args.plan_config, gpu, tag)
    finally:  # whatever was measured, even when a later part failed
        if smoke:
            print(f"NOTE: shape {name} on {backend}: these RESULT lines are smoke values of the GPU suite's "
                  "code path, not GPU figures", flush=True)
        for fig in figures:
            result(*fig)


if __name__ == "__main__":
    main()
