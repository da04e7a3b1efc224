"""User and assistant text for a server with no intent bank: built from tool *names* and schemas only.

A user's server has no ``data/intents/<domain>.py``, and copying its tool descriptions would teach
the model to match requests to docs (the description-overlap figure counts exactly that). So:

* a tool's **clause** comes from its name's words, the server-wide prefix dropped (``git_``): a verb
  first (``read_text_file`` -> "read the text file") or, for a name that is a noun (``git_log``),
  "show me the log" when it only reads and the words as an imperative when it writes;
* every argument the user must give is **mentioned** in words — the first reference as the clause's
  object ("read the text file notes/todo.md"), the rest value-first or with a verb between
  ("'Fix typo' as the message", "the max count set to 5"), never ``name: value``;
* a value the agent must copy from an earlier result is named as people do: by its label ("the one
  called 'Atlas'") or its place in the list ("the first one it lists");
* personas, frames and connectors are the kit's (:mod:`data.phrases`); replies quote the real result.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from typing import Any

from data.byo.discovery import READ_VERBS, WRITE_VERBS, name_words
from data.byo.schema import PRODUCING_VERBS
from data.phrases import CONNECT_MANY, CONNECT_TWO, PERSONAS

NOUNISH = frozenset({"status", "info", "stat", "stats", "diff", "head", "tail", "tree", "log", "quote", "branch",
                     "graph", "export", "download"})
"""Read verbs of the discovery heuristic that read as nouns in a request ("show me the status")."""
VERBS = (READ_VERBS | WRITE_VERBS | PRODUCING_VERBS | {"open", "switch", "checkout", "commit", "show", "push",
                                                      "pull", "merge", "run", "rename"}) - NOUNISH
ORDINALS = ("first", "second", "third")
NEW_TEXT = (
    "prefers calls after lunch", "asked for the summary by Friday", "is travelling next week",
    "Fix the typo in the guide", "Tidy up the imports", "Add notes from the planning call",
    "Update the release checklist", "the budget was approved", "follow up with the vendor",
    "moved to the new office", "Draft of the onboarding steps", "remember to renew the licence",
    "Meeting moved to Thursday", "Clarify the install section", "needs a review before launch",
    "likes detailed status reports", "Rename the helper for clarity", "owns the quarterly report",
)
SLUG_WORDS = ("search", "cleanup", "release", "docs", "hotfix", "draft", "beta", "reports", "ideas", "archive",
              "summary", "plans", "review", "inbox", "backlog", "roadmap")
OUT_OF_SCOPE_MORE = (
    "What's the exchange rate between euros and yen today?", "Can you suggest a name for my new puppy?",
    "How tall is Mount Kilimanjaro?", "Play some relaxing jazz.", "What's the capital of Australia?",
    "Set an alarm for 7 tomorrow morning.", "Who painted the Mona Lisa?", "Tell me a joke about cats.",
    "How do I get red wine out of a carpet?", "What's the best way to learn the guitar?",
    "Find me a cheap flight to Rome in May.", "How long should I boil an egg?",
    "Summarise the plot of Hamlet.", "What's the population of Canada?", "Is it going to snow in Oslo?",
    "Recommend a podcast about history.", "Convert 30 degrees Celsius to Fahrenheit.",
    "Which planet is closest to the sun?", "Call my dentist and move my appointment.",
    "Order two pizzas for delivery.",
)


def server_prefix(tool_names: list[str]) -> str:
    """A first word most tools share (``git`` of ``git_status``...): not part of any clause."""
    firsts = [name_words(n)[0] for n in tool_names if len(name_words(n)) > 1]
    if not firsts:
        return ""
    top = max(set(firsts), key=firsts.count)
    return top if firsts.count(top) >= 0.8 * len(tool_names) and top not in VERBS else ""


def tool_words(name: str, prefix: str) -> list[str]:
    ws = name_words(name)
    return ws[1:] if prefix and len(ws) > 1 and ws[0] == prefix else ws


def clause(name: str, read_only: bool, prefix: str) -> str:
    """What the tool does, from its name alone."""
    ws = tool_words(name, prefix)
    if ws and ws[0] in VERBS:
        return ws[0] + (" the " + " ".join(ws[1:]) if len(ws) > 1 else "")
    return ("show me the " if read_only else "") + " ".join(ws)


def say(value: Any) -> str:
    """A value as typed in a message: paths and numbers bare, other text quoted."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int | float):
        return str(value)
    s = str(value)
    if "/" in s or re.fullmatch(r"[\w.-]+\.\w{1,5}", s):
        return s
    return f"'{s}'"


@dataclass(frozen=True)
class Mention:
    """One argument the user gives (or points at) in a request."""

    noun: str  # the slot in words ("entity type")
    kind: str
    value: Any
    pointer: str = ""  # how a value copied from an earlier result is named ("the first one it lists")


