"""HF config.json parsing: family flags, RoPE precedence, loud failures on unsupported features."""

from __future__ import annotations

import json
import shutil

import jax.numpy as jnp
import pytest

from prove_jax.models import (
    GraniteConfig,
    ModelConfig,
    Qwen2Config,
    Qwen3Config,
    UnsupportedConfigError,
    load_hf,
)

BASE = {
    "vocab_size": 1000,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "hidden_act": "silu",
}


def test_family_flags():
    q2 = ModelConfig.from_hf_dict({**BASE, "model_type": "qwen2", "rope_theta": 1e6})
    assert isinstance(q2, Qwen2Config)
    assert (q2.qkv_bias, q2.o_bias, q2.qk_norm, q2.head_dim, q2.scale) == (True, False, False, 16, 16**-0.5)
    q3 = ModelConfig.from_hf_dict({**BASE, "model_type": "qwen3", "head_dim": 32})
    assert isinstance(q3, Qwen3Config) and (q3.qk_norm, q3.qkv_bias, q3.head_dim) == (True, False, 32)
    # Qwen3Config's class default head_dim is 128, not hidden/heads.
    assert ModelConfig.from_hf_dict({**BASE, "model_type": "qwen3"}).head_dim == 128
    g = ModelConfig.from_hf_dict(
        {
            **BASE,
            "model_type": "granite",
            "attention_multiplier": 0.0078125,
            "embedding_multiplier": 12,
            "residual_multiplier": 0.22,
            "logits_scaling": 16,
            "tie_word_embeddings": True,
            "eos_token_id": [1, 2],
        }
    )
    assert isinstance(g, GraniteConfig)
    assert (g.scale, g.embedding_multiplier, g.residual_multiplier, g.logits_scaling) == (
        0.0078125,
        12,
        0.22,
        16,
    )
    assert g.tie_word_embeddings and g.eos_token_id == (1, 2) and hash(g) == hash(g.replace())
    assert g.replace(dtype=jnp.float32).dtype == "float32"


def test_rope_theta_sources_and_precedence():
    legacy = {**BASE, "model_type": "qwen2", "rope_theta": 1e6, "rope_scaling": None}
    v5 = {**BASE, "model_type": "qwen2", "rope_parameters": {"rope_theta": 1e6, "rope_type": "default"}}
    assert ModelConfig.from_hf_dict(legacy).rope_theta == ModelConfig.from_hf_dict(v5).rope_theta == 1e6
    both = {**v5, "rope_theta": 5.0}
    assert ModelConfig.from_hf_dict(both).rope_theta == 1e6  # the dict wins, like transformers 5.x
    assert ModelConfig.from_hf_dict({**BASE, "model_type": "qwen2"}).rope_theta == 10000.0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            {"rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}},
            "yarn",
        ),
        ({"rope_parameters": {"rope_type": "linear", "factor": 2.0, "rope_theta": 1e6}}, "linear"),
        (
            {"rope_parameters": {"rope_type": "default", "rope_theta": 1e6, "partial_rotary_factor": 0.5}},
            "partial_rotary_factor",
        ),
        ({"use_sliding_window": True, "sliding_window": 4096}, "sliding-window"),
        ({"layer_types": ["full_attention", "sliding_attention"]}, "full_attention"),
        ({"hidden_act": "gelu"}, "gelu"),
        ({"model_type": "granitemoehybrid"}, "granitemoehybrid"),
        ({"model_type": "mistral"}, "mistral"),
        ({"rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}, "dynamic"),
        ({"quantization_config": {"quant_method": "awq"}}, "quantized"),
    ],
)
def test_unsupported_configs_raise(extra, message):
    with pytest.raises(UnsupportedConfigError, match=message):
        ModelConfig.from_hf_dict({**BASE, "model_type": "qwen2", **extra})


def test_load_hf_rejects_yarn_checkpoint(hf_cases, tmp_path):
    dst = tmp_path / "yarn"
    shutil.copytree(hf_cases["qwen2"].path, dst)
    config = json.loads((dst / "config.json").read_text())
    config["rope_scaling"] = {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 256}
    (dst / "config.json").write_text(json.dumps(config))
    with pytest.raises(UnsupportedConfigError, match="yarn"):
        load_hf(dst)


def test_to_hf_dict_round_trips():
    for cfg in (
        Qwen2Config(**_arch(), rope_theta=1e6),
        Qwen3Config(**{**_arch(), "head_dim": 32}, tie_word_embeddings=True),
        GraniteConfig(
            **_arch(),
            attention_scale=1 / 16,
            embedding_multiplier=12.0,
            residual_multiplier=0.22,
            logits_scaling=16.0,
            qkv_bias=True,
            o_bias=True,
            mlp_bias=True,
            rms_norm_eps=1e-5,
        ),
    ):
        again = ModelConfig.from_hf_dict(cfg.to_hf_dict())
        assert again == cfg, (again, cfg)


def _arch() -> dict:
    return dict(
        vocab_size=1000,
        hidden_size=64,
        intermediate_size=128,
        num_layers=2,
        num_heads=4,
        num_kv_heads=2,
        head_dim=16,
    )


def test_invalid_configs():
    with pytest.raises(UnsupportedConfigError, match="multiple"):
        Qwen2Config(**{**_arch(), "num_kv_heads": 3})
    with pytest.raises(ValueError, match="remat"):
        Qwen2Config(**_arch(), remat="sometimes")
    with pytest.raises(ValueError, match="contradicts"):
        Qwen2Config(**_arch(), family="qwen3")
