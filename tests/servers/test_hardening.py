"""The kit's input rules, tried as a hostile client would on every tool of every domain.

Each domain's smoke scenario (which calls every user tool successfully) runs in lockstep on two
sessions: the second gets every integer as a whole float (``2`` → ``2.0``) and must end byte-identical.
Before each real call, hostile variants of it are sent — NaN/Infinity, out-of-range integers,
sub-cent and denormal money, megabyte strings, control characters — and each must be an error naming
the argument, with no host path or traceback in the message, and leave the session unchanged.
Raw JSON-RPC lines that cannot be parsed must still be answered.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from servers.kit import DomainRuntime
from servers.kit.params import MONEY_KEY, MULTILINE_KEY, TEXT_MAX_CHARS
from tests.servers.harness import (
    ALL_DOMAINS,
    raw_stdio_session,
    read_reply,
    run,
    runtime,
    scenario,
    send_line,
    snapshot,
)

REPO = str(Path(__file__).resolve().parents[2])
HOST_MARKERS = [sys.prefix, sys.base_prefix, REPO, "site-packages", "Traceback", 'File "']
MONEY_NAME = re.compile(r"amount|price|cost|fee|tip|budget|deposit|refund|payment|salary|fare|bid|balance")


def _effective(prop: dict[str, Any]) -> dict[str, Any]:
    options = prop.get("anyOf") or []
    for option in options:
        if option.get("type") not in (None, "null"):
            return {**prop, **option}
    return prop


def _hostile(prop: dict[str, Any], value: Any) -> list[tuple[str, Any]]:
    """(label, bad value) variants of one valid argument value, by its published schema."""
    prop = _effective(prop)
    kind = prop.get("type")
    out: list[tuple[str, Any]] = []
    if isinstance(value, bool):
        return out
    if isinstance(value, int | float) and kind in ("integer", "number"):
        out += [("nan", math.nan), ("inf", math.inf), ("-inf", -math.inf)]
        if kind == "integer":
            out += [("1e308", 1e308), ("huge int", 10**30), ("fraction", value + 0.5)]
        if prop.get(MONEY_KEY):
            out += [("sub-cent", 0.001), ("denormal", 1e-310), ("three decimals", round(float(value), 2) + 0.005)]
    if isinstance(value, str) and "enum" not in prop:
        out += [("megabyte", "x" * 1_000_000), ("bell", value + "\x07"), ("nul", "\x00" + value)]
        if not prop.get(MULTILINE_KEY):
            out.append(("newline", value + "\nrm -rf /"))
    return out


def _as_floats(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, list):
        return [_as_floats(v) for v in value]
    if isinstance(value, dict):
        return {k: _as_floats(v) for k, v in value.items()}
    return value


def _clean(text: str) -> None:
    assert len(text) <= 2_000, f"message of {len(text)} chars"
    for marker in HOST_MARKERS:
        assert marker not in text, f"{marker!r} leaked into {text[:300]!r}"


@pytest.mark.parametrize("domain", ALL_DOMAINS)
def test_hostile_variants_of_every_smoke_call(domain: str) -> None:
    rt = DomainRuntime(runtime(domain).domain)
    schemas = rt.table.schemas
    tried: dict[str, int] = {}
    outcomes_args: list[tuple[str, dict[str, Any]]] = []

    async def call(name: str, args: dict[str, Any]) -> Any:
        if name not in schemas:  # session plumbing (the clock helper): same on both sessions
            out, twin = rt.call(name, args, "a", 0), rt.call(name, args, "b", 0)
            assert not out.is_error and not twin.is_error, out.text
            return out.json()
        props = schemas[name].get("properties", {})
        before = snapshot(rt, "a", 0)
        for key, value in args.items():
            for label, bad in _hostile(props.get(key, {}), value):
                out = rt.call(name, {**args, key: bad}, "a", 0)
                assert out.is_error, f"{name}: {label} {key} accepted: {out.text[:200]}"
                assert f"'{key}" in out.text, f"{name}: {label} {key}: message does not name it: {out.text[:300]}"
                _clean(out.text)
                tried[label] = tried.get(label, 0) + 1
        assert snapshot(rt, "a", 0) == before, f"hostile variants of {name} changed state"
        out = rt.call(name, args, "a", 0)
        twin = rt.call(name, _as_floats(args), "b", 0)
        assert not out.is_error, f"{name}({args}) failed: {out.text}"
        assert twin.text == out.text, f"{name}: whole floats for integers changed the result"
        outcomes_args.append((name, args))
        return out.json()

    run(scenario(domain)(call))
    assert snapshot(rt, "a", 0) == snapshot(rt, "b", 0)
    numeric = any(isinstance(v, int | float) and not isinstance(v, bool)
                  for name, args in outcomes_args for v in args.values())
    assert tried.get("megabyte", 0) > 0 and (tried.get("nan", 0) > 0 or not numeric), tried


@pytest.mark.parametrize("domain", ALL_DOMAINS)
def test_every_tool_refuses_non_finite_numbers_and_broken_text(domain: str) -> None:
    """Even arguments the smoke scenario never sends: the screen runs before anything else."""
    rt = runtime(domain)
    for name, schema in rt.table.schemas.items():
        for key, prop in schema.get("properties", {}).items():
            prop = _effective(prop)
            bads: list[Any] = [math.nan, math.inf] if prop.get("type") in ("integer", "number") else []
            bads += ["\ud800"] if prop.get("type") == "string" else []
            for bad in bads:
                out = rt.call(name, {key: bad}, "screen", 0)
                assert out.is_error and f"'{key}'" in out.text, (name, key, out.text)


@pytest.mark.parametrize("domain", ALL_DOMAINS)
def test_published_schemas_bound_every_string_array_and_amount(domain: str) -> None:
    rt = runtime(domain)

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            node = _effective(node)
            if node.get("type") == "string" and "enum" not in node:
                assert 0 < node.get("maxLength", 0) <= 8 * TEXT_MAX_CHARS, where
            if node.get("type") == "array":
                assert node.get("maxItems"), where
            for key, sub in node.get("properties", {}).items():
                if _effective(sub).get("type") == "number" and MONEY_NAME.search(key):
                    assert _effective(sub).get(MONEY_KEY), f"{where}.{key} looks like money but is not Money"
                walk(sub, f"{where}.{key}")
            if "items" in node:
                walk(node["items"], f"{where}[]")

    for name, schema in rt.table.schemas.items():
        walk(schema, name)


def test_kit_conversions_reach_the_tool_typed() -> None:
    """An integer parameter receives an ``int`` and money arrives rounded to cents."""
    from servers.kit.hardening import InputError, conform

    schema = {"type": "object", "properties": {"n": {"type": "integer"}, "m": {"type": "number", MONEY_KEY: True},
                                               "x": {"type": "number"}}}
    out = conform(schema, {"n": 2.0, "m": 19.990000000000002, "x": 3}, "")
    assert out == {"n": 2, "m": 19.99, "x": 3.0}
    assert type(out["n"]) is int and type(out["x"]) is float
    for bad in ({"n": 2.5}, {"n": 1e308}, {"m": 0.001}, {"x": 1e300}):
        with pytest.raises(InputError, match=f"'{next(iter(bad))}'"):
            conform(schema, bad, "")


@pytest.mark.parametrize("line, code", [
    ('{"jsonrpc": "2.0", "id": 2, "method": "tools/list"', -32700),  # truncated
    ("[" * 100_000 + "]" * 100_000, -32700),  # nesting deeper than any parser allows
    ('{"jsonrpc": "2.0", "id": 3, "method": "tools/list", "x": "\\q"}', -32700),  # invalid escape
    ("\x00\x01garbage", -32700),
    ('{"hello": "world"}', -32600),  # JSON, but not JSON-RPC
])
def test_every_raw_stdio_line_is_answered(line: str, code: int) -> None:
    proc = raw_stdio_session(ALL_DOMAINS[0])
    try:
        send_line(proc, line)
        reply = read_reply(proc)
        assert reply["id"] is None and reply["error"]["code"] == code
        send_line(proc, {"jsonrpc": "2.0", "id": 7, "method": "tools/list"})
        assert read_reply(proc)["id"] == 7, "the server did not survive the bad line"
    finally:
        proc.kill()
        proc.wait()


def test_raw_nan_and_whole_float_over_stdio() -> None:
    """The literals JSON forbids but Python accepts, straight on the wire."""
    proc = raw_stdio_session("banking")
    try:
        for i, literal in enumerate(("NaN", "Infinity", "-Infinity", "1e400")):
            send_line(proc, f'{{"jsonrpc":"2.0","id":{10 + i},"method":"tools/call","params":{{"name":"transfer_funds",'
                        f'"arguments":{{"amount":{literal}}}}}}}')
            reply = read_reply(proc)
            assert reply["id"] == 10 + i and reply["result"]["isError"], reply
            assert "'amount'" in reply["result"]["content"][0]["text"]
    finally:
        proc.kill()
        proc.wait()


def test_every_raw_http_body_is_answered() -> None:
    import httpx

    from tests.servers.harness import free_port, start_http_server

    port = free_port()
    proc = start_http_server(ALL_DOMAINS[0], port)
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2025-06-18"}
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=20) as client:
            for body in ('{"jsonrpc": "2.0", "id": 2, "method": "tools/list"', "[" * 100_000 + "]" * 100_000,
                         '{"x": "\\q"}', '{"hello": "world"}'):
                reply = client.post("/mcp", content=body, headers=headers)
                assert 400 <= reply.status_code < 500, reply.status_code
                assert reply.json()["error"]["code"] in (-32700, -32600, -32602)
                assert not [m for m in HOST_MARKERS if m in reply.text], reply.text[:300]
    finally:
        proc.kill()
        proc.wait()
