"""Shared builders for tests/rl: a tiny f32 model and random training rows."""

from __future__ import annotations

import numpy as np

from prove_jax.models import Qwen3Config
from prove_jax.rl.batch import Row

VOCAB = 256


def tiny_config(**kw: object) -> Qwen3Config:
    base: dict[str, object] = dict(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_layers=2, num_heads=4, num_kv_heads=2,
        head_dim=16, rope_theta=1e6, dtype="float32", param_dtype="float32", initializer_range=0.1,
        tie_word_embeddings=False,
    )
    base.update(kw)
    return Qwen3Config(**base)  # type: ignore[arg-type]


def random_rows(n: int, seed: int = 0, lengths: tuple[int, int] = (40, 200), vocab: int = VOCAB) -> list[Row]:
    """Rows shaped like rollouts: an unmasked prompt, then alternating generated / tool spans."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        t = int(rng.integers(*lengths))
        mask = np.zeros(t, bool)
        pos = t // 3
        while pos < t:
            span = int(rng.integers(3, 12))
            mask[pos:pos + span] = True
            pos += span + int(rng.integers(3, 15))
        lp = rng.normal(-5.0, 0.3, t).astype(np.float32) * mask
        rows.append(Row(rng.integers(0, vocab, t).astype(np.int32), mask, lp, float(rng.normal())))
    return rows
