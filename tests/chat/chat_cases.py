"""Shared conversations for the chat tests: a multi-turn, multi-call tool episode.

Written as *steps* so the same data drives both the full render (all messages at once) and the
incremental transcript (one append per step). Content is chosen to stress the renderers:
non-ASCII in tools and results, several calls per turn, a call with JSON-string arguments
(Qwen3/Granite insert those raw), an assistant turn with both text and calls, one with calls only.
"""

from __future__ import annotations

import copy
import json
from typing import Any

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "weather_get_forecast",
            "description": "Forecast for a city → returns °C. Für Städte weltweit.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "calc_add",
            "description": "Add two integers.",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
        },
    },
]

SYSTEM = {"role": "system", "content": "You are a careful planner. Today is 2025-03-14."}
USER1 = {"role": "user", "content": "What's the weather in Paris and Zürich, and what is 2+40?"}
USER2 = {"role": "user", "content": "Thanks! Now Berlin, in fahrenheit please."}


def _a(content: str | None, calls: list[dict[str, Any]] | None, reasoning: str) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        msg["tool_calls"] = calls
    msg["reasoning_content"] = reasoning
    return msg


A1 = _a(
    "",
    [
        {"type": "function", "function": {"name": "weather_get_forecast", "arguments": {"city": "Paris"}}},
        {"name": "weather_get_forecast", "arguments": {"city": "Zürich", "unit": "celsius"}},
        {"name": "calc_add", "arguments": {"a": 2, "b": 40}},
    ],
    "Three independent lookups; call them in parallel.",
)
T1 = [
    '{"city": "Paris", "temp_c": 14, "sky": "cloudy"}',
    '{"city": "Zürich", "temp_c": 9, "sky": "snow ❄"}',
    "42",
]
A2 = _a(
    "Paris is cloudy at 14°C and Zürich has snow at 9°C; 2+40 = 42.",
    None,
    "All results are in.\nSummarise briefly.",
)
A3 = _a(
    "Let me look that up.",
    [{"name": "weather_get_forecast", "arguments": '{"city": "Berlin", "unit": "fahrenheit"}'}],
    "One call with unit fahrenheit.",
)
T3 = ['{"error": "rate limited, retry"}']
A4 = _a(
    "",
    [{"name": "weather_get_forecast", "arguments": {"city": "Berlin", "unit": "fahrenheit"}}],
    "The call failed; retry once.",
)
T4 = ['{"city": "Berlin", "temp_f": 50}']
A5 = _a("Berlin is 50°F right now.", None, "Answer.")

#: (kind, payload): "context" = messages rendered up front; "assistant" = one generated turn;
#: "tools" = results of the previous turn's calls; "user" = a new user query.
EPISODE: list[tuple[str, Any]] = [
    ("context", [SYSTEM, USER1]),
    ("assistant", A1),
    ("tools", T1),
    ("assistant", A2),
    ("user", USER2["content"]),
    ("assistant", A3),
    ("tools", T3),
    ("assistant", A4),
    ("tools", T4),
    ("assistant", A5),
]


def episode(*, reasoning: bool = True, string_args: bool = True) -> list[tuple[str, Any]]:
    """The episode, optionally without reasoning (Qwen3 thinking off) and with every JSON-string
    argument decoded to a dict (Qwen2.5's official template double-encodes strings)."""
    steps = copy.deepcopy(EPISODE)
    for kind, payload in steps:
        if kind != "assistant":
            continue
        if not reasoning:
            payload.pop("reasoning_content", None)
        if not string_args:
            for call in payload.get("tool_calls", []):
                fn = call.get("function", call)
                if isinstance(fn["arguments"], str):
                    fn["arguments"] = json.loads(fn["arguments"])
    return steps


def messages_of(steps: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    """The flat message list the steps describe (what a full render sees)."""
    out: list[dict[str, Any]] = []
    for kind, payload in steps:
        if kind == "context":
            out.extend(payload)
        elif kind == "assistant":
            out.append(payload)
        elif kind == "tools":
            out.extend({"role": "tool", "content": c} for c in payload)
        elif kind == "user":
            out.append({"role": "user", "content": payload})
    return out


def corpus() -> list[str]:
    """A small deterministic corpus for tiny tokenizers (any text works: BPE is byte-level)."""
    base = [json.dumps(TOOLS, ensure_ascii=False), SYSTEM["content"], USER1["content"], USER2["content"]]
    base += [A2["content"], A3["content"], A5["content"], *T1, *T3, *T4]
    base += ["The quick brown fox jumps over the lazy dog 0123456789."] * 3
    return base * 5
