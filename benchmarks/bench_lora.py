"""LoRA vs full fine-tuning: one SFT update step's time and memory at SmolLM2-135M's shape, on CPU.

    python benchmarks/bench_lora.py                    # full, lora, qlora_nf4 (~10 min on 2 cores)
    python benchmarks/bench_lora.py --modes full,lora --steps 2

The shape is SmolLM2-135M's (LlamaForCausalLM: 30 layers, hidden 576, intermediate 1536, 9 heads,
3 KV heads, head_dim 64, vocabulary 49,152, tied embeddings). There is no llama family here, so
it is a ``qwen2`` config with ``qkv_bias`` off: then the decoder is Llama's. Random init, f32
weights and compute, one micro-batch of 1 x 512 tokens, ``SFTObjective``, AdamW. LoRA: rank 16,
alpha 32 on every projection (``all_linear``); QLoRA: the same on an NF4 base (blocks of 64).

Each mode runs in its own process (so peak RSS is that mode's alone): one compiling step, then
``--steps`` timed steps; the figure is their median. Memory figures:

* ``<mode>_train_state_mb``: what the step keeps resident between steps: trained params, the
  AdamW moments and, with LoRA, the frozen base (codes + scales for QLoRA), from the arrays' bytes;
* ``<mode>_step_peak_est_mb``: XLA's account of the step's peak: the resident train state plus
  the f32 accumulator plus the larger scratch (``memory_analysis().temp_size``) of the two
  programs (accumulate, apply). Allocator-independent, unlike the RSS figures below;
* ``<mode>_step_peak_rss_mb``: the process's peak resident set during the timed steps (Linux:
  the peak is reset through ``/proc/self/clear_refs`` after the compiling step). It starts from
  the RSS left after setup and compilation (freed memory malloc keeps), so it overstates the step;
* ``<mode>_peak_rss_mb``: the whole process's peak (``ru_maxrss``), setup and compiles included.

Timings on a shared 2-core machine move by tens of percent between runs: compare modes of one run.

Prints ``RESULT <name> <value> <unit> goal=<goal>``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

SHAPE = dict(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_layers=30, num_heads=9,
             num_kv_heads=3, head_dim=64, rope_theta=100000.0, tie_word_embeddings=True, qkv_bias=False,
             dtype="float32", param_dtype="float32")
TOKENS = 512


def _bytes(tree: object) -> int:
    import jax

    return sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(tree))


def _reset_peak_rss() -> None:
    with open("/proc/self/clear_refs", "w") as f:  # "5": reset the peak RSS (VmHWM)
        f.write("5")


def _peak_rss_mb() -> float:
    with open("/proc/self/status") as f:
        (line,) = [x for x in f if x.startswith("VmHWM:")]
    return int(line.split()[1]) / 1024


def child(mode: str, steps: int) -> dict[str, float]:
    import jax
    import numpy as np

    from prove_jax.models import Qwen2Config, init_model
    from prove_jax.models.lora import LoraConfig, apply_lora
    from prove_jax.rl.objectives import SFTObjective
    from prove_jax.rl.step import OptimConfig, Trainer

    model = init_model(Qwen2Config(**SHAPE), seed=0)
    if mode != "full":
        model = apply_lora(model, LoraConfig(rank=16, alpha=32.0, quant="nf4" if mode == "qlora_nf4" else None))
    trainer = Trainer(model, OptimConfig(lr=1e-4), SFTObjective())
    del model
    rng = np.random.default_rng(0)
    micro = {"tokens": rng.integers(0, SHAPE["vocab_size"], (1, TOKENS)).astype(np.int32),
             "loss_mask": np.ones((1, TOKENS), bool)}
    den = trainer.denominators(TOKENS - 1, 1)
    times = []
    for k in range(steps + 1):
        t = time.perf_counter()
        metrics = trainer.step([micro], den)
        jax.block_until_ready(trainer.params)
        if k:
            times.append(time.perf_counter() - t)
        else:
            _reset_peak_rss()
    step_peak = _peak_rss_mb()
    assert metrics["skipped"] == 0.0
    placed = trainer.place(micro)
    acc = trainer._zeros(trainer.state.params, trainer.metric_names)
    compiled = trainer._accumulate.lower(trainer.static, trainer.state.params, trainer.ref_params, acc, placed,
                                         den).compile()
    temp = compiled.memory_analysis().temp_size_in_bytes
    apply_temp = trainer._apply.lower(trainer.state, acc).compile().memory_analysis().temp_size_in_bytes
    state = _bytes(trainer.state.params) + _bytes(trainer.state.opt_state) + _bytes(trainer.ref_params)
    peak_est = state + _bytes(acc) + max(temp, apply_temp)
    return {"step_s": statistics.median(times), "train_state_mb": state / 2**20,
            "trained_params_m": sum(x.size for x in jax.tree.leaves(trainer.state.params)) / 1e6,
            "step_temp_mb": temp / 2**20, "step_peak_est_mb": peak_est / 2**20, "step_peak_rss_mb": step_peak,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--modes", default="full,lora,qlora_nf4")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--child", default="")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.steps)))
        return
    out: dict[str, dict[str, float]] = {}
    for mode in args.modes.split(","):
        proc = subprocess.run([sys.executable, __file__, "--child", mode, "--steps", str(args.steps)],
                              capture_output=True, text=True, check=True)
        out[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
        r = out[mode]
        print(f"RESULT {mode}_step_s {r['step_s']:.2f} s goal=none")
        print(f"RESULT {mode}_trained_params {r['trained_params_m']:.2f} M goal=none")
        print(f"RESULT {mode}_train_state_mb {r['train_state_mb']:.0f} MB goal=none")
        print(f"RESULT {mode}_step_temp_mb {r['step_temp_mb']:.0f} MB goal=none")
        print(f"RESULT {mode}_step_peak_est_mb {r['step_peak_est_mb']:.0f} MB goal=none")
        print(f"RESULT {mode}_step_peak_rss_mb {r['step_peak_rss_mb']:.0f} MB goal=none")
        print(f"RESULT {mode}_peak_rss_mb {r['peak_rss_mb']:.0f} MB goal=none", flush=True)
    if "full" in out:
        for mode in (m for m in out if m != "full"):
            print(f"RESULT {mode}_step_speedup_vs_full {out['full']['step_s'] / out[mode]['step_s']:.2f} x goal=>1")
            print(f"RESULT {mode}_step_peak_est_vs_full "
                  f"{out[mode]['step_peak_est_mb'] / out['full']['step_peak_est_mb']:.2f} x goal=<1")
            print(f"RESULT {mode}_train_state_vs_full "
                  f"{out[mode]['train_state_mb'] / out['full']['train_state_mb']:.2f} x goal=<0.4")


if __name__ == "__main__":
    main()
