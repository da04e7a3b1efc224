"""Bucketed micro-batches (Grain) and the rows' masks."""

from __future__ import annotations

import numpy as np
import pytest

from prove_jax.rl.batch import Row, bucket_of, length_buckets, micro_batches
from tests.rl.rl_testlib import random_rows


def test_buckets_are_powers_of_two_and_midpoints() -> None:
    assert length_buckets(1000, 128) == (128, 192, 256, 384, 512, 768, 1024)
    assert length_buckets(128, 128) == (128,)
    assert bucket_of(193, length_buckets(4096)) == 256
    with pytest.raises(ValueError, match="exceeds"):
        bucket_of(5000, length_buckets(4096))


def test_rows_sorted_padded_and_counted() -> None:
    rows = random_rows(7, seed=1, lengths=(20, 300))
    mbs, plan = micro_batches(rows, 3, length_buckets(512, 64))
    assert len(mbs) == 3 and plan.lengths == tuple(m["tokens"].shape[1] for m in mbs)
    assert all(m["tokens"].shape[0] == 3 for m in mbs)
    assert list(plan.lengths) == sorted(plan.lengths, reverse=True)  # longest rows first
    # every row appears exactly once, unchanged, with zero padding after it
    seen = []
    for m in mbs:
        for j in range(3):
            n = int(np.max(np.nonzero(m["tokens"][j])[0], initial=-1)) + 1
            seen.append(m["tokens"][j, :n].tobytes())
            assert not m["loss_mask"][j, n:].any() and not m["sample_logprobs"][j, n:].any()
    assert sorted(r.tokens.tobytes() for r in rows) == sorted(s for s in seen if s)
    # the empty filler row of the last micro-batch has no loss and no advantage
    assert not mbs[-1]["loss_mask"][-1].any() and mbs[-1]["advantages"][-1] == 0.0
    assert plan.tokens == sum(int(r.loss_mask[1:].sum()) for r in rows)
    assert plan.seqs == sum(1 for r in rows if r.loss_mask[1:].any())


def test_a_row_without_targets_does_not_count_as_a_sequence() -> None:
    rows = [Row(np.arange(5, dtype=np.int32) + 1, np.array([1, 0, 0, 0, 0], bool)),
            Row(np.arange(4, dtype=np.int32) + 1, np.array([0, 1, 1, 0], bool))]
    _, plan = micro_batches(rows, 2, (8,))
    assert (plan.tokens, plan.seqs) == (2.0, 1.0)  # position 0 is never a target
