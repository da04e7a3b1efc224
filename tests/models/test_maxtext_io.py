"""MaxText Orbax checkpoints <-> our models (prove_jax.models.maxtext_io) on tiny random HF models.

The reference is MaxText itself (maxtext_testlib): its own tables and hooks write the checkpoints
we load and read back the ones we write, for Qwen2.5, Qwen3 and Llama (tied and untied, scanned
and unscanned), with logits checked against transformers.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from maxtext_testlib import (
    SCAN_AXIS,
    TOL,
    Case,
    apply_hook_fns,
    build_cases,
    logits,
    max_diff,
    maxtext_tree,
    pm,
    read_like_maxtext,
    to_hf,
    write_like_maxtext,
)
from models_testlib import batch

from prove_jax.models import (
    GraniteConfig,
    LlamaConfig,
    Qwen3Config,
    UnsupportedConfigError,
    load_hf,
    make_mesh,
)
from prove_jax.models import maxtext_io as mio
from prove_jax.models.families import MaxTextLayout, rules_for
from prove_jax.models.hf_io import CheckpointMismatchError
from prove_jax.models.maxtext_io import load_maxtext, save_maxtext


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Case]:
    return build_cases(tmp_path_factory.mktemp("mt_hf"))


@pytest.fixture(scope="module")
def reference(cases):
    tokens, mask, positions = batch()
    return {n: c.hf.logits(tokens, mask, positions) for n, c in cases.items()}


@pytest.fixture(scope="module")
def checkpoints(cases, tmp_path_factory):
    """{(case, scanned): items dir} written like MaxText."""
    root = tmp_path_factory.mktemp("mt_ckpt")
    return {(n, s): write_like_maxtext(root / f"{n}_{'scan' if s else 'unscan'}", maxtext_tree(c, s), s)
            for n, c in cases.items() for s in (True, False)}


# --- the table against MaxText's ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["qwen2", "qwen3_square", "llama_untied"])
def test_names_are_maxtexts(name, cases):
    """Every tensor of ours has the MaxText name MaxText's own table gives its HF tensor (for Llama
    the table holds nothing else)."""
    case = cases[name]
    cfg = case.model_config()
    n = cfg.num_layers
    scanned, unscanned = case.mapping(True), case.mapping(False)
    if case.table == "LLAMA31":
        assert len(scanned) == len(rules_for(cfg)) and len(unscanned) == 3 + n * (len(rules_for(cfg)) - 3)
    for rule in rules_for(cfg):
        mt = mio.MAXTEXT_NAMES[rule.jax].path.replace("/", "-")
        if rule.per_layer:
            assert scanned[f"params-decoder-layers-{mt}"] == [rule.hf_key(i) for i in range(n)]
            assert [unscanned[f"params-decoder-layers_{i}-{mt}"] for i in range(n)] == [rule.hf_key(i) for i in range(n)]
        else:
            assert scanned[f"params-{mt}"] == rule.hf
        assert sorted(mio.MAXTEXT_NAMES[rule.jax].dims.split()) == sorted(rule.jax_dims.split())


# --- import -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "theirs_scanned", "ours_scanned"), [
    ("qwen3_square", True, True), ("qwen3_square", False, False), ("qwen3_square", True, False),
    ("qwen3_square", False, True), ("qwen3", True, True), ("qwen2", True, True), ("qwen2", False, False),
    ("llama_untied", True, True), ("llama_untied", False, False), ("llama_untied", True, False),
    ("llama_untied", False, True), ("llama", True, True), ("llama", False, False),
])
def test_load_matches_transformers(name, theirs_scanned, ours_scanned, cases, checkpoints, reference):
    case = cases[name]
    model = load_maxtext(checkpoints[name, theirs_scanned], case.model_config(scan_layers=ours_scanned))
    if ours_scanned:
        assert model.layers.attn.q_proj.shape[0] == 2
    assert np.abs(reference[name]).std() > 100 * TOL
    assert max_diff(logits(model), reference[name]) <= TOL


def test_load_accepts_root_and_step_dirs(checkpoints):
    items = checkpoints["qwen2", True]
    for path in (items, items.parent, items.parent.parent):
        assert mio.resolve_items_dir(path) == mio.resolve_items_dir(items)
    with pytest.raises(FileNotFoundError, match="no MaxText checkpoint"):
        mio.resolve_items_dir(items.parent.parent.parent)


_TINY = dict(vocab_size=1000, hidden_size=64, intermediate_size=64, num_layers=2, num_heads=4, num_kv_heads=2,
             head_dim=32)


def _untransposed(jax_path: str) -> dict[str, mio.MaxTextName]:
    """The table with ``jax_path`` stored in our axis order (its transpose removed)."""
    table = dict(mio.MAXTEXT_NAMES)
    rule = next(r for r in rules_for(Qwen3Config(**_TINY)) if r.jax == jax_path)
    table[jax_path] = dataclasses.replace(table[jax_path], dims=rule.jax_dims)
    return table


_TRANSPOSED = [r.jax for r in rules_for(Qwen3Config(**_TINY))
               if mio.MAXTEXT_NAMES[r.jax].dims.split() != r.jax_dims.split()]


@pytest.mark.parametrize("jax_path", _TRANSPOSED)
def test_a_removed_transpose_is_caught(jax_path, cases, checkpoints, reference, monkeypatch):
    """Each transpose in the table matters: without it the load is refused (shape) or, for the
    square MLP kernels, the logits are wrong."""
    assert len(_TRANSPOSED) == 8  # q, k, v, o, gate, up, down, lm_head
    monkeypatch.setattr(mio, "MAXTEXT_NAMES", _untransposed(jax_path))
    cfg = cases["qwen3_square"].model_config()
    if ".mlp." not in jax_path:
        with pytest.raises(CheckpointMismatchError, match="stored shape"):
            load_maxtext(checkpoints["qwen3_square", True], cfg)
        return
    model = load_maxtext(checkpoints["qwen3_square", True], cfg)  # square: the shapes cannot tell
    assert max_diff(logits(model), reference["qwen3_square"]) > 100 * TOL


# --- export ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "ours_scanned", "theirs_scanned"), [
    ("qwen3_square", False, True), ("qwen3_square", True, False), ("qwen3", True, True), ("qwen2", False, False),
    ("llama_untied", False, True), ("llama_untied", True, False), ("llama", True, True), ("llama", False, False),
])
def test_export_reads_back_as_the_hf_weights(name, ours_scanned, theirs_scanned, cases, tmp_path):
    """Ours -> save_maxtext -> MaxText's read: what MaxText's converter writes from the HF weights,
    bit for bit; -> MaxText's HF hooks: the original tensors, bit for bit (for Llama because these
    head_dims' square roots are powers of two: at 128 MaxText's own f32 round trip moves q by an ulp)."""
    case = cases[name]
    model = load_hf(case.hf.path, dtype=jnp.float32, scan_layers=ours_scanned)
    items = save_maxtext(model, tmp_path / "mt", scanned=theirs_scanned)
    assert items == tmp_path / "mt" / "0" / "items"
    like = maxtext_tree(dataclasses.replace(case, vocab=case.config["vocab_size"]), theirs_scanned)  # no padding
    stored = read_like_maxtext(items, like)
    jax.tree.map(np.testing.assert_array_equal, stored, like)
    back = to_hf(case, stored, theirs_scanned)
    assert sorted(back) == sorted(case.state)
    for key, want in case.state.items():
        assert back[key].dtype == want.dtype and np.array_equal(back[key], want), key
    with pytest.raises(FileExistsError):
        save_maxtext(model, tmp_path / "mt")


def test_export_then_import_in_bf16(cases, tmp_path, reference):
    """A bf16 MaxText checkpoint (the converter's default dtype) of an f32 model loads back."""
    case = cases["qwen2"]
    model = load_hf(case.hf.path, dtype=jnp.float32)
    items = save_maxtext(model, tmp_path / "mt", scanned=True, dtype=jnp.bfloat16)
    assert mio._stored_params(items)[("decoder", "layers", "mlp", "wo", "kernel")].dtype == jnp.bfloat16
    again = load_maxtext(items, case.model_config())
    np.testing.assert_array_equal(np.asarray(again.layers[1].mlp.down_proj[...]),
                                  np.asarray(model.layers[1].mlp.down_proj[...].astype(jnp.bfloat16)).astype(np.float32))


# --- sharded ----------------------------------------------------------------------------------------


def _spec(sharding: Any) -> tuple[Any, ...]:
    spec = list(sharding.spec)
    while spec and spec[-1] is None:
        spec.pop()
    return tuple(spec)


@pytest.mark.parametrize("name", ["qwen3_square", "llama_untied"])
def test_sharded_load_and_export(name, cases, checkpoints, reference, tmp_path, monkeypatch):
    """On an 8-device mesh: every tensor is restored already sharded (MaxText's axes, our mesh
    axes), lands in our rules' sharding, gives the single-device logits, and exports the same bytes."""
    assert jax.device_count() == 8  # tests/conftest.py forces 8 host devices
    case = cases[name]
    single = load_maxtext(checkpoints[name, True], case.model_config(scan_layers=True))
    requests: list[Any] = []
    restore_args = mio.ocp.checkpoint_utils.construct_restore_args
    monkeypatch.setattr(mio.ocp.checkpoint_utils, "construct_restore_args",
                        lambda tree: requests.append(tree) or restore_args(tree))
    for spec, theirs_scanned, ours_scanned in (("fsdp=4,tensor=2", True, True), ("fsdp=2,tensor=4", False, False)):
        mesh = make_mesh(spec)
        model = load_maxtext(checkpoints[name, theirs_scanned], case.model_config(scan_layers=ours_scanned), mesh)
        got = mio._flatten(requests[-1])
        if theirs_scanned:  # [e, L, h, d] restored as (fsdp, -, tensor)
            q = got[("params", "params", "decoder", "layers", "self_attention", "query", "kernel")]
            assert _spec(q.sharding) == ("fsdp", None, "tensor")
            assert _spec(model.layers.attn.q_proj[...].sharding) == (None, "tensor", None, "fsdp")
        else:  # [m, e] restored as (tensor, fsdp)
            wo = got[("params", "params", "decoder", "layers_1", "mlp", "wo", "kernel")]
            assert _spec(wo.sharding) == ("tensor", "fsdp")
            assert _spec(model.layers[1].mlp.down_proj[...].sharding) == ("fsdp", "tensor")
        assert len(model.embed_tokens[...].sharding.device_set) == 8
        assert max_diff(logits(model), logits(single)) <= 1e-5
        assert max_diff(logits(model), reference[name]) <= TOL
        items = save_maxtext(model, tmp_path / spec, scanned=theirs_scanned)
        want = maxtext_tree(case, theirs_scanned)
        back = read_like_maxtext(items, want)
        jax.tree.map(np.testing.assert_array_equal, back, want)


# --- refusals ----------------------------------------------------------------------------------------


def test_unsupported_family_and_flags(cases, checkpoints):
    granite = GraniteConfig(**_TINY)
    with pytest.raises(UnsupportedConfigError, match=r"'granite' has no MaxText layout.*\['llama', 'qwen2', 'qwen3'\]"):
        load_maxtext(checkpoints["qwen2", True], granite)
    biased = Qwen3Config(**_TINY, qkv_bias=True, o_bias=True)
    with pytest.raises(UnsupportedConfigError, match=r"qwen3 decoder block has no tensors for \['qkv_bias', 'o_bias'\]"):
        load_maxtext(checkpoints["qwen3_square", True], biased)
    # MaxText's llama2 block: Attention without use_bias_in_projections, MlpBlock without use_bias
    llama_bias = LlamaConfig(**_TINY, qkv_bias=True, o_bias=True, mlp_bias=True)  # models_testlib's llama_bias
    with pytest.raises(UnsupportedConfigError,
                       match=r"llama2 decoder block has no tensors for \['qkv_bias', 'o_bias', 'mlp_bias'\]"):
        load_maxtext(checkpoints["llama_untied", True], llama_bias)
    with pytest.raises(UnsupportedConfigError, match=r"llama2 decoder block has no tensors for \['mlp_bias'\]"):
        mio.maxtext_layout(LlamaConfig(**_TINY, mlp_bias=True))


def test_missing_unexpected_and_misshapen_tensors_are_named(cases, checkpoints, tmp_path):
    case = cases["qwen3_square"]
    cfg = case.model_config()
    items = write_like_maxtext(tmp_path / "a", maxtext_tree(case, True, drop="params-decoder-layers-self_attention-key_norm-scale"), True)
    with pytest.raises(CheckpointMismatchError, match="missing params/params/decoder/layers/self_attention/key_norm/"
                       r"scale \(our layers.{i}.attn.k_norm.weight, HF model.layers.{i}.self_attn.k_norm.weight\)"):
        load_maxtext(items, cfg)
    with pytest.raises(CheckpointMismatchError, match=r"unexpected \['params/params/decoder/logits_dense/kernel'\].*untied"):
        load_maxtext(checkpoints["qwen3_square", True], cfg.replace(tie_word_embeddings=True))
    with pytest.raises(CheckpointMismatchError, match="param_scan_axis=0"):
        load_maxtext(checkpoints["qwen3_square", True], cfg, scan_axis=0)
    with pytest.raises(CheckpointMismatchError, match="layers_1/self_attention/query/kernel: stored shape"):
        load_maxtext(checkpoints["qwen3_square", False], cfg.replace(num_heads=2, num_kv_heads=1))


# --- Llama: MaxText's query scaling and RoPE reordering ------------------------------------------


@pytest.mark.parametrize("d", [32, 128])
def test_llama_value_changes_match_maxtexts_hooks(d):
    """The llama registration's value changes on q and k are MaxText's LLAMA31 hooks, bit for bit
    both ways, also where the f32 scale constants are inexact (head_dim 32, Llama's 128)."""
    h, k, e = 4, 2, 64
    cfg = LlamaConfig(vocab_size=100, hidden_size=e, intermediate_size=128, num_layers=1, num_heads=h,
                      num_kv_heads=k, head_dim=d)
    layout = mio.maxtext_layout(cfg)
    assert layout == MaxTextLayout("llama2", query_scale=True, rope_interleave=True,
                                   without=("qkv_bias", "o_bias", "mlp_bias"))
    hf_cfg = {"num_hidden_layers": 1, "head_dim": d}
    to_mt = pm.LLAMA31_MAXTEXT_TO_HF_PARAM_HOOK_FN(hf_cfg, None, False, saving_to_hf=False)
    to_hf_hooks = pm.LLAMA31_MAXTEXT_TO_HF_PARAM_HOOK_FN(hf_cfg, None, False, saving_to_hf=True)
    rng = np.random.default_rng(0)
    for rule in rules_for(cfg):
        if mio.MAXTEXT_NAMES[rule.jax].role is None:
            continue
        heads = h if rule.jax.endswith("q_proj") else k
        t = mio._Tensor(rule, mio.MAXTEXT_NAMES[rule.jax], ("x",), (("x",),), False, False)
        hf = rng.standard_normal((heads * d, e)).astype(np.float32)
        mt_key = f"params-decoder-layers_0-{mio.MAXTEXT_NAMES[rule.jax].path.replace('/', '-')}"
        want = np.asarray(apply_hook_fns(hf, (e, heads, d), to_mt[mt_key]))
        ours = hf.reshape(heads, d, e)
        (got,) = mio._export_fn(t, layout, cfg, SCAN_AXIS, jnp.float32)(jnp.asarray(ours))
        np.testing.assert_array_equal(np.asarray(got), want)
        (back,) = mio._import_fn(t, layout, cfg, SCAN_AXIS, jnp.float32)(jnp.asarray(want))
        np.testing.assert_array_equal(np.asarray(back).reshape(heads * d, e),
                                      np.asarray(apply_hook_fns(want, hf.shape, to_hf_hooks[mt_key])))
        np.testing.assert_allclose(np.asarray(back), ours, rtol=1e-6)


@pytest.mark.parametrize("flag", ["query_scale", "rope_interleave"])
def test_llama_without_query_scale_or_rope_interleave_fails(flag, cases, checkpoints, reference, tmp_path,
                                                            monkeypatch):
    """Each of the llama layout's value changes matters: without it MaxText's checkpoint gives
    wrong logits and our export is not what MaxText's converter writes."""
    real = mio.model_family
    layout = dataclasses.replace(real("llama").maxtext, **{flag: False})
    monkeypatch.setattr(mio, "model_family",
                        lambda name: dataclasses.replace(real(name), maxtext=layout) if name == "llama" else real(name))
    case = cases["llama_untied"]
    model = load_maxtext(checkpoints["llama_untied", True], case.model_config())
    assert max_diff(logits(model), reference["llama_untied"]) > 100 * TOL
    items = save_maxtext(load_hf(case.hf.path, dtype=jnp.float32), tmp_path / "mt", scanned=True)
    want = maxtext_tree(case, True)
    stored = read_like_maxtext(items, want)["params"]["decoder"]["layers"]["self_attention"]
    changed = ["query"] if flag == "query_scale" else ["query", "key"]
    for name in ("query", "key", "value"):
        same = np.array_equal(stored[name]["kernel"], want["params"]["decoder"]["layers"]["self_attention"][name]["kernel"])
        assert same == (name not in changed), name


def test_llama_layout_refuses_qk_norm(monkeypatch):
    """No MaxText block folds the query scale or reorders RoPE under a qk-norm: refused, not guessed."""
    real = mio.model_family
    monkeypatch.setattr(mio, "model_family", lambda name: dataclasses.replace(real(name), maxtext=real("llama").maxtext))
    with pytest.raises(UnsupportedConfigError, match="qk_norm"):
        mio.maxtext_layout(Qwen3Config(**_TINY))
