"""Slot planning: which kind, chain, world and knobs each example slot gets — cheap and sequential.

Planning runs in the parent process before any work is farmed out, so every random choice that
shapes the dataset's *mix* is made in one deterministic place: exact stratified counts for kinds,
information levels, designed failures and cross-server chains (so the rates hold on a 300-example
build, not only in expectation), and coverage-aware chain choice — a chain is drawn with weight
growing as its tools' planned usage shrinks, so every tool keeps appearing. Workers only realise.
"""

from __future__ import annotations

import random
from collections import Counter

from data import intents
from data.catalog import Catalog, stable_seed
from data.config import SynthConfig
from data.graph import EXPLICIT, DependencyGraph
from data.machine import OUT_OF_SCOPE, SlotPlan

RECOVERIES = (("retry", 0.5), ("alternative", 0.2), ("give_up", 0.3))
LEVELS = ("complete", "missing", "minimal")


def exact(n: int, fractions: list[tuple[str, float]], rng: random.Random) -> list[str]:
    """``n`` labels in exactly the given proportions (largest remainder), shuffled."""
    raw = [(label, f * n) for label, f in fractions]
    counts = {label: int(x) for label, x in raw}
    left = n - sum(counts.values())
    for label, _ in sorted(raw, key=lambda lx: -(lx[1] - int(lx[1])))[:left]:
        counts[label] += 1
    out = [label for label, _ in fractions for _ in range(counts[label])]
    rng.shuffle(out)
    return out


class Planner:
    """Stateful across rounds (usage counts carry over), deterministic for a build seed."""

    def __init__(self, catalog: Catalog, graph: DependencyGraph, cfg: SynthConfig, build_seed: int) -> None:
        self.catalog = catalog
        self.graph = graph
        self.cfg = cfg
        self.rng = random.Random(stable_seed("plan", build_seed))
        self.worlds = sorted({stable_seed("world", build_seed, j) % 100_000 for j in range(cfg.world_pool)})
        self.usage: Counter[str] = Counter()
        self.domains = list(catalog.domains)
        self.weights = [len(catalog.user_tools(d)) for d in self.domains]
        self.clar_pool = {d: [c for c in graph.chains(d) if self._has_lookup(c)] or graph.chains(d)
                          for d in self.domains}

    def _has_lookup(self, chain: list[str]) -> bool:
        """A read-only tool whose output a later tool consumes (hideable for missing-function)."""
        for i, a in enumerate(chain):
            if self.catalog.tools[a].read_only and any(self.graph.relation(a, b) == EXPLICIT for b in chain[i + 1:]):
                return True
        return False

    def _chain(self, domain: str, pool: list[list[str]] | None = None) -> list[str]:
        pool = pool or self.graph.chains(domain)
        sample = [pool[self.rng.randrange(len(pool))] for _ in range(24)]
        weights = [sum(1.0 / (1 + self.usage[t]) for t in c) / len(c) for c in sample]
        weights = [w * w for w in weights]
        return list(self.rng.choices(sample, weights=weights)[0])

    def _domain(self, exclude: set[str] | None = None) -> str:
        options = [(d, w) for d, w in zip(self.domains, self.weights, strict=True) if not exclude or d not in exclude]
        return self.rng.choices([d for d, _ in options], weights=[w for _, w in options])[0]

    def plan(self, start: int, counts: dict[str, int]) -> list[SlotPlan]:
        """Plans for ``sum(counts)`` slots numbered from ``start``."""
        kinds = [k for k in ("conversation", "clarification", "abstention", "irrelevance") for _ in range(counts.get(k, 0))]
        self.rng.shuffle(kinds)
        n_conv = kinds.count("conversation")
        cfg = self.cfg
        levels = iter(exact(n_conv, list(zip(LEVELS, cfg.info_levels, strict=True)), self.rng))
        fail_p = cfg.designed_failure_rate
        fails = iter(exact(n_conv, [(r, fail_p * p) for r, p in RECOVERIES] + [("", 1 - fail_p)], self.rng))
        cross = iter(exact(n_conv, [("x", cfg.cross_domain_rate), ("", 1 - cfg.cross_domain_rate)], self.rng))
        n_irr = kinds.count("irrelevance")
        generic = iter(exact(n_irr, [("g", 0.2), ("", 0.8)], self.rng))
        plans = []
        for i, kind in enumerate(kinds):
            slot = start + i
            seed = self.rng.choice(self.worlds)
            d = self._domain()
            pool = self.clar_pool[d] if kind == "clarification" else None
            chain = self._chain(d, pool)
            alternates = [self._chain(d, pool) for _ in range(3)]
            plan = SlotPlan(slot, kind, chain, alternates, seed)
            if kind == "conversation":
                goals = [g["tools"] for g in intents.load()[1].get(d, []) if set(g["tools"]) <= set(self.catalog.tools)]
                if goals and self.rng.random() < cfg.goal_rate:  # a goal people have, phrased as one request
                    plan.chain = list(goals[self.rng.randrange(len(goals))])
                plan.info_level = next(levels)
                plan.third_turn = self.rng.random() < cfg.third_turn_rate
                plan.failure = next(fails) or None
                if next(cross) and len(self.domains) > 1:
                    plan.chain = self._cross(d)
            elif kind == "irrelevance":
                others = [x for x in self.domains if x != d]
                plan.visible_domains = sorted(self.rng.sample(others, 2 if self.rng.random() < 0.2 and len(others) > 1 else 1))
                if next(generic):
                    plan.generic_query = self.rng.randrange(len(OUT_OF_SCOPE))
            for t in plan.chain:
                self.usage[t] += 1
            plans.append(plan)
        return plans

    def _cross(self, first: str) -> list[str]:
        """Part of a chain on one server, then part of one on another (text may flow across)."""
        second = self._domain({first})
        a_chain, b_chain = self._chain(first), self._chain(second)
        a = self.rng.randint(1, min(3, len(a_chain)))
        b = self.rng.randint(1, max(1, min(self.cfg.chain_max - a, len(b_chain))))
        head = a_chain[:a]
        texts = [t for t in self.catalog.user_tools(second) if t.free_text_params()]
        tail = b_chain[:b]
        if texts and self.rng.random() < 0.5 and self.catalog.tools[head[-1]].read_only:
            tail = [self.rng.choice(texts).name, *[t for t in tail if t not in {x.name for x in texts}]][:b]
        return head + tail
