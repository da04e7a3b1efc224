"""The four example kinds over a realised chain of a user's server, as the kit's machine makes them.

* **conversation** — the chain's steps split into one or two user turns; a value a step copies from
  an earlier result is pointed at ("the first one in that result"), everything else the user states.
* **clarification** — the assistant must ask. As the kit does (``data.machine``), a read-only lookup
  whose output a later step copies is *hidden*, together with every read-only tool whose fixture
  output holds the copied value (so no visible tool can find it): the assistant says it cannot look
  it up and asks; the user gives the value; the rest of the chain runs. A chain without such a
  lookup gets the other clarification the kit knows: the request withholds a required detail, the
  assistant asks for it, the user gives it and the whole chain runs in the second turn.
* **abstention** — the requested action's tool is hidden, with its name siblings (same verb:
  ``read_file`` beside ``read_text_file``), so no visible tool does it: refuse, no call.
* **irrelevance** — the visible tools are another byo server's (when the run has several) or the
  server's own with a request none of them serves: refuse, no call. A request realised on another
  server names it in ``meta["source_domains"]`` (as the kit does), so ``data.writer.Knobs`` never
  draws that server's tools as distractors: they would make the refusal wrong.

Each builder returns the record dict of Contract 2 (``prove_jax.records.Example`` checks it when
written) plus the recorded result of every gold call, in step order, for replay validation.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from data.byo.discovery import name_words
from data.byo.phrasing import (
    ORDINALS,
    OUT_OF_SCOPE_MORE,
    Mention,
    Voice,
    clause,
    join_clauses,
    refusal,
    report,
    request_clause,
    say,
    system_prompt,
    tool_words,
)
from data.byo.realise import Bound, ServerModel, StepRec
from data.machine import OUT_OF_SCOPE, dedup_items

QUERIES = (*OUT_OF_SCOPE, *OUT_OF_SCOPE_MORE)
NAMING_KEYS = frozenset({"name", "id", "key", "path", "title", "uuid", "slug"})
"""Keys whose value is the row's own name: only those are pointed at by the row's label."""


@dataclass
class Built:
    record: dict[str, Any] | None
    results: list[str]  # the recorded output of every gold call, in step order
    reason: str = ""


def _pointer(b: Bound, steps: list[StepRec]) -> str:
    """How the user names a value copied from step ``b.origin.origin``'s result ("" = say it)."""
    v = b.origin
    if v is None or v.origin < 0 or v.origin >= len(steps):
        return ""
    if v.label and v.label != str(v.value) and (v.key in NAMING_KEYS or v.key.lower().endswith("id")):
        return f"the one called {say(v.label)}"
    if v.ordinal < len(ORDINALS) and v.count <= 12:
        return "the one in that result" if v.count == 1 else f"the {ORDINALS[v.ordinal]} one in that result"
    return ""


def _mentions(step: StepRec, steps: list[StepRec], stated: set[int], drop: Any = None
              ) -> tuple[list[Mention], list[int]]:
    """The step's mentions and the earlier steps it depends on (values it copies)."""
    out: list[Mention] = []
    deps: list[int] = []
    for b in step.binding.bound:
        if b.source == "root" or (drop is not None and b.value == drop):
            continue
        pointer = _pointer(b, steps) if b.source == "tool" and b.origin is not None and \
            b.origin.origin not in stated else ""
        if pointer:
            assert b.origin is not None
            deps.append(b.origin.origin)
        out.append(Mention(b.leaf.noun, b.leaf.kind, b.value, pointer))
    return out, sorted(set(deps))


def _clause(model: ServerModel, step: StepRec, mentions: list[Mention], rng: random.Random) -> str:
    return request_clause(clause(step.tool, step.read_only, model.prefix), mentions, rng)


def _record(kind: str, model: ServerModel, servers: list[str], tools: list[dict[str, Any]], system: str,
            turns: list[dict[str, Any]], seed: int, meta: dict[str, Any]) -> dict[str, Any]:
    n_calls = sum(len(g["calls"]) for t in turns for g in t["gold"])
    n_steps = sum(len(t["gold"]) for t in turns)
    meta = {"teacher": "programmatic-byo", "source_domains": [model.name], "distractors": [],
            "enum_stripped": False, **meta}
    meta["dedup_items"] = dedup_items(turns, meta)
    return {"id": "", "kind": kind, "servers": servers, "seed": seed, "tools": tools, "system": system,
            "turns": turns, "complexity": {"n_calls": n_calls, "n_steps": n_steps, "n_turns": len(turns),
                                           "n_servers": len(servers)}, "meta": meta}


