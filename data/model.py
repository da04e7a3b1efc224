"""The in-memory shape of a realised chain, shared by the realiser, the state machine and rendering.

A *step* is one gold step (parallel calls share it); every argument value remembers its *source*:
``user`` (the user states it — an entity from the sampling context or a value they make up),
``tool`` (read off an earlier step's output: the agent must copy it), or ``default``. Rendering uses
sources to decide what a user turn has to mention; validation uses them for provenance.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from data.catalog import ToolInfo
from data.sampler import Row

SUCCESS, PARTIAL, FAILURE = "SUCCESS", "PARTIAL", "FAILURE"


@dataclass
class Source:
    """Where one argument value comes from."""

    kind: str  # "user" | "tool"
    step: int | None = None
    row: Row | None = None
    label: tuple[str, str] | None = None  # (key, value) that singles the chosen item out of a list
    ordinal: int | None = None  # position in the list it was chosen from (when no label does)
    list_len: int = 1
    new: bool = False  # a value the user makes up (a new name, a new PIN), not an existing entity
    scope: tuple[str, ...] = ()  # the ids the lookup that listed this item was given (label resolution)


@dataclass
class Call:
    tool: ToolInfo
    args: dict[str, Any]
    sources: dict[str, Source]
    text: str = ""
    is_error: bool = False
    expect_error: bool = False

    @property
    def output(self) -> Any:
        if self.is_error:
            return None
        try:
            return json.loads(self.text)
        except ValueError:
            return None

    @property
    def outcome(self) -> str:
        if self.is_error:
            return FAILURE
        return PARTIAL if is_empty(self.output, self.tool.read_only) else SUCCESS

    def gold(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.tool.name, "arguments": self.args}
        if self.expect_error:
            out["expect_error"] = True
        return out


@dataclass
class Step:
    index: int
    calls: list[Call]
    depends_on: list[int] = field(default_factory=list)
    support: bool = False  # a lookup the goal implies (find the account named ...): not asked for in words

    @property
    def outcome(self) -> str:
        kinds = {c.outcome for c in self.calls}
        if kinds == {SUCCESS}:
            return SUCCESS
        return FAILURE if kinds == {FAILURE} else PARTIAL


@dataclass
class Failure:
    """A designed failure: the call at ``step`` first fails (``call``), then ``recovery`` happens."""

    step: int
    call: Call
    kind: str  # "credential" | "magnitude"
    recovery: str  # "retry" | "alternative" | "give_up"
    param: str
    alternative: Call | None = None


@dataclass
class Realisation:
    domains: list[str]
    seed: int
    steps: list[Step]
    rows: list[Row] = field(default_factory=list)  # context entities the user refers to
    failure: Failure | None = None

    @property
    def calls(self) -> list[Call]:
        return [c for s in self.steps for c in s.calls]


def is_empty(payload: Any, read_only: bool = True) -> bool:
    """A lookup that found nothing — a PARTIAL success, never an error. A write that succeeded is
    never empty, whatever it returns (its effect on the state is the result)."""
    if not read_only:
        return False
    if payload in (None, [], {}, ""):
        return True
    if isinstance(payload, dict):
        containers = [v for v in payload.values() if isinstance(v, list | dict)]
        if containers and all(not v for v in containers):
            counts = [v for k, v in payload.items() if k in ("total", "count", "matches") and isinstance(v, int)]
            return not counts or all(c == 0 for c in counts)
    return False
