"""The ``llama`` family beyond the shared parity/export tables: llama3 RoPE scaling (frequencies
equal to transformers', and a test that fails when the rescaling is dropped), the real Llama-3.1
and SmolLM2 ``config.json`` shapes, the variants the shared cases do not cover, and the refusals
(sliding window, other RoPE types)."""

from __future__ import annotations

import json
import shutil

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
import transformers
from flax import nnx
from models_testlib import COMMON, LLAMA3_ROPE, batch, build_case, forward, j
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

from prove_jax.models import (
    LlamaConfig,
    ModelConfig,
    UnsupportedConfigError,
    abstract_model,
    load_hf,
    save_hf,
)
from prove_jax.models.config import model_family
from prove_jax.models.layers import rope_inv_freq

TOL = 1e-4  # test_parity's

# config.json of meta-llama/Llama-3.1-8B-Instruct and HuggingFaceTB/SmolLM2-135M-Instruct, the keys
# transformers reads (the published files, minus generation/tooling keys).
LLAMA31_8B = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "attention_bias": False, "mlp_bias": False,
    "bos_token_id": 128000, "eos_token_id": [128001, 128008, 128009], "head_dim": 128, "hidden_act": "silu",
    "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 131072, "num_attention_heads": 32,
    "num_hidden_layers": 32, "num_key_value_heads": 8, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
    "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "rope_theta": 500000.0, "tie_word_embeddings": False, "vocab_size": 128256,
}
SMOLLM2_135M = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "attention_bias": False, "mlp_bias": False,
    "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 2, "head_dim": 64, "hidden_act": "silu",
    "hidden_size": 576, "initializer_range": 0.041666666666666664, "intermediate_size": 1536,
    "max_position_embeddings": 8192, "num_attention_heads": 9, "num_hidden_layers": 30, "num_key_value_heads": 3,
    "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_interleaved": False, "rope_scaling": None,
    "rope_theta": 100000, "tie_word_embeddings": True, "vocab_size": 49152,
}


def _param_count(cfg: ModelConfig) -> int:
    state = nnx.state(abstract_model(cfg), nnx.Param)
    return sum(int(np.prod(v.shape)) for v in jax.tree.leaves(state))


def test_llama31_and_smollm2_configs():
    """The published configs read as what they are (parameter counts of the model cards)."""
    llama = ModelConfig.from_hf_dict(LLAMA31_8B)
    assert isinstance(llama, LlamaConfig)
    assert (llama.rope_type, llama.rope_factor, llama.rope_low_freq_factor, llama.rope_high_freq_factor,
            llama.rope_original_max_position_embeddings, llama.rope_theta) == ("llama3", 8.0, 1.0, 4.0, 8192, 5e5)
    assert (llama.num_kv_heads, llama.head_dim, llama.eos_token_id) == (8, 128, (128001, 128008, 128009))
    assert not (llama.qkv_bias or llama.o_bias or llama.mlp_bias or llama.tie_word_embeddings or llama.qk_norm)
    assert _param_count(llama) == 8_030_261_248
    smol = ModelConfig.from_hf_dict(SMOLLM2_135M)
    assert (smol.num_layers, smol.hidden_size, smol.num_heads, smol.num_kv_heads, smol.head_dim) == (30, 576, 9, 3, 64)
    assert smol.tie_word_embeddings and smol.rope_type == "default" and smol.rope_factor is None
    assert _param_count(smol) == 134_515_008
    # Written back, both read the same (legacy rope_scaling and the 5.x rope_parameters agree).
    for cfg in (llama, smol, llama.replace(qkv_bias=True, o_bias=True, mlp_bias=True)):
        hf = cfg.to_hf_dict()
        assert ModelConfig.from_hf_dict(hf) == cfg
        assert ModelConfig.from_hf_dict({**hf, "rope_scaling": None}) == cfg
    hf = llama.to_hf_dict()
    assert hf["rope_scaling"] == LLAMA31_8B["rope_scaling"]
    assert transformers.LlamaConfig(**hf).rope_parameters == {**hf["rope_scaling"], "rope_theta": 5e5}


