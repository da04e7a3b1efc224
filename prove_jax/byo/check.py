"""``python -m prove_jax.byo check CONFIG``: look at a run's own MCP servers before training.

For each ``env.byo`` server, in about a minute and without training: start it in a fresh session
and list its tools with their MCP annotations and our read-only verdict; infer the graph exactly as
synthesis does (:func:`data.byo.realise.study`) and print each edge with the argument it feeds and
its evidence; realise and print 5 conversations the way synthesis does; then warn, naming the tool
and the knob to turn, about what would quietly weaken the data:

* results longer than ``episode.max_result_chars`` (the model sees the clip only);
* tools never exercised (no call succeeded while probing, sampling and realising);
* generic error messages ("Error executing tool X": a plain exception under the SDK), which hide
  the reason probing reads to tell a wrong reference from a wrong shape;
* a snapshot that differs between two fresh sessions (the final-state check would fail on gold);
* writes that succeed but leave the snapshot unchanged (synthesis drops them, their effect stays);
* a seed that does not copy (its files name the fixture's own path, links that leave it, special
  files): a session's copy would not be a private state.

Errors — a config that does not load, a server that does not start, a snapshot command that fails,
no conversation realised — are printed too and make the exit status 1: they are the ones that
would make training fail. Warnings alone exit 0.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import stat
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from data.byo.protocol import listing_from_sdk
from data.byo.realise import ServerModel, bind, canonical, study
from data.byo.schema import PRODUCING_VERBS
from data.byo.synth import _one, plan_slots
from data.byo.values import values_of
from data.clip import visible
from prove_jax.env.backends import CallResult
from prove_jax.env.byo import ByoBackend, ServerSpec
from prove_jax.env.pool import MCPPool

GENERIC = re.compile(r"^\s*(error executing tool \S+|internal (server )?error|an? (unknown |unexpected )?error "
                     r"(occurred|has occurred)?|error)\s*\.?\s*$", re.I)
"""An error that says nothing of its cause (the SDK's reply to a plain exception, and its kin)."""
CONVERSATIONS = 5


@dataclass(frozen=True)
class Finding:
    level: str  # "error" | "warning"
    server: str
    tool: str  # "" when it concerns the server (its seed, its snapshot)
    knob: str
    message: str

    def line(self) -> str:
        where = f"{self.server}.{self.tool}" if self.tool else self.server
        return f"{self.level}: {where}: {self.message} [knob: {self.knob}]"


@dataclass
class Logged:
    tool: str
    args: Any
    text: str
    is_error: bool


class ObservedBackend(ByoBackend):
    """The byo backend, with every tool call's result kept for the warnings."""

    def __init__(self, spec: ServerSpec, run_dir: str | Path) -> None:
        super().__init__(spec, run_dir)
        self.log: list[Logged] = []

    async def call(self, pin: Any, session_id: str, seed: int, name: str, args: Any) -> CallResult:
        res = await super().call(pin, session_id, seed, name, args)
        self.log.append(Logged(name, args, res.text, res.is_error))
        return res


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)

    def add(self, level: str, server: str, tool: str, knob: str, message: str) -> None:
        self.findings.append(Finding(level, server, tool, knob, message))

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "error"]


def seed_findings(spec: ServerSpec, seed: Path | None, report: Report) -> None:
    """A seed that does not copy into a private session state."""
    if seed is None:
        return
    knob = "env.byo[].seed"
    own = str(seed.resolve())
    files = [seed] if seed.is_file() else sorted(seed.rglob("*"))
    for p in files:
        rel = p.name if p == seed else str(p.relative_to(seed))
        if p.is_symlink():
            target = (p.parent / os.readlink(p)).resolve()
            if not target.exists():
                report.add("warning", spec.name, "", knob, f"seed link {rel} is broken: its copy is too")
            elif seed.is_dir() and not target.is_relative_to(seed.resolve()):
                report.add("warning", spec.name, "", knob, f"seed link {rel} leaves the fixture ({target}): every "
                           "session's copy points at the same outside file, so sessions share it")
            continue
        mode = p.lstat().st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            report.add("warning", spec.name, "", knob, f"seed entry {rel} is not a file or a directory: it is not copied")
        elif stat.S_ISREG(mode) and p.stat().st_size < 8 << 20 and own.encode() in p.read_bytes():
            report.add("warning", spec.name, "", knob, f"seed file {rel} names the fixture's own path {own}: a "
                       "session's copy would point back at the fixture (write paths relative, or {session_dir} in env)")


