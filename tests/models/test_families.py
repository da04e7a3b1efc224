"""The declarative layout algebra: HF <-> JAX rearrangement and sliced reads, incl. transposes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from prove_jax.models import GraniteConfig, LlamaConfig, Qwen2Config, Qwen3Config
from prove_jax.models.families import TensorRule, hf_read_plan, hf_shape, jax_to_hf, parse_dims, rules_for

RULES = [
    TensorRule("q", "q.weight", "h d e", "(h d) e"),  # reshape only (our layout)
    TensorRule("q_t", "q.weight", "e h d", "(h d) e"),  # transpose + reshape
    TensorRule("o_t", "o.weight", "h d e", "e (h d)"),
    TensorRule("b", "b.bias", "h d", "(h d)"),
]


def test_parse_dims():
    assert parse_dims("(h d) e") == [["h", "d"], ["e"]]
    assert parse_dims("e (h d)") == [["e"], ["h", "d"]]
    for bad in ("((h d) e", "(h d", "h d)", "() e"):
        with pytest.raises(ValueError):
            parse_dims(bad)


def _reference_hf(rule: TensorRule, x: np.ndarray) -> np.ndarray:
    """Independent HF construction: HF row r of q.weight is head r // D, dim r % D."""
    h, d = 3, 4
    if rule.jax == "q":
        return x.reshape(h * d, -1)
    if rule.jax == "q_t":
        return x.reshape(x.shape[0], h * d).T
    if rule.jax == "o_t":
        return x.reshape(h * d, -1).T
    return x.reshape(-1)


@pytest.mark.parametrize("rule", RULES, ids=[r.jax for r in RULES])
def test_layout_round_trip_and_sliced_reads(rule):
    sizes = {"h": 3, "d": 4, "e": 5}
    shape = tuple(sizes[a] for a in rule.jax_dims.split())
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    hf = jax_to_hf(rule, x)
    assert hf.shape == hf_shape(rule, shape)
    np.testing.assert_array_equal(hf, _reference_hf(rule, x))
    # Every combination of sub-ranges (as a sharded load would request) reads back exactly x[index].
    ranges = [[slice(None), slice(1, n), slice(0, max(1, n // 2))] for n in shape]
    for index in itertools.product(*ranges):
        hf_slices, finish = hf_read_plan(rule, shape, index)
        got = finish(hf[hf_slices])
        np.testing.assert_array_equal(got, x[index])


def test_family_tables_follow_config_flags():
    arch = dict(
        vocab_size=10,
        hidden_size=8,
        intermediate_size=16,
        num_layers=1,
        num_heads=2,
        num_kv_heads=1,
        head_dim=4,
    )
    keys = lambda cfg: {r.hf for r in rules_for(cfg)}  # noqa: E731
    q2, q3 = keys(Qwen2Config(**arch)), keys(Qwen3Config(**arch, tie_word_embeddings=True))
    assert "model.layers.{i}.self_attn.q_proj.bias" in q2 and "lm_head.weight" in q2
    assert "model.layers.{i}.self_attn.q_proj.bias" not in q3 and "lm_head.weight" not in q3
    assert "model.layers.{i}.self_attn.q_norm.weight" in q3
    g = keys(GraniteConfig(**arch, qkv_bias=True, o_bias=True, mlp_bias=True))
    assert {"model.layers.{i}.self_attn.o_proj.bias", "model.layers.{i}.mlp.down_proj.bias"} <= g
    assert len(keys(GraniteConfig(**arch))) == 12
    # Llama: the same table, every optional tensor off by default; attention_bias adds q/k/v *and* o.
    assert keys(LlamaConfig(**arch)) == keys(GraniteConfig(**arch))
    assert keys(LlamaConfig(**arch, qkv_bias=True, o_bias=True, mlp_bias=True)) == g
