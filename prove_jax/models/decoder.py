"""The decoder: one Flax NNX module for Qwen2.5, Qwen3, Granite (dense) and Llama, selected by config flags.

``Model(config, rngs=...)`` — forward ``model(tokens, positions, cache=None, attention_mask=None)
-> (logits, cache)``:

* ``tokens``/``positions``: int32 ``[B, T]``; positions come from the caller (``cumsum(mask)-1``
  for left padding) and drive RoPE only.
* ``attention_mask``: optional bool ``[B, T]``, False on padding.  Pad keys are masked for every
  query; pad query rows see only masked keys and get uniform (finite) attention, so left padding
  never produces NaN in the forward or the gradient.
* ``cache``: a :class:`KVCache` for prefill + decode with fixed shapes (see cache.py).
* logits: ``[B, T, vocab]`` in ``config.logits_dtype`` (f32): the lm_head matmul accumulates in
  f32 from bf16 inputs, so log-probs for RL are computed from f32 logits.

With ``scan_layers`` the layer params are stacked on a leading ``layers`` axis (created by
``nnx.vmap``) and the stack runs under ``lax.scan``: one layer trace instead of L, which keeps
compile time flat for 36-40 layer models.  ``remat`` wraps each layer in ``jax.checkpoint``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import Mesh

from prove_jax.models.cache import KVCache
from prove_jax.models.cached_attention import KVWrite
from prove_jax.models.config import ModelConfig
from prove_jax.models.layers import MLP, Attention, RMSNorm, _param, dense, rope_cos_sin, rope_inv_freq
from prove_jax.models.sharding import constrain, param_sharding

_REMAT_POLICIES: dict[str, Any] = {
    "full": None,  # save nothing: recompute the layer in the backward pass
    "dots": jax.checkpoint_policies.dots_with_no_batch_dims_saveable,
}


class DecoderLayer(nnx.Module):
    """Pre-norm block: ``x += attn(norm(x)) * r``; ``x += mlp(norm(x)) * r`` (r=1 except Granite)."""

    def __init__(self, cfg: ModelConfig, *, rngs: nnx.Rngs, mesh: Mesh | None = None) -> None:
        self.cfg = cfg
        self.input_norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps, "norm", cfg.weight_dtype)
        self.attn = Attention(cfg, rngs=rngs, mesh=mesh)
        self.post_norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps, "norm", cfg.weight_dtype)
        self.mlp = MLP(cfg, rngs=rngs)

    def __call__(
        self,
        x: jax.Array,
        cos: jax.Array,
        sin: jax.Array,
        mask: jax.Array | None,
        is_causal: bool,
        kv_write: KVWrite | None,
    ) -> tuple[jax.Array, tuple[jax.Array, jax.Array] | None]:
        r = self.cfg.residual_multiplier
        a, new_kv = self.attn(self.input_norm(x), cos, sin, mask, is_causal, kv_write)
        x = x + a * r if r != 1.0 else x + a
        m = self.mlp(self.post_norm(x))
        x = x + m * r if r != 1.0 else x + m
        return x, new_kv


def _stacked_layers(cfg: ModelConfig, rngs: nnx.Rngs, mesh: Mesh | None) -> DecoderLayer:
    """One DecoderLayer whose params have a leading ``layers`` axis (sharding metadata included)."""

    @nnx.split_rngs(splits=cfg.num_layers)
    @nnx.vmap(in_axes=(0,), out_axes=0, transform_metadata={nnx.PARTITION_NAME: "layers"})
    def make(r: nnx.Rngs) -> DecoderLayer:
        return DecoderLayer(cfg, rngs=r, mesh=mesh)

    return make(rngs)


class Model(nnx.Module):
    """Dense decoder LM.  ``mesh`` (optional, static) enables activation sharding constraints."""

    def __init__(self, config: ModelConfig, *, rngs: nnx.Rngs, mesh: Mesh | None = None) -> None:
        cfg = config
        self.config = cfg
        self.mesh = mesh
        self.embed_tokens = _param(
            rngs,
            (cfg.vocab_size, cfg.hidden_size),
            ("vocab", "embed"),
            cfg.weight_dtype,
            "normal",
            cfg.initializer_range,
        )
        if cfg.scan_layers:
            self.layers: Any = _stacked_layers(cfg, rngs, mesh)
        else:
            self.layers = nnx.List([DecoderLayer(cfg, rngs=rngs, mesh=mesh) for _ in range(cfg.num_layers)])
        self.final_norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps, "norm", cfg.weight_dtype)
        if not cfg.tie_word_embeddings:
            self.lm_head = _param(
                rngs,
                (cfg.vocab_size, cfg.hidden_size),
                ("vocab", "embed"),
                cfg.weight_dtype,
                "normal",
                cfg.initializer_range,
            )

    def __call__(
        self,
        tokens: jax.Array,
        positions: jax.Array,
        cache: KVCache | None = None,
        *,
        attention_mask: jax.Array | None = None,
    ) -> tuple[jax.Array, KVCache | None]:
        """Logits ``[B, T, vocab]`` (f32) and the updated cache (None when no cache was given)."""
        h, cache = self.hidden_states(tokens, positions, cache, attention_mask=attention_mask)
        return self.logits(h), cache

    def hidden_states(
        self,
        tokens: jax.Array,
        positions: jax.Array,
        cache: KVCache | None = None,
        *,
        attention_mask: jax.Array | None = None,
    ) -> tuple[jax.Array, KVCache | None]:
        """Final-norm hidden states ``[B, T, E]`` (lets a loss compute logits in vocab chunks)."""
        cfg, rules = self.config, self.config.sharding_rules
        dt = cfg.act_dtype
        x = jnp.take(self.embed_tokens[...], tokens, axis=0).astype(dt)
        if cfg.embedding_multiplier != 1.0:
            x = x * cfg.embedding_multiplier
        x = constrain(x, ("batch", "seq", "act_embed"), self.mesh, rules)
        # Materialise the tables once: left to itself XLA fuses cos/sin into every consumer and
        # recomputes them per element of q and k, in the forward and again in the backward
        # (~20 % of a small CPU train step went to transcendentals).
        cos, sin = jax.lax.optimization_barrier(rope_cos_sin(positions, rope_inv_freq(cfg), dt))
        if cache is None:
            mask = None if attention_mask is None else attention_mask.astype(bool)[:, None, None, :]
            x, _ = self._run_layers(x, cos, sin, mask, True, None)
            new_cache = None
        else:
            write = cache.begin_write(positions, attention_mask)
            x, bufs = self._run_layers(x, cos, sin, None, False, write)
            new_cache = cache.end_write(write, bufs)
        return self.final_norm(x), new_cache

    def logits(self, h: jax.Array) -> jax.Array:
        """lm_head (or tied embedding) with f32 accumulation/output; Granite divides by logits_scaling."""
        cfg = self.config
        out_dtype = jnp.dtype(cfg.logits_dtype)
        w = self.embed_tokens[...] if cfg.tie_word_embeddings else self.lm_head[...]
        logits = dense(h, w, preferred_element_type=out_dtype)
        if cfg.logits_scaling != 1.0:
            logits = logits / jnp.asarray(cfg.logits_scaling, out_dtype)
        return logits

    def _run_layers(
        self,
        x: jax.Array,
        cos: jax.Array,
        sin: jax.Array,
        mask: jax.Array | None,
        is_causal: bool,
        kv: Any,
    ) -> tuple[jax.Array, Any]:
        """Apply all layers, functionally (split/merge) so scan and remat see pure functions.

        With a cache (``kv``: the whole cache's buffers, per-layer tuples or stacked arrays)
        returns the updated buffers in the same form.  A scanned model's scan carries the
        stacked buffers and hands each layer the buffers plus its index: the layer writes its new
        tokens into them and reads its blocks out of them, so no layer's cache is ever copied.
        """
        cfg = self.config

        def block(
            graphdef: nnx.GraphDef,
            state: nnx.State,
            x: jax.Array,
            bufs: Any,
            layer: jax.Array | None,
        ) -> tuple[jax.Array, Any]:
            lay = nnx.merge(graphdef, state)
            write = None if kv is None else kv.for_layer(bufs, layer)
            y, new_bufs = lay(x, cos, sin, mask, is_causal, write)
            return constrain(y, ("batch", "seq", "act_embed"), self.mesh, cfg.sharding_rules), new_bufs

        if cfg.remat != "none":
            block = jax.checkpoint(block, policy=_REMAT_POLICIES[cfg.remat], static_argnums=(0,))

        if cfg.scan_layers:
            graphdef, state = nnx.split(self.layers)
            if kv is None:

                def body(carry: jax.Array, st: Any) -> tuple[jax.Array, None]:
                    return block(graphdef, st, carry, None, None)[0], None

                x, _ = jax.lax.scan(body, x, state)
                return x, None

            def cached_body(carry: tuple[Any, ...], st: Any) -> tuple[tuple[Any, ...], None]:
                h, all_bufs, i = carry
                y, all_bufs = block(graphdef, st, h, all_bufs, i)
                return (y, all_bufs, i + 1), None

            (x, all_bufs, _), _ = jax.lax.scan(cached_body, (x, kv.stacked_bufs(), jnp.int32(0)), state)
            return x, all_bufs

        out_bufs: list[Any] = []
        for i, layer in enumerate(self.layers):
            graphdef, state = nnx.split(layer)
            x, new_bufs = block(graphdef, state, x, None if kv is None else kv.layer_bufs(i), None)
            out_bufs.append(new_bufs)
        return x, (None if kv is None else out_bufs)


def abstract_model(config: ModelConfig, mesh: Mesh | None = None) -> Model:
    """The model with ``ShapeDtypeStruct`` leaves: shapes + sharding metadata, no memory."""
    return nnx.eval_shape(lambda: Model(config, rngs=nnx.Rngs(0), mesh=mesh))


def state_shardings(state: nnx.State, mesh: Mesh | None, rules: Any) -> nnx.State:
    """Map every Variable of ``state`` to its target sharding (by its logical-axis metadata)."""
    return jax.tree.map(
        lambda v: v.replace(param_sharding(v, mesh, rules)),
        state,
        is_leaf=lambda x: isinstance(x, nnx.Variable),
    )


def init_model(config: ModelConfig, *, seed: int = 0, mesh: Mesh | None = None) -> Model:
    """Randomly initialised model, each parameter created directly in its target sharding."""
    graphdef, abstract_state = nnx.split(abstract_model(config, mesh))
    shardings = state_shardings(abstract_state, mesh, config.sharding_rules)

    def make() -> nnx.State:
        return nnx.state(Model(config, rngs=nnx.Rngs(seed), mesh=mesh))

    state = jax.jit(make, out_shardings=shardings)()
    return nnx.merge(graphdef, state)
