"""Input rules every tool of every domain gets, enforced once here so no domain can forget one.

A hostile or confused client (raw JSON-RPC lines as well as the official client) must never be able
to: smuggle ``NaN``/``Infinity`` into state (a NaN transfer poisons two balances), hand a tool typed
``int`` a float (``2.0``, ``1e308``), move sub-cent or denormal money, store megabyte strings or
control characters, or read host paths and tracebacks in an error message. The rules:

* numbers are finite; integers are converted to ``int`` after validation and bounded
  (:data:`MAX_INT`), other numbers bounded by :data:`MAX_NUMBER`;
* money parameters (``x-money`` in the schema, :data:`servers.kit.params.Money`) have at most two
  decimals and reach the tool rounded to cents;
* every string and array parameter carries a published bound (domains' own, or the kit defaults,
  :func:`publish_bounds`); strings are valid Unicode without control characters, and single-line
  unless declared multi-line (:data:`servers.kit.params.Text`);
* messages never echo more than a short prefix of a value, never carry host paths, and internal
  errors say only that the call was rolled back (:func:`clean_message`).
"""

from __future__ import annotations

import contextlib
import math
import re
import site
import sys
import tempfile
from pathlib import Path
from typing import Any

from servers.kit.params import DEFAULT_MAX_CHARS, DEFAULT_MAX_ITEMS, MONEY_KEY, MULTILINE_KEY

MAX_INT = 2**53 - 1
"""Largest integer magnitude accepted (JSON's exactly-representable range)."""
MAX_NUMBER = 1e15
MAX_MESSAGE_CHARS = 2_000

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u2028\u2029]")
_LINE_BREAK = re.compile(r"[\n\r\t]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


class InputError(ValueError):
    """A rule above was broken; the message names the argument."""


def short(value: Any, limit: int = 40) -> str:
    """``repr(value)`` cut to ``limit`` characters, so a megabyte value never reaches a message."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} chars)"


# -- published bounds -------------------------------------------------------------------------
def publish_bounds(node: Any) -> Any:
    """Give every string (not an enum) a ``maxLength`` and every array a ``maxItems`` it lacks."""
    if isinstance(node, dict):
        out = {k: publish_bounds(v) for k, v in node.items()}
        kind = out.get("type")
        if kind == "string" and "enum" not in out and "const" not in out:
            out.setdefault("maxLength", DEFAULT_MAX_CHARS)
        if kind == "array":
            out.setdefault("maxItems", DEFAULT_MAX_ITEMS)
        return out
    if isinstance(node, list):
        return [publish_bounds(v) for v in node]
    return node


# -- before validation: what JSON Schema cannot say -------------------------------------------
def screen(value: Any, path: str = "") -> None:
    """Refuse non-finite numbers and broken Unicode anywhere in the arguments (keys included)."""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InputError(f"invalid argument '{path or '<arguments>'}': must be a finite number, got {value}")
    elif isinstance(value, str):
        if _SURROGATE.search(value):
            raise InputError(f"invalid argument '{path or '<arguments>'}': not valid Unicode text")
    elif isinstance(value, dict):
        for key, item in value.items():
            sub = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and (_SURROGATE.search(key) or _CONTROL.search(key) or len(key) > 200):
                if path:
                    raise InputError(f"invalid argument '{path}': key {short(key, 240)} is not allowed")
                raise InputError(f"invalid argument name {short(key, 240)}")
            screen(item, sub)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            screen(item, f"{path}.{i}" if path else str(i))


# -- after validation: convert and apply the value rules ----------------------------------------
def _branch(schema: dict[str, Any], value: Any) -> dict[str, Any]:
    """The ``anyOf`` / ``oneOf`` option that describes ``value`` (validation already passed)."""
    options = schema.get("anyOf") or schema.get("oneOf")
    if not options:
        return schema
    want = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}
    kind = want.get(type(value))
    for option in options:
        types = option.get("type")
        types = types if isinstance(types, list) else [types]
        if kind in types or (kind == "integer" and "number" in types) or (kind == "number" and "integer" in types):
            return {**schema, **option}
    return schema


def conform(schema: dict[str, Any], value: Any, path: str) -> Any:
    """``value`` converted to what the tool's type hints promise, or :class:`InputError`."""
    schema = _branch(schema, value)
    kind = schema.get("type")
    where = path or "<arguments>"
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        if kind == "integer" or (isinstance(value, int) and kind != "number"):
            if isinstance(value, float):
                if not value.is_integer():
                    raise InputError(f"invalid argument '{where}': must be a whole number, got {short(value)}")
                if abs(value) > MAX_INT:
                    raise InputError(f"invalid argument '{where}': {short(value)} is out of range")
                value = int(value)
            if abs(value) > MAX_INT:
                raise InputError(f"invalid argument '{where}': {short(value)} is out of range")
            return value
        if abs(value) > MAX_NUMBER:
            raise InputError(f"invalid argument '{where}': {short(value)} is out of range")
        if schema.get(MONEY_KEY):
            cents = round(value * 100)
            if abs(value * 100 - cents) > 1e-6:
                raise InputError(
                    f"invalid argument '{where}': an amount of money has at most two decimals, got {short(value)}")
            return cents / 100
        return float(value)
    if isinstance(value, str):
        if _CONTROL.search(value) or (not schema.get(MULTILINE_KEY) and _LINE_BREAK.search(value)):
            allowed = "" if not schema.get(MULTILINE_KEY) else " other than line breaks and tabs"
            raise InputError(f"invalid argument '{where}': control characters{allowed} are not allowed")
        return value
    if isinstance(value, list):
        items = schema.get("items", {})
        return [conform(items, v, f"{path}.{i}" if path else str(i)) for i, v in enumerate(value)]
    if isinstance(value, dict):
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        out = {}
        for key, v in value.items():
            sub = props.get(key, extra if isinstance(extra, dict) else {})
            out[key] = conform(sub, v, f"{path}.{key}" if path else key)
        return out
    return value


# -- messages ---------------------------------------------------------------------------------
def _host_prefixes() -> list[str]:
    candidates = {sys.prefix, sys.base_prefix, sys.exec_prefix, tempfile.gettempdir(),
                  str(Path(__file__).resolve().parents[2]), str(Path.home())}
    with contextlib.suppress(AttributeError):  # virtualenvs without site.getsitepackages
        candidates.update(site.getsitepackages())
    # Short prefixes ("/", "/root", "/tmp") are also virtual paths of the filesystem domain.
    return sorted((p for p in candidates if p and len(p) > 8), key=len, reverse=True)


_PREFIXES = _host_prefixes()
_TRACEBACK = re.compile(r"Traceback \(most recent call last\):.*", re.DOTALL)
_SOURCE_FILE = re.compile(r'File "[^"]+\.py"(, line \d+)?')


def clean_message(text: str) -> str:
    """No host path, no traceback, bounded length."""
    text = _TRACEBACK.sub("(details withheld)", text)
    text = _SOURCE_FILE.sub("<source>", text)
    for prefix in _PREFIXES:
        if prefix in text:
            text = text.replace(prefix, "<host>")
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[: MAX_MESSAGE_CHARS - 40] + f"… ({len(text)} chars in all)"
    return text
