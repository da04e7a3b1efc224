"""The synthesis state machine (paper §3.2 step 3): one slot plan in, one Example record out.

State groups, visited in order and logged in ``meta.states``:

* **query** — persona and reference time, chain realisation on live sessions (grounded on the
  sampling context), information level (complete / missing-required / minimal);
* **turn** — the realised steps split into 2–3 user turns: a clarification turn when details were
  withheld, follow-up turns for later parts of the chain, a recovery turn after a designed failure;
* **tool-execution** — every gold step classified SUCCESS / PARTIAL (empty result, or some parallel
  calls failed) / FAILURE, designed failures verified, recovery chosen (retry / alternative / give up);
* **response** — assistant replies: results, clarification questions, failure explanations, refusals;
* **continuation** — follow-up or end, with the turn-decay schedule (min_turns 2, max_turns 3).

Kinds: ``conversation``; ``clarification`` (missing function: a lookup tool is hidden, the assistant
asks the user for what it would have returned); ``abstention`` (the action's tool is hidden: refuse,
no call); ``irrelevance`` (the visible tools belong to another server: refuse, no call).
"""

from __future__ import annotations

import itertools
import random
import re
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from faker import Faker

from data import failures, intents
from data.catalog import Catalog
from data.config import SynthConfig
from data.model import Call, Failure, Realisation, Source, Step
from data.realise import Realiser
from data.render import KeyT, Renderer, pick_persona
from data.speech import intent
from data.writer import visible_tools
from servers.kit import REFERENCE_DATE

PERSON = re.compile(r"^(?:Mr\.|Mrs\.|Ms\.|Dr\.)?\s*[A-Z][a-z]+(?: [A-Z][a-z]+){1,2}$")
"""A row label that looks like a person's name: the user the conversation is with, when there is one."""

OUT_OF_SCOPE = [
    "What's the weather going to be like in Lisbon this weekend?", "Can you translate 'good morning' into Japanese?",
    "Who won the football world cup in 2010?", "Book me a table for two at an Italian restaurant tonight.",
    "What's a good recipe for banana bread?", "Can you recommend a sci-fi novel?",
    "How many calories are in an avocado?", "Order a taxi to the airport for 6 am.",
    "What time is it in Tokyo right now?", "Write me a haiku about autumn.",
]


@dataclass
class SlotPlan:
    """Everything one example is generated from (picklable, decided by the planner)."""

    slot: int
    kind: str
    chain: list[str]
    alternates: list[list[str]]
    seed: int
    info_level: str = "complete"
    third_turn: bool = False
    failure: str | None = None  # recovery kind when a designed failure is wanted
    visible_domains: list[str] = field(default_factory=list)  # irrelevance: whose tools are shown
    generic_query: int | None = None  # irrelevance: index into OUT_OF_SCOPE


