"""Blocked cached attention (``models/cached_attention.py``) against the dense formula it replaced.

The reference below is the previous ``layers.cached_attention`` (the whole capacity in one
softmax, mask ``slot <= query slot & pos >= 0``), kept here and not in the library.  Caches have
rows at different fill levels, an empty row, a left-padded row, an idle (masked) new token and
right-padded chunk tokens; both layouts (per-layer buffers and one stacked ``[L, ...]`` buffer)
and capacities that are and are not a multiple of the block.  Query rows that see no slot at all
(padding queries) must be finite but are not compared: the dense formula spreads them uniformly
over the whole capacity, the blocked one over the blocks it reads.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from models_testlib import BATCH, PREFILL, batch, cached_step, forward, j

from prove_jax.models import KVCache, load_hf
from prove_jax.models import cached_attention as ca
from prove_jax.models.cache import KV_BLOCK

KV, G, D, L = 2, 2, 8, 3
SCALE = D**-0.5
_MASKED = -0.7 * float(jnp.finfo(jnp.float32).max)


def dense_reference(q, k_buf, v_buf, pos, start, scale):
    """The old dense cached attention: ``q [B,T,H,D]`` over ``[B,KV,S,D]`` buffers."""
    b, t, h, d = q.shape
    kv, s_cap = k_buf.shape[1], k_buf.shape[2]
    g = h // kv
    q_slot = start[:, None] + jnp.arange(t)[None, :]
    mask = (jnp.arange(s_cap)[None, None, :] <= q_slot[:, :, None]) & (pos[:, None, :] >= 0)  # [B, T, S]
    qg = q.reshape(b, t, kv, g, d).transpose(0, 2, 3, 1, 4).reshape(b, kv, g * t, d)
    s = jnp.einsum("bkqd,bksd->bkqs", qg, k_buf.astype(q.dtype), preferred_element_type=jnp.float32)
    s = s.reshape(b, kv, g, t, s_cap) * jnp.float32(scale)
    s = jnp.where(mask[:, None, None], s, _MASKED)
    p = jax.nn.softmax(s, axis=-1).astype(v_buf.dtype).reshape(b, kv, g * t, s_cap)
    o = jnp.einsum("bkqs,bksd->bkqd", p, v_buf)
    return o.reshape(b, kv, g, t, d).transpose(0, 3, 1, 2, 4).reshape(b, t, h, d).astype(q.dtype)


def make_case(t: int, capacity: int, ends: list[int], dtype=jnp.float32, seed: int = 0) -> dict:
    """A cache whose rows hold ``ends[b]`` slots, and ``t`` new tokens per row.

    Row 0 is empty and its new tokens are masked (an idle slot: its queries see nothing), row 1
    is left-padded (its first 3 slots are padding), row 2 has two masked slots in the middle; the
    last row's new tokens are masked too (an idle decode row that holds tokens, or the right
    padding of a prefill chunk when ``t > 1``: only its first two tokens are valid).
    """
    rng = np.random.default_rng(seed)
    b = len(ends)
    pos = np.full((b, capacity), -1, np.int32)
    for r, e in enumerate(ends):
        pos[r, :e] = np.arange(e)
    pos[1, :3] = -1
    pos[1, 3 : ends[1]] = np.arange(ends[1] - 3)
    if ends[2] > 6:
        pos[2, 4:6] = -1
    start = np.asarray(ends, np.int32)
    valid = np.ones((b, t), bool)
    valid[0] = False
    valid[-1] = False
    valid[-1, :2] = t > 1
    new_pos = pos.copy()
    for r in range(b):
        first = pos[r, : ends[r]].max(initial=-1) + 1
        new_pos[r, ends[r] : ends[r] + t] = np.where(valid[r], first + np.cumsum(valid[r]) - 1, -1)
    rnd = lambda *shape: jnp.asarray(rng.standard_normal(shape), jnp.float32).astype(dtype)  # noqa: E731
    return dict(
        q=rnd(b, t, KV * G, D), k=rnd(b, t, KV, D), v=rnd(b, t, KV, D),
        k_stack=rnd(L, b, KV, capacity, D), v_stack=rnd(L, b, KV, capacity, D),
        pos=jnp.asarray(new_pos), start=jnp.asarray(start),
    )


def reference_write(buf: np.ndarray, new: np.ndarray, start: np.ndarray) -> np.ndarray:
    """``buf [B, KV, S, D]`` with ``new [B, T, KV, D]`` written at slot ``start[b]`` of row ``b``."""
    out = buf.copy()
    for r, s in enumerate(start):
        out[r, :, s : s + new.shape[1]] = new[r].transpose(1, 0, 2)
    return out


def seen_rows(case: dict) -> np.ndarray:
    """``bool [B, T]``: query rows with at least one visible slot (the ones that are compared)."""
    pos, start = np.asarray(case["pos"]), np.asarray(case["start"])
    t = case["q"].shape[1]
    q_slot = start[:, None] + np.arange(t)[None]
    keep = (np.arange(pos.shape[1])[None, None] <= q_slot[:, :, None]) & (pos[:, None] >= 0)
    return keep.any(-1)


def run(case: dict, stacked: bool, kv_block: int, layer: int = 1):
    """Our cached attention on the case; returns (out, updated k, updated v) of the layer."""
    if stacked:
        write = ca.KVWrite(case["k_stack"], case["v_stack"], case["start"], case["pos"], jnp.int32(layer), kv_block)
    else:
        write = ca.KVWrite(case["k_stack"][layer], case["v_stack"][layer], case["start"], case["pos"],
                           kv_block=kv_block)
    out, (kb, vb) = jax.jit(ca.cached_attention, static_argnums=(4,))(case["q"], case["k"], case["v"], write, SCALE)
    if stacked:
        others = [i for i in range(L) if i != layer]
        np.testing.assert_array_equal(np.asarray(kb)[others], np.asarray(case["k_stack"])[others])
        np.testing.assert_array_equal(np.asarray(vb)[others], np.asarray(case["v_stack"])[others])
        kb, vb = kb[layer], vb[layer]
    return out, kb, vb


@pytest.mark.parametrize("stacked", [False, True], ids=["per_layer", "stacked"])
@pytest.mark.parametrize(("capacity", "kv_block"), [(40, 16), (40, 8), (40, 512), (48, 7)])
@pytest.mark.parametrize("t", [1, 6], ids=["decode", "chunk"])
def test_blocked_matches_dense_f32(t: int, capacity: int, kv_block: int, stacked: bool) -> None:
    """Decode steps and prefill chunks over rows of different ends; blocks that divide the
    capacity, that do not (the last block is read flush with the end), and one block."""
    case = make_case(t, capacity, ends=[0, 9, 20, capacity - 8])
    out, k_new, v_new = run(case, stacked, kv_block)
    k_old, v_old = case["k_stack"][1], case["v_stack"][1]
    k_ref = reference_write(np.asarray(k_old), np.asarray(case["k"]), np.asarray(case["start"]))
    v_ref = reference_write(np.asarray(v_old), np.asarray(case["v"]), np.asarray(case["start"]))
    np.testing.assert_array_equal(np.asarray(k_new), k_ref)
    np.testing.assert_array_equal(np.asarray(v_new), v_ref)
    ref = dense_reference(case["q"], jnp.asarray(k_ref), jnp.asarray(v_ref), case["pos"], case["start"], SCALE)
    seen = seen_rows(case)
    assert not seen.all()  # the idle empty row's queries see nothing
    assert np.isfinite(np.asarray(out)).all()
    np.testing.assert_allclose(np.asarray(out)[seen], np.asarray(ref)[seen], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("stacked", [False, True], ids=["per_layer", "stacked"])
@pytest.mark.parametrize("t", [1, 6], ids=["decode", "chunk"])
def test_blocked_matches_dense_bf16(t: int, stacked: bool) -> None:
    """bf16 cache and queries: within bf16 rounding of the dense formula (which rounds the
    normalised probabilities to bf16; the blocked one rounds unnormalised ones)."""
    case = make_case(t, 40, ends=[0, 9, 20, 32], dtype=jnp.bfloat16)
    out, k_new, v_new = run(case, stacked, kv_block=16)
    ref = dense_reference(case["q"], k_new, v_new, case["pos"], case["start"], SCALE)
    seen = seen_rows(case)
    assert out.dtype == jnp.bfloat16 and np.isfinite(np.asarray(out, np.float32)).all()
    eps = float(jnp.finfo(jnp.bfloat16).eps)
    np.testing.assert_allclose(np.asarray(out, np.float32)[seen], np.asarray(ref, np.float32)[seen], atol=4 * eps)


def test_block_count_follows_the_furthest_row() -> None:
    """The helper the kernel uses: blocks up to slot ``max(start) + t - 1``, at least one, at most
    all (a capacity that is not a multiple counts its last partial block)."""
    count = lambda start, t, cap=8192, kb=512: int(ca.kv_block_count(jnp.asarray(start), t, cap, kb))  # noqa: E731
    assert count([0, 0], 1) == 1
    assert count([199, 3], 1) == 1  # rows of ~200 tokens read one block whatever the capacity
    assert count([199, 3], 1, cap=1024) == 1
    assert count([511, 0], 1) == 1 and count([512, 0], 1) == 2
    assert count([3000, 10], 1) == 6  # ceil(3001 / 512)
    assert count([3000, 10], 512) == 7  # a chunk reaches slot 3511
    assert count([8191, 0], 1) == 16  # full
    assert count([8000, 0], 1, cap=8200) == 16 and count([8199, 0], 1, cap=8200) == 17
    assert count([5], 1, cap=16, kb=512) == 1  # the block is capped at the capacity


def test_trip_count_is_dynamic() -> None:
    """The bound is a traced value: the loop is a ``while`` (a static bound would make
    ``fori_loop`` a ``scan`` over every block), so one program serves every fill level."""
    case = make_case(1, 64, ends=[3, 10, 12, 0])
    jaxpr = str(jax.make_jaxpr(lambda q, k, v, p, s: ca.blocked_attention(q, k, v, p, s, SCALE, kv_block=8))(
        case["q"], case["k_stack"][0], case["v_stack"][0], case["pos"], case["start"]))
    assert "while[" in jaxpr and "scan[" not in jaxpr


def _poison(case: dict, from_slot: int) -> dict:
    nan = lambda x: x.at[..., from_slot:, :].set(jnp.nan)  # noqa: E731  (slots are axis -2)
    return {**case, "k_stack": nan(case["k_stack"]), "v_stack": nan(case["v_stack"])}


@pytest.mark.parametrize("stacked", [False, True], ids=["per_layer", "stacked"])
@pytest.mark.parametrize("t", [1, 4], ids=["decode", "chunk"])
def test_slots_past_the_bound_are_never_read(t: int, stacked: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """NaN in every slot past the last block any row can see changes nothing; with the bound
    forced to all blocks (the control) the same NaNs reach the output — so this test fails if
    the kernel reads past its bound."""
    cap, kb = 64, 8
    case = make_case(t, cap, ends=[3, 10, 12, 0])
    n_blocks = int(ca.kv_block_count(case["start"], t, cap, kb))
    assert n_blocks == math.ceil((12 + t) / kb) < cap // kb
    clean, _, _ = run(case, stacked, kb)
    poisoned = _poison(case, n_blocks * kb)
    out, _, _ = run(poisoned, stacked, kb)
    assert np.isfinite(np.asarray(out)).all()
    np.testing.assert_array_equal(np.asarray(out), np.asarray(clean))

    monkeypatch.setattr(ca, "kv_block_count", lambda start, t, capacity, kv_block=KV_BLOCK: jnp.int32(cap // kb))
    jax.clear_caches()
    unbounded, _, _ = run(poisoned, stacked, kb)
    assert np.isnan(np.asarray(unbounded)).any()
    jax.clear_caches()


# ---- the model through the cache, with several blocks per row ------------------------------------
@pytest.fixture(scope="module")
def models(hf_cases):
    path = hf_cases["qwen3"].path
    return {"per_layer": load_hf(path, dtype=jnp.float32), "stacked": load_hf(path, dtype=jnp.float32,
                                                                             scan_layers=True)}


@pytest.mark.parametrize("layout", ["per_layer", "stacked"])
@pytest.mark.parametrize("kv_block", [3, 5, KV_BLOCK])
def test_model_prefill_decode_in_blocks_matches_uncached(models, layout: str, kv_block: int) -> None:
    """A left-padded batch prefilled in one chunk then decoded token by token through caches read
    3 or 5 slots at a time (16 slots: 5 does not divide them) equals the uncached forward."""
    model = models[layout]
    tokens, mask, positions = batch()
    ref = np.asarray(forward(model, *j(tokens, positions, mask)))
    cache = KVCache.init(model.config, BATCH, 16, kv_block=kv_block)
    assert cache.stacked == (layout == "stacked") and cache.kv_block == kv_block
    logits, cache = cached_step(model, *j(tokens[:, :PREFILL], positions[:, :PREFILL], mask[:, :PREFILL]), cache)
    outs = [np.asarray(logits)]
    for t in range(PREFILL, tokens.shape[1]):
        sl = slice(t, t + 1)
        logits, cache = cached_step(model, *j(tokens[:, sl], positions[:, sl], mask[:, sl]), cache)
        outs.append(np.asarray(logits))
    assert cache.kv_block == kv_block  # the static field survives the forward
    got = np.concatenate(outs, axis=1)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got[mask], ref[mask], atol=1e-5)


def _shapes(jaxpr: jax.extend.core.Jaxpr) -> set[tuple[int, ...]]:
    """Shapes of every value computed anywhere in ``jaxpr`` (sub-jaxprs of scan/while included)."""
    out: set[tuple[int, ...]] = set()
    for eqn in jaxpr.eqns:
        out.update(tuple(v.aval.shape) for v in eqn.outvars if hasattr(v.aval, "shape"))
        for p in eqn.params.values():
            for sub in p if isinstance(p, (tuple, list)) else [p]:
                inner = getattr(sub, "jaxpr", None)
                if isinstance(inner, jax.extend.core.Jaxpr):
                    out |= _shapes(inner)
                elif isinstance(sub, jax.extend.core.Jaxpr):
                    out |= _shapes(sub)
    return out


def test_scanned_model_never_materialises_a_layer_cache(models) -> None:
    """The scan hands the attention the stacked buffer and the layer index: no value of one
    layer's full cache shape ``[B, KV, S, D]`` is computed (slicing the layer out copied it on
    every step), and no score tensor spans the capacity."""
    model = models["stacked"]
    cfg = model.config
    cap = 64
    cache = KVCache.init(cfg, BATCH, cap, kv_block=16)
    tokens, mask, positions = batch()
    tok, pos, valid = j(tokens[:, :1], positions[:, :1], mask[:, :1])
    closed = jax.make_jaxpr(lambda c: model(tok, pos, c, attention_mask=valid)[0])(cache)
    shapes = _shapes(closed.jaxpr)
    assert (cfg.num_layers, BATCH, cfg.num_kv_heads, cap, cfg.head_dim) in shapes  # the carried stack
    assert (BATCH, cfg.num_kv_heads, cap, cfg.head_dim) not in shapes
    assert (BATCH, cfg.num_kv_heads, 16, cfg.head_dim) in shapes  # blocks are read
    assert not any(len(s) >= 4 and s[-1] == cap for s in shapes)  # no [.., capacity] scores
