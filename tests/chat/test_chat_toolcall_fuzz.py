"""Fuzz: the tool-call parser never raises and its result is always well-formed.

Hypothesis costs ~0.5–3 ms per example on this shared 2-core box whatever the strategy (10^5
one-string examples took 170–540 s here, depending on load), so the 10^5-string run draws one
integer per example — the cheapest strategy there is — and derives ``STRINGS_PER_EXAMPLE``
structured near-miss strings from it: unbalanced/partial/nested tags, truncated and mutated JSON,
non-object arguments, JSON-string arguments, 5000-digit and overflowing numbers, NaN, 3000-deep
nesting, lone surrogates, NUL, emoji. Two smaller runs use Hypothesis' own text and fragment
strategies, which shrink to readable counterexamples. ``PROVE_CHAT_FUZZ_STRINGS`` sets the size.
"""

from __future__ import annotations

import json
import os
import random
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from prove_jax.chat import parse_tool_calls
from prove_jax.chat.toolcall import TOOL_CALL_CLOSE, TOOL_CALL_OPEN, ParseResult

N_STRINGS = int(os.environ.get("PROVE_CHAT_FUZZ_STRINGS", "100000"))
STRINGS_PER_EXAMPLE = 10

TAGS = [
    "<tool_call>", "</tool_call>", "<think>", "</think>", "<tool_call", "tool_call>", "</tool_call",
    "< tool_call>", "<TOOL_CALL>", "<|im_end|>", "<|end_of_text|>", "<|endoftext|>", "<tool_response>",
    "<|im_start|>assistant\n",
]
SPACE = [" ", "\n", "\t", "\r\n", "", "\u00a0", "\u2028"]
NUMBERS = ["9" * 5000, "-" + "1" * 4301, "1e999", "-1e999", "1e-99999", "NaN", "Infinity", "-Infinity",
           "0.1e", "01", "-", "1.5", "12345678901234567890"]
UNICODE = ["Zürich", "😀", "\u202e", "e\u0301", "\x00", "\ud800", "\udfff", "\ufeff", "中文", "\x1b[0m"]


def _value(r: random.Random, depth: int = 0) -> Any:
    kind = r.randrange(8 if depth < 3 else 5)
    if kind == 0:
        return r.choice([None, True, False])
    if kind == 1:
        return r.randint(-(10**30), 10**30)
    if kind == 2:
        return r.uniform(-1e300, 1e300)
    if kind in (3, 4):
        return "".join(r.choice([*UNICODE, "a", "b", '"', "\\", "}"]) for _ in range(r.randrange(6)))
    if kind == 5:
        return [_value(r, depth + 1) for _ in range(r.randrange(4))]
    return {f"k{i}": _value(r, depth + 1) for i in range(r.randrange(4))}


def _call_json(r: random.Random) -> str:
    obj: dict[str, Any] = {}
    if r.random() < 0.9:
        obj["name"] = r.choice(["f", "weather_get", "", 3, None, "ü"]) if r.random() < 0.3 else "tool_x"
    if r.random() < 0.85:
        args = _value(r) if r.random() < 0.3 else {"a": _value(r), "b": _value(r)}
        obj["arguments"] = json.dumps(args) if r.random() < 0.25 else args
    text = json.dumps(obj, ensure_ascii=r.random() < 0.5)
    roll = r.random()
    if roll < 0.15:
        text = text[: r.randrange(len(text) + 1)]  # truncated
    elif roll < 0.3 and text:
        i = r.randrange(len(text))
        text = text[:i] + r.choice([",", "}", "{", '"', "]", ""]) + text[i + 1 :]  # mutated
    elif roll < 0.45:
        text = '{"name": "tool_x", "arguments": {"n": ' + r.choice(NUMBERS) + "}}"
    return text


def near_miss(seed: int) -> str:
    """A deterministic adversarial string for ``seed``."""
    r = random.Random(seed)
    parts: list[str] = []
    for _ in range(r.randrange(1, 14)):
        roll = r.random()
        if roll < 0.3:
            parts.append(r.choice(TAGS))
        elif roll < 0.55:
            parts.append(f"{TOOL_CALL_OPEN}{r.choice(SPACE)}{_call_json(r)}{r.choice(SPACE)}{TOOL_CALL_CLOSE}")
        elif roll < 0.7:
            parts.append(_call_json(r))
        elif roll < 0.8:
            parts.append(r.choice(SPACE) * r.randrange(3))
        elif roll < 0.9:
            parts.append("".join(r.choice(UNICODE) for _ in range(r.randrange(5))))
        elif roll < 0.95:
            parts.append(r.choice(NUMBERS))
        else:
            depth = r.randrange(50, 3000)
            nested = "[" * depth + "]" * r.choice([0, depth])
            parts.append(f'{TOOL_CALL_OPEN}{{"name": "deep", "arguments": {nested}}}{TOOL_CALL_CLOSE}')
    return "".join(parts)


def check_well_formed(text: str, result: ParseResult) -> None:
    """Invariants every result must satisfy, whatever the input."""
    assert isinstance(result, ParseResult)
    assert not any(e.reason.startswith("internal parser error") for e in result.errors), result.errors
    for call in result.calls:
        assert isinstance(call.name, str) and call.name.strip()
        assert isinstance(call.arguments, dict)
    indices = [e.index for e in result.errors]
    assert indices == sorted(set(indices))
    assert all(0 <= i < len(result.calls) + len(result.errors) for i in indices)
    assert isinstance(result.content, str) and TOOL_CALL_OPEN not in result.content
    if TOOL_CALL_OPEN not in text and TOOL_CALL_CLOSE not in text:
        assert result.calls == [] and result.errors == []
    assert result.ok == (bool(result.calls) and not result.errors)
    assert (result.reason is None) == bool(result.calls)


_FAST = settings(
    max_examples=max(1, N_STRINGS // STRINGS_PER_EXAMPLE),
    deadline=None,
    database=None,
    phases=[Phase.generate],
    suppress_health_check=list(HealthCheck),
)


@_FAST
@given(st.integers(min_value=0, max_value=2**63 - 1))
def test_parser_total_on_1e5_near_miss_strings(seed: int) -> None:
    for k in range(STRINGS_PER_EXAMPLE):
        text = near_miss(seed * STRINGS_PER_EXAMPLE + k)
        check_well_formed(text, parse_tool_calls(text))


@settings(max_examples=400, deadline=None, database=None)
@given(st.text(max_size=300))
def test_parser_total_on_arbitrary_text(text: str) -> None:
    check_well_formed(text, parse_tool_calls(text))


@settings(max_examples=400, deadline=None, database=None)
@given(st.lists(st.sampled_from(TAGS + SPACE + NUMBERS + UNICODE + ['{"name": "f", "arguments": {}}', "{", "}", '"']),
                max_size=25).map("".join))
def test_parser_total_on_fragment_soup(text: str) -> None:
    check_well_formed(text, parse_tool_calls(text))


def test_generator_really_produces_valid_and_invalid_blocks() -> None:
    """Guard against a fuzzer that only ever exercises one path."""
    totals = {"calls": 0, "errors": 0, "truncated": 0, "deep": 0, "huge": 0}
    for seed in range(2000):
        res = parse_tool_calls(near_miss(seed))
        totals["calls"] += len(res.calls)
        totals["errors"] += len(res.errors)
        totals["truncated"] += sum("unterminated" in e.reason for e in res.errors)
        totals["deep"] += sum("nested too deeply" in e.reason for e in res.errors)
        totals["huge"] += sum("digits" in e.reason or "overflows" in e.reason for e in res.errors)
    assert all(v > 20 for v in totals.values()), totals
