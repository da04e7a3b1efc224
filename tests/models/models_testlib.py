"""Shared helpers for tests/models: tiny HF checkpoint builder, batches, jitted forwards.

Norm weights and biases are randomised (HF initialises them to 1/0, which would hide a wrong
norm or bias mapping); Granite uses initializer_range=0.1 so its logits/16 are not ~0.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import torch
import transformers
from flax import nnx

from prove_jax.models import KVCache, Model

COMMON = dict(
    vocab_size=1000,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=256,
)
BATCH, SEQ, PREFILL, CAPACITY = 2, 12, 8, 16


def _hf_config(name: str) -> Any:
    if name == "qwen2":
        return transformers.Qwen2Config(
            **COMMON, rms_norm_eps=1e-6, rope_theta=1e6, tie_word_embeddings=False
        )
    if name == "qwen3":
        return transformers.Qwen3Config(
            **COMMON, head_dim=32, rms_norm_eps=1e-6, rope_theta=1e6, tie_word_embeddings=True
        )
    granite = dict(
        rms_norm_eps=1e-5,
        rope_theta=1e7,
        embedding_multiplier=12.0,
        residual_multiplier=0.22,
        attention_multiplier=1 / 16,
        logits_scaling=16.0,
        initializer_range=0.1,
    )
    if name == "granite":
        return transformers.GraniteConfig(**COMMON, **granite, tie_word_embeddings=True)
    if name == "granite_bias":  # untied, attention_bias (q/k/v/o) and mlp_bias: every optional tensor
        return transformers.GraniteConfig(
            **COMMON, **granite, tie_word_embeddings=False, attention_bias=True, mlp_bias=True
        )
    raise KeyError(name)


FAMILIES = ("qwen2", "qwen3", "granite", "granite_bias")


@dataclass
class HFCase:
    name: str
    path: Path
    model: Any  # transformers model, f32, eager attention

    def logits(self, tokens: np.ndarray, mask: np.ndarray, positions: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            out = self.model(
                input_ids=torch.tensor(tokens),
                attention_mask=torch.tensor(mask.astype(np.int64)),
                position_ids=torch.tensor(positions),
            )
        return out.logits.float().numpy()


def build_case(name: str, root: Path, seed: int = 0) -> HFCase:
    torch.manual_seed(seed)
    cls = (
        transformers.Qwen2ForCausalLM
        if name == "qwen2"
        else (transformers.Qwen3ForCausalLM if name == "qwen3" else transformers.GraniteForCausalLM)
    )
    model = cls(_hf_config(name)).eval()
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if "norm" in pname or pname.endswith(".bias"):
                p.copy_(1.0 + 0.3 * torch.randn_like(p) if "norm" in pname else 0.3 * torch.randn_like(p))
    model.config._attn_implementation = "eager"
    path = root / name
    # qwen2 is saved in several shards to exercise model.safetensors.index.json loading.
    shard = "100KB" if name == "qwen2" else "50MB"
    model.save_pretrained(path, max_shard_size=shard)
    (path / "tokenizer_config.json").write_text('{"model_max_length": 256, "marker": "' + name + '"}')
    return HFCase(name, path, model)


def batch(seed: int = 0, seq: int = SEQ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tokens, mask and positions with left padding on row 1 (3 pads); positions = cumsum-1."""
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, COMMON["vocab_size"], (BATCH, seq)).astype(np.int32)
    mask = np.ones((BATCH, seq), bool)
    mask[1, :3] = False
    positions = np.maximum(np.cumsum(mask, axis=1) - 1, 0).astype(np.int32)
    return tokens, mask, positions


def j(*arrays: np.ndarray) -> tuple[jnp.ndarray, ...]:
    return tuple(jnp.asarray(a) for a in arrays)


@nnx.jit
def forward(model: Model, tokens: jax.Array, positions: jax.Array, mask: jax.Array) -> jax.Array:
    """Full (cache-less) forward with a key-padding mask."""
    return model(tokens, positions, attention_mask=mask)[0]


@nnx.jit
def cached_step(
    model: Model, tokens: jax.Array, positions: jax.Array, mask: jax.Array, cache: KVCache
) -> tuple[jax.Array, KVCache]:
    """One prefill or decode call through the KV cache."""
    logits, cache = model(tokens, positions, cache, attention_mask=mask)
    return logits, cache


def prefill_decode(
    model: Model,
    tokens: np.ndarray,
    mask: np.ndarray,
    positions: np.ndarray,
    prefill: int = PREFILL,
    capacity: int = CAPACITY,
) -> np.ndarray:
    """Logits for all positions computed as one prefill then one cached decode step per token."""
    cache = KVCache.init(model.config, tokens.shape[0], capacity, mesh=model.mesh)
    logits, cache = cached_step(
        model, *j(tokens[:, :prefill], positions[:, :prefill], mask[:, :prefill]), cache
    )
    outs = [np.asarray(logits)]
    for t in range(prefill, tokens.shape[1]):
        sl = slice(t, t + 1)
        logits, cache = cached_step(model, *j(tokens[:, sl], positions[:, sl], mask[:, sl]), cache)
        outs.append(np.asarray(logits))
    return np.concatenate(outs, axis=1)
