"""Natural language for user and assistant turns, from realised calls (the response states).

What a user turn says is decided by argument sources (``data.model.Source``) and the domain's profile
(``data.intents``): the signed-in user's own ids are never spelt out (the system prompt carries them);
entities the agent must look up are named the way people name them ("my savings account", "the card
ending in 4821", "the email 'Lunch on Tuesday?'"), and every such label is logged in ``mentions`` so
validation can check it singles out the gold id; spoken ids (order numbers, ticket keys, paths) are
said as they are. Wording comes from the domain's intent bank — a multi-tool goal when the steps are
one, else a phrasing per step — and falls back to a clause built from the tool's *name*; details a
phrasing leaves out are added in words ("for $45", "with 'Pay rent' as the note"), never as
``name: value``. Replies read the actual results (``data.speech.describe``). Personas vary openers,
frames and closers; every choice draws from the conversation's RNG.
"""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta
from typing import Any

from data import intents
from data.catalog import ToolInfo, words
from data.model import Call, Failure, Source, Step
from data.phrases import BANK, CONNECT_MANY, CONNECT_TWO, PERSONAS
from data.sampler import ID_VALUE
from data.speech import describe, done, intent, money, noun, phrase
from data.values import FREE_TEXT

SLOT = re.compile(r"\{(\w+)\}")
KeyT = tuple[int, int, str]  # (step index, call index, parameter)
NAME_KEYS = ("name", "title", "subject", "display_name", "nickname", "full_name", "topic", "hotel_name",
             "store_name", "username", "email")
MONEY_WORDS = {"amount", "deposit", "price", "payment", "total", "budget", "fee"}



QUESTION = re.compile(r"^(which|what|who|whom|whose|when|where|why|how|is|are|am|was|were|does|do|did|can|could|"
                      r"will|would|should|has|have|any)\b", re.I)


def is_question(text: str) -> bool:
    """A phrasing asked as a question ("which of my invoices are past due"): it cannot sit in an
    imperative frame ("could you {x}?") or a list of steps, so it stands alone."""
    return text.endswith("?") or bool(QUESTION.match(text))


def lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


