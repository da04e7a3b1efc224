"""Trading discovery tools (hidden from the model): enumerate the live world for query synthesis.

They expose what a synthesized user would know: owners' names and trading PINs, what each account
holds and which orders are open, tickers with their current price, halts and tick sizes.
"""

from __future__ import annotations

from typing import Literal

from servers.kit import discovery, now, value_counts
from servers.trading.market import bucket_at, last_cents
from servers.trading.state import LIVE_STATUSES, AccountType, OrderStatus, TradingState, dollars
from servers.trading.views import account_view, order_view


@discovery(produces=("account_id",))
def trading_list_accounts(s: TradingState, account_type: AccountType | None = None) -> list:
    """Every brokerage account with its owner, email, trading PIN, cash, holdings, open orders and
    watchlists.

    Args:
        account_type: Only accounts of this kind.
    """
    out = []
    for a in s.accounts.values():
        if account_type and a.account_type != account_type:
            continue
        out.append({
            **account_view(s, a), "email": a.email, "trading_pin": a.trading_pin,
            "holdings": [{"symbol": p.symbol, "quantity": p.quantity} for p in s.positions.values()
                         if p.account_id == a.account_id],
            "live_order_ids": [o.order_id for o in s.orders.values()
                               if o.account_id == a.account_id and o.status in LIVE_STATUSES],
            "watchlists": [w.name for w in s.watchlists.values() if w.account_id == a.account_id],
        })
    return out


@discovery(produces=("symbol",))
def trading_list_instruments(s: TradingState, halted: bool | None = None) -> list:
    """Every listed ticker with name, sector, kind, exchange, tick size, halt state and last price.

    Args:
        halted: Only halted (true) or only tradable (false) tickers.
    """
    k = bucket_at(now(s))
    return [{"symbol": i.symbol, "name": i.name, "sector": i.sector, "kind": i.kind, "exchange": i.exchange,
             "tick_size": dollars(i.tick_cents), "halted": i.halted, "halt_reason": i.halt_reason,
             "halt_until": i.halt_until, "last": dollars(last_cents(s, i, k))}
            for i in s.instruments.values() if halted is None or i.halted == halted]


@discovery(produces=("order_id",))
def trading_list_orders(s: TradingState, status: OrderStatus | None = None, account_id: str | None = None) -> list:
    """Every order (any account) with its status, prices and fills.

    Args:
        status: Only orders in this state.
        account_id: Only this account's orders.
    """
    return [order_view(s, o) for o in s.orders.values()
            if (status is None or o.status == status) and (account_id is None or o.account_id == account_id)]


@discovery
def trading_get_unique_values(s: TradingState, field: Literal["sector", "kind", "exchange", "tick_size",
                                                              "account_type", "order_status", "order_type",
                                                              "watchlist_name"]) -> list:
    """Distinct values of a categorical field with their counts.

    Args:
        field: Which field to enumerate.
    """
    if field in ("sector", "kind", "exchange"):
        values = [getattr(i, field) for i in s.instruments.values()]
    elif field == "tick_size":
        values = [dollars(i.tick_cents) for i in s.instruments.values()]
    elif field == "account_type":
        values = [a.account_type for a in s.accounts.values()]
    elif field in ("order_status", "order_type"):
        values = [o.status if field == "order_status" else o.order_type for o in s.orders.values()]
    else:
        values = [w.name for w in s.watchlists.values()]
    return value_counts(values)
