"""MaxText Orbax checkpoints <-> our models (prove_jax.models.maxtext_io) on tiny random HF models.

The reference is MaxText itself, from the ``maxtext`` wheel of the test install (``--no-deps``: the
modules used need only numpy/jax): ``checkpoint_conversion/utils/param_mapping.py``'s Qwen table
and hooks write the checkpoint from the HF weights (scanned layers stacked at ``param_scan_axis``
as ``to_maxtext.py`` stacks them), saved as MaxText saves (Orbax v1 training Checkpointer, item
``items``, ocdbt + zarr3); our exports are read back the way MaxText's ``load_params_from_path``
reads and turned into HF tensors by the same hooks run backwards.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
import transformers
from models_testlib import HFCase, batch, build_case, forward, j
from orbax.checkpoint import v1 as ocp1

from prove_jax.models import (
    GraniteConfig,
    ModelConfig,
    Qwen3Config,
    UnsupportedConfigError,
    load_hf,
    make_mesh,
)
from prove_jax.models import maxtext_io as mio
from prove_jax.models.families import MaxTextLayout, TensorRule, rules_for
from prove_jax.models.hf_io import CheckpointMismatchError
from prove_jax.models.maxtext_io import load_maxtext, save_maxtext

try:
    from maxtext.checkpoint_conversion.utils import param_mapping as pm
    from maxtext.checkpoint_conversion.utils.tensor_handling import apply_hook_fns
except ImportError:  # pragma: no cover - the test install has it
    pytest.fail("MaxText's param_mapping missing: pip install --no-deps maxtext==0.2.5", pytrace=False)

TOL = 1e-4  # as tests/models/test_parity.py
SCAN_AXIS = 1  # MaxText's default param_scan_axis

# MaxText's per-layer shapes by key suffix, in the axis letters of our tensor tables: DenseGeneral
# kernels are in_features + out_features with heads kept split (maxtext/layers/linears.py,
# attentions.py), norms are [features], the embedding [vocab, emb]. The hooks' fixed transpose
# (``input.T.reshape(target_shape)``) pins which of these orders can give the right logits.
MT_DIMS = {
    "token_embedder-embedding": "v e", "decoder_norm-scale": "e", "logits_dense-kernel": "e v",
    "pre_self_attention_layer_norm-scale": "e", "post_self_attention_layer_norm-scale": "e",
    "self_attention-query-kernel": "e h d", "self_attention-key-kernel": "e k d",
    "self_attention-value-kernel": "e k d", "self_attention-out-kernel": "h d e",
    "self_attention-query-bias": "h d", "self_attention-key-bias": "k d", "self_attention-value-bias": "k d",
    "self_attention-query_norm-scale": "d", "self_attention-key_norm-scale": "d",
    "mlp-wi_0-kernel": "e m", "mlp-wi_1-kernel": "e m", "mlp-wo-kernel": "m e",
}


@dataclasses.dataclass
class Case:
    hf: HFCase
    config: dict[str, Any]  # HF config.json as a dict (what MaxText's tables take)
    state: dict[str, np.ndarray]  # HF tensors (a tied head left out, as save_pretrained does)
    vocab: int  # MaxText's vocab (>= HF's: MaxText pads the embedding)

    def sizes(self) -> dict[str, int]:
        c = self.config
        return {"v": self.vocab, "e": c["hidden_size"], "h": c["num_attention_heads"], "k": c["num_key_value_heads"],
                "d": c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"], "m": c["intermediate_size"]}

    def model_config(self, **runtime: Any) -> ModelConfig:
        return ModelConfig.from_hf_dir(self.hf.path, dtype="float32", param_dtype="float32", **runtime)


def _qwen3_square(root: Path) -> HFCase:
    """Untied Qwen3 whose MLP kernels are square (intermediate == hidden): only values, not shapes,
    tell a transposed MLP kernel from the right one."""
    torch.manual_seed(1)
    cfg = transformers.Qwen3Config(vocab_size=1000, hidden_size=64, intermediate_size=64, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-6,
                                   rope_theta=1e6, max_position_embeddings=256, tie_word_embeddings=False)
    model = transformers.Qwen3ForCausalLM(cfg).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(1.0 + 0.3 * torch.randn_like(p))
    model.config._attn_implementation = "eager"
    path = root / "qwen3_square"
    model.save_pretrained(path)
    return HFCase("qwen3_square", path, model)


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Case]:
    """qwen3_square (untied), qwen3 (tied; MaxText vocab padded to 1024), qwen2 (untied, q/k/v bias)."""
    root = tmp_path_factory.mktemp("mt_hf")
    out = {}
    for hf, vocab in ((_qwen3_square(root), 1000), (build_case("qwen3", root), 1024), (build_case("qwen2", root), 1000)):
        config = hf.model.config.to_dict()
        state = {k: v.detach().numpy().copy() for k, v in hf.model.state_dict().items()}
        if config["tie_word_embeddings"]:
            state.pop("lm_head.weight")
        out[hf.name] = Case(hf, config, state, vocab)
    return out


@pytest.fixture(scope="module")
def reference(cases):
    tokens, mask, positions = batch()
    return {n: c.hf.logits(tokens, mask, positions) for n, c in cases.items()}


def _suffix(mt_key: str) -> str:
    parts = mt_key.split("-")
    return "-".join(parts[3:] if parts[2].startswith("layers") else parts[2:]) if parts[1] == "decoder" else "-".join(parts[1:])


def _shape(case: Case, mt_key: str) -> tuple[int, ...]:
    sizes = case.sizes()
    return tuple(sizes[a] for a in MT_DIMS[_suffix(mt_key)].split())


def maxtext_tree(case: Case, scanned: bool, drop: str | None = None) -> dict[str, Any]:
    """The ``params`` collection MaxText's converter builds from the HF tensors (numpy)."""
    mapping = pm.QWEN_MAXTEXT_TO_HF_PARAM_MAPPING(case.config, None, scanned)
    hooks = pm.QWEN_MAXTEXT_TO_HF_PARAM_HOOK_FN(case.config, None, scanned, saving_to_hf=False)
    flat = {}
    for mt_key, hf_keys in mapping.items():
        names = [hf_keys] if isinstance(hf_keys, str) else hf_keys
        if mt_key == drop or any(n not in case.state for n in names):  # tensors this model lacks
            continue
        shape = _shape(case, mt_key)
        parts = [np.asarray(apply_hook_fns(case.state[n], shape, hooks.get(mt_key))) for n in names]
        # to_maxtext.py: stack at param_scan_axis when the stacked tensor has that axis, else at 0
        flat[mt_key] = parts[0] if isinstance(hf_keys, str) else np.stack(
            parts, axis=SCAN_AXIS if len(shape) + 1 > SCAN_AXIS else 0)
    return mio._nest({tuple(k.split("-")): v for k, v in flat.items()})


