"""Realising chains on a live user's server: what the server holds, how to bind arguments, and calls.

:func:`study` learns a server once, through the pool's byo backend (the same sessions training uses,
so a gold path means what it will mean in every episode): its listing and read-only verdicts
(:mod:`data.byo.discovery`, plus the spec's ``read_only`` hints), the inferred producer -> consumer
graph (:func:`data.byo.graph.infer_graph`, probing on a live session), the live-state entities
(:func:`data.byo.sampling.sample_live_state`), and the *fixture pool*: every value the read-only
tools return on the fixture, explored for a few rounds with arguments drawn from the pool itself
(the session root ``path_alias`` opens the first listing, its entries the next).

:func:`bind` fills one call's argument slots (:func:`data.byo.values.leaves`) from the pool and the
chain's earlier outputs; :func:`realise` runs a chain on a fresh session: each step tries a few
tools (consumers of the previous step's output first, inferred edges first among them) and a few
argument variants, and keeps the first call that *succeeds* (a read must also return something; a
write must change the snapshot when the spec has a snapshot command). Only successful calls are
ever kept; every draw comes from one RNG, so a slot's chain depends on its seed alone.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
from dataclasses import dataclass, field
from typing import Any

from data.byo.discovery import Discovery, discover
from data.byo.graph import GraphOptions, InferredGraph, infer_graph
from data.byo.phrasing import new_slug, new_text, server_prefix
from data.byo.progress import Progress, TickingSession
from data.byo.protocol import CallOutcome, EpisodeSession, ToolAnnotations, ToolListing, listing_from_sdk
from data.byo.sampling import LiveState, sample_live_state, seed_if_empty
from data.byo.schema import PRODUCING_VERBS
from data.byo.values import Leaf, Value, candidates, leaves, put, values_of
from data.clip import forms, seen
from prove_jax.env.byo import ByoBackend, ServerSpec
from prove_jax.env.byo.seeding import SeedCall
from prove_jax.env.pool import MCPPool

FATAL = ("timeout", "server_died", "transport", "session_lost")
NEW_WORDS = frozenset({"name", "title", "destination", "dest", "target", "new", "branch"})
OLD_WORDS = frozenset({"source", "src", "from", "old", "base", "existing"})
ROOT_WORDS = frozenset({"repo", "repository", "root", "workspace", "project"})
"""A path parameter that names the whole store (``repo_path``) is the session root, not a path in it:
mcp-server-git opens ``repo_path`` as a repository, so a file or a branch-named path under it fails."""
OPTION_PARAMS = frozenset({"type", "mode", "kind", "format", "scope", "level", "style", "view", "filter", "sort",
                           "order", "which"})
"""Last words of a free-string parameter that selects a mode (``branch_type``) rather than naming a thing."""
OPTION_WORDS = ("all", "local", "default", "any", "full", "short", "simple", "summary", "none", "list", "json",
                "text", "name", "date", "asc", "desc")
"""Mode words tried on such a parameter: generic, from no server's description (which may be the only
place a server states them, as mcp-server-git's ``branch_type`` does: 'local', 'remote', 'all')."""
SOFT_FAIL = re.compile(r"\berror\b|\bnot found\b|\bno such\b|\bno matches\b|\bdoes not exist\b|\benoent\b", re.I)


@dataclass
class Bound:
    """One filled slot: the value and where it came from (``user`` states it, ``tool`` copies it
    from an earlier step's output, ``root`` is the session root the system prompt names)."""

    leaf: Leaf
    value: Any
    source: str  # "user" | "tool" | "root"
    origin: Value | None = None


@dataclass
class Binding:
    args: dict[str, Any]
    bound: list[Bound]

    @property
    def copies(self) -> list[Bound]:
        return [b for b in self.bound if b.source == "tool"]


@dataclass
class StepRec:
    """A call that succeeded while realising: what it was given, how, and what it returned."""

    tool: str
    binding: Binding
    text: str
    read_only: bool


