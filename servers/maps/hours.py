"""Opening hours and local time, shared by maps and food delivery.

Hours are weekly templates in the place's local time: ``{"mon": ["11:00-22:00"], "tue": [], ...}``;
an interval whose end is not after its start runs past midnight (``"17:00-02:00"``) and
``"00:00-24:00"`` is all day. The session clock is UTC; every check converts it to the city's time
zone first, so "open now" in Tokyo and in Chicago differ at the same instant.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from functools import cache
from zoneinfo import ZoneInfo

from servers.kit.geo import CITY_BY_NAME
from servers.maps.data import WEEK

Hours = dict[str, list[str]]


@cache
def zone(city: str) -> ZoneInfo:
    return ZoneInfo(CITY_BY_NAME[city].timezone)


def local_time(at_utc: datetime, city: str) -> datetime:
    """The aware local time in ``city`` at the UTC instant ``at_utc``."""
    return at_utc.astimezone(zone(city))


def _minutes(text: str) -> int:
    hh, mm = text.split(":")
    return int(hh) * 60 + int(mm)


def _spans(hours: Hours, start_day: date, days: int) -> list[tuple[datetime, datetime]]:
    """Merged opening spans (naive local datetimes) over ``days`` days from ``start_day``."""
    raw: list[tuple[datetime, datetime]] = []
    for i in range(days):
        day = start_day + timedelta(days=i)
        midnight = datetime.combine(day, time())
        for interval in hours.get(WEEK[day.weekday()], []):
            a, b = (_minutes(x) for x in interval.split("-"))
            if b <= a:
                b += 24 * 60
            raw.append((midnight + timedelta(minutes=a), midnight + timedelta(minutes=b)))
    raw.sort()
    merged: list[tuple[datetime, datetime]] = []
    for a, b in raw:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def open_state(hours: Hours, local: datetime) -> dict:
    """``{"open_now", "open_24_hours", "closes_at", "opens_at"}`` at an aware local time."""
    naive = local.replace(tzinfo=None)
    start = naive.date() - timedelta(days=1)
    spans = _spans(hours, start, 9)
    horizon = datetime.combine(start + timedelta(days=9), time())
    tz = local.tzinfo
    for a, b in spans:
        if a <= naive < b:
            always = a <= datetime.combine(start, time()) and b >= horizon
            return {"open_now": True, "open_24_hours": always,
                    "closes_at": None if always else b.replace(tzinfo=tz).isoformat(), "opens_at": None}
        if a > naive:
            return {"open_now": False, "open_24_hours": False, "closes_at": None,
                    "opens_at": a.replace(tzinfo=tz).isoformat()}
    return {"open_now": False, "open_24_hours": False, "closes_at": None, "opens_at": None}


def is_open(hours: Hours, local: datetime) -> bool:
    return bool(open_state(hours, local)["open_now"])


def weekly_display(hours: Hours) -> dict[str, str]:
    """``{"mon": "11:00-22:00", "tue": "closed", ...}``."""
    return {d: (", ".join(hours.get(d, [])) or "closed").replace("00:00-24:00", "open 24 hours") for d in WEEK}