def write_like_maxtext(root: Path, params: dict[str, Any], scanned: bool) -> Path:
    """What maxtext's save_weights_to_checkpoint writes: a TrainState at step 0, item ``items``."""
    ctx = ocp1.Context()
    ctx.array.saving.use_ocdbt = True
    ctx.array.saving.use_zarr3 = True
    checkpointer = ocp1.training.Checkpointer(root, context=ctx)
    state = {"step": 0, "params": params, "opt_state": {}}
    checkpointer.save_checkpointables(0, {"items": state}, custom_metadata={"scan_layers": scanned})
    checkpointer.close()
    return root / "0" / "items"


def read_like_maxtext(items: Path, like: dict[str, Any]) -> dict[str, Any]:
    """maxtext's load_params_from_path: a partial v1 load of ``params`` from the step directory."""
    ctx = ocp1.Context()
    ctx.pytree.loading.partial_load = True
    device = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    abstract = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=device), like)
    with ctx:
        restored = ocp1.load(items.parent, {"params": abstract}, checkpointable_name="items")
    return jax.tree.map(np.asarray, restored["params"])


def to_hf(case: Case, params: dict[str, Any], scanned: bool) -> dict[str, np.ndarray]:
    """MaxText's to_huggingface direction: its hooks with saving_to_hf=True, layers unstacked."""
    mapping = pm.QWEN_MAXTEXT_TO_HF_PARAM_MAPPING(case.config, None, scanned)
    hooks = pm.QWEN_MAXTEXT_TO_HF_PARAM_HOOK_FN(case.config, None, scanned, saving_to_hf=True)
    flat = {"-".join(k): v for k, v in mio._flatten(params).items()}
    out = {}
    for mt_key, value in flat.items():
        hf_keys = mapping[mt_key]
        names = [hf_keys] if isinstance(hf_keys, str) else hf_keys
        axis = SCAN_AXIS if value.ndim > SCAN_AXIS else 0
        slices = [value] if isinstance(hf_keys, str) else [np.take(value, i, axis=axis) for i in range(len(names))]
        for name, x in zip(names, slices, strict=True):
            out[name] = np.asarray(apply_hook_fns(x, case.state[name].shape, hooks.get(mt_key)))
    return out


