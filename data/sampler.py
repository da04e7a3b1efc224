"""Live-state sampling (paper §3.2 step 2): ground queries in entities that really exist.

The sampler opens a session on a domain, calls its read-only discovery tools (hidden ``<domain>_...``
tools: list/search/get_unique_values), and turns the JSON into typed *rows*: an account row is
registered under ``account_id``, a user row under ``user_id`` and ``email``, the calendars nested in a
user row become ``calendar_id`` rows whose parent is the user (so "related" entities can be picked
together). Entities referenced by too few other rows are filtered out ("enough support"), and a
compact sampling context — a few entities per type — is drawn per ``(domain, world seed, version)``;
the version advances every ``refresh_every`` conversations so the entities in play rotate. Queries may
only mention entities of the context; chain-aligned entities are related rows for a chain's root types.
"""

from __future__ import annotations

import json
import random
import re
import statistics
from dataclasses import dataclass, field
from typing import Any

from data.catalog import Catalog, ToolInfo, compatible, stable_seed, words

ID_VALUE = re.compile(r"^[A-Z]{2,6}(-[A-Z0-9]+)+$")
LABEL_KEYS = ("name", "display_name", "full_name", "nickname", "owner_name", "title", "subject", "label",
              "model", "account_type", "card_type", "brand", "description", "category", "address")


def is_id_value(key: str, value: Any, types: list[str]) -> bool:
    if not isinstance(value, str) or not value:
        return False
    return key in types or key.endswith("_id") or bool(ID_VALUE.match(value))


@dataclass
class Row:
    """One entity as discovery reported it."""

    type: str
    id: Any
    fields: dict[str, Any]
    parent: Row | None = None
    source: str = ""
    ref: bool = False  # only seen as a foreign key of another row: the id exists, nothing else is known
    usable: bool = True  # False when a read-only probe on the live state rejected it
    related: frozenset[str] = field(default_factory=frozenset)

    def get(self, key: str) -> Any:
        node: Row | None = self
        while node is not None:
            if key in node.fields:
                return node.fields[key]
            node = node.parent
        return None

    def all_keys(self) -> list[str]:
        out: list[str] = []
        node: Row | None = self
        while node is not None:
            out.extend(k for k in node.fields if k not in out)
            node = node.parent
        return out

    @property
    def label(self) -> str | None:
        """A human name for the entity (how a user would refer to it), if the row has one."""
        for key in LABEL_KEYS:
            value = self.fields.get(key)
            if isinstance(value, str) and value and value != self.id and len(value) <= 70:
                return value
        return None


def _scalars(node: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in node.items()
            if not isinstance(v, dict | list) or (isinstance(v, list) and all(not isinstance(x, dict | list) for x in v))}


def _id_key(node: dict[str, Any], t: str) -> str | None:
    """Which key of a row holds the id of type ``t`` (exact, by suffix, then the first id-ish key)."""
    if t in node and not isinstance(node[t], dict | list):
        return t
    tw = words(t)
    for key, value in node.items():
        if isinstance(value, str) and (t.endswith("_" + key) or tw[-1] == key):
            return key
    return None


