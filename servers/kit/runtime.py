"""The dispatch core every transport shares: sessions, strict argument checks, transactional calls.

The MCP adapter (``servers.kit.mcp_adapter``) and the pool's direct in-process backend both call
:meth:`DomainRuntime.call`, so a tool behaves identically whether it is reached over stdio, HTTP,
the SDK's in-process client or a plain function call.

Why the kit validates arguments itself: the SDK's pydantic models ignore unknown keys and coerce
lax types (``"5"`` for an integer). An RL policy must learn the schema as the model sees it, so we
check the exact JSON schema we publish — unknown keys, wrong JSON types, missing required keys —
and answer with a message that names the field.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, ClassVar

from jsonschema import Draft202012Validator
from mcp.server.mcpserver.tools.base import Tool as SDKTool

from servers.kit.clock import CALL_STEP, MAX_ADVANCE, ON_TIME, advance, now
from servers.kit.domain import Domain
from servers.kit.hardening import InputError, clean_message, conform, publish_bounds, screen, short
from servers.kit.state import State, diff_snapshots, to_jsonable
from servers.kit.tools import SENSITIVE_KEY, ToolError, ToolSpec, schema_stub

log = logging.getLogger(__name__)

SESSION_META_KEY = "io.prove/session"
"""Request ``_meta`` key carrying ``{"id": str, "seed": int}``. The 2026 MCP protocol is stateless
per request (no transport session), so the episode's session travels with every request; it works
the same over every transport and never appears in the model-visible tool arguments."""

LIST_HIDDEN_META_KEY = "io.prove/list_hidden"
"""``tools/list`` request ``_meta`` flag: also list discovery and helper tools (harness clients only)."""

DEFAULT_SESSION = "default"


@dataclass(frozen=True)
class ToolOutcome:
    """The result of one call: JSON text, or an error message (``is_error``)."""

    text: str
    is_error: bool = False

    def json(self) -> Any:
        return json.loads(self.text) if not self.is_error else None


def _public_schema(raw: dict[str, Any], spec: ToolSpec) -> dict[str, Any]:
    """The schema we publish: SDK-derived, $refs inlined, titles dropped, docstring descriptions
    added, optional ``X | None`` collapsed to ``X``, and ``additionalProperties: false``."""
    defs = raw.get("$defs", {})

    def clean(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                target = defs[node["$ref"].rsplit("/", 1)[-1]]
                return clean({**target, **{k: v for k, v in node.items() if k != "$ref"}})
            out = {k: clean(v) for k, v in node.items() if k not in ("title", "$defs", "properties")}
            if isinstance(node.get("properties"), dict):  # keys here are parameter names, not keywords
                out["properties"] = {name: clean(sub) for name, sub in node["properties"].items()}
            options = out.get("anyOf")
            if isinstance(options, list):
                non_null = [o for o in options if o != {"type": "null"}]
                if len(non_null) == 1 and len(non_null) < len(options):
                    out.pop("anyOf")
                    merged = {**non_null[0], **out}
                    if merged.get("default", 0) is None:
                        merged.pop("default")
                    return merged
            return out
        if isinstance(node, list):
            return [clean(v) for v in node]
        return node

    schema = publish_bounds(clean(raw))
    schema.setdefault("properties", {})
    for pname, prop in schema["properties"].items():
        doc = spec.param_docs.get(pname)
        if doc and "description" not in prop:
            prop["description"] = doc
    schema["additionalProperties"] = False
    schema["type"] = "object"
    if not schema.get("required"):
        schema.pop("required", None)
    return schema


def _describe(error: Any) -> str:
    path = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        prefix = f"{path}." if path else ""
        return f"missing required argument '{prefix}{missing}'"
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed)) if isinstance(error.instance, dict) else []
        where = f" in '{path}'" if path else ""
        return f"unexpected argument(s) {', '.join(repr(e) for e in extra)}{where}; allowed: {', '.join(allowed) or 'none'}"
    where = f"invalid argument '{path or '<arguments>'}'"
    rule, bound, value = error.validator, error.validator_value, error.instance
    if rule == "type":
        return f"{where}: expected {' or '.join(bound) if isinstance(bound, list) else bound}, got {_json_type(value)}"
    if rule in ("maxLength", "minLength"):
        return f"{where}: must be {'at most' if rule == 'maxLength' else 'at least'} {bound} characters"
    if rule in ("maxItems", "minItems"):
        return f"{where}: must have {'at most' if rule == 'maxItems' else 'at least'} {bound} items"
    if rule == "pattern":
        return f"{where}: {short(value)} does not match the expected format {bound}"
    if rule == "enum":
        return f"{where}: {short(value)} is not one of {short(bound, 300)}"
    if rule in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        words = {"minimum": "at least", "maximum": "at most", "exclusiveMinimum": "more than",
                 "exclusiveMaximum": "less than"}
        return f"{where}: must be {words[rule]} {bound}, got {short(value)}"
    return f"{where}: {short(error.message, 200)}"


def _json_type(value: Any) -> str:
    names = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


class ToolTable:
    """Specs, published schemas and compiled validators of one domain (built once per process)."""

    _cache: ClassVar[dict[int, ToolTable]] = {}

    @classmethod
    def of(cls, domain: Domain) -> ToolTable:
        """The (cached) table of ``domain``: deriving schemas through the SDK costs ~10 ms a tool."""
        table = cls._cache.get(id(domain))
        if table is None or table.domain is not domain:
            table = cls._cache[id(domain)] = cls(domain)
        return table

    def __init__(self, domain: Domain) -> None:
        self.domain = domain
        self.specs: dict[str, ToolSpec] = dict(domain.tools)
        self.schemas: dict[str, dict[str, Any]] = {}
        self.validators: dict[str, Draft202012Validator] = {}
        self.required: dict[str, frozenset[str]] = {}
        self.optional: dict[str, frozenset[str]] = {}  # known, not required: an explicit null means "omitted"
        for name, spec in self.specs.items():
            raw = SDKTool.from_function(schema_stub(spec), name=name, description=spec.description).parameters
            schema = _public_schema(raw, spec)
            self.schemas[name] = schema
            self.validators[name] = Draft202012Validator(schema)
            self.required[name] = frozenset(schema.get("required", ()))
            self.optional[name] = frozenset(schema.get("properties", {})) - self.required[name]

    def sensitive_params(self, name: str) -> list[str]:
        props = self.schemas[name].get("properties", {})
        return sorted(p for p, s in props.items() if s.get(SENSITIVE_KEY))

    def openai_tools(self, *, with_hidden: bool = False) -> list[dict[str, Any]]:
        """Tools in the OpenAI function-calling format (what the policy model sees)."""
        return [
            {
                "type": "function",
                "function": {"name": n, "description": s.description, "parameters": self.schemas[n]},
            }
            for n, s in self.specs.items()
            if with_hidden or s.visible
        ]

    def check(self, name: str, arguments: dict[str, Any]) -> str | None:
        """None if ``arguments`` fit the published schema, else a message naming the field."""
        errors = sorted(self.validators[name].iter_errors(arguments), key=lambda e: list(e.absolute_path))
        if not errors:
            return None
        return "; ".join(_describe(e) for e in errors[:3])


class SessionStore:
    """Seed worlds (generated once, LRU-cached) and the sessions forked from them."""

    def __init__(self, domain: Domain, *, max_worlds: int = 16, max_sessions: int = 100_000) -> None:
        self.domain = domain
        self.max_worlds = max_worlds
        self.max_sessions = max_sessions
        self._worlds: OrderedDict[int, State] = OrderedDict()
        self._sessions: dict[str, tuple[int, State]] = {}
        self._lock = threading.Lock()  # world generation may be reached from several threads (HTTP)

    def world(self, seed: int) -> State:
        with self._lock:
            world = self._worlds.get(seed)
            if world is None:
                world = self.domain.new_world(seed)
                self._worlds[seed] = world
                if len(self._worlds) > self.max_worlds:
                    self._worlds.popitem(last=False)
            else:
                self._worlds.move_to_end(seed)
            return world

    def open(self, session_id: str, seed: int) -> State:
        """The session's state, forking it from the seed world on first use."""
        entry = self._sessions.get(session_id)
        if entry is not None:
            if entry[0] != seed:
                raise ToolError(
                    f"session {session_id!r} was opened with seed {entry[0]}, not {seed}", code="session"
                )
            return entry[1]
        if len(self._sessions) >= self.max_sessions:
            raise ToolError(f"too many open sessions ({self.max_sessions}); close finished ones", code="session")
        state = self.world(seed).fork()
        self._sessions[session_id] = (seed, state)
        return state

    def close(self, session_id: str) -> bool:
        return self._sessions.pop(session_id, None) is not None

    def __len__(self) -> int:
        return len(self._sessions)


