"""No-cache attention kernels (``prove_jax.models.attention``): splash (Pallas interpret mode on
CPU) against the XLA path, values and gradients; the implementation chosen per backend; the
``model.attention_impl`` knob from a launch config to the model; and a deviceless TPU v5p compile
showing why splash exists (per-chip temp memory of attention fwd+bwd).

Rows of padding queries are finite everywhere but defined differently per implementation (they
feed only padding positions), so they get a zero cotangent and are left out of the value
comparison; every gradient entry is compared.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx
from jax.sharding import NamedSharding, PartitionSpec

from prove_jax.models import Qwen3Config, attention
from prove_jax.models.attention import attend, choose_impl, resolve_impl, splash_attention
from prove_jax.models.decoder import Model
from prove_jax.models.layers import head_major_attention
from prove_jax.models.sharding import DEFAULT_RULES, make_mesh

B, N, KV = 2, 4, 2  # GQA: two query heads per KV head


def _inputs(t: int, d: int, dtype: Any, seed: int = 0) -> tuple[jax.Array, ...]:
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((B, t, N, d))
    k, v = (rng.standard_normal((B, t, KV, d)) for _ in range(2))
    g = rng.standard_normal((B, t, N, d))
    return tuple(jnp.asarray(x, dtype) for x in (q, k, v, g))


def _key_padding(t: int) -> np.ndarray:
    """Row 0 right-padded (last 37 tokens), row 1 left-padded (first 40): both kinds the
    trainer and the engine produce."""
    pad = np.ones((B, t), bool)
    pad[0, t - 37:] = False
    pad[1, :40] = False
    return pad


def _fwd_bwd(fn: Any, q: jax.Array, k: jax.Array, v: jax.Array, g: jax.Array) -> tuple[np.ndarray, ...]:
    """Output and d(sum(out * g))/d(q, k, v), all as f32 numpy."""
    out, vjp = jax.vjp(fn, q, k, v)
    grads = vjp(g.astype(out.dtype))
    return tuple(np.asarray(x, np.float32) for x in (out, *grads))


def _xla(mask: jax.Array | None, causal: bool, scale: float) -> Any:
    return jax.jit(lambda q, k, v: attend(q, k, v, mask, causal, scale, "xla"))


def _splash(mask: jax.Array | None, causal: bool, scale: float, mesh: Any = None) -> Any:
    return jax.jit(lambda q, k, v: attend(q, k, v, mask, causal, scale, "splash", mesh, DEFAULT_RULES,
                                          interpret=True, max_block=128))


CASES = {  # name: (T, head_dim, dtype, key padding, causal)
    "f32-d64-causal-padded": (256, 64, jnp.float32, True, True),
    "f32-d128-causal": (256, 128, jnp.float32, False, True),
    "f32-d64-full-padded": (256, 64, jnp.float32, True, False),
    "f32-d64-t200-causal-padded": (200, 64, jnp.float32, True, True),  # T padded up to 256
    "f32-d64-t200-full": (200, 64, jnp.float32, False, False),  # appended keys masked by segment ids
    "bf16-d128-causal-padded": (256, 128, jnp.bfloat16, True, True),
}


@pytest.mark.parametrize("case", list(CASES))
def test_splash_matches_xla_values_and_gradients(case: str) -> None:
    t, d, dtype, padded, causal = CASES[case]
    scale = d**-0.5 * 1.7  # not 1/sqrt(d): a kernel applying its own default scale would show
    pad = _key_padding(t) if padded else np.ones((B, t), bool)
    mask = jnp.asarray(pad[:, None, None, :]) if padded else None
    q, k, v, g = _inputs(t, d, dtype)
    g = g * jnp.asarray(pad, dtype)[:, :, None, None]  # padding query rows: no cotangent
    got = _fwd_bwd(_splash(mask, causal, scale), q, k, v, g)
    ref = _fwd_bwd(_xla(mask, causal, scale), q, k, v, g)
    if dtype == jnp.float32:
        # the same f32 math in another order (online softmax over 128-key blocks, rescaled sums):
        # f32 rounding only, measured <= 1e-6 of the largest magnitude (~8 ulp); allow 4x that.
        # A wrong scale, mask or GQA grouping is off by O(0.1-1).
        tols = {name: 4e-6 * float(np.abs(r).max()) for name, r in zip(("out", "dq", "dk", "dv"), ref, strict=True)}
    else:
        # bf16 inputs: both paths round their operands and outputs to bf16 (8 significant bits,
        # half-ulp 2^-9 relative) at different points: q*scale, probabilities, per-block partial
        # products; so each is judged by its error against an f32 computation from the same
        # bf16 inputs, and splash must be within ~2x of the XLA path's own bf16 error.
        exact = _fwd_bwd(_xla(mask, causal, scale), *(x.astype(jnp.float32) for x in (q, k, v, g)))
        tols = {}
        for name, r, e in zip(("out", "dq", "dk", "dv"), ref, exact, strict=True):
            sel = pad if name == "out" else slice(None)
            tols[name] = 2 * float(np.abs(r - e)[sel].max()) + 2**-9 * float(np.abs(e).max())
        ref = exact
    for name, a, b in zip(("out", "dq", "dk", "dv"), got, ref, strict=True):
        assert np.isfinite(a).all(), name
        assert np.abs(b).max() > 0.1, name  # a real signal, not all zeros
        sel = pad if name == "out" else slice(None)
        np.testing.assert_allclose(a[sel], b[sel], atol=tols[name], rtol=0, err_msg=f"{case} {name}")


def test_splash_under_a_mesh_matches_xla() -> None:
    """The shard_map path: batch over fsdp, heads over tensor (2 KV heads on tensor=2: each device
    holds one KV head with its two query heads), padding included."""
    mesh = make_mesh("fsdp=2,tensor=2", devices=jax.devices()[:4])
    t, d, scale = 256, 64, 64**-0.5
    pad = _key_padding(t)
    mask = jnp.asarray(pad[:, None, None, :])
    q, k, v, g = _inputs(t, d, jnp.float32, seed=1)
    g = g * jnp.asarray(pad, jnp.float32)[:, :, None, None]
    sharding = NamedSharding(mesh, PartitionSpec(("data", "fsdp"), None, "tensor", None))
    q, k, v = (jax.device_put(x, sharding) for x in (q, k, v))
    got = _fwd_bwd(_splash(mask, True, scale, mesh), q, k, v, g)
    ref = _fwd_bwd(_xla(mask, True, scale), q, k, v, g)
    np.testing.assert_allclose(got[0][pad], ref[0][pad], atol=4e-6 * np.abs(ref[0]).max(), rtol=0)
    for name, a, b in zip(("dq", "dk", "dv"), got[1:], ref[1:], strict=True):
        np.testing.assert_allclose(a, b, atol=4e-6 * np.abs(b).max(), rtol=0, err_msg=name)


def test_splash_rejects_per_query_masks() -> None:
    q, k, v, _ = _inputs(128, 64, jnp.float32)
    with pytest.raises(ValueError, match=r"key-padding mask \[B, 1, 1, T\]"):
        splash_attention(q, k, v, jnp.ones((B, 1, 128, 128), bool), True, 0.125, interpret=True)


def test_cpu_default_is_the_head_major_path_bit_for_bit() -> None:
    """None on CPU must stay today's numbers: head_major_attention on K/V repeated per group;
    "xla" is jax.nn.dot_product_attention on the same repeated K/V."""
    t, d = 70, 16
    q, k, v, _ = _inputs(t, d, jnp.float32)
    mask = jnp.asarray(_key_padding(t)[:, None, None, :])
    kr, vr = jnp.repeat(k, N // KV, axis=2), jnp.repeat(v, N // KV, axis=2)
    got = jax.jit(lambda q, k, v: attend(q, k, v, mask, True, 0.25))(q, k, v)
    ref = jax.jit(lambda q, k, v: head_major_attention(q, k, v, mask, True, 0.25))(q, kr, vr)
    np.testing.assert_array_equal(got, ref)
    got = jax.jit(lambda q, k, v: attend(q, k, v, mask, True, 0.25, "xla"))(q, k, v)
    ref = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v, mask=mask, scale=0.25, is_causal=True,
                                                               implementation="xla"))(q, kr, vr)
    np.testing.assert_array_equal(got, ref)


def test_model_with_splash_matches_the_cpu_default() -> None:
    """The knob through the model: ModelConfig(attention_impl="splash") reaches Attention (splash
    runs in interpret mode off TPU) and gives the default path's logits at real positions."""
    cfg = Qwen3Config(vocab_size=97, hidden_size=64, intermediate_size=96, num_layers=2, num_heads=4,
                      num_kv_heads=2, head_dim=64, dtype="float32", param_dtype="float32")
    t = 100
    tokens = jnp.asarray(np.random.default_rng(0).integers(0, 97, (B, t)), jnp.int32)
    pad = np.ones((B, t), bool)
    pad[1, :9] = False
    positions = jnp.asarray(np.maximum(np.cumsum(pad, axis=1) - 1, 0), jnp.int32)

    def logits(impl: str | None) -> np.ndarray:
        model = Model(cfg.replace(attention_impl=impl), rngs=nnx.Rngs(0))
        out, _ = nnx.jit(lambda m, x, p: m(x, p, attention_mask=jnp.asarray(pad)))(model, tokens, positions)
        return np.asarray(out)

    base, got = logits(None), logits("splash")
    assert np.abs(base[pad]).max() > 0.1
    np.testing.assert_allclose(got[pad], base[pad], atol=5e-5, rtol=0)


