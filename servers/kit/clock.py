"""The per-session clock: time that moves, identically on every replay of the same calls.

Every session starts at :data:`~servers.kit.fake.REFERENCE_DATE`. Each successful call of a
user-visible tool first advances the session's clock by :data:`CALL_STEP`, then runs the domain's
``on_time`` hook (scheduled transfers execute, deliveries progress, meetings end), then the tool —
all in one transaction, so a refused call moves nothing, time included. The hidden helper
``<domain>_session_advance_clock`` moves it further (harnesses use it to let an order arrive).
Discovery and helper calls never move time: sampling the world must not change it.

Domains read the time with :func:`now` / :func:`today` and never keep their own clock.
"""

from __future__ import annotations

from contextvars import ContextVar
from datetime import date, datetime, timedelta
from typing import Any

from servers.kit.state import CLOCK_FIELD, SessionClock, State

CALL_STEP = timedelta(minutes=1)
ON_TIME: ContextVar[Any] = ContextVar("on_time", default=None)
"""The running domain's ``on_time`` hook, set by the kit around every call (see :func:`spend`)."""
MAX_ADVANCE = timedelta(days=366)


def now(s: State) -> datetime:
    """The session's current time (timezone-aware UTC)."""
    return datetime.fromisoformat(getattr(s, CLOCK_FIELD).get().now)


def today(s: State) -> date:
    return now(s).date()


def set_time(s: State, when: datetime) -> None:
    """Move the clock to ``when`` (inside a transaction; used by the kit, and by generators)."""
    getattr(s, CLOCK_FIELD).set(SessionClock(when.replace(microsecond=0).isoformat()))


def advance(s: State, step: timedelta, on_time: Any = None) -> tuple[datetime, datetime]:
    """Advance the clock by ``step`` and let the domain catch up; returns (before, after)."""
    before = now(s)
    after = before + step
    set_time(s, after)
    if on_time is not None:
        on_time(s, before, after)
    return before, after


def spend(s: State, step: timedelta) -> tuple[datetime, datetime]:
    """A tool that takes time (a drive, a wait) moves the clock on, and the domain's scheduled work
    happens on the way, exactly as if the time had passed between calls."""
    return advance(s, step, ON_TIME.get())
