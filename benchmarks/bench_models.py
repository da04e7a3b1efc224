"""Model benchmarks: train-step throughput vs transformers, and sharded-checkpoint load time / memory.

    python benchmarks/bench_models.py                 # everything (a few minutes on 2 cores)
    python benchmarks/bench_models.py --skip-load     # throughput only
    python benchmarks/bench_models.py make-ckpt DIR   # just write the ~1 GB random checkpoint

Figures (each also printed as ``RESULT <name> <value> <unit> goal=<goal>``):

* ``fwd_bwd_vs_transformers``: forward+backward tokens/s of our jitted model over the same model
  in transformers (torch eager, CPU), same weights, batch, length and dtype (f32). Each side
  computes the mean next-token NLL its own standard way: ours with the trainer's fused head +
  log-softmax (``models/logprobs.py``), transformers with ``labels=`` (its cross-entropy loss).
  transformers runs in a worker process of its own, with its default ``sdpa`` attention and with
  ``eager`` attention; the faster of the two is the reference.  Our plain logits ->
  ``log_softmax`` -> ``take_along_axis`` path is timed and printed as well.
  The goal figure is the §7 fixture at batch 8 x 128 tokens; ``--extra-shapes`` (default 8x129
  and 16x128) and a wider model are printed too, with page faults per step: the process runs
  with ``configure_host_allocator()`` like the launcher (``prove_jax/host_memory.py``).
* ``load_time_vs_transformers``: ``from_pretrained`` seconds over ``load_hf`` seconds for a ~1 GB
  bf16 Qwen3-shaped checkpoint in 200 MB shards (page cache warmed first, each in a fresh process).
* ``load_peak_rss_over_ckpt``: RSS high-water (``VmHWM``) during ``load_hf`` minus the RSS before
  it (jax imported), over the checkpoint size; the absolute high-water is printed too.  (VmHWM,
  not ``ru_maxrss``: the latter survives exec and would report the forking parent's RSS.)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from prove_jax.host_memory import configure_host_allocator  # noqa: E402
from tests.models.models_testlib import COMMON as _FIXTURE  # noqa: E402  (the §7 tiny fixture, one definition)

# Throughput models.  TINY is the Qwen3 fixture of reference/model_architectures.md §7 (the
# project's "tiny model"); WIDER (4 layers of width 128, a 1024-id tiny-BPE vocabulary) is also
# timed and printed, because at that width both sides are matmul-bound and the ratio shrinks.
TINY = dict(**_FIXTURE, head_dim=32, rms_norm_eps=1e-6, rope_theta=1e6, tie_word_embeddings=True)
WIDER = dict(
    vocab_size=1024,
    hidden_size=128,
    intermediate_size=512,
    num_hidden_layers=4,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=32,
    max_position_embeddings=256,
    rms_norm_eps=1e-6,
    rope_theta=1e6,
    tie_word_embeddings=True,
)
BATCH, SEQ, ITERS, ROUNDS = 8, 128, 5, 3

# ~1 GB in bf16: Qwen3 layout, 38 layers of 25 MB + a 65 MB tied embedding.
CKPT = dict(
    vocab_size=32000,
    hidden_size=1024,
    intermediate_size=3072,
    num_layers=38,
    num_heads=16,
    num_kv_heads=8,
    head_dim=64,
    tie_word_embeddings=True,
)
SHARD_BYTES = 200 * 1024**2


def result(name: str, value: float, unit: str, goal: str) -> None:
    print(f"RESULT {name} {value:.3f} {unit} goal={goal}", flush=True)


# --- forward + backward throughput -----------------------------------------------------------


# transformers runs in its own process, driven block by block over a pipe, so neither runtime's
# thread pools nor this process's allocator settings (``configure_host_allocator``) touch the
# other side's timings.
_TORCH_WORKER = """
import json, resource, sys, time
import torch, transformers
path, impls = sys.argv[1], sys.argv[2].split(",")
tokens = torch.tensor(json.loads(sys.stdin.readline()))
models = {}
for impl in impls:
    models[impl] = transformers.AutoModelForCausalLM.from_pretrained(
        path, dtype=torch.float32, attn_implementation=impl).train()
