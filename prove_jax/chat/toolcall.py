"""Parse an assistant turn's text into tool calls, reasoning and plain content.

All three target families (Qwen2.5, Qwen3, Granite-4.1) use the same Hermes-style syntax:
each call is a ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` block (whitespace
around the JSON is free), several blocks per turn are allowed, and Qwen3 may wrap its reasoning
in ``<think>…</think>`` before them. One parser therefore serves every family.

The parser is *total*: model output during RL is arbitrary (truncated at the token budget,
unbalanced tags, JSON with a trailing comma, arguments that are a list, a 5000-digit integer…),
and a crash here would kill a whole rollout batch. Every problem is reported as a
:class:`BlockError` with a human-readable reason; nothing raises. A block is either a valid
:class:`ToolCall` or an error, never both, so the reward can count parse failures per block.

Rules, chosen so the reward sees exactly what a strict tool executor would accept:

* JSON must be one object with a non-empty string ``name``.
* ``arguments`` must be an object; a JSON *string* holding an object is decoded (OpenAI-style
  clients send arguments that way). A missing ``arguments`` means ``{}`` (a call of a
  zero-parameter tool); ``null``, lists, numbers etc. are errors.
* ``NaN``/``Infinity`` literals and numbers that overflow a float are rejected: they are not JSON
  (RFC 8259) and would not survive a round trip through a tool server.
* Blocks inside ``<think>`` are reasoning, not calls, and are ignored.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

TOOL_CALL_OPEN = "<tool_call>"
TOOL_CALL_CLOSE = "</tool_call>"
THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"

#: End-of-turn / end-of-text markers that may trail a decoded turn; stripped before parsing so
#: content does not end in a control token.
DEFAULT_END_MARKERS: tuple[str, ...] = ("<|im_end|>", "<|endoftext|>", "<|end_of_text|>")


@dataclass(frozen=True)
class ToolCall:
    """One well-formed call: the function name and its decoded arguments object."""

    name: str
    arguments: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form (``{"name", "arguments"}``) used by rewards and the env."""
        return {"name": self.name, "arguments": self.arguments}


@dataclass(frozen=True)
class BlockError:
    """A tool-call block that could not be turned into a call.

    ``index`` is the block's position among all blocks of the turn (valid and invalid), so the
    order of calls and errors can be reconstructed; ``raw`` is the block's text as generated.
    """

    index: int
    reason: str
    raw: str


@dataclass(frozen=True)
class ParseResult:
    """Everything extracted from one assistant turn.

    ``content`` is the text outside reasoning and tool-call blocks (stripped); ``reasoning`` is the
    ``<think>`` text or ``None`` when the turn had no think block.
    """

    calls: list[ToolCall] = field(default_factory=list)
    errors: list[BlockError] = field(default_factory=list)
    content: str = ""
    reasoning: str | None = None
    reasoning_truncated: bool = False

    @property
    def ok(self) -> bool:
        """True when at least one call parsed and no block failed."""
        return bool(self.calls) and not self.errors

    @property
    def reason(self) -> str | None:
        """Why the turn has no valid call (``None`` when it has one)."""
        if self.calls:
            return None
        if self.errors:
            return "; ".join(f"block {e.index}: {e.reason}" for e in self.errors)
        return "no <tool_call> block"


def split_reasoning(text: str) -> tuple[str | None, str, bool]:
    """Split Qwen3 ``<think>…</think>`` reasoning off a turn.

    Returns ``(reasoning, rest, truncated)``. When ``</think>`` is present, everything before it
    (after an optional ``<think>``: the opener may live in a pre-filled generation prompt) is
    reasoning. When only ``<think>`` is present the model ran out of tokens while thinking: all
    text after it is reasoning, ``rest`` is empty and ``truncated`` is True. Reasoning is stripped
    of the newlines the template puts around it.
    """
    close = text.find(THINK_CLOSE)
    if close >= 0:
        head = text[:close]
        open_ = head.find(THINK_OPEN)
        before = head[:open_] if open_ >= 0 else ""
        reasoning = head[open_ + len(THINK_OPEN) :] if open_ >= 0 else head
        rest = before + text[close + len(THINK_CLOSE) :]
        return reasoning.strip("\n"), rest, False
    open_ = text.find(THINK_OPEN)
    if open_ >= 0:
        return text[open_ + len(THINK_OPEN) :].strip("\n"), text[:open_], True
    return None, text, False


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-JSON number literal {name}")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        shown = literal if len(literal) <= 20 else literal[:20] + "..."
        raise ValueError(f"number {shown} overflows a float")
    return value


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)


