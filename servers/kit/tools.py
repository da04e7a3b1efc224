"""How a domain declares its tools: typed functions over a state, plus a little metadata.

A tool is a plain function ``fn(state, arg1: T1, arg2: T2 = default, ...) -> JSON``. Its JSON schema
comes from the type hints (through the official MCP SDK's own signature introspection) and its
descriptions from the docstring: the summary becomes the tool description and a Google-style
``Args:`` section becomes per-parameter descriptions. Metadata used by synthesis (which entity ids a
tool produces / consumes, which state it requires) is declared next to the function so the
dependency graph never has to guess.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import Field

ToolKind = Literal["user", "discovery", "helper"]
"""``user``: visible to the model and counted in the paper's tool totals. ``discovery``: read-only
enumeration used by data synthesis. ``helper``: session/debug plumbing. Only ``user`` tools are listed
unless a server runs with ``--with-helpers``; all kinds stay callable by name."""

SENSITIVE_KEY = "x-sensitive"

Sensitive = Annotated[str, Field(json_schema_extra={SENSITIVE_KEY: True})]
"""A string parameter that carries a secret (PIN, password, token). Marked in the JSON schema so that
synthesis can check its provenance (it must come from the user or an earlier tool output)."""


class ToolError(Exception):
    """A user-facing tool failure (unknown id, illegal transition, insufficient funds...).

    The kit turns it into an MCP error result; the state is rolled back to before the call.
    ``field`` names the argument at fault when there is one, so messages can point at it.
    """

    def __init__(self, message: str, *, field: str | None = None, code: str = "invalid_request") -> None:
        super().__init__(message)
        self.field = field
        self.code = code


@dataclass(frozen=True)
class ToolSpec:
    """Everything the kit knows about one tool besides its schema."""

    name: str
    fn: Callable[..., Any]
    kind: ToolKind
    description: str
    param_docs: dict[str, str]
    produces: tuple[str, ...] = ()
    consumes: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    establishes: tuple[str, ...] = ()
    read_only: bool = False
    tags: tuple[str, ...] = field(default=())

    @property
    def visible(self) -> bool:
        return self.kind == "user"


_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters):\s*$")
_SECTION_HEADER = re.compile(r"^\s*(Returns|Raises|Yields|Examples?|Notes?):\s*$")
_PARAM_LINE = re.compile(r"^\s*(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into (description, {param: description})."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in lines:
        if _ARGS_HEADER.match(line):
            section, current = "args", None
            continue
        if _SECTION_HEADER.match(line):
            section, current = "other", None
            continue
        if section is None:
            summary.append(line)
        elif section == "args":
            m = _PARAM_LINE.match(line)
            indent = len(line) - len(line.lstrip())
            if m and indent <= 4:
                current = m.group(1).lstrip("*")
                params[current] = m.group(3).strip()
            elif current and line.strip():
                params[current] = (params[current] + " " + line.strip()).strip()
    return "\n".join(summary).strip(), params


def make_spec(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    kind: ToolKind = "user",
    produces: tuple[str, ...] = (),
    consumes: tuple[str, ...] = (),
    requires: tuple[str, ...] = (),
    establishes: tuple[str, ...] = (),
    read_only: bool = False,
    tags: tuple[str, ...] = (),
) -> ToolSpec:
    description, param_docs = parse_docstring(fn.__doc__)
    if not description:
        raise ValueError(f"tool {fn.__name__!r} needs a docstring: it is the description the model reads")
    params = list(inspect.signature(fn).parameters)
    if not params:
        raise ValueError(f"tool {fn.__name__!r} must take the session state as its first parameter")
    unknown = set(param_docs) - set(params[1:])
    if unknown:
        raise ValueError(f"tool {fn.__name__!r} documents unknown parameters {sorted(unknown)}")
    return ToolSpec(
        name=name or fn.__name__,
        fn=fn,
        kind=kind,
        description=description,
        param_docs=param_docs,
        produces=tuple(produces),
        consumes=tuple(consumes),
        requires=tuple(requires),
        establishes=tuple(establishes),
        read_only=read_only or kind == "discovery",
        tags=tuple(tags),
    )


TOOL_MARK = "__prove_tool__"


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    kind: ToolKind = "user",
    produces: tuple[str, ...] = (),
    consumes: tuple[str, ...] = (),
    requires: tuple[str, ...] = (),
    establishes: tuple[str, ...] = (),
    read_only: bool = False,
    tags: tuple[str, ...] = (),
) -> Any:
    """Mark a function in a ``tools_*.py`` module as a tool; its package's ``Domain`` collects it.

    ``produces``/``consumes`` name entity-id types (``account_id``...); ``requires`` names state
    preconditions (``engine_on``) and ``establishes`` the ones this tool makes true — together they
    give synthesis the explicit and implicit edges of the tool graph. Marking only records the
    metadata: registration is explicit, in the order the package's ``__init__`` lists its modules.
    """

    def mark(f: Callable[..., Any]) -> Callable[..., Any]:
        setattr(f, TOOL_MARK, make_spec(
            f, name=name, kind=kind, produces=produces, consumes=consumes,
            requires=requires, establishes=establishes, read_only=read_only, tags=tags,
        ))
        return f

    return mark(fn) if fn is not None else mark


def discovery(fn: Callable[..., Any] | None = None, **kw: Any) -> Any:
    """Mark a read-only discovery tool (hidden from the model, used by synthesis to sample state)."""
    return tool(fn, kind="discovery", **kw)


def helper(fn: Callable[..., Any] | None = None, **kw: Any) -> Any:
    """Mark a hidden helper/debug tool."""
    return tool(fn, kind="helper", **kw)


def schema_stub(spec: ToolSpec) -> Callable[..., Any]:
    """A function with the tool's public signature (the state parameter removed).

    The MCP SDK builds the input schema from a callable's signature; handing it this stub keeps the
    schema derivation the SDK's own while the kit keeps control of dispatch.
    """
    sig = inspect.signature(spec.fn, eval_str=True)
    public = list(sig.parameters.values())[1:]

    def stub(**kwargs: Any) -> Any:  # pragma: no cover - never called, dispatch goes through the kit
        raise RuntimeError("schema stub called")

    stub.__name__ = spec.name
    stub.__qualname__ = spec.name
    stub.__doc__ = spec.description
    stub.__signature__ = sig.replace(parameters=public)  # type: ignore[attr-defined]
    stub.__annotations__ = {p.name: p.annotation for p in public}
    return stub


def value_counts(values: Any) -> list[dict[str, Any]]:
    """``[{"value": v, "count": n}, ...]`` sorted by value: the shape every ``*_get_unique_values``
    discovery tool returns, so synthesis can read any domain's categorical fields the same way."""
    counts: dict[Any, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return [{"value": k, "count": n} for k, n in sorted(counts.items())]


def require(table: Any, key: str, field: str, *, what: str | None = None, shown: str | None = None,
            hint: str = "") -> Any:
    """``table[key]`` or a ToolError naming the argument (``unknown account_id 'ACC-9'``).

    Every domain's "get X or refuse" lookup goes through here so a missing record always reads the
    same way to the model: ``unknown {what} '{shown}'{hint}``, field ``field``, code ``not_found``.
    ``what`` names the thing when it is not the argument itself (``sales rep`` for ``owner_rep_id``),
    ``shown`` is the value as the client wrote it when ``key`` is a normalised form of it (stripped,
    upper-cased), and ``hint`` is appended as written (``" (list_home_scenes lists them)"``).
    """
    rec = table.get(key)
    if rec is None:
        raise ToolError(f"unknown {what or field} '{key if shown is None else shown}'{hint}", field=field,
                        code="not_found")
    return rec


def parse_date(text: str, field: str) -> Any:
    """An ISO date (``2026-06-03``) or a ToolError naming the argument."""
    from datetime import date

    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ToolError(f"invalid {field} '{text}': expected a date as YYYY-MM-DD", field=field) from None


def parse_datetime(text: str, field: str) -> Any:
    """An ISO date-time (``2026-06-03T14:30:00``, timezone optional → UTC) or a ToolError."""
    from datetime import UTC, datetime

    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise ToolError(
            f"invalid {field} '{text}': expected a date-time as YYYY-MM-DDTHH:MM[:SS]", field=field
        ) from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)
