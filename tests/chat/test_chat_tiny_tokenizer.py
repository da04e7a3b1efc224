"""Tiny BPE tokenizers: determinism, single-id control tokens, round trips, HF loadability, and
our generated Jinja template rendering exactly like the Python renderer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from chat_cases import TOOLS, corpus, episode, messages_of

from prove_jax.chat import (
    FAMILIES,
    ChatTokenizer,
    detect_family,
    family_tokens,
    get_template,
    train_tiny_tokenizer,
)


@pytest.mark.parametrize("family", FAMILIES)
def test_deterministic(family: str, tmp_path: Path) -> None:
    a = train_tiny_tokenizer(family, corpus(), 500, out_dir=tmp_path / "a", seed=3)
    b = train_tiny_tokenizer(family, corpus(), 500, out_dir=tmp_path / "b", seed=3)
    c = train_tiny_tokenizer(family, [*corpus(), "zebra quokka " * 50], 500, out_dir=tmp_path / "c", seed=3)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes()
    assert (a / "tokenizer.json").read_bytes() != (c / "tokenizer.json").read_bytes()


@pytest.mark.parametrize("family", FAMILIES)
def test_control_tokens_are_single_ids_after_the_bpe_vocab(family: str, tiny_dirs: dict[str, Path]) -> None:
    tok = ChatTokenizer.from_dir(tiny_dirs[family])
    controls = family_tokens(family)
    ids = [tok.token_id(t) for t in controls]
    assert ids == list(range(len(tok) - len(controls), len(tok)))  # appended in order, like real layouts
    for t, i in zip(controls, ids, strict=True):
        assert tok.encode(t) == [i]
        assert tok.encode(f"x{t}y").count(i) == 1
    assert 256 + len(controls) + 100 < len(tok) <= 600  # byte alphabet + learned merges, within the budget
    assert detect_family(None, tok.added_tokens) in ({"qwen2.5", "qwen3"} if family != "granite-4.1" else {family})
    cfg = json.loads((tiny_dirs[family] / "tokenizer_config.json").read_text())
    assert cfg["bos_token"] is None and cfg["add_bos_token"] is False
    assert tok.eos_id == tok.token_id(get_template(family).end_of_turn)
    assert tok.pad_id is not None and tok.pad_id != tok.eos_id
    assert detect_family(tok.chat_template) == family


@pytest.mark.parametrize("family", FAMILIES)
def test_render_encode_decode_round_trip(family: str, tiny_dirs: dict[str, Path]) -> None:
    tok = ChatTokenizer.from_dir(tiny_dirs[family])
    tpl = get_template(family)
    text = tpl.render(messages_of(episode()), TOOLS, add_generation_prompt=True) + "unseen: ŵ ☃ \x00 𝔘"
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    for control in family_tokens(family):
        assert ids.count(tok.token_id(control)) == text.count(control)


def test_rejects_too_small_vocab() -> None:
    with pytest.raises(ValueError, match="at least"):
        train_tiny_tokenizer("qwen3", ["abc"], 100)


@pytest.mark.parametrize(("family", "thinking"), [("qwen2.5", True), ("qwen3", True), ("qwen3", False),
                                                  ("granite-4.1", True), ("smollm2", True)])
def test_our_jinja_template_renders_like_our_renderer(family: str, thinking: bool, tiny_dirs: dict[str, Path],
                                                      hf_tokenizer: Any) -> None:
    """The chat template written into tiny tokenizer configs (for HF export) is a faithful Jinja
    form of the Python renderer, run through transformers' own template engine."""
    hf = hf_tokenizer(tiny_dirs[family])
    tpl = get_template(family, enable_thinking=thinking)
    msgs = messages_of(episode(reasoning=thinking))
    for n in range(1, len(msgs) + 1):
        for start in (0, 1):
            sub = msgs[start:n]
            if not sub:
                continue
            for tools in (TOOLS, None):
                ref = hf.apply_chat_template(sub, tools=tools, tokenize=False, add_generation_prompt=True,
                                             enable_thinking=thinking)
                assert ref == tpl.render(sub, tools, add_generation_prompt=True), (n, start, bool(tools))
