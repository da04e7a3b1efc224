"""Argument binding for the realiser: where each value of a call comes from.

Order of preference per parameter: an id read off an earlier step's output (an explicit dependency:
the agent must copy it; the same item may carry sibling arguments, e.g. an event's occurrence
start), an entity from the sampling context related to what the conversation already touches
(the user names it), a value for an entity that does not exist yet (a path to create), and finally
a value synthesised from the schema. Secrets travel with their entity row (an account's PIN). Read
lookups may fan out into parallel calls that share a step.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from faker import Faker

from data.catalog import ToolInfo, compatible, words
from data.config import SynthConfig
from data.graph import EXPLICIT, DependencyGraph
from data.model import Call, Source, Step
from data.sampler import LiveStateSampler, Row, SamplingContext
from data.speech import describe
from data.values import ValueContext, synth_string, synth_value
from servers.kit import REFERENCE_DATE

CREATION_HINTS = ("to create", "must not exist", "created", "creating", "new ")
EXAMPLE_ID = re.compile(r"e\.g\.\s*([A-Z]{2,6})-\d")
REF_NAIVE = REFERENCE_DATE.replace(tzinfo=None)


@dataclass
class _Cand:
    step: int
    value: Any
    item: dict[str, Any]
    siblings: list[Any]
    index: int
    key: str = ""

    @property
    def own(self) -> bool:
        """Is the value the item's own id (a listing's ``listing_id``), not a reference it carries (its
        ``seller``)? Only then do the item's name fields describe the entity."""
        first = next((k for k, v in self.item.items() if isinstance(v, str | int) and not isinstance(v, bool)
                      and (k.endswith(("_id", "_key")) or k in ("id", "key", "path", "code", "symbol", "sku"))), None)
        return first is None or first == self.key


@dataclass
class ChainAttempt:
    """The working state of one attempt at realising a chain: its sessions, sampling contexts and
    entity index per server, the steps made so far, and what the conversation has focused on and
    said. The realiser starts a fresh one per attempt; the binder reads and updates it."""

    sessions: dict[str, str]
    ctx: dict[str, SamplingContext]
    index: dict[str, dict[Any, Row]]
    rng: random.Random
    fake: Faker
    seed: int = 0
    steps: list[Step] = field(default_factory=list)
    focus: dict[str, set[str]] = field(default_factory=dict)  # per server: ids are only related within one
    rows: list[Row] = field(default_factory=list)
    user_values: dict[str, set[str]] = field(default_factory=dict)  # per server: said by the user, no lookup
    looked_up: set[str] = field(default_factory=set)  # entity types a support lookup was inserted for
    selves: dict[tuple[str, str], Any] = field(default_factory=dict)  # (domain, SELF parameter) -> the user

    def focus_of(self, domain: str) -> set[str]:
        return self.focus.setdefault(domain, set())

    def said(self, domain: str) -> set[str]:
        return self.user_values.setdefault(domain, set())


def _walk(payload: Any, siblings: list[Any] | None = None, index: int = 0):
    if isinstance(payload, dict):
        yield payload, siblings or [payload], index
        for v in payload.values():
            if isinstance(v, list | dict):
                yield from _walk(v)
    elif isinstance(payload, list):
        for i, item in enumerate(payload):
            yield from _walk(item, payload, i)


def pair_of(p: str, tool: ToolInfo) -> list[str]:
    """The other end of a range parameter (``available_from`` <-> ``available_to``, ``time_min`` <-> ``time_max``)."""
    swaps = {"from": "to", "to": "from", "min": "max", "max": "min", "start": "end", "end": "start",
             "since": "until", "until": "since"}
    w = words(p)
    out = []
    for i, x in enumerate(w):
        if x in swaps:
            q = "_".join([*w[:i], swaps[x], *w[i + 1:]])
            if q in tool.params and q != p:
                out.append(q)
    return out


