"""Realise a chain on live sessions: bind every argument, execute, and keep what really works.

This is the programmatic teacher's tool-execution state. For each tool of the chain it binds
arguments (``data.binding``: ids read off earlier outputs first, then related context entities, then
values synthesised from the schema) and runs the call on the conversation's own session. A failing call names the
argument at fault (the kit's messages do), that value is excluded and the call retried, so a chain
only ever records calls that succeeded on the state the earlier calls left behind; later steps use
the real ids earlier ones returned. A chain that cannot go on is truncated (if at least
``chain_min`` steps worked) or retried from scratch with other entities. Unmet state preconditions
("call start_engine first") are met by inserting the establishing tool, as a user would ask for both.
"""

from __future__ import annotations

import os
import random
import re
from typing import Any

from faker import Faker

from data import intents
from data.binding import Binder, ChainAttempt
from data.catalog import Catalog, ToolInfo, compatible
from data.config import SynthConfig
from data.graph import IMPLICIT, DependencyGraph
from data.model import Call, Realisation, Step, is_empty
from data.sampler import ID_VALUE, LiveStateSampler


def error_field(tool: ToolInfo, message: str) -> str | None:
    """The parameter an error message blames: the earliest parameter name it mentions."""
    best: tuple[int, str] | None = None
    for p in tool.params:
        m = re.search(rf"(?<![\w.]){re.escape(p)}(?![\w])", message)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), p)
    return best[1] if best else None


def is_schema_error(message: str) -> bool:
    return any(k in message for k in ("missing required argument", "unexpected argument", "invalid argument",
                                      "must be a JSON object", "unknown tool"))


