"""prove_jax.models: one Flax NNX decoder for Qwen2.5 / Qwen3 / Granite-4.1 (dense) / Llama, HF checkpoint
I/O, logical-axis sharding and a fixed-shape KV cache.

Entry points::

    model = load_hf(path, mesh=None, dtype=jnp.bfloat16)       # HF dir -> sharded Model
    logits, cache = model(tokens, positions, cache=None, attention_mask=None)
    save_hf(model, out_dir)                                       # -> transformers-loadable dir
    lp = sequence_logprobs(model, tokens, positions)              # fused head + log-softmax, [B, T-1]
"""

from prove_jax.models.cache import KVCache
from prove_jax.models.config import (
    FamilyConfig,
    ModelConfig,
    ModelFamily,
    UnsupportedConfigError,
    model_family,
    register_model_family,
    unregister_model_family,
)
from prove_jax.models.decoder import DecoderLayer, Model, abstract_model, init_model, state_shardings
from prove_jax.models.families import GraniteConfig, LlamaConfig, Qwen2Config, Qwen3Config, TensorRule
from prove_jax.models.hf_io import CheckpointMismatchError, load_hf, save_hf
from prove_jax.models.logprobs import fused_logprobs, sequence_logprobs, token_logprobs
from prove_jax.models.sharding import DEFAULT_RULES, logical_to_spec, make_mesh, parse_mesh_spec

__all__ = [
    "DEFAULT_RULES",
    "CheckpointMismatchError",
    "DecoderLayer",
    "FamilyConfig",
    "GraniteConfig",
    "KVCache",
    "LlamaConfig",
    "Model",
    "ModelConfig",
    "ModelFamily",
    "Qwen2Config",
    "Qwen3Config",
    "TensorRule",
    "UnsupportedConfigError",
    "abstract_model",
    "fused_logprobs",
    "init_model",
    "load_hf",
    "logical_to_spec",
    "make_mesh",
    "model_family",
    "parse_mesh_spec",
    "register_model_family",
    "save_hf",
    "sequence_logprobs",
    "state_shardings",
    "token_logprobs",
    "unregister_model_family",
]
