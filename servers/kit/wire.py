"""The answer to a stdio line the SDK's parser refuses, carrying the request's id whenever it can be read.

The SDK reads each stdio line with ``jsonrpc_message_adapter.validate_json`` (jiter underneath). Some
lines that are valid JSON still fail there: arguments nested ~200 levels deep (jiter's recursion
limit), a lone surrogate escape such as ``"\\ud800"`` (in a value, a key or the method name), an
integer of more than 4,300 digits; and some valid JSON is no JSON-RPC message (``"method": 7``). The
SDK hands the kit only the exception, so the kit used to answer ``id: null``; an official client then
cannot match the answer to its request and waits out its timeout (forever by default). Over stdio
nothing but the id pairs an answer with its request, so the id must come back whenever it can be
read.

The rule (:func:`answer_unparsed`): read the line with Python's own ``json`` module, which accepts
all of the above; if it is a request (a ``method`` and an id the SDK itself would accept), answer
with that id, naming the member that the SDK cannot read:

* ``tools/call`` whose ``arguments`` hold such a value: an ``isError`` tool result naming each
  argument (``transfer_funds: invalid argument 'amount': is nested too deeply``), as the kit's own
  input rules (:mod:`servers.kit.hardening`) answer any bad argument;
* any other ``params`` member: ``-32602`` naming ``params.<member>``;
* the envelope (``jsonrpc``, ``method``, another top-level member): ``-32600``.

Which member is at fault is asked of the SDK's parser itself: each member alone, at the same place in
an otherwise minimal request, is parsed by ``validate_json``, so its depth limit and Unicode rules
are never restated here. A line that is not JSON (or nested deeper than Python's parser goes), one
with no readable id, and one without a ``method`` (a broken *response*: answering it with its id
would resolve the client's own request of that number) keep ``id: null`` — ``-32700`` when it is not
JSON, ``-32600`` when it is JSON but no JSON-RPC request.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    CallToolResult,
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    TextContent,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from servers.kit.hardening import clean_message, short

_BASE: dict[str, Any] = {"jsonrpc": "2.0", "id": 0, "method": "m"}
"""The minimal request each suspect member is placed in to ask the SDK's parser about it alone."""


class _Unreadable(ValueError):
    """A value Python's parser kept but that cannot be written back as JSON for the SDK to read."""


class _HugeInt:
    """An integer literal too long for ``int()`` (over 4,300 digits; the SDK's parser refuses it too)."""

    __slots__ = ()


def _parse_int(text: str) -> int | _HugeInt:
    try:
        return int(text)
    except ValueError:
        return _HugeInt()


def _refuse(value: Any) -> Any:
    if isinstance(value, _HugeInt):
        raise _Unreadable("holds a number out of range")
    raise TypeError(type(value).__name__)  # pragma: no cover - json.loads makes nothing else


def _reason(exc: ValidationError) -> str:
    """A short, clean reason from the SDK parser's first complaint."""
    error = exc.errors()[0]
    text = str(error.get("msg", ""))
    if error.get("type") != "json_invalid":
        return f"is invalid ({text[:120]})"
    if "recursion limit" in text:
        return "is nested too deeply"
    if "surrogate" in text or "hex escape" in text:
        return "is not valid Unicode (a lone surrogate escape)"
    if "out of range" in text:
        return "holds a number out of range"
    return "cannot be read (" + text.removeprefix("Invalid JSON: ").split(" at line ")[0][:120] + ")"


def _probe(message: dict[str, Any]) -> tuple[Any, str | None]:
    """``(parsed message, None)`` when the SDK's parser reads ``message`` written as JSON, else
    ``(None, why)``."""
    try:
        text = json.dumps(message, default=_refuse)  # ensure_ascii: a lone surrogate stays an escape
    except _Unreadable as exc:
        return None, str(exc)
    except RecursionError:
        return None, "is nested too deeply"
    try:
        return jsonrpc_message_adapter.validate_json(text, by_name=False), None
    except ValidationError as exc:
        return None, _reason(exc)


def _fault(**members: Any) -> str | None:
    """Why the SDK cannot read these members placed in the minimal request, or None."""
    return _probe({**_BASE, **members})[1]


