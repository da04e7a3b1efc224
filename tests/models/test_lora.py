"""LoRA / QLoRA on the decoder (prove_jax/models/lora.py): a fresh adapter changes nothing, a merge
equals the adapter, the PEFT export loads in peft with our logits, QLoRA stays near the float model.

Tiny random qwen2 (untied, q/k/v bias) and qwen3 (tied, qk-norm, head_dim != hidden / heads, so
``o_proj`` has two input axes) checkpoints as in test_parity.py, f32 throughout.
"""

from __future__ import annotations

import copy

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx
from models_testlib import batch, build_case, forward, j, prefill_decode

from prove_jax.config import ConfigError, LaunchConfig, check, load
from prove_jax.models import load_hf, save_hf
from prove_jax.models.lora import (
    PEFT_CONFIG,
    PROJECTIONS,
    LoraConfig,
    adapter_state,
    apply_lora,
    merge_lora,
    save_merged,
    save_peft,
    without_adapters,
)

TOL = 1e-4  # test_parity.py's bound against transformers (f32, eager attention)
NAMES = ("qwen2", "qwen3")
LORA = LoraConfig(rank=4, alpha=8.0, targets="all_linear")


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    root = tmp_path_factory.mktemp("lora_hf")
    return {n: build_case(n, root, seed=3) for n in NAMES}


def _logits(model) -> np.ndarray:
    tokens, mask, positions = batch()
    return np.asarray(forward(model, *j(tokens, positions, mask)))


def _randomise(model, seed: int = 0, scale: float = 0.2) -> None:
    """Non-zero A and B, so an adapter that is lost or misplaced shows in the logits."""
    state = adapter_state(model)
    leaves, tree = jax.tree.flatten(state)
    keys = jax.random.split(jax.random.key(seed), len(leaves))
    new = [scale * jax.random.normal(k, x.shape, x.dtype) for k, x in zip(keys, leaves, strict=True)]
    nnx.update(model, jax.tree.unflatten(tree, new))


def _masked_max(a: np.ndarray, b: np.ndarray) -> float:
    mask = batch()[1]
    return float(np.abs(a - b)[mask].max())


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("scan", [False, True])
def test_a_fresh_adapter_leaves_the_logits_unchanged(cases, name, scan):
    base = load_hf(cases[name].path, dtype=jnp.float32, scan_layers=scan)
    adapted = apply_lora(base, LORA)
    layers = base.config.num_layers
    n = len(jax.tree.leaves(adapter_state(adapted)))
    assert n == 2 * len(PROJECTIONS) * (1 if scan else layers)
    assert not jax.tree.leaves(adapter_state(base))  # the argument is left as it was
    np.testing.assert_array_equal(_logits(adapted), _logits(base))  # B = 0: exactly
    _randomise(adapted)
    assert _masked_max(_logits(adapted), _logits(base)) > 100 * TOL  # and the adapters are live


def test_scanned_and_unrolled_models_get_the_same_adapters(cases):
    """Same seed, same numbers per layer: a run may switch scan_layers and keep its adapters."""
    plain = apply_lora(load_hf(cases["qwen3"].path, dtype=jnp.float32), LORA)
    scanned = apply_lora(load_hf(cases["qwen3"].path, dtype=jnp.float32, scan_layers=True), LORA)
    a_plain = np.stack([np.asarray(layer.attn.q_proj_lora_a[...]) for layer in plain.layers])
    np.testing.assert_array_equal(np.asarray(scanned.layers.attn.q_proj_lora_a[...]), a_plain)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(("scan", "quant"), [(False, None), (True, None), (False, "nf4")])
def test_a_merged_model_equals_the_adapted_one(cases, name, scan, quant):
    adapted = apply_lora(load_hf(cases[name].path, dtype=jnp.float32, scan_layers=scan),
                         LoraConfig(rank=4, alpha=8.0, quant=quant))
    _randomise(adapted, seed=1)
    merged = merge_lora(adapted)
    assert not jax.tree.leaves(adapter_state(merged))
    assert all(isinstance(v, nnx.Param) for _, v in nnx.to_flat_state(nnx.state(merged)))
    assert _masked_max(_logits(merged), _logits(adapted)) <= 1e-5


@pytest.mark.parametrize("scan", [False, True])
def test_an_adapted_model_decodes_with_a_kv_cache_like_its_full_forward(cases, scan):
    """The cached path (the engine's) goes through the same projections, adapters included."""
    adapted = apply_lora(load_hf(cases["qwen3"].path, dtype=jnp.float32, scan_layers=scan),
                         LoraConfig(rank=4, alpha=8.0, quant="int8"))
    _randomise(adapted, seed=5)
    tokens, mask, positions = batch()
    assert _masked_max(prefill_decode(adapted, tokens, mask, positions), _logits(adapted)) <= 1e-5


