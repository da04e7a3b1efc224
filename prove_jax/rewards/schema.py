"""JSON-schema type checks (R_val level 2) and JSON value equality (R_cov / R_arg).

Both run once per model call inside the GRPO inner loop, so they are *compiled*: a tool's
``parameters`` schema is turned once per example (see :mod:`prove_jax.rewards.plan`) into a
:class:`ToolSpec` whose per-property checks are either a ``frozenset`` of accepted Python types
(the common case, tested inline without a function call) or a small closure for nested/union
schemas.

Level-2 rule ("all required parameters present with JSON-compatible types", prove_paper.md §3):

* every name in ``required`` is a key of the arguments;
* every argument whose key the schema declares in ``properties`` has a JSON-compatible type.
  We type-check *every declared* argument, not only the required ones: a wrongly typed optional
  argument is just as malformed, and a server validating its input would reject it.
* extra keys (not declared) never fail the level;
* "integer" also satisfies "number"; a float with zero fraction (``5.0``) satisfies "integer"
  (JSON Schema draft 6+ semantics, and consistent with ``5 == 5.0`` in value equality);
  ``bool`` is **not** an integer or a number; ``null`` is accepted only when the schema allows it
  (``"type": "null"``, a type list containing it, an ``anyOf``/``oneOf`` branch, or OpenAPI's
  ``"nullable": true``);
* ``anyOf`` and ``oneOf`` both pass when *some* branch passes (we do not enforce "exactly one":
  overlapping branches are a schema-authoring quirk, not a model error); ``allOf`` needs all;
* arrays check their ``items`` schema element-wise; objects check nested ``required`` /
  ``properties`` the same way as the top level;
* ``enum`` membership is **not** required: level 2 is about well-typed calls, while choosing a
  legal value is what execution (level 3) and R_arg measure — and 30 % of examples have their enum
  lists stripped, so enforcing it would make level 2 depend on a data-augmentation knob. When a
  schema gives ``enum``/``const`` but no ``type``, the JSON types of the listed values are used as
  the type constraint;
* unknown type names, ``$ref`` and schemas that are not dicts accept anything (lenient: a checker
  we cannot interpret must not punish the model).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

NoneType = type(None)

#: Accepted Python types for each JSON-schema type name. ``bool`` is deliberately absent from
#: "integer" / "number" (exact-type membership is used, so ``True`` never passes as ``1``).
JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (NoneType,),
    "array": (list, tuple),
    "object": (dict,),
}

#: A compiled property check: ``None`` accepts anything, a ``frozenset`` of types is a shallow
#: type test (see :func:`type_ok`), a callable is a full check returning ``bool``.
Check = frozenset | Callable[[Any], bool] | None

_MAX_DEPTH = 12


def loose_type_ok(value: Any, types: frozenset) -> bool:
    """Slow path of a shallow type test, called only when ``type(value) not in types``.

    Handles the two cases exact-type membership misses: a float with zero fraction for
    "integer", and subclasses of the accepted types (``IntEnum``, ``OrderedDict``...). ``bool``
    can never be subclassed, so a bool that missed the exact test is rejected here too.
    """
    cls = value.__class__
    if cls is bool:
        return False
    if cls is float:
        return int in types and math.isfinite(value) and value.is_integer()
    return any(isinstance(value, t) for t in types if t is not bool)


def type_ok(check: Check, value: Any) -> bool:
    """Apply a compiled :data:`Check` to one value."""
    if check is None:
        return True
    if check.__class__ is frozenset:
        return value.__class__ in check or loose_type_ok(value, check)  # type: ignore[arg-type]
    return check(value)  # type: ignore[operator]


class ToolSpec:
    """Compiled input schema of one tool (or of one nested object schema).

    ``required`` is kept both as a tuple (for iteration) and a frozenset (for the C-level
    ``args.keys() >= required`` subset test); ``props`` maps declared property names to their
    compiled check, omitting properties whose check accepts anything.
    """

    __slots__ = ("props", "required", "required_set")

    def __init__(self, required: tuple[str, ...], props: dict[str, Check]) -> None:
        self.required = required
        self.required_set = frozenset(required)
        self.props = props

    def accepts(self, args: Mapping[str, Any]) -> bool:
        """Level-2 test for an argument dict (the caller has checked it *is* a dict)."""
        if self.required_set and not args.keys() >= self.required_set:
            return False
        props = self.props
        if not props:
            return True
        for key, value in args.items():
            check = props.get(key)
            if check is None:
                continue
            if check.__class__ is frozenset:
                if value.__class__ not in check and not loose_type_ok(value, check):  # type: ignore[arg-type]
                    return False
            elif not check(value):  # type: ignore[operator]
                return False
        return True


#: The spec of a tool without a usable schema: any argument dict passes level 2.
ACCEPT_ANY = ToolSpec((), {})


def _types_of_values(values: list[Any]) -> set[type]:
    """JSON types of ``enum`` / ``const`` values, used when a schema names no ``type``."""
    out: set[type] = set()
    for v in values:
        if v is None:
            out.add(NoneType)
        elif isinstance(v, bool):
            out.add(bool)
        elif isinstance(v, int):
            out.add(int)
        elif isinstance(v, float):
            out.update((int, float) if v.is_integer() else (float,))
        elif isinstance(v, str):
            out.add(str)
        elif isinstance(v, list | tuple):
            out.update((list, tuple))
        elif isinstance(v, dict):
            out.add(dict)
    return out


def _base_types(schema: Mapping[str, Any]) -> frozenset | None:
    """The set of accepted Python types from ``type`` (or enum/const), or ``None`` = any."""
    declared = schema.get("type")
    names: list[str]
    if isinstance(declared, str):
        names = [declared]
    elif isinstance(declared, list | tuple) and declared:
        names = [n for n in declared if isinstance(n, str)]
    else:
        names = []
    types: set[type] = set()
    if names:
        for name in names:
            mapped = JSON_TYPES.get(name)
            if mapped is None:  # unknown type name ("any", typo...): be lenient
                return None
            types.update(mapped)
    elif "enum" in schema and isinstance(schema["enum"], list) and schema["enum"]:
        types = _types_of_values(schema["enum"])
    elif "const" in schema:
        types = _types_of_values([schema["const"]])
    else:
        return None
    if schema.get("nullable") is True:
        types.add(NoneType)
    return frozenset(types) if types else None


def compile_object(schema: Mapping[str, Any], depth: int = 0) -> ToolSpec:
    """Compile an object schema's ``required`` / ``properties`` into a :class:`ToolSpec`."""
    req = schema.get("required")
    required = tuple(k for k in req if isinstance(k, str)) if isinstance(req, list | tuple) else ()
    props: dict[str, Check] = {}
    declared = schema.get("properties")
    if isinstance(declared, Mapping):
        for key, sub in declared.items():
            check = compile_check(sub, depth + 1)
            if check is not None:
                props[str(key)] = check
    return ToolSpec(tuple(dict.fromkeys(required)), props)


