"""Which tools only read: the MCP annotation when the server gives one, else a name heuristic.

Read-only matters twice: live-state sampling may call a read-only tool as often as it likes on the
live fixture, while a write tool is only called on a session that is reset afterwards; and a
dependency whose producer writes (``create_X`` -> ``delete_X``) must be re-created before each test.

Order of evidence, strongest first:

1. ``annotations.readOnlyHint`` (a server that sets it knows; ``destructiveHint: true`` implies a write);
2. the verb of the tool name (``get_``, ``list_``, ``search_`` ... read; anything else writes) — the
   first word, or the last for ``noun_verb`` names such as ``issues_list``;
3. the first word of the description ("Returns ...", "Lists ..."), for names without a known verb;
4. otherwise *write*: wrongly assuming a write only costs a reset, wrongly assuming a read would let
   sampling mutate the fixture it is reading.

The verb lists are a :class:`ReadOnlyRule` so a user can extend them for their own naming.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from data.byo.protocol import ToolListing

READ_VERBS = frozenset({
    "get", "list", "search", "find", "read", "view", "show", "describe", "fetch", "lookup", "query",
    "check", "count", "compare", "compute", "calculate", "estimate", "preview", "track", "browse",
    "retrieve", "inspect", "explain", "validate", "verify", "summarize", "summarise", "stat", "stats",
    "info", "diff", "head", "tail", "grep", "tree", "peek", "print", "export", "download",
    "quote", "status",
})
WRITE_VERBS = frozenset({
    "add", "create", "update", "delete", "remove", "set", "send", "post", "put", "patch", "write", "edit",
    "move", "copy", "rename", "cancel", "book", "schedule", "start", "stop", "close", "apply", "assign",
    "submit", "pay", "transfer", "upload", "insert", "append", "replace", "mark", "archive", "reply",
    "forward", "lock", "unlock", "enable", "disable", "reset", "clear", "make", "change", "modify",
})
DESCRIPTION_READ = frozenset({
    "get", "gets", "list", "lists", "return", "returns", "show", "shows", "find", "finds", "search",
    "searches", "look", "looks", "read", "reads", "fetch", "fetches", "retrieve", "retrieves", "count",
    "counts", "compare", "compares", "check", "checks", "view", "views", "describe", "describes",
    "estimate", "estimates", "compute", "computes", "calculate", "calculates", "convert", "converts",
})

Source = Literal["annotation", "name", "description", "default"]


def name_words(name: str) -> list[str]:
    """``getAccountBalance`` / ``get-account_balance`` -> ``["get", "account", "balance"]``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return [w for w in re.split(r"[_\W]+", spaced.lower()) if w]


@dataclass(frozen=True)
class ReadOnlyRule:
    read_verbs: frozenset[str] = READ_VERBS
    write_verbs: frozenset[str] = WRITE_VERBS
    description_read: frozenset[str] = DESCRIPTION_READ
    use_annotations: bool = True


@dataclass(frozen=True)
class ReadOnlyVerdict:
    read_only: bool
    source: Source
    verb: str = ""


@dataclass(frozen=True)
class Discovery:
    """Every listed tool with its read-only verdict."""

    tools: tuple[ToolListing, ...]
    verdicts: dict[str, ReadOnlyVerdict] = field(default_factory=dict)

    def read_only(self, name: str) -> bool:
        return self.verdicts[name].read_only

    @property
    def readers(self) -> list[ToolListing]:
        return [t for t in self.tools if self.read_only(t.name)]


def classify_read_only(tool: ToolListing, rule: ReadOnlyRule = ReadOnlyRule()) -> ReadOnlyVerdict:
    ann = tool.annotations
    if rule.use_annotations:
        if ann.read_only is not None:
            return ReadOnlyVerdict(ann.read_only, "annotation")
        if ann.destructive:
            return ReadOnlyVerdict(False, "annotation")
    ws = name_words(tool.name)
    for verb in (ws[:1] + ws[-1:]) if ws else []:
        if verb in rule.read_verbs:
            return ReadOnlyVerdict(True, "name", verb)
        if verb in rule.write_verbs:
            return ReadOnlyVerdict(False, "name", verb)
    first = name_words(tool.description.strip().split(" ", 1)[0]) if tool.description.strip() else []
    if first and first[0] in rule.description_read:
        return ReadOnlyVerdict(True, "description", first[0])
    return ReadOnlyVerdict(False, "default", ws[0] if ws else "")


def discover(tools: list[ToolListing], rule: ReadOnlyRule = ReadOnlyRule()) -> Discovery:
    return Discovery(tuple(tools), {t.name: classify_read_only(t, rule) for t in tools})