def _label(key: Any) -> str:
    """A member name fit for a message: as is, or escaped when it is not valid Unicode."""
    name = str(key)
    if name.isprintable() and not any(0xD800 <= ord(c) <= 0xDFFF for c in name):
        return name if len(name) <= 60 else f"{name[:60]}…"
    return ascii(name[:60])[1:-1]


def _error(rid: int | str | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=rid, error=ErrorData(code=code, message=clean_message(message)))


def _unparsed_message(exc: Exception) -> tuple[bool, Any]:
    """``(is JSON, the decoded line)`` for what the SDK's stdio reader raised on a line.

    ``validate_json`` keeps the raw line as the ``input`` of a ``json_invalid`` error; when the JSON
    was read but is no JSON-RPC message, the ``missing``-field errors of the union carry the decoded
    envelope."""
    if not isinstance(exc, ValidationError):
        return False, None
    errors = exc.errors()
    raw = next((e.get("input") for e in errors if e.get("type") == "json_invalid"), None)
    if raw is None:
        envelope = next((e["input"] for e in errors
                         if e.get("type") == "missing" and len(e.get("loc", ())) == 2 and isinstance(e.get("input"), dict)),
                        None)
        return True, envelope
    try:
        return True, json.loads(raw, parse_int=_parse_int) if isinstance(raw, str | bytes) else None
    except (ValueError, RecursionError):
        return False, None


def _request_id(message: dict[str, Any]) -> int | str | None:
    """The request's id as the SDK would read it, or None when it cannot be read (a lone surrogate,
    a bool, a float, a number out of range...)."""
    if "id" not in message:
        return None
    parsed, _ = _probe({**_BASE, "id": message["id"]})
    return parsed.id if isinstance(parsed, JSONRPCRequest) else None


def answer_unparsed(exc: Exception) -> JSONRPCError | JSONRPCResponse:
    """The reply to one stdio line the SDK's reader refused with ``exc`` (see the module's rule)."""
    is_json, message = _unparsed_message(exc)
    rid = _request_id(message) if isinstance(message, dict) and "method" in message else None
    if rid is None:
        if is_json:
            return _error(None, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message")
        return _error(None, PARSE_ERROR, "Parse error: not valid JSON")
    assert isinstance(message, dict)
    if message.get("jsonrpc") != "2.0":
        return _error(rid, INVALID_REQUEST, "Invalid Request: 'jsonrpc' must be \"2.0\"")
    for key, value in message.items():
        if key not in ("jsonrpc", "id", "params") and (why := _fault(**{key: value})):
            return _error(rid, INVALID_REQUEST, f"Invalid Request: '{_label(key)}' {why}")
    params = message.get("params")
    if params is not None and not isinstance(params, dict):
        return _error(rid, INVALID_PARAMS, "Invalid params: 'params' must be an object")
    params = params or {}
    tool_call = message.get("method") == "tools/call"
    for key, value in params.items():
        if not (tool_call and key == "arguments" and isinstance(value, dict)) \
                and (why := _fault(params={key: value})):
            return _error(rid, INVALID_PARAMS, f"Invalid params: 'params.{_label(key)}' {why}")
    if tool_call and isinstance(params.get("arguments"), dict):
        problems = []
        for key, value in params["arguments"].items():
            if _fault(params={"arguments": {key: None}}):
                problems.append(f"invalid argument name {short(key, 60)}")
            elif why := _fault(params={"arguments": {key: value}}):
                problems.append(f"invalid argument '{_label(key)}': {why}")
        if problems:
            name = params.get("name")
            text = f"{name}: " + "; ".join(problems) if isinstance(name, str) else "; ".join(problems)
            result = CallToolResult(content=[TextContent(type="text", text=clean_message(text))], is_error=True)
            return JSONRPCResponse(jsonrpc="2.0", id=rid,
                                   result=result.model_dump(by_alias=True, mode="json", exclude_none=True))
    # A guard, reached by no line we know of (each fault above is found member by member): the
    # request still gets an answer with its id.
    _, why = _probe(message)
    return _error(rid, INVALID_REQUEST, f"Invalid Request: the request {why or 'cannot be read'}")
