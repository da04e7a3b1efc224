"""Probing a live session: which values one tool returns does another tool accept as a reference?

Names alone cannot settle a dependency: ``nickname`` takes any string, ``symbol`` only a listed
one; ``schedule_transfer`` returns an ``id`` that ``cancel_scheduled_transfer`` takes as
``scheduled_transfer_id``. So every candidate is tested on the live server, by value:

1. **Run every tool once** with the best arguments known (accepted values, name-matched values
   from earlier results, description examples, schema fills). Read-only tools run on the fixture;
   a write tool's run is recorded with its arguments, because what it creates exists only after it
   runs — its tests re-run it on a freshly reset session.
2. **Differential test** of a value ``v`` (found at path ``P`` of tool A's result) against parameter
   ``q`` of tool B: call B with ``q = v`` and with ``q = mutant(v)``, everything else equal. The
   mutant keeps ``v``'s shape (``ACC-0003`` -> ``ACC-9417``, ``/home/ana/notes.txt`` ->
   ``/home/ana/qzvkd.txt``), so a parameter that only checks a format accepts both. ``q``
   references what ``v`` names iff the mutant is *rejected* (an error, or an empty result on a
   lenient server) and ``v`` is *not rejected the same way*: B succeeds, or fails with a different
   error skeleton (values, quoted strings and digits masked) — it got past the lookup and tripped
   over something else (a wrong PIN, a business rule). That second clause is what lets a
   dependency be confirmed without finding arguments that make B succeed.
3. **Repeat** while new values appear: accepted values make more tools succeed (a customer id
   from a description example opens the accounts listing, whose ids open the transactions ...),
   and a test that failed because another argument was bad is retried once that one is known.
4. **Creation test** of each write that ran: call it once more with a made-up value (a mutant) for
   one reference parameter; when it succeeds, that value is something the write created (a file,
   a branch, a named entity), tested against the consumers like an output (:meth:`Prober.create`).

Paths get three helps, for file and git servers that print plain text: names a listing prints are
joined to the directory it was given (:func:`data.byo.extract.under`); a path's mutant changes only
its last segment (so it stays inside the server's root); and a root that nothing lists is read off
an error that echoes a relative path resolved against it ("ENOENT ... '/workspace/probe-path'"
-> ``/workspace``), then offered to every path parameter (git's ``repo_path``).

Probing costs calls, never correctness of the fixture: after any successful call of a tool not
known to be read-only the session is reset (and a write producer re-run). Query-like parameters
(``query``, ``pattern``) are not tested: a search finds what it is given by design.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from data.byo.extract import Extraction, Found, extract, under
from data.byo.protocol import Session
from data.byo.schema import ParamInfo, ToolShape, compatible, entity_of, fill_value, path_like

DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
CREATED = "created:"
MAX_VALUE_LEN = 120


@dataclass
class Run:
    """One successful call of a tool: its arguments and what it returned."""

    tool: str
    args: dict[str, Any]
    extraction: Extraction
    read_only: bool
    created: dict[str, Any] = field(default_factory=dict)  # param -> the made-up value this write created

    def inputs(self) -> set[str]:
        out: set[str] = set()
        stack: list[Any] = [self.args]
        while stack:
            x = stack.pop()
            if isinstance(x, dict):
                stack.extend(x.values())
            elif isinstance(x, list):
                stack.extend(x)
            else:
                out.add(str(x))
        return out


@dataclass(frozen=True)
class Test:
    """One differential test and its verdict."""

    producer: str
    path: str
    consumer: str
    param: str
    value: str | int
    mutant: str | int
    accepted: bool
    lenient: bool  # the mutant was accepted too: q does not discriminate values of this shape


@dataclass
class ProbeResult:
    runs: dict[str, Run] = field(default_factory=dict)
    creations: dict[str, Run] = field(default_factory=dict)  # write tool -> a run that created a new name
    tests: list[Test] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)  # tool -> last error when it never ran
    calls: int = 0
    broken: str = ""  # why probing stopped early: the session failed

    def accepted(self) -> list[Test]:
        return [t for t in self.tests if t.accepted]


class SessionBroken(RuntimeError):
    """The session failed (a timeout, a dead server): every later answer is the pool's "episode
    already failed", whose skeleton differs from any real rejection, so going on would accept
    every value tested. Probing stops and keeps what it learned before."""


def shape_of(v: str | int) -> str:
    if isinstance(v, int):
        return "int"
    return re.sub(r"[a-z]", "a", re.sub(r"[A-Z]", "A", re.sub(r"\d", "9", v)))


def mutate(v: str | int, rng: random.Random, avoid: set[str]) -> str | int:
    """A value of ``v``'s shape that names nothing: digits redrawn when it has any (the prefix of
    ``ACC-0003`` is format, the digits are identity), else the letters of its longest alphabetic
    run. A path changes in its last segment only: ``/workspace/probe`` -> ``/workspace/qzvkd``, not
    ``/qzvkdxwjq/probe``, which a rooted server rejects as outside its root, a different error from
    "no such file" that would pass for a hit."""
    if isinstance(v, int):
        return v + 7_919_000 + rng.randrange(1000)
    head, sep, last = v.rstrip("/").rpartition("/")
    if sep and last:  # a path: only its last segment is identity (a mutant elsewhere leaves the root)
        tail = mutate(last, rng, {a.rpartition("/")[2] for a in avoid})
        if not head:  # a lone root (/workspace): a name inside it, not another root
            return f"{v.rstrip('/')}/{tail}"
        return f"{head}/{tail}{'/' if v.endswith('/') else ''}"
    for _ in range(20):
        if any(c.isdigit() for c in v):
            digits = [i for i, c in enumerate(v) if c.isdigit()]
            chars = list(v)
            for n, i in enumerate(digits):
                chars[i] = "9" if n == 0 and len(digits) > 1 else str(rng.randrange(10))
            out = "".join(chars)
        else:
            runs = list(re.finditer(r"[A-Za-z]+", v))
            if not runs:
                return v + "zq"
            m = max(reversed(runs), key=lambda r: len(r.group()))
            new = "".join(rng.choice("QXZJKVW") if c.isupper() else rng.choice("qxzjkvw") for c in m.group())
            out = v[: m.start()] + new + v[m.end():]
        if out != v and out not in avoid:
            return out
    return v + "zq"


def put(args: dict[str, Any], p: ParamInfo, v: Any) -> dict[str, Any]:
    """``args`` with ``p`` set to ``v``; a field of an object parameter is set inside its (first)
    object, the rest of which stays as filled."""
    val = [v] if p.is_array and not isinstance(v, list) else v
    if not p.parent:
        return {**args, p.name: val}
    holder = args.get(p.parent)
    if isinstance(holder, list):
        first = dict(holder[0]) if holder and isinstance(holder[0], dict) else {}
        return {**args, p.parent: [{**first, p.field: val}, *holder[1:]]}
    return {**args, p.parent: {**(holder if isinstance(holder, dict) else {}), p.field: val}}


def get(args: dict[str, Any], p: ParamInfo) -> Any:
    if not p.parent:
        return args.get(p.name)
    holder = args.get(p.parent)
    if isinstance(holder, list):
        holder = holder[0] if holder else None
    return holder.get(p.field) if isinstance(holder, dict) else None


def created_values(ex: Extraction, created: dict[str, Any]) -> Extraction:
    """A creating run's result plus the names it created, under ``created:<param>`` paths."""
    extra = [Found(f"{CREATED}{q}", q, v, -1, 0) for q, v in created.items()]
    return Extraction(ex.is_json, ex.values + extra, ex.objects) if extra else ex