def tool_table(model: ServerModel, listed: list[Any]) -> list[str]:
    lines = []
    width = max((len(t.name) for t in model.listing), default=4)
    for t in listing_from_sdk(listed):
        a = t.annotations
        verdict = model.discovery.verdicts[t.name]
        hints = " ".join(f"{k}={v}" for k, v in (("readOnlyHint", a.read_only), ("destructiveHint", a.destructive),
                                                  ("idempotentHint", a.idempotent), ("openWorldHint", a.open_world))
                         if v is not None) or "no annotations"
        rw = "read-only" if verdict.read_only else "write"
        hinted = " (env.byo[].read_only)" if t.name in model.spec.read_only else ""
        lines.append(f"  {t.name:<{width}}  {rw:<9} by {verdict.source}{hinted}; {hints}")
    return lines


def graph_lines(model: ServerModel) -> list[str]:
    if not model.graph.edges:
        return ["  (no edges: no tool's output was accepted by another tool's argument)"]
    out = []
    for e in sorted(model.graph.edges, key=lambda e: (e.producer, e.consumer, e.param)):
        if e.evidence == "probe":
            at = f" (at {e.path})" if e.path else ""
            why = (f"probe: a value {e.producer} returned{at} was accepted as {e.param}, a same-shaped value "
                   "naming nothing was refused")
        else:
            why = f"schema: the names only ({e.producer} makes a '{e.entity}'; it never ran, so nothing was tested)"
        out.append(f"  {e.producer} -> {e.consumer}.{e.param} [{e.entity}]  evidence: {why}")
    return out


def conversation_lines(k: int, record: dict[str, Any], results: list[str], limit: int | None) -> list[str]:
    out = [f"  [{k}] {record['kind']}"]
    it = iter(results)
    for turn in record["turns"]:
        out.append(f"      user: {turn['user']}")
        for g in sorted(turn["gold"], key=lambda g: g["step"]):
            for c in g["calls"]:
                out.append(f"      call: {c['name']} {json.dumps(c['arguments'], ensure_ascii=False)}")
                text = next(it, "")
                shown = visible(text, limit)
                cut = f" ... [{len(text)} characters; the model sees {limit}]" if shown != text else ""
                out.append(f"      -> {shown[:160].replace(chr(10), ' | ')}{' ...' if len(shown) > 160 else ''}{cut}")
        if turn.get("reply"):
            out.append(f"      reply: {turn['reply']}")
    return out


async def _snapshots(pool: MCPPool, name: str) -> list[CallResult]:
    out = []
    for _ in range(2):
        async with pool.episode([name], seed=0) as ep:
            out.append(await ep.helper(name, "snapshot"))
    return out


async def _writes(pool: MCPPool, model: ServerModel, seed: int, skip: set[str]) -> dict[str, tuple[int, int, Any]]:
    """Each write tool but ``skip`` (seen changing the state already) called on one fresh session,
    creators first, each result's values offered to the next calls: (successes, successes that
    changed the snapshot, the last arguments tried)."""
    rng = random.Random(f"check:{seed}:{model.name}")
    out: dict[str, tuple[int, int, Any]] = {}
    writers = sorted((n for n in model.names if not model.read_only(n) and n not in skip),
                     key=lambda n: model.discovery.verdicts[n].verb not in PRODUCING_VERBS)
    values = list(model.fixture)
    async with pool.episode([model.name], seed=0) as ep:
        for tool in writers:
            ok = changed = 0
            args: Any = None
            for _ in range(3):
                before = canonical((await ep.helper(model.name, "snapshot")).text)
                args = bind(model, tool, rng, values, None).args
                res = await ep.call(tool, args)
                if res.is_error:
                    continue
                ok += 1
                values += values_of(res.text, -1, tool)
                changed += canonical((await ep.helper(model.name, "snapshot")).text) != before
                if changed:
                    break
            out[tool] = (ok, changed, args)
    return out


def call_findings(model: ServerModel, log: list[Logged], limit: int | None, report: Report) -> None:
    name = model.name
    for tool in model.names:
        calls = [c for c in log if c.tool == tool]
        good = [c for c in calls if not c.is_error]
        errors = [c.text for c in calls if c.is_error]
        longest = max((len(c.text) for c in good), default=0)
        if limit is not None and longest > limit:
            report.add("warning", name, tool, "episode.max_result_chars",
                       f"results up to {longest} characters; the model sees the first {limit}, and synthesis copies "
                       "no value from past them")
        if not good:
            last = f" (last error: {errors[-1][:120]!r})" if errors else ""
            report.add("warning", name, tool, "env.byo[].seed",
                       f"never exercised: none of its {len(calls)} calls succeeded{last}; give the fixture what it "
                       "needs, or no example will use it")
        if len(errors) >= 2 and all(GENERIC.match(e) for e in errors):
            report.add("warning", name, tool, "the server: raise ToolError('<what was wrong>')",
                       f"all {len(errors)} errors say only {errors[0]!r}: probing tells a wrong reference from a "
                       "wrong shape by the message, so this tool's edges go unseen")