class FullContext:
    """Every row discovery returned for one ``(domain, seed)``."""

    def __init__(self, domain: str, seed: int, types: list[str]) -> None:
        self.domain = domain
        self.seed = seed
        self.types = types
        self.rows: dict[str, list[Row]] = {}
        self.values: dict[str, list[Any]] = {}
        self.texts: list[str] = []
        self._labels: dict[tuple[str, str], dict[str, list[Row]]] = {}  # (type, key) -> label -> rows

    def add_rows(self, tool: ToolInfo, payload: Any, parent: Row | None = None) -> None:
        """Register every dict in ``payload`` under its own entity type.

        A row's *own* type is the first type the discovery tool produces that the row carries (or,
        for rows without any typed key, the produced type keyed by the row's first string field: a
        mailbox row keyed by ``address``). Other typed keys are foreign references: an event's
        ``room_id`` becomes a bare reference row, not a room with the event's title as its name;
        attribute-like types (no ``_id``: a user's ``email``) share the row."""
        produced = list(tool.produces)

        def visit(node: Any, parent: Row | None) -> None:
            if isinstance(node, list):
                for item in node:
                    visit(item, parent)
                return
            if not isinstance(node, dict):
                return
            flat = _scalars(node)
            own: Row | None = None
            typed = [k for k in flat if k in self.types and isinstance(flat[k], str) and flat[k]]
            primary = next((t for t in produced if t in typed), None)
            if primary is None and not typed:
                primary = next((t for t in produced if _id_key(flat, t)), None)
                if primary is None and produced and flat:
                    primary = produced[0]
            if primary is not None:
                key = _id_key(flat, primary) or next((k for k, v in flat.items() if isinstance(v, str)), None)
                if key is not None and flat.get(key):
                    own = Row(primary, flat[key], flat, parent, tool.name)
                    self._add(own)
                    for t in produced:  # sub-kinds: a path row whose type field says "file" is a file_path
                        tw = words(t)
                        if t != primary and len(tw) > 1 and compatible(primary, t) and any(
                                str(flat.get(k, "")).lower() == tw[0] for k in ("type", "kind")):
                            self._add(Row(t, own.id, flat, parent, tool.name))
            for k in typed:
                if own is not None and k == primary:
                    continue
                if own is not None and not k.endswith("_id") and k in produced:
                    self._add(Row(k, flat[k], flat, parent, tool.name))
                else:
                    self._add(Row(k, flat[k], {k: flat[k]}, None, tool.name, ref=True))
            for value in node.values():
                if isinstance(value, dict | list):
                    visit(value, own or parent)

        visit(payload, parent)

    def _add(self, row: Row) -> None:
        self.rows.setdefault(row.type, []).append(row)
        self._labels = {k: v for k, v in self._labels.items() if k[0] != row.type} if self._labels else self._labels

    def add_values(self, field_name: str, payload: Any) -> None:
        if isinstance(payload, list):
            vals = [item.get("value") for item in payload if isinstance(item, dict) and "value" in item]
            self.values[field_name] = [v for v in vals if v not in (None, "")]

    def finish(self) -> None:
        """Relatedness sets and support counts (how many other rows mention an entity)."""
        for rows in self.rows.values():
            for row in rows:
                ids: set[str] = {str(row.id)}
                node: Row | None = row
                while node is not None:
                    for k, v in node.fields.items():
                        for item in v if isinstance(v, list) else [v]:
                            if is_id_value(k, item, self.types) or (isinstance(v, list) and isinstance(item, str)
                                                                     and ID_VALUE.match(item)):
                                ids.add(item)
                    node = node.parent
                row.related = frozenset(ids)
        for rows in self.rows.values():  # a parent is related to its children (an event to its attendees)
            for row in rows:
                if row.parent is not None and not row.ref:
                    row.parent.related = row.parent.related | {str(row.id)}
        merged: dict[tuple[str, str], frozenset[str]] = {}  # one id seen in several places: union
        for t, rows in self.rows.items():
            for row in rows:
                key = (t, str(row.id))
                merged[key] = merged.get(key, frozenset()) | row.related
        for t, rows in self.rows.items():
            for row in rows:
                row.related = merged[(t, str(row.id))]
        mentions: dict[str, int] = {}
        for rows in self.rows.values():
            for row in rows:
                for v in row.related:
                    mentions[v] = mentions.get(v, 0) + 1
        self.support = mentions

    def by_id(self, value: Any) -> Row | None:
        """The first full (non-reference) row with this id, any type."""
        if not hasattr(self, "_by_id"):
            self._by_id: dict[str, Row] = {}
            for t in sorted(self.rows):
                for row in self.rows[t]:
                    if not row.ref:
                        self._by_id.setdefault(str(row.id), row)
        return self._by_id.get(str(value))

    def resolve(self, t: str, key: str, label: Any, scope: tuple[str, ...] | list[str] = ()) -> set[str]:
        """Ids of type ``t`` whose own ``key`` field equals ``label`` (case-insensitive): within
        ``scope`` (rows related to those ids: the customer whose accounts were listed) when any row
        there matches, else across the whole domain. A label singles out an entity iff this is one id."""
        index = self._labels.get((t, key))
        if index is None:  # built once per (type, key): the binder asks for every candidate it weighs
            index = self._labels[(t, key)] = {}
            for r in self.rows.get(t, []):
                v = r.fields.get(key)
                if not r.ref and isinstance(v, str | int):
                    index.setdefault(str(v).casefold(), []).append(r)
        hits = index.get(str(label).casefold(), [])
        scoped = [r for r in hits if set(scope) & r.related] if scope else []
        return {str(r.id) for r in (scoped or hits)}

    def supported(self, t: str) -> list[Row]:
        """Rows of type ``t`` referenced at least as often as the type's median entity."""
        rows = self.rows.get(t, [])
        if not rows:
            return []
        uniq: dict[Any, Row] = {}
        for row in sorted(rows, key=lambda r: r.ref):  # stable: full rows win over bare references
            uniq.setdefault(row.id, row)
        counts = [self.support.get(str(r.id), 0) for r in uniq.values()]
        floor = statistics.median(counts)
        kept = [r for r in uniq.values() if self.support.get(str(r.id), 0) >= floor]
        kept = kept or list(uniq.values())
        return [r for r in kept if r.usable] or kept