def skeleton(text: str, *values: str | int) -> str:
    for v in values:
        text = text.replace(str(v), "<V>")
    text = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "<Q>", text)
    return re.sub(r"\d+", "0", text).strip().lower()


def testable(f: Found) -> bool:
    v = f.value
    if isinstance(v, int):
        return True
    return 0 < len(v) <= MAX_VALUE_LEN and not DATE.match(v) and len(v.split()) <= 6 \
        and not re.fullmatch(r"-?[\d.,]+", v)


class Prober:
    """Runs steps 1-3 on one session; everything it learns is in :attr:`result`."""

    def __init__(self, shapes: dict[str, ToolShape], session: Session, *, seed: int = 0,
                 max_rounds: int = 3, values_per_path: int = 2) -> None:
        self.shapes = shapes
        self.session = session
        self.rng = random.Random(seed)
        self.max_rounds = max_rounds
        self.values_per_path = values_per_path
        self.result = ProbeResult()
        self.good: dict[tuple[str, str], list[Any]] = {}  # (tool, param) -> accepted values
        self._done: set[tuple[str, str, str, str, str]] = set()
        self._lenient: dict[tuple[str, str], set[str]] = {}
        self._known: set[str] = set()
        self._dirty = False
        self._tried: dict[str, set[str]] = {}
        self._mutants: dict[tuple[str, str, str, str], tuple[str | int, str, bool, bool]] = {}
        self.date_hint = "2026-06-15"
        self.roots: list[str] = []
        self._created_tried: set[str] = set()  # directories the server resolved a relative path against

    # -- calls ------------------------------------------------------------------------------------

    async def _call(self, tool: str, args: dict[str, Any]) -> tuple[str, bool]:
        self.result.calls += 1
        out = await self.session.call(tool, args)
        if out.broken:
            self.result.broken = out.text[:200]
            raise SessionBroken(out.text)
        if not out.is_error and not self.shapes[tool].read_only:
            self._dirty = True
        return out.text, out.is_error

    async def _clean(self) -> None:
        if self._dirty:
            await self.session.reset()
            self.result.calls += 1
            self._dirty = False

    # -- arguments --------------------------------------------------------------------------------

    def _fixture_values(self, p: ParamInfo) -> list[Any]:
        """Values for a reference parameter, best first: accepted for this very parameter, then
        accepted for a parameter of the same entity, then values under a key of that entity in the
        fixture (read-only runs), then description examples."""
        out: list[Any] = []
        for (_tool, pname), vals in self.good.items():
            if pname == p.name:
                out.extend(vals)
        if path_like(p):  # the root before paths of other parameters: every tree has it
            out.extend(self.roots)
        for (tool, pname), vals in self.good.items():
            if pname != p.name and compatible(self.shapes[tool].param(pname).entity, p.entity):
                out.extend(vals)
        for run in self.result.runs.values():
            if not run.read_only:
                continue
            for f in run.extraction.values:
                key_entity = entity_of(f.key, self.shapes[run.tool].noun)
                if compatible(key_entity, p.entity) and testable(f):
                    out.append(f.value)
        out.extend(p.examples)
        for shape in self.shapes.values():  # examples other tools give for the same entity
            for q in shape.references:
                if q.examples and compatible(q.entity, p.entity):
                    out.extend(q.examples)
        if p.json_type == "integer":
            out = [v for v in out if isinstance(v, int) or (isinstance(v, str) and v.isdigit())]
            out = [int(v) for v in out]
        return list(dict.fromkeys(out))

    def build_args(self, tool: str, overrides: dict[str, Any] | None = None, variant: int = 0) -> dict[str, Any]:
        shape = self.shapes[tool]
        overrides = overrides or {}
        args: dict[str, Any] = {}
        used: set[str] = {str(v) for v in overrides.values()}
        for p in shape.params:
            if p.name in overrides:
                v = overrides[p.name]
                args[p.name] = [v] if p.is_array and not isinstance(v, list) else v
                continue
            if not p.required and variant < 2:  # later variants add the optional ones ("give one of ...")
                continue
            if p.kind == "reference":
                vals = self._fixture_values(p)
                fresh = [v for v in vals if str(v) not in used] or vals  # from/to: two different accounts
                if fresh:
                    v = fresh[min(variant if p.required else 0, len(fresh) - 1)]
                    used.add(str(v))
                    args[p.name] = [v] if p.is_array else v
                    continue
                if not p.required:
                    continue
            args[p.name] = fill_value(p, self.date_hint)
        for p in shape.nested:  # reference fields inside object parameters: known values when there are any
            if p.name in overrides:
                args = put(args, p, overrides[p.name])
            elif p.parent in args and (vals := self._fixture_values(p)):
                args = put(args, p, vals[min(variant % 2, len(vals) - 1)])
        return args

    # -- step 1: run every tool -------------------------------------------------------------------

    async def run_tools(self, tools: Iterable[str]) -> int:
        """Give every tool without a (non-empty) run a few argument variants; keep the first run
        whose result holds values (an empty listing for the first customer tells nothing)."""
        new = 0
        for name in tools:
            old = self.result.runs.get(name)
            if old is not None and not old.extraction.empty:
                continue
            tried = self._tried.setdefault(name, set())
            for variant in range(4):
                args = self.build_args(name, variant=variant)
                key = repr(sorted(args.items()))
                if key in tried:
                    continue
                tried.add(key)
                text, err = await self._call(name, args)
                await self._clean()
                if err:
                    self.result.failures.setdefault(name, text[:200])
                    self._learn_root(name, args, text)
                    continue
                ex = self._extract(name, args, text)
                if name not in self.result.runs or not ex.empty:
                    self.result.runs[name] = Run(name, args, ex, self.shapes[name].read_only)
                    new += 1
                self.result.failures.pop(name, None)
                for f in ex.values:
                    self._known.add(str(f.value))
                    if isinstance(f.value, str) and DATE.match(f.value):
                        self.date_hint = max(self.date_hint, f.value[:10])
                if not ex.empty:
                    break
        return new

    def _extract(self, tool: str, args: dict[str, Any], text: str) -> Extraction:
        """The result's values, plus the names it lists joined to the directory it was given."""
        ex = extract(text)
        for p in self.shapes[tool].params:
            v = args.get(p.name)
            if path_like(p) and isinstance(v, str) and v.startswith("/"):
                return under(ex, v)
        return ex

    def _learn_root(self, tool: str, args: dict[str, Any], text: str) -> None:
        """A relative path the server resolved against its root and echoed in its error
        (``probe path`` -> "ENOENT ... '/workspace/probe path'") reveals that root: the value a
        path parameter takes when nothing lists one (git's ``repo_path``)."""
        for p in self.shapes[tool].params:
            v = args.get(p.name)
            if not path_like(p) or not isinstance(v, str) or not v or v.startswith("/"):
                continue
            m = re.search(r"(/[^\s'\"`:,]*?)/" + re.escape(v), text)
            if m and m.group(1) not in self.roots:
                self.roots.append(m.group(1))

    # -- step 2: differential tests ---------------------------------------------------------------

    def _candidates(self, run: Run) -> dict[str, list[Found]]:
        """Testable values per result path, echoes of the run's own inputs left out."""
        inputs = run.inputs()
        out: dict[str, list[Found]] = {}
        for path, found in run.extraction.by_path().items():
            vals = [f for f in found if testable(f) and (str(f.value) not in inputs or f.path.startswith(CREATED))]
            if vals:
                out[path] = list({str(f.value): f for f in vals}.values())[: self.values_per_path]
        return out

    async def _replay(self, run: Run) -> Run | None:
        """Re-create what a write producer made, on a clean session (its values may differ)."""
        await self.session.reset()
        self.result.calls += 1
        self._dirty = False
        text, err = await self._call(run.tool, run.args)
        self._dirty = False
        if err:
            return None
        return Run(run.tool, run.args, created_values(self._extract(run.tool, run.args, text), run.created),
                   run.read_only, run.created)

    async def test_producer(self, run: Run) -> None:
        current: Run | None = run
        if not run.read_only:
            current = await self._replay(run)
            if current is None:
                return
        for path in list(self._candidates(current)):
            for consumer, shape in self.shapes.items():
                if consumer == run.tool:
                    continue
                for p in shape.references:
                    await self._test_param(run.tool, path, consumer, p, current)
                    if self._dirty:  # the consumer wrote: back to the fixture (+ what the producer made)
                        if run.read_only:
                            await self._clean()
                        else:
                            current = await self._replay(run)
                            if current is None:
                                return
        if not run.read_only:
            self._dirty = True  # the session still holds what the producer wrote

    async def _test_param(self, producer: str, path: str, consumer: str, p: ParamInfo, current: Run) -> None:
        found = self._candidates(current).get(path, [])
        if not found or p.name in self._lenient_set(consumer):
            return
        others = self.build_args(consumer, {})
        sig = repr(sorted((k, v) for k, v in others.items() if k not in (p.name, p.parent)))
        key = (producer, path, consumer, p.name, sig)
        if key in self._done:
            return
        self._done.add(key)
        for f in found:
            if isinstance(f.value, int) != (p.json_type == "integer"):
                return
            v = f.value
            mkey = (consumer, p.name, shape_of(v), sig)
            if mkey in self._mutants:  # one unknown value per shape is enough: its rejection is the baseline
                mutant, m_text, m_err, m_empty = self._mutants[mkey]
            else:
                mutant = mutate(v, self.rng, self._known)
                m_text, m_err = await self._call(consumer, put(others, p, mutant))
                m_empty = not m_err and extract(m_text).empty
                self._mutants[mkey] = (mutant, m_text, m_err, m_empty)
            if not m_err and not m_empty:
                self._lenient.setdefault((consumer, p.name), set()).add(shape_of(v))
                self.result.tests.append(Test(producer, path, consumer, p.name, v, mutant, False, True))
                return
            if self._dirty:
                return
            r_text, r_err = await self._call(consumer, put(others, p, v))
            if r_err:  # a made-up name the producer created must work: failing otherwise is a kind mismatch
                accepted = m_err and skeleton(r_text, v) != skeleton(m_text, mutant) and not path.startswith(CREATED)
            else:
                accepted = m_err or not extract(r_text).empty
            self.result.tests.append(Test(producer, path, consumer, p.name, v, mutant, bool(accepted), False))
            if accepted:
                self.good.setdefault((consumer, p.name), []).append(v)
                return
            if self._dirty:
                return

    def _lenient_set(self, consumer: str) -> set[str]:
        return {p for (c, p), shapes in self._lenient.items() if c == consumer and len(shapes) >= 2}

    # -- the loop ---------------------------------------------------------------------------------

    async def probe(self) -> ProbeResult:
        try:
            return await self._probe()
        except SessionBroken:
            return self.result

    async def _probe(self) -> ProbeResult:
        await self.session.reset()
        readers = [n for n, s in self.shapes.items() if s.read_only]
        writers = [n for n, s in self.shapes.items() if not s.read_only]
        tested: set[str] = set()
        for _ in range(self.max_rounds):
            await self.run_tools(readers)
            await self.run_tools(writers)
            before = (len(self.result.runs), len(self.good), sum(len(v) for v in self.good.values()))
            for name in [*readers, *writers]:
                run = self.result.runs.get(name)
                if run is not None:
                    await self.test_producer(run)
                    tested.add(name)
            for name in writers:
                await self.create(name)
            after = (len(self.result.runs), len(self.good), sum(len(v) for v in self.good.values()))
            if after == before and all(n in self.result.runs for n in self.shapes):
                break
            if after == before and not await self._more_runs(readers, writers):
                break
        await self._clean()
        return self.result

    async def create(self, tool: str) -> None:
        """Step 4: does this write *create* what it is given? For each reference parameter, call the
        write once with a made-up value of the shape it accepted (a mutant: a name nothing has);
        when that succeeds, the made-up value is something the write produced — a new file, a
        branch, a named entity — and is tested against the consumers like any output (re-created
        on a clean session first). An echo of a known value (``rename(account_id)``) produces
        nothing; an echo of a made-up one that a consumer then accepts, where the same value was
        unknown before, does."""
        run = self.result.runs.get(tool)
        if run is None or tool in self._created_tried:
            return
        self._created_tried.add(tool)
        for p in self.shapes[tool].references:
            known = get(run.args, p)
            known = known[0] if isinstance(known, list) and known else known
            if not isinstance(known, str | int) or isinstance(known, bool):
                continue
            fresh = mutate(known, self.rng, self._known)
            args = put(run.args, p, fresh)
            await self._clean()
            _, err = await self._call(tool, args)
            await self._clean()
            if err:
                continue
            made = Run(tool, args, extract(""), False, {p.name: fresh})
            self.result.creations.setdefault(tool, made)
            await self.test_producer(made)
            return

    async def _more_runs(self, readers: list[str], writers: list[str]) -> bool:
        n = len(self.result.runs)
        await self.run_tools([*readers, *writers])
        return len(self.result.runs) > n