@pytest.mark.parametrize("name", NAMES)
def test_the_peft_adapter_and_the_merged_export_load_in_transformers_with_our_logits(cases, name, tmp_path):
    peft = pytest.importorskip("peft")
    import torch
    import transformers

    tokens, mask, positions = batch()
    adapted = apply_lora(load_hf(cases[name].path, dtype=jnp.float32),
                         LoraConfig(rank=4, alpha=12.0, targets=("q_proj", "o_proj", "up_proj", "down_proj")))
    _randomise(adapted, seed=2)
    ours = _logits(adapted)
    save_peft(adapted, tmp_path / "adapter", base_model_name_or_path=str(cases[name].path))
    assert sorted(p.name for p in (tmp_path / "adapter").iterdir()) == [PEFT_CONFIG, "adapter_model.safetensors"]
    hf = peft.PeftModel.from_pretrained(copy.deepcopy(cases[name].model), tmp_path / "adapter").eval()
    loaded = [n for n, _ in hf.named_parameters() if "lora_B" in n]
    assert len(loaded) == 4 * adapted.config.num_layers
    case = copy.copy(cases[name])
    case.model = hf
    theirs = case.logits(tokens, mask, positions)
    assert _masked_max(theirs, cases[name].logits(tokens, mask, positions)) > 100 * TOL  # adapters matter
    assert _masked_max(ours, theirs) <= TOL

    save_merged(adapted, tmp_path / "merged")  # side files come from the source the base was loaded from
    case.model = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "merged", dtype=torch.float32).eval()
    case.model.config._attn_implementation = "eager"
    assert _masked_max(ours, case.logits(tokens, mask, positions)) <= TOL


def test_save_hf_refuses_a_model_with_adapters_or_codes(cases, tmp_path):
    """save_hf writes Params by the tensor table: adapters would be dropped without a word."""
    base = load_hf(cases["qwen2"].path, dtype=jnp.float32)
    for cfg in (LORA, LoraConfig(rank=2, quant="int8")):
        with pytest.raises(ValueError, match="merge_lora"):
            save_hf(apply_lora(base, cfg), tmp_path / "x")
    save_hf(merge_lora(apply_lora(base, LORA)), tmp_path / "ok")


# The quantisation bound. Weights: relative RMS error of the dequantised projections, int8 absmax
# per row ~ absmax / (127 sqrt 12) ~ 0.6 % of a Gaussian row's RMS, NF4 (16 levels) ~ 9 %; measured
# 0.60 % / 9.1 % here. Logits: their relative RMS deviation from the unquantised adapted model stays
# below that weight error (measured 0.44-0.68 of it); a broken dequantisation (wrong scale axis,
# codes read as values) is off by O(1) in both.
WEIGHT_ERROR = {"int8": 0.01, "nf4": 0.12}
LOGIT_OVER_WEIGHT_ERROR = 1.5


def _rel_rms(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.sqrt(np.sum((a - b) ** 2) / np.sum(b**2)))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("quant", ["int8", "nf4"])
def test_qlora_stays_near_the_float_adapted_model(cases, name, quant):
    base = load_hf(cases[name].path, dtype=jnp.float32)
    exact = apply_lora(base, LORA)
    qlora = apply_lora(base, LoraConfig(rank=4, alpha=8.0, quant=quant))
    _randomise(exact, seed=4)
    nnx.update(qlora, adapter_state(exact))  # the same adapters on a quantised base
    codes = [v for _, v in nnx.to_flat_state(nnx.state(qlora)) if v.dtype in (jnp.int8, jnp.uint4)]
    assert len(codes) == len(PROJECTIONS) * base.config.num_layers
    assert not hasattr(qlora.layers[0].attn, "q_proj")  # the float weight is gone, not kept beside
    dequantised = merge_lora(without_adapters(qlora))  # the frozen base, as floats
    pairs = [(np.asarray(getattr(getattr(lq, owner), n)[...]), np.asarray(getattr(getattr(lb, owner), n)[...]))
             for lq, lb in zip(dequantised.layers, base.layers, strict=True) for n, (owner, _) in PROJECTIONS.items()]
    w_err = _rel_rms(np.concatenate([q.ravel() for q, _ in pairs]), np.concatenate([b.ravel() for _, b in pairs]))
    assert 0 < w_err <= WEIGHT_ERROR[quant]
    mask = batch()[1]
    ref, got = _logits(exact)[mask], _logits(qlora)[mask]
    assert 0 < _rel_rms(got, ref) <= LOGIT_OVER_WEIGHT_ERROR * w_err


def test_the_lora_section_loads_from_yaml_and_is_checked(tmp_path):
    f = tmp_path / "run.yaml"
    f.write_text("lora:\n  rank: 8\n  alpha: 16\n  targets: [q_proj, v_proj]\n  quant: nf4\n")
    cfg = load(LaunchConfig, f)
    assert cfg.lora == LoraConfig(rank=8, alpha=16.0, targets=("q_proj", "v_proj"), quant="nf4")
    assert cfg.lora.target_names == ("q_proj", "v_proj")
    assert load(LaunchConfig, None, ["lora.targets=mlp"]).lora.target_names == ("gate_proj", "up_proj", "down_proj")
    assert not LaunchConfig().lora.enabled  # default: full fine-tuning
    for bad, needle in [("lora.quant=int4", "quant"), ("lora.targets=[qproj]", "unknown projection"),
                        ("lora.dropout=0.1", "dropout"), ("lora.rank=-1", "rank")]:
        with pytest.raises(ConfigError, match=needle):
            load(LaunchConfig, None, [bad])
    check(cfg)  # the stages train LoRA runs (tests/pipeline/test_lora_run.py)