def test_llama3_inverse_frequencies_equal_transformers():
    """All three bands occur (kept, blended, divided by factor) and each equals transformers'."""
    hf_cfg = transformers.LlamaConfig(**COMMON, **LLAMA3_ROPE)
    ref, attention_factor = ROPE_INIT_FUNCTIONS["llama3"](hf_cfg)
    assert attention_factor == 1.0  # llama3 does not scale cos/sin
    cfg = ModelConfig.from_hf_dict(hf_cfg.to_dict())
    ours = np.asarray(rope_inv_freq(cfg))
    np.testing.assert_allclose(ours, ref.numpy(), rtol=1e-6, atol=0)
    default = np.asarray(rope_inv_freq(cfg.replace(rope_type="default", rope_factor=None, rope_low_freq_factor=None,
                                                   rope_high_freq_factor=None,
                                                   rope_original_max_position_embeddings=None)))
    ratio = default / ours
    assert np.isclose(ratio[0], 1.0) and np.isclose(ratio[-1], 8.0)
    assert ((ratio > 1.01) & (ratio < 7.99)).any()  # the smoothed middle band
    # Llama 3.1's own numbers (head_dim 128, theta 5e5, original context 8192).
    big = ModelConfig.from_hf_dict(LLAMA31_8B)
    big_ref, _ = ROPE_INIT_FUNCTIONS["llama3"](transformers.LlamaConfig(**LLAMA31_8B))
    np.testing.assert_allclose(np.asarray(rope_inv_freq(big)), big_ref.numpy(), rtol=1e-6, atol=0)


def test_llama3_scaling_at_long_positions_matches_and_matters(hf_cases, tmp_path):
    """Positions up to 250 (the rescaled bands turn by many radians): our logits equal
    transformers'; the same weights read *without* the scaling are far off, so this test fails if
    the rescaling is deleted."""
    case = hf_cases["llama"]
    rng = np.random.default_rng(3)
    seq = 40
    tokens = rng.integers(0, COMMON["vocab_size"], (2, seq)).astype(np.int32)
    mask = np.ones((2, seq), bool)
    mask[1, :5] = False
    positions = (np.maximum(np.cumsum(mask, axis=1) - 1, 0) + np.array([[210], [0]])).astype(np.int32)
    ref = case.logits(tokens, mask, positions)
    scaled = load_hf(case.path, dtype=jnp.float32)
    assert scaled.config.rope_type == "llama3"
    assert np.abs(np.asarray(forward(scaled, *j(tokens, positions, mask))) - ref)[mask].max() <= TOL

    plain_dir = tmp_path / "no_scaling"
    shutil.copytree(case.path, plain_dir)
    config = json.loads((plain_dir / "config.json").read_text())
    config["rope_parameters"] = {"rope_type": "default", "rope_theta": config["rope_parameters"]["rope_theta"]}
    config["rope_scaling"] = None
    (plain_dir / "config.json").write_text(json.dumps(config))
    plain = load_hf(plain_dir, dtype=jnp.float32)
    assert plain.config.rope_type == "default"
    assert np.abs(np.asarray(forward(plain, *j(tokens, positions, mask))) - ref)[mask].max() > 100 * TOL


@pytest.mark.parametrize(
    ("name", "hf_kw"),
    [
        # untied + llama3 + attention_bias only; tied + default RoPE + mlp_bias only
        ("llama_untied_scaled_attn_bias", dict(**LLAMA3_ROPE, tie_word_embeddings=False, attention_bias=True)),
        ("llama_tied_mlp_bias", dict(rope_theta=1e6, tie_word_embeddings=True, mlp_bias=True)),
    ],
)
def test_other_llama_variants_match_and_export(name, hf_kw, tmp_path):
    """The option combinations the shared cases do not have: import parity, then our export loads
    in transformers with identical weights and logits."""
    case = build_case(name, tmp_path, config=transformers.LlamaConfig(**COMMON, **hf_kw, initializer_range=0.1))
    tokens, mask, positions = batch()
    ref = case.logits(tokens, mask, positions)
    model = load_hf(case.path, dtype=jnp.float32)
    cfg = model.config
    assert (cfg.qkv_bias, cfg.o_bias, cfg.mlp_bias) == (
        hf_kw.get("attention_bias", False), hf_kw.get("attention_bias", False), hf_kw.get("mlp_bias", False))
    assert np.abs(np.asarray(forward(model, *j(tokens, positions, mask))) - ref)[mask].max() <= TOL
    reloaded = transformers.AutoModelForCausalLM.from_pretrained(save_hf(model, tmp_path / "export"),
                                                                 dtype=torch.float32).eval()
    reloaded.config._attn_implementation = "eager"
    assert type(reloaded) is transformers.LlamaForCausalLM
    src, got = case.model.state_dict(), reloaded.state_dict()
    assert sorted(src) == sorted(got) and all(torch.equal(src[k], got[k]) for k in src)
    with torch.no_grad():
        kw = dict(attention_mask=torch.tensor(mask.astype(np.int64)), position_ids=torch.tensor(positions))
        assert torch.equal(case.model(input_ids=torch.tensor(tokens), **kw).logits,
                           reloaded(input_ids=torch.tensor(tokens), **kw).logits)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"sliding_window": 4096}, "sliding_window=4096"),
        ({"rope_scaling": {"rope_type": "linear", "factor": 2.0}}, r"rope_scaling\.rope_type='linear'"),
        ({"rope_scaling": {"type": "dynamic", "factor": 2.0}}, r"rope_scaling\.rope_type='dynamic'"),
        ({"rope_scaling": None, "rope_parameters": {"rope_type": "yarn", "factor": 4.0, "rope_theta": 1e4}},
         r"rope_parameters\.rope_type='yarn'"),
        ({"rope_scaling": {"rope_type": "llama3", "factor": 8.0}}, "lacks"),
        ({"rope_scaling": {**LLAMA31_8B["rope_scaling"], "low_freq_factor": 4.0}}, "low_freq_factor < high"),
        ({"model_type": "mistral"}, "mistral"),
    ],
)
def test_unsupported_llama_configs_raise(extra, message):
    with pytest.raises(UnsupportedConfigError, match=message):
        ModelConfig.from_hf_dict({**LLAMA31_8B, **extra})


