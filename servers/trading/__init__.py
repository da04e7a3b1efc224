"""Trading: a retail brokerage over a live, stateful order book.

Customers hold brokerage accounts (individual, joint, Roth IRA) with cash, a 6-digit trading PIN and
positions carried at average cost. Listed stocks and ETFs each have an exchange order book with
several bid and ask levels around a seeded, deterministic price path that moves every 15 minutes
while the market is open (09:30-16:00 America/New_York, weekdays; holidays are not modelled; the
session starts Monday 2026-06-01 05:00 New York time, i.e. pre-market). Market orders walk the book
level by level (partial fills; a remainder beyond the displayed depth is cancelled), limit orders fill
up to their price and rest in the book (visible in its depth, tradable by other customers) until the
market crosses them, stop orders turn into market orders when the last price reaches the stop. Orders
go open -> partially_filled -> filled, or cancelled, or expired: day orders expire at the 16:00 close
(``on_time``); gtc orders stay. Fills update cash, positions, cost basis and realized P&L; portfolio
views give unrealized P&L at live prices. Watchlists and cash transfers to the linked bank complete it.

Failure rules (each raises a ToolError naming the argument; the call changes nothing):
* unknown account_id / symbol / order_id; an order of another account (not the owner);
* wrong trading_pin (orders and cash transfers);
* trading halted for the symbol (new orders and changes; cancelling is still allowed);
* market order while the market is closed (limit and stop orders are accepted pre-market);
* limit_price / stop_price not on the ticker's tick size ($0.01, $0.05 or $0.10);
* limit_price on a non-limit order, stop_price on a non-stop order, or either one missing;
* a sell stop at/above or a buy stop at/below the last price (it would trigger at once);
* insufficient buying power (cash minus what open buy orders hold back) for a buy or a bigger order;
* selling more shares than held minus shares committed to open sell orders (no short selling);
* cancelling or modifying an order that is filled, cancelled or expired (illegal transition);
* modify with nothing to change, or a new quantity not above the shares already filled;
* deposits over the $25,000 daily limit, IRA deposits over the contribution room, IRA withdrawals,
  withdrawals above the cash not held back by open orders;
* watchlists: nothing to change, ticker already on / not on the list, removing from a missing list,
  more than 5 watchlists or 25 tickers.
"""

from servers.kit import Domain
from servers.trading import discovery, tools_account, tools_market, tools_orders
from servers.trading.matching import on_time
from servers.trading.state import TradingState
from servers.trading.world import generate

domain = Domain(
    "trading", TradingState, generate,
    description=("A retail brokerage: accounts with cash, positions and P&L, live quotes and a stateful order "
                 "book with depth, market/limit/stop orders that fill against it during New York market hours, "
                 "trade history, watchlists and cash transfers."),
    modules=(tools_account, tools_market, tools_orders, discovery),
    on_time=on_time,
)

__all__ = ["TradingState", "domain", "generate"]