class Machine:
    """Runs the five state groups for one slot."""

    def __init__(self, catalog: Catalog, realiser: Realiser, cfg: SynthConfig) -> None:
        self.catalog = catalog
        self.realiser = realiser
        self.cfg = cfg
        self.fake = Faker("en_US")
        self.teacher: Any = None  # optional data.teacher.AgentTeacher

    # ------------------------------------------------------------------ entry
    def generate(self, plan: SlotPlan) -> tuple[dict[str, Any] | None, str]:
        rng = random.Random(plan.slot * 7919 + plan.seed)
        self.fake.seed_instance(plan.slot)
        states: list[str] = ["query"]
        persona = pick_persona(rng)
        ref = REFERENCE_DATE.replace(tzinfo=None) + timedelta(minutes=rng.randrange(0, 10 * 60, 5))
        if plan.kind == "irrelevance" and plan.generic_query is not None:
            return self._generic_irrelevance(plan, rng, persona, ref), ""
        real, chain = None, plan.chain
        min_steps = 1 if plan.kind in ("abstention", "irrelevance") else self.cfg.chain_min
        for chain in [plan.chain, *plan.alternates]:
            real = self.realiser.realise(chain, plan.seed, plan.slot, rng, self.fake, f"s{plan.slot}",
                                         min_steps=min_steps)
            if real is not None and (plan.kind != "clarification" or self._hideable(real)):
                break
            real = None
        if real is None:
            return None, "unrealisable_chain"
        selves = self._selves(real)
        rows = [r for r in real.rows if r.label and PERSON.match(r.label)]
        own = [r for r in rows if str(r.id) in {str(v) for v in selves.values()}]
        user_name = own[0].label if own else self.fake.name()
        rend = Renderer(rng, persona, ref, str(user_name), selves)
        meta = {"chain": chain, "persona": persona["style"], "reference_time": ref.isoformat(timespec="minutes"),
                "states": states}
        if plan.kind == "conversation":
            turns = self._conversation(plan, real, rend, rng, meta)
        elif plan.kind == "clarification":
            turns = self._clarification(real, rend, meta)
        else:
            turns = self._refusal(plan, real, rend, rng, meta)
        if turns is None:
            return None, meta.get("reject", "no_turns")
        record = self._record(plan, real, rend, turns, meta)
        if self.teacher is not None:  # data.teacher.AgentTeacher: turns, calls and replies by an LLM
            record = self.teacher.rewrite(record, persona["style"], f"s{plan.slot}")
            said = " ".join(t["user"] for t in record["turns"])
            record["meta"]["mentions"] = [m for m in record["meta"]["mentions"] if m["label"] in said]
        return record, ""

    def _selves(self, real: Realisation) -> dict[tuple[str, str], Any]:
        """The signed-in user: the first value each domain's ``SELF`` parameters take (system prompt)."""
        out: dict[tuple[str, str], Any] = {}
        for call in real.calls:
            for p in intents.profile(call.tool.domain).self_params:
                v = call.args.get(p)
                src = call.sources.get(p)
                if isinstance(v, str | int) and src is not None and src.kind == "user":
                    out.setdefault((call.tool.domain, p), v)
        return out

    # ------------------------------------------------------------------ conversation
    def _conversation(self, plan: SlotPlan, real: Realisation, rend: Renderer, rng: random.Random,
                      meta: dict[str, Any]) -> list[dict[str, Any]] | None:
        meta["states"].append("tool-execution")
        failure = None
        if plan.failure:  # the planned recovery first; any other that fits this chain otherwise
            for recovery in dict.fromkeys([plan.failure, "retry", "give_up"]):
                failure = failures.inject(self.realiser, real, recovery, rng, self.fake, f"s{plan.slot}")
                if failure is not None:
                    break
        steps = real.steps
        if failure is not None and failure.recovery in ("give_up", "alternative"):
            steps = steps[: failure.step + 1]
        recovery_turn = failure is not None and failure.recovery in ("retry", "alternative")
        wants_clar = plan.info_level != "complete"
        n_turns = self.cfg.max_turns if plan.third_turn else self.cfg.min_turns
        fixed_turns = int(wants_clar) + int(recovery_turn)
        forced = {failure.step} if failure is not None and failure.recovery == "give_up" and failure.step > 0 else set()
        n_req = max(1, len(forced) + 1, n_turns - fixed_turns, self.cfg.min_turns - fixed_turns)
        n_req = min(n_req, len(steps), self.cfg.max_turns - fixed_turns)
        others = [i for i in range(1, len(steps)) if i not in forced]
        cuts = sorted(forced | set(rng.sample(others, max(0, min(len(others), n_req - 1 - len(forced))))))
        if wants_clar:
            # The opening request withholds a value the user must give, so it has to reach the first
            # step that takes one: later cuts only (a chain opening with a no-argument listing would
            # otherwise always fall back to "complete" and skew the 60/20/20 mix).
            first = next((st.index for st in steps for c in st.calls
                          if any(s.kind == "user" and p in c.tool.required for p, s in c.sources.items())), None)
            if first is not None:
                cuts = [c for c in cuts if c > first or c in forced]
        bounds = [0, *cuts, len(steps)]
        segments = [steps[a:b] for a, b in itertools.pairwise(bounds)]
        clar = wants_clar and any(s.kind == "user" and p in c.tool.required
                                  for st in segments[0] for c in st.calls for p, s in c.sources.items())
        level = plan.info_level if clar else "complete"
        meta["states"].append("turn")
        turns: list[dict[str, Any]] = []
        for si, seg in enumerate(segments):
            if len(turns) >= self.cfg.max_turns:
                break
            opener = si == 0
            lead = [] if opener else [rend.thanks()]
            fail_here = failure is not None and any(st.index == failure.step for st in seg)
            shown = self._as_said(seg, failure) if fail_here else seg  # the user states the wrong value
            if si == 0 and clar:
                withheld = self._withhold(seg, level, rng)
                pairs = [(seg_call(shown, k), k[2]) for k in sorted(withheld)]
                free = [not any((st.index, ci, p) in withheld for ci, c in enumerate(st.calls) for p in c.args)
                        and (failure is None or st.index < failure.step) for st in seg]
                prefix = [] if level == "minimal" else seg[: free.index(False) if False in free else len(seg)]
                user = rend.request(shown, withheld, vague=level == "minimal")
                meta["states"].append("response")
                turns.append(self._turn(user, prefix, rend.ask_missing(pairs) if not prefix else
                                        rend.report(prefix) + " " + rend.ask_missing(pairs)))
                seg = seg[len(prefix):]
                user = rend.supply(pairs)
                lead = []
            else:
                user = rend.request(shown, set(), opener=opener)
                if lead:
                    sep = "" if lead[0].endswith((".", "!", "?")) else "."
                    user = f"{lead[0]}{sep} {user[:1].upper()}{user[1:]}"
            if failure is not None and any(st.index == failure.step for st in seg):
                done = [st for st in seg if st.index < failure.step]
                meta["states"].append("response")
                turns.append(self._turn(user, done,
                                        (rend.report(done) + " " if done else "") + rend.failure_reply(failure),
                                        failing=failure, failing_deps=real.steps[failure.step].depends_on))
                if failure.recovery == "give_up":
                    break
                rest = [st for st in seg if st.index >= failure.step]
                if failure.recovery == "alternative" and failure.alternative is not None:
                    alt_step = Step(failure.step, [failure.alternative], list(real.steps[failure.step].depends_on))
                    turns.append(self._turn(rend.accept_alternative(failure.alternative), [alt_step],
                                            rend.report([alt_step])))
                    break
                original = real.steps[failure.step].calls[0]
                turns.append(self._turn(rend.correction(failure, original), rest, rend.report(rest)))
                continue
            turns.append(self._turn(user, seg, rend.report(seg)))
        meta["states"].append("continuation")
        meta["info_level"] = level
        meta["failure"] = None if failure is None else {"kind": failure.kind, "recovery": failure.recovery,
                                                        "param": failure.param}
        if len(turns) < self.cfg.min_turns:
            meta["reject"] = "too_few_turns"
            return None
        return turns

    def _as_said(self, seg: list[Step], failure: Failure | None) -> list[Step]:
        """The segment as the user phrases it: the failing call (with the wrong value) in place of
        the one that eventually works."""
        assert failure is not None
        return [Step(st.index, [failure.call, *st.calls[1:]], st.depends_on) if st.index == failure.step else st
                for st in seg]

    def _withhold(self, seg: list[Step], level: str, rng: random.Random) -> set[KeyT]:
        keys = [(st.index, ci, p) for st in seg for ci, c in enumerate(st.calls) for p, s in c.sources.items()
                if s.kind == "user" and (level == "minimal" or p in c.tool.required)]
        if level == "minimal":
            return set(keys)
        first = [k for k in keys if k[0] == keys[0][0]]
        key = rng.choice(first)
        value = repr(seg_call(seg, key).args[key[2]])
        return {k for k in keys if repr(seg_call(seg, k).args[k[2]]) == value}  # the value, wherever it recurs

    # ------------------------------------------------------------------ missing function
    def _hideable(self, real: Realisation) -> Step | None:
        """A read-only lookup whose outputs later steps copy, and whose values the user could know
        (they exist in the initial world)."""
        for st in real.steps:
            call = st.calls[0]
            users = [(c, p) for later in real.steps[st.index + 1:] for c in later.calls for p, s in c.sources.items()
                     if s.kind == "tool" and s.step == st.index]
            if not call.tool.read_only or not users or len(st.calls) > 1:
                continue
            world = self.realiser.sampler.full(call.tool.domain, real.seed)
            known = {str(r.id) for rows in world.rows.values() for r in rows}
            if all(isinstance(c.args[p], str | int) and str(c.args[p]) in known for c, p in users):
                return st
        return None

    def _clarification(self, real: Realisation, rend: Renderer, meta: dict[str, Any]) -> list[dict[str, Any]] | None:
        hidden = self._hideable(real)
        assert hidden is not None
        meta["hidden"] = [hidden.calls[0].tool.name]
        before = real.steps[: hidden.index]
        after = [Step(st.index, [self._as_user(c, hidden.index, real.seed) for c in st.calls],
                      [d for d in st.depends_on if d != hidden.index]) for st in real.steps[hidden.index + 1:]]
        pairs = [(c, p) for st in after for c in st.calls for p, s in c.sources.items()
                 if s.kind == "user" and s.step == -1]
        meta["states"] += ["turn", "tool-execution", "response"]
        user = rend.request(real.steps)  # the request still implies the lookup the assistant cannot do
        ask = rend.ask_missing(pairs)
        reply = f"I don't have a tool to {intent(hidden.calls[0].tool)} here, so I can't look that up myself. {ask}"
        if before:
            reply = rend.report(before) + " " + reply
        turns = [self._turn(user, before, reply), self._turn(rend.supply(pairs), after, rend.report(after))]
        meta["states"].append("continuation")
        meta["info_level"] = "complete"
        return turns

    def _as_user(self, call: Call, hidden: int, seed: int) -> Call:
        """The hidden lookup's outputs become values the user states (step -1 marks them)."""
        sources = {}
        world = self.realiser.sampler.full(call.tool.domain, seed)
        for p, s in call.sources.items():
            if s.kind == "tool" and s.step == hidden:
                sources[p] = Source("user", step=-1, row=world.by_id(call.args[p]))
            else:
                sources[p] = s
        return Call(call.tool, call.args, sources, call.text, call.is_error)

    # ------------------------------------------------------------------ refusals
    def _refusal(self, plan: SlotPlan, real: Realisation, rend: Renderer, rng: random.Random,
                 meta: dict[str, Any]) -> list[dict[str, Any]] | None:
        direct = [st for st in real.steps if all(s.kind == "user" for c in st.calls for s in c.sources.values())]
        writes = [st for st in direct if not st.calls[0].tool.read_only]
        target = (writes or direct)[-1]
        meta["states"] += ["turn", "tool-execution", "response", "continuation"]
        meta["requested"] = [c.gold() for c in target.calls]
        user = rend.request([target], set())
        if plan.kind == "abstention":
            meta["hidden"] = [target.calls[0].tool.name]
        return [self._turn(user, [], rend.refusal([intent(target.calls[0].tool)], plan.kind))]

    def _generic_irrelevance(self, plan: SlotPlan, rng: random.Random, persona: dict[str, Any],
                             ref: Any) -> dict[str, Any]:
        rend = Renderer(rng, persona, ref, self.fake.name())
        query = OUT_OF_SCOPE[plan.generic_query or 0]
        meta = {"chain": [], "persona": persona["style"], "reference_time": ref.isoformat(timespec="minutes"),
                "states": ["query", "turn", "response", "continuation"], "requested": [{"query": query}]}
        opener = rng.choice(persona["open"])
        if opener.endswith(","):
            query = query[:1].lower() + query[1:]
        turn = self._turn(f"{opener} {query}".strip(), [],
                          rend.refusal(["answer that"], "irrelevance"))
        real = Realisation(list(plan.visible_domains), plan.seed, [])
        return self._record(plan, real, rend, [turn], meta)

    # ------------------------------------------------------------------ assembly
    def _turn(self, user: str, steps: list[Step], reply: str, failing: Failure | None = None,
              failing_deps: list[int] | None = None) -> dict[str, Any]:
        """A turn whose gold keeps realisation step indices (renumbered in ``_record``); a failing call
        sorts just before the step it stands in for."""
        gold = [{"_index": st.index, "calls": list(st.calls), "depends_on": list(st.depends_on)} for st in steps]
        if failing is not None:
            gold.append({"_index": failing.step - 0.5, "calls": [failing.call], "depends_on": list(failing_deps or [])})
        return {"user": user, "gold": gold, "reply": reply}

    def _record(self, plan: SlotPlan, real: Realisation, rend: Renderer, turns: list[dict[str, Any]],
                meta: dict[str, Any]) -> dict[str, Any]:
        order: dict[float, int] = {}
        for t in turns:
            for g in t["gold"]:
                order.setdefault(g["_index"], len(order))
        out_turns = []
        outcomes = []
        n_calls = 0
        for t in turns:
            gold = []
            for g in t["gold"]:
                deps = sorted({order[d] for d in g["depends_on"] if d in order and order[d] < order[g["_index"]]})
                gold.append({"step": order[g["_index"]], "calls": [c.gold() for c in g["calls"]], "depends_on": deps})
                outcomes.append(Step(0, g["calls"]).outcome)
                n_calls += len(g["calls"])
            out_turns.append({"user": t["user"], "gold": gold, "reply": t["reply"]})
        if plan.kind == "irrelevance":
            servers = list(plan.visible_domains)
        else:
            servers = list(dict.fromkeys(c.tool.domain for st in real.steps for c in st.calls)) or real.domains
        tools = visible_tools(self.catalog, servers, meta.get("hidden", []))
        meta["outcomes"] = outcomes
        meta["teacher"] = "programmatic"
        meta["source_domains"] = real.domains
        meta["dedup_items"] = dedup_items(out_turns, meta)
        said = " ".join(t["user"] for t in out_turns)
        mentions = {(m["domain"], m["type"], m["label"], str(m["id"])): m for m in rend.mentions if m["label"] in said}
        meta["mentions"] = list(mentions.values())
        return {
            "id": "", "kind": plan.kind, "servers": servers, "seed": plan.seed, "tools": tools,
            "system": rend.system(servers),
            "turns": out_turns,
            "complexity": {"n_calls": n_calls, "n_steps": len(order), "n_turns": len(out_turns),
                           "n_servers": len(servers)},
            "meta": meta,
        }


def seg_call(seg: list[Step], key: KeyT) -> Call:
    step = next(st for st in seg if st.index == key[0])
    return step.calls[key[1]]


def canonical(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def dedup_items(turns: list[dict[str, Any]], meta: dict[str, Any]) -> list[str]:
    """The set compared by Jaccard: gold calls with their arguments (requested ones for refusals)."""
    items = [f"{c['name']}|{canonical(c['arguments'])}" for t in turns for g in t["gold"] for c in g["calls"]]
    if not items:
        items = [f"refuse|{canonical(r)}" for r in meta.get("requested", [])]
    return sorted(set(items))
