"""Progress and budgets of a byo synthesis: a user can tell probing from a hang, and a slow server
ends with what was made instead of running on.

Each phase — probing, state sampling, realising, replay — shows a bar with counts (tool calls, or
slots and examples) on stderr and ends with one line: what it did and how long it took. The
:class:`Budget` bounds the sessions started (``data.synth.byo_max_sessions``) and the wall time
(``data.synth.byo_max_seconds``); once one is spent, probing and sampling stop where they are
(keeping what they learned), no new slot is realised, and the line says which knob to raise.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from data.byo.protocol import CallOutcome, EpisodeSession


@dataclass
class Budget:
    max_sessions: int
    max_seconds: float
    sessions: Callable[[], int] = lambda: 0  # sessions started so far (the backends' counters)
    start: float = field(default_factory=time.perf_counter)
    hit: str = ""  # why it was spent (the first time), naming the knob

    def spent(self) -> str:
        if not self.hit:
            if self.sessions() >= self.max_sessions:
                self.hit = (f"session budget spent: {self.sessions()} sessions started "
                            f"(data.synth.byo_max_sessions={self.max_sessions})")
            elif time.perf_counter() - self.start >= self.max_seconds:
                self.hit = (f"time budget spent: {time.perf_counter() - self.start:.0f}s "
                            f"(data.synth.byo_max_seconds={self.max_seconds:g})")
        return self.hit


class Phase:
    """One bar (``total`` None: a count) and its closing line."""

    def __init__(self, desc: str, total: int | None = None, unit: str = "call", enabled: bool = True) -> None:
        from tqdm import tqdm

        self.desc = desc
        self.enabled = enabled
        self.count = 0
        self.t0 = time.perf_counter()
        self.bar: Any = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=not enabled,
                             dynamic_ncols=True, leave=False)

    def tick(self, n: int = 1) -> None:
        self.count += n
        self.bar.update(n)

    def close(self, said: str) -> float:
        self.bar.close()
        took = time.perf_counter() - self.t0
        if self.enabled:
            print(f"{self.desc}: {said} in {took:.1f}s", file=sys.stderr, flush=True)
        return took


class Progress:
    """The phases of one synthesis, sharing a budget; the current phase gets the call ticks."""

    def __init__(self, budget: Budget, enabled: bool = True) -> None:
        self.budget = budget
        self.enabled = enabled
        self.current: Phase | None = None
        self.timings: dict[str, float] = {}

    def start(self, desc: str, total: int | None = None, unit: str = "call") -> Phase:
        self.current = Phase(desc, total, unit, self.enabled)
        return self.current

    def end(self, key: str, said: str) -> None:
        assert self.current is not None
        if self.budget.hit and self.budget.hit not in said:
            said += f"; stopped early: {self.budget.hit}"
        self.timings[key] = self.timings.get(key, 0.0) + self.current.close(said)
        self.current = None

    def tick(self, n: int = 1) -> None:
        if self.current is not None:
            self.current.tick(n)


class TickingSession(EpisodeSession):
    """An episode as probing's session: each call ticks the current phase, and once the budget is
    spent a call answers as a broken session does, so probing stops and keeps what it learned."""

    def __init__(self, episode: Any, progress: Progress | None) -> None:
        super().__init__(episode)
        self.progress = progress

    async def call(self, name: str, args: dict[str, Any]) -> CallOutcome:
        if self.progress is not None:
            if self.progress.budget.spent():
                return CallOutcome(self.progress.budget.hit, True, True)
            self.progress.tick()
        return await super().call(name, args)
