"""Schema-violating arguments on every tool: always an MCP error naming the field, server alive,
state unchanged."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from mcp import Client, StdioServerParameters

from servers.kit import DomainRuntime
from tests.servers.harness import ALL_DOMAINS, run, runtime, snapshot

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def valid_value(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values satisfying a property schema, so the one injected violation is the only one."""
    if "enum" in prop:
        return st.sampled_from(prop["enum"])
    kind = prop.get("type", "string")
    if kind == "string":
        base: st.SearchStrategy[Any] = (
            st.from_regex(prop["pattern"], fullmatch=True) if "pattern" in prop else st.text(min_size=1, max_size=8)
        )
    elif kind in ("integer", "number"):
        lo = prop.get("minimum", prop.get("exclusiveMinimum", 0) + 1 if "exclusiveMinimum" in prop else 1)
        hi = prop.get("maximum", prop.get("exclusiveMaximum", lo + 1000))
        base = st.integers(int(lo), max(int(lo), int(hi) - 1))
    elif kind == "boolean":
        base = st.booleans()
    elif kind == "array":
        base = st.lists(valid_value(prop.get("items", {})), max_size=2)
    else:
        base = st.just({})
    validator = Draft202012Validator(prop)
    return base.filter(validator.is_valid)


@st.composite
def violation(draw: st.DrawFn, rt: DomainRuntime) -> tuple[str, Any, str | None]:
    """(tool, arguments, field the message must name) for one schema violation."""
    name = draw(st.sampled_from(sorted(rt.table.specs)))
    schema = rt.table.schemas[name]
    props, required = schema.get("properties", {}), schema.get("required", [])
    base = {p: draw(valid_value(props[p]), label=f"valid {p}") for p in required}
    kinds = ["extra", "not_object"] + (["missing"] if required else []) + (["wrong"] if props else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "extra":
        key = draw(st.text(min_size=1, max_size=10).filter(lambda k: k not in props))
        return name, {**base, key: draw(JSON)}, key
    if kind == "not_object":
        return name, draw(st.lists(JSON, max_size=3) | st.text(max_size=5) | st.integers() | st.booleans()), None
    if kind == "missing":
        key = draw(st.sampled_from(required))
        return name, {k: v for k, v in base.items() if k != key}, key
    key = draw(st.sampled_from(sorted(props)))
    validator = Draft202012Validator(props[key])
    bad = draw(JSON.filter(lambda v: v is not None and not validator.is_valid(v)))
    return name, {**base, key: bad}, key


@pytest.mark.parametrize("domain", ALL_DOMAINS)
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(data=st.data())
def test_schema_violations_are_clean_errors(domain: str, data: st.DataObject) -> None:
    rt = runtime(domain)
    before = snapshot(rt, "fuzz", 0)
    name, args, field = data.draw(violation(rt))
    out = rt.call(name, args, "fuzz", 0)
    assert out.is_error, f"{name}({args!r}) was accepted: {out.text[:200]}"
    assert out.text.strip()
    if field is not None:
        assert repr(field) in out.text or f"'{field}" in out.text, out.text
    assert snapshot(rt, "fuzz", 0) == before


@settings(max_examples=1, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(data=st.data())
def test_violations_over_stdio_leave_server_alive_and_state_unchanged(data: st.DataObject) -> None:
    """The same over a real subprocess: a burst of bad calls, then a good call still works."""
    domain = ALL_DOMAINS[0]
    cases = data.draw(st.lists(violation(runtime(domain)), min_size=40, max_size=40), label="cases")

    async def go() -> tuple[list[Any], str, str, Any]:
        params = StdioServerParameters(command=sys.executable, args=["-m", f"servers.{domain}"])
        meta = {"io.prove/session": {"id": "fz", "seed": 0}}
        async with Client(params, cache=None) as client:
            snap = (await client.call_tool(f"{domain}_session_snapshot", {}, meta=meta)).content[0].text
            results = [await client.call_tool(n, a if isinstance(a, dict) else {"_": a}, meta=meta)
                       for n, a, _ in cases]
            after = (await client.call_tool(f"{domain}_session_snapshot", {}, meta=meta)).content[0].text
            alive = await client.call_tool(f"{domain}_server_info", {}, meta=meta)
            return results, snap, after, alive

    results, snap, after, alive = run(go())
    assert all(r.is_error for r in results)
    assert json.loads(snap) == json.loads(after)
    assert not alive.is_error