@dataclass
class ServerModel:
    """What synthesis knows of one server (built by :func:`study`)."""

    spec: ServerSpec
    listing: list[ToolListing]
    discovery: Discovery
    graph: InferredGraph
    state: LiveState
    fixture: list[Value]
    seen_by: dict[str, set[str]]  # value -> read-only tools whose fixture output holds it
    openai: list[dict[str, Any]]
    prefix: str = ""
    probe_calls: int = 0
    fixture_calls: int = 0
    options: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    """(tool, parameter) -> option words a free-string mode parameter accepted when probed
    (:func:`probe_options`): bound as if they were the schema's enum."""
    max_result_chars: int | None = None  # the episode's clip: values past it are never copied
    hidden_values: int = 0  # values of chain results left out of binding because they lie past the clip

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def root(self) -> str | None:
        return self.spec.path_alias if self.spec.isolation == "process" else None

    def read_only(self, tool: str) -> bool:
        return self.discovery.read_only(tool)

    def tool(self, name: str) -> ToolListing:
        return next(t for t in self.listing if t.name == name)

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.listing]


def _path_base(args: dict[str, Any]) -> str | None:
    for k, v in args.items():
        if isinstance(v, str) and re.search(r"path|dir|folder|root", k, re.I) and v.startswith("/"):
            return v
    return None


def bind(model: ServerModel, tool: str, rng: random.Random, pool: list[Value], prev: int | None,
         stated: frozenset[str] = frozenset()) -> Binding:
    """Arguments for ``tool``: each slot from the pool (values of step ``prev`` preferred, so a chain
    copies what its last step returned), from the session root, or made up when the tool creates.
    A value from an earlier output counts as copied (``tool``) unless the user already ``stated`` it
    (a write's result echoing the name it was given names nothing new)."""
    listing = model.tool(tool)
    props = listing.properties
    optional = frozenset(p for p, s in props.items() if p not in listing.required and rng.random() < 0.15
                         and str(s.get("type")) in ("integer", "number", "boolean"))
    args: dict[str, Any] = {}
    bound: list[Bound] = []
    used: set[str] = set()
    objs: dict[tuple[str | int, ...], str] = {}
    creates = not model.read_only(tool) and (model.discovery.verdicts[tool].verb in PRODUCING_VERBS
                                            or any(w in PRODUCING_VERBS | {"move", "rename", "copy"}
                                                   for w in tool.lower().split("_")))
    first_ref: set[tuple[str | int, ...]] = set()
    for leaf in leaves(listing.input_schema, optional=optional):
        if (tool, leaf.name) in model.options:  # a probed mode word: an enum the schema does not state
            leaf = dataclasses.replace(leaf, kind="enum", schema={**leaf.schema, "enum": model.options[tool, leaf.name]})
        parent = leaf.where[:-1]
        value, source, origin = _fill(model, tool, leaf, rng, pool, prev, used, objs.get(parent), creates,
                                      parent not in first_ref)
        if source == "tool" and str(value) in stated:
            source = "user"
        if leaf.kind in ("reference", "path"):
            first_ref.add(parent)
        if origin is not None:
            objs.setdefault(parent, origin.obj)
        used.add(str(value))
        put(args, leaf.where, value)
        bound.append(Bound(leaf, value, source, origin))
    return Binding(args, bound)