def step(model):
    # transformers' own training path: labels= -> its cross-entropy over the same 127 next-token
    # predictions per row as ours
    model.zero_grad(set_to_none=True)
    loss = model(input_ids=tokens, labels=tokens).loss
    loss.backward()
    return float(loss.detach())
losses = {impl: step(model) for impl, model in models.items()}
print(json.dumps({"losses": losses, "threads": torch.get_num_threads()}), flush=True)
for line in sys.stdin:
    impl, iters = line.split()
    step(models[impl])
    times, faults = [], []
    for _ in range(int(iters)):
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t0 = time.perf_counter()
        step(models[impl])
        times.append(time.perf_counter() - t0)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
    print(json.dumps({"times": times, "faults": faults}), flush=True)
"""
TORCH_ATTENTION = ("sdpa", "eager")
"""transformers' default attention (``sdpa``) and its plain-matmul one; the faster is the reference."""


class TorchWorker:
    """The transformers side of the throughput benchmark, in a subprocess (see ``_TORCH_WORKER``)."""

    def __init__(self, path: Path, tokens: np.ndarray) -> None:
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _TORCH_WORKER, str(path), ",".join(TORCH_ATTENTION)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        hello = self._ask(json.dumps(tokens.tolist()))
        self.losses, self.threads = hello["losses"], hello["threads"]

    def _ask(self, line: str) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        if not reply:
            raise RuntimeError(f"torch worker exited with {self.proc.wait()}")
        return json.loads(reply)

    def block(self, impl: str, iters: int) -> dict:
        return self._ask(f"{impl} {iters}")

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def bench_fwd_bwd(workdir: Path, arch: dict, label: str, batch: int = BATCH, seq: int = SEQ) -> float:
    import jax
    import jax.numpy as jnp
    import torch
    import transformers
    from flax import nnx

    from prove_jax.models import load_hf, sequence_logprobs

    torch.manual_seed(0)
    transformers.Qwen3ForCausalLM(transformers.Qwen3Config(**arch)).save_pretrained(workdir / label)
    model = load_hf(workdir / label, dtype=jnp.float32)

    rng = np.random.default_rng(0)
    tokens = rng.integers(0, arch["vocab_size"], (batch, seq)).astype(np.int64)
    positions = np.broadcast_to(np.arange(seq), (batch, seq)).astype(np.int32)

    def loss_fn(m, tok, pos):
        # the trainer's path: fused head + log-softmax of the target ids (models/logprobs.py)
        return -sequence_logprobs(m, tok, pos).mean()

    def plain_loss_fn(m, tok, pos):  # differentiating full logits -> log_softmax -> gather
        logits = m(tok[:, :-1], pos[:, :-1])[0]
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.take_along_axis(logp, tok[:, 1:, None], axis=-1).mean()

    # A train step jits a pure function of the split state (no per-call NNX graph traversal in
    # Python); the nnx.jit convenience wrapper and the plain-logits loss are timed too.
    graphdef, state = nnx.split(model)

    @jax.jit
    def pure_step(st, tok, pos):
        return jax.value_and_grad(lambda s: loss_fn(nnx.merge(graphdef, s), tok, pos))(st)

    @jax.jit
    def plain_step(st, tok, pos):
        return jax.value_and_grad(lambda s: plain_loss_fn(nnx.merge(graphdef, s), tok, pos))(st)

    nnx_step = nnx.jit(nnx.value_and_grad(loss_fn))
    tok_j, pos_j = jnp.asarray(tokens, jnp.int32), jnp.asarray(positions)
    t0 = time.perf_counter()
    loss_j, _ = jax.block_until_ready(pure_step(state, tok_j, pos_j))
    compile_s = time.perf_counter() - t0
    jax.block_until_ready(nnx_step(model, tok_j, pos_j))
    loss_plain, _ = jax.block_until_ready(plain_step(state, tok_j, pos_j))

    def jax_block(fn) -> dict:
        fn()
        times, faults = [], []
        for _ in range(ITERS):
            f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
            faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
        return {"times": times, "faults": faults}

    worker = TorchWorker(workdir / label, tokens)
    blocks = {
        "jax": lambda: jax_block(lambda: jax.block_until_ready(pure_step(state, tok_j, pos_j))),
        **{f"torch {impl}": (lambda impl=impl: worker.block(impl, ITERS)) for impl in TORCH_ATTENTION},
        "nnx": lambda: jax_block(lambda: jax.block_until_ready(nnx_step(model, tok_j, pos_j))),
        "plain": lambda: jax_block(lambda: jax.block_until_ready(plain_step(state, tok_j, pos_j))),
    }
    times: dict[str, list[float]] = {side: [] for side in blocks}
    faults: dict[str, list[int]] = {side: [] for side in blocks}
    # Blocks of consecutive steps per side, alternating, with a pause before each block: both
    # runtimes' worker threads keep spinning for a while after a step and would slow the other.
    try:
        for _ in range(ROUNDS):
            for side, run_block in blocks.items():
                time.sleep(0.3)
                out = run_block()
                times[side] += out["times"]
                faults[side] += out["faults"]
    finally:
        worker.close()
    best = {side: min(t) for side, t in times.items()}
    torch_side = min(TORCH_ATTENTION, key=lambda impl: best[f"torch {impl}"])
    jax_s, torch_s = best["jax"], best[f"torch {torch_side}"]

    n_tok = batch * (seq - 1)
    print(
        f"fwd+bwd {label}: Qwen3 {arch}, batch={batch} seq={seq} f32, best of {ROUNDS} "
        f"alternating blocks of {ITERS} steps (transformers in its own process)"
    )
    torch_losses = ", ".join(f"{impl} {loss:.6f}" for impl, loss in worker.losses.items())
    print(
        f"  loss jax={float(loss_j):.6f} (plain-logits path {float(loss_plain):.6f}) torch: {torch_losses} "
        "(same weights)"
    )
    print(
        f"  jax: compile {compile_s:.2f} s, {jax_s * 1e3:.1f} ms/step (median "
        f"{np.median(times['jax']) * 1e3:.1f}), {n_tok / jax_s:.0f} tok/s; via nnx.jit "
        f"{best['nnx'] * 1e3:.1f} ms/step; plain-logits loss {best['plain'] * 1e3:.1f} ms/step"
    )
    for impl in TORCH_ATTENTION:
        side = f"torch {impl}"
        print(
            f"  torch eager, attention={impl}: {best[side] * 1e3:.1f} ms/step (median "
            f"{np.median(times[side]) * 1e3:.1f}), {n_tok / best[side]:.0f} tok/s (threads={worker.threads})"
            + ("  <- reference" if impl == torch_side else "")
        )
    temp_mb = pure_step.lower(state, tok_j, pos_j).compile().memory_analysis().temp_size_in_bytes / 1e6
    print(
        f"  page faults per step (median): jax {np.median(faults['jax']):.0f} (XLA temporaries {temp_mb:.1f} MB), "
        f"torch {np.median(faults[f'torch {torch_side}']):.0f}"
    )
    return torch_s / jax_s