class DomainRuntime:
    """One domain served to many sessions: the single entry point for every transport."""

    def __init__(self, domain: Domain, *, default_seed: int = 0) -> None:
        self.domain = domain
        self.name = domain.name
        self.default_seed = default_seed
        self.table = ToolTable.of(domain)
        self.sessions = SessionStore(domain)
        self.session_tools = {
            f"{domain.name}_session_reset": self._reset,
            f"{domain.name}_session_snapshot": self._snapshot,
            f"{domain.name}_session_diff": self._diff,
            f"{domain.name}_session_close": self._close,
            f"{domain.name}_server_info": self._server_info,
        }
        self.clock_tool = f"{domain.name}_session_advance_clock"

    # -- session helpers (hidden tools) ------------------------------------------------------
    def _reset(self, session_id: str, seed: int) -> Any:
        self.sessions.open(session_id, seed).reset()
        return {"session": session_id, "seed": seed, "reset": True}

    def _snapshot(self, session_id: str, seed: int) -> Any:
        return self.sessions.open(session_id, seed).snapshot()

    def _diff(self, session_id: str, seed: int) -> Any:
        state = self.sessions.open(session_id, seed)
        return diff_snapshots(self.sessions.world(seed).snapshot(), state.snapshot())

    def _close(self, session_id: str, seed: int) -> Any:
        return {"session": session_id, "closed": self.sessions.close(session_id)}

    def _advance_clock(self, session_id: str, seed: int, arguments: Any) -> ToolOutcome:
        """Move the session's clock forward by ``minutes`` (and let scheduled work happen)."""
        limit = int(MAX_ADVANCE.total_seconds() // 60)
        minutes = arguments.get("minutes") if isinstance(arguments, dict) else None
        if set(arguments or {}) - {"minutes"} or not isinstance(minutes, int) or isinstance(minutes, bool) \
                or not 0 <= minutes <= limit:
            return ToolOutcome(f"{self.clock_tool}: 'minutes' must be an integer from 0 to {limit}", is_error=True)
        state = self.sessions.open(session_id, seed)
        state.begin()
        try:
            before, after = advance(state, timedelta(minutes=minutes), self.domain.on_time)
        except Exception as exc:
            state.rollback()
            log.exception("advancing the clock crashed")
            return ToolOutcome(f"{self.clock_tool}: internal error ({type(exc).__name__})", is_error=True)
        state.commit()
        return ToolOutcome(json.dumps({"before": before.isoformat(), "now": after.isoformat()}))

    def _server_info(self, session_id: str, seed: int) -> Any:
        return {"domain": self.name, "pid": os.getpid(), "open_sessions": len(self.sessions),
                "now": now(self.sessions.open(session_id, seed)).isoformat(),
                "user_tools": sum(1 for s in self.table.specs.values() if s.visible)}

    # -- the call path -----------------------------------------------------------------------
    def call(
        self, name: str, arguments: Any, session_id: str = DEFAULT_SESSION, seed: int | None = None
    ) -> ToolOutcome:
        """Validate, run in a transaction, serialise. Never raises for bad input."""
        seed = self.default_seed if seed is None else seed
        try:
            if name == self.clock_tool:
                return self._advance_clock(session_id, seed, arguments)
            helper = self.session_tools.get(name)
            if helper is not None:
                if arguments:
                    return ToolOutcome(f"{name} takes no arguments", is_error=True)
                return ToolOutcome(json.dumps(helper(session_id, seed), ensure_ascii=False))
            spec = self.table.specs.get(name)
            if spec is None:
                return ToolOutcome(f"unknown tool {short(name, 80)} on server '{self.name}'", is_error=True)
            if arguments is None:
                arguments = {}
            if not isinstance(arguments, dict):
                return ToolOutcome(
                    f"arguments of '{name}' must be a JSON object, got {type(arguments).__name__}", is_error=True
                )
            optional = self.table.optional[name]
            args = {k: v for k, v in arguments.items() if v is not None or k not in optional}
            screen(args)
            problem = self.table.check(name, args)
            if problem is not None:
                return ToolOutcome(clean_message(f"{name}: {problem}"), is_error=True)
            args = conform(self.table.schemas[name], args, "")
            state = self.sessions.open(session_id, seed)
        except InputError as exc:
            return ToolOutcome(clean_message(f"{name}: {exc}"), is_error=True)
        except ToolError as exc:
            return ToolOutcome(clean_message(str(exc)), is_error=True)
        return self._run(spec, state, args)

    def _run(self, spec: ToolSpec, state: State, args: dict[str, Any]) -> ToolOutcome:
        state.begin()
        hook = ON_TIME.set(self.domain.on_time)
        try:
            if spec.kind == "user":
                advance(state, CALL_STEP, self.domain.on_time)
            result = spec.fn(state, **args)
            text = json.dumps(to_jsonable(result), ensure_ascii=False)
        except ToolError as exc:
            state.rollback()
            message = str(exc)
            if exc.field and exc.field not in message:
                message = f"{message} (argument '{exc.field}')"
            return ToolOutcome(clean_message(f"{spec.name}: {message}"), is_error=True)
        except Exception as exc:  # a domain bug must not kill the server or leave half-written state
            state.rollback()
            log.exception("tool %s crashed", spec.name)  # details go to the server's log, never to the client
            return ToolOutcome(f"{spec.name}: internal error ({type(exc).__name__}); the call was rolled back",
                               is_error=True)
        finally:
            ON_TIME.reset(hook)
        state.commit()
        return ToolOutcome(text)
