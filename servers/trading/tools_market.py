"""Trading tools for market data: symbol search, quotes, order-book depth, and watchlists."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from servers.kit import Name, ToolError, iso, new_id, now, tool
from servers.trading.market import bucket_at, day_stats
from servers.trading.state import (
    MAX_WATCHLIST_SYMBOLS,
    MAX_WATCHLISTS,
    TradingState,
    Watchlist,
    dollars,
    get_account,
    get_instrument,
)
from servers.trading.views import depth, quote_view

Sector = Literal["Technology", "Healthcare", "Financials", "Energy", "Utilities", "Consumer", "Industrials",
                 "Materials", "Communication", "Real Estate", "Diversified", "Fixed Income", "Commodities"]
Ticker = Annotated[str, Field(min_length=1, max_length=8)]


def _row(s: TradingState, symbol: str, k: int) -> dict[str, Any]:
    inst = s.instruments[symbol]
    stats = day_stats(s, inst, k)
    last, prev = int(stats["last"]), int(stats["prev_close"])  # type: ignore[call-overload]
    return {"symbol": symbol, "name": inst.name, "kind": inst.kind, "sector": inst.sector,
            "exchange": inst.exchange, "last": dollars(last), "change_percent": round((last - prev) * 100 / prev, 2),
            "volume": stats["volume"], "tick_size": dollars(inst.tick_cents), "halted": inst.halted}


@tool(produces=("symbol",), read_only=True)
def search_stock_symbols(s: TradingState, query: str | None = None, sector: Sector | None = None,
                         kind: Literal["stock", "etf"] | None = None,
                         sort_by: Literal["symbol", "change_percent", "volume", "last_price"] = "symbol",
                         limit: Annotated[int, Field(ge=1, le=50)] = 20,
                         offset: Annotated[int, Field(ge=0, le=500)] = 0) -> dict:
    """Find listed stocks and ETFs by ticker or company name, sector or kind, with the latest price and
    today's move; sort by ticker, biggest gainers, most traded or highest price.

    Args:
        query: Text in the ticker or the company name (case-insensitive), e.g. "nova" or "NVLT".
        sector: Only instruments in this sector.
        kind: Only stocks or only ETFs.
        sort_by: symbol (A-Z), change_percent (biggest gain first), volume (most traded first) or last_price (highest first).
        limit: Most results to return.
        offset: Results to skip, for paging.
    """
    needle = (query or "").strip().lower()
    k = bucket_at(now(s))
    rows = [_row(s, i.symbol, k) for i in s.instruments.values()
            if (needle in i.symbol.lower() or needle in i.name.lower())
            and (sector is None or i.sector == sector) and (kind is None or i.kind == kind)]
    if sort_by != "symbol":
        field = "last" if sort_by == "last_price" else sort_by
        rows.sort(key=lambda r: (-r[field], r["symbol"]))
    else:
        rows.sort(key=lambda r: r["symbol"])
    return {"total": len(rows), "offset": offset, "results": rows[offset:offset + limit]}


@tool(consumes=("symbol",), read_only=True)
def get_stock_quote(s: TradingState, symbol: Ticker) -> dict:
    """Get the live quote for one ticker: last price, best bid and ask with sizes, today's change,
    open/high/low, volume, tick size, any trading halt, and whether the market is open now.

    Args:
        symbol: The ticker, e.g. NVLT.
    """
    return quote_view(s, get_instrument(s, symbol), now(s))


@tool(consumes=("symbol",), read_only=True)
def get_order_book_depth(s: TradingState, symbol: Ticker, levels: Annotated[int, Field(ge=1, le=8)] = 5) -> dict:
    """Show the order book for one ticker: the best bid and ask price levels with the shares waiting at
    each (including customers' resting limit orders), the spread and the mid price.

    Args:
        symbol: The ticker, e.g. NVLT.
        levels: How many price levels per side to show.
    """
    inst = get_instrument(s, symbol)
    at = now(s)
    book = depth(s, inst, at, levels)
    bid = book["bids"][0]["price"] if book["bids"] else None
    ask = book["asks"][0]["price"] if book["asks"] else None
    return {"symbol": inst.symbol, **book,
            "spread": round(ask - bid, 2) if bid is not None and ask is not None else None,
            "mid": round((ask + bid) / 2, 3) if bid is not None and ask is not None else None,
            "tick_size": dollars(inst.tick_cents), "halted": inst.halted, "as_of": iso(at)}


def _watchlist_view(s: TradingState, w: Watchlist) -> dict[str, Any]:
    k = bucket_at(now(s))
    return {"watchlist_id": w.watchlist_id, "account_id": w.account_id, "name": w.name,
            "created_at": w.created_at,
            "symbols": [{key: r[key] for key in ("symbol", "name", "last", "change_percent", "halted")}
                        for r in (_row(s, sym, k) for sym in w.symbols)]}


@tool(consumes=("account_id",), produces=("watchlist_id", "symbol"), read_only=True)
def list_stock_watchlists(s: TradingState, account_id: str) -> list:
    """Show an account's watchlists with the current price and today's move of every ticker on them.

    Args:
        account_id: The brokerage account, e.g. BRK-1004.
    """
    get_account(s, account_id)
    return [_watchlist_view(s, w) for w in s.watchlists.values() if w.account_id == account_id]


@tool(consumes=("account_id", "symbol"), produces=("watchlist_id",))
def update_stock_watchlist(s: TradingState, account_id: str, watchlist_name: Name,
                           add_symbols: Annotated[list[Ticker], Field(max_length=MAX_WATCHLIST_SYMBOLS)] | None = None,
                           remove_symbols: Annotated[list[Ticker], Field(max_length=MAX_WATCHLIST_SYMBOLS)] | None = None,
                           ) -> dict:
    """Add tickers to or remove tickers from one of an account's watchlists, found by name; adding to a
    name the account does not have yet starts a new watchlist.

    Args:
        account_id: The brokerage account, e.g. BRK-1004.
        watchlist_name: The watchlist's name (case-insensitive), e.g. "Tech ideas".
        add_symbols: Tickers to add.
        remove_symbols: Tickers to take off.
    """
    get_account(s, account_id)
    add = [get_instrument(s, x, "add_symbols").symbol for x in add_symbols or []]
    remove = [get_instrument(s, x, "remove_symbols").symbol for x in remove_symbols or []]
    if not add and not remove:
        raise ToolError("nothing to change: give add_symbols and/or remove_symbols", field="add_symbols")
    mine = [w for w in s.watchlists.values() if w.account_id == account_id]
    match = next((w for w in mine if w.name.lower() == watchlist_name.strip().lower()), None)
    created = match is None
    if match is None:
        if remove:
            names = ", ".join(repr(w.name) for w in mine) or "none"
            raise ToolError(f"account {account_id} has no watchlist named '{watchlist_name}' to remove tickers from "
                            f"(its watchlists: {names})", field="watchlist_name", code="not_found")
        if len(mine) >= MAX_WATCHLISTS:
            raise ToolError(f"account {account_id} already has {MAX_WATCHLISTS} watchlists, the maximum; add to an "
                            "existing one instead", field="watchlist_name", code="limit_exceeded")
        wid = new_id(s.counters, "WL")
        w = s.watchlists.put(wid, Watchlist(wid, account_id, watchlist_name.strip(), [], iso(now(s))))
    else:
        w = s.watchlists.edit(match.watchlist_id)
    for sym in remove:
        if sym not in w.symbols:
            raise ToolError(f"{sym} is not on watchlist '{w.name}'", field="remove_symbols", code="not_found")
        w.symbols.remove(sym)
    for sym in add:
        if sym in w.symbols:
            raise ToolError(f"{sym} is already on watchlist '{w.name}'", field="add_symbols", code="duplicate")
        w.symbols.append(sym)
    if len(w.symbols) > MAX_WATCHLIST_SYMBOLS:
        raise ToolError(f"a watchlist holds at most {MAX_WATCHLIST_SYMBOLS} tickers; '{w.name}' would have "
                        f"{len(w.symbols)}", field="add_symbols", code="limit_exceeded")
    return {**_watchlist_view(s, w), "created": created}