def _array_check(item: Check) -> Callable[[Any], bool]:
    """Element-wise ``items`` check; values that are not arrays pass (the type test is separate)."""
    if item.__class__ is frozenset:

        def check(v: Any) -> bool:
            if v.__class__ is not list and not isinstance(v, list | tuple):
                return True
            for x in v:  # noqa: SIM110 - explicit loop: measurably faster than all(<genexpr>)
                if x.__class__ not in item and not loose_type_ok(x, item):  # type: ignore[arg-type]
                    return False
            return True

    else:
        item_fn = cast(Callable[[Any], bool], item)

        def check(v: Any) -> bool:
            if v.__class__ is not list and not isinstance(v, list | tuple):
                return True
            for x in v:  # noqa: SIM110 - explicit loop: measurably faster than all(<genexpr>)
                if not item_fn(x):
                    return False
            return True

    return check


def _object_check(spec: ToolSpec) -> Callable[[Any], bool]:
    """Nested ``required`` / ``properties`` check; values that are not objects pass."""

    def check(v: Any) -> bool:
        return spec.accepts(v) if v.__class__ is dict or isinstance(v, Mapping) else True

    return check


def _any_of(branches: tuple[Check, ...]) -> Callable[[Any], bool]:
    def check(v: Any) -> bool:
        return any(type_ok(c, v) for c in branches)

    return check


def _all_of(branches: tuple[Check, ...]) -> Callable[[Any], bool]:
    def check(v: Any) -> bool:
        return all(type_ok(c, v) for c in branches)

    return check