# --- which implementation runs ------------------------------------------------------------------


@pytest.mark.parametrize(("backend", "dtype", "head_dim", "expected"), [
    ("cpu", jnp.bfloat16, 128, "head_major"),
    ("tpu", jnp.bfloat16, 128, "splash"),
    ("tpu", jnp.float32, 64, "splash"),
    ("gpu", jnp.bfloat16, 128, "cudnn"),
    ("gpu", jnp.float16, 64, "cudnn"),
    ("gpu", jnp.float32, 128, "xla"),  # cuDNN flash attention takes bf16/fp16 only
    ("gpu", jnp.bfloat16, 260, "xla"),  # head dim above every cuDNN limit
])
def test_auto_choice_per_backend(backend: str, dtype: Any, head_dim: int, expected: str) -> None:
    assert resolve_impl(None, backend, jnp.dtype(dtype), head_dim) == expected


def test_auto_gpu_choice_needs_a_cudnn_trainable_length() -> None:
    # cuDNN's flash attention has no backward for 6,143 tokens (seen on an H200): auto takes XLA there
    assert resolve_impl(None, "gpu", jnp.dtype(jnp.bfloat16), 128, 6144) == "cudnn"
    assert resolve_impl(None, "gpu", jnp.dtype(jnp.bfloat16), 128, 6143) == "xla"


