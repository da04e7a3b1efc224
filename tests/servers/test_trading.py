"""Trading domain: tool count, every failure rule (state unchanged), order-book
workflows across the market clock (open, 15-minute moves, close)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from servers import PAPER_TOOL_COUNTS
from servers.kit import DomainRuntime
from servers.trading import domain
from tests.servers.harness import assert_replays_alike, fails, new_sid, ok, state_of
from tests.servers.scenarios.trading import on_tick


def accounts(rt: DomainRuntime, sid: str, seed: int) -> list[dict[str, Any]]:
    return ok(rt, sid, seed, "trading_list_accounts", {})


def richest(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return max((a for a in rows if a["account_type"] != "ira"), key=lambda a: a["buying_power"])


def poorest(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return min(rows, key=lambda a: a["buying_power"])


def tradable(rt: DomainRuntime, sid: str, seed: int, tick: float = 0.01) -> list[dict[str, Any]]:
    rows = ok(rt, sid, seed, "trading_list_instruments", {"halted": False})
    return sorted((r for r in rows if r["tick_size"] == tick), key=lambda r: r["last"])


def to_open(rt: DomainRuntime, sid: str, seed: int, symbol: str) -> None:
    """Advance the session clock to one minute after the next 09:30 New York open."""
    q = ok(rt, sid, seed, "get_stock_quote", {"symbol": symbol})
    minutes = (datetime.fromisoformat(q["market"]["next_open"]) - datetime.fromisoformat(q["as_of"])).total_seconds()
    ok(rt, sid, seed, "trading_session_advance_clock", {"minutes": int(minutes // 60) + 1})
    assert ok(rt, sid, seed, "get_stock_quote", {"symbol": symbol})["market"]["is_open"] is True


def order(rt: DomainRuntime, sid: str, seed: int, acct: dict[str, Any], symbol: str, side: str, qty: int,
          **kw: Any) -> dict[str, Any]:
    return ok(rt, sid, seed, "place_stock_order", {"account_id": acct["account_id"], "symbol": symbol, "side": side,
                                                   "quantity": qty, "trading_pin": acct["trading_pin"], **kw})


# ---------------------------------------------------------------- (1) tool count, (2) smoke coverage
def test_thirteen_user_tools_discovery_and_sensitive_pin(rt: DomainRuntime) -> None:
    assert len(domain.user_tools) == PAPER_TOOL_COUNTS["trading"] == 13
    assert len(rt.table.openai_tools()) == 13
    discovery = [s.name for s in domain.tools.values() if s.kind == "discovery"]
    assert 2 <= len(discovery) <= 4 and all(n.startswith("trading_") for n in discovery)
    declared = [s for s in domain.user_tools if s.consumes or s.produces or s.requires]
    assert len(declared) == 13
    assert rt.table.sensitive_params("place_stock_order") == ["trading_pin"]
    assert rt.table.sensitive_params("transfer_brokerage_cash") == ["trading_pin"]
    assert rt.table.schemas["transfer_brokerage_cash"]["properties"]["amount"].get("x-money") is True


def test_world_archetypes_exist_for_many_seeds() -> None:
    for seed in range(12):
        snap = domain.new_world(seed).snapshot()
        inst = snap["instruments"].values()
        assert {i["tick_cents"] for i in inst} >= {1, 5, 10}
        halts = [i for i in inst if i["halted"]]
        assert sorted(i["halt_until"] is None for i in halts) == [False, True]
        accts = snap["accounts"].values()
        assert min(a["cash_cents"] for a in accts) < 200_00
        assert any(a["ira_contribution_room_cents"] == 300_00 for a in accts)
        statuses = {(o["status"], o["time_in_force"]) for o in snap["orders"].values()}
        assert {("filled", "day"), ("open", "gtc"), ("open", "day"), ("cancelled", "day")} <= statuses
        assert any(t["ny_date"] == "2026-06-01" for t in snap["cash_transfers"].values())
        assert len(snap["instruments"]) >= 25 and len(snap["positions"]) >= 40 and len(snap["orders"]) >= 80


# ---------------------------------------------------------------- (3) failure rules leave state alone
def test_unknown_ids_and_orders_of_another_account(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    rows = accounts(rt, sid, seed)
    a, b = rows[0], next(r for r in rows if r["live_order_ids"])
    fails(rt, sid, seed, "get_portfolio_summary", {"account_id": "BRK-9999"}, "unknown account_id 'BRK-9999'")
    fails(rt, sid, seed, "get_stock_quote", {"symbol": "ZZZZ"}, "unknown symbol 'ZZZZ'", "search_stock_symbols")
    fails(rt, sid, seed, "cancel_stock_order", {"account_id": a["account_id"], "order_id": "ORD-9999"},
          "unknown order_id 'ORD-9999'")
    other = b["live_order_ids"][0]
    stranger = next(r for r in rows if r["account_id"] != b["account_id"])
    fails(rt, sid, seed, "cancel_stock_order", {"account_id": stranger["account_id"], "order_id": other},
          "belongs to another account", "order_id")
    fails(rt, sid, seed, "modify_stock_order", {"account_id": stranger["account_id"], "order_id": other,
                                                "quantity": 1}, "belongs to another account")
    fails(rt, sid, seed, "list_brokerage_accounts", {"owner_name": "Nobody Atall"}, "no brokerage account owner")
    fails(rt, sid, seed, "update_stock_watchlist", {"account_id": a["account_id"], "watchlist_name": "x",
                                                    "add_symbols": ["NOPE"]}, "unknown add_symbols 'NOPE'")


def test_wrong_pin_halts_and_market_hours(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    acct = richest(accounts(rt, sid, seed))
    sym = tradable(rt, sid, seed)[-1]["symbol"]
    aid, pin = acct["account_id"], acct["trading_pin"]
    bad = "000000" if pin != "000000" else "111111"
    base = {"account_id": aid, "symbol": sym, "side": "buy", "quantity": 1, "order_type": "limit",
            "limit_price": 1.0}
    fails(rt, sid, seed, "place_stock_order", {**base, "trading_pin": bad}, "incorrect trading_pin")
    fails(rt, sid, seed, "transfer_brokerage_cash", {"account_id": aid, "direction": "deposit", "amount": 10,
                                                     "trading_pin": bad}, "incorrect trading_pin")
    halted = ok(rt, sid, seed, "trading_list_instruments", {"halted": True})
    for h in halted:
        fails(rt, sid, seed, "place_stock_order", {**base, "symbol": h["symbol"], "trading_pin": pin},
              f"trading in {h['symbol']} is halted", h["halt_reason"])
    fails(rt, sid, seed, "place_stock_order", {**base, "order_type": "market", "limit_price": None,
                                               "trading_pin": pin}, "the market is closed", "order_type")
    ok(rt, sid, seed, "place_stock_order", {**base, "trading_pin": pin})  # a limit order queues pre-market
    to_open(rt, sid, seed, sym)
    filled = order(rt, sid, seed, acct, sym, "buy", 1)
    assert filled["status"] == "filled" and filled["fills"]


def test_price_rules_tick_size_and_stop_side(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    acct = richest(accounts(rt, sid, seed))
    wide = tradable(rt, sid, seed, tick=0.05)[0]
    sym = tradable(rt, sid, seed)[-1]["symbol"]
    base = {"account_id": acct["account_id"], "side": "buy", "quantity": 1, "trading_pin": acct["trading_pin"]}
    off_tick = on_tick(wide["last"] * 0.9, 0.05, up=False) + 0.01
    fails(rt, sid, seed, "place_stock_order", {**base, "symbol": wide["symbol"], "order_type": "limit",
                                               "limit_price": off_tick}, "tick size of $0.05", "limit_price")
    fails(rt, sid, seed, "place_stock_order", {**base, "symbol": wide["symbol"], "order_type": "stop",
                                               "stop_price": on_tick(wide["last"] * 1.1, 0.05, True) + 0.02},
          "tick size", "stop_price")
    fails(rt, sid, seed, "place_stock_order", {**base, "symbol": sym, "limit_price": 10.0},
          "limit_price only applies to limit orders")
    fails(rt, sid, seed, "place_stock_order", {**base, "symbol": sym, "order_type": "limit"},
          "a limit order needs limit_price")
    fails(rt, sid, seed, "place_stock_order", {**base, "symbol": sym, "order_type": "stop"},
          "a stop order needs stop_price")
    fails(rt, sid, seed, "place_stock_order", {**base, "symbol": sym, "order_type": "limit", "limit_price": 5.0,
                                               "stop_price": 4.0}, "stop_price only applies to stop orders")
    last = ok(rt, sid, seed, "get_stock_quote", {"symbol": sym})["last"]
    fails(rt, sid, seed, "place_stock_order", {**base, "symbol": sym, "order_type": "stop",
                                               "stop_price": on_tick(last * 0.95, 0.01, False)},
          "a buy stop must be above the last price", "stop_price")
    held = next(p for p in ok(rt, sid, seed, "get_portfolio_summary", {"account_id": acct["account_id"]})["positions"]
                if not p["halted"] and p["available_to_sell"] > 0)
    fails(rt, sid, seed, "place_stock_order", {**base, "side": "sell", "symbol": held["symbol"], "order_type": "stop",
                                               "stop_price": on_tick(held["last_price"] * 1.05, 0.1, True)},
          "a sell stop must be below the last price")
    stop = ok(rt, sid, seed, "place_stock_order", {**base, "symbol": sym, "order_type": "stop",
                                                   "stop_price": on_tick(last * 1.1, 0.01, True)})
    fails(rt, sid, seed, "modify_stock_order", {"account_id": acct["account_id"], "order_id": stop["order_id"],
                                                "limit_price": 5.0}, "limit_price only applies to limit orders")
    fails(rt, sid, seed, "modify_stock_order", {"account_id": acct["account_id"], "order_id": stop["order_id"],
                                                "stop_price": on_tick(last * 0.9, 0.01, False)},
          "a buy stop must be above")


def test_buying_power_and_no_short_selling(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    rows = accounts(rt, sid, seed)
    poor, rich = poorest(rows), richest(rows)
    sym = tradable(rt, sid, seed)[-1]
    fails(rt, sid, seed, "place_stock_order", {"account_id": poor["account_id"], "symbol": sym["symbol"],
                                               "side": "buy", "quantity": 10, "order_type": "limit",
                                               "limit_price": on_tick(sym["last"], 0.01, True),
                                               "trading_pin": poor["trading_pin"]}, "insufficient buying power")
    # no shorting, and shares promised to open sell orders count as gone
    fails(rt, sid, seed, "place_stock_order", {"account_id": rich["account_id"], "symbol": "ZZZZ", "side": "sell",
                                               "quantity": 1, "trading_pin": rich["trading_pin"]}, "unknown symbol")
    pos = next(p for p in ok(rt, sid, seed, "get_portfolio_summary", {"account_id": rich["account_id"]})["positions"]
               if not p["halted"] and p["available_to_sell"] >= 2 and p["quantity"] == p["available_to_sell"])
    not_held = next(i for i in tradable(rt, sid, seed) if i["symbol"] not in
                    {h["symbol"] for h in rich["holdings"]})
    fails(rt, sid, seed, "place_stock_order", {"account_id": rich["account_id"], "symbol": not_held["symbol"],
                                               "side": "sell", "quantity": 1, "order_type": "limit",
                                               "limit_price": not_held["last"], "trading_pin": rich["trading_pin"]},
          "holds 0 shares", "short selling is not allowed")
    high = on_tick(pos["last_price"] * 1.15, 0.1, True)
    ok(rt, sid, seed, "place_stock_order", {"account_id": rich["account_id"], "symbol": pos["symbol"], "side": "sell",
                                            "quantity": pos["quantity"] - 1, "order_type": "limit", "limit_price": high,
                                            "time_in_force": "gtc", "trading_pin": rich["trading_pin"]})
    fails(rt, sid, seed, "place_stock_order", {"account_id": rich["account_id"], "symbol": pos["symbol"],
                                               "side": "sell", "quantity": 2, "order_type": "limit",
                                               "limit_price": high, "trading_pin": rich["trading_pin"]},
          f"holds {pos['quantity']} shares", "already committed to open sell orders", "at most 1")
    # a market buy at the open is priced by walking the book
    to_open(rt, sid, seed, sym["symbol"])
    fails(rt, sid, seed, "place_stock_order", {"account_id": poor["account_id"], "symbol": sym["symbol"],
                                               "side": "buy", "quantity": 50, "trading_pin": poor["trading_pin"]},
          "insufficient buying power", "at market")
    # buying power counts what open buy orders hold back: a bigger bid needs the cash
    bid = ok(rt, sid, seed, "place_stock_order", {"account_id": poor["account_id"], "symbol": sym["symbol"],
                                                  "side": "buy", "quantity": 1, "order_type": "limit",
                                                  "limit_price": on_tick(min(sym["last"] * 0.5,
                                                                             poor["buying_power"] * 0.6), 0.01, False),
                                                  "time_in_force": "gtc", "trading_pin": poor["trading_pin"]})
    fails(rt, sid, seed, "modify_stock_order", {"account_id": poor["account_id"], "order_id": bid["order_id"],
                                                "quantity": 5}, "insufficient buying power")


def test_illegal_order_transitions(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 4
    orders = ok(rt, sid, seed, "trading_list_orders", {})
    done = {st: next(o for o in orders if o["status"] == st) for st in ("filled", "cancelled", "expired")}
    f = done["filled"]
    fails(rt, sid, seed, "cancel_stock_order", {"account_id": f["account_id"], "order_id": f["order_id"]},
          "already filled", "place a new sell order")
    fails(rt, sid, seed, "modify_stock_order", {"account_id": f["account_id"], "order_id": f["order_id"],
                                                "quantity": 500}, "cannot modify", "already filled")
    for st in ("cancelled", "expired"):
        o = done[st]
        fails(rt, sid, seed, "cancel_stock_order", {"account_id": o["account_id"], "order_id": o["order_id"]},
              f"already {st}", "order_id")
    live = next(o for o in orders if o["status"] == "open" and o["order_type"] == "limit")
    fails(rt, sid, seed, "modify_stock_order", {"account_id": live["account_id"], "order_id": live["order_id"]},
          "nothing to change")
    fails(rt, sid, seed, "modify_stock_order", {"account_id": live["account_id"], "order_id": live["order_id"],
                                                "stop_price": 1.0}, "stop_price only applies to stop orders")
    ok(rt, sid, seed, "cancel_stock_order", {"account_id": live["account_id"], "order_id": live["order_id"]})
    fails(rt, sid, seed, "cancel_stock_order", {"account_id": live["account_id"], "order_id": live["order_id"]},
          "already cancelled")


def test_cash_transfer_limits(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 5
    rows = accounts(rt, sid, seed)
    rich = richest(rows)
    ira = next(a for a in rows if a["account_type"] == "ira" and a["ira_contribution_room"] == 300)
    snap = state_of(rt, sid, seed)
    today = next(t for t in snap["cash_transfers"].values() if t["ny_date"] == "2026-06-01")
    early = next(a for a in rows if a["account_id"] == today["account_id"])
    pay = {"direction": "deposit"}
    fails(rt, sid, seed, "transfer_brokerage_cash", {**pay, "account_id": early["account_id"], "amount": 5000.01,
                                                     "trading_pin": early["trading_pin"]},
          "daily deposit limit", "at most $5,000.00 more")
    ok(rt, sid, seed, "transfer_brokerage_cash", {**pay, "account_id": early["account_id"], "amount": 5000,
                                                  "trading_pin": early["trading_pin"]})
    fails(rt, sid, seed, "transfer_brokerage_cash", {**pay, "account_id": ira["account_id"], "amount": 300.01,
                                                     "trading_pin": ira["trading_pin"]}, "IRA contribution limit")
    out = ok(rt, sid, seed, "transfer_brokerage_cash", {**pay, "account_id": ira["account_id"], "amount": 300,
                                                        "trading_pin": ira["trading_pin"]})
    assert out["account"]["ira_contribution_room"] == 0
    fails(rt, sid, seed, "transfer_brokerage_cash", {"direction": "withdraw", "account_id": ira["account_id"],
                                                     "amount": 1, "trading_pin": ira["trading_pin"]},
          "retirement withdrawals cannot be made online")
    fails(rt, sid, seed, "transfer_brokerage_cash", {"direction": "withdraw", "account_id": rich["account_id"],
                                                     "amount": round(rich["buying_power"] + 0.01, 2),
                                                     "trading_pin": rich["trading_pin"]}, "insufficient funds")
    out = ok(rt, sid, seed, "transfer_brokerage_cash", {"direction": "withdraw", "account_id": rich["account_id"],
                                                        "amount": rich["buying_power"],
                                                        "trading_pin": rich["trading_pin"]})
    assert out["account"]["buying_power"] == 0


def test_watchlist_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    acct = accounts(rt, sid, seed)[0]
    aid = acct["account_id"]
    syms = [i["symbol"] for i in tradable(rt, sid, seed)]
    wl = {"account_id": aid, "watchlist_name": "Robotics"}
    fails(rt, sid, seed, "update_stock_watchlist", wl, "nothing to change")
    fails(rt, sid, seed, "update_stock_watchlist", {**wl, "remove_symbols": [syms[0]]}, "has no watchlist named")
    made = ok(rt, sid, seed, "update_stock_watchlist", {**wl, "add_symbols": syms[:2]})
    assert made["created"] is True and [r["symbol"] for r in made["symbols"]] == syms[:2]
    fails(rt, sid, seed, "update_stock_watchlist", {**wl, "watchlist_name": "robotics", "add_symbols": [syms[1]]},
          "already on watchlist")
    fails(rt, sid, seed, "update_stock_watchlist", {**wl, "remove_symbols": [syms[3]]}, "is not on watchlist")
    for i in range(5 - len(acct["watchlists"]) - 1):
        ok(rt, sid, seed, "update_stock_watchlist", {**wl, "watchlist_name": f"List {i}", "add_symbols": [syms[0]]})
    fails(rt, sid, seed, "update_stock_watchlist", {**wl, "watchlist_name": "One too many", "add_symbols": [syms[0]]},
          "already has 5 watchlists")
    big = ok(rt, sid, seed, "search_stock_symbols", {"limit": 50})["results"]
    ok(rt, sid, seed, "update_stock_watchlist", {**wl, "add_symbols": [r["symbol"] for r in big[:25]
                                                                       if r["symbol"] not in syms[:2]][:23]})
    robotics = next(w for w in ok(rt, sid, seed, "list_stock_watchlists", {"account_id": aid})
                    if w["name"] == "Robotics")
    assert len(robotics["symbols"]) == 25
    extra = next(r["symbol"] for r in big if r["symbol"] not in {x["symbol"] for x in robotics["symbols"]})
    fails(rt, sid, seed, "update_stock_watchlist", {**wl, "add_symbols": [extra]}, "at most 25 tickers")


# ---------------------------------------------------------------- (4) workflows across the market clock
def test_premarket_limit_fills_at_the_open_then_a_sale_books_pnl(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    acct = richest(accounts(rt, sid, seed))
    aid = acct["account_id"]
    inst = tradable(rt, sid, seed)[-1]
    q = ok(rt, sid, seed, "get_stock_quote", {"symbol": inst["symbol"]})
    limit = on_tick(q["ask"] * 1.04, 0.01, True)
    placed = order(rt, sid, seed, acct, inst["symbol"], "buy", 20, order_type="limit", limit_price=limit)
    assert placed["status"] == "open" and placed["market"]["session"] == "pre_market"
    before = ok(rt, sid, seed, "get_portfolio_summary", {"account_id": aid})
    assert before["reserved_for_open_orders"] >= round(20 * limit, 2) - 0.01
    to_open(rt, sid, seed, inst["symbol"])
    got = next(o for o in ok(rt, sid, seed, "list_stock_orders", {"account_id": aid, "symbol": inst["symbol"]})
               if o["order_id"] == placed["order_id"])
    assert got["status"] == "filled" and got["closed_at"] == "2026-06-01T13:30:00+00:00"
    assert got["average_fill_price"] <= limit
    after = ok(rt, sid, seed, "get_portfolio_summary", {"account_id": aid})
    cost = round(sum(f["quantity"] * f["price"] for f in got["fills"]), 2)
    assert round(before["cash"] - after["cash"], 2) == cost
    sold = order(rt, sid, seed, acct, inst["symbol"], "sell", 5)
    assert sold["status"] == "filled"
    hist = ok(rt, sid, seed, "list_trade_executions", {"account_id": aid, "symbol": inst["symbol"], "side": "sell",
                                                       "since": "2026-06-01"})
    assert hist["executions"][0]["realized_pnl"] is not None and hist["count"] >= 1


def test_day_orders_expire_at_the_close_and_gtc_orders_stay(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    acct = richest(accounts(rt, sid, seed))
    inst = tradable(rt, sid, seed)[0]
    low = on_tick(inst["last"] * 0.85, 0.01, False)
    day = order(rt, sid, seed, acct, inst["symbol"], "buy", 3, order_type="limit", limit_price=low)
    gtc = order(rt, sid, seed, acct, inst["symbol"], "buy", 3, order_type="limit", limit_price=low,
                time_in_force="gtc")
    seeded_day = next(o for o in ok(rt, sid, seed, "trading_list_orders", {"status": "open"})
                      if o["time_in_force"] == "day" and o["order_id"] != day["order_id"])
    ok(rt, sid, seed, "trading_session_advance_clock", {"minutes": 10 * 60})  # 19:0x UTC: still open
    assert ok(rt, sid, seed, "list_stock_orders", {"account_id": acct["account_id"], "status": "live"})
    ok(rt, sid, seed, "trading_session_advance_clock", {"minutes": 60})  # past 16:00 New York
    mine = {o["order_id"]: o for o in ok(rt, sid, seed, "trading_list_orders", {})}
    assert mine[day["order_id"]]["status"] == "expired" and mine[day["order_id"]]["closed_at"].endswith("20:00:00+00:00")
    assert mine[seeded_day["order_id"]]["status"] == "expired"
    assert mine[gtc["order_id"]]["status"] == "open"
    fails(rt, sid, seed, "modify_stock_order", {"account_id": acct["account_id"], "order_id": day["order_id"],
                                                "quantity": 4}, "already expired")


def test_market_order_walks_levels_and_the_book_refills_next_bucket(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    acct = richest(accounts(rt, sid, seed))
    sym = tradable(rt, sid, seed)[0]["symbol"]
    to_open(rt, sid, seed, sym)
    book = ok(rt, sid, seed, "get_order_book_depth", {"symbol": sym, "levels": 3})
    a1, a2 = book["asks"][0], book["asks"][1]
    qty = a1["quantity"] + a2["quantity"] // 2
    filled = order(rt, sid, seed, acct, sym, "buy", qty)
    assert filled["status"] == "filled" and len(filled["fills"]) == 2
    assert [f["price"] for f in filled["fills"]] == [a1["price"], a2["price"]]
    assert a1["price"] < filled["average_fill_price"] < a2["price"]
    after = ok(rt, sid, seed, "get_order_book_depth", {"symbol": sym, "levels": 3})
    assert after["asks"][0] == {**a2, "quantity": a2["quantity"] - a2["quantity"] // 2}
    assert ok(rt, sid, seed, "get_stock_quote", {"symbol": sym})["last"] == a2["price"]
    ok(rt, sid, seed, "trading_session_advance_clock", {"minutes": 15})
    moved = ok(rt, sid, seed, "get_order_book_depth", {"symbol": sym, "levels": 3})
    assert len(moved["asks"]) == 3 and moved["asks"][0]["quantity"] >= 10
    # far more than the displayed depth: the rest is cancelled, the fills stay
    huge = order(rt, sid, seed, acct, sym, "buy", 60_000)
    assert huge["status"] == "cancelled" and 0 < huge["filled_quantity"] < 60_000
    assert "book depth exhausted" in huge["close_reason"]


def test_partial_fill_rests_and_cancel_keeps_the_fills(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 4
    acct = richest(accounts(rt, sid, seed))
    aid = acct["account_id"]
    sym = tradable(rt, sid, seed)[0]["symbol"]
    to_open(rt, sid, seed, sym)
    asks = ok(rt, sid, seed, "get_order_book_depth", {"symbol": sym, "levels": 3})["asks"]
    take = asks[0]["quantity"] + asks[1]["quantity"]
    part = order(rt, sid, seed, acct, sym, "buy", take + 100, order_type="limit", limit_price=asks[1]["price"])
    assert part["status"] == "partially_filled" and part["filled_quantity"] == take
    assert part["remaining_quantity"] == 100
    depth = ok(rt, sid, seed, "get_order_book_depth", {"symbol": sym, "levels": 8})
    assert depth["bids"][0]["price"] == asks[1]["price"] and depth["bids"][0]["customer_order_quantity"] == 100
    fails(rt, sid, seed, "modify_stock_order", {"account_id": aid, "order_id": part["order_id"], "quantity": take},
          f"already filled {take} shares")
    out = ok(rt, sid, seed, "cancel_stock_order", {"account_id": aid, "order_id": part["order_id"]})
    assert out["status"] == "cancelled" and out["filled_quantity"] == take
    assert out["released_buying_power"] == round(100 * asks[1]["price"], 2)


def test_stop_loss_triggers_when_a_sale_moves_the_last_price(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 5
    acct = richest(accounts(rt, sid, seed))
    aid = acct["account_id"]
    sym = tradable(rt, sid, seed)[0]["symbol"]
    to_open(rt, sid, seed, sym)
    order(rt, sid, seed, acct, sym, "buy", 1500)
    bids = ok(rt, sid, seed, "get_order_book_depth", {"symbol": sym, "levels": 3})["bids"]
    stop = order(rt, sid, seed, acct, sym, "sell", 10, order_type="stop", stop_price=bids[1]["price"],
                 time_in_force="gtc")
    assert stop["status"] == "open" and stop["triggered_at"] is None
    sale = order(rt, sid, seed, acct, sym, "sell", bids[0]["quantity"] + 1)
    assert sale["fills"][-1]["price"] == bids[1]["price"]
    got = next(o for o in ok(rt, sid, seed, "list_stock_orders", {"account_id": aid, "symbol": sym})
               if o["order_id"] == stop["order_id"])
    assert got["status"] == "filled" and got["triggered_at"] is not None
    assert got["average_fill_price"] <= bids[1]["price"]


def test_customers_resting_orders_cross_each_other_at_the_open(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    rows = accounts(rt, sid, seed)
    buyer = richest(rows)
    seller, pos = next((a, p) for a in rows if a["account_id"] != buyer["account_id"]
                       for p in ok(rt, sid, seed, "get_portfolio_summary", {"account_id": a["account_id"]})["positions"]
                       if not p["halted"] and p["available_to_sell"] >= 4)
    sym = pos["symbol"]
    tick = next(i["tick_size"] for i in ok(rt, sid, seed, "trading_list_instruments", {}) if i["symbol"] == sym)
    price = on_tick(ok(rt, sid, seed, "get_stock_quote", {"symbol": sym})["ask"] * 1.02, tick, True)
    sell = order(rt, sid, seed, seller, sym, "sell", 4, order_type="limit", limit_price=on_tick(price * 0.97, tick, False))
    buy = order(rt, sid, seed, buyer, sym, "buy", 4, order_type="limit", limit_price=price)
    assert sell["status"] == buy["status"] == "open"  # the market is closed: nothing crosses yet
    to_open(rt, sid, seed, sym)
    orders = {o["order_id"]: o for o in ok(rt, sid, seed, "trading_list_orders", {"status": "filled"})}
    assert orders[sell["order_id"]]["fills"][0]["price"] == price == orders[buy["order_id"]]["fills"][0]["price"]
    snap = state_of(rt, sid, seed)
    fill = snap["executions"][orders[buy["order_id"]]["fills"][0]["execution_id"]]
    assert fill["liquidity"] == "customer"


def test_volatility_pause_lifts_at_1030_new_york(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    acct = richest(accounts(rt, sid, seed))
    paused = next(i for i in ok(rt, sid, seed, "trading_list_instruments", {"halted": True}) if i["halt_until"])
    fails(rt, sid, seed, "place_stock_order", {"account_id": acct["account_id"], "symbol": paused["symbol"],
                                               "side": "buy", "quantity": 1, "order_type": "limit",
                                               "limit_price": 1.0, "trading_pin": acct["trading_pin"]}, "halted")
    ok(rt, sid, seed, "trading_session_advance_clock", {"minutes": 5 * 60 + 25})  # 14:26 UTC = 10:26 New York
    assert ok(rt, sid, seed, "get_stock_quote", {"symbol": paused["symbol"]})["halted"] is True
    ok(rt, sid, seed, "trading_session_advance_clock", {"minutes": 5})
    assert ok(rt, sid, seed, "get_stock_quote", {"symbol": paused["symbol"]})["halted"] is False
    order(rt, sid, seed, acct, paused["symbol"], "buy", 1)


# ---------------------------------------------------------------- (5) replay, reset, determinism
def test_replaying_the_same_calls_gives_the_same_state(rt: DomainRuntime) -> None:
    assert_replays_alike(rt, 2)


def test_unique_values_and_search(rt: DomainRuntime) -> None:
    sid = new_sid()
    ticks = {r["value"] for r in ok(rt, sid, 0, "trading_get_unique_values", {"field": "tick_size"})}
    assert {0.01, 0.05, 0.1} <= ticks
    kinds = {r["value"] for r in ok(rt, sid, 0, "trading_get_unique_values", {"field": "order_status"})}
    assert {"filled", "open", "cancelled"} <= kinds
    found = ok(rt, sid, 0, "search_stock_symbols", {"kind": "etf", "sort_by": "last_price", "limit": 3})
    prices = [r["last"] for r in found["results"]]
    assert prices == sorted(prices, reverse=True) and all(r["kind"] == "etf" for r in found["results"])