def compile_check(schema: Any, depth: int = 0) -> Check:
    """Compile one (property) schema into a :data:`Check`; see the module doc for the rules.

    Keywords combine conjunctively, as in JSON Schema: ``type`` ∧ ``items`` ∧ nested object ∧
    ``anyOf``/``oneOf`` ∧ ``allOf``. A union of plain type branches (``anyOf: [{type: string},
    {type: null}]``, the usual ``Optional[...]``) folds into one type set so it stays on the fast
    inline path.
    """
    if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
        return None
    base = _base_types(schema)
    parts: list[Callable[[Any], bool]] = []

    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if not isinstance(branches, list) or not branches:
            continue
        compiled = [compile_check(b, depth + 1) for b in branches]
        if any(c is None for c in compiled):
            continue  # some branch accepts anything
        if all(c.__class__ is frozenset for c in compiled):
            union = frozenset().union(*compiled)  # type: ignore[arg-type]
            base = union if base is None else base & union
        else:
            parts.append(_any_of(tuple(compiled)))

    items = schema.get("items")
    if isinstance(items, Mapping) and (base is None or list in base):
        item_check = compile_check(items, depth + 1)
        if item_check is not None:
            parts.append(_array_check(item_check))

    if (base is None or dict in base) and (
        isinstance(schema.get("properties"), Mapping) or isinstance(schema.get("required"), list | tuple)
    ):
        nested = compile_object(schema, depth + 1)
        if nested.required or nested.props:
            parts.append(_object_check(nested))

    all_of = schema.get("allOf")
    if isinstance(all_of, list):
        compiled_all = tuple(c for c in (compile_check(b, depth + 1) for b in all_of) if c is not None)
        if compiled_all:
            parts.append(_all_of(compiled_all))

    if not parts:
        return base
    if base is None and len(parts) == 1:
        return parts[0]
    checks = tuple(parts)

    def combined(v: Any) -> bool:
        if base is not None and v.__class__ not in base and not loose_type_ok(v, base):
            return False
        for part in checks:  # noqa: SIM110 - explicit loop: measurably faster than all(<genexpr>)
            if not part(v):
                return False
        return True

    return combined


def compile_tool_schema(parameters: Any) -> ToolSpec | None:
    """Compile a tool's ``parameters`` schema; ``None`` means "any argument dict passes"."""
    if not isinstance(parameters, Mapping):
        return None
    spec = compile_object(parameters)
    if not spec.required and not spec.props:
        return None
    return spec


# --------------------------------------------------------------------------- JSON equality

_NUMBERS = frozenset((int, float))
_SCALARS = frozenset((str, int, float, bool, NoneType))  # same-type == is JSON equality
_MISSING = object()


def json_eq(a: Any, b: Any) -> bool:
    """Equality of two JSON values, as R_cov / R_arg compare argument values.

    Numbers compare by value (``1 == 1.0``), but ``bool`` is its own JSON type (``True != 1``,
    unlike Python's ``==``); ``None`` equals only ``None``; strings are case- and
    whitespace-sensitive; lists compare element-wise in order (tuples count as lists); objects
    compare key sets and values recursively.
    """
    ta = a.__class__
    tb = b.__class__
    if ta is tb:
        if ta is dict:
            if len(a) != len(b):
                return False
            for key, x in a.items():
                y = b.get(key, _MISSING)
                tx = x.__class__
                if tx is y.__class__ and tx in _SCALARS:
                    if x != y:
                        return False
                elif y is _MISSING or not json_eq(x, y):
                    return False
            return True
        if ta is list or ta is tuple:
            return _seq_eq(a, b)
        return bool(a == b)
    if ta in _NUMBERS and tb in _NUMBERS:
        return bool(a == b)
    if (ta is list or ta is tuple) and (tb is list or tb is tuple):
        return _seq_eq(a, b)
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return len(a) == len(b) and all(k in b and json_eq(v, b[k]) for k, v in a.items())
    return False


def _seq_eq(a: Sequence[Any], b: Sequence[Any]) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        tx = x.__class__
        if tx is y.__class__ and tx in _SCALARS:
            if x != y:
                return False
        elif not json_eq(x, y):
            return False
    return True
