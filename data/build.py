"""``python -m data.build --out DIR --seed S --size tiny|paper``: the whole synthesis pipeline.

Stages: dependency graph (disk-cached) -> slot plans (parent, deterministic) -> realise + render +
validate each slot (worker processes; a slot's result depends only on its plan, so the worker count
never changes the output) -> Jaccard dedup in slot order -> exact per-kind selection (more rounds of
slots while a kind is short) -> knobs, ids, splits -> JSONL + ArrayRecord shards + dataset card.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import resource
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from data.catalog import Catalog, get_catalog
from data.config import SynthConfig, override, preset
from data.graph import CACHE_STATS, DependencyGraph, load_graph
from data.machine import Machine, SlotPlan
from data.plan import Planner
from data.realise import Realiser
from data.sampler import LiveStateSampler
from data.validate import Validator, jaccard_dedup
from data.writer import Knobs, assign_splits, write_all

KIND_TAG = {"conversation": "conv", "clarification": "clar", "abstention": "abst", "irrelevance": "irr"}
_WORKER: dict[str, Any] = {}


@dataclass
class BuildResult:
    out: Path
    stats: dict[str, Any]
    timings: dict[str, float] = field(default_factory=dict)
    slots: int = 0
    graph_cache: dict[str, int] = field(default_factory=dict)
    worker_peak_rss_mb: float = 0.0


def _setup(catalog: Catalog, graph: DependencyGraph, cfg: SynthConfig, worlds: list[int]) -> None:
    """Build the per-process machinery and warm its caches *before* forking, so workers inherit
    discovered contexts and generated worlds instead of recomputing them."""
    sampler = LiveStateSampler(catalog, per_type=cfg.context_per_type, refresh_every=cfg.refresh_every)
    realiser = Realiser(catalog, graph, sampler, cfg)
    machine = Machine(catalog, realiser, cfg)
    if cfg.llm_teacher and cfg.llm.enabled:
        from data.teacher import AgentTeacher

        machine.teacher = AgentTeacher(cfg.llm, catalog)
    validator = Validator(catalog, max_error_rate=cfg.max_replay_error_rate, strict=cfg.strict_replay,
                          sampler=sampler, max_result_chars=cfg.max_result_chars)
    for seed in worlds:
        for d in catalog.domains:
            sampler.full(d, seed)
            validator.snapshot(d, seed)
    _WORKER.update(machine=machine, validator=validator, realiser=realiser)


def _init_worker(cfg: SynthConfig, worlds: list[int], cache_dir: str | None, classifier_id: str | None,
                 domains: tuple[str, ...] | None = None) -> None:
    """Worker start-up when the parent cannot fork safely: rebuild the machinery (graph from cache)."""
    catalog = get_catalog(domains)
    classifier = None
    if classifier_id and cfg.llm.enabled:
        from data.llm import LLMClassifier

        classifier = LLMClassifier(cfg.llm).classify_domain
    graph = load_graph(catalog, cache_dir=Path(cache_dir) if cache_dir else None,
                       chains_per_domain=cfg.chain_pool_per_domain, chain_range=(cfg.chain_min, cfg.chain_max),
                       classifier=classifier, classifier_id=classifier_id)
    _setup(catalog, graph, cfg, worlds)


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def _work(plan: SlotPlan) -> dict[str, Any]:
    machine: Machine = _WORKER["machine"]
    validator: Validator = _WORKER["validator"]
    t0 = time.perf_counter()
    example, reason = machine.generate(plan)
    t1 = time.perf_counter()
    if example is not None:
        reason = validator.check(example, f"s{plan.slot}") or ""
        if reason:
            example = None
        else:
            example["tools"] = None  # rebuilt from the catalog when written: keeps the parent small
    t2 = time.perf_counter()
    return {"slot": plan.slot, "kind": plan.kind, "example": example, "reason": reason,
            "t_generate": t1 - t0, "t_validate": t2 - t1,
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _run_slots(plans: list[SlotPlan], workers: int, progress: bool, desc: str,
               init: tuple[Any, ...], local_setup: Any) -> list[dict[str, Any]]:
    """Results in plan order whatever the worker count. Workers are forked from the warmed-up parent
    (they inherit contexts and worlds) unless native threads (ArrayRecord, BLAS) already run in it —
    forking those is unsafe — in which case they start from a fork server and warm up themselves."""
    from tqdm import tqdm

    tqdm.monitor_interval = 0  # no monitor thread: a threaded parent could not fork its workers
    bar = tqdm(total=len(plans), desc=desc, disable=not progress, unit="ex", file=sys.stderr)
    results: list[dict[str, Any]] = []
    if workers <= 1:
        if not _WORKER:
            local_setup()
        for plan in plans:
            results.append(_work(plan))
            bar.update()
    else:
        if _threads() == 1:
            if not _WORKER:
                local_setup()
            pool = multiprocessing.get_context("fork").Pool(workers)
        else:
            pool = multiprocessing.get_context("forkserver").Pool(workers, initializer=_init_worker, initargs=init)
        with pool:
            for res in pool.imap(_work, plans, chunksize=4):
                results.append(res)
                bar.update()
    bar.close()
    return results


def build(out: Path | str, seed: int = 0, size: str = "tiny", *, workers: int | None = None,
          cache_dir: Path | str | None = None, overrides: list[str] | None = None, progress: bool = True,
          cfg: SynthConfig | None = None, domains: tuple[str, ...] | None = None) -> BuildResult:
    """Run the pipeline over ``domains`` (default: every served domain); returns the card statistics
    and per-stage timings (never written to disk)."""
    timings: Counter[str] = Counter()
    t_start = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cfg = override(cfg or preset(size), overrides or [])
    workers = workers if workers is not None else min(2, os.cpu_count() or 1)
    domains = tuple(domains) if domains is not None else None
    catalog = get_catalog(domains)
    timings["catalog"] = time.perf_counter() - t_start
    t = time.perf_counter()
    hits_before = CACHE_STATS["hits"]
    classifier, cid = None, None
    if cfg.llm_classifier and cfg.llm.enabled:
        from data.llm import LLMClassifier

        clf = LLMClassifier(cfg.llm)
        classifier, cid = clf.classify_domain, clf.classifier_id
    graph = load_graph(catalog, cache_dir=Path(cache_dir) if cache_dir else None,
                       chains_per_domain=cfg.chain_pool_per_domain, chain_range=(cfg.chain_min, cfg.chain_max),
                       classifier=classifier, classifier_id=cid)
    timings["graph"] = time.perf_counter() - t
    t = time.perf_counter()
    planner = Planner(catalog, graph, cfg, seed)
    _WORKER.clear()
    init = (cfg, planner.worlds, str(cache_dir) if cache_dir else None, cid, domains)
    timings["plan_setup"] = time.perf_counter() - t

    targets = cfg.targets()
    results: list[dict[str, Any]] = []
    next_slot = 0
    peak_worker = 0.0
    keep: list[bool] = []
    for round_no in range(8):
        kept_counts = Counter(r["kind"] for r, k in zip(results, keep, strict=True) if k)
        need = {k: targets[k] - kept_counts[k] for k in targets if targets[k] > kept_counts[k]}
        if not need:
            break
        factor = 1 + cfg.overgenerate if round_no == 0 else 1.5
        counts = {k: math.ceil(v * factor) + (1 if round_no else 0) for k, v in need.items()}
        plans = planner.plan(next_slot, counts)
        next_slot += len(plans)
        t = time.perf_counter()
        new = _run_slots(plans, workers, progress, f"synth round {round_no}", init,
                         lambda: _setup(catalog, graph, cfg, planner.worlds))
        timings["generate_and_validate_wall"] += time.perf_counter() - t
        timings["generate_cpu"] += sum(r["t_generate"] for r in new)
        timings["validate_cpu"] += sum(r["t_validate"] for r in new)
        results += new
        peak_worker = max([peak_worker, *(r["rss_mb"] for r in new)])
        t = time.perf_counter()
        valid = [i for i, r in enumerate(results) if r["example"] is not None]
        dup = jaccard_dedup([results[i]["example"]["meta"]["dedup_items"] for i in valid], cfg.dedup_threshold)
        flags = [False] * len(results)
        for i, d in zip(valid, dup, strict=True):
            flags[i] = d is None
        keep = flags
        timings["dedup"] += time.perf_counter() - t

    t = time.perf_counter()
    rejections: Counter[str] = Counter()
    taken: Counter[str] = Counter()
    final: list[dict[str, Any]] = []
    for r, k in zip(results, keep, strict=True):
        if r["example"] is None:
            rejections[r["reason"]] += 1
        elif not k:
            rejections["duplicate_jaccard"] += 1
        elif taken[r["kind"]] < targets[r["kind"]]:
            taken[r["kind"]] += 1
            ex = r["example"]
            ex["id"] = f"prove-{seed}-{KIND_TAG[r['kind']]}-{r['slot']:06d}"
            final.append(ex)
    knobs = Knobs.of_catalog(len(final), catalog, cfg.distractor_rate, cfg.distractor_range, cfg.enum_strip_rate, seed)
    splits = assign_splits(final, cfg.splits, seed)
    write_all(out, final, splits, knobs, cfg.shard_size)
    from data.card import compute_stats, write_card

    stats = compute_stats(final, splits, catalog, graph, dict(rejections), cfg, seed)
    from data.quality import measure

    realiser = _WORKER.get("realiser")
    sampler = realiser.sampler if realiser is not None else LiveStateSampler(catalog)
    stats["quality"] = measure(final, catalog, sampler=sampler)
    stats["quality"]["rejection_rate"] = round(sum(rejections.values()) / max(1, len(final) + sum(rejections.values())), 4)
    write_card(stats, out, final)
    timings["assemble_and_write"] = time.perf_counter() - t
    timings["total"] = time.perf_counter() - t_start
    return BuildResult(out, stats, dict(timings), next_slot,
                       {"hits": CACHE_STATS["hits"] - hits_before, "misses": CACHE_STATS["misses"]}, peak_worker)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m data.build", description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--size", choices=("tiny", "paper"), default="tiny")
    ap.add_argument("--workers", type=int, default=None, help="worker processes (default: min(2, cores))")
    ap.add_argument("--cache-dir", default=None, help="graph cache (default $PROVE_DATA_CACHE or ~/.cache/prove_jax)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a SynthConfig field")
    ap.add_argument("--llm-base-url", default="", help="OpenAI-compatible endpoint (enables --llm-* options)")
    ap.add_argument("--llm-model", default="")
    ap.add_argument("--llm-classifier", action="store_true", help="classify tool pairs with the LLM")
    ap.add_argument("--llm-teacher", action="store_true", help="the LLM writes user turns, makes the calls, writes replies")
    ap.add_argument("--domains", default="", help="comma-separated domains (default: all twenty)")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    sets = list(args.set)
    if args.llm_base_url:
        sets += [f"llm.base_url={args.llm_base_url}", f"llm.model={args.llm_model}",
                 f"llm_classifier={str(args.llm_classifier).lower()}", f"llm_teacher={str(args.llm_teacher).lower()}"]
    res = build(args.out, args.seed, args.size, workers=args.workers, cache_dir=args.cache_dir, overrides=sets,
                progress=not args.no_progress, domains=tuple(args.domains.split(",")) if args.domains else None)
    s = res.stats
    print(f"wrote {s['total']} examples to {res.out} ({', '.join(f'{k} {v}' for k, v in s['splits'].items())}); "
          f"{res.slots} slots, {res.timings['total']:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
