"""Final assembly: robustness knobs, ids, splits, and the files (JSONL + Grain-readable ArrayRecord).

Knobs that only change what the model *sees* (distractor tools, enum stripping) are applied here,
after validation and dedup, to exact counts of the final examples — so the card's rates are the
configured ones to the example, not in expectation. Distractors come from servers the example does
not use (and, for refusals, not from the server that *could* have answered), so they never make a
refusal answerable. Everything iterates lists in a fixed order; serialisation never depends on
hash order or the clock, so one seed gives byte-identical files. Every record is written through
the typed :class:`prove_jax.records.Example` (the one definition of Contract 2 that training and
eval read back): a record missing a field fails the build here, naming its id and the field, and
the bytes are those of the dict (its round trip is exact).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from data.catalog import Catalog, stable_seed
from prove_jax.records import Example

SPLITS = ("train", "validation", "test")


def chosen(n: int, rate: float, rng: random.Random) -> set[int]:
    """Exactly ``round(rate * n)`` indices out of ``n``."""
    return set(rng.sample(range(n), round(rate * n)))


def strip_enums(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: strip_enums(v) for k, v in schema.items() if k != "enum"}
    if isinstance(schema, list):
        return [strip_enums(v) for v in schema]
    return schema


def visible_tools(catalog: Catalog, servers: list[str], hidden: list[str]) -> list[dict[str, Any]]:
    """The servers' user-visible tools in catalog order, minus hidden ones (missing-function kinds)."""
    gone = set(hidden)
    return [t.openai() for d in servers for t in catalog.user_tools(d) if t.name not in gone]


class Knobs:
    """Distractors and enum stripping for exact counts of the final examples, decided up front and
    applied while streaming each record out (records never hold their tool lists in memory).

    ``tools`` is every server's user-visible tools (OpenAI format, listing order) by server: the
    kit's catalog (:meth:`of_catalog`) or a user's own byo servers (``data.byo.synth``), so both
    builds share one rule. An example sees its servers' tools minus its hidden ones; distractors
    come from the other servers, never a name the example hides or already shows (the pool refuses
    one name on two servers, so this only guards a pool built by hand). An example chosen for
    distractors whose pool is empty (a single-server byo config) gets none: ``meta["distractors"]``
    stays ``[]`` and the achieved rate, not the configured one, is what the stats report."""

    def __init__(self, n: int, tools: Mapping[str, Sequence[dict[str, Any]]], distractor_rate: float,
                 distractor_range: tuple[int, int], enum_rate: float, seed: int) -> None:
        self.tools = tools
        self.owner = {t["function"]["name"]: d for d, ts in tools.items() for t in ts}
        self.schema = {t["function"]["name"]: t for ts in tools.values() for t in ts}
        self.rng = random.Random(stable_seed("knobs", seed))
        self.with_distractors = chosen(n, distractor_rate, self.rng)
        self.stripped = chosen(n, enum_rate, self.rng)
        self.range = distractor_range
        self.all_tools = sorted(self.owner)

    @classmethod
    def of_catalog(cls, n: int, catalog: Catalog, distractor_rate: float, distractor_range: tuple[int, int],
                   enum_rate: float, seed: int) -> Knobs:
        """The kit's knobs: the catalog's servers and their tools (what :func:`visible_tools` shows)."""
        return cls(n, {d: visible_tools(catalog, [d], []) for d in catalog.domains}, distractor_rate,
                   distractor_range, enum_rate, seed)

    def apply(self, i: int, ex: dict[str, Any]) -> None:
        """Fill ``ex["tools"]`` (what the model sees) and record the knobs in ``meta``."""
        meta = ex["meta"]
        gone = set(meta.get("hidden", []))
        tools = [t for d in ex["servers"] for t in self.tools[d] if t["function"]["name"] not in gone]
        meta["distractors"] = []
        if i in self.with_distractors:
            banned = set(ex["servers"]) | set(meta.get("source_domains", []))
            shown = gone | {t["function"]["name"] for t in tools}
            pool = [t for t in self.all_tools if self.owner[t] not in banned and t not in shown]
            picks = self.rng.sample(pool, min(len(pool), self.rng.randint(*self.range)))
            for name in picks:
                tools.insert(self.rng.randrange(len(tools) + 1), self.schema[name])
            meta["distractors"] = picks
        meta["enum_stripped"] = i in self.stripped
        if meta["enum_stripped"]:
            tools = [{**t, "function": {**t["function"], "parameters": strip_enums(t["function"]["parameters"])}}
                     for t in tools]
        ex["tools"] = tools


