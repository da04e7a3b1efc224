"""``ChatTokenizer`` (Rust ``tokenizers`` only) vs ``transformers`` on the real Qwen3 tokenizer,
loading details, and family detection."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prove_jax.chat import ChatTokenizer, detect_family

TRICKY = [
    "",
    "Hello, world!",
    "  leading and trailing spaces  ",
    "\n\n\nnewlines\r\n\tand tabs",
    "Zürich 😀 中文 e\u0301 \u202e",
    "numbers 1234567890 3.14159 -0.0 1e10",
    "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
    "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>",
    "<think>\nreason\n</think>\n\nanswer<|endoftext|>",
    "<|im_start|<|im_end|>>",  # partial control token next to a real one
    "don't we'll I'M they've",
]


def test_encode_decode_match_transformers(qwen3_dir: Path, hf_tokenizer: Any, chat_tokenizer: Any) -> None:
    ours, ref = chat_tokenizer(qwen3_dir), hf_tokenizer(qwen3_dir)
    for text in TRICKY:
        ids = ours.encode(text)
        assert ids == ref(text, add_special_tokens=False)["input_ids"], text
        # Qwen's normalizer is NFC, so non-NFC input (e + combining acute) comes back composed
        assert ours.decode(ids) == ref.decode(ids, skip_special_tokens=False) == unicodedata.normalize("NFC", text)
        assert ours.decode(ids, skip_special_tokens=True) == ref.decode(ids, skip_special_tokens=True)
    # tool/think tags are non-special (survive skipping); ChatML markers are special
    ids = ours.encode("<|im_start|>a<tool_call>b</think>")
    assert ours.decode(ids, skip_special_tokens=True) == "a<tool_call>b</think>"
    assert len(ours) == len(ref) == 151669


@settings(max_examples=150, deadline=None, database=None)
@given(text=st.text(max_size=80))
def test_encode_matches_transformers_on_random_text(text: str, qwen3_dir: Path, hf_tokenizer: Any,
                                                    chat_tokenizer: Any) -> None:
    ours, ref = chat_tokenizer(qwen3_dir), hf_tokenizer(qwen3_dir)
    assert ours.encode(text) == ref(text, add_special_tokens=False)["input_ids"]


def test_config_fields_and_save_round_trip(qwen3_dir: Path, chat_tokenizer: Any, tmp_path: Path) -> None:
    tok: ChatTokenizer = chat_tokenizer(qwen3_dir)
    assert tok.eos_token == "<|im_end|>" and tok.pad_token == "<|endoftext|>"
    assert tok.chat_template is not None and "<think>" in tok.chat_template
    assert "<|im_start|>" in tok.special_tokens and "<tool_call>" not in tok.special_tokens
    assert "<tool_call>" in tok.added_tokens
    with pytest.raises(KeyError):
        tok.token_id("definitely not one token")
    assert tok.maybe_token_id("definitely not one token") is None
    copy = ChatTokenizer.from_dir(tok.save(tmp_path / "copy"))
    assert copy.encode(TRICKY[6]) == tok.encode(TRICKY[6])
    assert copy.chat_template == tok.chat_template and copy.eos_id == tok.eos_id


def test_loads_without_config_and_with_separate_template_file(qwen3_dir: Path, tmp_path: Path) -> None:
    """Old exports have no tokenizer_config; newer HF exports keep the template in
    chat_template.jinja beside it."""
    shutil.copy(qwen3_dir / "tokenizer.json", tmp_path / "tokenizer.json")
    bare = ChatTokenizer.from_dir(tmp_path)
    assert bare.eos_id is None and bare.chat_template is None and len(bare) == 151669
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"eos_token": {"content": "<|im_end|>"}}))
    (tmp_path / "chat_template.jinja").write_text("{{ '<|im_start|>' }}")
    cfg = ChatTokenizer.from_dir(tmp_path)
    assert cfg.eos_id == 151645 and cfg.chat_template == "{{ '<|im_start|>' }}"


def test_detect_family_from_real_templates(real_templates: dict[str, str]) -> None:
    for family, template in real_templates.items():
        assert detect_family(template) == family


def test_detect_family_from_vocabulary_and_failure() -> None:
    assert detect_family(None, {"<|start_of_role|>", "<tool_call>"}) == "granite-4.1"
    assert detect_family(None, {"<|im_start|>", "<think>"}) == "qwen3"
    assert detect_family("", {"<|im_start|>"}) == "qwen2.5"
    with pytest.raises(ValueError, match="cannot tell"):
        detect_family("{{ messages }}", {"<s>"})


def test_runtime_does_not_import_transformers_or_torch() -> None:
    """DESIGN.md layering: transformers/torch are test-only references."""
    code = (
        "import sys, prove_jax.chat as c; "
        "bad = sorted(m for m in ('transformers', 'torch') if m in sys.modules); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
