"""Training rows -> bucketed micro-batches, through Grain.

A *row* is one transcript: ``tokens`` (the exact ids of the rollout or gold replay),
``loss_mask`` (model-generated tokens), ``sample_logprobs`` and an ``advantage`` (GRPO), as
numpy. The step's rows are sorted by length (longest first) and cut into micro-batches of
``rows_per_micro`` rows; each micro-batch is right-padded to the smallest *length bucket* that
holds its longest row, and a short last micro-batch is filled with empty rows (all-zero mask).
So a whole run compiles at most one accumulate program per bucket, whatever the transcript
lengths, and sorting keeps padding low. Buckets are powers of two and their midpoints
(128, 192, 256, 384, ...): padding waste at most a third of a row.

Grain does the batching and padding (``MapDataset.source -> batch -> map_with_index``), the same
pipeline kind as the prompt loader. On several JAX processes every process batches its own rows;
the micro-batch count and each micro-batch's bucket are agreed first (a max over processes of
tiny host vectors), so all processes run the same programs on their shards.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import grain
import jax
import numpy as np

FIELDS = ("tokens", "loss_mask", "sample_logprobs", "advantages")


@dataclasses.dataclass
class Row:
    tokens: np.ndarray  # int32 [T]
    loss_mask: np.ndarray  # bool [T]
    sample_logprobs: np.ndarray | None = None  # float32 [T]
    advantage: float = 0.0
    old_logprobs: np.ndarray | None = None  # float32 [T]: pi_old recomputed by the trainer (rl.ppo)

    def __len__(self) -> int:
        return int(self.tokens.shape[0])

    @property
    def target_tokens(self) -> int:
        """Tokens this row trains on (position 0 is never a target)."""
        return int(np.count_nonzero(self.loss_mask[1:]))


def trim_row(row: Row, max_len: int) -> Row | None:
    """``row`` if it holds at most ``max_len`` tokens; else its prefix ending right after the last
    assistant turn that fits whole; ``None`` when not even the first one does.

    A turn is a run of ``loss_mask`` (every turn starts after an unmasked generation prompt, so
    runs never merge). Cutting at a turn's end, never inside one, keeps every kept turn exactly
    as sampled with its full context; the row keeps its advantage (the turns it still holds
    were part of the scored episode). Nothing after the cut carries loss, so only
    the overflowing turns' gradient is lost, instead of the whole step crashing in
    :func:`bucket_of`.
    """
    if len(row) <= max_len:
        return row
    m = np.asarray(row.loss_mask, bool)
    ends = np.flatnonzero(m[:max_len] & ~m[1:max_len + 1])  # run ends at i, i < max_len
    if ends.size == 0:
        return None
    cut = int(ends[-1]) + 1
    slp = None if row.sample_logprobs is None else row.sample_logprobs[:cut]
    old = None if row.old_logprobs is None else row.old_logprobs[:cut]
    return Row(row.tokens[:cut], row.loss_mask[:cut], slp, row.advantage, old)


TOP_BUCKET_MULTIPLE = 512
"""The largest bucket is ``max_len`` rounded up to this (the fused attention's largest tile), not the
next geometric size: at the paper's 28,768-token cap the geometric step pads to 32,768, and that
14 % of extra activations is what took the 8B accumulate past a v5p chip's budget."""


def length_buckets(max_len: int, min_len: int = 128) -> tuple[int, ...]:
    """``min_len * 2**k`` and ``1.5 * min_len * 2**k`` below ``max_len``, then one that holds it:
    the next of those sizes, or ``max_len`` rounded up to ``TOP_BUCKET_MULTIPLE`` when smaller."""
    if max_len < 1 or min_len < 2:
        raise ValueError(f"need max_len >= 1 and min_len >= 2, got {max_len}, {min_len}")
    out, b = [], min_len
    while True:
        for size in (b, b * 3 // 2):
            if size >= max_len:
                top = -(-max_len // TOP_BUCKET_MULTIPLE) * TOP_BUCKET_MULTIPLE
                out.append(top if (not out or top > out[-1]) and top < size else size)
                return tuple(out)
            out.append(size)
        b *= 2


def bucket_of(n: int, buckets: Sequence[int]) -> int:
    for b in buckets:
        if b >= n:
            return b
    raise ValueError(f"a row of {n} tokens exceeds the largest bucket {buckets[-1]}")


def _process_max(values: np.ndarray) -> np.ndarray:
    if jax.process_count() == 1:
        return values
    from jax.experimental import multihost_utils

    return np.asarray(multihost_utils.process_allgather(values)).max(axis=0)


def _process_sum(values: np.ndarray) -> np.ndarray:
    if jax.process_count() == 1:
        return values
    from jax.experimental import multihost_utils

    return np.asarray(multihost_utils.process_allgather(values)).sum(axis=0)


@dataclasses.dataclass(frozen=True)
class Plan:
    """Local rows in micro-batch order and each micro-batch's (globally agreed) length."""

    order: tuple[int, ...]
    lengths: tuple[int, ...]
    rows_per_micro: int
    tokens: float  # global target tokens of the step
    seqs: float  # global rows with at least one target token


def plan(rows: Sequence[Row], rows_per_micro: int, buckets: Sequence[int]) -> Plan:
    if rows_per_micro < 1:
        raise ValueError(f"rows_per_micro must be >= 1, got {rows_per_micro}")
    order = sorted(range(len(rows)), key=lambda i: (-len(rows[i]), i))
    n_micro = -(-len(rows) // rows_per_micro)
    local = np.zeros((max(1, n_micro),), np.int64)
    for k in range(n_micro):
        local[k] = bucket_of(max(len(rows[i]) for i in order[k * rows_per_micro:(k + 1) * rows_per_micro]), buckets)
    n_global = int(_process_max(np.array([n_micro]))[0])
    padded = np.zeros((n_global,), np.int64)
    padded[:n_micro] = local[:n_micro]
    lengths = _process_max(padded)
    lengths = np.where(lengths == 0, buckets[0], lengths)
    counts = _process_sum(np.array([sum(r.target_tokens for r in rows),
                                    sum(1 for r in rows if r.target_tokens > 0)], np.float64))
    return Plan(tuple(order), tuple(int(x) for x in lengths), rows_per_micro, float(counts[0]), float(counts[1]))


class _Stack:
    """Grain ``batch_fn``: rows of one micro-batch -> a ragged list kept as is (padded next)."""

    def __call__(self, rows: Sequence[Row]) -> list[Row]:
        return list(rows)


class _Pad:
    """Grain ``map_with_index``: pad micro-batch ``i`` to ``plan.lengths[i]`` x ``rows_per_micro``."""

    def __init__(self, p: Plan, fields: Sequence[str]) -> None:
        self.plan, self.fields = p, tuple(fields)

    def __call__(self, index: int, rows: list[Row]) -> dict[str, np.ndarray]:
        n, length = self.plan.rows_per_micro, self.plan.lengths[index]
        out: dict[str, np.ndarray] = {"tokens": np.zeros((n, length), np.int32),
                                      "loss_mask": np.zeros((n, length), bool)}
        for name in ("sample_logprobs", "old_logprobs"):
            if name in self.fields:
                out[name] = np.zeros((n, length), np.float32)
        if "advantages" in self.fields:
            out["advantages"] = np.zeros((n,), np.float32)
        for j, r in enumerate(rows):
            t = len(r)
            out["tokens"][j, :t] = r.tokens
            out["loss_mask"][j, :t] = r.loss_mask
            if "sample_logprobs" in out and r.sample_logprobs is not None:
                out["sample_logprobs"][j, :t] = r.sample_logprobs
            if "old_logprobs" in out and r.old_logprobs is not None:
                out["old_logprobs"][j, :t] = r.old_logprobs
            if "advantages" in out:
                out["advantages"][j] = r.advantage
        return out


def micro_batches(rows: Sequence[Row], rows_per_micro: int, buckets: Sequence[int],
                  fields: Sequence[str] = FIELDS) -> tuple[list[dict[str, np.ndarray]], Plan]:
    """This process's rows as padded host micro-batches (and the plan with the step's counts).

    A process with fewer micro-batches than another gets all-padding ones, so every process
    runs the same number of programs.
    """
    p = plan(rows, rows_per_micro, buckets)
    ordered = [rows[i] for i in p.order]
    empty = Row(np.zeros((1,), np.int32), np.zeros((1,), bool))
    ordered += [empty] * (len(p.lengths) * rows_per_micro - len(ordered))
    ds: Any = grain.MapDataset.source(ordered).batch(rows_per_micro, batch_fn=_Stack())
    ds = ds.map_with_index(_Pad(p, fields))
    return [ds[i] for i in range(len(ds))], p