def assign_splits(examples: list[dict[str, Any]], ratios: tuple[float, float, float], seed: int) -> dict[str, list[int]]:
    """Per kind, shuffled, cut by the ratios (validation/test at least one example when possible)."""
    rng = random.Random(stable_seed("splits", seed))
    out: dict[str, list[int]] = {s: [] for s in SPLITS}
    kinds = sorted({ex["kind"] for ex in examples})
    for kind in kinds:
        idx = [i for i, ex in enumerate(examples) if ex["kind"] == kind]
        rng.shuffle(idx)
        n_test = max(1 if len(idx) >= 3 else 0, round(ratios[2] * len(idx)))
        n_val = max(1 if len(idx) >= 3 else 0, round(ratios[1] * len(idx)))
        out["test"] += idx[:n_test]
        out["validation"] += idx[n_test:n_test + n_val]
        out["train"] += idx[n_test + n_val:]
    return {s: sorted(v) for s, v in out.items()}


def dumps(ex: dict[str, Any]) -> str:
    return json.dumps(ex, ensure_ascii=False, separators=(",", ":"))


class SplitWriter:
    """``{split}.jsonl`` plus ``arrayrecord/{split}-XXXXX-of-YYYYY.array_record`` shards, streamed."""

    def __init__(self, out: Path, split: str, n: int, shard_size: int) -> None:
        self.dir = out / "arrayrecord"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.split = split
        self.shard_size = shard_size
        self.n_shards = max(1, math.ceil(n / shard_size))
        self.jsonl = (out / f"{split}.jsonl").open("w", encoding="utf-8")
        self.count = 0
        self.writer: Any = None

    def write(self, line: str) -> None:
        from array_record.python.array_record_module import ArrayRecordWriter

        if self.count % self.shard_size == 0:
            self._close_shard()
            k = self.count // self.shard_size
            name = f"{self.split}-{k:05d}-of-{self.n_shards:05d}.array_record"
            self.writer = ArrayRecordWriter(str(self.dir / name), "group_size:1")
        self.jsonl.write(line + "\n")
        self.writer.write(line.encode("utf-8"))
        self.count += 1

    def _close_shard(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def close(self) -> None:
        if self.count == 0:  # an empty split still gets its (empty) shard
            self.write_empty()
        self._close_shard()
        self.jsonl.close()

    def write_empty(self) -> None:
        from array_record.python.array_record_module import ArrayRecordWriter

        ArrayRecordWriter(str(self.dir / f"{self.split}-00000-of-00001.array_record"), "group_size:1").close()


def write_all(out: Path, examples: list[dict[str, Any]], splits: dict[str, list[int]], knobs: Knobs,
              shard_size: int) -> None:
    """One pass in example order: knobs, serialise, append to the example's split; the tool list is
    dropped again right after, so peak memory holds one record's tools at a time."""
    split_of = {i: s for s, idx in splits.items() for i in idx}
    writers = {s: SplitWriter(out, s, len(splits[s]), shard_size) for s in SPLITS}
    try:
        for i, ex in enumerate(examples):
            knobs.apply(i, ex)
            writers[split_of[i]].write(dumps(Example.from_dict(ex).to_dict()))
            ex["tools"] = None
    finally:
        for w in writers.values():
            w.close()


def shard_paths(out: Path, split: str) -> list[str]:
    """The ArrayRecord shards of a split, in order (for ``grain.sources.ArrayRecordDataSource``)."""
    return [str(p) for p in sorted((out / "arrayrecord").glob(f"{split}-*.array_record"))]