def _fill(model: ServerModel, tool: str, leaf: Leaf, rng: random.Random, pool: list[Value], prev: int | None,
          used: set[str], obj: str | None, creates: bool, first: bool) -> tuple[Any, str, Value | None]:
    s = leaf.schema
    if leaf.kind == "enum":
        return rng.choice(list(s.get("enum", [s.get("const")]))), "user", None
    if leaf.kind == "bool":
        return (s["default"] if isinstance(s.get("default"), bool) else rng.random() < 0.5), "user", None
    if leaf.kind == "number":
        if isinstance(s.get("default"), int | float):
            return s["default"], "user", None
        lo = int(max(s.get("minimum", 1), 1))
        return rng.randint(lo, int(min(s.get("maximum", lo + 9), lo + 9))), "user", None
    if leaf.kind == "date":
        return "2024-01-01", "user", None
    if leaf.kind == "object":
        return {}, "user", None
    if leaf.kind == "query":
        return _query(leaf, rng, pool), "user", None
    ranked = candidates(leaf, pool)
    if leaf.kind != "path":  # the session root is a place, not a name (a server would store the real path)
        ranked = [(sc, v) for sc, v in ranked if not (v.tool == "" and v.value == model.root)]
    if leaf.kind == "text" and not ranked:
        return new_text(rng), "user", None
    words = set(leaf.words)
    can_make = creates and leaf.kind != "text" and not words & OLD_WORDS and (first or bool(words & NEW_WORDS))
    if leaf.kind == "path" and model.root and set(leaf.words) & ROOT_WORDS:
        return model.root, "root", Value(model.root, "path", -1, "", "root")  # the repository is the session
    if leaf.kind == "path" and model.root and not ranked:
        ranked = [(1, Value(model.root, "path", -1, "", "root"))]
    best = max((sc for sc, _ in ranked), default=0)
    if can_make and (best < 3 or rng.random() < 0.6):
        return _made(model, tool, leaf, rng, pool), "user", None
    if not ranked:  # nothing known fits: a tool that creates gets a new name, others a placeholder
        return (_made(model, tool, leaf, rng, pool) if creates else f"{leaf.noun.replace(' ', '-')}-1"), "user", None
    scored = []
    for score, v in ranked:
        if prev is not None and v.origin == prev:
            score += 6 if score >= 2 else 1  # copy what the last step returned, when it fits by name
        score += 4 if obj is not None and v.obj == obj else 0
        score -= 20 if str(v.value) in used else 0  # from/to: two different things
        scored.append((score, rng.random(), v))
    scored.sort(key=lambda x: (-x[0], x[1]))
    top = [v for sc, _, v in scored if sc == scored[0][0]]
    v = rng.choice(top[:6])
    source = "root" if v.tool == "" and v.origin == -1 and v.key == "path" and v.value == model.root else (
        "tool" if v.origin >= 0 else "user")
    return v.value, source, v


def _query(leaf: Leaf, rng: random.Random, pool: list[Value]) -> str:
    """A search that finds something: a word of a known label, or a glob of a known extension."""
    names = [str(v.value) for v in pool if isinstance(v.value, str) and v.key in ("name", "item", "title", "file")]
    if {"pattern", "glob"} & set(leaf.words):
        exts = sorted({m.group(0) for n in names if (m := re.search(r"\.\w{1,5}$", n))})
        if exts:
            return rng.choice(["*", "**/*"]) + rng.choice(exts)
    toks = sorted({w for n in names for w in re.findall(r"[A-Za-z]{3,}", n)})
    return rng.choice(toks) if toks else "a"


def _made(model: ServerModel, tool: str, leaf: Leaf, rng: random.Random, pool: list[Value]) -> str:
    """A new value shaped like the existing ones (a path under a known directory, a name)."""
    if leaf.kind == "path":
        dirs = sorted({str(v.value) for v in pool if isinstance(v.value, str) and v.value.startswith("/")
                       and not re.search(r"\.\w{1,5}$", v.value) and v.key in ("path", "dir", "directory", "item")})
        base = rng.choice(dirs) if dirs else (model.root or ".")
        folder = bool({"dir", "directory", "folder"} & (set(leaf.words) | set(tool.lower().split("_"))))
        exts = sorted({m.group(0) for v in pool if isinstance(v.value, str)
                       and (m := re.search(r"\.(md|txt|py|json)$", v.value))}) or [".txt"]
        name = new_slug(rng, []).replace(" ", "-")
        return f"{base.rstrip('/')}/{name}{'' if folder else rng.choice(exts)}"
    existing = [str(v.value) for v in pool if v.key == leaf.name and isinstance(v.value, str)]
    return new_slug(rng, existing or [str(v.value) for v in pool if v.key == "name" and isinstance(v.value, str)])