@pytest.fixture(scope="module")
def checkpoints(cases, tmp_path_factory):
    """{(case, scanned): items dir} written like MaxText."""
    root = tmp_path_factory.mktemp("mt_ckpt")
    return {(n, s): write_like_maxtext(root / f"{n}_{'scan' if s else 'unscan'}", maxtext_tree(c, s), s)
            for n, c in cases.items() for s in (True, False)}


def _logits(model: Any) -> np.ndarray:
    tokens, mask, positions = batch()
    return np.asarray(forward(model, *j(tokens, positions, mask)))


def _max_diff(ours: np.ndarray, ref: np.ndarray) -> float:
    _, mask, _ = batch()
    assert np.isfinite(ours).all()
    return float(np.abs(ours - ref)[mask].max())


# --- the table against MaxText's ----------------------------------------------------------------


@pytest.mark.parametrize("family", ["qwen2", "qwen3"])
def test_names_are_maxtexts(family, cases):
    """Every tensor of ours has the MaxText name MaxText's own table gives its HF tensor."""
    case = cases["qwen2" if family == "qwen2" else "qwen3_square"]
    cfg = case.model_config()
    n = cfg.num_layers
    scanned = pm.QWEN_MAXTEXT_TO_HF_PARAM_MAPPING(case.config, None, True)
    unscanned = pm.QWEN_MAXTEXT_TO_HF_PARAM_MAPPING(case.config, None, False)
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
])
def test_load_matches_transformers(name, theirs_scanned, ours_scanned, cases, checkpoints, reference):
    case = cases[name]
    model = load_maxtext(checkpoints[name, theirs_scanned], case.model_config(scan_layers=ours_scanned))
    if ours_scanned:
        assert model.layers.attn.q_proj.shape[0] == 2
    assert np.abs(reference[name]).std() > 100 * TOL
    assert _max_diff(_logits(model), reference[name]) <= TOL


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
    assert _max_diff(_logits(model), reference["qwen3_square"]) > 100 * TOL


# --- export ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "ours_scanned", "theirs_scanned"), [
    ("qwen3_square", False, True), ("qwen3_square", True, False), ("qwen3", True, True), ("qwen2", False, False),
])
def test_export_reads_back_as_the_hf_weights(name, ours_scanned, theirs_scanned, cases, tmp_path):
    """Ours -> save_maxtext -> MaxText's read -> MaxText's HF hooks: the original tensors, bit for bit."""
    case = cases[name]
    model = load_hf(case.hf.path, dtype=jnp.float32, scan_layers=ours_scanned)
    items = save_maxtext(model, tmp_path / "mt", scanned=theirs_scanned)
    assert items == tmp_path / "mt" / "0" / "items"
    like = maxtext_tree(dataclasses.replace(case, vocab=case.config["vocab_size"]), theirs_scanned)  # no padding
    back = to_hf(case, read_like_maxtext(items, like), theirs_scanned)
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


def test_sharded_load_and_export(cases, checkpoints, reference, tmp_path, monkeypatch):
    """On an 8-device mesh: every tensor is restored already sharded (MaxText's axes, our mesh
    axes), lands in our rules' sharding, gives the single-device logits, and exports the same bytes."""
    assert jax.device_count() == 8  # tests/conftest.py forces 8 host devices
    case = cases["qwen3_square"]
    single = load_maxtext(checkpoints["qwen3_square", True], case.model_config(scan_layers=True))
    requests: list[Any] = []
    restore_args = mio.ocp.checkpoint_utils.construct_restore_args
    monkeypatch.setattr(mio.ocp.checkpoint_utils, "construct_restore_args",
                        lambda tree: requests.append(tree) or restore_args(tree))
    for spec, theirs_scanned, ours_scanned in (("fsdp=4,tensor=2", True, True), ("fsdp=2,tensor=4", False, False)):
        mesh = make_mesh(spec)
        model = load_maxtext(checkpoints["qwen3_square", theirs_scanned], case.model_config(scan_layers=ours_scanned),
                             mesh)
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
        assert _max_diff(_logits(model), _logits(single)) <= 1e-5
        assert _max_diff(_logits(model), reference["qwen3_square"]) <= TOL
        items = save_maxtext(model, tmp_path / spec, scanned=theirs_scanned)
        want = maxtext_tree(case, theirs_scanned)
        back = read_like_maxtext(items, want)
        jax.tree.map(np.testing.assert_array_equal, back, want)


