"""Grain loaders: Example records from ``data/``'s ArrayRecord shards, as prompt batches.

``examples(data_dir, split)`` is a random-access ``grain.MapDataset`` of typed Example records
(``data.writer`` writes one JSON object per example; :meth:`prove_jax.records.Example.from_dict`
reads it here, at the boundary, so a malformed record fails naming its id and field).
``prompt_batches(...)`` shuffles it with a fresh order every epoch
(``repeat(reseed_each_epoch=True)``), gives each JAX process a disjoint stride of that global
order, applies the tool view, and batches ``per_process`` examples. The returned
``grain.DatasetIterator`` has ``get_state()/set_state()``; its state goes into every checkpoint, so
a resumed run draws exactly the prompts an uninterrupted one would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import grain
import jax
from grain.sources import ArrayRecordDataSource

from prove_jax.env.view import ToolView, apply_view
from prove_jax.records import Example


def shard_paths(data_dir: str | Path, split: str) -> list[str]:
    paths = sorted(str(p) for p in (Path(data_dir) / "arrayrecord").glob(f"{split}-*.array_record"))
    if not paths:
        raise FileNotFoundError(f"no ArrayRecord shards for split {split!r} under {data_dir}/arrayrecord")
    return paths


class _Decode:
    def __call__(self, record: bytes) -> Example:
        return Example.from_dict(json.loads(record.decode("utf-8")))


class _View:
    def __init__(self, view: ToolView) -> None:
        self.view = view

    def __call__(self, example: Example) -> Example:
        return apply_view(example, self.view)


class _Subset:
    """Random access to the listed indices of a dataset (a Grain source)."""

    def __init__(self, ds: Any, indices: list[int]) -> None:
        self.ds, self.indices = ds, indices

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, i: int) -> Any:
        return self.ds[self.indices[i]]


class AsList:
    """Grain ``batch_fn``: a batch as a plain list (records are dataclasses, not arrays)."""

    def __call__(self, items: Any) -> list[Any]:
        return list(items)


def examples(data_dir: str | Path, split: str, view: ToolView | None = None) -> grain.MapDataset:
    """All examples of ``split`` (decoded, tool view applied), in file order."""
    ds: Any = grain.MapDataset.source(ArrayRecordDataSource(shard_paths(data_dir, split))).map(_Decode())
    if view is not None:
        ds = ds.map(_View(view))
    return ds


def load_split(data_dir: str | Path, split: str, view: ToolView | None = None, limit: int | None = None
               ) -> list[Example]:
    ds = examples(data_dir, split, view)
    n = len(ds) if limit is None else min(limit, len(ds))
    return [ds[i] for i in range(n)]


def prompt_batches(
    data_dir: str | Path,
    split: str,
    per_process: int,
    *,
    seed: int,
    view: ToolView | None = None,
    kinds: tuple[str, ...] | None = None,
    process_index: int | None = None,
    process_count: int | None = None,
) -> grain.DatasetIterator:
    """An endless, checkpointable iterator of ``per_process``-example batches for this process.

    ``kinds`` keeps only examples of those kinds (filtering happens on the decoded records,
    before shuffling, so the order is still a function of ``seed`` alone).
    """
    pi = jax.process_index() if process_index is None else process_index
    pc = jax.process_count() if process_count is None else process_count
    ds: Any = examples(data_dir, split)
    if kinds is not None:
        keep = [i for i in range(len(ds)) if ds[i].kind in kinds]
        if not keep:
            raise ValueError(f"split {split!r} has no examples of kinds {kinds}")
        ds = grain.MapDataset.source(_Subset(ds, keep))
    if len(ds) < pc:
        raise ValueError(f"split {split!r} has {len(ds)} examples for {pc} processes")
    ds = ds.shuffle(seed=seed).repeat(None)[pi::pc]
    if view is not None:
        ds = ds.map(_View(view))
    ds = ds.batch(per_process, batch_fn=AsList())
    return iter(ds.to_iter_dataset())
