"""Tool-call parser: each documented rule, plus round trips through every family's renderer."""

from __future__ import annotations

import pytest

from prove_jax.chat import FAMILIES, get_template, parse_tool_calls, split_reasoning
from prove_jax.chat.toolcall import ToolCall


def test_several_calls_and_content() -> None:
    text = (
        "I'll check both.\n<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n</tool_call>\n"
        "<tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call><|im_end|>"
    )
    r = parse_tool_calls(text)
    assert r.calls == [ToolCall("a", {"x": 1}), ToolCall("b", {})]
    assert r.errors == [] and r.ok and r.reason is None
    assert r.content == "I'll check both."
    assert r.reasoning is None


def test_plain_answer_has_no_call_and_says_why() -> None:
    r = parse_tool_calls("The answer is 42.<|end_of_text|>")
    assert r.calls == [] and r.errors == [] and not r.ok
    assert r.content == "The answer is 42."
    assert r.reason == "no <tool_call> block"


def test_arguments_as_json_string_are_decoded() -> None:
    r = parse_tool_calls('<tool_call>{"name": "f", "arguments": "{\\"city\\": \\"Zürich\\"}"}</tool_call>')
    assert r.calls == [ToolCall("f", {"city": "Zürich"})]


def test_missing_arguments_means_empty_object() -> None:
    assert parse_tool_calls('<tool_call>{"name": "list_all"}</tool_call>').calls == [ToolCall("list_all", {})]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ('{"name": "f", "arguments": [1, 2]}', "'arguments' must be a JSON object, got list"),
        ('{"name": "f", "arguments": null}', "'arguments' must be a JSON object, got NoneType"),
        ('{"name": "f", "arguments": "[1]"}', "'arguments' must be a JSON object, got list"),
        ('{"name": "f", "arguments": "{oops"}', "'arguments' string is not JSON"),
        ('{"name": "", "arguments": {}}', "missing or non-string 'name'"),
        ('{"name": 3, "arguments": {}}', "missing or non-string 'name'"),
        ('{"arguments": {}}', "missing or non-string 'name'"),
        ('["f", {}]', "tool call must be a JSON object, got list"),
        ('{"name": "f", "arguments": {"a": 1},}', "invalid JSON"),
        ('{"name": "f", "arguments": {"a": NaN}}', "invalid JSON: non-JSON number literal NaN"),
        ('{"name": "f", "arguments": {"a": 1e999}}', "overflows a float"),
        ('{"name": "f", "arguments": {"a": ' + "9" * 5000 + "}}", "invalid JSON"),
        ('{"name": "f", "arguments": ' + "[" * 100_000 + "]" * 100_000 + "}", "invalid JSON"),
        ("   ", "empty tool_call block"),
        ('{"name": "a"} {"name": "b"}', "invalid JSON: Extra data"),
    ],
)
def test_bad_blocks_are_errors_not_exceptions(body: str, reason: str) -> None:
    r = parse_tool_calls(f"<tool_call>{body}</tool_call>")
    assert r.calls == [] and not r.ok
    assert len(r.errors) == 1
    assert reason in r.errors[0].reason, r.errors[0].reason
    assert r.errors[0].raw.startswith("<tool_call>")
    assert r.reason is not None and reason in r.reason


def test_truncated_block_and_good_blocks_before_it() -> None:
    r = parse_tool_calls('<tool_call>{"name": "a", "arguments": {}}</tool_call>\n<tool_call>{"name": "b", "argu')
    assert r.calls == [ToolCall("a", {})]
    assert [(e.index, e.reason) for e in r.errors] == [(1, "unterminated <tool_call> (output truncated?)")]
    assert not r.ok and r.reason is None  # a valid call exists, but the turn is not clean


def test_nested_opener_does_not_hide_the_next_call() -> None:
    r = parse_tool_calls('<tool_call>{"name": "a", <tool_call>{"name": "b", "arguments": {"k": "v"}}</tool_call>')
    assert r.calls == [ToolCall("b", {"k": "v"})]
    assert [(e.index, e.reason) for e in r.errors] == [(0, "unterminated <tool_call> (nested opener)")]


def test_stray_closer_is_reported_and_content_kept() -> None:
    r = parse_tool_calls("done</tool_call> bye")
    assert r.calls == []
    assert [e.reason for e in r.errors] == ["stray </tool_call> without <tool_call>"]
    assert r.content == "done bye"
    assert "block 0: stray" in (r.reason or "")


def test_think_block_is_reasoning_and_calls_inside_it_are_ignored() -> None:
    text = (
        "<think>\nMaybe <tool_call>{\"name\": \"no\", \"arguments\": {}}</tool_call>?\n</think>\n\n"
        "Sure.\n<tool_call>\n{\"name\": \"yes\", \"arguments\": {\"n\": 2}}\n</tool_call>"
    )
    r = parse_tool_calls(text)
    assert r.calls == [ToolCall("yes", {"n": 2})]
    assert r.reasoning == 'Maybe <tool_call>{"name": "no", "arguments": {}}</tool_call>?'
    assert r.content == "Sure." and not r.reasoning_truncated


def test_split_reasoning_variants() -> None:
    assert split_reasoning("plain") == (None, "plain", False)
    # opener in a pre-filled prompt: only the closer is generated
    assert split_reasoning("thought\n</think>\n\nanswer") == ("thought", "\n\nanswer", False)
    # out of tokens while thinking
    assert split_reasoning("<think>\nhalf a thou") == ("half a thou", "", True)
    r = parse_tool_calls("<think>\nhalf a thou")
    assert r.reasoning_truncated and r.calls == [] and r.content == ""


def test_non_string_input_is_an_error_not_an_exception() -> None:
    r = parse_tool_calls(None)  # type: ignore[arg-type]
    assert r.calls == [] and r.errors and "expected str" in r.errors[0].reason


@pytest.mark.parametrize("family", FAMILIES)
def test_round_trip_through_each_renderer(family: str) -> None:
    """What a template writes for a call is what the parser reads back (reasoning included)."""
    tpl = get_template(family)
    calls = [{"name": "weather_get", "arguments": {"city": "Zürich", "days": [1, 2], "deep": {"ok": True}}},
             {"name": "calc_add", "arguments": '{"a": 1, "b": 2}'}]
    msg = {"role": "assistant", "content": "Checking.", "tool_calls": calls, "reasoning_content": "think first"}
    r = parse_tool_calls(tpl.assistant_body(msg))
    assert r.calls == [ToolCall("weather_get", calls[0]["arguments"]), ToolCall("calc_add", {"a": 1, "b": 2})]
    assert r.errors == [] and r.content == "Checking."
    assert r.reasoning == ("think first" if family == "qwen3" else None)
    assert r.calls[0].to_dict() == calls[0]
