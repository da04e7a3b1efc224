"""Market time and market data: trading hours, 15-minute buckets, the seeded price path and book levels.

The exchange trades 09:30-16:00 America/New_York on weekdays (exchange holidays are not modelled).
Session time is cut into *buckets*: bucket ``k = day * 27 + b`` where ``day`` counts trading days from
Monday 2026-06-01 (day 0) and ``b`` is 0..25 for the 15-minute slices of the session and 26 for "after
the close" (which is also what the market shows pre-market and over the weekend, until the next open).

Each instrument's mid price is a pure function of the bucket (a few seeded sinusoids plus hashed
jitter, bounded to about ±4 % around its anchor), so quotes are reproducible at any time without
stepping a simulation. The exchange book around the mid has ``DEPTH`` levels per side whose sizes are
hashed from (symbol seed, bucket, level). What our customers change — liquidity they took in the
current bucket, the last price they printed — lives in the ``books`` table and resets each bucket.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo

from servers.kit import iso
from servers.trading.state import Book, Instrument, Order, TradingState

NY = ZoneInfo("America/New_York")
OPEN_TIME, CLOSE_TIME = time(9, 30), time(16, 0)
BUCKET_MINUTES = 15
BUCKETS_PER_DAY = 27  # 26 session slices + the closed state
CLOSED = BUCKETS_PER_DAY - 1
DEPTH = 8
_DAY0 = date(2026, 6, 1)  # a Monday: trading day 0
_MASK = (1 << 64) - 1


# ---------------------------------------------------------------- clock → buckets
def day_index(d: date) -> int:
    """Trading days from day 0 to ``d``; a weekend day gets the index of the following Monday."""
    weeks, rem = divmod((d - _DAY0).days, 7)
    return weeks * 5 + min(rem, 5)


def day_date(index: int) -> date:
    weeks, rem = divmod(index, 5)
    return _DAY0 + timedelta(days=weeks * 7 + rem)


def local(t: datetime) -> datetime:
    return t.astimezone(NY)


def bucket_at(t: datetime) -> int:
    lt = local(t)
    d = lt.date()
    if d.weekday() >= 5:
        return (day_index(d) - 1) * BUCKETS_PER_DAY + CLOSED
    minutes = lt.hour * 60 + lt.minute - (OPEN_TIME.hour * 60 + OPEN_TIME.minute)
    if minutes < 0:
        return (day_index(d) - 1) * BUCKETS_PER_DAY + CLOSED
    return day_index(d) * BUCKETS_PER_DAY + min(minutes // BUCKET_MINUTES, CLOSED)


def is_open(t: datetime) -> bool:
    return bucket_at(t) % BUCKETS_PER_DAY != CLOSED


def session_open_at(index: int) -> datetime:
    return datetime.combine(day_date(index), OPEN_TIME, tzinfo=NY).astimezone(UTC)


def next_open(t: datetime) -> datetime:
    k = bucket_at(t)
    return session_open_at(k // BUCKETS_PER_DAY + 1)


def session_close(t: datetime) -> datetime:
    return datetime.combine(day_date(bucket_at(t) // BUCKETS_PER_DAY), CLOSE_TIME, tzinfo=NY).astimezone(UTC)


def market_status(t: datetime) -> dict[str, object]:
    if is_open(t):
        return {"is_open": True, "session": "regular", "closes_at": iso(session_close(t)),
                "new_york_time": local(t).strftime("%a %H:%M")}
    lt = local(t)
    phase = "pre_market" if lt.weekday() < 5 and lt.time() < OPEN_TIME else "closed"
    return {"is_open": False, "session": phase, "next_open": iso(next_open(t)),
            "new_york_time": lt.strftime("%a %H:%M")}


def market_events(before: datetime, after: datetime) -> Iterator[tuple[datetime, str]]:
    """Open, 15-minute and close boundaries in ``(before, after]``, in time order."""
    d, last = local(before).date(), local(after).date()
    while d <= last:
        if d.weekday() < 5:
            start = datetime.combine(d, OPEN_TIME, tzinfo=NY)
            for b in range(BUCKETS_PER_DAY):
                t = (start + timedelta(minutes=BUCKET_MINUTES * b)).astimezone(UTC)
                if before < t <= after:
                    yield t, "open" if b == 0 else "close" if b == CLOSED else "tick"
        d += timedelta(days=1)


# ---------------------------------------------------------------- seeded price path
def _mix(*parts: int) -> int:
    """splitmix64 over the parts: a fast, platform-independent hash (never Python's ``hash``)."""
    x = 0x9E3779B97F4A7C15
    for p in parts:
        x = (x ^ (p & _MASK)) * 0xBF58476D1CE4E5B9 & _MASK
        x = (x ^ (x >> 31)) * 0x94D049BB133111EB & _MASK
        x ^= x >> 29
    return x


def _unit(*parts: int) -> float:
    return (_mix(*parts) >> 11) / float(1 << 53)


@lru_cache(maxsize=4096)
def _phases(seed: int) -> tuple[float, float, float]:
    return (_unit(seed, 0) * 2 * math.pi, _unit(seed, 1) * 2 * math.pi, _unit(seed, 2) * 2 * math.pi)


def mid_cents(inst: Instrument, k: int) -> int:
    seed = inst.walk_seed
    x = k / BUCKETS_PER_DAY
    phases = _phases(seed)
    drift = (0.018 * math.sin(2 * math.pi * x / 5.3 + phases[0])
             + 0.012 * math.sin(2 * math.pi * x / 1.7 + phases[1])
             + 0.006 * math.sin(2 * math.pi * k / 7.0 + phases[2])
             + 0.004 * (_unit(seed, k, 99) - 0.5))
    raw = inst.base_cents * (1 + drift)
    return max(inst.tick_cents, round(raw / inst.tick_cents) * inst.tick_cents)


def market_levels(inst: Instrument, k: int, side: str) -> list[tuple[int, int]]:
    """The exchange's own ``DEPTH`` levels (price cents, shares) on ``side`` ('bid' or 'ask')."""
    tick = inst.tick_cents
    best_bid = mid_cents(inst, k) - (inst.spread_ticks // 2) * tick
    out = []
    for i in range(DEPTH):
        if side == "bid":
            price = best_bid - i * inst.level_ticks * tick
        else:
            price = best_bid + inst.spread_ticks * tick + i * inst.level_ticks * tick
        size = inst.depth_qty * (1 + 0.5 * i) * (0.6 + 0.8 * _unit(inst.walk_seed, k, i, 1 if side == "bid" else 2))
        if price > 0:
            out.append((price, max(10, round(size / 10) * 10)))
    return out


def book_of(s: TradingState, symbol: str) -> Book:
    return s.books.get(symbol) or Book(symbol=symbol)


def available_levels(s: TradingState, inst: Instrument, k: int, side: str) -> list[tuple[int, int]]:
    """Exchange levels less what our customers already took from them in this bucket."""
    book = book_of(s, inst.symbol)
    taken = book.taken if book.bucket == k else {}
    prefix = "b" if side == "bid" else "a"
    out = []
    for price, qty in market_levels(inst, k, side):
        left = qty - taken.get(f"{prefix}:{price}", 0)
        if left > 0:
            out.append((price, left))
    return out


def best_market_price(s: TradingState, inst: Instrument, k: int, side: str) -> int | None:
    """The exchange's best price on ``side`` now, without building the whole book when nothing was taken."""
    book = book_of(s, inst.symbol)
    if book.bucket == k and book.taken:
        levels = available_levels(s, inst, k, side)
        return levels[0][0] if levels else None
    best_bid = mid_cents(inst, k) - (inst.spread_ticks // 2) * inst.tick_cents
    return best_bid if side == "bid" else best_bid + inst.spread_ticks * inst.tick_cents


def resting_limits(s: TradingState, symbol: str, side: str, exclude_account: str | None = None,
                   candidates: list[str] | None = None) -> list[Order]:
    """Customers' live limit orders on one side ('buy' or 'sell'), best price first, then time.
    ``candidates`` (order ids known to include every live order) saves scanning the whole table."""
    pool = s.orders.values() if candidates is None else (s.orders[i] for i in candidates)
    rows = [o for o in pool if o.live and o.symbol == symbol and o.side == side
            and o.order_type == "limit" and o.account_id != exclude_account]
    sign = -1 if side == "buy" else 1
    return sorted(rows, key=lambda o: (sign * (o.limit_cents or 0), o.placed_at, o.order_id))


def last_cents(s: TradingState, inst: Instrument, k: int) -> int:
    book = book_of(s, inst.symbol)
    if book.bucket == k and book.last_trade_cents is not None:
        return book.last_trade_cents
    return mid_cents(inst, k)


def day_stats(s: TradingState, inst: Instrument, k: int) -> dict[str, object]:
    """Open / high / low / previous close / volume of the current (or last) session."""
    day, b = divmod(k, BUCKETS_PER_DAY)
    prev_close = mid_cents(inst, day * BUCKETS_PER_DAY - 1)
    mids = [mid_cents(inst, day * BUCKETS_PER_DAY + j) for j in range(b + 1)]
    book = book_of(s, inst.symbol)
    last = last_cents(s, inst, k)
    customer = book.customer_volume if book.day == day else 0
    share = (b + 1) / (BUCKETS_PER_DAY - 1) if b != CLOSED else 1.0
    volume = int(inst.avg_volume * share * (0.7 + 0.6 * _unit(inst.walk_seed, day, 7))) + customer
    return {"open": mids[0], "high": max([*mids, last]), "low": min([*mids, last]), "prev_close": prev_close,
            "last": last, "volume": volume}
