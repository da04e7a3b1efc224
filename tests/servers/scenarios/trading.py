"""Trading smoke scenario: an investor checks their portfolio before the open, queues a limit buy,
tops up cash, waits for the 09:30 New York open, sees the fill, trims the position at market, parks a
GTC bid and thinks better of it — succeeding once with every user-visible tool.

``call(name, args)`` performs a tool call on one session (over whatever transport the harness
chose), asserts it did not return an error, and returns the decoded JSON result.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


def on_tick(price: float, tick: float, up: bool) -> float:
    """``price`` moved onto the tick grid (rounding up or down), as dollars with 2 decimals."""
    steps = price / tick
    return round((math.ceil(steps) if up else math.floor(steps)) * tick, 2)


async def smoke(call: Call) -> None:
    accounts = await call("trading_list_accounts", {})
    acct = max((a for a in accounts if a["account_type"] != "ira"), key=lambda a: a["buying_power"])
    aid, pin = acct["account_id"], acct["trading_pin"]
    mine = await call("list_brokerage_accounts", {"owner_name": acct["owner_name"]})
    assert aid in {a["account_id"] for a in mine}
    await call("get_portfolio_summary", {"account_id": aid})

    # Pick a tradable tech stock with a one-cent tick and look at it before the open.
    found = await call("search_stock_symbols", {"sector": "Technology", "kind": "stock", "sort_by": "volume"})
    stock = next(r for r in found["results"] if not r["halted"] and r["tick_size"] == 0.01)
    sym = stock["symbol"]
    quote = await call("get_stock_quote", {"symbol": sym})
    assert quote["market"]["is_open"] is False
    await call("get_order_book_depth", {"symbol": sym, "levels": 5})
    await call("list_stock_watchlists", {"account_id": aid})
    await call("update_stock_watchlist", {"account_id": aid, "watchlist_name": "Smoke picks", "add_symbols": [sym]})

    # A marketable limit buy queued pre-market, enlarged, and a cash top-up.
    limit = on_tick(quote["ask"] * 1.05, 0.01, up=True)
    order = await call("place_stock_order", {"account_id": aid, "symbol": sym, "side": "buy", "quantity": 10,
                                             "order_type": "limit", "limit_price": limit, "trading_pin": pin})
    assert order["status"] == "open"
    await call("modify_stock_order", {"account_id": aid, "order_id": order["order_id"], "quantity": 12})
    await call("transfer_brokerage_cash", {"account_id": aid, "direction": "deposit", "amount": 1000,
                                           "trading_pin": pin})

    # Wait for the open: the queued order fills against the opening book.
    as_of = datetime.fromisoformat(quote["as_of"])
    opens = datetime.fromisoformat(quote["market"]["next_open"])
    await call("trading_session_advance_clock", {"minutes": int((opens - as_of).total_seconds() // 60) + 1})
    filled = await call("list_stock_orders", {"account_id": aid, "status": "filled", "symbol": sym})
    assert order["order_id"] in {o["order_id"] for o in filled}

    # Trim at market, then park a GTC bid well below the market and cancel it.
    sold = await call("place_stock_order", {"account_id": aid, "symbol": sym, "side": "sell", "quantity": 5,
                                            "trading_pin": pin})
    assert sold["status"] == "filled"
    bid = on_tick(quote["bid"] * 0.9, 0.01, up=False)
    gtc = await call("place_stock_order", {"account_id": aid, "symbol": sym, "side": "buy", "quantity": 3,
                                           "order_type": "limit", "limit_price": bid, "time_in_force": "gtc",
                                           "trading_pin": pin})
    await call("cancel_stock_order", {"account_id": aid, "order_id": gtc["order_id"]})
    history = await call("list_trade_executions", {"account_id": aid, "symbol": sym})
    assert history["count"] >= 2 and history["executions"][0]["side"] == "sell"
