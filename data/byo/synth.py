"""Synthesis over users' own MCP servers: ``ServerSpec`` list in, a dataset directory out, in exactly
the layout ``data.build.build`` writes (Contract-2 ``Example`` records, ``train``/``validation``/
``test`` JSONL + ArrayRecord shards, ``stats.json``, the card).

Method (each step's module says why):

1. **Learn the server** (:func:`data.byo.realise.study`): listing + read-only verdicts, the inferred
   graph (probing), live-state entities, the fixture pool of values the read-only tools return —
   all through the pool's byo backend, the sessions training will use.
2. **Plan slots** per kind, rotating the first tool over the server's tools (coverage) and drawing
   the chain length; a slot's RNG is seeded by (seed, server, slot) alone.
3. **Realise** each slot's chain on a fresh session (:func:`~data.byo.realise.realise`): arguments
   from the live state, earlier outputs, the root or made up; only calls that succeeded are kept.
4. **Build** the kind (:mod:`data.byo.kinds`) — phrasing from names and schemas only
   (:mod:`data.byo.phrasing`).
   A gold value must be one the model will see: a result's values past ``max_result_chars`` are
   never bound (the chain is realised on what is visible), and an example that still copies one
   (:func:`data.clip.clipped_refs`) is dropped (``rejections.clipped_value``; ``stats.clip``).
5. **Replay** every example with gold calls on a fresh session: each call must be visible, fit its
   schema, succeed and return exactly the recorded result; rejects are counted by reason.
6. **Dedup** (``data.validate.jaccard_dedup`` on gold-call sets, slot order), exact per-kind counts
   (more rounds while a kind is short), splits (``data.writer.assign_splits``), the robustness
   knobs and files (``data.writer.write_all``: ``Knobs``, then ``SplitWriter`` through
   ``prove_jax.records.Example``), quality figures (the kit's
   ``data.quality`` measures: description overlap against the *server's* descriptions, param echo),
   the card (``data.card.write_card``); a server whose fixture was empty and was seeded through its
   write tools (:func:`data.byo.sampling.seed_if_empty`) gets its seed calls written beside the
   splits (``byo_seed.json``): the later stages' pools start from the same state.

Slots run concurrently (each on its own session) but results are gathered in slot order, so the
output depends on the seed alone.

The kit's robustness knobs are applied as the kit applies them (``data.writer.Knobs``, exact counts
of the final examples, chosen from the seed): ``enum_strip_rate`` strips ``enum`` from the tool
schemas of that many examples; ``distractor_rate`` inserts ``distractor_range`` tools of the run's
*other* byo servers (never the example's own, never one it hides, never the server an irrelevance
request came from) at random positions. With one server there is nothing to draw from, so no
example gets distractors and the stats and card report the achieved rate (0.0): every tool of the
user's server is already visible, and drawing tools from the kit's catalog instead would teach the
model about servers the user does not have.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from data.byo import kinds
from data.byo.progress import Budget, Progress
from data.byo.realise import FATAL, ServerModel, realise, study
from data.clip import clipped_refs
from data.config import SynthConfig
from data.quality import _calls, _said, _words, echoes_params, runs
from data.validate import jaccard_dedup
from data.writer import Knobs, assign_splits, write_all
from prove_jax.env.byo import ByoBackend, ServerSpec
from prove_jax.env.byo.seeding import SeedCall, write_seed_calls
from prove_jax.env.pool import MCPPool

TAG = {"conversation": "conv", "clarification": "clar", "abstention": "abst", "irrelevance": "irr"}


@dataclass(frozen=True)
class Plan:
    slot: int
    kind: str
    server: int  # index into the models
    first: str
    length: int


@dataclass
class Outcome:
    plan: Plan
    record: dict[str, Any] | None
    reason: str = ""
    results: list[str] = field(default_factory=list)  # each gold call's result, in step order


@dataclass
class ByoBuildResult:
    out: Path
    stats: dict[str, Any]
    timings: dict[str, float] = field(default_factory=dict)
    slots: int = 0


def plan_slots(models: list[ServerModel], start: int, counts: dict[str, int], seed: int, chain_max: int) -> list[Plan]:
    plans = []
    slot = start
    for kind in kinds_order(counts):
        for _ in range(counts[kind]):
            si = slot % len(models)
            m = models[si]
            rng = random.Random(f"plan:{seed}:{m.name}:{slot}")
            names = m.names
            if kind == "clarification":  # a lookup to hide first, every other slot
                readers = [n for n in names if m.read_only(n)] or names
                pick = readers if slot % 2 == 0 else names
                first, length = pick[(slot // len(models)) % len(pick)], rng.randint(2, max(2, chain_max))
            elif kind == "conversation":
                first = names[(slot // len(models)) % len(names)]
                length = rng.choice([1, 2, 2, 3, 3])
                length = min(length, chain_max)
            else:
                first, length = names[(slot // len(models)) % len(names)], 1
            plans.append(Plan(slot, kind, si, first, length))
            slot += 1
    return plans


def kinds_order(counts: dict[str, int]) -> list[str]:
    return [k for k in TAG if counts.get(k, 0) > 0]


async def _one(pool: MCPPool, models: list[ServerModel], plan: Plan, seed: int,
               replays: Counter[str] | None = None) -> Outcome:
    """One slot realised, built and replayed; ``replays`` counts replays (``n``, ``valid``) and
    their seconds (``ms``)."""
    m = models[plan.server]
    rng = random.Random(f"slot:{seed}:{m.name}:{plan.slot}")
    if plan.kind == "irrelevance" and (len(models) == 1 or plan.slot % 2 == 0):
        return Outcome(plan, kinds.irrelevance(m, plan.slot // 2, rng, seed).record)
    src = models[(plan.server + 1) % len(models)] if plan.kind == "irrelevance" else m
    chain = await realise(pool, src, plan.first, plan.length, rng)
    if chain.failed:
        return Outcome(plan, None, "server_failed")
    if not chain.steps:
        return Outcome(plan, None, "no_successful_call")
    if plan.kind == "irrelevance":
        built = kinds.irrelevance(m, 0, rng, seed, (src, chain.steps[0]))
    elif plan.kind == "abstention":
        built = kinds.abstention(m, chain.steps[0], rng, seed)
    elif plan.kind == "clarification":
        built = kinds.clarification(m, chain.steps, rng, seed)
    else:
        built = kinds.conversation(m, chain.steps, rng, seed)
    if built.record is None:
        return Outcome(plan, None, built.reason)
    if clipped_refs(built.record["turns"], built.results, m.max_result_chars, built.record["system"]):
        return Outcome(plan, None, "clipped_value")  # a gold value the model would not see (data.clip)
    t = time.perf_counter()
    reason = await replay(pool, m, built.record, built.results)
    if replays is not None:
        replays.update(n=1, valid=int(not reason), ms=int(1000 * (time.perf_counter() - t)))
    return Outcome(plan, None if reason else built.record, reason, built.results)


_VALIDATORS: dict[str, Draft202012Validator] = {}


def _fits(schema: dict[str, Any], args: Any) -> bool:
    key = json.dumps(schema, sort_keys=True)
    if key not in _VALIDATORS:
        _VALIDATORS[key] = Draft202012Validator({k: v for k, v in schema.items() if k != "$schema"})
    return _VALIDATORS[key].is_valid(args)


async def replay(pool: MCPPool, model: ServerModel, record: dict[str, Any], results: list[str]) -> str:
    """Why the example's gold calls do not reproduce on a fresh session ("" when they do)."""
    calls = [c for _, _, c in sorted(((g["step"], ti, c) for ti, t in enumerate(record["turns"])
                                      for g in t["gold"] for c in g["calls"]), key=lambda x: (x[0], x[1]))]
    if not calls:
        return ""
    visible = {t["function"]["name"]: t["function"]["parameters"] for t in record["tools"]}
    async with pool.episode(record["servers"], seed=record["seed"]) as ep:
        for call, expected in zip(calls, results, strict=True):
            if call["name"] not in visible or not _fits(visible[call["name"]], call["arguments"]):
                return "replay_schema"
            res = await ep.call(call["name"], call["arguments"])
            if res.error_kind in FATAL:
                return "server_failed"
            if res.is_error:
                return "replay_error"
            if res.text != expected:
                return "replay_mismatch"
    return ""


