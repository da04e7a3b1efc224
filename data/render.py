"""Natural language for user and assistant turns, from realised calls (the response states).

What a user turn must say is decided by argument sources (``data.model.Source``): values the user
supplies are stated (entities by name *and* id, secrets as "my PIN is ..."), values the agent must
read off earlier results are referred to by what singles them out ("the savings account", "the
first one"), never by an id the user could not know. Wording comes from the phrase bank when a tool
has an entry, else from the tool's own description; personas vary openers, frames and closers, and
every choice draws from the conversation's RNG, so the same chain reads differently each time.
"""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta
from typing import Any

from data.catalog import ToolInfo, words
from data.model import Call, Failure, Source, Step, summarise_output
from data.phrases import BANK, CONNECT_MANY, CONNECT_TWO, PERSONAS
from data.values import FREE_TEXT

SLOT = re.compile(r"\{(\w+)\}")
SPECIAL = {"pin": "PIN", "id": "ID", "ids": "IDs", "url": "URL", "cvv": "CVV", "kmh": "km/h", "ev": "EV"}
KeyT = tuple[int, int, str]  # (step index, call index, parameter)


def noun(t: str) -> str:
    """``account_id`` -> "account", ``file_path`` -> "file", ``mailbox`` -> "mailbox"."""
    w = words(t)
    core = [x for x in w if x not in ("id", "code", "name")] or w
    if len(core) > 1 and core[-1] == "path":
        core = core[:-1]
    return " ".join(core)


def param_phrase(p: str) -> str:
    w = [SPECIAL.get(x, x) for x in words(p)]
    if len(w) > 1 and w[-1] == "ID":
        w = w[:-1]
    return " ".join(w)


VERBS = frozenset({"add", "answer", "append", "apply", "approve", "archive", "assign", "book", "cancel",
    "change", "check", "clear", "close", "compare", "compute", "control", "copy", "count", "create",
    "delete", "disable", "dispute", "download", "drive", "enable", "estimate", "extract", "find", "follow",
    "forward", "freeze", "get", "invite", "list", "lock", "look", "make", "mark", "modify", "move", "mute",
    "open", "operate", "pay", "pin", "place", "post", "print", "put", "read", "reject", "release",
    "remove", "rename", "reopen", "replace", "reply", "resolve", "respond", "return", "review", "save",
    "schedule", "search", "send", "set", "share", "shift", "show", "sort", "star", "start", "stop",
    "switch", "touch", "track", "transfer", "unfreeze", "unlock", "update", "upload", "view", "write"})


def short(tool: ToolInfo) -> str:
    """The tool's summary trimmed to a request-sized clause (no parentheticals, no trailing notes)."""
    text = re.sub(r"\s*\([^)]*\)", "", tool.summary)
    text = re.split(r";| — |, with |, then |, or |: ", text)[0].strip().rstrip(".")
    first = words(text)[0] if words(text) else ""
    text = lower_first(text)
    if first not in VERBS:
        text = ("get me the " if tool.read_only else "handle this: ") + lower_first(text)
    return text


def lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


