"""Trading tools for orders: place, change, cancel, list orders, and the trade (fill) history."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.kit import IsoDate, Money, ToolError, iso, new_id, now, parse_date, tool
from servers.trading.market import bucket_at, is_open, last_cents, market_status
from servers.trading.matching import close, estimate_cost, execute, match_resting, not_live_error
from servers.trading.state import (
    Order,
    OrderStatus,
    OrderType,
    Side,
    TimeInForce,
    TradingState,
    buying_power_cents,
    check_buying_power,
    check_not_halted,
    check_pin,
    check_shares_available,
    check_tick,
    dollars,
    get_account,
    get_instrument,
    get_order,
    reservation_cents,
    to_cents,
)
from servers.trading.tools_account import TradingPin
from servers.trading.tools_market import Ticker
from servers.trading.views import order_view

Shares = Annotated[int, Field(ge=1, le=100_000)]


def _check_stop_side(s: TradingState, symbol: str, side: str, stop: int) -> None:
    inst = s.instruments[symbol]
    last = last_cents(s, inst, bucket_at(now(s)))
    if side == "sell" and stop >= last:
        raise ToolError(f"a sell stop must be below the last price ${last / 100:,.2f} (it would trigger at once); "
                        "lower stop_price or sell with a market or limit order", field="stop_price", code="stop_side")
    if side == "buy" and stop <= last:
        raise ToolError(f"a buy stop must be above the last price ${last / 100:,.2f} (it would trigger at once); "
                        "raise stop_price or buy with a market or limit order", field="stop_price", code="stop_side")


def _result(s: TradingState, order_id: str) -> dict:
    o = s.orders[order_id]
    return {**order_view(s, o), "buying_power": dollars(buying_power_cents(s, o.account_id)),
            "market": market_status(now(s))}


@tool(consumes=("account_id", "symbol"), produces=("order_id",), establishes=("order_open",))
def place_stock_order(s: TradingState, account_id: str, symbol: Ticker, side: Side, quantity: Shares,
                      trading_pin: TradingPin, order_type: OrderType = "market", limit_price: Money | None = None,
                      stop_price: Money | None = None, time_in_force: TimeInForce = "day") -> dict:
    """Buy or sell shares. A market order fills at once against the order book (only while the market is
    open, 09:30-16:00 New York time on weekdays); a limit order fills at the limit price or better and
    otherwise waits in the book (it can be placed before the open); a stop order becomes a market order
    once the price reaches the stop. Buying needs enough buying power, selling needs the shares (no short
    selling), prices must be on the ticker's tick size, and the account's trading PIN is required.

    Args:
        account_id: The brokerage account, e.g. BRK-1004.
        symbol: The ticker, e.g. NVLT.
        side: buy or sell.
        quantity: Number of shares.
        trading_pin: The account holder's 6-digit trading PIN.
        order_type: market, limit or stop.
        limit_price: Limit orders only: the highest price to pay (buy) or lowest to accept (sell).
        stop_price: Stop orders only: the price that triggers the order.
        time_in_force: day (expires at today's 16:00 close if not filled) or gtc (good until cancelled).
    """
    acct = get_account(s, account_id)
    check_pin(acct, trading_pin)
    inst = get_instrument(s, symbol)
    check_not_halted(inst)
    limit = to_cents(limit_price) if limit_price is not None else None
    stop = to_cents(stop_price) if stop_price is not None else None
    if order_type != "limit" and limit is not None:
        raise ToolError(f"limit_price only applies to limit orders, not {order_type} orders", field="limit_price")
    if order_type != "stop" and stop is not None:
        raise ToolError(f"stop_price only applies to stop orders, not {order_type} orders", field="stop_price")
    if order_type == "limit" and limit is None:
        raise ToolError("a limit order needs limit_price", field="limit_price")
    if order_type == "stop" and stop is None:
        raise ToolError("a stop order needs stop_price", field="stop_price")
    if limit is not None:
        check_tick(inst, limit, "limit_price")
    if stop is not None:
        check_tick(inst, stop, "stop_price")
        _check_stop_side(s, inst.symbol, side, stop)
    at = now(s)
    if order_type == "market" and not is_open(at):
        st = market_status(at)
        raise ToolError(f"the market is closed (New York time {st['new_york_time']}; next open {st['next_open']}): "
                        "market orders are accepted 09:30-16:00 New York time on weekdays; place a limit order to "
                        "queue it for the open", field="order_type", code="market_closed")
    if side == "sell":
        check_shares_available(s, account_id, inst.symbol, quantity)
    elif order_type == "market":
        cost, shares = estimate_cost(s, inst, account_id, quantity)
        check_buying_power(s, account_id, cost, f"buying {shares} {inst.symbol} at market (about "
                           f"${cost / max(shares, 1) / 100:,.2f} a share)")
    else:
        price = limit if order_type == "limit" else stop
        check_buying_power(s, account_id, (price or 0) * quantity,
                           f"a {order_type} buy of {quantity} {inst.symbol} at ${(price or 0) / 100:,.2f}")
    oid = new_id(s.counters, "ORD")
    s.orders.put(oid, Order(oid, account_id, inst.symbol, side, order_type, quantity, time_in_force, "open",
                            iso(at), iso(at), limit_cents=limit, stop_cents=stop))
    if is_open(at):
        if order_type != "stop":
            execute(s, oid, at)
        match_resting(s, at)
    return _result(s, oid)


@tool(consumes=("account_id", "order_id"), requires=("order_open",))
def modify_stock_order(s: TradingState, account_id: str, order_id: str,
                       quantity: Shares | None = None, limit_price: Money | None = None,
                       stop_price: Money | None = None) -> dict:
    """Change an open limit or stop order's share count or price (a partially filled order keeps its
    fills). If a new limit price crosses the market while it is open, the order fills at once.

    Args:
        account_id: The brokerage account that placed the order, e.g. BRK-1004.
        order_id: The order to change, e.g. ORD-0042.
        quantity: New total number of shares (must be more than already filled).
        limit_price: New limit price (limit orders only).
        stop_price: New stop price (stop orders only).
    """
    order = get_order(s, account_id, order_id)
    if not order.live:
        raise not_live_error(order, "modify")
    if quantity is None and limit_price is None and stop_price is None:
        raise ToolError("nothing to change: give quantity, limit_price or stop_price", field="quantity")
    inst = s.instruments[order.symbol]
    check_not_halted(inst)
    if limit_price is not None and order.order_type != "limit":
        raise ToolError(f"limit_price only applies to limit orders; {order_id} is a {order.order_type} order",
                        field="limit_price")
    if stop_price is not None and order.order_type != "stop":
        raise ToolError(f"stop_price only applies to stop orders; {order_id} is a {order.order_type} order",
                        field="stop_price")
    if quantity is not None and quantity <= order.filled_quantity:
        raise ToolError(f"order {order_id} already filled {order.filled_quantity} shares; the new quantity must be "
                        "larger (cancel the order to stop it instead)", field="quantity")
    edited = s.orders.edit(order_id)
    if quantity is not None:
        edited.quantity = quantity
    if limit_price is not None:
        check_tick(inst, to_cents(limit_price), "limit_price")
        edited.limit_cents = to_cents(limit_price)
    if stop_price is not None:
        check_tick(inst, to_cents(stop_price), "stop_price")
        _check_stop_side(s, order.symbol, order.side, to_cents(stop_price))
        edited.stop_cents = to_cents(stop_price)
    if edited.side == "sell":
        check_shares_available(s, account_id, order.symbol, edited.remaining, exclude=order_id)
    else:
        check_buying_power(s, account_id, reservation_cents(edited), f"the changed order {order_id}", exclude=order_id)
    at = now(s)
    edited.updated_at = iso(at)
    if is_open(at):
        if edited.order_type == "limit":
            execute(s, order_id, at)
        match_resting(s, at)
    return _result(s, order_id)


@tool(consumes=("account_id", "order_id"), requires=("order_open",))
def cancel_stock_order(s: TradingState, account_id: str, order_id: str) -> dict:
    """Cancel an open or partially filled order; shares already filled stay filled and the cash or
    shares it held back are released. Filled, expired or cancelled orders cannot be cancelled.

    Args:
        account_id: The brokerage account that placed the order, e.g. BRK-1004.
        order_id: The order to cancel, e.g. ORD-0042.
    """
    order = get_order(s, account_id, order_id)
    if not order.live:
        raise not_live_error(order, "cancel")
    released = reservation_cents(order)
    close(s, order_id, now(s), "cancelled", "cancelled by the customer")
    return {**_result(s, order_id), "released_buying_power": dollars(released)}


@tool(consumes=("account_id",), produces=("order_id",), read_only=True)
def list_stock_orders(s: TradingState, account_id: str, status: OrderStatus | Literal["live"] | None = None,
                      symbol: Ticker | None = None, side: Side | None = None,
                      limit: Annotated[int, Field(ge=1, le=100)] = 20) -> list:
    """List an account's orders, newest first, optionally only open ones ("live" = open or partially
    filled), one status, one ticker or one side, with fills and average price.

    Args:
        account_id: The brokerage account, e.g. BRK-1004.
        status: Only orders in this state; live means open or partially filled.
        symbol: Only orders for this ticker.
        side: Only buy or only sell orders.
        limit: Most orders to return.
    """
    get_account(s, account_id)
    sym = get_instrument(s, symbol).symbol if symbol else None
    rows = [o for o in s.orders.values() if o.account_id == account_id
            and (status is None or (o.live if status == "live" else o.status == status))
            and (sym is None or o.symbol == sym) and (side is None or o.side == side)]
    rows.sort(key=lambda o: (o.placed_at, o.order_id), reverse=True)
    return [order_view(s, o) for o in rows[:limit]]


@tool(consumes=("account_id",), produces=("order_id",), read_only=True)
def list_trade_executions(s: TradingState, account_id: str, symbol: Ticker | None = None, side: Side | None = None,
                          since: IsoDate | None = None, limit: Annotated[int, Field(ge=1, le=200)] = 50) -> dict:
    """Show an account's trade history (each fill with shares, price and, for sells, the realized profit
    or loss), newest first, with totals bought, sold and realized.

    Args:
        account_id: The brokerage account, e.g. BRK-1004.
        symbol: Only fills of this ticker.
        side: Only buys or only sells.
        since: Only fills on or after this date (YYYY-MM-DD).
        limit: Most fills to return.
    """
    get_account(s, account_id)
    sym = get_instrument(s, symbol).symbol if symbol else None
    start = parse_date(since, "since").isoformat() if since else ""
    rows = [e for e in s.executions.values() if e.account_id == account_id and (sym is None or e.symbol == sym)
            and (side is None or e.side == side) and e.executed_at[:10] >= start]
    rows.sort(key=lambda e: (e.executed_at, e.execution_id), reverse=True)
    return {
        "count": len(rows),
        "bought_value": dollars(sum(e.quantity * e.price_cents for e in rows if e.side == "buy")),
        "sold_value": dollars(sum(e.quantity * e.price_cents for e in rows if e.side == "sell")),
        "realized_pnl": dollars(sum(e.realized_pnl_cents or 0 for e in rows)),
        "executions": [{"execution_id": e.execution_id, "order_id": e.order_id, "symbol": e.symbol, "side": e.side,
                        "quantity": e.quantity, "price": dollars(e.price_cents),
                        "value": dollars(e.quantity * e.price_cents), "executed_at": e.executed_at,
                        "realized_pnl": dollars(e.realized_pnl_cents)} for e in rows[:limit]],
    }