async def study(pool: MCPPool, spec: ServerSpec, *, seed: int = 0, rounds: int = 3,
                max_result_chars: int | None = None, progress: Progress | None = None) -> ServerModel:
    """Discovery, the inferred graph, live-state sampling and the fixture pool of one started server
    (``progress``: a bar per phase and the budget, :mod:`data.byo.progress`)."""
    backend = pool.backends[spec.name]
    hinted = set(spec.read_only)
    listing = [ToolListing(t.name, t.description, t.input_schema,
                           ToolAnnotations(True, t.annotations.destructive, t.annotations.idempotent,
                                           t.annotations.open_world) if t.name in hinted else t.annotations)
               for t in listing_from_sdk(getattr(backend, "listed", []))]
    disc = discover(listing)
    async with pool.episode([spec.name], seed=0) as ep:
        session = TickingSession(ep, progress)
        if progress:
            progress.start(f"byo {spec.name}: probing")
        graph = await infer_graph(listing, disc, session, GraphOptions(seed=seed))
        probing = session.calls
        if progress:
            progress.end("probing", f"{session.calls} calls, {len(graph.edges)} edges "
                         f"({len(graph.pairs(('probe',)))} probed)")
            progress.start(f"byo {spec.name}: state sampling")
        await session.reset()
        state = await sample_live_state(graph.shapes, session, graph.probe)
        model = ServerModel(spec, listing, disc, graph, state, [], {}, pool.tools([spec.name]),
                            server_prefix([t.name for t in listing]), max_result_chars=max_result_chars)
        spent = progress is not None and bool(progress.budget.spent())
        if state.empty and isinstance(backend, ByoBackend) and not spent:  # nothing to name: seed it, once
            model.state = await _seed(model, backend, session, random.Random(f"seed:{seed}:{spec.name}"))
        model.probe_calls = session.calls
        pool_values = [Value(model.root, "path", -1, "", "root")] if model.root else []
        for etype, ents in sorted(state.entities.items()):
            for i, e in enumerate(ents):
                pool_values.append(Value(e.id, etype, -1, e.source, f"-1:{e.source}:ent{i}", e.label, i, len(ents)))
        rng = random.Random(f"fixture:{seed}:{spec.name}")
        readers = [t.name for t in listing if disc.read_only(t.name)]
        await probe_options(ep, model, readers, rng, pool_values)
        done: set[str] = set()
        for _ in range(rounds):
            for tool in readers:
                for _variant in range(3):
                    if progress and progress.budget.spent():
                        break
                    b = bind(model, tool, rng, pool_values, None)
                    key = f"{tool}:{b.args}"
                    if key in done:
                        continue
                    done.add(key)
                    res = await ep.call(tool, b.args)
                    model.fixture_calls += 1
                    if progress:
                        progress.tick()
                    if res.error_kind in FATAL:
                        raise RuntimeError(f"byo server {spec.name!r} failed while sampling: {res.text}")
                    if res.is_error:
                        continue
                    new = values_of(res.text, -1, tool, _path_base(b.args))
                    for v in new:
                        model.seen_by.setdefault(str(v.value), set()).add(tool)
                    known = {(v.value, v.key) for v in pool_values}
                    pool_values += [v for v in new if (v.value, v.key) not in known]
        model.fixture = pool_values
        if progress:
            progress.end("state_sampling", f"{model.probe_calls - probing + model.fixture_calls} calls, "
                         f"{sum(len(v) for v in model.state.entities.values())} live entities, "
                         f"{len(pool_values)} values")
    return model


class _Recording:
    """A session whose results feed the binder's pool (a relation names the entities just made)."""

    def __init__(self, inner: EpisodeSession, values: list[Value]) -> None:
        self.inner, self.values = inner, values

    async def call(self, name: str, args: dict[str, Any]) -> CallOutcome:
        out = await self.inner.call(name, args)
        if not out.is_error:
            self.values += values_of(out.text, -1, name, _path_base(args))
        return out

    async def reset(self) -> None:
        await self.inner.reset()