class Realiser:
    """Turns chains into executed, grounded steps; its :class:`data.binding.Binder` chooses the arguments."""

    def __init__(self, catalog: Catalog, graph: DependencyGraph, sampler: LiveStateSampler,
                 cfg: SynthConfig) -> None:
        self.catalog = catalog
        self.graph = graph
        self.sampler = sampler
        self.cfg = cfg
        self.binder = Binder(graph, sampler, cfg)
        self.stats = {"calls": 0, "retries": 0, "attempts": 0, "truncated": 0, "noops": 0}
        self._internal: dict[tuple[str, str], bool] = {}

    # ------------------------------------------------------------------ driver
    def realise(self, chain: list[str], seed: int, conv_index: int, rng: random.Random, fake: Faker,
                tag: str, *, max_attempts: int = 4, min_steps: int | None = None) -> Realisation | None:
        """Execute ``chain``; None when not even ``min_steps`` steps could be made to work."""
        tools = [self.catalog.tools[t] for t in chain]
        domains = list(dict.fromkeys(t.domain for t in tools))
        min_steps = self.cfg.chain_min if min_steps is None else min_steps
        cap = self.cfg.chain_max + 2  # room for prerequisites the chain itself did not list
        best: Realisation | None = None
        for attempt in range(max_attempts):
            self.stats["attempts"] += 1
            run = self._new_run(domains, seed, conv_index, rng, fake, f"{tag}:{attempt}")
            ok = True
            for pos, tool in enumerate(tools):
                if len(run.steps) >= cap or not self._realise_tool(run, tool, tools[pos + 1:], 0, cap):
                    ok = False
                    break
            self._close(run)
            real = Realisation(domains, seed, run.steps, run.rows)
            if ok:
                return real
            if len(run.steps) >= min_steps and (best is None or len(run.steps) > len(best.steps)):
                best = real
        if best is not None:
            self.stats["truncated"] += 1
            best.domains = list(dict.fromkeys(c.tool.domain for c in best.calls))
        return best

    def _new_run(self, domains: list[str], seed: int, conv_index: int, rng: random.Random, fake: Faker,
                 tag: str) -> ChainAttempt:
        ctx = {d: self.sampler.context(d, seed, conv_index) for d in domains}
        index = {}
        for d in domains:
            full = self.sampler.full(d, seed)
            index[d] = {}
            for t in sorted(full.rows):
                for row in full.rows[t]:
                    if not row.ref:
                        index[d].setdefault(row.id, row)
        return ChainAttempt({d: f"{tag}:{d}:{os.getpid()}" for d in domains}, ctx, index, rng, fake, seed=seed)

    def _close(self, run: ChainAttempt) -> None:
        for d, session in run.sessions.items():
            self.catalog.close(d, session, run.seed)

    def execute(self, run: ChainAttempt, call: Call) -> None:
        self.stats["calls"] += 1
        call.text, call.is_error = self.catalog.call(call.tool.domain, call.tool.name, call.args,
                                                     run.sessions[call.tool.domain], run.seed)

    def _rewind(self, run: ChainAttempt, mark: int, force: bool = False) -> None:
        """Undo every step from ``mark`` on: reset the sessions and replay the kept calls (servers are
        deterministic, so the replay reproduces the same ids and outputs). ``force``: also when no
        step is dropped — a discarded call that succeeded still moved the session clock."""
        if len(run.steps) <= mark and not force:
            return
        run.steps = run.steps[:mark]
        for d, session in run.sessions.items():
            self.catalog.reset(d, session, run.seed)
        for step in run.steps:
            for call in step.calls:
                self.execute(run, call)
        run.rows = [s.row for st in run.steps for c in st.calls for s in c.sources.values()
                    if s.kind == "user" and s.row is not None]
        kept = {(c.tool.domain, p) for st in run.steps for c in st.calls for p in c.args}
        run.selves = {k: v for k, v in run.selves.items() if k in kept}

    # ------------------------------------------------------------------ one tool (with prerequisites)
    def _realise_tool(self, run: ChainAttempt, tool: ToolInfo, later: list[ToolInfo], depth: int, cap: int,
                      hint: str = "", pinned: dict[str, Any] | None = None) -> bool:
        """Append a working step for ``tool``; when its state precondition is unmet, first insert a
        tool that establishes it (the one the error message names, else any that does), as a
        user who knows their car must be started before it can be shifted would ask for both."""
        mark = len(run.steps)
        if depth == 0:
            self._lookups(run, tool, later, cap)
        prereq_ok = depth < 2 and bool(tool.requires)
        step, fail = self._step(run, tool, later, hint=hint, pinned=pinned, prereq_ok=prereq_ok)
        if step is not None:
            self._append(run, step)
            return True
        if not prereq_ok or fail is None:
            return False
        tries: dict[str, int] = {}
        inserted = 0
        while inserted < 4 and sum(tries.values()) < 6 and len(run.steps) + 2 <= cap:
            prereqs = [y for y in self._prereqs(tool, fail.text) if tries.get(y.name, 0) < 2]
            if not prereqs:
                break
            y = prereqs[0]
            tries[y.name] = tries.get(y.name, 0) + 1
            before = len(run.steps)
            run.focus_of(tool.domain).update(str(v) for v in fail.args.values() if isinstance(v, str | int))
            goal = " ".join(c.replace("_", " ") for c in sorted(set(tool.requires) & set(y.establishes)))
            same = {tool.param_types[p]: v for p, v in fail.args.items()
                    if p in tool.param_types and not isinstance(v, list)}
            if not self._realise_tool(run, y, [tool, *later], depth + 1, cap, hint=f"{fail.text} {goal}",
                                      pinned=same):
                self._rewind(run, before)
                continue
            step, fail2 = self._step(run, tool, later, retry=fail.args, prereq_ok=True)
            if step is not None:
                self._append(run, step)
                return True
            if fail2 is None or fail2.text == fail.text:
                self._rewind(run, before)  # the insertion changed nothing that matters
                continue
            inserted += 1
            fail = fail2
        self._rewind(run, mark)
        return False

    # ------------------------------------------------------------------ named entities
    def internal(self, domain: str, t: str, seed: int) -> bool:
        """Are ids of type ``t`` internal (``ACC-0001``: nobody says them) rather than spoken?"""
        key = (domain, t)
        if key not in self._internal:
            prof = intents.profile(domain)
            rows = [r for r in self.sampler.full(domain, seed).rows.get(t, []) if not r.ref][:20]
            self._internal[key] = t not in prof.spoken and bool(rows) and sum(
                bool(ID_VALUE.match(str(r.id))) for r in rows) * 2 > len(rows)
        return self._internal[key]

    def _lookups(self, run: ChainAttempt, tool: ToolInfo, later: list[ToolInfo], cap: int) -> None:
        """A person names an entity ("my savings account", "the email about the Q2 budget"), not its
        internal id; the assistant then has to find it. So before a tool that needs such an entity and
        has nothing listing one yet, the lookup that lists it becomes a gold step of its own (marked
        ``support``: the request implies it), and the binder picks the entity from its output."""
        prof = intents.profile(tool.domain)
        for p in tool.required:
            t = tool.param_types.get(p)
            if t is None or p in prof.self_params or not self.internal(tool.domain, t, run.seed):
                continue
            if self.binder.candidates(run, t, set()) or len(run.steps) + 2 > cap or run.rng.random() >= self.cfg.lookup_rate:
                continue
            for res in self._resolvers(run, tool, t):
                step, _ = self._step(run, res, [tool, *later])
                if step is not None:
                    step.support = True
                    run.looked_up.add(t)
                    self._append(run, step)
                    break

    def _resolvers(self, run: ChainAttempt, tool: ToolInfo, t: str) -> list[ToolInfo]:
        """Read-only tools listing entities of type ``t`` whose own required inputs the conversation
        can supply without another lookup: the signed-in user, spoken values, enums, earlier results."""
        prof = intents.profile(tool.domain)
        out = []
        for res in self.catalog.user_tools(tool.domain):
            if res.name == tool.name or not res.read_only or not any(compatible(x, t) for x in res.produces):
                continue
            ok = True
            for q in res.required:
                qt = res.param_types.get(q)
                if q in prof.self_params or "enum" in res.params[q]:
                    continue
                if qt is not None and (not self.internal(tool.domain, qt, run.seed) or self.binder.candidates(run, qt, set())):
                    continue
                ok = qt is None and q not in res.sensitive and res.params[q].get("type") == "string"
                if not ok:
                    break
            if ok:
                out.append(res)
        return sorted(out, key=lambda r: (sum(1 for q in r.required if q not in prof.self_params), r.name))

    def _prereqs(self, tool: ToolInfo, message: str) -> list[ToolInfo]:
        """Tools establishing a condition ``tool`` requires: named in the error first, then fewest
        preconditions of their own (start the engine before shifting gear)."""
        need = set(tool.requires)
        cands = [t for t in self.catalog.user_tools(tool.domain) if t.name != tool.name and need & set(t.establishes)]
        return sorted(cands, key=lambda t: (t.name not in message, len(t.requires), t.name))

    def _append(self, run: ChainAttempt, step: Step) -> None:
        step.index = len(run.steps)
        step.depends_on = self._depends(run, step)
        run.steps.append(step)
        for call in step.calls:
            self._absorb(run, call)
            for p in intents.profile(call.tool.domain).self_params:
                src = call.sources.get(p)
                if p in call.args and src is not None and src.kind == "user":
                    run.selves.setdefault((call.tool.domain, p), call.args[p])
            run.said(call.tool.domain).update(str(v) for p, v in call.args.items()
                                   if call.sources.get(p) is not None and call.sources[p].kind == "user"
                                   and isinstance(v, str | int))

    def _step(self, run: ChainAttempt, tool: ToolInfo, later: list[ToolInfo],
              retry: dict[str, Any] | None = None, hint: str = "", pinned: dict[str, Any] | None = None,
              prereq_ok: bool = False) -> tuple[Step | None, Call | None]:
        """Bind-execute-exclude until the call works (10 tries); returns the step or the last failure.

        A failure whose message names a tool that establishes one of ``tool``'s preconditions ("call
        start_engine first") returns at once when prerequisites may be inserted: other entities would
        fail the same way."""
        needed = any(compatible(p, t) for nxt in later for t in nxt.param_types.values() for p in tool.produces)
        excluded: dict[str, set[str]] = {}
        forced: set[str] = set()
        last: Call | None = None
        for attempt in range(10):
            if attempt == 0 and retry is not None and last is None:
                call = self.binder.bind(run, tool, {}, 0, set(), fixed=retry)
            else:
                call = self.binder.bind(run, tool, excluded, attempt, forced, hint=hint, pinned=pinned)
            before = None if tool.read_only else self.catalog.state(tool.domain, run.sessions[tool.domain], run.seed)
            self.execute(run, call)
            if before is not None and not call.is_error and \
                    self.catalog.state(tool.domain, run.sessions[tool.domain], run.seed) == before:
                self.stats["noops"] += 1  # it "worked" but changed nothing: other values, or give up
                self._rewind(run, len(run.steps), force=True)
            elif not call.is_error and not (needed and is_empty(call.output, tool.read_only)):
                step = Step(len(run.steps), [call])
                for extra in self.binder.fan_out(run, call):
                    self.execute(run, extra)
                    if not extra.is_error and not is_empty(extra.output, extra.tool.read_only):
                        step.calls.append(extra)
                return step, None
            last = call
            self.stats["retries"] += 1
            if not call.is_error and before is None:
                self._rewind(run, len(run.steps), force=True)  # an empty lookup moved the clock too
            if prereq_ok and call.is_error and any(y.name in call.text for y in self._prereqs(tool, call.text)):
                return None, call
            if not call.is_error:
                targets = [p for p, src in call.sources.items() if src.kind == "user"] or list(call.args)
            else:
                blamed = error_field(tool, call.text)
                if blamed is not None and blamed not in call.args:
                    forced.add(blamed)
                    continue
                if re.search(r"nothing to|at least one|give (?:\w+ )?(?:and/)?or", call.text):
                    options = [p for p in tool.params if p not in tool.required and p not in call.args]
                    if options:
                        forced.add(run.rng.choice(options))
                        continue
                targets = [blamed] if blamed else [p for p, src in call.sources.items() if src.kind == "user"]
            for p in targets or list(call.args):
                if p in call.args:
                    excluded.setdefault(p, set()).add(repr(call.args[p]))
        return None, last

    def _absorb(self, run: ChainAttempt, call: Call) -> None:
        """Entities this call touched become the conversation's focus (related picks come next)."""
        index = run.index[call.tool.domain]
        for p, v in call.args.items():
            for value in v if isinstance(v, list) else [v]:
                if isinstance(value, str | int):
                    run.focus_of(call.tool.domain).add(str(value))
                    row = index.get(value)
                    if row is not None:
                        run.focus_of(call.tool.domain).update(row.related)
            src = call.sources.get(p)
            if src is not None and src.kind == "user" and src.row is not None and src.row not in run.rows:
                run.rows.append(src.row)

    def _depends(self, run: ChainAttempt, step: Step) -> list[int]:
        """Data dependencies (ids read off earlier outputs), state ones (an implicit edge: the step
        that established a precondition), and for a read the last earlier write on the same entity
        (the read observes it). Two writes on one entity are not ordered unless an edge says so."""
        deps: set[int] = set()
        tool = step.calls[0].tool
        values = {str(v) for c in step.calls for v in c.args.values() if isinstance(v, str | int)}
        for c in step.calls:
            deps.update(s.step for s in c.sources.values() if s.kind == "tool" and s.step is not None)
        observed = False
        for prev in reversed(run.steps[: step.index]):
            ptool = prev.calls[0].tool
            if self.graph.relation(ptool.name, tool.name) == IMPLICIT:
                deps.add(prev.index)
            if tool.read_only and not observed and not ptool.read_only and values & {
                    str(v) for c in prev.calls for v in c.args.values() if isinstance(v, str | int)}:
                deps.add(prev.index)
                observed = True
        return sorted(d for d in deps if d < step.index)