def steer_value(prop: dict[str, Any], hint: str, bad: set[str]) -> Any:
    """For a prerequisite call, the enum/boolean value the blocked call asked for: "shift into drive
    first" picks ``gear="drive"``; "release it first" picks ``engaged=false`` from the description
    "true to engage ..., false to release it"."""
    said = set(words(hint))
    stems = {w[:5] for w in said}
    if "enum" in prop:
        hits = [v for v in prop["enum"] if str(v).lower() in said and repr(v) not in bad]
        return hits[0] if len(hits) == 1 else None
    if prop.get("type") == "boolean":
        desc = str(prop.get("description", "")).lower()
        for value, pattern in ((True, r"true to (\w+)"), (False, r"false to (\w+)")):
            m = re.search(pattern, desc)
            if m and m.group(1)[:5] in stems and repr(value) not in bad:
                return value
    return None


def key_matches(key: str, t: str) -> bool:
    return key == t or t.endswith("_" + key)


def subkind_ok(item: dict[str, Any], t: str) -> bool:
    tw = words(t)
    if len(tw) < 2:
        return True
    kind = item.get("type", item.get("kind"))
    return not isinstance(kind, str) or kind.lower() == tw[0] or tw[0] not in ("file", "directory")


SPOKEN_KEYS = ("last4", "topic", "merchant", "sender_name", "store_name", "hotel_name", "flight_number", "username",
               "email", "city", "room", "channel")
"""Besides :data:`data.sampler.LABEL_KEYS`, fields people single an item out by ("the card ending in 4821").
Never a secret (PIN, key) nor a status word that reads as a category."""


def unique_labels(item: dict[str, Any], siblings: list[Any], skip: Any) -> list[tuple[str, str]]:
    """Every (key, value) of ``item`` no sibling shares, best first: how a user can single it out of a list."""
    from data.sampler import LABEL_KEYS

    out = []
    for k in [k for k in (*LABEL_KEYS, *SPOKEN_KEYS) if k in item]:
        v = item.get(k)
        if not isinstance(v, str) or not v or v == skip or len(v) > 70 or re.match(r"^[A-Z]{2,6}-", v):
            continue
        if sum(1 for s in siblings if isinstance(s, dict) and s.get(k) == v) == 1:
            out.append((k, v))
    return out