async def _seed(model: ServerModel, backend: ByoBackend, session: EpisodeSession, rng: random.Random) -> LiveState:
    """An empty fixture seeded through the server's creating tools (:func:`seed_if_empty`, arguments
    from :func:`bind`: new names, notes); the backend adopts the calls as its fixture, so every later
    session, this one after its reset included, starts from the seeded state."""
    values: list[Value] = [Value(model.root, "path", -1, "", "root")] if model.root else []
    made: set[str] = set()

    def build(tool: str) -> dict[str, Any]:  # a call not made before: a second round adds, not repeats
        for _ in range(5):
            args = bind(model, tool, rng, values, None).args
            if (key := f"{tool}:{json.dumps(args, sort_keys=True)}") not in made:
                break
        made.add(key)
        return args

    _, state = await seed_if_empty(model.graph.shapes, _Recording(session, values), build_args=build)
    if state.seeded:
        await backend.adopt([SeedCall(c.tool, c.args) for c in state.seeded])
        await session.reset()
    return state


def option_leaves(model: ServerModel, tool: str) -> list[Leaf]:
    """Required free-string parameters of ``tool`` named like a mode (``branch_type``), no enum."""
    return [lf for lf in leaves(model.tool(tool).input_schema) if lf.kind == "reference" and lf.required
            and lf.json_type == "string" and not lf.in_array and lf.words and lf.words[-1] in OPTION_PARAMS]


async def probe_options(ep: Any, model: ServerModel, readers: list[str], rng: random.Random,
                        pool_values: list[Value]) -> None:
    """Try :data:`OPTION_WORDS` on every mode-like parameter of the read-only tools (safe: reads only)
    and keep the words a call accepted with a result that holds something; a server that states its
    options only in prose is used without copying the prose."""
    for tool in readers:
        for leaf in option_leaves(model, tool):
            ok = []
            for word in OPTION_WORDS:
                args = bind(model, tool, rng, pool_values, None).args
                put(args, leaf.where, word)
                res = await ep.call(tool, args)
                model.fixture_calls += 1
                if res.error_kind in FATAL:
                    raise RuntimeError(f"byo server {model.name!r} failed while probing options: {res.text}")
                if not res.is_error and values_of(res.text, 0, tool) and not SOFT_FAIL.search(res.text):
                    ok.append(word)
            if ok:
                model.options[tool, leaf.name] = ok


def canonical(snapshot: str) -> str:
    """A snapshot compared by content, not layout: JSON re-serialised with sorted keys; text (or
    JSON lines, as a memory file) line by line, each line canonical if it is JSON, lines sorted. A
    server that rewrites its state file unchanged (other spacing, other order) did not write."""
    try:
        data = json.loads(snapshot)
    except ValueError:
        data = snapshot
    if not isinstance(data, str):
        return json.dumps(data, sort_keys=True)
    lines = []
    for line in data.splitlines():
        try:
            lines.append(json.dumps(json.loads(line), sort_keys=True))
        except ValueError:
            lines.append(line.strip())
    return "\n".join(sorted(x for x in lines if x))


@dataclass
class Chain:
    steps: list[StepRec] = field(default_factory=list)
    failed: str = ""


