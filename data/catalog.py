"""What synthesis knows about the servers: every tool's schema and metadata, read from the kit.

Nothing here is written per domain. Domains come from ``servers.DOMAINS``; for each tool we keep the
published JSON schema plus the kit's metadata (``produces``/``consumes`` entity-id types,
``requires``/``establishes`` state conditions, ``read_only``, sensitive parameters) and derive one
more thing the graph and the realiser need: which *parameter* carries which entity type. The kit
declares types per tool (``consumes=("account_id",)``) but not per parameter, so we match parameter
names and descriptions to the domain's type vocabulary (``from_account_id`` -> ``account_id``,
``invitee_emails`` -> ``email``, "its place id" -> ``place_id``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from servers.kit import DomainRuntime
from servers.kit.tools import SENSITIVE_KEY

ROLE_WORDS = frozenset({"source", "destination", "from", "to", "target", "new", "old", "output", "input",
                        "parent", "current", "funding", "reply", "a", "b", "primary"})
"""Words that say which role an entity plays in a call, not which entity it is."""

GENERIC_TYPE_WORDS = frozenset({"id", "code", "path", "name"})

FREE_TEXT_WORDS = ("body", "content", "description", "note", "memo", "comment", "message", "text")
"""Parameter-name stems that take prose: where a cross-server chain can carry a result along."""


def words(name: str) -> list[str]:
    return [w for w in re.split(r"[_\W]+", name.lower()) if w]


def compatible(produced: str, consumed: str) -> bool:
    """Entity types match exactly or as sub-kinds by suffix (``file_path`` is a ``path``)."""
    return produced == consumed or produced.endswith("_" + consumed) or consumed.endswith("_" + produced)


@dataclass(frozen=True)
class ToolInfo:
    """One tool as synthesis sees it."""

    name: str
    domain: str
    kind: str
    description: str
    schema: dict[str, Any]
    required: tuple[str, ...]
    produces: tuple[str, ...]
    consumes: tuple[str, ...]
    requires: tuple[str, ...]
    establishes: tuple[str, ...]
    read_only: bool
    sensitive: tuple[str, ...]
    param_types: dict[str, str] = field(default_factory=dict)

    @property
    def params(self) -> dict[str, dict[str, Any]]:
        return self.schema.get("properties", {})

    @property
    def summary(self) -> str:
        """First sentence of the description (not cut inside parentheses or after "e.g."), for
        prompts and generic phrasing."""
        text = " ".join(self.description.strip().split("\n\n")[0].split())
        depth = 0
        for i, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if ch == "." and depth == 0 and (i + 1 == len(text) or text[i + 1] == " ") \
                    and not re.search(r"\b(e\.g|i\.e|etc|vs)$", text[:i]):
                return text[:i]
        return text.rstrip(".")

    def free_text_params(self) -> list[str]:
        return [p for p, s in self.params.items() if s.get("type") == "string" and "enum" not in s
                and any(w in FREE_TEXT_WORDS for w in words(p))]

    def openai(self) -> dict[str, Any]:
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": self.schema}}


def _type_for_param(pname: str, prop: dict[str, Any], types: list[str]) -> str | None:
    """Static name-based match of one parameter to an entity type of its domain (or None)."""
    is_array = prop.get("type") == "array"
    candidates = [pname]
    if is_array and pname.endswith("s"):
        candidates.append(pname[:-1])
    by_len = sorted(types, key=lambda t: (-len(t), t))
    for cand in candidates:
        if cand in types:
            return cand
    for cand in candidates:
        for t in by_len:
            if cand.endswith("_" + t):
                return t
    for cand in candidates:
        core = [w for w in words(cand) if w not in ROLE_WORDS and len(w) > 1]
        if not core:
            continue
        for t in by_len:
            tw = words(t)
            if tw[: len(core)] == core and all(w in GENERIC_TYPE_WORDS for w in tw[len(core):]):
                return t
    return None


def _type_by_description(prop: dict[str, Any], wanted: list[str], types: list[str]) -> str | None:
    """For declared-but-unmatched consumed types: a parameter whose description names the entity.

    "File or directory to copy" names kinds of ``path``; the parameter gets the *declared* type, the
    most general one the tool accepts, rather than one of the sub-kinds the description lists."""
    desc = set(words(str(prop.get("description", ""))))
    desc |= {w[:-1] for w in desc if w.endswith("s")}
    for want in wanted:
        for t in sorted(types):
            if not compatible(t, want):
                continue
            core = [w for w in words(t) if w not in GENERIC_TYPE_WORDS or len(words(t)) == 1]
            if core and core[0] in desc:
                return want
    return None


def map_param_types(schema: dict[str, Any], consumes: tuple[str, ...], produces: tuple[str, ...],
                    types: list[str]) -> dict[str, str]:
    """Parameter -> entity type for one tool, name matches first, then descriptions of declared types."""
    props = schema.get("properties", {})
    out: dict[str, str] = {}
    for pname, prop in props.items():
        item_type = prop.get("items", {}).get("type") if prop.get("type") == "array" else prop.get("type")
        if item_type != "string" or "enum" in prop or "enum" in prop.get("items", {}):
            continue
        t = _type_for_param(pname, prop, types)
        if t is not None:
            out[pname] = t
    unmatched = [c for c in consumes if not any(t == c or c.endswith("_" + t) for t in out.values())]
    if unmatched:
        for pname, prop in props.items():
            if pname in out or prop.get("type") not in ("string", "array") or "enum" in prop:
                continue
            t = _type_by_description(prop, unmatched, types)
            if t is not None:
                out[pname] = t
    for pname, t in list(out.items()):  # refine to the declared sub-kind: list_directory.path -> directory_path
        narrower = [c for c in consumes if c != t and c.endswith("_" + t)]
        if len(narrower) == 1:
            out[pname] = narrower[0]
    return out


class Catalog:
    """All domains' tools, runtimes and type vocabularies; built once per process."""

    def __init__(self, domains: tuple[str, ...] | list[str] | None = None) -> None:
        import servers

        self.domains: tuple[str, ...] = tuple(domains if domains is not None else servers.DOMAINS)
        self.runtimes: dict[str, DomainRuntime] = {}
        self.tools: dict[str, ToolInfo] = {}
        self.discovery: dict[str, list[ToolInfo]] = {}
        self.types: dict[str, list[str]] = {}
        self.inferred: dict[str, dict[str, tuple[str, ...]]] = {}  # metadata gaps filled by name
        for d in self.domains:
            domain = importlib.import_module(f"servers.{d}").domain
            rt = DomainRuntime(domain)
            self.runtimes[d] = rt
            specs = list(domain.tools.values())
            types = sorted({t for s in specs for t in (*s.produces, *s.consumes)})
            self.types[d] = types
            self.discovery[d] = []
            for spec in specs:
                schema = rt.table.schemas[spec.name]
                info = ToolInfo(
                    name=spec.name, domain=d, kind=spec.kind, description=spec.description, schema=schema,
                    required=tuple(p for p in schema.get("properties", {}) if p in rt.table.required[spec.name]),
                    produces=spec.produces, consumes=spec.consumes, requires=spec.requires,
                    establishes=spec.establishes, read_only=spec.read_only,
                    sensitive=tuple(p for p, s in schema.get("properties", {}).items() if s.get(SENSITIVE_KEY)),
                    param_types=map_param_types(schema, spec.consumes, spec.produces, types),
                )
                if spec.kind == "user":
                    if spec.name in self.tools:
                        raise ValueError(f"tool name {spec.name!r} is not unique across domains")
                    self.tools[spec.name] = info
                elif spec.kind == "discovery":
                    self.discovery[d].append(info)
            inferred = infer_establishers(self.user_tools(d))
            self.inferred[d] = inferred
            for name, conds in sorted(inferred.items()):
                t = self.tools[name]
                self.tools[name] = dataclasses.replace(t, establishes=(*t.establishes, *conds))

    def user_tools(self, domain: str) -> list[ToolInfo]:
        return [t for t in self.tools.values() if t.domain == domain]

    def domain_of(self, tool: str) -> str:
        return self.tools[tool].domain

    def schema_hash(self, domain: str | None = None) -> str:
        """Hash of everything the graph is computed from (one domain, or all)."""
        chosen = [domain] if domain else list(self.domains)
        payload = []
        for d in chosen:
            for t in self.user_tools(d):
                payload.append([t.name, t.description, t.schema, t.produces, t.consumes, t.requires,
                                t.establishes, t.read_only])
        blob = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()

    def call(self, domain: str, name: str, args: dict[str, Any], session: str, seed: int) -> tuple[str, bool]:
        """Run one call on a live session; ``(text, is_error)``."""
        out = self.runtimes[domain].call(name, args, session, seed)
        return out.text, out.is_error

    def reset(self, domain: str, session: str, seed: int) -> None:
        self.runtimes[domain].call(f"{domain}_session_reset", {}, session, seed)

    def close(self, domain: str, session: str, seed: int) -> None:
        self.runtimes[domain].call(f"{domain}_session_close", {}, session, seed)

    def snapshot(self, domain: str, session: str, seed: int) -> str:
        return self.runtimes[domain].call(f"{domain}_session_snapshot", {}, session, seed).text

    def state(self, domain: str, session: str, seed: int) -> dict[str, Any]:
        """The session's state as a dict, in-process (~0.1 ms: seed-world records are shared, so two
        states compare by identity except where the session wrote); used to spot calls with no effect."""
        return self.runtimes[domain].sessions.open(session, seed).snapshot()