def _gold(steps: list[tuple[int, StepRec, list[int]]], order: dict[int, int]) -> list[dict[str, Any]]:
    out = []
    for idx, st, deps in steps:
        order.setdefault(idx, len(order))
        out.append({"step": order[idx], "calls": [{"name": st.tool, "arguments": st.binding.args}],
                    "depends_on": sorted({order[d] for d in deps if d in order and order[d] < order[idx]})})
    return out


def _visible(model: ServerModel, hidden: set[str]) -> list[dict[str, Any]]:
    return [t for t in model.openai if t["function"]["name"] not in hidden]


def conversation(model: ServerModel, steps: list[StepRec], rng: random.Random, seed: int) -> Built:
    voice = Voice(rng)
    cut = rng.randint(1, len(steps) - 1) if len(steps) > 1 and rng.random() < 0.75 else len(steps)
    segments = [list(range(cut)), list(range(cut, len(steps)))]
    turns: list[dict[str, Any]] = []
    order: dict[int, int] = {}
    results: list[str] = []
    for si, seg in enumerate(s for s in segments if s):
        parts, gold = [], []
        for i in seg:
            ms, deps = _mentions(steps[i], steps, set())
            parts.append(_clause(model, steps[i], ms, rng))
            gold.append((i, steps[i], deps))
            results.append(steps[i].text)
        text = join_clauses(parts, rng)
        user = voice.frame(text) if si == 0 else voice.follow_up(text)
        reply = report([(p, steps[i].read_only, steps[i].text) for p, i in zip(parts, seg, strict=True)], rng)
        turns.append({"user": user, "gold": _gold(gold, order), "reply": reply})
    meta = {"chain": [s.tool for s in steps], "persona": voice.style, "info_level": "complete",
            "states": ["query", "tool-execution", "turn", "response", "continuation"]}
    return Built(_record("conversation", model, [model.name], model.openai,
                         system_prompt(model.name, model.root, rng), turns, seed, meta), results)


def _hideable(model: ServerModel, steps: list[StepRec]) -> tuple[int, set[str]] | None:
    """A read-only lookup j that later steps copy from, whose copied values the fixture already holds
    (the user can know them): j and every reader that shows those values on the fixture."""
    for j, st in enumerate(steps):
        if not st.read_only or not all(s.read_only for s in steps[:j]):
            continue
        copied = [b for later in steps[j + 1:] for b in later.binding.copies
                  if b.origin is not None and b.origin.origin == j and _pointer(b, steps)]
        if len({str(b.value) for b in copied}) != 1 or str(copied[0].value) not in model.seen_by:
            continue  # one value to ask for, one the fixture shows (the user can know it)
        hidden = {st.tool} | {t for b in copied for t in model.seen_by[str(b.value)]}
        if not hidden & {s.tool for i, s in enumerate(steps) if i != j}:
            return j, hidden
    return None