async def realise(pool: MCPPool, model: ServerModel, first: str, length: int, rng: random.Random,
                  attempts: int = 4) -> Chain:
    """Up to ``length`` successful calls on one fresh session, starting with ``first``."""
    chain = Chain()
    values = list(model.fixture)
    pairs = model.graph.pairs(("probe",))
    stated: set[str] = set()
    failed: list[str] = []  # tools this chain tried without success: a later write may enable them
    async with pool.episode([model.name], seed=0) as ep:
        for i in range(length):
            if i == 0:  # the planned tool, then writes, then reads: a tool that needs a prior step
                others = [n for n in model.names if n != first]  # (git_commit: something staged) cannot
                rng.shuffle(others)  # open a chain, and a write is what may set that step up
                order = [first, *sorted(others, key=model.read_only)]
            else:
                order = _consumers(model, chain.steps[-1].tool, rng, values, i - 1, pairs)
                if not chain.steps[-1].read_only:  # git_add -> git_commit: retry what failed before the write
                    order = [*[t for t in failed if t in order], *[t for t in order if t not in failed]]
            got = None
            for _ in range(5):
                if not order:
                    break
                tool = order.pop(0)
                errors: list[str] = []
                got = await _try(ep, model, tool, rng, values, i - 1 if i else None, attempts, frozenset(stated),
                                 [(st.tool, st.binding.args) for st in chain.steps], errors)
                if got is not None:
                    break
                if tool not in failed:
                    failed.append(tool)
                said = " ".join(errors)  # "No changes staged ... Use git_add to stage changes first": that next
                named = [t for t in order if re.search(rf"(?<![\w-]){re.escape(t)}(?![\w-])", said)]
                order = [*named, *[t for t in order if t not in named]]
            if got is None:
                break
            if isinstance(got, str):
                chain.failed = got
                return chain
            chain.steps.append(got)
            if got.tool in failed:
                failed.remove(got.tool)
            stated |= {str(b.value) for b in got.binding.bound if b.source != "tool"}
            values += visible_values(model, got.text, i, got.tool, _path_base(got.binding.args))
    return chain


def visible_values(model: ServerModel, text: str, origin: int, tool: str, base: str | None) -> list[Value]:
    """The values of a chain step's result that the model will see (inside ``max_result_chars``; a
    path joined to its listing's ``base`` by the value it extends): a later step copies only those
    (:mod:`data.clip`). Those left out are counted in ``model.hidden_values``."""
    out = values_of(text, origin, tool, base)
    if model.max_result_chars is None or len(text) <= model.max_result_chars:
        return out
    prefix = base.rstrip("/") + "/" if base else None
    kept = []
    for v in out:
        raw = v.value[len(prefix):] if prefix and isinstance(v.value, str) and v.value.startswith(prefix) else v.value
        if seen(raw, text, model.max_result_chars) or not any(f in text for f in forms(raw)):
            kept.append(v)
        else:
            model.hidden_values += 1
    return kept


def _consumers(model: ServerModel, prev_tool: str, rng: random.Random, values: list[Value], prev: int,
               pairs: set[tuple[str, str]]) -> list[str]:
    names = model.names[:]
    rng.shuffle(names)
    probe = random.Random(rng.random())
    ranked = []
    for n in names:
        copies = len(bind(model, n, probe, values, prev).copies)
        ranked.append((-(2 * ((prev_tool, n) in pairs) + (copies > 0)), n))
    ranked.sort(key=lambda x: x[0])
    return [n for _, n in ranked]  # consumers of the last output (inferred edges first), then the rest


async def _try(ep: Any, model: ServerModel, tool: str, rng: random.Random, values: list[Value], prev: int | None,
               attempts: int, stated: frozenset[str], done: list[tuple[str, Any]],
               errors: list[str] | None = None) -> StepRec | str | None:
    """The first argument variant of ``tool`` that succeeds (a fatal error: its text); the text of
    each error result is appended to ``errors``."""
    ro = model.read_only(tool)
    for _ in range(attempts):
        b = bind(model, tool, rng, values, prev, stated)
        if (tool, b.args) in done:
            continue  # the same call twice teaches nothing
        before = None
        if not ro and model.spec.snapshot:
            before = canonical((await ep.helper(model.name, "snapshot")).text)
        res = await ep.call(tool, b.args)
        if res.error_kind in FATAL:
            return res.text
        if res.is_error:
            if errors is not None:
                errors.append(res.text)
            continue
        if ro and (not values_of(res.text, 0, tool) or SOFT_FAIL.search(res.text)):
            continue  # a read that found nothing, or reports an error in its text (not isError)
        if before is not None and canonical((await ep.helper(model.name, "snapshot")).text) == before:
            continue  # a write that changed nothing teaches a useless call (the state is as it was)
        return StepRec(tool, b, res.text, ro)
    return None
