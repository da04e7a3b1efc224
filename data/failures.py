"""Designed failures (tool-execution state FAILURE) and their recovery.

A gold trajectory may contain a failing call only when a correct agent could not have predicted the
failure from the conversation: the user mistypes their PIN, or asks to move more money than the
account holds when nothing in the conversation showed the balance. We make such calls by perturbing
one user-supplied value of a successful write (a digit of a secret; an amount x20-x1000), check on a
session replayed to that point that it fails with a *state* error (not a schema error), and then
attach one recovery:

Kinds: ``credential`` (a PIN/password digit off), ``wrong_entity`` (the user names another existing
entity — someone else's account, a card that is not theirs — so ids in user turns still exist), and
``magnitude`` (an amount far beyond the balance or limit).

* ``retry`` — the user corrects the value next turn; the original call follows (corrected retry);
* ``alternative`` — another tool of the server that takes the same arguments works instead (the
  user agrees to it next turn), e.g. schedule the transfer the daily limit blocked;
* ``give_up`` — the assistant explains and stops; nothing after the failure is attempted.

Failing calls carry ``"expect_error": true`` in the record so replay validation knows.
"""

from __future__ import annotations

import random
from typing import Any

from faker import Faker

from data.binding import ChainAttempt
from data.catalog import words
from data.model import Call, Failure, Realisation, Source
from data.realise import Realiser, is_schema_error

MONEY_WORDS = {"amount", "deposit", "payment", "price", "total"}


def _values(call: Call) -> set[str]:
    return {str(v) for v in call.args.values() if isinstance(v, str | int)}


def candidates(real: Realisation, recovery: str) -> list[tuple[int, str, str]]:
    """(step, parameter, kind) whose perturbation the conversation could not have predicted."""
    out = []
    for st in real.steps:
        if len(st.calls) != 1 or st.calls[0].tool.read_only:
            continue
        if recovery == "alternative" and st.index != len(real.steps) - 1:
            continue  # and only for amounts: another id or PIN is fixed by retrying, not by another tool
        if recovery == "give_up" and st.index == 0:
            continue
        call = st.calls[0]
        looked = any(prev.calls[0].tool.read_only and _values(call) & _values(prev.calls[0])
                     for prev in real.steps[: st.index])
        for p, v in call.args.items():
            src = call.sources.get(p)
            if src is None or src.kind != "user":
                continue
            if p in call.tool.sensitive and isinstance(v, str) and any(ch.isdigit() for ch in v) and not src.new \
                    and recovery != "alternative":
                out.append((st.index, p, "credential"))
            elif p in call.tool.param_types and isinstance(v, str) and src.row is not None and not looked \
                    and not v.startswith("/") and recovery != "alternative":
                out.append((st.index, p, "wrong_entity"))
            elif isinstance(v, int | float) and not isinstance(v, bool) and set(words(p)) & MONEY_WORDS and not looked:
                out.append((st.index, p, "magnitude"))
    return out


def perturb(value: Any, kind: str, prop: dict[str, Any], rng: random.Random) -> list[Any]:
    if kind == "credential":
        digits = [i for i, ch in enumerate(value) if ch.isdigit()]
        i = rng.choice(digits)
        new = str((int(value[i]) + rng.randint(1, 9)) % 10)
        return [value[:i] + new + value[i + 1:]]
    top = prop.get("maximum", 10**9)
    return [m for m in (value * 20, value * 100, value * 1000) if m <= top]


def inject(realiser: Realiser, real: Realisation, recovery: str, rng: random.Random, fake: Faker,
           tag: str) -> Failure | None:
    """Attach a verified designed failure to ``real`` (None if no call lends itself to one)."""
    cands = candidates(real, recovery)
    rng.shuffle(cands)
    for step_index, p, kind in cands[:3]:
        original = real.steps[step_index].calls[0]
        if kind == "wrong_entity":
            bads = _other_entities(realiser, real, original, p, rng)
        else:
            bads = perturb(original.args[p], kind, original.tool.params[p], rng)
        for bad in bads:
            failure = _verify(realiser, real, step_index, p, kind, bad, recovery, rng, fake, f"{tag}:{p}")
            if failure is not None:
                return failure
    return None


def _other_entities(realiser: Realiser, real: Realisation, call: Call, p: str, rng: random.Random) -> list[Any]:
    """Existing entities of the same type unrelated to the conversation (the user names the wrong one:
    every id a user says still exists in the world)."""
    t = call.tool.param_types[p]
    ctx = realiser.sampler.context(call.tool.domain, real.seed, 0)
    mine = call.sources[p].row.related if call.sources[p].row is not None else set()
    rows = [r for r in ctx.candidates(t) if r.id != call.args[p] and not r.ref and not (r.related & mine)]
    rng.shuffle(rows)
    return [r.id for r in rows[:2]]


def _verify(realiser: Realiser, real: Realisation, step_index: int, p: str, kind: str, bad: Any,
            recovery: str, rng: random.Random, fake: Faker, tag: str) -> Failure | None:
    original = real.steps[step_index].calls[0]
    run = realiser._new_run(real.domains, real.seed, 0, rng, fake, f"fail:{tag}")
    try:
        for st in real.steps[:step_index]:
            for c in st.calls:
                replay = Call(c.tool, c.args, c.sources)
                realiser.execute(run, replay)
                if replay.text != c.text:
                    return None
        said = realiser.sampler.full(original.tool.domain, real.seed).by_id(bad) if kind == "wrong_entity" else None
        wrong = Call(original.tool, {**original.args, p: bad}, {**original.sources, p: Source("user", row=said, new=True)},
                     expect_error=True)
        realiser.execute(run, wrong)
        if not wrong.is_error or is_schema_error(wrong.text):
            return None
        alternative = None
        if recovery == "alternative":
            alternative = _alternative(realiser, run, original)
            if alternative is None:
                return None
        elif recovery == "retry":
            again = Call(original.tool, original.args, original.sources)
            realiser.execute(run, again)
            if again.text != original.text:
                return None
        return Failure(step_index, wrong, kind, recovery, p, alternative)
    finally:
        realiser._close(run)


def _alternative(realiser: Realiser, run: ChainAttempt, original: Call) -> Call | None:
    """Another write tool of the server for the same purpose that works with the same values: it
    takes every required parameter of the original and shares a distinctive name word with it
    (``transfer_funds`` -> ``schedule_transfer``; words common to most of the server's tools, like
    "email", do not count)."""
    tools = realiser.catalog.user_tools(original.tool.domain)
    common = {w for w in {x for t in tools for x in words(t.name)}
              if sum(1 for t in tools if w in words(t.name)) > len(tools) / 4}
    mine = set(words(original.tool.name)) - common
    for alt in tools:
        if alt.name == original.tool.name or alt.read_only or not (set(words(alt.name)) - common) & mine:
            continue
        if not set(original.tool.required) <= set(alt.params):
            continue
        fixed = {q: original.args[q] for q in alt.params if q in original.args}
        call = realiser.binder.bind(run, alt, {}, 0, set(alt.required) - set(fixed))
        call.args = {q: (fixed.get(q, v)) for q, v in call.args.items()}
        for q in fixed:
            call.args.setdefault(q, fixed[q])
            call.sources[q] = original.sources.get(q, Source("user"))
        call.args = {q: call.args[q] for q in alt.params if q in call.args}
        for q in call.args:
            if q not in fixed:
                call.sources[q] = Source("user", new=True)
        realiser.execute(run, call)
        if not call.is_error:
            return call
    return None