class Renderer:
    """Text for one conversation (persona, reference time, signed-in user and RNG fixed per conversation)."""

    def __init__(self, rng: random.Random, persona: dict[str, Any], ref: datetime, user_name: str,
                 selves: dict[tuple[str, str], Any] | None = None) -> None:
        self.rng = rng
        self.persona = persona
        self.ref = ref
        self.user_name = user_name
        self.selves = selves or {}  # (domain, parameter) -> the signed-in user's value
        self.mentions: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ system
    def system(self, domains: list[str]) -> str:
        when = self.ref.strftime("%A, %B %-d, %Y")
        clock = self.ref.strftime("%H:%M")
        style = self.persona["style"]
        header = self.rng.choice([
            "You are a helpful assistant that acts for the user through the tools provided.",
            "You are an assistant with access to tools; use them to carry out the user's requests.",
            "You help the user by calling the available tools.",
        ])
        signed = [f"{phrase(p)} {v}" for (d, p), v in sorted(self.selves.items(), key=lambda kv: kv[0])
                  if d in domains]
        who = f"\nSigned in as: {'; '.join(signed)}." if signed else ""
        return (f"{header} Ask for any required detail the user has not given; never guess PINs, passwords "
                f"or other secrets.\nCurrent date: {when} ({self.ref.date().isoformat()}), {clock} UTC.\n"
                f"User: {self.user_name}, {self.persona['role']} (prefers a {style} tone).{who}")

    # ------------------------------------------------------------------ values
    def is_self(self, tool: ToolInfo, p: str, value: Any) -> bool:
        return self.selves.get((tool.domain, p), object()) == value

    def value_text(self, tool: ToolInfo, p: str, value: Any, src: Source | None) -> str:
        t = tool.param_types.get(p)
        if src is not None and src.kind == "tool":
            return self.tool_ref(tool, p, src, value)
        if src is not None and src.row is not None and t is not None and not isinstance(value, list):
            label = src.row.label
            ident = str(value)
            if label and label != ident and ID_VALUE.match(ident):  # names, codes, paths, emails: as they are
                return self.rng.choice([f"{label} ({ident})", f"{ident} ({label})", f"{label}, {ident},"]).rstrip(",")
            return ident
        return self.format_value(p, tool.params.get(p, {}), value)

    def tool_ref(self, tool: ToolInfo, p: str, src: Source, value: Any = None) -> str:
        """How the user points at a value the agent must read off an earlier result."""
        t = tool.param_types.get(p)
        if t is None and value is not None and p not in tool.free_text_params():
            return self.format_value(p, tool.params.get(p, {}), value)  # a plain value: just say it
        what = noun(t) if t else phrase(p)
        if src.label is not None and t is not None and not isinstance(value, list):
            key, label = src.label
            self.mentions.append({"domain": tool.domain, "type": t, "key": key, "label": label, "id": value,
                                  "scope": list(src.scope)})
            if key == "last4":
                return self.rng.choice([f"the {what} ending in {label}", f"my {what} ending {label}"])
            if key in NAME_KEYS or len(label.split()) > 2:
                return self.rng.choice([f"the {what} '{label}'", f"'{label}'", f"the '{label}' {what}"])
            return self.rng.choice([f"the {label} {what}", f"my {label} {what}"])
        if src.list_len > 1 and src.ordinal is not None:
            nth = ["first", "second", "third", "fourth", "fifth"][min(src.ordinal, 4)]
            return self.rng.choice([f"the {nth} {what} in that list", f"the {nth} one"])
        if t is None:
            return self.rng.choice(["what you found", "those results"])
        return self.rng.choice([f"that {what}", f"the {what}"])

    def format_value(self, p: str, prop: dict[str, Any], value: Any) -> str:
        w = set(words(p))
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, list):
            parts = [self.format_value(p[:-1] if p.endswith("s") else p, prop.get("items", {}), v) for v in value]
            return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
        if isinstance(value, int | float):
            if w & MONEY_WORDS or (w >= {"limit", "transfer"}):
                return self.rng.choice([money(value), f"{money(value)[1:]} dollars", money(value)])
            if "percent" in w:
                return f"{value}%"
            if "kmh" in w:
                return f"{value} km/h"
            if w & {"minutes", "duration"}:
                return f"{value} minutes"
            return str(value)
        text = str(value)
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            day = datetime.fromisoformat(text)
            if day.date() == (self.ref + timedelta(days=1)).date() and self.rng.random() < 0.5:
                return "tomorrow"
            return self.rng.choice([text, day.strftime("%B %-d, %Y"), day.strftime("%A %B %-d")])
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?", text):
            at = datetime.fromisoformat(text)
            return self.rng.choice([text, at.strftime("%B %-d at %H:%M"), at.strftime("%-I:%M %p on %A, %B %-d")])
        if "enum" in prop:
            return text.replace("_", " ")
        if w & (FREE_TEXT | {"subject", "title", "name", "query", "pattern"}) and "id" not in w:
            return f'"{text}"'
        return text

    # ------------------------------------------------------------------ details a phrasing leaves out
    def detail(self, tool: ToolInfo, p: str, said: str, src: Source | None) -> str:
        """One more value, in words: "for $45", "on June 3", "with 'Rent' as the note" — never ``name: value``."""
        prop = tool.params.get(p, {})
        w = set(words(p))
        ph = phrase(p)
        if src is not None and src.kind == "tool":
            return self.rng.choice([f"using {said}", f"for {said}"])
        if prop.get("type") == "boolean":
            on = said == "yes"
            return self.rng.choice([f"with {ph} switched on", f"and make sure {ph} is on"] if on else
                                   [f"with {ph} switched off", f"and leave {ph} off"])
        if w & MONEY_WORDS:
            return self.rng.choice([f"for {said}", f"{said} in total" if "total" in w else f"for {said}"])
        if w & {"limit", "results", "max"} and said.isdigit():
            return self.rng.choice([f"just the top {said}", f"no more than {said} of them", f"up to {said}"])
        if re.match(r"^(\d{4}-\d{2}-\d{2}|tomorrow|[A-Z][a-z]+ \d)", said) or "date" in w:
            lead = "until" if w & {"until", "end", "to", "max"} else ("from" if w & {"since", "from", "start", "min"} else "on")
            return f"{lead} {said}"
        if "enum" in prop:
            return self.rng.choice([f"make it {said}", f"{said} please", f"as {said}"])
        if w & FREE_TEXT:
            return self.rng.choice([f"saying {said}", f"with {said} as the {ph}", f"and put {said} in the {ph}"])
        if said.startswith(("/", '"')) or "@" in said:
            return self.rng.choice([f"with {said} as the {ph}", f"using {said} for the {ph}"])
        return self.rng.choice([f"with {said} as the {ph}", f"and set the {ph} to {said}", f"using {said} for the {ph}"])

    def _join(self, parts: list[str]) -> str:
        return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]

    # ------------------------------------------------------------------ requests
    def _said(self, steps: list[Step], withheld: set[KeyT]) -> tuple[dict[str, str], dict[tuple[int, str], str]]:
        """How each value the user states is said: per parameter (its first occurrence, for slots) and
        per (step, parameter)."""
        said: dict[str, str] = {}
        per: dict[tuple[int, str], str] = {}
        for st in steps:
            for p in st.calls[0].args:
                v = self._mention(st, 0, p, withheld)
                if v is not None:
                    per[(st.index, p)] = v
                    said.setdefault(p, v)
        return said, per

    def _extras(self, steps: list[Step], said: dict[str, str], per: dict[tuple[int, str], str], used: set[str],
                notes: list[str]) -> list[str]:
        """Values the phrasing did not place, as details; secrets go to ``notes`` ("My PIN is 1234.")."""
        extras: list[str] = []
        first: dict[str, Any] = {}
        for st in steps:
            for p in st.calls[0].args:
                if (st.index, p) in per:
                    first.setdefault(p, st.calls[0].args[p])
        seen: set[tuple[str, str]] = set()
        for st in steps:
            call = st.calls[0]
            for p, value in call.args.items():
                text = per.get((st.index, p))
                if text is None or (p in used and value == first.get(p)) or (p, repr(value)) in seen:
                    continue
                seen.add((p, repr(value)))
                if p in call.tool.sensitive:
                    src = call.sources.get(p)
                    whose = src.row.label if src is not None and src.row is not None and src.row.label else None
                    ph = phrase(p)
                    notes.append(self.rng.choice([f"The {ph} for {whose} is {text}.", f"{whose}'s {ph} is {text}."])
                                 if whose else self.rng.choice([f"My {ph} is {text}.", f"The {ph} is {text}."]))
                else:
                    extras.append(self.detail(call.tool, p, text, call.sources.get(p)))
        return extras

    def clause(self, steps: list[Step], withheld: set[KeyT], vague: bool, notes: list[str], alone: bool = True) -> str:
        """One request clause for ``steps``: a goal phrasing when they are one of the domain's goals,
        else the bank's phrasing of the single step (or the name-built fallback), plus details."""
        tool = steps[0].calls[0].tool
        if vague:
            bank = BANK.get(tool.name, {})
            return self.rng.choice(bank.get("vague") or [intent(tool)])
        said, per = self._said(steps, withheld)
        for st in steps:  # an entity the agent just found can fill a phrasing's slot as "that automation"
            for p, src in st.calls[0].sources.items():
                t = st.calls[0].tool.param_types.get(p)
                if p not in said and t and src.kind == "tool" and (st.index, 0, p) not in withheld:
                    said[p] = self.rng.choice([f"that {noun(t)}", f"the {noun(t)}"])
        if len(steps) > 1:
            names = [st.calls[0].tool.name for st in steps]
            options = [a for g in intents.load()[1].get(tool.domain, []) if g["tools"] == names for a in g["ask"]
                       if set(SLOT.findall(a)) <= set(said)]
        else:
            options = [a for a in BANK.get(tool.name, {}).get("ask", []) if set(SLOT.findall(a)) <= set(said)]
        if not alone:
            options = [a for a in options if not is_question(a)] or options
        base = self.rng.choice(options) if options else intent(tool)
        used = set(SLOT.findall(base))
        text = re.sub(r"([\"'])\{(\w+)\}\1", r"{\2}", base) if any(
            said[x].startswith('"') for x in used) else base  # 'called "{name}"' + a quoted value: quote once
        text = SLOT.sub(lambda m: said[m.group(1)], text)
        extras = self._extras(steps, said, per, used, notes)
        if extras:
            text += self.rng.choice([" ", ", ", " — "]) + self._join(extras)
        return re.sub(r"\b([A-Za-z]+) (?:the )?\1\b", r"\1", text)  # "coupon coupon X", "product the product X"

    def _mention(self, step: Step, ci: int, p: str, withheld: set[KeyT]) -> str | None:
        if (step.index, ci, p) in withheld:
            return None
        call = step.calls[ci]
        if self.is_self(call.tool, p, call.args[p]):
            return None
        src = call.sources.get(p)
        t = call.tool.param_types.get(p)
        if src is not None and src.kind == "tool" and t is None:  # copied along with its item, or carried text
            return self.tool_ref(call.tool, p, src) if p in call.tool.free_text_params() else None
        if src is not None and src.kind == "tool" and src.label is None and (src.list_len <= 1 or src.ordinal is None):
            return None
        if len(step.calls) > 1 and any(c.args.get(p) != call.args.get(p) for c in step.calls[1:]):
            parts = [self.value_text(c.tool, p, c.args[p], c.sources.get(p)) for c in step.calls]
            return self._join(parts)
        return self.value_text(call.tool, p, call.args[p], src)

    def _stated(self, step: Step) -> bool:
        """Does the step carry a value the user has to state (not the signed-in user, not a lookup result)?"""
        call = step.calls[0]
        return any(s.kind == "user" and not self.is_self(call.tool, p, call.args[p]) for p, s in call.sources.items())

    def _groups(self, steps: list[Step]) -> list[list[Step]]:
        """Steps worth a clause: support lookups the goal implies merge into the step they serve (their
        own details still get said); the rest go one clause each, or as one goal when they are one."""
        visible = [st for st in steps if not (st.support and not self._stated(st))]
        visible = visible or steps[:1]
        names = [st.calls[0].tool.name for st in visible]
        domain = visible[0].calls[0].tool.domain
        if len(visible) > 1 and any(g["tools"] == names for g in intents.load()[1].get(domain, [])):
            return [visible]
        return [[st] for st in visible]

    def request(self, steps: list[Step], withheld: set[KeyT] | None = None, *, vague: bool = False, opener: bool = True,
                context: list[str] | None = None) -> str:
        """A user turn asking for ``steps``."""
        notes: list[str] = []
        groups = self._groups(steps)
        clauses = [self.clause(g, withheld or set(), vague, notes, alone=len(groups) == 1) for g in groups]
        clauses = [c for i, c in enumerate(clauses) if c and (i == 0 or c != clauses[i - 1])]
        if len(clauses) == 1 and is_question(clauses[0]):  # a question stands on its own, no frame
            text = clauses[0][:1].upper() + clauses[0][1:]
            text = text if text.endswith("?") else text + "?"
            extra = [*(context or []), *dict.fromkeys(notes)]
            text = " ".join([text, *extra])
            if opener:
                text = f"{self.rng.choice(self.persona['open'])} {text}".strip()
            return text
        if len(clauses) == 1:
            body = clauses[0]
        elif len(clauses) == 2:
            body = self.rng.choice(CONNECT_TWO).format(a=clauses[0], b=clauses[1])
        else:
            body = self.rng.choice(CONNECT_MANY).format(a=", ".join(clauses[:-1]), b=clauses[-1])
        frame = self.rng.choice(self.persona["frame"])
        text = frame.replace("{X}", body[:1].upper() + body[1:]).replace("{x}", body)
        extra = [*(context or []), *dict.fromkeys(notes)]
        if extra:
            text += " " + " ".join(extra)
        if opener:
            text = f"{self.rng.choice(self.persona['open'])} {text}".strip()
        closer = self.rng.choice(self.persona["close"])
        return f"{text} {closer}".strip()

    def supply(self, pairs: list[tuple[Call, str]]) -> str:
        """The user's answer with withheld values, grouped per action when there are several."""
        groups: dict[int, list[str]] = {}
        tools: dict[int, ToolInfo] = {}
        given: set[str] = set()
        for c, p in pairs:
            if repr(c.args[p]) in given:
                continue
            given.add(repr(c.args[p]))
            said = self.value_text(c.tool, p, c.args[p], c.sources.get(p))
            if p in c.tool.sensitive:
                text = self.rng.choice([f"my {phrase(p)} is {said}", f"the {phrase(p)} is {said}"])
            elif c.tool.param_types.get(p) or said.startswith(('"', "/")):
                text = self.rng.choice([f"{said} for the {phrase(p)}", f"the {phrase(p)} is {said}"])
            else:
                text = self.detail(c.tool, p, said, c.sources.get(p))
            groups.setdefault(id(c), []).append(text)
            tools[id(c)] = c.tool
        if len(groups) == 1:
            body = self._join(next(iter(groups.values())))
        else:
            body = "; ".join(f"to {intent(tools[k])}, {self._join(v)}" for k, v in groups.items())
        return self.rng.choice([f"Sure — {body}.", f"Oh right: {body}.", f"{body[:1].upper()}{body[1:]}.",
                                f"Sorry about that. {body[:1].upper()}{body[1:]}."])

    # ------------------------------------------------------------------ assistant
    def ask_missing(self, pairs: list[tuple[Call, str]]) -> str:
        asks: list[str] = []
        required = [(c, p) for c, p in pairs if p in c.tool.required] or pairs
        seen_values: set[str] = set()
        for c, p in required:
            if repr(c.args[p]) in seen_values:  # one value feeding several calls is asked for once
                continue
            seen_values.add(repr(c.args[p]))
            t = c.tool.param_types.get(p)
            ask = f"which {noun(t)} you mean" if t and c.sources.get(p) and c.sources[p].row is not None \
                else f"the {phrase(p)}"
            if ask not in asks:
                asks.append(ask)
        listed = self._join(asks)
        return self.rng.choice([f"Happy to help. Could you tell me {listed}?",
                                f"Sure. Before I go ahead I need {listed}.",
                                f"I can do that — could you give me {listed}?"])

    def report(self, steps: list[Step]) -> str:
        lines = []
        for step in steps:
            for call in step.calls:
                if call.is_error:
                    lines.append(f"I tried to {intent(call.tool)}, but it failed: {error_text(call)}.")
                    continue
                result = describe(call.tool, call.output)
                if call.tool.read_only:
                    if step.support and len(steps) > 1:
                        continue
                    lines.append(self.rng.choice([f"Here's what I found: {result}.", f"I found {result}.",
                                                  f"{result[:1].upper()}{result[1:]}."]))
                else:
                    lines.append(self.rng.choice([f"Done — I {done(call.tool)}: {result}.",
                                                  f"I've {done(call.tool)} ({result})."]))
        if not lines:
            return "Okay."
        tail = self.rng.choice(["", " Anything else?", " Let me know if you need anything else."])
        return " ".join(lines) + tail

    def failure_reply(self, failure: Failure) -> str:
        why = error_text(failure.call)
        what = intent(failure.call.tool)
        if failure.recovery == "retry":
            ask = f"could you double-check the {phrase(failure.param)}?" if failure.kind != "magnitude" \
                else f"would you like to try a different {phrase(failure.param)}?"
            return f"I tried to {what}, but it didn't go through: {why}. {ask[:1].upper()}{ask[1:]}"
        if failure.recovery == "alternative" and failure.alternative is not None:
            alt = intent(failure.alternative.tool)
            return f"I couldn't {what}: {why}. I could {alt} instead — shall I?"
        return (f"I'm sorry, I couldn't {what}: {why}. I've left everything as it was; "
                f"you may want to sort that out first.")

    def correction(self, failure: Failure, original: Call) -> str:
        said = self.value_text(original.tool, failure.param, original.args[failure.param],
                               original.sources.get(failure.param))
        if failure.kind in ("credential", "wrong_entity"):
            return self.rng.choice([f"Oops, my mistake — the {phrase(failure.param)} is {said}.",
                                    f"Sorry, typo on my side. It should be {said}.", f"Sorry, wrong one. Try {said}."])
        return self.rng.choice([f"Ah, okay. Let's make it {said} then.", f"Fine, use {said} instead."])

    def accept_alternative(self, alt: Call) -> str:
        extra = [self.detail(alt.tool, p, self.value_text(alt.tool, p, v, alt.sources.get(p)), alt.sources.get(p))
                 for p, v in alt.args.items() if alt.sources.get(p) is not None and alt.sources[p].new]
        tail = f" ({', '.join(extra)})" if extra else ""
        return self.rng.choice([f"Yes, please do that{tail}.", f"Okay, go ahead{tail}.", f"Sure, let's do that{tail}."])

    def refusal(self, summaries: list[str], kind: str) -> str:
        what = " and ".join(lower_first(s) for s in summaries[:2]) or "do that"
        if kind == "irrelevance":
            return self.rng.choice([f"I'm sorry, but none of the tools I have can {what}, so I can't help with this request.",
                                    f"Unfortunately that's outside what I can do here — I have no tool to {what}."])
        return self.rng.choice([f"I'm sorry, I can't {what}: that action isn't available to me right now.",
                                f"I don't have a way to {what} at the moment, so I can't do this for you."])

    def thanks(self) -> str:
        return self.rng.choice(self.persona["thanks"])


def error_text(call: Call) -> str:
    text = call.text.split(": ", 1)[1] if ": " in call.text else call.text
    return re.sub(r"\s*\(argument '[^']+'\)", "", text).rstrip(".")


def pick_persona(rng: random.Random) -> dict[str, Any]:
    return PERSONAS[rng.randrange(len(PERSONAS))]
