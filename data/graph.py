"""Tool dependency graph (paper §3.2 step 1): every ordered tool pair is explicit, implicit or none.

* **explicit** — A's output is an input of B: A produces an entity type that B consumes (declared
  ``produces``/``consumes``, or a parameter of B whose name/description maps to that type), with
  sub-kinds matching by suffix (``list_directory`` produces ``path``; ``read_file`` takes a ``file_path``).
  Across servers, a read-only lookup feeds a prose parameter (``body``, ``content``, ``memo``...) of
  another server's tool: the "email me my balance" pattern (``via: "text"``).
* **implicit** — A establishes a state condition B requires (``start_engine`` -> ``shift_gear``).
* **none** — everything else (the default for any pair not stored).

The default classifier is programmatic (deterministic, offline); an LLM classifier over an
OpenAI-compatible endpoint can replace it (``data.llm``). Graphs are cached on disk per domain, keyed by
a hash of the schemas and the classifier, because an LLM pass over ~1.6k pairs per domain is the
expensive part; a pool of 2–5-tool chains is extracted once and stored with the graph.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from data.catalog import Catalog, ToolInfo, compatible, stable_seed

EXPLICIT, IMPLICIT, NONE = "explicit", "implicit", "none"
CLASSIFIER_VERSION = "programmatic-v1"

CACHE_STATS = {"hits": 0, "misses": 0}
"""Process-wide counters: tests assert that a second build reads the graph from disk."""

PairClassifier = Callable[[list[ToolInfo]], dict[tuple[str, str], dict[str, Any]]]


def default_cache_dir() -> Path:
    return Path(os.environ.get("PROVE_DATA_CACHE", Path.home() / ".cache" / "prove_jax" / "synthesis"))


def consumed_types(tool: ToolInfo) -> list[str]:
    return sorted({*tool.consumes, *tool.param_types.values()})


def classify_pair(a: ToolInfo, b: ToolInfo) -> dict[str, Any] | None:
    """The programmatic rule for one ordered pair; None means "none"."""
    if a.name == b.name:
        return None
    if a.domain != b.domain:
        texts = b.free_text_params()
        if a.read_only and texts:
            return {"relation": EXPLICIT, "types": [], "conditions": [], "via": "text", "params": texts}
        return None
    types = sorted({c for p in a.produces for c in consumed_types(b) if compatible(p, c)})
    conditions = sorted(set(a.establishes) & set(b.requires))
    if types:
        return {"relation": EXPLICIT, "types": types, "conditions": conditions, "via": "entity"}
    if conditions:
        return {"relation": IMPLICIT, "types": [], "conditions": conditions, "via": "state"}
    return None


def programmatic_classifier(tools: list[ToolInfo]) -> dict[tuple[str, str], dict[str, Any]]:
    edges: dict[tuple[str, str], dict[str, Any]] = {}
    for a in tools:
        for b in tools:
            edge = classify_pair(a, b)
            if edge is not None:
                edges[(a.name, b.name)] = edge
    return edges


@dataclass
class DomainGraph:
    """One domain's edges and its chain pool."""

    domain: str
    tools: list[str]
    edges: dict[tuple[str, str], dict[str, Any]]
    chains: list[list[str]] = field(default_factory=list)

    def relation(self, a: str, b: str) -> str:
        edge = self.edges.get((a, b))
        return edge["relation"] if edge else NONE

    def to_json(self) -> dict[str, Any]:
        return {"domain": self.domain, "tools": self.tools,
                "edges": [[a, b, e] for (a, b), e in sorted(self.edges.items())], "chains": self.chains}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DomainGraph:
        return cls(data["domain"], list(data["tools"]), {(a, b): e for a, b, e in data["edges"]},
                   [list(c) for c in data["chains"]])


class DependencyGraph:
    """Per-domain graphs plus the cross-domain (text-flow) edges."""

    def __init__(self, catalog: Catalog, domains: dict[str, DomainGraph],
                 cross: dict[tuple[str, str], dict[str, Any]]) -> None:
        self.catalog = catalog
        self.domains = domains
        self.cross = cross

    def relation(self, a: str, b: str) -> str:
        da, db = self.catalog.domain_of(a), self.catalog.domain_of(b)
        if da == db:
            return self.domains[da].relation(a, b)
        edge = self.cross.get((a, b))
        return edge["relation"] if edge else NONE

    def edge(self, a: str, b: str) -> dict[str, Any] | None:
        da, db = self.catalog.domain_of(a), self.catalog.domain_of(b)
        return self.domains[da].edges.get((a, b)) if da == db else self.cross.get((a, b))

    def pairs(self) -> Iterator[tuple[str, str, str]]:
        """Every ordered pair of user tools with its class (sorted, so output is stable)."""
        names = sorted(self.catalog.tools)
        for a in names:
            for b in names:
                if a != b:
                    yield a, b, self.relation(a, b)

    def counts(self) -> dict[str, int]:
        out = {EXPLICIT: 0, IMPLICIT: 0, NONE: 0}
        for _, _, rel in self.pairs():
            out[rel] += 1
        return out

    def chains(self, domain: str) -> list[list[str]]:
        return self.domains[domain].chains