def _loads(text: str) -> Any:
    """Strict ``json.loads``: no NaN/Infinity, no float overflow (one shared decoder: building
    one per call was a quarter of the parse time)."""
    return _DECODER.decode(text)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "invalid JSON: nested too deeply"
    msg = str(exc)
    return f"invalid JSON: {msg[:200]}"


def parse_call_json(body: str) -> ToolCall | str:
    """Turn the text inside one block into a :class:`ToolCall`, or return the reason it is not one."""
    stripped = body.strip()
    if not stripped:
        return "empty tool_call block"
    try:
        obj = _loads(stripped)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError; so is int overflow
        return _describe(exc)
    if not isinstance(obj, dict):
        return f"tool call must be a JSON object, got {type(obj).__name__}"
    name = obj.get("name")
    if not isinstance(name, str) or not name.strip():
        return "missing or non-string 'name'"
    if "arguments" not in obj:
        return ToolCall(name=name, arguments={})
    args = obj["arguments"]
    if isinstance(args, str):
        try:
            args = _loads(args)
        except (ValueError, RecursionError) as exc:
            return f"'arguments' string is not JSON ({_describe(exc)})"
    if not isinstance(args, dict):
        return f"'arguments' must be a JSON object, got {type(args).__name__}"
    return ToolCall(name=name, arguments=args)


def parse_tool_calls(text: str, end_markers: tuple[str, ...] = DEFAULT_END_MARKERS) -> ParseResult:
    """Parse one decoded assistant turn (decode with special tokens kept).

    Scans left to right: an opener followed by a closer is a block; an opener followed by another
    opener before any closer is an *unterminated* block (the scan resumes at the second opener, so
    one broken block does not hide later good ones); a closer with no opener is a stray tag; an
    opener with no closer at all is a truncated block. Text outside blocks becomes ``content``.
    """
    try:
        return _parse(text, end_markers)
    except Exception as exc:  # pragma: no cover - last-resort guard; the fuzz test shows it unused
        return ParseResult(errors=[BlockError(0, f"internal parser error: {exc!r}", text[:200])])


def _parse(text: str, end_markers: tuple[str, ...]) -> ParseResult:
    if not isinstance(text, str):
        return ParseResult(errors=[BlockError(0, f"expected str, got {type(text).__name__}", "")])
    body = text
    changed = True
    while changed:  # strip any run of trailing end markers (e.g. "<|endoftext|><|im_end|>")
        changed = False
        trimmed = body.rstrip()
        for marker in end_markers:
            if marker and trimmed.endswith(marker):
                body = trimmed[: -len(marker)]
                changed = True
    reasoning, rest, truncated = split_reasoning(body)

    calls: list[ToolCall] = []
    errors: list[BlockError] = []
    content_parts: list[str] = []
    pos = 0
    index = 0
    n = len(rest)
    while pos < n:
        open_at = rest.find(TOOL_CALL_OPEN, pos)
        close_at = rest.find(TOOL_CALL_CLOSE, pos)
        if open_at < 0 and close_at < 0:
            content_parts.append(rest[pos:])
            break
        if close_at >= 0 and (open_at < 0 or close_at < open_at):
            content_parts.append(rest[pos:close_at])
            errors.append(BlockError(index, "stray </tool_call> without <tool_call>", TOOL_CALL_CLOSE))
            index += 1
            pos = close_at + len(TOOL_CALL_CLOSE)
            continue
        content_parts.append(rest[pos:open_at])
        start = open_at + len(TOOL_CALL_OPEN)
        next_open = rest.find(TOOL_CALL_OPEN, start)
        if close_at < 0:
            end = next_open if next_open >= 0 else n
            reason = "unterminated <tool_call> (nested opener)" if next_open >= 0 else (
                "unterminated <tool_call> (output truncated?)"
            )
            errors.append(BlockError(index, reason, rest[open_at:end]))
            index += 1
            pos = end
            continue
        if 0 <= next_open < close_at:
            errors.append(BlockError(index, "unterminated <tool_call> (nested opener)", rest[open_at:next_open]))
            index += 1
            pos = next_open
            continue
        raw = rest[open_at : close_at + len(TOOL_CALL_CLOSE)]
        parsed = parse_call_json(rest[start:close_at])
        if isinstance(parsed, ToolCall):
            calls.append(parsed)
        else:
            errors.append(BlockError(index, parsed, raw))
        index += 1
        pos = close_at + len(TOOL_CALL_CLOSE)
    content = "".join(content_parts).strip()
    return ParseResult(
        calls=calls, errors=errors, content=content, reasoning=reasoning, reasoning_truncated=truncated
    )
