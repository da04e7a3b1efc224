"""Trading state: brokerage accounts, instruments with a stateful order book, orders, fills, watchlists.

Prices inside the state are integer cents (``*_cents``) so tick-size arithmetic is exact; tools
convert to dollars (floats rounded to 2 decimals) at the boundary.

The shared rule helpers live here (``get_*`` lookups that name the argument at fault, the PIN check,
buying power and share availability) so every tool enforces them the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from servers.kit import Cell, Counters, State, Table, ToolError, require

Side = Literal["buy", "sell"]
OrderType = Literal["market", "limit", "stop"]
TimeInForce = Literal["day", "gtc"]
OrderStatus = Literal["open", "partially_filled", "filled", "cancelled", "expired"]
AccountType = Literal["individual", "joint", "ira"]

LIVE_STATUSES: tuple[str, ...] = ("open", "partially_filled")
DAILY_DEPOSIT_LIMIT_CENTS = 2_500_000  # $25,000 per account per New York calendar day
MAX_WATCHLISTS = 5
MAX_WATCHLIST_SYMBOLS = 25


@dataclass
class Account:
    account_id: str
    owner_name: str
    email: str
    nickname: str
    account_type: str  # individual | joint | ira
    cash_cents: int
    trading_pin: str  # 6 digits, required to place orders and move cash
    linked_bank: str  # where deposits come from and withdrawals go
    opened_on: str
    realized_pnl_cents: int = 0  # lifetime realized P&L of closed lots
    ira_contribution_room_cents: int | None = None  # IRA only: what may still be deposited this tax year


@dataclass
class Instrument:
    symbol: str
    name: str
    kind: str  # stock | etf
    sector: str
    exchange: str
    tick_cents: int  # limit / stop prices must be a multiple of this
    base_cents: int  # anchor of the seeded price path
    spread_ticks: int  # best ask - best bid, in ticks
    level_ticks: int  # distance between book levels, in ticks
    depth_qty: int  # typical shares shown at the best level
    avg_volume: int  # typical shares traded per day
    walk_seed: int  # drives the deterministic price path and book sizes
    halted: bool = False
    halt_reason: str | None = None
    halt_until: str | None = None  # ISO UTC; None = until further notice


@dataclass
class Book:
    """The mutable part of a symbol's order book: liquidity taken in the current 15-minute bucket and
    the last trade our customers printed. Both reset when the market moves to the next bucket."""

    symbol: str
    bucket: int = -(10**9)
    taken: dict[str, int] = field(default_factory=dict)  # "a:<cents>" / "b:<cents>" -> shares taken
    last_trade_cents: int | None = None
    day: int = -(10**9)
    customer_volume: int = 0  # shares our customers traded today (added to the market's volume)


@dataclass
class Position:
    account_id: str
    symbol: str
    quantity: int
    cost_basis_cents: int  # total cost of the shares held (average-cost method)
    realized_pnl_cents: int = 0
    opened_on: str = ""


@dataclass
class Order:
    order_id: str
    account_id: str
    symbol: str
    side: str
    order_type: str
    quantity: int
    time_in_force: str
    status: str
    placed_at: str
    updated_at: str
    limit_cents: int | None = None
    stop_cents: int | None = None
    filled_quantity: int = 0
    filled_value_cents: int = 0
    triggered_at: str | None = None  # stop orders: when the stop price was reached
    closed_at: str | None = None
    close_reason: str | None = None
    execution_ids: list[str] = field(default_factory=list)

    @property
    def remaining(self) -> int:
        return self.quantity - self.filled_quantity

    @property
    def live(self) -> bool:
        return self.status in LIVE_STATUSES


@dataclass
class Execution:
    execution_id: str
    order_id: str
    account_id: str
    symbol: str
    side: str
    quantity: int
    price_cents: int
    executed_at: str
    liquidity: str  # market (took the exchange book) | customer (matched another customer's order)
    realized_pnl_cents: int | None = None  # sells only


@dataclass
class Watchlist:
    watchlist_id: str
    account_id: str
    name: str
    symbols: list[str]
    created_at: str


@dataclass
class CashTransfer:
    transfer_id: str
    account_id: str
    direction: str  # deposit | withdraw
    amount_cents: int
    bank: str
    created_at: str
    ny_date: str  # New York calendar day (daily deposit limit)


class TradingState(State):
    accounts: Table[Account]
    instruments: Table[Instrument]
    books: Table[Book]
    positions: Table[Position]
    orders: Table[Order]
    executions: Table[Execution]
    watchlists: Table[Watchlist]
    cash_transfers: Table[CashTransfer]
    counters: Cell[Counters]


# ---------------------------------------------------------------- conversions
def dollars(cents: int | None) -> float | None:
    return None if cents is None else round(cents / 100, 2)


def to_cents(amount: float) -> int:
    return round(amount * 100)


def position_key(account_id: str, symbol: str) -> str:
    return f"{account_id}/{symbol}"


# ---------------------------------------------------------------- lookups naming the argument at fault
def get_account(s: TradingState, account_id: str) -> Account:
    return require(s.accounts, account_id, "account_id")


def get_instrument(s: TradingState, symbol: str, field_name: str = "symbol") -> Instrument:
    inst = s.instruments.get(symbol.strip().upper())
    if inst is None:
        raise ToolError(f"unknown {field_name} '{symbol}': no listed instrument has this ticker "
                        "(search_stock_symbols finds tickers by company name)", field=field_name, code="not_found")
    return inst


def get_order(s: TradingState, account_id: str, order_id: str) -> Order:
    order = require(s.orders, order_id, "order_id")
    get_account(s, account_id)
    if order.account_id != account_id:
        raise ToolError(f"order {order_id} belongs to another account, not {account_id}", field="order_id",
                        code="forbidden")
    return order


def check_pin(acct: Account, pin: str) -> None:
    if pin != acct.trading_pin:
        raise ToolError(f"incorrect trading_pin for account {acct.account_id}: orders and cash transfers need "
                        "the account's 6-digit trading PIN", field="trading_pin", code="auth")


def check_not_halted(inst: Instrument) -> None:
    if inst.halted:
        until = f" until {inst.halt_until}" if inst.halt_until else " until further notice"
        raise ToolError(f"trading in {inst.symbol} is halted ({inst.halt_reason}){until}; new orders and changes "
                        "are refused while the halt lasts (open orders can still be cancelled)", field="symbol",
                        code="halted")


def check_tick(inst: Instrument, cents: int, field_name: str) -> None:
    if cents % inst.tick_cents:
        tick = inst.tick_cents / 100
        lo = cents - cents % inst.tick_cents
        raise ToolError(f"{field_name} {cents / 100:.2f} is not on {inst.symbol}'s tick size of ${tick:.2f}; "
                        f"use e.g. {lo / 100:.2f} or {(lo + inst.tick_cents) / 100:.2f}", field=field_name,
                        code="tick_size")


# ---------------------------------------------------------------- buying power and share availability
def reservation_cents(order: Order) -> int:
    """Cash an open buy order holds back: its limit (or stop) price times the unfilled shares."""
    if order.side != "buy" or not order.live:
        return 0
    price = order.limit_cents if order.order_type == "limit" else order.stop_cents
    return (price or 0) * order.remaining


def live_orders(s: TradingState, account_id: str | None = None) -> list[Order]:
    return [o for o in s.orders.values() if o.live and (account_id is None or o.account_id == account_id)]


def reserved_cents(s: TradingState, account_id: str, exclude: str | None = None) -> int:
    return sum(reservation_cents(o) for o in live_orders(s, account_id) if o.order_id != exclude)


def buying_power_cents(s: TradingState, account_id: str, exclude: str | None = None) -> int:
    return s.accounts[account_id].cash_cents - reserved_cents(s, account_id, exclude)


def committed_shares(s: TradingState, account_id: str, symbol: str, exclude: str | None = None) -> int:
    """Shares already promised to open sell orders."""
    return sum(o.remaining for o in live_orders(s, account_id)
               if o.side == "sell" and o.symbol == symbol and o.order_id != exclude)


def held_shares(s: TradingState, account_id: str, symbol: str) -> int:
    pos = s.positions.get(position_key(account_id, symbol))
    return pos.quantity if pos else 0


def check_shares_available(s: TradingState, account_id: str, symbol: str, quantity: int,
                           exclude: str | None = None) -> None:
    held = held_shares(s, account_id, symbol)
    committed = committed_shares(s, account_id, symbol, exclude)
    if quantity > held - committed:
        extra = f", {committed} already committed to open sell orders" if committed else ""
        raise ToolError(f"cannot sell {quantity} {symbol}: the account holds {held} shares{extra}, so at most "
                        f"{max(0, held - committed)} can be sold; short selling is not allowed", field="quantity",
                        code="insufficient_shares")


def check_buying_power(s: TradingState, account_id: str, need_cents: int, what: str,
                       exclude: str | None = None) -> None:
    power = buying_power_cents(s, account_id, exclude)
    if need_cents > power:
        raise ToolError(f"insufficient buying power: {what} needs ${need_cents / 100:,.2f} but account {account_id} "
                        f"has ${max(power, 0) / 100:,.2f} available (cash minus open buy orders); deposit cash with "
                        "transfer_brokerage_cash or lower the quantity", field="quantity",
                        code="insufficient_funds")
