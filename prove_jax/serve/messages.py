"""OpenAI wire format <-> the chat templates' messages, with validation that names the field.

A request is checked completely before any tokenising: every problem becomes a
:class:`RequestError` carrying the offending parameter path (``messages[2].tool_calls[0]``), which
the server returns as an OpenAI-style 400. Assistant tool-call ``arguments`` arrive as JSON
*strings*; they are decoded to objects so the template writes them exactly as training rendered
its own calls (``tojson`` of the object), whatever spacing the client used.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from prove_jax.chat import ParseResult

ROLES = ("system", "developer", "user", "assistant", "tool")


class RequestError(ValueError):
    """A request the server rejects: ``status`` (400 / 404), ``param`` and ``code`` go to the client."""

    def __init__(self, message: str, *, param: str | None = None, code: str | None = None,
                 status: int = 400, kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.message, self.param, self.code, self.status, self.kind = message, param, code, status, kind

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.kind, "param": self.param, "code": self.code}}


def _text(content: Any, where: str) -> str | None:
    """Message content: a string, ``None`` or a list of ``{"type": "text", "text": ...}`` parts."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for i, part in enumerate(content):
            if not isinstance(part, Mapping) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                raise RequestError(f"{where}[{i}] must be a text part {{'type': 'text', 'text': str}} "
                                   "(only text content is supported)", param=f"{where}[{i}]")
            parts.append(part["text"])
        return "".join(parts)
    raise RequestError(f"{where} must be a string, null or a list of text parts, got {type(content).__name__}",
                       param=where)


def _call(call: Any, where: str) -> dict[str, Any]:
    if not isinstance(call, Mapping):
        raise RequestError(f"{where} must be an object", param=where)
    fn = call.get("function")
    if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str) or not fn["name"]:
        raise RequestError(f"{where}.function.name must be a non-empty string", param=f"{where}.function.name")
    args = fn.get("arguments", "{}")
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as exc:
            raise RequestError(f"{where}.function.arguments is not valid JSON ({exc.msg} at {exc.pos})",
                               param=f"{where}.function.arguments") from None
    if not isinstance(args, Mapping):
        raise RequestError(f"{where}.function.arguments must encode a JSON object", param=f"{where}.function.arguments")
    return {"type": "function", "function": {"name": fn["name"], "arguments": dict(args)}}


def to_template_messages(messages: Any) -> list[dict[str, Any]]:
    """Validate OpenAI ``messages`` and convert them for :meth:`ChatTemplate.render`."""
    if not isinstance(messages, list) or not messages:
        raise RequestError("messages must be a non-empty array", param="messages")
    out: list[dict[str, Any]] = []
    for i, msg in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(msg, Mapping):
            raise RequestError(f"{where} must be an object", param=where)
        role = msg.get("role")
        if role not in ROLES:
            raise RequestError(f"{where}.role must be one of {', '.join(ROLES)}, got {role!r}", param=f"{where}.role")
        content = _text(msg.get("content"), f"{where}.content")
        if role == "developer":  # OpenAI's newer name for the system role
            role = "system"
        if role in ("system", "user", "tool") and content is None:
            raise RequestError(f"{where}.content is required for role {role}", param=f"{where}.content")
        item: dict[str, Any] = {"role": role, "content": content or ""}
        if role == "assistant":
            calls = msg.get("tool_calls") or []
            if not isinstance(calls, list):
                raise RequestError(f"{where}.tool_calls must be an array", param=f"{where}.tool_calls")
            if calls:
                item["tool_calls"] = [_call(c, f"{where}.tool_calls[{j}]") for j, c in enumerate(calls)]
            if isinstance(msg.get("reasoning_content"), str):
                item["reasoning_content"] = msg["reasoning_content"]
        out.append(item)
    return out


def validate_tools(tools: Any) -> list[dict[str, Any]] | None:
    """``tools`` as given (the template dumps them verbatim, as training did), after checking shape."""
    if tools is None:
        return None
    if not isinstance(tools, list):
        raise RequestError("tools must be an array", param="tools")
    for i, tool in enumerate(tools):
        where = f"tools[{i}]"
        if not isinstance(tool, Mapping) or tool.get("type", "function") != "function":
            raise RequestError(f"{where} must be {{'type': 'function', 'function': {{...}}}}", param=where)
        fn = tool.get("function")
        if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str) or not fn["name"]:
            raise RequestError(f"{where}.function.name must be a non-empty string", param=f"{where}.function.name")
        params = fn.get("parameters")
        if params is not None and not isinstance(params, Mapping):
            raise RequestError(f"{where}.function.parameters must be a JSON Schema object",
                               param=f"{where}.function.parameters")
    return [dict(t) for t in tools] or None


def forced_name(tool_choice: Any, tools: Sequence[Mapping[str, Any]] | None) -> str | bool | None:
    """What ``tool_choice`` forces: a function name, ``True`` (some call: ``required``), ``False``
    (no parsing of calls: ``none``) or ``None`` (``auto``)."""
    if tool_choice is None or tool_choice == "auto":
        return None
    if tool_choice == "none":
        return False
    if tool_choice == "required":
        if not tools:
            raise RequestError("tool_choice 'required' needs tools", param="tool_choice")
        return True
    if isinstance(tool_choice, Mapping):
        fn = tool_choice.get("function")
        name = fn.get("name") if isinstance(fn, Mapping) else None
        names = {t["function"]["name"] for t in tools or ()}
        if not isinstance(name, str) or name not in names:
            raise RequestError(f"tool_choice names function {name!r}, which is not among the tools",
                               param="tool_choice.function.name")
        return name
    raise RequestError("tool_choice must be 'auto', 'none', 'required' or {'type': 'function', 'function': "
                       "{'name': ...}}", param="tool_choice")


def openai_tool_calls(parsed: ParseResult) -> list[dict[str, Any]]:
    """Parsed calls in OpenAI form (arguments as a compact JSON string, a fresh call id each)."""
    return [{"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function",
             "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)}}
            for c in parsed.calls]