def test_rope_fields_are_set_exactly_with_llama3():
    arch = dict(vocab_size=10, hidden_size=8, intermediate_size=16, num_layers=1, num_heads=2, num_kv_heads=1,
                head_dim=4)
    with pytest.raises(UnsupportedConfigError, match="only apply with rope_type='llama3'"):
        LlamaConfig(**arch, rope_factor=8.0)
    with pytest.raises(UnsupportedConfigError, match="needs"):
        LlamaConfig(**arch, rope_type="llama3", rope_factor=8.0)
    with pytest.raises(UnsupportedConfigError, match="rope_type must be one of"):
        LlamaConfig(**arch, rope_type="linear")
    a = LlamaConfig(**arch, rope_type="llama3", rope_factor=8, rope_low_freq_factor=1, rope_high_freq_factor=4,
                    rope_original_max_position_embeddings=8192.0)
    b = LlamaConfig(**arch, rope_type="llama3", rope_factor=8.0, rope_low_freq_factor=1.0, rope_high_freq_factor=4.0,
                    rope_original_max_position_embeddings=8192)
    assert a == b and hash(a) == hash(b) and isinstance(a.rope_original_max_position_embeddings, int)


def test_llama_speaks_chatml_with_hermes_tools():
    """A tiny tokenizer of ours for llama speaks ``qwen2.5`` (ChatML + the <tool_call> tools
    section), and so does a ChatML template without a default system prompt we know; a real
    SmolLM2 tokenizer is detected as ``smollm2``, the same dialect with SmolLM's default system
    prompt (tests/chat checks the rendering against SmolLM2's own template)."""
    from prove_jax.chat import detect_family, get_template

    assert model_family("llama").chat_family == "qwen2.5"
    smollm2_template = "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    assert detect_family(smollm2_template, {"<|im_start|>", "<|im_end|>"}) == "qwen2.5"
    assert get_template("qwen2.5").tool_call_open == "<tool_call>"


def test_llama_run_without_checkpoint_trains_tokenizer_and_records(tmp_path):
    """What a launch with ``model.family: llama`` and no ``hf_dir`` does: a tiny BPE for the
    family's chat format, the config from ``init`` (llama3 RoPE included), and a ``model.json``
    that reads back equal (the rope fields survive JSON)."""
    from prove_jax.chat import ChatTokenizer, get_template, train_tiny_tokenizer
    from prove_jax.model_record import ModelSpec, default_chat_family, describe, read_record, write_record

    template = get_template(default_chat_family("llama"), enable_thinking=False)
    chats = [[{"role": "user", "content": f"Find order {i}"},
              {"role": "assistant", "content": "", "tool_calls": [{"name": "find", "arguments": {"id": i}}]},
              {"role": "tool", "content": f'{{"order": {i}, "status": "shipped"}}'},
              {"role": "assistant", "content": f"Order {i} has shipped."}] for i in range(60)]
    tokenizer = ChatTokenizer.from_dir(train_tiny_tokenizer(template.family, [template.render(c) for c in chats], 320,
                                                            out_dir=tmp_path / "tok"))
    assert tokenizer.eos_id == tokenizer.token_id("<|im_end|>") and tokenizer.token_id("<tool_call>") is not None
    init = {"hidden_size": 32, "intermediate_size": 64, "num_layers": 1, "num_heads": 4, "num_kv_heads": 2,
            "head_dim": 8, "tie_word_embeddings": True, "rope_type": "llama3", "rope_factor": 8.0,
            "rope_low_freq_factor": 1.0, "rope_high_freq_factor": 4.0, "rope_original_max_position_embeddings": 64}
    spec = ModelSpec(family="llama", init=init)
    config = spec.model_config(lambda: tokenizer)
    assert type(config) is LlamaConfig and config.rope_type == "llama3" and config.vocab_size % 64 == 0
    record = write_record(tmp_path, describe(config, template, tokenizer, origin=spec.origin))
    assert read_record(tmp_path) == record and record.chat_family == "qwen2.5"
    assert ModelConfig.from_hf_dict(config.to_hf_dict(), dtype="float32", param_dtype="float32") == config