def _weight(graph: DomainGraph, chain: list[str], cand: str) -> float:
    """How strongly ``cand`` follows the chain so far: explicit edges from the last tool most."""
    best = 0.0
    for i, prev in enumerate(chain):
        rel = graph.relation(prev, cand)
        last = i == len(chain) - 1
        if rel == EXPLICIT:
            best = max(best, 4.0 if last else 2.0)
        elif rel == IMPLICIT:
            best = max(best, 3.0 if last else 1.5)
    return best


def _backward(graph: DomainGraph, chain: list[str], cand: str) -> bool:
    """``cand`` should have run *before* something already in the chain (it feeds or enables it)."""
    for c in chain:
        rel = graph.relation(cand, c)
        if rel == IMPLICIT or (rel == EXPLICIT and graph.relation(c, cand) == NONE):
            return True
    return False


def extract_chains(graph: DomainGraph, catalog: Catalog, n: int, lo: int = 2, hi: int = 5,
                   seed: int = 0) -> list[list[str]]:
    """A pool of ``n`` distinct chains, each tool after the first linked to an earlier one.

    Links are graph edges (explicit from the last tool weigh most) and never point backwards (a tool
    that feeds or enables one already in the chain would have had to run first). When no edge leads
    on, a *sibling* may join — a tool consuming an entity type an earlier tool consumes, i.e. another
    request about the same entity — so that tools no edge reaches (a profile lookup nothing produces
    for) still appear. Starts and extensions are divided by how often a tool is already in the pool,
    so rare tools still get chains.
    """
    rng = random.Random(seed)
    tools = graph.tools
    info = {t: catalog.tools[t] for t in tools}
    usage = dict.fromkeys(tools, 0)
    indeg = {t: sum(1 for a in tools if graph.relation(a, t) != NONE) for t in tools}
    seen: set[tuple[str, ...]] = set()
    pool: list[list[str]] = []
    attempts = 0
    while len(pool) < n and attempts < n * 30:
        attempts += 1
        start = rng.choices(tools, weights=[1.0 / ((1 + usage[t]) * (1 + indeg[t]) ** 0.5) for t in tools])[0]
        length = rng.randint(lo, hi)
        chain = [start]
        while len(chain) < length:
            linked, weights = [], []
            for t in tools:
                if t in chain or _backward(graph, chain, t):
                    continue
                w = _weight(graph, chain, t)
                if w > 0:
                    linked.append(t)
                    weights.append(w / (1 + usage[t]) ** 0.75)
            if not linked and rng.random() < 0.7:
                mine = {x for c in chain for x in consumed_types(info[c])}
                for t in tools:
                    if t not in chain and not _backward(graph, chain, t) and mine & set(consumed_types(info[t])):
                        linked.append(t)
                        weights.append(1.0 / (1 + usage[t]))
            if not linked:
                break
            chain.append(rng.choices(linked, weights=weights)[0])
        key = tuple(chain)
        if len(chain) >= lo and key not in seen:
            seen.add(key)
            pool.append(chain)
            for t in chain:
                usage[t] += 1
    return pool


def load_graph(catalog: Catalog, *, cache_dir: Path | None = None, chains_per_domain: int = 600,
               classifier: PairClassifier | None = None, classifier_id: str | None = None,
               chain_range: tuple[int, int] = (2, 5)) -> DependencyGraph:
    """Build (or read from the disk cache) every domain's graph and chain pool."""
    cache_dir = cache_dir or default_cache_dir()
    cache_dir.mkdir(parents=True, exist_ok=True)
    classify = classifier or programmatic_classifier
    cid = classifier_id or CLASSIFIER_VERSION
    domains: dict[str, DomainGraph] = {}
    for d in catalog.domains:
        key = stable_seed(catalog.schema_hash(d), cid, chains_per_domain, *chain_range)
        path = cache_dir / f"graph-{d}-{key:016x}.json"
        if path.exists():
            domains[d] = DomainGraph.from_json(json.loads(path.read_text()))
            CACHE_STATS["hits"] += 1
            continue
        CACHE_STATS["misses"] += 1
        tools = catalog.user_tools(d)
        g = DomainGraph(d, [t.name for t in tools], classify(tools))
        g.chains = extract_chains(g, catalog, chains_per_domain, *chain_range, seed=key)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(g.to_json(), sort_keys=True))
        tmp.replace(path)  # atomic: concurrent builds never read half a file
        domains[d] = g
    cross: dict[tuple[str, str], dict[str, Any]] = {}
    all_tools = [catalog.tools[n] for n in sorted(catalog.tools)]
    for a in all_tools:
        if not a.read_only:
            continue
        for b in all_tools:
            if a.domain != b.domain:
                edge = classify_pair(a, b)
                if edge is not None:
                    cross[(a.name, b.name)] = edge
    return DependencyGraph(catalog, domains, cross)