def clarification(model: ServerModel, steps: list[StepRec], rng: random.Random, seed: int) -> Built:
    voice = Voice(rng)
    system = system_prompt(model.name, model.root, rng)
    found = _hideable(model, steps)
    order: dict[int, int] = {}
    if found is not None:
        j, hidden = found
        parts = [_clause(model, st, _mentions(st, steps, set())[0], rng) for st in steps]
        before = list(range(j))
        copied = [b for st in steps[j + 1:] for b in st.binding.copies
                  if b.origin is not None and b.origin.origin == j and _pointer(b, steps)]
        ask = f"which {copied[0].leaf.noun}"
        lookup = clause(steps[j].tool, True, model.prefix)
        reply = f"I don't have a tool to {lookup} here, so I can't look that up myself. Could you tell me {ask} you mean?"
        if before:
            reply = report([(parts[i], steps[i].read_only, steps[i].text) for i in before], rng) + " " + reply
        first = {"user": voice.frame(join_clauses(parts, rng)),
                 "gold": _gold([(i, steps[i], []) for i in before], order), "reply": reply}
        supply = rng.choice(["It's {v}.", "I mean {v}.", "That would be {v}."]).format(v=say(copied[0].value))
        after = [(i, steps[i], [d for d in _mentions(steps[i], steps, {j})[1] if d != j]) for i in range(j + 1, len(steps))]
        second = {"user": supply, "gold": _gold(after, order),
                  "reply": report([(parts[i], steps[i].read_only, steps[i].text) for i, _, _ in after], rng)}
        results = [steps[i].text for i in before] + [steps[i].text for i, _, _ in after]
        meta = {"chain": [s.tool for s in steps], "persona": voice.style, "info_level": "complete",
                "clarify": "hidden_lookup", "hidden": sorted(hidden),
                "states": ["query", "turn", "tool-execution", "response", "continuation"]}
        return Built(_record("clarification", model, [model.name], _visible(model, hidden), system,
                             [first, second], seed, meta), results)
    asked = next((b for st in steps for b in st.binding.bound if b.source == "user" and b.leaf.required
                  and b.leaf.kind in ("reference", "path", "text")), None)
    if asked is None:
        return Built(None, [], "nothing_to_ask")
    parts = []
    for st in steps:
        ms, _ = _mentions(st, steps, set(), drop=asked.value)  # wherever it recurs: the user has not said it
        parts.append(_clause(model, st, ms, rng))
    question = rng.choice(["Sure — which {n} should I use?", "Happy to. What {n} do you want?",
                           "I can do that; what's the {n}?"]).format(n=asked.leaf.noun)
    first = {"user": voice.frame(join_clauses(parts, rng)), "gold": [], "reply": question}
    gold = [(i, st, _mentions(st, steps, set())[1]) for i, st in enumerate(steps)]
    supply = rng.choice(["{v}, please.", "Use {v}.", "It's {v}."]).format(v=say(asked.value))
    second = {"user": supply[:1].upper() + supply[1:], "gold": _gold(gold, order),
              "reply": report([(parts[i], st.read_only, st.text) for i, st in enumerate(steps)], rng)}
    meta = {"chain": [s.tool for s in steps], "persona": voice.style, "info_level": "missing_required",
            "clarify": "withheld_detail", "states": ["query", "turn", "response", "tool-execution", "continuation"]}
    return Built(_record("clarification", model, [model.name], model.openai, system, [first, second], seed, meta),
                 [st.text for st in steps])


def siblings(model: ServerModel, tool: str) -> set[str]:
    """The tool and every tool whose name starts with the same verb (after the server prefix)."""
    head = tool_words(tool, model.prefix)[:1]
    return {t for t in model.names if tool_words(t, model.prefix)[:1] == head} | {tool}


def abstention(model: ServerModel, step: StepRec, rng: random.Random, seed: int) -> Built:
    voice = Voice(rng)
    ms, _ = _mentions(step, [step], set())
    what = _clause(model, step, ms, rng)
    hidden = siblings(model, step.tool)
    turn = {"user": voice.frame(what), "gold": [],
            "reply": refusal(clause(step.tool, step.read_only, model.prefix), "abstention", rng)}
    meta = {"chain": [step.tool], "persona": voice.style, "hidden": sorted(hidden),
            "requested": [{"name": step.tool, "arguments": step.binding.args}],
            "states": ["query", "turn", "tool-execution", "response", "continuation"]}
    return Built(_record("abstention", model, [model.name], _visible(model, hidden),
                         system_prompt(model.name, model.root, rng), [turn], seed, meta), [])


def irrelevance(model: ServerModel, index: int, rng: random.Random, seed: int,
                other: tuple[ServerModel, StepRec] | None = None) -> Built:
    """A request no visible tool serves: another server's realised action, or an everyday question."""
    voice = Voice(rng)
    if other is not None:
        om, step = other
        what = _clause(om, step, _mentions(step, [step], set())[0], rng)
        user, requested = voice.frame(what), [{"name": step.tool, "arguments": step.binding.args}]
        words = " ".join(name_words(step.tool))
    else:
        query = QUERIES[index % len(QUERIES)]
        opener = rng.choice(voice.persona["open"])  # type: ignore[arg-type]
        user = f"{opener} {query[:1].lower() + query[1:] if str(opener).endswith(',') else query}".strip()
        requested, words = [{"query": query}], "answer that"
    turn = {"user": user, "gold": [], "reply": refusal("do that" if other else words, "irrelevance", rng)}
    meta = {"chain": [], "persona": voice.style, "requested": requested,
            "states": ["query", "turn", "response", "continuation"]}
    if other is not None:  # as the kit records it: where the request was realised (no distractor from there)
        meta["source_domains"] = [other[0].name]
    return Built(_record("irrelevance", model, [model.name], model.openai,
                         system_prompt(model.name, model.root, rng), [turn], seed, meta), [])