def test_dispatch_goes_to_cudnn_on_a_gpu_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    q, k, v, _ = _inputs(128, 128, jnp.bfloat16)
    monkeypatch.setattr(attention, "_backend", lambda mesh=None: "gpu")
    assert choose_impl(None, q) == "cudnn"
    assert choose_impl(None, q.astype(jnp.float32)) == "xla"
    # and attend really calls JAX's cuDNN attention, which says so when there is no cuDNN
    with pytest.raises(RuntimeError, match="cuDNN"):
        attend(q, k, v, None, True, 0.1)


def test_forcing_cudnn_off_gpu_names_the_knob() -> None:
    q, k, v, _ = _inputs(128, 128, jnp.bfloat16)
    with pytest.raises(ValueError, match=r"attention_impl='cudnn' \(model.attention_impl\) needs a CUDA GPU"):
        attend(q, k, v, None, True, 0.1, "cudnn")
    with pytest.raises(ValueError, match="attention_impl must be one of"):
        attend(q, k, v, None, True, 0.1, "flash")


# --- the knob from a launch config ----------------------------------------------------------------


def test_model_config_validates_attention_impl() -> None:
    small = dict(vocab_size=64, hidden_size=32, intermediate_size=64, num_layers=1, num_heads=2, num_kv_heads=1,
                 head_dim=16)
    assert Qwen3Config(**small, attention_impl="auto").attention_impl is None
    assert Qwen3Config(**small, attention_impl="splash") == Qwen3Config(**small).replace(attention_impl="splash")
    with pytest.raises(ValueError, match="attention_impl must be one of"):
        Qwen3Config(**small, attention_impl="flash")


