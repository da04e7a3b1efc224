"""Length buckets: geometric sizes below the cap, then the cap rounded up to the attention tile."""

from __future__ import annotations

from prove_jax.rl.batch import TOP_BUCKET_MULTIPLE, bucket_of, length_buckets


def test_the_top_bucket_is_the_cap_rounded_to_the_tile_not_the_next_geometric_size() -> None:
    paper = length_buckets(28768)  # the paper's 12,384 prompt + 16,384 response
    assert paper[-2:] == (24576, 29184) and paper[-1] % TOP_BUCKET_MULTIPLE == 0
    assert bucket_of(28768, paper) == 29184  # was 32,768: 14 % more activations at the cap
    assert length_buckets(2048)[-3:] == (1024, 1536, 2048)  # a cap on a geometric size is kept
    assert length_buckets(600)[-2:] == (512, 768)  # rounding up would overshoot the next size
    assert length_buckets(256, 64) == (64, 96, 128, 192, 256)
    for cap in (129, 1000, 2085, 5000, 28768, 40960):
        b = length_buckets(cap)
        assert b[-1] >= cap and list(b) == sorted(set(b)) and (len(b) == 1 or b[-2] < cap)