async def check_server(spec: ServerSpec, limit: int | None, seed: int, run_dir: Path, report: Report,
                       say: Callable[[str], None], conversations: int = CONVERSATIONS) -> None:
    t0 = time.perf_counter()
    say(f"== {spec.name}: {' '.join(spec.command) if spec.command else spec.url}")
    try:
        backend = ObservedBackend(spec, run_dir)
    except ValueError as exc:
        report.add("error", spec.name, "", "env.byo[]", str(exc))
        return
    seed_findings(spec, backend.seed, report)
    pool = MCPPool({spec.name: backend})
    try:
        await pool.__aenter__()
    except Exception as exc:  # a server that does not start: training would stop the same way
        report.add("error", spec.name, "", "env.byo[].command", f"does not start: {exc}")
        return
    try:
        if spec.snapshot:
            a, b = await _snapshots(pool, spec.name)
            if a.is_error or b.is_error:
                report.add("error", spec.name, "", "env.byo[].snapshot", f"the snapshot command fails: {a.text or b.text}")
            elif canonical(a.text) != canonical(b.text):
                diff = next((f"{x!r} vs {y!r}" for x, y in zip(a.text.splitlines(), b.text.splitlines(), strict=False)
                             if x != y), "")
                report.add("warning", spec.name, "", "env.byo[].rewrite",
                           f"the snapshot differs between two fresh sessions ({diff[:160]}): mask what changes by itself")
        model = await study(pool, spec, seed=seed, max_result_chars=limit)
        say(f"tools ({len(model.listing)}), in a fresh session:")
        for line in tool_table(model, backend.listed):
            say(line)
        say(f"graph ({len(model.graph.edges)} edges; {model.probe_calls} probe calls):")
        for line in graph_lines(model):
            say(line)
        done, tried = 0, 0
        wrote: set[str] = set()  # writes of realised conversations: each changed the snapshot (realise)
        say(f"conversations (up to {conversations}):")
        plans = plan_slots([model], 0, {"conversation": 3 * conversations}, seed, 3)
        reasons: dict[str, int] = {}
        for plan in plans:
            if done == conversations:
                break
            tried += 1
            outcome = await _one(pool, [model], plan, seed)
            if outcome.record is None:
                reasons[outcome.reason] = reasons.get(outcome.reason, 0) + 1
                continue
            done += 1
            wrote |= {c["name"] for t in outcome.record["turns"] for g in t["gold"] for c in g["calls"]
                      if not model.read_only(c["name"])}
            for line in conversation_lines(done, outcome.record, outcome.results, limit):
                say(line)
        say(f"  {done} realised of {tried} tried" + (f"; not kept: {reasons}" if reasons else ""))
        if done == 0:
            report.add("error", spec.name, "", "env.byo[].seed",
                       f"no conversation could be realised ({reasons}): synthesis would write no example")
        if spec.snapshot:
            for tool, (ok, changed, args) in (await _writes(pool, model, seed, wrote)).items():
                if ok and not changed:
                    report.add("warning", spec.name, tool, "env.byo[].snapshot (or env.byo[].read_only)",
                               f"succeeded {ok} time(s) and left the snapshot unchanged (last: {json.dumps(args)[:100]}): "
                               "the snapshot misses where it writes (synthesis then drops its calls, though their "
                               "effect stays), or these calls were no-ops the server accepts")
        call_findings(model, backend.log, limit, report)
    finally:
        await pool.__aexit__(None, None, None)
    say(f"   ({spec.name} checked in {time.perf_counter() - t0:.1f}s, {len(backend.log)} tool calls)")


def run_check(specs: list[ServerSpec], limit: int | None, seed: int = 0,
              say: Callable[[str], None] = print, conversations: int = CONVERSATIONS) -> Report:
    report = Report()
    with tempfile.TemporaryDirectory(prefix="byo-check-") as tmp:
        for spec in specs:
            asyncio.run(check_server(spec, limit, seed, Path(tmp) / spec.name, report, say, conversations))
    warnings = [f for f in report.findings if f.level == "warning"]
    say(f"warnings ({len(warnings)}):" if warnings else "warnings: none")
    for f in warnings:
        say("  " + f.line())
    for f in report.errors:
        say(f.line())
    return report
