"""Mesh specs, the logical-axis rules, and sharded runs on 8 simulated CPU devices."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import PartitionSpec as P
from models_testlib import batch, forward, j, prefill_decode

from prove_jax.models import (
    DEFAULT_RULES,
    Qwen3Config,
    init_model,
    load_hf,
    logical_to_spec,
    make_mesh,
    parse_mesh_spec,
)


def test_parse_mesh_spec():
    assert parse_mesh_spec("fsdp=4,tensor=2") == {"data": 1, "fsdp": 4, "tensor": 2}
    assert parse_mesh_spec(" data=2 , fsdp=-1") == {"data": 2, "fsdp": -1, "tensor": 1}
    assert parse_mesh_spec(None) == {"data": 1, "fsdp": 1, "tensor": 1}
    for bad, msg in [
        ("fsdp4", "expected axis=size"),
        ("model=2", "unknown mesh axes"),
        ("fsdp=2,fsdp=4", "twice"),
    ]:
        with pytest.raises(ValueError, match=msg):
            parse_mesh_spec(bad)


def test_make_mesh():
    assert jax.device_count() == 8
    mesh = make_mesh("fsdp=4,tensor=2")
    assert mesh.axis_names == ("data", "fsdp", "tensor") and dict(mesh.shape) == {
        "data": 1,
        "fsdp": 4,
        "tensor": 2,
    }
    assert dict(make_mesh("tensor=2,fsdp=-1").shape)["fsdp"] == 4
    assert dict(make_mesh(None, devices=jax.devices()[:1]).shape) == {"data": 1, "fsdp": 1, "tensor": 1}
    with pytest.raises(ValueError, match="needs 6 devices"):
        make_mesh("fsdp=3,tensor=2")


def test_logical_rules_drop_non_dividing_and_repeated_axes():
    mesh = make_mesh("fsdp=2,tensor=4")
    assert logical_to_spec(("embed", "heads", "head_dim"), DEFAULT_RULES, (64, 4, 32), mesh) == P(
        "fsdp", "tensor"
    )
    # 2 KV heads cannot be split 4 ways: replicated over tensor instead of failing.
    assert logical_to_spec(("embed", "kv_heads", "head_dim"), DEFAULT_RULES, (64, 2, 32), mesh) == P("fsdp")
    # batch -> (data, fsdp) keeps only fsdp (data has size 1); a mesh axis is used at most once per
    # array, so embed falls back to replication.
    assert logical_to_spec(("batch", "embed"), DEFAULT_RULES, (8, 64), mesh) == P("fsdp")
    rules = (("embed", ("fsdp", "tensor")), ("vocab", None))
    assert logical_to_spec(("vocab", "embed"), rules, (1000, 64), mesh) == P(None, ("fsdp", "tensor"))
    assert logical_to_spec(("vocab", "embed"), rules) == P(None, ("fsdp", "tensor"))  # no mesh: no pruning
    with pytest.raises(KeyError, match="embd"):
        logical_to_spec(("embd",), DEFAULT_RULES)


def test_init_model_places_params_by_rules():
    cfg = Qwen3Config(
        vocab_size=1000,
        hidden_size=64,
        intermediate_size=128,
        num_layers=2,
        num_heads=4,
        num_kv_heads=2,
        head_dim=32,
        dtype="float32",
        param_dtype="float32",
        scan_layers=True,
    )
    mesh = make_mesh("fsdp=4,tensor=2")
    model = init_model(cfg, seed=0, mesh=mesh)
    assert model.layers.attn.q_proj[...].sharding.spec == P(None, "tensor", None, "fsdp")
    assert model.layers.mlp.down_proj[...].sharding.spec == P(None, "fsdp", "tensor")
    assert model.embed_tokens[...].sharding.spec == P("tensor", "fsdp")
    assert model.final_norm.weight[...].sharding.spec == P()
    assert model.layers.attn.q_proj.get_metadata()["out_sharding"] == ("layers", "heads", "head_dim", "embed")
    # Same seed on one device gives the same values.
    single = init_model(cfg, seed=0)
    np.testing.assert_array_equal(
        np.asarray(model.layers.attn.q_proj[...]), np.asarray(single.layers.attn.q_proj[...])
    )


@pytest.fixture(scope="module")
def single_device_logits(hf_cases):
    tokens, mask, positions = batch()
    model = load_hf(hf_cases["qwen2"].path, dtype=jnp.float32)
    return np.asarray(forward(model, *j(tokens, positions, mask)))


@pytest.mark.parametrize("spec", ["fsdp=4,tensor=2", "fsdp=2,tensor=4"])
def test_sharded_logits_match_single_device(spec, hf_cases, single_device_logits):
    tokens, mask, positions = batch()
    mesh = make_mesh(spec)
    model = load_hf(hf_cases["qwen2"].path, mesh=mesh, dtype=jnp.float32)
    q = model.layers[0].attn.q_proj[...]
    assert q.sharding.spec == P("tensor", None, "fsdp") and len(q.sharding.device_set) == 8
    logits = forward(model, *j(tokens, positions, mask))
    diff = np.abs(np.asarray(logits) - single_device_logits)[mask].max()
    assert diff <= 1e-5


def test_sharded_scanned_cache_decode_matches_single_device(hf_cases, single_device_logits):
    tokens, mask, positions = batch()
    mesh = make_mesh("fsdp=2,tensor=4")
    model = load_hf(hf_cases["qwen2"].path, mesh=mesh, dtype=jnp.float32, scan_layers=True)
    logits = prefill_decode(model, tokens, mask, positions)
    assert np.abs(logits - single_device_logits)[mask].max() <= 1e-5