def quality(examples: list[dict[str, Any]], models: list[ServerModel]) -> dict[str, Any]:
    """The kit's figures (``data.quality``) with the user's tool descriptions as the reference."""
    desc = {t.name: t.description for m in models for t in m.listing}
    n = overlap = echo = 0
    grams: Counter[tuple[str, ...]] = Counter()
    turns = 0
    for ex in examples:
        for ti, call in _calls(ex):
            n += 1
            overlap += bool(runs(_said(ex, ti)) & runs(desc.get(call["name"], "")))
            echo += echoes_params(ex, ti, call)
        for t in ex["turns"]:
            turns += 1
            w = _words(t["user"])
            grams.update(tuple(w[i:i + 4]) for i in range(len(w) - 3))

    def rate(a: int, b: int) -> float:
        return round(a / b, 4) if b else 0.0

    return {"gold_calls": n, "description_overlap_rate": rate(overlap, n), "param_echo_rate": rate(echo, n),
            "distinct_4gram_ratio": rate(len(grams), sum(grams.values())), "user_turns": turns}


async def _build(out: Path, specs: list[ServerSpec], seed: int, cfg: SynthConfig, run_dir: Path,
                 concurrency: int, show: bool) -> ByoBuildResult:
    timings: Counter[str] = Counter()
    t0 = time.perf_counter()
    backends = {s.name: ByoBackend(s, run_dir) for s in specs}
    budget = Budget(cfg.byo_max_sessions, cfg.byo_max_seconds, lambda: sum(b.sessions_started for b in backends.values()))
    progress = Progress(budget, show)
    pool = MCPPool(dict(backends), max_concurrent_episodes=concurrency * 2)
    async with pool:
        models = [await study(pool, s, seed=seed, max_result_chars=cfg.max_result_chars, progress=progress)
                  for s in specs]
        timings["study"] = time.perf_counter() - t0
        targets = cfg.targets()
        chain_max = min(cfg.chain_max, 3)
        outcomes: list[Outcome] = []
        keep: list[bool] = []
        slot = 0
        gate = asyncio.Semaphore(concurrency)
        replays: Counter[str] = Counter()

        async def run(p: Plan) -> Outcome:
            async with gate:
                if budget.spent():
                    return Outcome(p, None, "budget")
                o = await _one(pool, models, p, seed, replays)
                phase.tick()
                phase.bar.set_postfix(replayed=replays["n"], valid=replays["valid"], refresh=False)
                return o

        t = time.perf_counter()
        phase = progress.start("byo: realising", None, "slot")
        for round_no in range(6):
            if budget.spent():
                break
            kept = Counter(o.plan.kind for o, k in zip(outcomes, keep, strict=True) if k)
            need = {k: targets[k] - kept[k] for k in targets if targets[k] > kept[k]}
            if not need:
                break
            factor = 1.3 if round_no == 0 else 2.0
            plans = plan_slots(models, slot, {k: math.ceil(v * factor) for k, v in need.items()}, seed, chain_max)
            slot += len(plans)
            phase.bar.total = (phase.bar.total or 0) + len(plans)
            outcomes += await asyncio.gather(*(run(p) for p in plans))
            valid = [i for i, o in enumerate(outcomes) if o.record is not None]
            dup = jaccard_dedup([outcomes[i].record["meta"]["dedup_items"] for i in valid],  # type: ignore[index]
                                cfg.dedup_threshold)
            keep = [False] * len(outcomes)
            for i, d in zip(valid, dup, strict=True):
                keep[i] = d is None
        timings["generate_and_replay"] = time.perf_counter() - t
        realised = sum(o.record is not None or o.reason.startswith("replay") for o in outcomes)
        wall = time.perf_counter() - phase.t0
        progress.end("realising", f"{slot} slots, {realised} examples realised, {sum(keep)} kept after dedup, "
                     f"{budget.sessions()} sessions started in all")
        if show:
            print(f"byo: replay: {replays['n']} examples replayed on fresh sessions, {replays['valid']} valid, "
                  f"{replays['ms'] / 1000:.1f}s of their sessions' time, alongside realising in {wall:.1f}s",
                  file=sys.stderr, flush=True)
    rejections: Counter[str] = Counter()
    taken: Counter[str] = Counter()
    final: list[dict[str, Any]] = []
    for o, k in zip(outcomes, keep, strict=True):
        if o.reason == "budget":
            continue  # never run: counted in stats.budget
        if o.record is None:
            rejections[o.reason] += 1
        elif not k:
            rejections["duplicate_jaccard"] += 1
        elif taken[o.plan.kind] < targets[o.plan.kind]:
            taken[o.plan.kind] += 1
            o.record["id"] = f"byo-{seed}-{TAG[o.plan.kind]}-{o.plan.slot:06d}"
            final.append(o.record)
    t = time.perf_counter()
    write_seed_calls(out, {m.name: [SeedCall(c.tool, c.args) for c in m.state.seeded] for m in models})
    knobs = Knobs(len(final), {m.name: m.openai for m in models}, cfg.distractor_rate, cfg.distractor_range,
                  cfg.enum_strip_rate, seed)
    splits = assign_splits(final, cfg.splits, seed)
    write_all(out, final, splits, knobs, cfg.shard_size)  # tool lists are dropped once written
    stats = compute_stats(final, splits, models, dict(rejections), cfg, seed)
    stats["quality"] = quality(final, models)
    # what the seed decides only (one seed, one dataset); sessions started (warm ones vary) are a timing
    stats["budget"] = {"max_sessions": cfg.byo_max_sessions, "max_seconds": cfg.byo_max_seconds,
                       "spent": budget.hit, "slots_not_run": sum(o.reason == "budget" for o in outcomes)}
    timings["sessions_started"] = budget.sessions()
    if budget.hit:
        print(f"byo: {budget.hit}: wrote the {len(final)} examples made so far", file=sys.stderr, flush=True)
    stats["quality"]["rejection_rate"] = round(sum(rejections.values()) / max(1, len(outcomes)), 4)
    from data.card import write_card

    write_card(stats, out, final, intro=(
        f"Built by `data.byo.synth` with seed {seed}: {len(final)} examples against the user's own MCP servers "
        f"({', '.join(s.name for s in specs)}); every gold call was executed on a live session and replayed on a "
        "fresh one with the same result. " + knob_note(stats, cfg, len(models))))
    timings["write"] = time.perf_counter() - t
    timings["total"] = time.perf_counter() - t0
    return ByoBuildResult(out, stats, dict(timings), slot)