def test_launch_config_attention_impl_reaches_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from prove_jax.config import ConfigError, LaunchConfig, check, load
    from prove_jax.pipeline import context

    hf_dir = tmp_path / "hf"
    hf_dir.mkdir()
    small = Qwen3Config(vocab_size=64, hidden_size=32, intermediate_size=64, num_layers=1, num_heads=2,
                        num_kv_heads=1, head_dim=16)
    (hf_dir / "config.json").write_text(json.dumps(small.to_hf_dict()))
    base = [f"out_dir={tmp_path / 'run'}", "model.attention_impl=splash"]

    cfg = load(LaunchConfig, None, [*base, f"model.hf_dir={hf_dir}"])
    check(cfg)
    run = context.Run(cfg)
    assert run.model_config().attention_impl == "splash"
    seen: dict[str, Any] = {}
    monkeypatch.setattr(context, "load_hf", lambda *a, **kw: seen.update(kw))
    run.initial_model()
    assert seen["attention_impl"] == "splash"

    # the random-init path (tiny CPU runs): tokenizer faked, only its size and ids are read
    class Tok:
        eos_id, pad_id = 1, 0

        def __len__(self) -> int:
            return 100

    run = context.Run(load(LaunchConfig, None, base))
    run.__dict__["tokenizer"] = Tok()
    assert run.model_config().attention_impl == "splash"

    with pytest.raises(ConfigError, match=r"model\.attention_impl: attention_impl must be one of"):
        check(load(LaunchConfig, None, [*base, "model.attention_impl=flash"]))


# --- deviceless TPU compile -------------------------------------------------------------------------


def test_splash_temp_memory_on_tpu_v5p_is_far_below_xla() -> None:
    """Compiled (not run) for 16 TPU v5p chips from this CPU process: attention fwd+bwd of
    Qwen3-8B shapes (32 q / 8 KV heads, head dim 128, bf16) at 8k tokens, fsdp=4 x tensor=4 (one
    row and 2 KV heads per chip).  The XLA path keeps [heads, T, T] f32 scores for the backward
    pass (~3.4 GiB per chip here); splash a log-sum-exp per query (~0.1 GiB)."""
    topologies = pytest.importorskip("jax.experimental.topologies")
    try:
        topo = topologies.get_topology_desc(platform="tpu", topology_name="v5p:2x2x4")
    except Exception as exc:  # no libtpu, or one that cannot describe this topology
        pytest.skip(f"no deviceless TPU topology: {exc}")
    mesh = make_mesh("fsdp=4,tensor=4", devices=topo.devices)
    b, t, n, kv, d = 4, 8192, 32, 8, 128
    sharding = NamedSharding(mesh, PartitionSpec(("data", "fsdp"), None, "tensor", None))
    q = jax.ShapeDtypeStruct((b, t, n, d), jnp.bfloat16, sharding=sharding)
    k = jax.ShapeDtypeStruct((b, t, kv, d), jnp.bfloat16, sharding=sharding)

    def compiled(impl: str) -> Any:
        def loss(q: jax.Array, k: jax.Array, v: jax.Array) -> jax.Array:
            out = attend(q, k, v, None, True, d**-0.5, impl, mesh, DEFAULT_RULES)
            return jnp.sum(out.astype(jnp.float32) ** 2)

        return jax.jit(jax.grad(loss, argnums=(0, 1, 2))).lower(q, k, k).compile()

    # a deviceless TPU executable can neither be read back from nor usefully written to the
    # suite's persistent compilation cache: off for these two compiles (reset: "in use" is
    # decided once per process)
    from jax.experimental.compilation_cache import compilation_cache

    cache_was = jax.config.jax_enable_compilation_cache
    jax.config.update("jax_enable_compilation_cache", False)
    compilation_cache.reset_cache()
    try:
        splash_prog, xla_prog = compiled("splash"), compiled("xla")
    finally:
        jax.config.update("jax_enable_compilation_cache", cache_was)
        compilation_cache.reset_cache()
    assert "tpu_custom_call" in splash_prog.as_text()  # the Mosaic kernel, not a fallback
    splash_temp = splash_prog.memory_analysis().temp_size_in_bytes
    xla_temp = xla_prog.memory_analysis().temp_size_in_bytes
    # measured (jax 0.12, libtpu 0.0.50): xla 3.35 GiB, splash 0.08 GiB per chip
    assert xla_temp > 2 * 2**30, xla_temp  # at least one [8 heads, 8k, 8k] f32 score tensor per chip
    assert splash_temp < 0.25 * 2**30, splash_temp
    assert splash_temp * 20 < xla_temp
