"""Live-state sampling for a server without discovery tools: entities (ids + labels) from reads.

Our servers have hidden discovery tools; a user's server has only its public tools. So the
entities a request may mention are read off the results of its read-only tools, called with the
arguments probing found they accept (:class:`~data.byo.probe.Prober` step 1, reads only). Each
object in a result contributes its *own* id — the first reference-valued key (probing's accepted
keys when known, else id-like key names) — with the object's label (``name``, ``title`` ...), typed
by the key's entity noun; text results contribute their identifier tokens. Foreign keys are left
out, as in the graph: an account row does not make its owner an entity of the listing.

An empty fixture (a fresh memory server, an empty project) gives nothing to ground a request on.
:func:`seed_if_empty` then calls the creating write tools (``create_*``, ``add_*`` ...) with schema
fills, keeps the calls that succeeded, and wraps the session in :class:`SeededSession`, whose reset
replays them: every later probe and rollout starts from the same richer state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from data.byo.extract import Extraction
from data.byo.probe import Prober, ProbeResult, SessionBroken
from data.byo.protocol import CallOutcome, Session
from data.byo.schema import ID_SUFFIXES, PRODUCING_VERBS, ToolShape, entity_of

ID_KEYS = frozenset({"id", "uuid", "key", "path", "code", "slug", "handle", "email", "symbol", "sku", "name"})
TEXT_TOKEN_KEYS = frozenset({"uuid", "code", "path", "number_ref", "email"})


@dataclass(frozen=True)
class Entity:
    type: str
    id: str | int
    label: str | None
    source: str


@dataclass(frozen=True)
class SeedCall:
    tool: str
    args: dict[str, Any]


@dataclass
class LiveState:
    entities: dict[str, list[Entity]] = field(default_factory=dict)
    seeded: list[SeedCall] = field(default_factory=list)

    def add(self, e: Entity) -> None:
        rows = self.entities.setdefault(e.type, [])
        if all(r.id != e.id for r in rows):
            rows.append(e)

    @property
    def empty(self) -> bool:
        return not any(self.entities.values())


def id_like(key: str) -> bool:
    last = key.lower().rsplit("_", 1)[-1]
    return last in ID_SUFFIXES or last in ID_KEYS


def entities_of(tool: str, noun: str, ex: Extraction, ref_keys: set[str] | None = None) -> list[Entity]:
    """The own entity of every object of one result (see the module docstring)."""
    out: list[Entity] = []
    by_obj: dict[int, list] = {}
    for f in ex.values:
        by_obj.setdefault(f.obj, []).append(f)
    for idx, found in by_obj.items():
        obj = ex.objects[idx]
        if not ex.is_json:
            for f in found:
                if f.key in TEXT_TOKEN_KEYS or (ref_keys and f.key in ref_keys):
                    out.append(Entity(entity_of(f.key, noun) if f.key not in TEXT_TOKEN_KEYS else f.key,
                                      f.value, obj.label, tool))
            continue
        ordered = sorted(found, key=lambda x: x.position)
        own = next((f for f in ordered if ref_keys and f.key in ref_keys), None) or next(
            (f for f in ordered if id_like(f.key)), None)
        if own is None and obj.label is not None:  # no id at all: the label is how it is named
            own = next(f for f in ordered if f.value == obj.label)
        if own is None:
            continue
        container = obj.path.rsplit(".", 1)[-1].removesuffix("[]")
        etype = entity_of(own.key, "") or entity_of(container, noun) or noun
        if own.key in ("name", "email", "title") and etype == own.key:
            etype = entity_of(container, noun) or noun
        out.append(Entity(etype, own.value, obj.label, tool))
    return out


async def sample_live_state(shapes: dict[str, ToolShape], session: Session,
                            probe: ProbeResult | None = None) -> LiveState:
    """Entities of the live state, from read-only tools only (never a write on the fixture)."""
    readers = {n: s for n, s in shapes.items() if s.read_only}
    prober = Prober(readers, session)
    if probe is not None:  # reuse what probing learned: arguments that work, keys that are ids
        prober.result.runs = {n: r for n, r in probe.runs.items() if n in readers}
        for t in probe.accepted():
            if t.consumer in readers:
                prober.good.setdefault((t.consumer, t.param), []).append(t.value)
    for _ in range(3):
        try:
            if not await prober.run_tools(readers):
                break
        except SessionBroken:  # keep what was read before the session failed
            break
    ref_keys = {t.path.rsplit(".", 1)[-1].removesuffix("[]") for t in (probe.accepted() if probe else [])}
    took = [t for t in (probe.accepted() if probe else []) if t.path.endswith("+")]
    joined_ok = {(t.producer, t.path) for t in took} | {(t.producer, t.path, str(t.value)) for t in took}
    state = LiveState()
    for name, run in prober.result.runs.items():
        # a name joined to the directory listed is an entity once a consumer took that path; from
        # untagged item lines (git status: branches and files alike) only the very values it took
        ex = run.extraction
        ex = Extraction(ex.is_json, [f for f in ex.values if not f.path.endswith("+") or (
            (name, f.path) if f.path != "text:item[]+" else (name, f.path, str(f.value))) in joined_ok], ex.objects)
        for e in entities_of(name, shapes[name].noun, ex, ref_keys):
            state.add(e)
    return state


class SeededSession:
    """A session whose reset replays seed calls: the seeded state is the fixture from now on."""

    def __init__(self, inner: Session, seeds: list[SeedCall]) -> None:
        self.inner = inner
        self.seeds = seeds

    async def call(self, name: str, args: dict[str, Any]) -> CallOutcome:
        return await self.inner.call(name, args)

    async def reset(self) -> None:
        await self.inner.reset()
        for s in self.seeds:
            await self.inner.call(s.tool, s.args)


async def seed_if_empty(shapes: dict[str, ToolShape], session: Session, *, rounds: int = 2,
                        build_args: Callable[[str], dict[str, Any]] | None = None) -> tuple[Session, LiveState]:
    """Sample; when nothing is there, create some entities with the creating tools and sample again.
    ``build_args`` (tool -> arguments) replaces the prober's schema fills: synthesis passes its own
    binder, so seeded entities get names a user would say, not probe placeholders."""
    state = await sample_live_state(shapes, session)
    if not state.empty:
        return session, state
    creators = [n for n, s in shapes.items() if not s.read_only and s.verb in PRODUCING_VERBS]
    seeds: list[SeedCall] = []
    for _ in range(rounds):  # a second round can use what the first created (an entity to attach to)
        prober = Prober(shapes, SeededSession(session, seeds))
        await prober.run_tools([n for n, s in shapes.items() if s.read_only])
        for name in creators:
            args = build_args(name) if build_args is not None else prober.build_args(name)
            if not (await session.call(name, args)).is_error:
                seeds.append(SeedCall(name, args))
    seeded = SeededSession(session, seeds)
    state = await sample_live_state(shapes, seeded)
    state.seeded = list(seeds)
    return seeded, state
