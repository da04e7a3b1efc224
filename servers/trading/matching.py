"""The order engine: walking the book, fills, resting-order matching and the market's clock.

An incoming (taker) order walks the liquidity on the other side — the exchange's levels and other
customers' resting limit orders — best price first (the exchange level before a customer order at the
same price), never past its limit price, never against the same account's orders. Market orders and
triggered stops that exhaust the displayed depth have their remainder cancelled; limit orders rest.

``on_time`` (the domain's clock hook) replays every market boundary that the session clock crossed:
halts whose time is up resume, each new 15-minute bucket (and the open) matches resting limit orders
that the moved book now crosses and triggers stop orders whose stop the last price reached, and the
16:00 close expires every open *day* order. Orders are processed in time priority, tables in key order.
"""

from __future__ import annotations

from datetime import datetime

from servers.kit import ToolError, iso, new_id, now
from servers.trading.market import (
    BUCKETS_PER_DAY,
    CLOSED,
    available_levels,
    best_market_price,
    bucket_at,
    last_cents,
    market_events,
    resting_limits,
)
from servers.trading.state import (
    Book,
    Execution,
    Instrument,
    Order,
    Position,
    TradingState,
    buying_power_cents,
    position_key,
)

Source = tuple[int, int, int, str | None]  # (price cents, priority, shares, maker order id or None)


def liquidity(s: TradingState, inst: Instrument, k: int, taker_side: str, account_id: str,
              candidates: list[str] | None = None) -> list[Source]:
    """What a ``taker_side`` order of ``account_id`` could trade against now, best first."""
    book_side, maker_side = ("ask", "sell") if taker_side == "buy" else ("bid", "buy")
    rows: list[Source] = [(p, 0, q, None) for p, q in available_levels(s, inst, k, book_side)]
    rows += [(o.limit_cents or 0, 1, o.remaining, o.order_id)
             for o in resting_limits(s, inst.symbol, maker_side, exclude_account=account_id, candidates=candidates)]
    sign = 1 if taker_side == "buy" else -1
    return sorted(rows, key=lambda r: (sign * r[0], r[1], r[3] or ""))


def crosses(order: Order, price: int) -> bool:
    if order.order_type != "limit" or order.limit_cents is None:
        return True
    return price <= order.limit_cents if order.side == "buy" else price >= order.limit_cents


def estimate_cost(s: TradingState, inst: Instrument, account_id: str, quantity: int) -> tuple[int, int]:
    """(cents, shares) a market buy of ``quantity`` would pay right now walking the book."""
    cost = shares = 0
    for price, _, qty, _ in liquidity(s, inst, bucket_at(now(s)), "buy", account_id):
        take = min(qty, quantity - shares)
        cost, shares = cost + take * price, shares + take
        if shares == quantity:
            break
    return cost, shares


def _book(s: TradingState, symbol: str, k: int) -> Book:
    if symbol not in s.books:
        s.books.put(symbol, Book(symbol=symbol))
    book = s.books.edit(symbol)
    if book.bucket != k:
        book.bucket, book.taken, book.last_trade_cents = k, {}, None
    day = k // BUCKETS_PER_DAY
    if book.day != day:
        book.day, book.customer_volume = day, 0
    return book


def _fill(s: TradingState, order_id: str, qty: int, price: int, at: datetime, liquidity_kind: str) -> None:
    o = s.orders.edit(order_id)
    acct = s.accounts.edit(o.account_id)
    key = position_key(o.account_id, o.symbol)
    realized = None
    if o.side == "buy":
        if key in s.positions:
            pos = s.positions.edit(key)
        else:
            pos = s.positions.put(key, Position(o.account_id, o.symbol, 0, 0, 0, iso(at.date())))
        pos.quantity += qty
        pos.cost_basis_cents += qty * price
        acct.cash_cents -= qty * price
    else:
        pos = s.positions.edit(key)
        removed = round(pos.cost_basis_cents * qty / pos.quantity)
        realized = qty * price - removed
        pos.quantity -= qty
        pos.cost_basis_cents -= removed
        pos.realized_pnl_cents += realized
        acct.cash_cents += qty * price
        acct.realized_pnl_cents += realized
        if pos.quantity == 0:
            s.positions.delete(key)
    exec_id = new_id(s.counters, "EXE")
    s.executions.put(exec_id, Execution(exec_id, o.order_id, o.account_id, o.symbol, o.side, qty, price, iso(at),
                                        liquidity_kind, realized))
    o.filled_quantity += qty
    o.filled_value_cents += qty * price
    o.execution_ids.append(exec_id)
    o.updated_at = iso(at)
    if o.remaining == 0:
        o.status, o.closed_at, o.close_reason = "filled", iso(at), "filled"
    else:
        o.status = "partially_filled"