def mention_text(m: Mention, rng: random.Random, first: bool) -> str:
    if m.pointer:
        return m.pointer if first else f"{m.pointer} for the {m.noun}"
    v = say(m.value)
    if first and m.kind in ("reference", "path", "query"):
        return v
    if m.kind == "bool":
        return f"with the {m.noun} turned {v}"
    forms = [f"{v} as the {m.noun}", f"using {v} for the {m.noun}", f"with the {m.noun} set to {v}"]
    if m.kind == "text":
        forms.append(f"saying {v}")
    return rng.choice(forms)


def request_clause(base: str, mentions: list[Mention], rng: random.Random) -> str:
    """``base`` plus its mentions: the first reference right after the verb phrase, the rest joined."""
    if not mentions:
        return base
    head = mentions[0] if mentions[0].kind in ("reference", "path", "query") or mentions[0].pointer else None
    rest = [m for m in mentions if m is not head]
    text = base + (" " + mention_text(head, rng, True) if head is not None else "")
    parts = [mention_text(m, rng, False) for m in rest]
    if parts:
        text += (", " if head is not None else " ") + (", ".join(parts[:-1]) + " and " + parts[-1]
                                                        if len(parts) > 1 else parts[0])
    return text


def join_clauses(clauses: list[str], rng: random.Random) -> str:
    if len(clauses) == 1:
        return clauses[0]
    if len(clauses) == 2:
        return rng.choice(CONNECT_TWO).format(a=clauses[0], b=clauses[1])
    text = rng.choice(CONNECT_MANY).format(a=clauses[0], b=clauses[1])
    for c in clauses[2:-1]:
        text += f", {c}"
    return text + rng.choice([", then ", ", and finally ", "; after that, "]) + clauses[-1]


class Voice:
    """One conversation's persona: openers, frames, closers and thanks drawn from one RNG."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.persona = rng.choice(PERSONAS)

    @property
    def style(self) -> str:
        return str(self.persona["style"])

    def frame(self, x: str, opener: bool = True) -> str:
        p, rng = self.persona, self.rng
        body = rng.choice(p["frame"])  # type: ignore[arg-type]
        body = body.replace("{X}", x[:1].upper() + x[1:]).replace("{x}", x)
        parts = [rng.choice(p["open"]) if opener else "", body, rng.choice(p["close"])]  # type: ignore[arg-type]
        text = " ".join(s for s in parts if s)
        return text[:1].upper() + text[1:]

    def thanks(self) -> str:
        return str(self.rng.choice(self.persona["thanks"]))  # type: ignore[arg-type]

    def follow_up(self, x: str) -> str:
        lead = self.thanks()
        sep = "" if lead.endswith((".", "!", "?")) else "."
        return f"{lead}{sep} {self.frame(x, opener=False)}"


def digest(text: str, limit: int = 160) -> str:
    """The start of a real result, as a reply quotes it (JSON compacted, text lines joined)."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict | list):
        out = json.dumps(data, ensure_ascii=False, separators=(", ", ": "))
        return out if len(out) <= limit else out[: limit - 3].rstrip() + "..."
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip() and not ln.strip().startswith("```")]
    out = "; ".join(lines)
    return out if len(out) <= limit else out[: limit - 3].rstrip() + "..."


def report(results: list[tuple[str, bool, str]], rng: random.Random) -> str:
    """A reply after calls: (clause, read_only, result text) per call; quotes the last result."""
    if not results:
        return "Done."
    _, read_only, text = results[-1]
    body = digest(text)
    if read_only:
        lead = rng.choice(["Here's what I found", "Here is the result", "This is what came back"])
        return f"{lead}: {body}" if body else "I looked, but there was nothing to show."
    done = rng.choice(["Done", "All set", "That's done"])
    return f"{done} — the server replied: {body}" if body else f"{done}."


def refusal(what: str, kind: str, rng: random.Random) -> str:
    if kind == "irrelevance":
        return rng.choice([f"I'm sorry, but none of the tools I have can {what}, so I can't help with this request.",
                           f"Unfortunately that's outside what I can do here — I have no tool to {what}."])
    return rng.choice([f"I'm sorry, I can't {what}: that action isn't available to me right now.",
                       f"I don't have a way to {what} at the moment, so I can't do this for you."])


def system_prompt(server: str, root: str | None, rng: random.Random) -> str:
    header = rng.choice([
        "You are a helpful assistant that acts for the user through the tools provided.",
        "You are an assistant with access to tools; use them to carry out the user's requests.",
        "You help the user by calling the available tools.",
    ])
    where = f" The user's workspace is at {root}; paths are inside it." if root else ""
    return (f"{header} The tools belong to the user's {server} server.{where} Ask for any required detail the "
            "user has not given, and say so when no tool can do what is asked.")


def new_text(rng: random.Random) -> str:
    return rng.choice(NEW_TEXT)


def new_slug(rng: random.Random, existing: list[str]) -> str:
    """A made-up name shaped like existing ones: "Title Case Words", kebab-case, or a file name."""
    word = rng.choice(SLUG_WORDS)
    other = rng.choice([w for w in SLUG_WORDS if w != word])
    if any(" " in e and e[:1].isupper() for e in existing):
        return f"{word.title()} {other.title()}"
    return f"{word}-{other}"