# --- ~1 GB random checkpoint -------------------------------------------------------------------


def make_random_checkpoint(path: str | Path, seed: int = 0) -> int:
    """Write a bf16 Qwen3-shaped random checkpoint (~1 GB, 200 MB shards + index); returns bytes.

    Tensors are generated one at a time inside the streaming writer, so this needs ~one tensor
    of memory.  Weights are N(0, 0.02) like a fresh HF init, norms are ones.
    """
    import ml_dtypes

    from prove_jax.models import Qwen3Config
    from prove_jax.models.families import hf_shape, rules_for
    from prove_jax.models.safetensors_io import write_sharded

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    cfg = Qwen3Config(**CKPT)
    rng = np.random.default_rng(seed)
    bf16 = np.dtype(ml_dtypes.bfloat16)
    jax_shapes = {
        "embed_tokens": (cfg.vocab_size, cfg.hidden_size),
        "input_norm.weight": (cfg.hidden_size,),
        "post_norm.weight": (cfg.hidden_size,),
        "final_norm.weight": (cfg.hidden_size,),
        "attn.q_proj": (cfg.num_heads, cfg.head_dim, cfg.hidden_size),
        "attn.k_proj": (cfg.num_kv_heads, cfg.head_dim, cfg.hidden_size),
        "attn.v_proj": (cfg.num_kv_heads, cfg.head_dim, cfg.hidden_size),
        "attn.o_proj": (cfg.hidden_size, cfg.num_heads, cfg.head_dim),
        "attn.q_norm.weight": (cfg.head_dim,),
        "attn.k_norm.weight": (cfg.head_dim,),
        "mlp.gate_proj": (cfg.intermediate_size, cfg.hidden_size),
        "mlp.up_proj": (cfg.intermediate_size, cfg.hidden_size),
        "mlp.down_proj": (cfg.hidden_size, cfg.intermediate_size),
    }

    # Values come from one 16M-entry N(0, 0.02) pool read at random offsets: generating 500M normals
    # would dominate the benchmark's wall time, and the loaders only see bytes.
    pool = (rng.standard_normal(1 << 24, np.float32) * 0.02).astype(bf16)

    def producer(shape: tuple[int, ...], norm: bool):
        def make() -> np.ndarray:
            n = int(np.prod(shape))
            if norm:
                return np.ones(shape, bf16)
            if n > pool.size:
                return np.resize(np.roll(pool, int(rng.integers(pool.size))), n).reshape(shape)
            start = int(rng.integers(0, pool.size - n + 1))
            return pool[start : start + n].reshape(shape)

        return make

    specs = []
    rules = rules_for(cfg)
    ordered = [(r, None) for r in rules if not r.per_layer and r.jax == "embed_tokens"]
    ordered += [(r, i) for i in range(cfg.num_layers) for r in rules if r.per_layer]
    ordered += [(r, None) for r in rules if not r.per_layer and r.jax != "embed_tokens"]
    for rule, layer in ordered:
        short = rule.jax.replace("layers.{i}.", "")
        shape = hf_shape(rule, jax_shapes[short])
        specs.append((rule.hf_key(layer), shape, bf16, producer(shape, "norm" in short)))
    index = write_sharded(path, specs, SHARD_BYTES)
    (path / "config.json").write_text(json.dumps(cfg.to_hf_dict(torch_dtype="bfloat16"), indent=2))
    return int(index["metadata"]["total_size"])