def knob_note(stats: dict[str, Any], cfg: SynthConfig, n_servers: int) -> str:
    """The card's word on the knobs: the achieved rates, and why a single server gets no distractors."""
    r = stats["knob_rates"]
    note = (f"Enum stripping on {r['enum_stripping']:.0%} of examples; distractor tools from the run's other servers "
            f"on {r['distractors']:.0%} (configured {cfg.enum_strip_rate:.0%} and {cfg.distractor_rate:.0%}).")
    if n_servers == 1 and cfg.distractor_rate > 0:
        note += (" With one server there are no distractors: every tool of it is already visible, and tools from "
                 "elsewhere (the kit's servers) would teach the model about servers the user does not have.")
    return note


def compute_stats(examples: list[dict[str, Any]], splits: dict[str, list[int]], models: list[ServerModel],
                  rejections: dict[str, int], cfg: SynthConfig, seed: int) -> dict[str, Any]:
    """The keys ``data.card.compute_stats`` writes (so the card and the launcher read them alike),
    plus what is particular to a user's server: the inferred graph and what learning it cost."""
    from data.card import shape_stats

    n = len(examples)
    kinds_n = Counter(ex["kind"] for ex in examples)
    coverage = {t: 0 for m in models for t in m.names}
    for ex in examples:
        for name in {c["name"] for t in ex["turns"] for g in t["gold"] for c in g["calls"]}:
            coverage[name] = coverage.get(name, 0) + 1

    def rate(k: int) -> float:
        return round(k / n, 4) if n else 0.0

    return {
        **shape_stats(examples, splits, seed, coverage, cfg.min_tool_examples),
        "per_domain": {m.name: dict(sorted(Counter(ex["kind"] for ex in examples if m.name in ex["servers"]).items()))
                       for m in models},
        "multi_server": 0,
        "knob_rates": {"distractors": rate(sum(1 for ex in examples if ex["meta"]["distractors"])),
                       "enum_stripping": rate(sum(1 for ex in examples if ex["meta"]["enum_stripped"])),
                       "irrelevance": rate(kinds_n["irrelevance"]),
                       "missing_function": rate(kinds_n["clarification"] + kinds_n["abstention"]),
                       "parallel_steps": 0.0, "multi_server": 0.0},
        "info_levels": dict(sorted(Counter(ex["meta"].get("info_level", "complete") for ex in examples
                                           if ex["kind"] in ("conversation", "clarification")).items())),
        "designed_failures": {"none": kinds_n["conversation"]},
        "step_outcomes": {"SUCCESS": sum(ex["complexity"]["n_steps"] for ex in examples)},
        "rejections": dict(sorted(rejections.items())),
        "clip": {"max_result_chars": cfg.max_result_chars,
                 "hidden_values": sum(m.hidden_values for m in models),  # past the clip: never bound
                 "dropped_examples": rejections.get("clipped_value", 0)},
        "graph_pairs": {m.name: len(m.graph.pairs(("probe",))) for m in models},
        "byo": {m.name: {"tools": len(m.listing), "read_only": sum(m.read_only(t) for t in m.names),
                         "graph_edges": sorted(f"{a}->{b}" for a, b in m.graph.pairs()),
                         "live_entities": sum(len(v) for v in m.state.entities.values()),
                         "fixture_values": len(m.fixture), "probe_calls": m.probe_calls,
                         "fixture_calls": m.fixture_calls, "seed_calls": len(m.state.seeded)} for m in models},
        "inferred_metadata": {},
        "config": cfg.to_dict(),
    }


def synthesise(out: Path | str, specs: list[ServerSpec], *, seed: int = 0, cfg: SynthConfig,
               run_dir: Path | str, concurrency: int = 4, progress: bool = True) -> ByoBuildResult:
    """Build the dataset for ``specs`` into ``out``; sessions live under ``run_dir``; ``progress``:
    a bar and a closing line per phase on stderr (:mod:`data.byo.progress`)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return asyncio.run(_build(out, list(specs), seed, cfg, Path(run_dir), concurrency, progress))
