"""The paged KV cache (``models/paged.py``) and the TPU kernel's wiring (``models/kernels.py``).

Every check runs in f32 against a cache-less forward of the same tokens: ragged prefill, decode
with idle rows, pages handed out in a shuffled order, scanned and unscanned models."""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from prove_jax.models import Qwen3Config, init_model
from prove_jax.models.kernels import choose_kernel, ragged_inputs
from prove_jax.models.paged import PagedKVCache, paged_attention_xla, work_list, write_pages

B, S, PAGE, MAX_PAGES = 3, 40, 8, 8
LENS = [13, 5, 20]  # a ragged prefill, right-padded to T = 20


def _config(scan: bool, head_dim: int = 16) -> Qwen3Config:
    return Qwen3Config(vocab_size=64, hidden_size=64, intermediate_size=128, num_layers=2, num_heads=4,
                       num_kv_heads=2, head_dim=head_dim, dtype="float32", param_dtype="float32", scan_layers=scan)


@jax.jit
def _step(model: Any, tokens: jax.Array, positions: jax.Array, cache: PagedKVCache, mask: jax.Array) -> Any:
    return model(tokens, positions, cache, attention_mask=mask)


def _cache(cfg: Qwen3Config, seed: int = 0, pages_per_block: int = 3) -> PagedKVCache:
    cache = PagedKVCache.init(cfg, B, pages=B * MAX_PAGES + 1, max_pages=MAX_PAGES, page_size=PAGE,
                              pages_per_block=pages_per_block)
    perm = np.random.default_rng(seed).permutation(B * MAX_PAGES + 1)[: B * MAX_PAGES].reshape(B, MAX_PAGES)
    return dataclasses.replace(cache, table=jnp.asarray(perm, jnp.int32))


def _data() -> tuple[np.ndarray, np.ndarray]:
    toks = np.random.default_rng(1).integers(0, 64, (B, S)).astype(np.int32)
    return toks, np.tile(np.arange(S, dtype=np.int32), (B, 1))


@pytest.mark.parametrize("scan", [False, True])
def test_paged_prefill_and_decode_match_a_full_forward(scan: bool) -> None:
    cfg = _config(scan)
    model = init_model(cfg, seed=0)
    toks, pos = _data()
    ref = np.asarray(model(jnp.asarray(toks), jnp.asarray(pos))[0])
    t = max(LENS)
    mask = np.arange(t)[None] < np.array(LENS)[:, None]
    logits, cache = _step(model, jnp.asarray(toks[:, :t]), jnp.asarray(pos[:, :t]), _cache(cfg), jnp.asarray(mask))
    np.testing.assert_array_equal(np.asarray(cache.lens), LENS)  # a row advances by its valid tokens
    for b in range(B):
        np.testing.assert_allclose(np.asarray(logits)[b, : LENS[b]], ref[b, : LENS[b]], atol=2e-5)
    cur = list(LENS)
    for _ in range(S):  # decode: rows finish at S and then idle (masked) while the others go on
        active = np.array([c < S for c in cur])
        if not active.any():
            break
        tt = np.array([[toks[b, min(c, S - 1)]] for b, c in enumerate(cur)], np.int32)
        pp = np.array([[min(c, S - 1)] for c in cur], np.int32)
        logits, cache = _step(model, jnp.asarray(tt), jnp.asarray(pp), cache, jnp.asarray(active[:, None]))
        for b in np.flatnonzero(active):
            np.testing.assert_allclose(np.asarray(logits)[b, 0], ref[b, cur[b]], atol=2e-5)
            cur[b] += 1
    np.testing.assert_array_equal(np.asarray(cache.lens), [S] * B)


