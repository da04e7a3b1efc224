"""Level-2 type rules (schema compilation) and JSON value equality."""

from __future__ import annotations

from typing import Any

import pytest

from prove_jax.rewards.schema import compile_tool_schema, json_eq


def accepts(props: dict[str, Any], args: Any, required: list[str] | None = None) -> bool:
    spec = compile_tool_schema({"type": "object", "properties": props, "required": required or []})
    return True if spec is None else spec.accepts(args)


@pytest.mark.parametrize(
    ("schema", "value", "ok"),
    [
        ({"type": "string"}, "a", True),
        ({"type": "string"}, 1, False),
        ({"type": "integer"}, 3, True),
        ({"type": "integer"}, 3.0, True),  # zero-fraction float is an integer (JSON Schema draft 6+)
        ({"type": "integer"}, 3.5, False),
        ({"type": "integer"}, True, False),  # bool is not an integer
        ({"type": "number"}, 3, True),  # an integer satisfies "number"
        ({"type": "number"}, 2.5, True),
        ({"type": "number"}, False, False),  # bool is not a number
        ({"type": "number"}, "3", False),
        ({"type": "boolean"}, True, True),
        ({"type": "boolean"}, 1, False),
        ({"type": "string"}, None, False),  # null only where allowed
        ({"type": ["string", "null"]}, None, True),
        ({"type": "string", "nullable": True}, None, True),
        ({"anyOf": [{"type": "string"}, {"type": "null"}]}, None, True),
        ({"anyOf": [{"type": "string"}, {"type": "null"}]}, 4, False),
        ({"oneOf": [{"type": "integer"}, {"type": "string"}]}, "x", True),
        ({"oneOf": [{"type": "integer"}, {"type": "string"}]}, [], False),
        ({"type": "string", "enum": ["a", "b"]}, "zzz", True),  # enum membership not required
        ({"enum": ["a", "b"]}, 3, False),  # ...but enum without type constrains the type
        ({"type": "array", "items": {"type": "integer"}}, [1, 2], True),
        ({"type": "array", "items": {"type": "integer"}}, [1, "2"], False),
        ({"type": "array"}, {"a": 1}, False),
        ({"type": "object", "properties": {"q": {"type": "integer"}}, "required": ["q"]}, {"q": 1}, True),
        ({"type": "object", "properties": {"q": {"type": "integer"}}, "required": ["q"]}, {}, False),
        ({"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}},
                                     "required": ["sku"]}}, [{"sku": "a"}, {"qty": 1}], False),
        ({"allOf": [{"type": "number"}, {"type": "integer"}]}, 2.5, False),
        ({"type": "mystery"}, object(), True),  # uninterpretable schema: lenient
        ({"$ref": "#/defs/x"}, 1, True),
        ({}, None, True),
    ],
)
def test_property_type_rules(schema: dict[str, Any], value: Any, ok: bool) -> None:
    assert accepts({"p": schema}, {"p": value}) is ok


def test_required_present_extra_keys_allowed() -> None:
    props = {"a": {"type": "string"}, "b": {"type": "integer"}}
    assert accepts(props, {"a": "x"}, ["a"])
    assert accepts(props, {"a": "x", "zzz": [1, 2]}, ["a"])  # undeclared extra keys never fail
    assert not accepts(props, {"b": 1}, ["a"])  # a required key is missing
    assert not accepts(props, {"a": "x", "b": "1"}, ["a"])  # declared optional key with a wrong type


def test_tool_without_schema_accepts_any_dict() -> None:
    assert compile_tool_schema(None) is None
    assert compile_tool_schema({"type": "object"}) is None


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (1, 1.0, True),
        (5, 5.0, True),
        (True, 1, False),
        (False, 0, False),
        (True, True, True),
        (None, None, True),
        (None, 0, False),
        ("a", "a", True),
        ("a", "A", False),
        ([1, 2], [1.0, 2.0], True),
        ([1, 2], [2, 1], False),
        ([1, 2], (1, 2), True),
        ([True], [1], False),
        ({"a": [1, {"b": 2}]}, {"a": [1.0, {"b": 2.0}]}, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ({"a": 1}, {"b": 1}, False),
        ({"a": True}, {"a": 1}, False),
        ("1", 1, False),
    ],
)
def test_json_equality(a: Any, b: Any, equal: bool) -> None:
    assert json_eq(a, b) is equal
    assert json_eq(b, a) is equal
