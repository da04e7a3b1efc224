"""Pure time rules of the calendar: timezone-aware parsing and recurrence (RRULE subset) expansion.

Why a hand-written RRULE subset: the model writes rules as RFC 5545 text (what real calendar APIs
accept), so an invalid rule must fail with a message that names the offending part. Only the parts a
meeting scheduler needs are supported: FREQ (DAILY, WEEKLY, MONTHLY), INTERVAL, COUNT, UNTIL and BYDAY
(weekly rules only). Occurrences are generated on the event's wall clock in its own timezone, so a
09:30 New York standup stays at 09:30 local time across a daylight-saving change.
"""

from __future__ import annotations

import calendar as stdcal
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from itertools import count as counter
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from servers.kit import ToolError

WEEKDAY_CODES = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
FREQUENCIES = ("DAILY", "WEEKLY", "MONTHLY")
MAX_COUNT = 730
MAX_INTERVAL = 99
_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_UNTIL_BASIC = re.compile(r"^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})Z?)?$")
_SAFETY_CAP = 20_000  # candidates examined per expansion; far above any window the tools allow


def zone(name: str, field: str) -> ZoneInfo:
    """An IANA timezone (``Europe/Berlin``) or a ToolError naming the argument."""
    text = name.strip()
    if text.upper() in ("UTC", "Z", "GMT"):
        return ZoneInfo("UTC")
    try:
        if not text or text.startswith("/") or ".." in text:
            raise ValueError(text)
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        raise ToolError(
            f"unknown {field} '{name}': expected an IANA timezone such as 'America/New_York', "
            "'Europe/London' or 'UTC'", field=field) from None


@lru_cache(maxsize=64)
def cached_zone(name: str) -> ZoneInfo:
    """Zones of stored records (already validated when they were written)."""
    return ZoneInfo(name)


def parse_when(text: str, field: str, tz: ZoneInfo, *, end_of_day: bool = False) -> datetime:
    """A date or date-time given by the user, as an aware UTC datetime.

    A bare date means the start of that day in ``tz`` (or, with ``end_of_day``, the start of the next
    day, so "until 2026-06-05" includes all of June 5th). A date-time without an offset is read on the
    wall clock of ``tz``; one with an offset (or ``Z``) is taken as given.
    """
    raw = text.strip()
    if _DATE_ONLY.match(raw):
        try:
            day = date.fromisoformat(raw)
        except ValueError:
            raise ToolError(f"invalid {field} '{text}': not a calendar date", field=field) from None
        if end_of_day:
            day += timedelta(days=1)
        return datetime.combine(day, time(0), tz).astimezone(UTC)
    return parse_instant(raw, field, tz)


def parse_instant(text: str, field: str, tz: ZoneInfo) -> datetime:
    """A date-time (an event boundary: bare dates are rejected because events are timed)."""
    raw = text.strip()
    if _DATE_ONLY.match(raw):
        raise ToolError(f"{field} '{text}' has no time of day: events are timed, give e.g. "
                        f"'{raw}T14:00'", field=field)
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        raise ToolError(f"invalid {field} '{text}': expected a date-time as YYYY-MM-DDTHH:MM[:SS] with an "
                        "optional UTC offset", field=field) from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=tz)
    return value.astimezone(UTC).replace(microsecond=0)


def stamp(dt: datetime, tz: ZoneInfo | None = None) -> str:
    """ISO text of an instant, on the wall clock of ``tz`` (UTC when omitted)."""
    return dt.astimezone(tz or UTC).replace(microsecond=0).isoformat()


def instant(text: str) -> datetime:
    """Parse a stored ISO instant (always written with an offset by this package)."""
    return datetime.fromisoformat(text)


@dataclass(frozen=True)
class Rule:
    """A parsed recurrence rule; ``until`` is an inclusive UTC instant."""

    freq: str
    interval: int = 1
    count: int | None = None
    until: datetime | None = None
    byday: tuple[int, ...] = ()

    def text(self) -> str:
        """Canonical RRULE text (what is stored and shown)."""
        parts = [f"FREQ={self.freq}"]
        if self.interval != 1:
            parts.append(f"INTERVAL={self.interval}")
        if self.byday:
            parts.append("BYDAY=" + ",".join(WEEKDAY_CODES[d] for d in self.byday))
        if self.count is not None:
            parts.append(f"COUNT={self.count}")
        if self.until is not None:
            parts.append("UNTIL=" + self.until.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ"))
        return ";".join(parts)

    def describe(self) -> str:
        """Human wording, e.g. ``every 2 weeks on MO,WE, 10 times``."""
        unit = {"DAILY": "day", "WEEKLY": "week", "MONTHLY": "month"}[self.freq]
        out = f"every {unit}" if self.interval == 1 else f"every {self.interval} {unit}s"
        if self.byday:
            out += " on " + ",".join(WEEKDAY_CODES[d] for d in self.byday)
        if self.count is not None:
            out += f", {self.count} times"
        if self.until is not None:
            out += f", until {stamp(self.until)}"
        return out


def _bad(message: str, field: str) -> ToolError:
    return ToolError(f"invalid {field}: {message}", field=field, code="invalid_rule")


def _int_part(key: str, value: str, lo: int, hi: int, field: str) -> int:
    if not value.isdigit() or not lo <= int(value) <= hi:
        raise _bad(f"{key} must be an integer from {lo} to {hi}, got '{value}'", field)
    return int(value)


def _parse_until(value: str, tz: ZoneInfo, field: str) -> datetime:
    m = _UNTIL_BASIC.match(value)
    if m:
        y, mo, d, hh, mi, ss = m.groups()
        try:
            if hh is None:  # a date: the whole day counts, on the event's wall clock
                return datetime.combine(date(int(y), int(mo), int(d)), time(23, 59, 59), tz).astimezone(UTC)
            return datetime(int(y), int(mo), int(d), int(hh), int(mi), int(ss), tzinfo=UTC)
        except ValueError:
            raise _bad(f"UNTIL '{value}' is not a valid date", field) from None
    try:
        if _DATE_ONLY.match(value):
            return datetime.combine(date.fromisoformat(value), time(23, 59, 59), tz).astimezone(UTC)
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise _bad(f"UNTIL '{value}' must look like 20260630, 20260630T170000Z or 2026-06-30", field) from None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=tz)).astimezone(UTC)