# --- load time / memory (each loader in a fresh process) ----------------------------------------

# One measuring script for both loaders; only the imports and the load line differ.
_LOAD_SCRIPT = """
import json, os, sys, time
sys.path.insert(0, {repo!r})
{imports}
def status(key):
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith(key))
def rss():
    return status("VmRSS:")
before = rss()
t0 = time.perf_counter()
{load}
seconds = time.perf_counter() - t0
peak = status("VmHWM:")
print(json.dumps({{"seconds": seconds, "rss_before": before, "peak": peak, "after": rss()}}))
"""
_LOAD_OURS = dict(
    imports='os.environ["JAX_PLATFORMS"] = "cpu"\nimport jax, jax.numpy as jnp\nfrom flax import nnx\n'
    "from prove_jax.models import load_hf",
    load="model = load_hf({path!r}, dtype=jnp.bfloat16)\njax.block_until_ready(nnx.state(model))",
)
_LOAD_HF = dict(
    imports="import torch, transformers",
    load="model = transformers.AutoModelForCausalLM.from_pretrained({path!r}, dtype=torch.bfloat16)",
)


def _run(loader: dict[str, str], path: Path) -> dict:
    parts = {key: text.format(path=str(path)) for key, text in loader.items()}
    code = _LOAD_SCRIPT.format(repo=str(REPO), **parts)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop("XLA_FLAGS", None)  # one CPU device, as a real single-host load would see
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_load(workdir: Path, repeats: int = 2) -> tuple[float, float]:
    ckpt = workdir / "ckpt_1gb"
    t0 = time.perf_counter()
    size = make_random_checkpoint(ckpt)
    print(
        f"checkpoint: {size / 1e9:.3f} GB bf16 in {len(list(ckpt.glob('*.safetensors')))} shards "
        f"(written in {time.perf_counter() - t0:.1f} s) at {ckpt}"
    )
    for f in ckpt.glob("*.safetensors"):  # warm the page cache so neither loader pays for the disk
        with open(f, "rb") as fh:
            while fh.read(64 * 1024**2):
                pass
    ours, theirs = [], []
    for _ in range(repeats):  # interleaved, best of `repeats`: the 2 shared cores are noisy
        ours.append(_run(_LOAD_OURS, ckpt))
        theirs.append(_run(_LOAD_HF, ckpt))
    best_ours = min(ours, key=lambda r: r["seconds"])
    best_hf = min(theirs, key=lambda r: r["seconds"])
    gb = 1e9
    for label, runs in (("load_hf", ours), ("transformers", theirs)):
        for r in runs:
            print(
                f"  {label}: {r['seconds']:.2f} s, RSS before {r['rss_before'] / gb:.2f} GB, "
                f"peak {r['peak'] / gb:.2f} GB, after {r['after'] / gb:.2f} GB"
            )
    peak_increase = max(r["peak"] - r["rss_before"] for r in ours)
    print(
        f"  load_hf peak RSS increase {peak_increase / gb:.3f} GB = {peak_increase / size:.2f} x checkpoint; "
        f"absolute peak {max(r['peak'] for r in ours) / size:.2f} x checkpoint"
    )
    hf_increase = max(r["peak"] - r["rss_before"] for r in theirs)
    print(
        f"  transformers peak RSS increase {hf_increase / gb:.3f} GB = {hf_increase / size:.2f} x checkpoint"
    )
    return best_hf["seconds"] / best_ours["seconds"], peak_increase / size


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("command", nargs="?", default="all", choices=["all", "make-ckpt"])
    parser.add_argument("dir", nargs="?", help="output directory for make-ckpt")
    parser.add_argument("--skip-load", action="store_true")
    parser.add_argument("--skip-fwd-bwd", action="store_true")
    parser.add_argument(
        "--extra-shapes",
        default="8x129,16x128",
        help="more BATCHxSEQ shapes for the tiny model, printed but not the goal figure ('' for none)",
    )
    args = parser.parse_args()
    extra = [tuple(int(v) for v in shape.split("x")) for shape in args.extra_shapes.split(",") if shape]
    if args.command == "make-ckpt":
        if not args.dir:
            parser.error("make-ckpt needs a directory")
        print(f"wrote {make_random_checkpoint(args.dir) / 1e9:.3f} GB to {args.dir}")
        return
    with tempfile.TemporaryDirectory(prefix="bench_models_") as tmp:
        workdir = Path(tmp)
        fwd_ratio = load_ratio = rss_ratio = None
        if not args.skip_fwd_bwd:
            # what the launcher does: XLA temporaries past glibc's 32 MiB mmap cap stay mapped
            print(f"host allocator configured: {configure_host_allocator()}")
            fwd_ratio = bench_fwd_bwd(workdir, TINY, "tiny")
            others = [(f"tiny {b}x{t}", bench_fwd_bwd(workdir, TINY, "tiny", b, t)) for b, t in extra]
            others.append(("wider model", bench_fwd_bwd(workdir, WIDER, "wider")))
            for name, ratio in others:
                print(f"  ({name}, not the goal figure: {ratio:.2f} x transformers)")
        if not args.skip_load:
            load_ratio, rss_ratio = bench_load(workdir)
    if fwd_ratio is not None:
        result("fwd_bwd_vs_transformers", fwd_ratio, "x", "1.5")
    if load_ratio is not None:
        result("load_time_vs_transformers", load_ratio, "x", "1")
        result("load_peak_rss_over_ckpt", rss_ratio, "x", "1.5")


if __name__ == "__main__":
    main()