class Binder:
    """Chooses every argument of a call (see the module docstring) from the attempt's earlier outputs,
    its sampling contexts and the schema. It never executes anything: :class:`data.realise.Realiser`
    owns one, runs the calls it binds and retries with the values a failure blamed excluded."""

    def __init__(self, graph: DependencyGraph, sampler: LiveStateSampler, cfg: SynthConfig) -> None:
        self.graph = graph
        self.sampler = sampler
        self.cfg = cfg

    # ------------------------------------------------------------------ binding
    def bind(self, run: ChainAttempt, tool: ToolInfo, excluded: dict[str, set[str]], attempt: int,
             forced: set[str], fixed: dict[str, Any] | None = None, hint: str = "",
             pinned: dict[str, Any] | None = None) -> Call:
        rng = run.rng
        ctx = run.ctx[tool.domain]
        args: dict[str, Any] = {}
        sources: dict[str, Source] = {}
        labels = [r.label for t in tool.produces for r in ctx.candidates(t) if r.label]
        focus = set(run.focus_of(tool.domain))
        vc = ValueContext(rng, run.fake, REF_NAIVE, ctx, args, focus, labels)
        if fixed is not None:
            chosen = [p for p in tool.params if p in fixed]
        else:
            chosen = []
            for p in tool.params:
                if p in tool.required or p in forced:
                    chosen.append(p)
                elif attempt < 5:
                    typed = p in tool.param_types and self.candidates(run, tool.param_types[p], set())
                    if rng.random() < (0.6 if typed else self.cfg.optional_arg_rate):
                        chosen.append(p)
            for p in list(chosen):  # ranges come in pairs: available_from needs available_to
                for q in pair_of(p, tool):
                    if q not in chosen:
                        chosen.append(q)
        for p in chosen:
            if p in args:
                continue
            prop = tool.params[p]
            bad = excluded.get(p, set())
            t = tool.param_types.get(p) or self._prefix_type(prop, ctx)
            if fixed is not None:
                self._bind_fixed(run, tool, p, t, fixed[p], args, sources)
            elif (tool.domain, p) in run.selves and not isinstance(run.selves[(tool.domain, p)], list):
                self._bind_fixed(run, tool, p, t, run.selves[(tool.domain, p)], args, sources)  # one signed-in user
            elif pinned and t in pinned and prop.get("type") != "array":
                self._bind_fixed(run, tool, p, t, pinned[t], args, sources)
            elif t is not None and self._is_creation(tool, p, t, rng):
                value = self._new_value(run, tool, p, t, prop, vc)
                args[p], sources[p] = value, Source("user", new=True)
            elif t is not None:
                self._bind_entity(run, tool, p, t, prop, chosen, args, sources, bad, vc)
            if p not in args and hint:
                steer = steer_value(prop, hint, bad)
                if steer is not None:
                    args[p], sources[p] = steer, Source("user")
            if p not in args:
                self._bind_plain(run, tool, p, prop, args, sources, bad, vc)
            for v in args[p] if isinstance(args[p], list) else [args[p]]:
                row = run.index[tool.domain].get(v) if isinstance(v, str | int) else None
                focus.update(row.related if row is not None else {str(v)})
        return Call(tool, {p: args[p] for p in tool.params if p in args}, sources)

    def _bind_fixed(self, run: ChainAttempt, tool: ToolInfo, p: str, t: str | None, value: Any,
                    args: dict[str, Any], sources: dict[str, Source]) -> None:
        """Re-bind a known value (a retry after a prerequisite), recovering where it came from."""
        args[p] = value
        if t is not None and str(value) not in run.said(tool.domain):  # what the user said stays theirs
            for c in self.candidates(run, t, set()):
                if c.value == value:
                    sources[p] = self._cand_source(run, tool.domain, c)
                    return
        row = run.index[tool.domain].get(value) if isinstance(value, str | int) else None
        sources[p] = Source("user", row=row, new=row is None and p in tool.sensitive)

    def _bind_plain(self, run: ChainAttempt, tool: ToolInfo, p: str, prop: dict[str, Any],
                    args: dict[str, Any], sources: dict[str, Source], bad: set[str], vc: ValueContext) -> None:
        """A parameter no entity type covers: carried text, a row key, or a synthesised value."""
        if p in tool.free_text_params() and run.rng.random() < 0.7:
            for prev in reversed(run.steps):  # a prose parameter may carry another server's result along
                c = prev.calls[0]
                edge = self.graph.edge(c.tool.name, tool.name)
                if c.tool.domain != tool.domain and edge and edge.get("via") == "text" and c.output is not None:
                    text = describe(c.tool, c.output)
                    args[p], sources[p] = text[: prop.get("maxLength", 2000)], Source("tool", step=prev.index)
                    return
        value = None
        for _ in range(6):
            value = synth_value(p, prop, vc)
            if repr(value) not in bad:
                break
        args[p], sources[p] = value, Source("user", new=p in tool.sensitive)

    def _prefix_type(self, prop: dict[str, Any], ctx: SamplingContext) -> str | None:
        m = EXAMPLE_ID.search(str(prop.get("description", "")))
        return ctx.by_prefix(m.group(1) + "-") if m else None

    def _is_creation(self, tool: ToolInfo, p: str, t: str, rng: random.Random) -> bool:
        """Does ``p`` name an entity the call creates? Said by the parameter ("the directory to
        create", ``new_``/``output_`` names) or, mostly, when the tool itself creates-or-replaces."""
        if not any(compatible(x, t) for x in tool.produces):
            return False
        desc = str(tool.params[p].get("description", "")).lower()
        if words(p)[0] in ("new", "output", "link") or any(h in desc for h in CREATION_HINTS):
            return True
        first = next(iter(tool.param_types), None)
        return p == first and any(h in tool.description.lower() for h in CREATION_HINTS) and rng.random() < 0.7

    def _new_value(self, run: ChainAttempt, tool: ToolInfo, p: str, t: str, prop: dict[str, Any],
                   vc: ValueContext) -> Any:
        """A value for an entity that does not exist yet (a path to create); ids the server assigns
        are never invented."""
        ctx = run.ctx[tool.domain]
        sample = ctx.candidates(t) or [r for rows in ctx.rows.values() for r in rows]
        if not (sample and isinstance(sample[0].id, str) and sample[0].id.startswith("/")):
            return synth_string(p, prop, vc)
        desc = str(prop.get("description", ""))
        dirs = [r.id for r in ctx.candidates("directory_path") if r.usable] if "directory_path" in ctx.rows else []
        near = sorted({v.rsplit("/", 1)[0] for v in run.focus_of(tool.domain) if v.startswith("/") and v.count("/") > 1})
        parent = run.rng.choice(near) if near and run.rng.random() < 0.7 else (
            run.rng.choice(dirs) if dirs else str(run.rng.choice(sample).id).rsplit("/", 1)[0] or "/")
        m = re.search(r"\.(tar\.gz|tgz|zip|tar|txt|md|csv|log|json)\b", desc)
        is_dir = "director" in desc.lower() or "director" in p
        ext = "" if is_dir and not m else "." + (m.group(1) if m else run.rng.choice(("txt", "md", "csv", "log")))
        name = f"{vc.fake.word()}_{vc.fake.word()}{ext}".lower()
        items = prop.get("type") == "array"
        return [f"{parent}/{name}"] if items else f"{parent}/{name}"

    def _cand_source(self, run: ChainAttempt, domain: str, c: _Cand) -> Source:
        """Where a value read off an earlier output comes from. A user singles an item out of a list
        by a label no sibling shares, and only for entities of the initial world (labels are checked
        against discovery, which knows nothing the conversation created); ``scope`` keeps the ids
        the listing was given (the customer whose accounts these are)."""
        call = run.steps[c.step].calls[0]
        scope = tuple(str(v) for q, v in call.args.items() if q in call.tool.param_types and isinstance(v, str | int))
        label = None
        if len(c.siblings) > 1 and c.own and c.value in run.index[domain]:
            full = self.sampler.full(domain, run.seed)
            t = run.index[domain][c.value].type
            label = next((kv for kv in unique_labels(c.item, c.siblings, c.value)
                          if full.resolve(t, kv[0], kv[1], scope) == {str(c.value)}), None)
        return Source("tool", step=c.step, label=label, ordinal=c.index, list_len=len(c.siblings), scope=scope)

    def candidates(self, run: ChainAttempt, t: str, used: set[str]) -> list[_Cand]:
        """Values of entity type ``t`` that earlier successful outputs of the attempt carry, latest step
        first (``used``: values already taken by another argument of the call)."""
        out: list[_Cand] = []
        for step in reversed(run.steps):
            for call in step.calls:
                if call.is_error:
                    continue
                declared = any(compatible(x, t) for x in call.tool.produces)
                for item, siblings, idx in _walk(call.output):
                    for k, v in item.items():  # undeclared outputs count only under the exact type name
                        if (k == t or (declared and key_matches(k, t))) and isinstance(v, str | int) and v != "" \
                                and str(v) not in used and subkind_ok(item, t):
                            out.append(_Cand(step.index, v, item, siblings, idx, k))
        return out

    def _bind_entity(self, run: ChainAttempt, tool: ToolInfo, p: str, t: str, prop: dict[str, Any],
                     chosen: list[str], args: dict[str, Any], sources: dict[str, Source], bad: set[str],
                     vc: ValueContext) -> None:
        rng = run.rng
        many = prop.get("type") == "array"
        n = rng.randint(1, 2) if many else 1
        used = {str(v) for q, v in args.items() if tool.param_types.get(q) == t for v in (v if isinstance(v, list) else [v])}
        cands = [c for c in self.candidates(run, t, used) if repr(c.value) not in bad and repr([c.value]) not in bad
                 and str(c.value) not in run.said(tool.domain)]
        if cands and (t in run.looked_up or rng.random() < 0.9):
            latest = max(c.step for c in cands)
            edge_steps = {c.step for c in cands if self.graph.relation(
                run.steps[c.step].calls[0].tool.name, tool.name) == EXPLICIT}
            pick_step = max(edge_steps) if edge_steps else latest
            pool = [c for c in cands if c.step == pick_step]
            labelled = [c for c in pool if len(c.siblings) == 1 or self._cand_source(run, tool.domain, c).label]
            pool = labelled or [c for c in pool if c.index == 0] or pool
            rng.shuffle(pool)
            picks = pool[:n]
            values = [c.value for c in picks]
            first = picks[0]
            src = self._cand_source(run, tool.domain, first)
            args[p] = values if many else values[0]
            sources[p] = src
            for q in chosen:  # the same item may carry other arguments (an event's occurrence start)
                if q in args or q == p:
                    continue
                qt = tool.param_types.get(q)
                if qt == t:
                    continue
                for k, v in first.item.items():
                    if ((qt and key_matches(k, qt)) or k == q) and isinstance(v, str) and v and q not in args \
                            and tool.params[q].get("type") == "string":
                        args[q], sources[q] = v, src
            self._sensitive_from_row(run, tool, chosen, args, sources, run.index[tool.domain].get(first.value))
            return
        ctx = run.ctx[tool.domain]
        rows = [r for r in ctx.candidates(t) if repr(r.id) not in bad and str(r.id) not in used
                and repr([r.id]) not in bad]
        if not rows:
            return
        rng.shuffle(rows)
        rows.sort(key=lambda r: (-len(r.related & vc.focus), not r.usable, r.ref))
        top = rows[: max(1, min(3, len(rows)))] if not vc.focus else rows[:1]
        picks = [top[0], *[r for r in rows[1:] if r is not top[0]][: n - 1]] if many else [rng.choice(top)]
        args[p] = [r.id for r in picks] if many else picks[0].id
        sources[p] = Source("user", row=picks[0])
        for q in chosen:  # the row's own string fields fill same-named optional parameters (a cart line's size)
            v = picks[0].fields.get(q)
            if q not in args and q not in tool.param_types and q not in tool.required and isinstance(v, str) and v \
                    and tool.params[q].get("type") == "string" and "enum" not in tool.params[q]:
                args[q], sources[q] = v, Source("user", row=picks[0])
        self._sensitive_from_row(run, tool, chosen, args, sources, picks[0])

    def _sensitive_from_row(self, run: ChainAttempt, tool: ToolInfo, chosen: list[str], args: dict[str, Any],
                            sources: dict[str, Source], row: Row | None) -> None:
        """Secrets travel with their entity (an account's PIN, a user's password): the user states
        them. A card's PIN lives on the account it draws on, so rows the entity references are
        searched too; failing that, a secret the user already gave in this conversation is reused."""
        index = run.index[tool.domain]
        for q in chosen:
            if q in args or q not in tool.sensitive or "new" in words(q):
                continue
            last = words(q)[-1]
            rows = [row] if row is not None else []
            if row is not None:
                rows += [index[v] for k in row.all_keys() if isinstance(v := row.get(k), str) and v in index
                         and index[v] is not row]
            for r in rows:
                hit = next((r.get(k) for k in r.all_keys() if (k == q or words(k)[-1] == last)
                            and isinstance(r.get(k), str) and r.get(k)), None)
                if hit is not None:
                    args[q], sources[q] = hit, Source("user", row=r)
                    break
            else:
                for st in reversed(run.steps):
                    c = st.calls[0]
                    given = [k for k in c.tool.sensitive if words(k)[-1] == last and k in c.args]
                    if c.tool.domain == tool.domain and given:
                        args[q], sources[q] = c.args[given[-1]], Source("user", new=True)
                        break

    # ------------------------------------------------------------------ parallel calls
    def fan_out(self, run: ChainAttempt, call: Call) -> list[Call]:
        """Read-only lookups sometimes ask about 2-3 entities at once: the extra calls (same tool, another
        entity) to run in parallel with ``call`` in its step. The realiser executes them and keeps the
        ones that work."""
        if not call.tool.read_only or run.rng.random() >= self.cfg.parallel_rate:
            return []
        typed = [p for p in call.args if p in call.tool.param_types and not isinstance(call.args[p], list)]
        if not typed:
            return []
        p = typed[0]
        src = call.sources[p]
        t = call.tool.param_types[p]
        others: list[tuple[Any, Source]] = []
        if src.kind == "tool":
            for c in self.candidates(run, t, {str(call.args[p])}):
                if c.step == src.step:
                    src2 = self._cand_source(run, call.tool.domain, c)
                    if src2.label:
                        others.append((c.value, src2))
        elif src.row is not None:
            for r in run.ctx[call.tool.domain].candidates(t):
                if r.id != call.args[p] and r.related & src.row.related - {str(src.row.id)}:
                    others.append((r.id, Source("user", row=r)))
        run.rng.shuffle(others)
        picked = others[: run.rng.randint(1, 2)]
        if call.tool.sensitive:
            return []
        return [Call(call.tool, {**call.args, p: value}, {**call.sources, p: s}) for value, s in picked]

