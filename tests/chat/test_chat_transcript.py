"""Transcript mechanics on tiny tokenizers (no transformers needed).

The official-template equality is in ``test_chat_templates_hf.py``; here: the append protocol, loss
mask/logprob bookkeeping, truncated turns, foreign stop tokens, teacher forcing, and equality
with our own full render (which ``test_chat_templates_hf`` ties to the official one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from chat_cases import SYSTEM, TOOLS, USER1, episode, messages_of

from prove_jax.chat import ChatTokenizer, Transcript, get_template, parse_tool_calls, special_ids


def _tr(tiny_dirs: dict[str, Path], family: str, thinking: bool = True) -> Transcript:
    tok = ChatTokenizer.from_dir(tiny_dirs[family])
    return Transcript.start(get_template(family, enable_thinking=thinking), tok, [SYSTEM, USER1], TOOLS)


@pytest.mark.parametrize("family", ["qwen2.5", "granite-4.1"])
def test_prefix_stable_families_equal_our_full_render_at_every_step(family: str, tiny_dirs: dict[str, Path]) -> None:
    tr = _tr(tiny_dirs, family)
    tpl, tok = tr.template, tr.tokenizer
    msgs = [SYSTEM, USER1]
    for kind, payload in episode(reasoning=False)[1:]:
        if kind == "assistant":
            tr.start_assistant()
            assert tr.tokens == tok.encode(tpl.render(msgs, TOOLS, add_generation_prompt=True))
            tr.append_generated(tok.encode(tpl.assistant_body(payload)))
            msgs.append(payload)
            assert tr.tokens + tok.encode("\n") == tok.encode(tpl.render(msgs, TOOLS))
        elif kind == "tools":
            tr.append_tool_results(payload)
            msgs.extend({"role": "tool", "content": c} for c in payload)
            assert tr.tokens == tok.encode(tpl.render(msgs, TOOLS))
        else:
            tr.append_user(payload)
            msgs.append({"role": "user", "content": payload})
            assert tr.tokens == tok.encode(tpl.render(msgs, TOOLS))
    assert msgs == messages_of(episode(reasoning=False))


@pytest.mark.parametrize(("family", "thinking"), [("qwen3", True), ("qwen3", False), ("qwen2.5", True),
                                                  ("granite-4.1", True)])
def test_teacher_forcing_equals_generation_path(family: str, thinking: bool, tiny_dirs: dict[str, Path]) -> None:
    """SFT (``append_assistant``) and RL (``append_generated`` of the same ids) build the same
    sequence; only the logprobs differ. ``train=False`` leaves the body unmasked."""
    steps = episode(reasoning=thinking)
    a, b, c = _tr(tiny_dirs, family, thinking), _tr(tiny_dirs, family, thinking), _tr(tiny_dirs, family, thinking)
    for kind, payload in steps[1:]:
        if kind == "assistant":
            body = a.append_assistant(payload)
            b.start_assistant()
            b.append_generated(a.tokenizer.encode(a.template.assistant_body(payload)))
            c.append_assistant(payload, train=False)
            assert body == b.tokens[len(b.tokens) - len(body):]
        elif kind == "tools":
            for t in (a, b, c):
                t.append_tool_results(payload)
        else:
            for t in (a, b, c):
                t.append_user(payload)
    assert a.tokens == b.tokens == c.tokens
    assert a.loss_mask == b.loss_mask and sum(a.loss_mask) > 0
    assert not any(c.loss_mask)
    assert [s.kind for s in a.generated_spans()] == ["assistant"] * 5
    assert [s.kind for s in b.generated_spans()] == ["generated"] * 5


def test_generated_span_decodes_to_the_calls(tiny_dirs: dict[str, Path]) -> None:
    tr = _tr(tiny_dirs, "qwen3")
    a1 = episode()[1][1]
    tr.start_assistant()
    tr.append_generated(tr.tokenizer.encode(tr.template.assistant_body(a1)))
    span = tr.generated_spans()[-1]
    parsed = parse_tool_calls(tr.decode(span.start, span.end))
    assert [c.name for c in parsed.calls] == ["weather_get_forecast"] * 2 + ["calc_add"]
    assert parsed.reasoning == a1["reasoning_content"] and parsed.errors == []


def test_streaming_chunks_and_logprobs(tiny_dirs: dict[str, Path]) -> None:
    tr = _tr(tiny_dirs, "qwen3")
    eot = special_ids(tr.template, tr.tokenizer).end_of_turn
    tr.start_assistant()
    ids = tr.tokenizer.encode("Hello there")
    tr.append_generated(ids[:1], [-1.0])
    assert tr.assistant_open
    tr.append_generated([*ids[1:], eot], [-2.0] * len(ids))
    assert not tr.assistant_open
    n = len(ids) + 1
    assert tr.loss_mask[-n:] == [True] * n and not any(tr.loss_mask[:-n])
    assert tr.logprobs[-n:] == [-1.0] + [-2.0] * len(ids)
    toks, mask, lps = tr.as_arrays()
    assert toks.dtype == np.int32 and mask.dtype == np.bool_ and lps.dtype == np.float32
    assert toks.shape == mask.shape == lps.shape == (len(tr),)


@pytest.mark.parametrize("family", ["qwen3", "granite-4.1"])
def test_truncated_turn_is_closed_unmasked(family: str, tiny_dirs: dict[str, Path]) -> None:
    """Out of tokens mid-call: the next append first closes the turn with the stop token, which
    the model did not generate (mask 0), then continues with the separator and the new turn."""
    tr = _tr(tiny_dirs, family)
    tpl, tok = tr.template, tr.tokenizer
    tr.start_assistant()
    cut = tok.encode('<tool_call>\n{"name": "calc_add", "argu')
    tr.append_generated(cut)
    before = len(tr)
    chunk = tr.append_tool_results(["error: no call parsed"])
    eot = tok.token_id(tpl.end_of_turn)
    assert tr.tokens[before] == eot and not tr.loss_mask[before]
    assert chunk == tr.tokens[before + 1:]
    assert tok.decode(tr.tokens[before:]).startswith(tpl.end_of_turn + "\n" + tpl.role_header("user").rstrip("\n"))
    assert [s.kind for s in tr.spans[-3:]] == ["generated", "close", "tool"]
    assert tr.close_assistant() == []  # nothing open any more


def test_foreign_stop_token_gets_the_template_end_of_turn(tiny_dirs: dict[str, Path]) -> None:
    """Qwen may stop on <|endoftext|>; the turn is then closed with <|im_end|> (unmasked) so the
    next turn sees well-formed ChatML."""
    tr = _tr(tiny_dirs, "qwen2.5")
    tok = tr.tokenizer
    eos_text = tok.token_id("<|endoftext|>")
    tr.start_assistant()
    tr.append_generated([*tok.encode("Done."), eos_text])
    assert not tr.assistant_open
    assert tr.tokens[-2:] == [eos_text, tok.token_id("<|im_end|>")]
    assert tr.loss_mask[-2:] == [True, False]
    tr.append_user("ok")
    assert tok.decode(tr.tokens).endswith("<|endoftext|><|im_end|>\n<|im_start|>user\nok<|im_end|>\n")


def test_protocol_errors(tiny_dirs: dict[str, Path]) -> None:
    tr = _tr(tiny_dirs, "qwen3")
    eot = tr.tokenizer.token_id("<|im_end|>")
    with pytest.raises(RuntimeError, match="start_assistant"):
        tr.append_generated([1, 2])
    tr.start_assistant()
    with pytest.raises(RuntimeError, match="already open"):
        tr.start_assistant()
    with pytest.raises(ValueError, match="logprobs"):
        tr.append_generated([1, 2], [0.0])
    with pytest.raises(ValueError, match="not the last"):
        tr.append_generated([eot, 5])
    with pytest.raises(ValueError, match="at least one"):
        tr.append_tool_results([])


def test_history_in_context_then_append(tiny_dirs: dict[str, Path]) -> None:
    """A context that already holds earlier assistant turns (e.g. an eval transcript) is rendered
    once, unmasked; appends continue from it."""
    tok = ChatTokenizer.from_dir(tiny_dirs["granite-4.1"])
    tpl = get_template("granite-4.1")
    msgs = messages_of(episode(reasoning=False))[:6]
    tr = Transcript.start(tpl, tok, msgs, TOOLS)
    assert not any(tr.loss_mask)
    tr.append_user("next")
    assert tr.tokens == tok.encode(tpl.render([*msgs, {"role": "user", "content": "next"}], TOOLS))


def test_special_ids_per_family(tiny_dirs: dict[str, Path]) -> None:
    expect: dict[str, dict[str, Any]] = {
        "qwen2.5": {"eot": "<|im_end|>", "stops": ["<|im_end|>", "<|endoftext|>"], "pad": "<|endoftext|>"},
        "qwen3": {"eot": "<|im_end|>", "stops": ["<|im_end|>", "<|endoftext|>"], "pad": "<|endoftext|>"},
        "granite-4.1": {"eot": "<|end_of_text|>", "stops": ["<|end_of_text|>"], "pad": "<|pad|>"},
    }
    for family, e in expect.items():
        tok = ChatTokenizer.from_dir(tiny_dirs[family])
        ids = special_ids(get_template(family), tok)
        assert ids.end_of_turn == tok.token_id(e["eot"]) == tok.eos_id
        assert ids.stop_ids == tuple(tok.token_id(s) for s in e["stops"])
        assert ids.tool_call_close == tok.token_id("</tool_call>")
        assert ids.pad == tok.token_id(e["pad"])
        assert ids.vocab_size == len(tok)


def test_fork_is_independent(tiny_dirs: dict[str, Path]) -> None:
    base = _tr(tiny_dirs, "qwen3")
    base.start_assistant()
    a, b = base.fork(), base.fork()
    a.append_generated(a.tokenizer.encode("one"))
    b.append_generated([*b.tokenizer.encode("two"), b.tokenizer.token_id("<|im_end|>")])
    assert a.assistant_open and not b.assistant_open and base.assistant_open
    assert a.tokens[: len(base)] == b.tokens[: len(base)] == base.tokens
    assert a.tokens != b.tokens and len(base.spans) == len(a.spans) - 1
    assert not any(base.loss_mask)