# --- refusals ----------------------------------------------------------------------------------------


def test_unsupported_family_and_flags(cases, checkpoints):
    granite = GraniteConfig(**_TINY)
    with pytest.raises(UnsupportedConfigError, match=r"'granite' has no MaxText layout.*\['qwen2', 'qwen3'\]"):
        load_maxtext(checkpoints["qwen2", True], granite)
    biased = Qwen3Config(**_TINY, qkv_bias=True, o_bias=True)
    with pytest.raises(UnsupportedConfigError, match=r"qwen3 decoder block has no tensors for \['qkv_bias', 'o_bias'\]"):
        load_maxtext(checkpoints["qwen3_square", True], biased)


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


# --- the Llama hook: MaxText's query scaling and RoPE reordering ------------------------------------


def test_llama_value_changes_match_maxtexts_hooks():
    """What a family with ``MaxTextLayout(query_scale=True, rope_interleave=True)`` gets (a Llama
    entry) is what MaxText's LLAMA31 hooks do, both ways (q and k; MaxText computes in f32)."""
    h, k, d, e = 4, 2, 32, 64
    cfg = Qwen3Config(vocab_size=100, hidden_size=e, intermediate_size=128, num_layers=1, num_heads=h,
                      num_kv_heads=k, head_dim=d, qk_norm=False)
    layout = MaxTextLayout("llama2", query_scale=True, rope_interleave=True)
    to_mt = pm.LLAMA31_MAXTEXT_TO_HF_PARAM_HOOK_FN({"num_hidden_layers": 1, "head_dim": d}, None, False, saving_to_hf=False)
    to_hf_hooks = pm.LLAMA31_MAXTEXT_TO_HF_PARAM_HOOK_FN({"num_hidden_layers": 1, "head_dim": d}, None, False,
                                                          saving_to_hf=True)
    rng = np.random.default_rng(0)
    for jax_path, heads, key in (("layers.{i}.attn.q_proj", h, "query"), ("layers.{i}.attn.k_proj", k, "key")):
        rule = TensorRule(jax_path, "x", f"{'h' if key == 'query' else 'k'} d e", f"({'h' if key == 'query' else 'k'} d) e")
        t = mio._Tensor(rule, mio.MAXTEXT_NAMES[jax_path], ("x",), (("x",),), False, False)
        hf = rng.standard_normal((heads * d, e)).astype(np.float32)
        mt_key = f"params-decoder-layers_0-self_attention-{key}-kernel"
        want = np.asarray(apply_hook_fns(hf, (e, heads, d), to_mt[mt_key]))
        ours = hf.reshape(heads, d, e)
        (got,) = mio._export_fn(t, layout, cfg, SCAN_AXIS, jnp.float32)(jnp.asarray(ours))
        np.testing.assert_array_equal(np.asarray(got), want)
        (back,) = mio._import_fn(t, layout, cfg, SCAN_AXIS, jnp.float32)(jnp.asarray(want))
        np.testing.assert_array_equal(np.asarray(back).reshape(heads * d, e),
                                      np.asarray(apply_hook_fns(want, hf.shape, to_hf_hooks[mt_key])))
        np.testing.assert_allclose(np.asarray(back), ours, rtol=1e-6)


def test_llama_layout_refuses_qk_norm(monkeypatch):
    """No MaxText block folds the query scale or reorders RoPE under a qk-norm: refused, not guessed."""
    real = mio.model_family
    layout = MaxTextLayout("llama2", query_scale=True, rope_interleave=True)
    monkeypatch.setattr(mio, "model_family", lambda name: dataclasses.replace(real(name), maxtext=layout))
    with pytest.raises(UnsupportedConfigError, match="qk_norm"):
        mio.maxtext_layout(Qwen3Config(**_TINY))
