"""Shared helpers for tests/models: tiny HF checkpoint builder, batches, jitted forwards.

Norm weights and biases are randomised (HF initialises them to 1/0, which would hide a wrong
norm or bias mapping); Granite uses initializer_range=0.1 so its logits/16 are not ~0.

The two Llama cases split the Llama options between them: ``llama`` is tied with llama3 RoPE
scaling whose ``original_max_position_embeddings`` (64) is short enough that the rescaled
low-frequency bands (wavelength > 64) and the blended middle ones (16..64) turn by whole radians
within the test sequences; ``llama_bias`` is untied with default RoPE, attention_bias (q/k/v/o),
mlp_bias and a head_dim that is not hidden / heads.  Both use initializer_range=0.1: at 0.02 the
attention scores are ~0, attention is near uniform and RoPE barely moves the logits (dropping the
llama3 rescaling changed them by only 5e-3), so a RoPE error could hide inside the tolerance.
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
    if name == "llama":
        return transformers.LlamaConfig(
            **COMMON, **LLAMA3_ROPE, rms_norm_eps=1e-5, tie_word_embeddings=True, initializer_range=0.1
        )
    if name == "llama_bias":
        return transformers.LlamaConfig(
            **COMMON, head_dim=32, rms_norm_eps=1e-6, rope_theta=5e5, tie_word_embeddings=False,
            attention_bias=True, mlp_bias=True, initializer_range=0.1,
        )
    raise KeyError(name)


LLAMA3_ROPE = dict(
    rope_theta=10000.0,
    rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                  "original_max_position_embeddings": 64},
)
"""Llama 3.1's scaling parameters except the original context (8192 there, 64 here)."""

FAMILIES = ("qwen2", "qwen3", "granite", "granite_bias", "llama", "llama_bias")


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


def build_case(name: str, root: Path, seed: int = 0, config: Any = None) -> HFCase:
    """The named case, or ``config`` (a transformers config) saved under ``name``."""
    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_config(config or _hf_config(name)).eval()
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
