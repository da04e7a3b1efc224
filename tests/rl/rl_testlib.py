"""Shared builders for tests/rl: a tiny f32 model, random training rows, crafted Rollout records."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from prove_jax.models import Model, Qwen3Config
from prove_jax.records import CallRecord, Rollout
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


def call_record(name: str = "t", arguments: dict[str, Any] | None = None, *, executed_ok: bool = True,
                turn: int = 0, assistant_turn: int = 0) -> CallRecord:
    """A parsed call as the episode driver records it (schema-valid; the result a stand-in)."""
    return CallRecord(name=name, arguments={} if arguments is None else arguments, parsed_ok=True, schema_ok=True,
                      turn=turn, assistant_turn=assistant_turn, executed_ok=executed_ok,
                      result="{}" if executed_ok else "error", error_kind=None if executed_ok else "tool")


def crafted_rollout(example_id: str = "e", calls: tuple[CallRecord, ...] | list[CallRecord] = (), *,
                    kind: str = "conversation", n_gold_calls: int = 1, length: int = 20, sample_idx: int = 0,
                    **fields: Any) -> Rollout:
    """A Rollout without an episode: ``length`` token ids with tokens 10..14 generated (log-prob -1
    there); any other field by keyword (``failed``, ``finish``, ``n_assistant_turns`` ...)."""
    mask = np.zeros(length, bool)
    mask[10:15] = True
    base: dict[str, Any] = dict(
        example_id=example_id, group_id=example_id, sample_idx=sample_idx, kind=kind, n_gold_calls=n_gold_calls,
        opening=10, tokens=np.arange(length, dtype=np.int32), loss_mask=mask, logprobs=-np.ones(length, np.float32) * mask,
        sample_logprobs=-np.ones(length, np.float32) * mask, calls=tuple(calls), parse_errors=(), final_state=None,
        finish="done", n_assistant_turns=1, n_user_turns=1, failed=False)
    base.update(fields)
    return Rollout(**base)


@nnx.jit
def full_logits(model: Model, tokens: jax.Array) -> jax.Array:
    """The model's logits over whole rows (positions 0..T-1), as a checkpoint comparison needs."""
    positions = jnp.broadcast_to(jnp.arange(tokens.shape[1], dtype=jnp.int32), tokens.shape)
    return model(tokens, positions)[0]


def param_arrays(model: Model) -> list[np.ndarray]:
    """Every ``nnx.Param`` of ``model`` on the host, in state order."""
    return [np.asarray(x) for x in jax.tree.leaves(nnx.state(model, nnx.Param))]