def execute(s: TradingState, order_id: str, at: datetime, candidates: list[str] | None = None) -> None:
    """Let a live order take liquidity as far as its price (and, for stops, the cash) allows."""
    order = s.orders[order_id]
    inst = s.instruments[order.symbol]
    k = bucket_at(at)
    cap = None
    if order.side == "buy" and order.order_type == "stop":
        cap = buying_power_cents(s, order.account_id, exclude=order_id)
    for price, _, qty, maker in liquidity(s, inst, k, order.side, order.account_id, candidates):
        order = s.orders[order_id]
        if order.remaining == 0 or not crosses(order, price):
            break
        take = min(order.remaining, qty)
        if cap is not None:
            take = min(take, cap // price)
            cap -= take * price
        if take <= 0:
            break
        book = _book(s, inst.symbol, k)
        if maker is None:
            side_key = f"{'a' if order.side == 'buy' else 'b'}:{price}"
            book.taken[side_key] = book.taken.get(side_key, 0) + take
        book.last_trade_cents = price
        book.customer_volume += take
        _fill(s, order_id, take, price, at, "market" if maker is None else "customer")
        if maker is not None:
            _fill(s, maker, take, price, at, "customer")
    order = s.orders[order_id]
    if order.live and order.order_type != "limit":  # market orders and triggered stops never rest
        close(s, order_id, at, "cancelled",
              f"book depth exhausted: {order.filled_quantity} of {order.quantity} shares filled, the rest cancelled"
              if order.filled_quantity else "no liquidity available: nothing filled")


def close(s: TradingState, order_id: str, at: datetime, status: str, reason: str) -> Order:
    o = s.orders.edit(order_id)
    o.status, o.closed_at, o.updated_at, o.close_reason = status, iso(at), iso(at), reason
    return o


def _live_ids(s: TradingState) -> list[str]:
    """Live orders in time priority (placement time, then id)."""
    return [o.order_id for o in sorted((o for o in s.orders.values() if o.live),
                                       key=lambda o: (o.placed_at, o.order_id))]


def _crossed(s: TradingState, inst: Instrument, k: int, order: Order, candidates: list[str]) -> bool:
    """Whether a resting limit order can trade now (cheap: best prices only)."""
    market = best_market_price(s, inst, k, "ask" if order.side == "buy" else "bid")
    if market is not None and crosses(order, market):
        return True
    makers = resting_limits(s, inst.symbol, "sell" if order.side == "buy" else "buy", order.account_id, candidates)
    return bool(makers) and crosses(order, makers[0].limit_cents or 0)


def match_resting(s: TradingState, at: datetime, live_ids: list[str] | None = None) -> None:
    """Fill crossed resting limits and trigger reached stops, until nothing more happens.
    ``live_ids`` (every live order, in time priority) may be passed in by a caller that knows them."""
    k = bucket_at(at)
    if k % BUCKETS_PER_DAY == CLOSED:
        return
    ids = _live_ids(s) if live_ids is None else live_ids
    for _ in range(8):  # a fill moves the last price, which may trigger another stop
        progressed = False
        for order_id in ids:
            order = s.orders[order_id]
            inst = s.instruments[order.symbol]
            if not order.live or inst.halted:
                continue
            if order.order_type == "stop":
                last = last_cents(s, inst, k)
                stop = order.stop_cents or 0
                if (last <= stop) if order.side == "sell" else (last >= stop):
                    s.orders.edit(order_id).triggered_at = iso(at)
                    execute(s, order_id, at, ids)
                    progressed = True
            elif order.order_type == "limit" and _crossed(s, inst, k, order, ids):
                execute(s, order_id, at, ids)
                progressed = True
        if not progressed:
            return


def expire_day_orders(s: TradingState, at: datetime, live_ids: list[str]) -> None:
    stamp = iso(at)
    for order_id in live_ids:
        order = s.orders[order_id]
        if order.live and order.time_in_force == "day" and order.placed_at < stamp:
            close(s, order_id, at, "expired", "day order expired at the 16:00 New York close")


def resume_halts(s: TradingState, at: datetime, symbols: list[str]) -> list[str]:
    """Lift the timed halts among ``symbols`` that are due; returns the ones still pending."""
    stamp, pending = iso(at), []
    for symbol in symbols:
        inst = s.instruments[symbol]
        if inst.halted and inst.halt_until is not None and inst.halt_until <= stamp:
            edited = s.instruments.edit(symbol)
            edited.halted, edited.halt_reason, edited.halt_until = False, None, None
        elif inst.halted and inst.halt_until is not None:
            pending.append(symbol)
    return pending


def on_time(s: TradingState, before: datetime, after: datetime) -> None:
    """The market's clock: resume halts, match at every bucket boundary, expire day orders at the close.
    No order is created while the clock moves, so the live set is collected once and only shrinks."""
    live_ids: list[str] | None = None
    halts = [i.symbol for i in s.instruments.values() if i.halted and i.halt_until is not None]
    for at, kind in market_events(before, after):
        if halts:
            halts = resume_halts(s, at, halts)
        if live_ids is None:
            live_ids = _live_ids(s)
        live_ids = [i for i in live_ids if s.orders[i].live]
        if not live_ids:
            continue
        if kind == "close":
            expire_day_orders(s, at, live_ids)
        else:
            match_resting(s, at, live_ids)
    if halts:
        resume_halts(s, after, halts)


def not_live_error(order: Order, action: str) -> ToolError:
    if order.status == "filled":
        avg = order.filled_value_cents / order.filled_quantity / 100
        return ToolError(f"cannot {action} order {order.order_id}: it is already filled ({order.filled_quantity} "
                         f"{order.symbol} at an average ${avg:,.2f}); nothing is left open — to exit the position, "
                         "place a new sell order", field="order_id", code="illegal_transition")
    return ToolError(f"cannot {action} order {order.order_id}: it is already {order.status} "
                     f"({order.close_reason}); only open or partially filled orders can change", field="order_id",
                     code="illegal_transition")
