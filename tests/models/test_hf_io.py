"""Checkpoint I/O: HF -> ours -> HF round trips, sharded export, tied heads, mismatch errors."""

from __future__ import annotations

import json
import shutil

import jax.numpy as jnp
import numpy as np
import pytest
import torch
import transformers
from models_testlib import FAMILIES, batch, forward, j
from safetensors import safe_open
from safetensors.numpy import save_file

from prove_jax.models import CheckpointMismatchError, load_hf, make_mesh, save_hf
from prove_jax.models.safetensors_io import INDEX_FILE


def _hf_reload(path):
    model = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    model.config._attn_implementation = "eager"
    return model


def _assert_same_state_dict(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    assert sorted(sa) == sorted(sb)
    for key in sa:
        assert torch.equal(sa[key], sb[key]), key


@pytest.mark.parametrize("name", FAMILIES)
def test_round_trip_gives_identical_transformers_logits(name, hf_cases, tmp_path):
    case = hf_cases[name]
    model = load_hf(case.path, dtype=jnp.float32)
    out = save_hf(model, tmp_path / "export")
    reloaded = _hf_reload(out)
    assert type(reloaded) is type(case.model)
    _assert_same_state_dict(case.model, reloaded)
    tokens, mask, positions = batch()
    with torch.no_grad():
        kw = dict(attention_mask=torch.tensor(mask.astype(np.int64)), position_ids=torch.tensor(positions))
        ref = case.model(input_ids=torch.tensor(tokens), **kw).logits
        got = reloaded(input_ids=torch.tensor(tokens), **kw).logits
    assert torch.equal(ref, got)

    # Export format: sharded naming + index, {"format": "pt"}, legacy and 5.x rope keys, dtype.
    index = json.loads((out / INDEX_FILE).read_text())
    files = sorted(set(index["weight_map"].values()))
    assert files and all(f.startswith("model-") and f.endswith(".safetensors") for f in files)
    with safe_open(out / files[0], framework="numpy") as f:
        assert f.metadata() == {"format": "pt"}
    assert ("lm_head.weight" in index["weight_map"]) is (not model.config.tie_word_embeddings)
    config = json.loads((out / "config.json").read_text())
    scaling = json.loads((case.path / "config.json").read_text())["rope_parameters"]  # as transformers wrote it
    assert config["rope_parameters"] == scaling and config["rope_theta"] == model.config.rope_theta
    assert config["rope_scaling"] == ({k: v for k, v in scaling.items() if k != "rope_theta"} if name == "llama" else None)
    assert config["torch_dtype"] == "float32"
    # Tokenizer / generation files are copied through from the source directory.
    assert json.loads((out / "tokenizer_config.json").read_text())["marker"] == name
    assert (out / "generation_config.json").read_bytes() == (
        case.path / "generation_config.json"
    ).read_bytes()


def test_sharded_scanned_bf16_export(hf_cases, tmp_path):
    """Scanned model on a 4x2 mesh, bf16, several output shards: transformers loads the bf16 weights."""
    case = hf_cases["qwen3"]
    mesh = make_mesh("fsdp=4,tensor=2")
    model = load_hf(case.path, mesh=mesh, dtype=jnp.bfloat16, scan_layers=True)
    assert len(model.layers.attn.q_proj[...].sharding.device_set) == 8
    out = save_hf(model, tmp_path / "export", max_shard_bytes=100_000)
    index = json.loads((out / INDEX_FILE).read_text())
    assert len(set(index["weight_map"].values())) > 1
    tied_params = {k: v for k, v in case.model.state_dict().items() if k != "lm_head.weight"}
    assert set(index["weight_map"]) == set(tied_params)  # tied head not written
    assert index["metadata"]["total_size"] == sum(v.numel() * 2 for v in tied_params.values())
    config = json.loads((out / "config.json").read_text())
    assert config["torch_dtype"] == "bfloat16"
    reloaded = transformers.AutoModelForCausalLM.from_pretrained(out)
    assert reloaded.dtype == torch.bfloat16
    src = case.model.state_dict()
    for key, value in reloaded.state_dict().items():
        assert torch.equal(value, src[key].to(torch.bfloat16)), key


def test_tied_checkpoint_with_identical_lm_head_loads(hf_cases, tmp_path):
    """Granite-4.1-8B ships lm_head.weight == embed with tie=true: accepted and dropped."""
    src = hf_cases["granite"].path
    dst = tmp_path / "granite_with_head"
    shutil.copytree(src, dst)
    weights = next(dst.glob("*.safetensors"))
    with safe_open(weights, framework="numpy") as f:
        tensors = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118
    tensors["lm_head.weight"] = tensors["model.embed_tokens.weight"].copy()
    save_file(tensors, weights, metadata={"format": "pt"})
    tokens, mask, positions = batch()
    a = load_hf(src, dtype=jnp.float32)
    b = load_hf(dst, dtype=jnp.float32)
    assert not hasattr(b, "lm_head")
    np.testing.assert_array_equal(
        np.asarray(forward(a, *j(tokens, positions, mask))),
        np.asarray(forward(b, *j(tokens, positions, mask))),
    )

    tensors["lm_head.weight"][0, 0] += 1.0
    save_file(tensors, weights, metadata={"format": "pt"})
    with pytest.raises(CheckpointMismatchError, match=r"lm_head\.weight differs"):
        load_hf(dst, dtype=jnp.float32)


def test_missing_and_unexpected_tensors_raise(hf_cases, tmp_path):
    dst = tmp_path / "broken"
    shutil.copytree(hf_cases["qwen3"].path, dst)
    weights = next(dst.glob("*.safetensors"))
    with safe_open(weights, framework="numpy") as f:
        tensors = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118
    q_norm = tensors.pop("model.layers.1.self_attn.q_norm.weight")
    save_file(tensors, weights, metadata={"format": "pt"})
    with pytest.raises(
        CheckpointMismatchError, match=r"missing \['model.layers.1.self_attn.q_norm.weight'\]"
    ):
        load_hf(dst, dtype=jnp.float32)
    tensors["model.layers.1.self_attn.q_norm.weight"] = q_norm
    tensors["model.layers.1.self_attn.extra.weight"] = q_norm
    save_file(tensors, weights, metadata={"format": "pt"})
    with pytest.raises(CheckpointMismatchError, match="unexpected"):
        load_hf(dst, dtype=jnp.float32)
    del tensors["model.layers.1.self_attn.extra.weight"]
    tensors["model.layers.1.self_attn.q_norm.weight"] = np.ones(16, np.float32)
    save_file(tensors, weights, metadata={"format": "pt"})
    with pytest.raises(CheckpointMismatchError, match="shape"):
        load_hf(dst, dtype=jnp.float32)