class Renderer:
    """Text for one conversation (persona, reference time and RNG fixed per conversation)."""

    def __init__(self, rng: random.Random, persona: dict[str, Any], ref: datetime, user_name: str) -> None:
        self.rng = rng
        self.persona = persona
        self.ref = ref
        self.user_name = user_name

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
        return (f"{header} Ask for any required detail the user has not given; never guess PINs, passwords "
                f"or other secrets.\nCurrent date: {when} ({self.ref.date().isoformat()}), {clock} UTC.\n"
                f"User: {self.user_name}, {self.persona['role']} (prefers a {style} tone).")

    # ------------------------------------------------------------------ values
    def value_text(self, tool: ToolInfo, p: str, value: Any, src: Source | None) -> str:
        t = tool.param_types.get(p)
        if src is not None and src.kind == "tool":
            return self.tool_ref(tool, p, src, value)
        if src is not None and src.row is not None and t is not None and not isinstance(value, list):
            label = src.row.label
            ident = str(value)
            if label and label != ident and "@" not in ident and not ident.startswith("/"):
                return self.rng.choice([f"{label} ({ident})", f"{ident} ({label})", ident])
            return ident
        return self.format_value(p, tool.params.get(p, {}), value)

    def tool_ref(self, tool: ToolInfo, p: str, src: Source, value: Any = None) -> str:
        """How the user points at a value the agent must read off an earlier result."""
        t = tool.param_types.get(p)
        if t is None and value is not None and p not in tool.free_text_params():
            return self.format_value(p, tool.params.get(p, {}), value)  # a plain value: just say it
        what = noun(t) if t else param_phrase(p)
        if src.label is not None:
            key, value = src.label
            if len(value.split()) <= 2 and key not in ("name", "title", "subject", "display_name", "nickname"):
                return self.rng.choice([f"the {value} {what}", f"the {what} that is {value}"])
            return self.rng.choice([f"the {what} '{value}'", f"'{value}'"])
        if src.list_len > 1 and src.ordinal is not None:
            nth = ["first", "second", "third", "fourth", "fifth"][min(src.ordinal, 4)]
            return f"the {nth} {what} in that list"
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
            if w & {"amount", "deposit", "price", "payment", "total"}:
                amount = f"{value:,.2f}" if isinstance(value, float) and value != int(value) else f"{int(value):,}"
                return self.rng.choice([f"${amount}", f"{amount} dollars", f"${amount}"])
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
            return self.rng.choice([text, text, day.strftime("%B %-d, %Y")])
        if "enum" in prop:
            return text.replace("_", " ")
        if w & (FREE_TEXT | {"subject", "title", "name", "query", "pattern"}) and "id" not in w:
            return f'"{text}"'
        return text

    # ------------------------------------------------------------------ requests
    def clause(self, step: Step, withheld: set[KeyT], vague: bool, notes: list[str] | None = None) -> str:
        """One step as an imperative clause, plus the values it needs that the template omits.
        Secrets go to ``notes`` ("My PIN is 1234."), said after the request rather than inside it."""
        call = step.calls[0]
        tool = call.tool
        bank = BANK.get(tool.name, {})
        if vague:
            return self.rng.choice(bank.get("vague") or [short(tool)])
        said = {p: self._mention(step, ci, p, withheld) for ci, c in enumerate(step.calls[:1]) for p in c.args}
        said = {p: v for p, v in said.items() if v is not None}
        asks = [a for a in bank.get("ask", []) if set(SLOT.findall(a)) <= set(said)]
        base = self.rng.choice(asks) if asks else short(tool)
        used = set(SLOT.findall(base))
        text = SLOT.sub(lambda m: said[m.group(1)], base)
        extras = []
        for p in call.args:
            if p not in said or p in used:
                continue
            if p in tool.sensitive and notes is not None:
                phrase = param_phrase(p)
                src = call.sources.get(p)
                whose = src.row.label if src is not None and src.row is not None and src.row.label else None
                notes.append(self.rng.choice([f"The {phrase} for {whose} is {said[p]}.", f"{whose}: {phrase} {said[p]}."])
                             if whose else self.rng.choice([f"My {phrase} is {said[p]}.", f"The {phrase} is {said[p]}."]))
            else:
                extras.append(self._detail(tool, p, said[p], call.sources.get(p)))
        if extras:
            joined = ", ".join(extras)
            text += self.rng.choice([f" ({joined})", f", with {joined}", f" — {joined}"])
        return re.sub(r"\b([A-Za-z]+) (?:the )?\1\b", r"\1", text)  # "coupon coupon X", "product the product X"

    def _mention(self, step: Step, ci: int, p: str, withheld: set[KeyT]) -> str | None:
        if (step.index, ci, p) in withheld:
            return None
        call = step.calls[ci]
        src = call.sources.get(p)
        if src is not None and src.kind == "tool" and src.label is None and (src.list_len <= 1 or src.ordinal is None):
            return None if call.tool.param_types.get(p) else self.tool_ref(call.tool, p, src)
        if len(step.calls) > 1 and any(c.args.get(p) != call.args.get(p) for c in step.calls[1:]):
            parts = [self.value_text(c.tool, p, c.args[p], c.sources.get(p)) for c in step.calls]
            return ", ".join(parts[:-1]) + " and " + parts[-1]
        return self.value_text(call.tool, p, call.args[p], src)

    def _detail(self, tool: ToolInfo, p: str, said: str, src: Source | None) -> str:
        phrase = param_phrase(p)
        if p in tool.sensitive:
            return self.rng.choice([f"my {phrase} is {said}", f"{phrase} {said}"])
        if src is not None and src.kind == "tool":
            return f"{phrase}: {said}"
        if said.startswith(phrase) or said.split(" ")[0] == phrase:
            return said
        return self.rng.choice([f"{phrase} {said}", f"{phrase}: {said}"])

    def request(self, steps: list[Step], withheld: set[KeyT] | None = None, *, vague: bool = False, opener: bool = True,
                context: list[str] | None = None) -> str:
        """A user turn asking for ``steps`` (support lookups may go unmentioned: the goal implies them)."""
        notes: list[str] = []
        clauses = [self.clause(s, withheld or set(), vague, notes) for s in steps]
        clauses = [c for i, c in enumerate(clauses) if c and (i == 0 or c != clauses[i - 1])]
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

    def context_note(self, step: Step) -> list[str]:
        """What an unmentioned lookup still needs from the user ("I'm customer CUS-0004")."""
        call = step.calls[0]
        notes = []
        for p, v in call.args.items():
            src = call.sources.get(p)
            if src is not None and src.kind == "user":
                said = self.value_text(call.tool, p, v, src)
                notes.append(self.rng.choice([f"The {param_phrase(p)} is {said}.", f"({param_phrase(p)}: {said})"]))
        return notes

    def supply(self, pairs: list[tuple[Call, str]]) -> str:
        """The user's answer with withheld values, grouped per action when there are several."""
        groups: dict[int, list[str]] = {}
        tools: dict[int, ToolInfo] = {}
        given: set[str] = set()
        for c, p in pairs:
            if repr(c.args[p]) in given:
                continue
            given.add(repr(c.args[p]))
            said = self._detail(c.tool, p, self.value_text(c.tool, p, c.args[p], c.sources.get(p)), c.sources.get(p))
            groups.setdefault(id(c), []).append(said)
            tools[id(c)] = c.tool
        if len(groups) == 1:
            body = ", ".join(next(iter(groups.values())))
        else:
            body = "; ".join(f"to {short(tools[k])}: {', '.join(v)}" for k, v in groups.items())
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
            desc = str(c.tool.params.get(p, {}).get("description", "")).split(",")[0].split(";")[0].rstrip(".")
            desc = lower_first(desc) if desc else param_phrase(p)
            if not desc.startswith(("the ", "a ", "an ")):
                desc = f"the {param_phrase(p)} ({desc})"
            if desc not in asks:
                asks.append(desc)
        listed = asks[0] if len(asks) == 1 else ", ".join(asks[:-1]) + " and " + asks[-1]
        return self.rng.choice([f"Happy to help. Could you tell me {listed}?",
                                f"Sure. Before I go ahead I need {listed}.",
                                f"I can do that — what is {listed}?"])

    def report(self, steps: list[Step]) -> str:
        lines = []
        for step in steps:
            for call in step.calls:
                if call.is_error:
                    lines.append(f"I tried to {short(call.tool)}, but it failed: {error_text(call)}.")
                    continue
                result = summarise_output(call.tool, call.output)
                what = re.sub(r"^(get me the|handle this:) ", "", short(call.tool))
                if call.tool.read_only:
                    lines.append(self.rng.choice([f"Here is what I found ({what}): {result}.",
                                                  f"Result of the lookup ({what}): {result}."]))
                else:
                    lines.append(self.rng.choice([f"Done — {what}: {result}.", f"That's done ({what}); {result}."]))
        if not lines:
            return "Okay."
        tail = self.rng.choice(["", " Anything else?", " Let me know if you need anything else."])
        return " ".join(lines) + tail

    def failure_reply(self, failure: Failure) -> str:
        why = error_text(failure.call)
        what = short(failure.call.tool)
        if failure.recovery == "retry":
            ask = f"could you double-check the {param_phrase(failure.param)}?" if failure.kind != "magnitude" \
                else f"would you like to try a different {param_phrase(failure.param)}?"
            return f"I tried to {what}, but it didn't go through: {why}. {ask[:1].upper()}{ask[1:]}"
        if failure.recovery == "alternative" and failure.alternative is not None:
            alt = short(failure.alternative.tool)
            return f"I couldn't {what}: {why}. I could {alt} instead — shall I?"
        return (f"I'm sorry, I couldn't {what}: {why}. I've left everything as it was; "
                f"you may want to sort that out first.")

    def correction(self, failure: Failure, original: Call) -> str:
        said = self.value_text(original.tool, failure.param, original.args[failure.param],
                               original.sources.get(failure.param))
        if failure.kind in ("credential", "wrong_entity"):
            return self.rng.choice([f"Oops, my mistake — the {param_phrase(failure.param)} is {said}.",
                                    f"Sorry, typo on my side. It should be {said}.", f"Sorry, wrong one. Try {said}."])
        return self.rng.choice([f"Ah, okay. Let's make it {said} then.", f"Fine, use {said} instead."])

    def accept_alternative(self, alt: Call) -> str:
        extra = [self._detail(alt.tool, p, self.value_text(alt.tool, p, v, alt.sources.get(p)), alt.sources.get(p))
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