def parse_rule(text: str, start: datetime, tz: ZoneInfo, field: str = "recurrence_rule") -> Rule:
    """Parse an RRULE such as ``FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE;COUNT=10`` for a series at ``start``."""
    body = text.strip()
    if body.upper().startswith("RRULE:"):
        body = body[6:]
    if not body:
        raise _bad("the rule is empty; e.g. FREQ=WEEKLY;COUNT=4", field)
    parts: dict[str, str] = {}
    for chunk in body.split(";"):
        if not chunk.strip():
            continue
        key, sep, value = chunk.partition("=")
        key, value = key.strip().upper(), value.strip().upper()
        if not sep or not value:
            raise _bad(f"part '{chunk}' is not KEY=VALUE", field)
        if key not in ("FREQ", "INTERVAL", "COUNT", "UNTIL", "BYDAY"):
            raise _bad(f"unsupported part '{key}'; supported: FREQ, INTERVAL, COUNT, UNTIL, BYDAY", field)
        if key in parts:
            raise _bad(f"{key} is given twice", field)
        parts[key] = value
    freq = parts.get("FREQ")
    if freq is None:
        raise _bad("FREQ is required (DAILY, WEEKLY or MONTHLY)", field)
    if freq not in FREQUENCIES:
        raise _bad(f"unsupported FREQ '{freq}'; use DAILY, WEEKLY or MONTHLY", field)
    interval = _int_part("INTERVAL", parts["INTERVAL"], 1, MAX_INTERVAL, field) if "INTERVAL" in parts else 1
    if "COUNT" in parts and "UNTIL" in parts:
        raise _bad("COUNT and UNTIL cannot both be given", field)
    count = _int_part("COUNT", parts["COUNT"], 1, MAX_COUNT, field) if "COUNT" in parts else None
    until = _parse_until(parts["UNTIL"], tz, field) if "UNTIL" in parts else None
    if until is not None and until < start:
        raise _bad(f"UNTIL {stamp(until)} is before the first occurrence {stamp(start)}", field)
    byday: tuple[int, ...] = ()
    if "BYDAY" in parts:
        if freq != "WEEKLY":
            raise _bad("BYDAY is only supported with FREQ=WEEKLY", field)
        codes = [c.strip() for c in parts["BYDAY"].split(",")]
        unknown = [c for c in codes if c not in WEEKDAY_CODES]
        if unknown:
            raise _bad(f"BYDAY has unknown day(s) {', '.join(unknown)}; use MO,TU,WE,TH,FR,SA,SU", field)
        if len(set(codes)) != len(codes):
            raise _bad("BYDAY repeats a day", field)
        byday = tuple(sorted(WEEKDAY_CODES.index(c) for c in codes))
    return Rule(freq, interval, count, until, byday)


@lru_cache(maxsize=4096)
def stored_rule(text: str, start: str, tz_name: str) -> Rule:
    """The rule of a stored series (validated when written; cached because listings expand often)."""
    return parse_rule(text, instant(start), cached_zone(tz_name))


def _candidates(first: datetime, rule: Rule) -> Iterator[datetime]:
    """Naive wall-clock candidate starts in increasing order (COUNT/UNTIL applied by the caller)."""
    if rule.freq == "DAILY":
        for k in counter():
            yield first + timedelta(days=k * rule.interval)
    elif rule.freq == "WEEKLY":
        days = rule.byday or (first.weekday(),)
        monday = first.date() - timedelta(days=first.weekday())
        for k in counter():
            for d in days:
                cand = datetime.combine(monday + timedelta(weeks=k * rule.interval, days=d), first.time())
                if cand >= first:
                    yield cand
    else:  # MONTHLY on the same day of month; months without that day are skipped (RFC 5545)
        for k in counter():
            index = first.month - 1 + k * rule.interval
            year, month = first.year + index // 12, index % 12 + 1
            if first.day <= stdcal.monthrange(year, month)[1]:
                yield first.replace(year=year, month=month)


def occurrences(start: datetime, end: datetime, tz: ZoneInfo, rule: Rule,
                horizon: datetime) -> Iterator[tuple[datetime, datetime]]:
    """(start, end) of every occurrence of a series whose start is at or before ``horizon`` (UTC)."""
    duration = end - start
    first = start.astimezone(tz).replace(tzinfo=None)
    for k, cand in enumerate(_candidates(first, rule)):  # k = instances already generated
        if k >= _SAFETY_CAP or (rule.count is not None and k >= rule.count):
            return
        occ = cand.replace(tzinfo=tz).astimezone(UTC)
        if (rule.until is not None and occ > rule.until) or occ > horizon:
            return
        yield occ, occ + duration
