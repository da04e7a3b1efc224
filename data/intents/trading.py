"""How people ask the trading (brokerage) server for things: per-tool phrasings and multi-tool goals."""

from __future__ import annotations

SELF: tuple[str, ...] = ()
SPOKEN: tuple[str, ...] = ("order_id", "symbol")

BANK: dict[str, dict[str, list[str]]] = {
    "list_brokerage_accounts": {
        "ask": [
            "which investment accounts does {owner_name} have?",
            "show me all the {account_type} accounts and what's in them",
            "how much cash is sitting in {owner_name}'s brokerage accounts?",
            "pull up my accounts, I'm {owner_name}",
        ],
        "vague": [
            "what accounts do I have with you?",
            "I'd like an overview of where my money is",
        ],
    },
    "get_portfolio_summary": {
        "ask": [
            "how is my portfolio in {account_id} doing today?",
            "what am I up or down on my holdings in {account_id}?",
            "list everything I own in {account_id}, biggest winners first",
            "what's {account_id} worth right now?",
        ],
        "vague": [
            "how are my investments doing?",
            "am I making money?",
        ],
    },
    "transfer_brokerage_cash": {
        "ask": [
            "move {amount} from my bank into {account_id}, my PIN is {trading_pin}",
            "pull {amount} out of {account_id} back to my bank; PIN {trading_pin}",
            "put {amount} into my IRA {account_id} (PIN {trading_pin})",
            "{direction} {amount} for {account_id}, trading PIN {trading_pin}",
        ],
        "vague": [
            "I want to add some money to my account",
            "can I get some cash out?",
        ],
    },
    "search_stock_symbols": {
        "ask": [
            "what's the ticker for {query}?",
            "which {sector} stocks are up the most today?",
            "show me the most heavily traded {kind}s",
            "find me companies with {query} in the name",
        ],
        "vague": [
            "what's moving in the market today?",
            "I'm looking for something to invest in",
        ],
    },
    "get_stock_quote": {
        "ask": [
            "what's {symbol} trading at?",
            "give me a quote on {symbol}",
            "how much is {symbol} up or down today?",
            "is {symbol} halted right now?",
        ],
        "vague": [
            "how's that stock doing?",
            "what's the price on the one I asked about?",
        ],
    },
    "get_order_book_depth": {
        "ask": [
            "how many shares of {symbol} are for sale near the current price?",
            "show me the top {levels} bids and offers on {symbol}",
            "what does the book look like for {symbol}, how wide is the spread?",
        ],
        "vague": [
            "is there enough liquidity to trade this?",
            "who's buying and selling right now?",
        ],
    },
    "list_stock_watchlists": {
        "ask": [
            "what's on my watchlists in {account_id}?",
            "how are the stocks I'm watching in {account_id} doing?",
            "show me my saved tickers for {account_id}",
        ],
        "vague": [
            "what was I keeping an eye on?",
            "check the stocks I'm tracking",
        ],
    },
    "update_stock_watchlist": {
        "ask": [
            "add {add_symbols} to my {watchlist_name} list in {account_id}",
            "take {remove_symbols} off the {watchlist_name} watchlist on {account_id}",
            "start a new list called {watchlist_name} in {account_id} with {add_symbols}",
        ],
        "vague": [
            "I want to keep an eye on a couple of tickers",
            "clean up my watchlist for me",
        ],
    },
    "place_stock_order": {
        "ask": [
            "buy {quantity} shares of {symbol} in {account_id} at market, PIN {trading_pin}",
            "sell {quantity} {symbol} from {account_id} if I can get {limit_price} or better; my PIN is {trading_pin}",
            "put in a {order_type} order to {side} {quantity} {symbol} on {account_id}, PIN {trading_pin}",
            "set a stop at {stop_price} to dump my {quantity} {symbol} in {account_id}, good till cancelled, "
            "PIN {trading_pin}",
            "bid {limit_price} for {quantity} shares of {symbol} before the open, account {account_id}, "
            "PIN {trading_pin}",
        ],
        "vague": [
            "I want to buy some stock",
            "get me out of that position",
        ],
    },
    "modify_stock_order": {
        "ask": [
            "change order {order_id} in {account_id} to {quantity} shares",
            "raise my limit on {order_id} to {limit_price}, account {account_id}",
            "move the stop on {order_id} down to {stop_price} ({account_id})",
        ],
        "vague": [
            "I want to adjust the order I put in",
            "can I change my price on that trade?",
        ],
    },
    "cancel_stock_order": {
        "ask": [
            "cancel order {order_id} on {account_id}",
            "kill {order_id}, I changed my mind ({account_id})",
            "pull my open order {order_id} from {account_id}",
        ],
        "vague": [
            "never mind that trade, call it off",
            "I don't want that order anymore",
        ],
    },
    "list_stock_orders": {
        "ask": [
            "which of my orders in {account_id} are still {status}?",
            "show my {side} orders on {symbol} in {account_id}",
            "did my {symbol} order in {account_id} go through?",
            "what are the last {limit} orders I placed from {account_id}?",
        ],
        "vague": [
            "what happened to my order?",
            "do I have anything pending?",
        ],
    },
    "list_trade_executions": {
        "ask": [
            "what trades did I make in {account_id} since {since}?",
            "how much did I make or lose selling {symbol} in {account_id}?",
            "show every {side} fill in {account_id}",
        ],
        "vague": [
            "what have I traded recently?",
            "how did my sales work out?",
        ],
    },
}

GOALS: list[dict[str, list[str]]] = [
    {"tools": ["get_stock_quote", "place_stock_order"],
     "ask": ["check where {symbol} is and buy {quantity} shares for {account_id} if it's under {limit_price}; "
             "PIN {trading_pin}",
             "look up {symbol} and grab {quantity} shares for me in {account_id} (PIN {trading_pin})"]},
    {"tools": ["get_portfolio_summary", "place_stock_order"],
     "ask": ["sell half of my {symbol} in {account_id} at market, PIN {trading_pin}",
             "take profits on whatever I hold in {symbol} in {account_id}, PIN {trading_pin}"]},
    {"tools": ["list_stock_orders", "cancel_stock_order"],
     "ask": ["cancel whatever I still have open on {symbol} in {account_id}",
             "I don't want any pending orders left in {account_id}, clear them out"]},
    {"tools": ["transfer_brokerage_cash", "place_stock_order"],
     "ask": ["put {amount} into {account_id} and use it to buy {symbol}; my PIN is {trading_pin}",
             "fund {account_id} with {amount} and then pick up {quantity} shares of {symbol}, PIN {trading_pin}"]},
    {"tools": ["list_stock_orders", "modify_stock_order"],
     "ask": ["my {symbol} bid in {account_id} isn't filling, bump it to {limit_price}",
             "find my open {symbol} order on {account_id} and make it {quantity} shares"]},
    {"tools": ["search_stock_symbols", "update_stock_watchlist"],
     "ask": ["find the biggest {sector} gainers today and put them on my {watchlist_name} list in {account_id}",
             "look up {query} and add it to my watchlist {watchlist_name} on {account_id}"]},
    {"tools": ["get_order_book_depth", "place_stock_order"],
     "ask": ["see how deep the book is on {symbol} and buy {quantity} for {account_id} without paying more than "
             "{limit_price}, PIN {trading_pin}",
             "check the offers on {symbol} and sell {quantity} from {account_id} at the best bid, PIN {trading_pin}"]},
    {"tools": ["list_trade_executions", "get_portfolio_summary"],
     "ask": ["how much have I made this year in {account_id}, counting what I sold and what I still hold?",
             "give me my realized and paper gains on {account_id}"]},
]