def test_padding_and_idle_rows_never_write_a_page() -> None:
    """Invalid tokens are dropped, not written: a page the table names past a row's tokens (here
    another row's page) keeps its contents through a padded prefill and an idle decode step."""
    cfg = _config(False)
    model = init_model(cfg, seed=0)
    toks, pos = _data()
    cache = _cache(cfg)
    sentinel = 7.0
    cache = dataclasses.replace(cache, kv=jax.tree.map(lambda x: jnp.full_like(x, sentinel), cache.kv))
    table = np.asarray(cache.table)
    t = max(LENS)
    mask = np.arange(t)[None] < np.array(LENS)[:, None]
    _, cache = _step(model, jnp.asarray(toks[:, :t]), jnp.asarray(pos[:, :t]), cache, jnp.asarray(mask))
    idle = np.array([[False], [False], [False]])
    _, cache = _step(model, jnp.asarray(toks[:, :1]), jnp.asarray(pos[:, :1]), cache, jnp.asarray(idle))
    written = {int(table[b, j]) for b in range(B) for j in range(-(-LENS[b] // PAGE))}
    for pool in map(np.asarray, cache.kv[0]):  # layer 0's K and V: [pages, KV, page, D]
        for page in range(pool.shape[0]):
            untouched = (pool[page] == sentinel).all()
            assert untouched == (page not in written), page
        # within a written page, slots past the row's tokens are untouched too (row 1: 5 tokens)
        first = pool[table[1, 0]]
        assert (first[:, LENS[1]:] == sentinel).all() and not (first[:, : LENS[1]] == sentinel).any()


def test_work_list_covers_exactly_the_live_rows_pages() -> None:
    rows, jpage, n = work_list(jnp.array([13, 0, 20, 9]), jnp.array([True, True, False, True]), 8, 4)
    n = int(n)
    assert n == 2 + 0 + 2  # row 2 has no valid query: none of its pages is read
    np.testing.assert_array_equal(np.asarray(rows)[:n], [0, 0, 3, 3])
    np.testing.assert_array_equal(np.asarray(jpage)[:n], [0, 1, 0, 1])
    assert (np.asarray(rows)[n:] == 4).all()  # past the end: the sink row
    # units of 3 pages, counted from each row's first page: row 0 (2 pages) one unit, row 3 (5) two
    rows, first, n = work_list(jnp.array([13, 0, 20, 40]), jnp.array([True, True, False, True]), 8, 5, unit=3)
    n = int(n)
    np.testing.assert_array_equal(np.asarray(rows)[:n], [0, 3, 3])
    np.testing.assert_array_equal(np.asarray(first)[:n], [0, 0, 3])


def test_attention_visits_only_the_work_list() -> None:
    """The loop's trip count is the live entries, not the rows x table width: with every row idle
    but one, only that row's new token is written, the idle rows' outputs are zeros (nothing
    read) and the live row is exact."""
    cfg = _config(False)
    rng = np.random.default_rng(2)
    cache = _cache(cfg)
    pool = tuple(jnp.asarray(rng.normal(size=x.shape), jnp.float32) for x in cache.kv[0])  # split K, V
    q = jnp.asarray(rng.normal(size=(B, 1, 4, 16)), jnp.float32)
    k = v = jnp.zeros((B, 1, 2, 16), jnp.float32)
    cache = dataclasses.replace(cache, lens=jnp.array([30, 12, 3], jnp.int32))
    w = cache.begin_write(jnp.zeros((B, 1), jnp.int32), jnp.array([[False], [True], [False]]))
    pool2 = tuple(np.asarray(x) for x in write_pages(pool, k, v, w))
    table = np.asarray(cache.table)
    for new, old in zip(pool2, pool, strict=True):  # only row 1's slot 12 (page 1, offset 4)
        np.testing.assert_array_equal(np.argwhere((new != np.asarray(old)).any(axis=(1, 3))), [[table[1, 1], 4]])
    out = np.asarray(paged_attention_xla(q, tuple(map(jnp.asarray, pool2)), w, 0.25))
    assert int(w.n_entries) == 1 and (out[0] == 0).all() and (out[2] == 0).all()  # one unit: its 2 pages
    # row 1 by hand over its 13 slots (12 held + the one just written)
    kk, vv = (x[table[1, :2]].transpose(0, 2, 1, 3).reshape(16, 2, 16)[:13] for x in pool2)
    qq = np.asarray(q)[1, 0].reshape(2, 2, 16)
    sc = np.einsum("kgd,skd->kgs", qq, kk) * 0.25
    p = np.exp(sc - sc.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_allclose(out[1, 0], np.einsum("kgs,skd->kgd", p, vv).reshape(4, 16), atol=1e-5)


def test_tpu_kernel_inputs_through_the_kernels_reference() -> None:
    """Our packing (valid queries back to back, KV lengths after the write, our table) fed to
    ``ref_ragged_paged_attention`` (the kernel's reference: its signature and semantics) gives
    the XLA path's outputs on every valid query."""
    from jax.experimental.pallas.ops.tpu.ragged_paged_attention.kernel import ref_ragged_paged_attention

    cfg = _config(False)
    rng = np.random.default_rng(3)
    cache = _cache(cfg)
    pool = tuple(jnp.asarray(rng.normal(size=x.shape), jnp.float32) for x in cache.kv[0])  # split K, V
    cache = dataclasses.replace(cache, lens=jnp.array([9, 0, 17], jnp.int32))
    t = 6
    n_valid = np.array([6, 2, 0])
    w = cache.begin_write(jnp.zeros((B, t), jnp.int32), jnp.asarray(np.arange(t)[None] < n_valid[:, None]))
    q = jnp.asarray(rng.normal(size=(B, t, 4, 16)), jnp.float32)
    ours = np.asarray(paged_attention_xla(q, pool, w, 0.25))
    r = ragged_inputs(q, w.table, w.start, w.new_lens)
    # the kernel's combined layout [pages, page, 2 x KV, D]: K at even heads, V at odd ones
    combined = jnp.stack([x.transpose(0, 2, 1, 3) for x in pool], axis=3).reshape(pool[0].shape[0], PAGE, 4, 16)
    ref = ref_ragged_paged_attention(r.q, combined, r.kv_lens, r.table, r.cu_q_lens, r.num_seqs, sm_scale=0.25)
    ref = np.asarray(ref)  # [sum(n_valid), H, D]
    dest = np.asarray(r.dest)
    for b in range(B):
        for i in range(n_valid[b]):
            np.testing.assert_allclose(ref[dest[b, i]], ours[b, i], atol=1e-5)


def test_kernel_choice_names_the_reason() -> None:
    assert choose_kernel("auto", "cpu", head_dim=64, page_size=64, dtype="bfloat16").name == "xla"
    assert choose_kernel("auto", "tpu", head_dim=128, page_size=64, dtype="bfloat16").name == "tpu"
    odd = choose_kernel("auto", "tpu", head_dim=64, page_size=64, dtype="bfloat16")
    assert odd.name == "xla" and "head_dim" in odd.reason
    with pytest.raises(ValueError, match=r"engine\.kernel=tpu needs a TPU"):
        choose_kernel("tpu", "cpu", head_dim=128, page_size=64, dtype="bfloat16")
    with pytest.raises(ValueError, match=r"engine\.kernel"):
        choose_kernel("splash", "tpu", head_dim=128, page_size=64, dtype="bfloat16")


def test_tpu_kernel_compiles_deviceless_for_an_8b_decode() -> None:
    """The ragged paged attention kernel inside a Qwen3-8B-shaped decode step (2 of its 36 layers,
    bf16, 64 rows, pages of 64) compiles for 4 TPU v5p chips from this CPU process; it runs per
    shard (rows over fsdp, KV heads over tensor) and nothing gathers the pool."""
    topology, mesh_spec = "v5p:2x2x1", "fsdp=2,tensor=2"
    topologies = pytest.importorskip("jax.experimental.topologies")
    try:
        topo = topologies.get_topology_desc(platform="tpu", topology_name=topology)
    except Exception as exc:  # no libtpu
        pytest.skip(f"no deviceless TPU topology: {exc}")
    from flax import nnx
    from jax.experimental.compilation_cache import compilation_cache

    from prove_jax.models import abstract_model, make_mesh
    from prove_jax.models.sharding import named_sharding

    cfg = Qwen3Config(vocab_size=151936, hidden_size=4096, intermediate_size=12288, num_layers=2, num_heads=32,
                      num_kv_heads=8, head_dim=128, dtype="bfloat16", param_dtype="bfloat16")
    mesh = make_mesh(mesh_spec, devices=topo.devices)
    rows, pages, max_pages = 64, 64 * 32, 96
    graphdef, params = nnx.split(abstract_model(cfg, mesh))
    shape = jax.eval_shape(lambda: PagedKVCache.init(cfg, rows, pages, max_pages, page_size=64, kernel="tpu"))
    axes = shape.pool_axes()
    place = lambda x, ax: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=named_sharding(mesh, ax, x.shape,  # noqa: E731
                                                                                          cfg.sharding_rules))
    cache = dataclasses.replace(shape, kv=jax.tree.map(lambda x: place(x, axes), shape.kv),
                                lens=place(shape.lens, ("batch",)), table=place(shape.table, ("batch", None)),
                                mesh=mesh, rules=cfg.sharding_rules)

    def decode(params: Any, cache: PagedKVCache, tok: jax.Array) -> Any:
        return nnx.merge(graphdef, params)(tok, cache.lens[:, None], cache)  # logits and the cache, updated in place

    tok = place(jax.ShapeDtypeStruct((rows, 1), jnp.int32), ("batch", None))
    cache_was = jax.config.jax_enable_compilation_cache
    jax.config.update("jax_enable_compilation_cache", False)
    compilation_cache.reset_cache()
    try:
        with jax.sharding.use_abstract_mesh(mesh.abstract_mesh):
            prog = jax.jit(decode, donate_argnums=(1,)).lower(params, cache, tok).compile()  # as the engine
    finally:
        jax.config.update("jax_enable_compilation_cache", cache_was)
        compilation_cache.reset_cache()
    text = prog.as_text()
    assert "ragged_paged_attention" in text or "tpu_custom_call" in text
    # the pool (2 layers x 2048 pages x 64 x 16 combined heads x 128 bf16 = 1 GiB) is never gathered
    pool_bytes = 2 * pages * 64 * 16 * 128 * 2
    temp = prog.memory_analysis().temp_size_in_bytes
    assert temp < pool_bytes / 4, temp