@dataclass
class SamplingContext:
    """The compact per-version context a conversation is grounded on."""

    domain: str
    seed: int
    version: int
    rows: dict[str, list[Row]]
    values: dict[str, list[Any]]
    all_rows: dict[str, list[Row]]

    def candidates(self, t: str) -> list[Row]:
        """Rows of type ``t``, or of a compatible sub/super-kind when none has exactly that type."""
        if self.rows.get(t):
            return self.rows[t]
        out: list[Row] = []
        for other, rows in sorted(self.rows.items()):
            if compatible(other, t):
                out.extend(rows)
        return out

    def by_prefix(self, prefix: str) -> str | None:
        for t, rows in sorted(self.rows.items()):
            if rows and isinstance(rows[0].id, str) and rows[0].id.startswith(prefix):
                return t
        return None

    def key_values(self, key: str) -> list[tuple[Row, Any]]:
        out = []
        for t in sorted(self.rows):
            for row in self.rows[t]:
                v = row.get(key)
                if v not in (None, "", []):
                    out.append((row, v))
        return out


class LiveStateSampler:
    """Discovery on live sessions, cached per ``(domain, seed)``; contexts refreshed every k conversations."""

    def __init__(self, catalog: Catalog, *, per_type: int = 16, refresh_every: int = 50) -> None:
        self.catalog = catalog
        self.per_type = per_type
        self.refresh_every = refresh_every
        self._full: dict[tuple[str, int], FullContext] = {}
        self._ctx: dict[tuple[str, int, int], SamplingContext] = {}
        self.discovery_calls = 0

    def full(self, domain: str, seed: int) -> FullContext:
        key = (domain, seed)
        if key in self._full:
            return self._full[key]
        ctx = FullContext(domain, seed, self.catalog.types[domain])
        session = f"sampler:{domain}:{seed}"
        for tool in self.catalog.discovery[domain]:
            required = tool.required
            if not required:
                args = {p: s["maximum"] for p, s in tool.params.items()
                        if p in ("limit", "max_results") and "maximum" in s}
                text, err = self.catalog.call(domain, tool.name, args, session, seed)
                self.discovery_calls += 1
                if not err:
                    ctx.add_rows(tool, json.loads(text))
            elif len(required) == 1 and "enum" in tool.params[required[0]]:
                for value in tool.params[required[0]]["enum"]:
                    text, err = self.catalog.call(domain, tool.name, {required[0]: value}, session, seed)
                    self.discovery_calls += 1
                    if not err:
                        ctx.add_values(str(value), json.loads(text))
        for tool in self.catalog.user_tools(domain):  # argument-free read-only user tools list things too
            if tool.read_only and not tool.required and tool.produces:
                text, err = self.catalog.call(domain, tool.name, {}, session, seed)
                self.discovery_calls += 1
                if not err:
                    ctx.add_rows(tool, json.loads(text))
        self._expand(ctx, domain, seed, session)
        self._probe(ctx, domain, seed, session)
        self.catalog.close(domain, session, seed)
        ctx.finish()
        self._full[key] = ctx
        return ctx

    def _expand(self, ctx: FullContext, domain: str, seed: int, session: str, per_tool: int = 40) -> None:
        """Entity types no discovery tool lists (a customer's cards, a mailbox's drafts): call the
        read-only user tool that lists them for the entities we already have."""
        for tool in self.catalog.user_tools(domain):
            if not tool.read_only or len(tool.required) != 1 or not tool.produces:
                continue
            p = tool.required[0]
            t = tool.param_types.get(p)
            if t is None or tool.params[p].get("type") != "string":
                continue
            if all(sum(1 for r in ctx.rows.get(x, []) if not r.ref) >= 5 for x in tool.produces):
                continue
            inputs = [r for r in ctx.rows.get(t, []) if not r.ref]
            seen: set[Any] = set()
            for row in inputs:
                if row.id in seen:
                    continue
                seen.add(row.id)
                if len(seen) > per_tool:
                    break
                text, err = self.catalog.call(domain, tool.name, {p: row.id}, session, seed)
                self.discovery_calls += 1
                if not err:
                    ctx.add_rows(tool, json.loads(text), parent=row)

    def _probe(self, ctx: FullContext, domain: str, seed: int, session: str, limit: int = 400) -> None:
        """Check rows against the live state with a read-only tool that takes exactly their type.

        Rows the tool rejects (a path the logged-in user may not enter, a closed record) are marked
        unusable, so queries are grounded on entities that work. Types no discovery row carries (an
        ``archive_path``) are filled by probing rows of compatible types and keeping the accepted ones.
        """
        tools = [t for t in self.catalog.user_tools(domain) if t.read_only and len(t.required) == 1]
        for t in ctx.types:
            exact = [x for x in tools if x.param_types.get(x.required[0]) == t]
            general = [x for x in tools if compatible(x.param_types.get(x.required[0], "\0"), t)]
            probe = (exact or general or [None])[0]
            if probe is None:
                continue
            own = [r for r in ctx.rows.get(t, []) if not r.ref]
            if own:
                for row in own[:limit]:
                    _, err = self.catalog.call(domain, probe.name, {probe.required[0]: row.id}, session, seed)
                    self.discovery_calls += 1
                    row.usable = not err
                continue
            if not exact:
                continue
            pool = [r for other in sorted(ctx.rows) if other != t and compatible(other, t)
                    for r in ctx.rows[other] if not r.ref]
            seen: set[Any] = set()
            for row in pool[:limit]:
                if row.id in seen:
                    continue
                seen.add(row.id)
                _, err = self.catalog.call(domain, probe.name, {probe.required[0]: row.id}, session, seed)
                self.discovery_calls += 1
                if not err:
                    ctx._add(Row(t, row.id, row.fields, row.parent, probe.name))

    def context(self, domain: str, seed: int, conv_index: int) -> SamplingContext:
        version = conv_index // max(1, self.refresh_every)
        key = (domain, seed, version)
        if key not in self._ctx:
            full = self.full(domain, seed)
            rng = random.Random(stable_seed("context", domain, seed, version))
            supported = {t: full.supported(t) for t in sorted(full.rows)}
            # a few anchor entities per version; rows related to them come first, so the context holds
            # coherent groups (a customer with their accounts, cards and payees), then random others
            anchors: set[str] = set()
            for t in sorted(supported):
                for row in rng.sample(supported[t], min(2, len(supported[t]))):
                    anchors |= row.related
            rows: dict[str, list[Row]] = {}
            for t, kept in supported.items():
                order = rng.sample(kept, len(kept))
                order.sort(key=lambda r: -min(2, len(r.related & anchors)))
                rows[t] = order[: self.per_type]
            if len(self._ctx) > 256:
                self._ctx.clear()
            self._ctx[key] = SamplingContext(domain, seed, version, rows, full.values, full.rows)
        return self._ctx[key]

    def chain_entities(self, chain: list[ToolInfo], ctx: SamplingContext, rng: random.Random
                       ) -> dict[str, list[Row]]:
        """Candidate rows per root type of a chain (consumed, not produced earlier), related first."""
        produced: set[str] = set()
        roots: list[str] = []
        for tool in chain:
            for t in sorted(set(tool.param_types.values())):
                if not any(compatible(p, t) for p in produced) and t not in roots:
                    roots.append(t)
            produced.update(tool.produces)
        picked: list[Row] = []
        out: dict[str, list[Row]] = {}
        pool = {t: ctx.candidates(t) for t in roots}
        everything = [r for t in roots for r in pool[t]]
        for t in roots:
            cands = list(pool[t])
            rng.shuffle(cands)
            focus = {v for r in picked for v in r.related}
            if picked:
                cands.sort(key=lambda r: -len(r.related & focus))
            else:  # the first root: the entity with the most related rows among the other roots
                cands.sort(key=lambda r: -sum(1 for o in everything if o is not r and o.related & r.related))
            out[t] = cands
            if cands:
                picked.append(cands[0])
        return out


def resolve_mention(sampler: LiveStateSampler, seed: int, mention: dict[str, Any]) -> bool:
    """Does the label the user was shown single out exactly the gold id among the entities the
    domain's discovery tools list (:meth:`FullContext.resolve`)?

    Lives beside the sampler because it is a question about live discovery state: the validator
    (drop ambiguous labels) and the quality figures (label resolution rate) both ask it."""
    full = sampler.full(mention["domain"], seed)
    ids = full.resolve(mention["type"], mention["key"], mention["label"], tuple(mention.get("scope", ())))
    return ids == {str(mention["id"])}
