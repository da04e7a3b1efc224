"""Fused token log-probs (custom VJP, chunked) equal the plain log_softmax path: values and grads."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx
from models_testlib import FAMILIES, batch, j

from prove_jax.models import load_hf, sequence_logprobs


@pytest.fixture(scope="module")
def models(hf_cases):
    return {n: load_hf(c.path, dtype=jnp.float32) for n, c in hf_cases.items()}


def _plain(model, tokens, positions, mask, temperature=1.0):
    logits = model(tokens[:, :-1], positions[:, :-1], attention_mask=mask[:, :-1])[0] / temperature
    logp = jax.nn.log_softmax(logits, axis=-1)
    return jnp.take_along_axis(logp, tokens[:, 1:, None], axis=-1)[..., 0]


def _loss(lp, mask):
    m = (mask[:, 1:] & mask[:, :-1]).astype(jnp.float32)
    return -(lp * m).sum() / m.sum()


@nnx.jit(static_argnums=(4, 5))
def _fused_value_and_grad(model, tokens, positions, mask, temperature, chunk):
    def loss(m):
        lp = sequence_logprobs(m, tokens, positions, mask, temperature=temperature, chunk_tokens=chunk)
        return _loss(lp, mask), lp

    return nnx.value_and_grad(loss, has_aux=True)(model)


@nnx.jit(static_argnums=(4,))
def _plain_value_and_grad(model, tokens, positions, mask, temperature):
    def loss(m):
        lp = _plain(m, tokens, positions, mask, temperature)
        return _loss(lp, mask), lp

    return nnx.value_and_grad(loss, has_aux=True)(model)


def _args(seed: int = 0) -> tuple[jax.Array, ...]:
    """(tokens, positions, mask) in the order the functions take them (``batch`` returns mask
    before positions)."""
    tokens, mask, positions = j(*batch(seed))
    return tokens, positions, mask


def _real(lp: jax.Array, mask: jax.Array) -> np.ndarray:
    """The log-probs of real query positions: a left-padding query sees no real key, and its
    (finite, loss-weight-zero) value depends on the forward's length (``attend``'s docstring)."""
    return np.where(np.asarray(mask[:, :-1]), np.asarray(lp), 0.0)


def _flat(grads):
    return {"/".join(map(str, p)): np.asarray(v[...]) for p, v in nnx.to_flat_state(grads)}


@pytest.mark.parametrize("name", FAMILIES)
def test_values_and_gradients_match_plain_log_softmax(name, models):
    """Every family (tied/untied head, Granite's logits_scaling): same log-probs and the same
    gradient for every parameter, head and embedding included."""
    args = _args()
    (loss_f, lp_f), g_f = _fused_value_and_grad(models[name], *args, 1.0, 4096)
    (loss_p, lp_p), g_p = _plain_value_and_grad(models[name], *args, 1.0)
    np.testing.assert_allclose(_real(lp_f, args[2]), _real(lp_p, args[2]), atol=1e-5)
    assert abs(float(loss_f) - float(loss_p)) < 1e-5
    flat_f, flat_p = _flat(g_f), _flat(g_p)
    assert flat_f.keys() == flat_p.keys()
    head = "embed_tokens" if models[name].config.tie_word_embeddings else "lm_head"
    assert np.abs(flat_p[head]).max() > 1e-4  # the head gradient is not vacuous
    for key in flat_p:
        np.testing.assert_allclose(flat_f[key], flat_p[key], atol=2e-6, err_msg=key)


def test_chunking_and_temperature(models):
    """Chunks of 5 tokens over 22 (a zero-padded remainder) give the single-chunk values and
    gradients; temperature divides the logits."""
    model = models["qwen3"]
    args = _args()
    (_, lp_one), g_one = _fused_value_and_grad(model, *args, 0.7, 4096)
    (_, lp_chunked), g_chunked = _fused_value_and_grad(model, *args, 0.7, 5)
    (_, lp_plain), _ = _plain_value_and_grad(model, *args, 0.7)
    np.testing.assert_allclose(_real(lp_one, args[2]), _real(lp_plain, args[2]), atol=1e-5)
    np.testing.assert_allclose(np.asarray(lp_chunked), np.asarray(lp_one), atol=1e-6)
    flat_chunked = _flat(g_chunked)
    for key, g in _flat(g_one).items():
        np.testing.assert_allclose(flat_chunked[key], g, atol=1e-6, err_msg=key)


def test_bfloat16_model_gives_finite_f32_logprobs(hf_cases):
    model = load_hf(hf_cases["qwen2"].path, dtype=jnp.bfloat16)
    tokens, mask, positions = j(*batch())
    (loss, lp), grads = _fused_value_and_grad(model, tokens, positions, mask, 1.0, 8)
    assert lp.dtype == jnp.float32 and np.isfinite(np.asarray(lp)).all() and np.isfinite(float(loss))
    flat = _flat(grads)
    assert flat["lm_head"].dtype == jnp.bfloat16 and np.isfinite(flat["lm_head"].astype(np.float32)).all()
    ref = np.asarray(_plain(load_hf(hf_cases["qwen2"].path, dtype=jnp.float32), tokens, positions, mask))
    assert np.abs(_real(lp, mask) - _real(ref, mask)).max() < 0.1  # bf16 rounding, not a different quantity


def test_sharded_fused_logprobs_match_single_device(models, hf_cases):
    """fsdp=4 x tensor=2 (vocab sharded over tensor, embed over fsdp): the custom VJP gives the
    single-device log-probs and gradients, and the head gradient keeps the head's sharding."""
    from prove_jax.models import make_mesh

    mesh = make_mesh("fsdp=4,tensor=2")
    sharded = load_hf(hf_cases["qwen2"].path, mesh=mesh, dtype=jnp.float32)
    args = _args()
    (_, lp_s), g_s = _fused_value_and_grad(sharded, *args, 1.0, 4096)
    (_, lp_1), g_1 = _fused_value_and_grad(models["qwen2"], *args, 1.0, 4096)
    np.testing.assert_allclose(np.asarray(lp_s), np.asarray(lp_1), atol=1e-5)
    flat_s, flat_1 = _flat(g_s), _flat(g_1)
    for key in flat_1:
        np.testing.assert_allclose(flat_s[key], flat_1[key], atol=1e-5, err_msg=key)
    head_grad = nnx.to_flat_state(g_s)
    head = next(v[...] for p, v in head_grad if p == ("lm_head",))
    assert len(head.sharding.device_set) == 8


def test_rows_stay_on_their_devices_when_the_batch_is_sharded():
    """Chunks cut each row's tokens, never the rows: with rows sharded over 8 devices the compiled
    fwd+bwd of ``token_logprobs`` gathers no hidden states (each device projects only its rows
    onto the vocabulary; FSDP weight gathers are fine), and chunked values equal unchunked ones."""
    import re

    from jax.sharding import NamedSharding, PartitionSpec

    from prove_jax.models import Qwen3Config, fused_logprobs, init_model, make_mesh, token_logprobs

    mesh = make_mesh("fsdp=8")
    b, t, e, v = 16, 384, 32, 1024
    model = init_model(Qwen3Config(vocab_size=v, hidden_size=e, intermediate_size=64, num_layers=1, num_heads=2,
                                   num_kv_heads=1, head_dim=16, dtype="float32", param_dtype="float32"), mesh=mesh)

    def loss(m, h, tg):
        return token_logprobs(m, h, tg, chunk_tokens=1024).sum()

    rows = NamedSharding(mesh, PartitionSpec(("data", "fsdp")))
    args = (jax.ShapeDtypeStruct((b, t, e), jnp.float32, sharding=rows),
            jax.ShapeDtypeStruct((b, t), jnp.int32, sharding=rows))
    hlo = nnx.jit(nnx.grad(loss, argnums=(0, 1))).lower(model, *args).compile().as_text()
    gathers = [line for line in hlo.splitlines() if re.search(r"all-gather\(", line)]
    token_sized = [g for g in gathers if re.search(rf"\[[0-9,]*\b{t}\b", g.split("=", 1)[-1].split("all-gather")[0])]
    assert not token_sized, token_sized[:2]

    k = jax.random.split(jax.random.PRNGKey(0), 3)
    h, w = jax.random.normal(k[0], (3, 70, e)), jax.random.normal(k[1], (v, e))
    tg = jax.random.randint(k[2], (3, 70), 0, v)
    whole = fused_logprobs(h, w, tg, 0.5, 10**6)
    np.testing.assert_allclose(np.asarray(fused_logprobs(h, w, tg, 0.5, 64)), np.asarray(whole), atol=1e-6)
    np.testing.assert_allclose(np.asarray(fused_logprobs(h.reshape(-1, e), w, tg.reshape(-1), 0.5, 64)),
                               np.asarray(whole).reshape(-1), atol=1e-6)


def test_the_forward_sees_the_whole_length_bucket(models, monkeypatch):
    """Attention runs over all ``T`` tokens of the row, not ``T - 1``: a 6,143-token forward has no
    cuDNN backward (an H200 refused the 4B update) and fits no splash tile."""
    import prove_jax.models.layers as layers

    seen: list[int] = []
    real = layers.attend

    def spy(q, *args, **kwargs):
        seen.append(q.shape[1])
        return real(q, *args, **kwargs)

    monkeypatch.setattr(layers, "attend", spy)
    tokens, positions, mask = _args()
    sequence_logprobs(models[FAMILIES[0]], tokens, positions, mask)
    assert seen and set(seen) == {tokens.shape[1]}