ADDING_VERBS = frozenset({"add", "create", "apply", "set", "start", "open", "place", "enable", "attach", "insert",
                          "put", "save", "book", "schedule", "plug", "connect"})


def infer_establishers(tools: list[ToolInfo]) -> dict[str, tuple[str, ...]]:
    """Fallback for incomplete metadata: conditions some tool ``requires`` that no tool ``establishes``
    get an establisher by name — a writing tool whose name starts with an adding verb and ends with a
    noun of the condition (``add_to_shopping_cart`` -> ``product_in_cart``, ``cart_not_empty``;
    ``apply_cart_coupon`` -> ``coupon_applied``). Conditions nothing plausibly creates (``order_delivered``)
    stay unestablished: entities must already be in that state."""
    established = {c for t in tools for c in t.establishes}
    missing = sorted({c for t in tools for c in t.requires} - established)
    out: dict[str, list[str]] = {}
    for cond in missing:
        cw = words(cond)
        stems = {w[:4] for w in cw}
        for t in tools:
            tw = words(t.name)
            if t.read_only or tw[0] not in ADDING_VERBS:
                continue
            if tw[-1] in cw and (tw[0][:4] in stems or "not" in cw or "in" in cw):
                out.setdefault(t.name, []).append(cond)
    return {k: tuple(v) for k, v in out.items()}


_CATALOGS: dict[tuple[str, ...] | None, Catalog] = {}


def get_catalog(domains: tuple[str, ...] | None = None) -> Catalog:
    """The process-wide catalog of ``domains`` (default: every served domain); building one derives
    every schema through the MCP SDK (~1 s), so each is built once."""
    key = tuple(domains) if domains is not None else None
    if key not in _CATALOGS:
        _CATALOGS[key] = Catalog(key)
    return _CATALOGS[key]


def stable_seed(*parts: Any) -> int:
    """A 63-bit seed from any printable parts; never ``hash()``, which is salted per process."""
    digest = hashlib.blake2b("\x1f".join(str(p) for p in parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1
