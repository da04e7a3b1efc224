"""JSON views shared by the trading tools (dollars as floats rounded to cents, times as ISO text)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from servers.kit import iso
from servers.trading.market import available_levels, bucket_at, day_stats, market_status
from servers.trading.state import (
    Account,
    Instrument,
    Order,
    TradingState,
    buying_power_cents,
    dollars,
    reserved_cents,
)


def depth(s: TradingState, inst: Instrument, at: datetime, levels: int) -> dict[str, list[dict[str, Any]]]:
    """Aggregated price levels: the exchange's liquidity plus our customers' resting limit orders."""
    k = bucket_at(at)
    out: dict[str, list[dict[str, Any]]] = {}
    for side, order_side in (("bids", "buy"), ("asks", "sell")):
        agg: dict[int, list[int]] = {}
        for price, qty in available_levels(s, inst, k, "bid" if side == "bids" else "ask"):
            agg.setdefault(price, [0, 0])[0] += qty
        for o in s.orders.values():
            if o.live and o.symbol == inst.symbol and o.side == order_side and o.order_type == "limit":
                agg.setdefault(o.limit_cents or 0, [0, 0])[1] += o.remaining
        prices = sorted(agg, reverse=side == "bids")[:levels]
        out[side] = [{"price": dollars(p), "quantity": sum(agg[p]), "customer_order_quantity": agg[p][1]}
                     for p in prices]
    return out


def quote_view(s: TradingState, inst: Instrument, at: datetime) -> dict[str, Any]:
    stats = day_stats(s, inst, bucket_at(at))
    top = depth(s, inst, at, 1)
    bid, ask = (top["bids"] or [{}])[0], (top["asks"] or [{}])[0]
    last, prev = int(stats["last"]), int(stats["prev_close"])  # type: ignore[call-overload]
    return {
        "symbol": inst.symbol, "name": inst.name, "last": dollars(last),
        "bid": bid.get("price"), "bid_size": bid.get("quantity"), "ask": ask.get("price"), "ask_size": ask.get("quantity"),
        "change": dollars(last - prev), "change_percent": round((last - prev) * 100 / prev, 2),
        "open": dollars(stats["open"]), "high": dollars(stats["high"]),  # type: ignore[arg-type]
        "low": dollars(stats["low"]), "prev_close": dollars(prev), "volume": stats["volume"],  # type: ignore[arg-type]
        "tick_size": dollars(inst.tick_cents), "halted": inst.halted, "halt_reason": inst.halt_reason,
        "halt_until": inst.halt_until, "market": market_status(at), "as_of": iso(at),
    }


def order_view(s: TradingState, o: Order) -> dict[str, Any]:
    return {
        "order_id": o.order_id, "account_id": o.account_id, "symbol": o.symbol, "side": o.side,
        "order_type": o.order_type, "quantity": o.quantity, "limit_price": dollars(o.limit_cents),
        "stop_price": dollars(o.stop_cents), "time_in_force": o.time_in_force, "status": o.status,
        "filled_quantity": o.filled_quantity, "remaining_quantity": o.remaining if o.live else 0,
        "average_fill_price": round(o.filled_value_cents / o.filled_quantity / 100, 4) if o.filled_quantity else None,
        "placed_at": o.placed_at, "updated_at": o.updated_at, "triggered_at": o.triggered_at,
        "closed_at": o.closed_at, "close_reason": o.close_reason,
        "fills": [{"execution_id": e.execution_id, "quantity": e.quantity, "price": dollars(e.price_cents),
                   "executed_at": e.executed_at} for e in (s.executions[x] for x in o.execution_ids)],
    }


def account_view(s: TradingState, acct: Account) -> dict[str, Any]:
    return {
        "account_id": acct.account_id, "nickname": acct.nickname, "owner_name": acct.owner_name,
        "account_type": acct.account_type, "cash": dollars(acct.cash_cents),
        "reserved_for_open_orders": dollars(reserved_cents(s, acct.account_id)),
        "buying_power": dollars(buying_power_cents(s, acct.account_id)), "linked_bank": acct.linked_bank,
        "ira_contribution_room": dollars(acct.ira_contribution_room_cents),
    }
