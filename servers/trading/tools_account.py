"""Trading tools for accounts: finding brokerage accounts, the portfolio with P&L, moving cash."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.kit import Money, Name, Sensitive, ToolError, iso, new_id, now, tool
from servers.trading.market import bucket_at, day_stats, last_cents, local
from servers.trading.state import (
    DAILY_DEPOSIT_LIMIT_CENTS,
    AccountType,
    CashTransfer,
    TradingState,
    buying_power_cents,
    check_pin,
    committed_shares,
    dollars,
    get_account,
    to_cents,
)
from servers.trading.views import account_view

TradingPin = Annotated[Sensitive, Field(pattern=r"^\d{6}$")]


def _market_value_cents(s: TradingState, account_id: str) -> int:
    k = bucket_at(now(s))
    return sum(p.quantity * last_cents(s, s.instruments[p.symbol], k)
               for p in s.positions.values() if p.account_id == account_id)


@tool(produces=("account_id",), read_only=True)
def list_brokerage_accounts(s: TradingState, owner_name: Name | None = None,
                            account_type: AccountType | None = None) -> list:
    """List brokerage accounts with their cash, buying power and total value, optionally only one
    person's accounts or one kind of account.

    Args:
        owner_name: Only accounts whose owner's name contains this text (case-insensitive).
        account_type: Only accounts of this kind: individual, joint or ira.
    """
    rows = []
    needle = (owner_name or "").strip().lower()
    for acct in s.accounts.values():
        if needle not in acct.owner_name.lower() or (account_type and acct.account_type != account_type):
            continue
        invested = _market_value_cents(s, acct.account_id)
        rows.append({**account_view(s, acct), "invested_value": dollars(invested),
                     "total_value": dollars(invested + acct.cash_cents),
                     "positions": sum(1 for p in s.positions.values() if p.account_id == acct.account_id)})
    if owner_name and not rows:
        raise ToolError(f"no brokerage account owner matches '{owner_name}'", field="owner_name", code="not_found")
    return rows


@tool(consumes=("account_id",), produces=("symbol",), read_only=True)
def get_portfolio_summary(s: TradingState, account_id: str,
                          sort_by: Literal["market_value", "unrealized_pnl", "symbol"] = "market_value") -> dict:
    """Show an account's holdings at current prices: shares, average cost, market value, unrealized and
    realized profit or loss, today's change, plus cash and buying power.

    Args:
        account_id: The brokerage account, e.g. BRK-1004.
        sort_by: Order of the positions: largest market value first, largest unrealized gain first, or by ticker.
    """
    acct = get_account(s, account_id)
    k = bucket_at(now(s))
    rows = []
    for pos in s.positions.values():
        if pos.account_id != account_id:
            continue
        inst = s.instruments[pos.symbol]
        last = last_cents(s, inst, k)
        value = pos.quantity * last
        prev = int(day_stats(s, inst, k)["prev_close"])  # type: ignore[call-overload]
        rows.append({
            "symbol": pos.symbol, "name": inst.name, "quantity": pos.quantity,
            "available_to_sell": pos.quantity - committed_shares(s, account_id, pos.symbol),
            "average_cost": round(pos.cost_basis_cents / pos.quantity / 100, 4), "last_price": dollars(last),
            "market_value": dollars(value), "cost_basis": dollars(pos.cost_basis_cents),
            "unrealized_pnl": dollars(value - pos.cost_basis_cents),
            "unrealized_pnl_percent": round((value - pos.cost_basis_cents) * 100 / pos.cost_basis_cents, 2),
            "day_change": dollars(pos.quantity * (last - prev)), "realized_pnl": dollars(pos.realized_pnl_cents),
            "halted": inst.halted,
        })
    key = {"market_value": lambda r: -r["market_value"], "unrealized_pnl": lambda r: -r["unrealized_pnl"],
           "symbol": lambda r: r["symbol"]}[sort_by]
    rows.sort(key=key)
    invested = sum(r["market_value"] for r in rows)
    total = invested + acct.cash_cents / 100
    for r in rows:
        r["weight_percent"] = round(r["market_value"] * 100 / total, 2) if total else 0.0
    return {
        **account_view(s, acct), "positions": rows, "invested_value": round(invested, 2),
        "total_value": round(total, 2), "unrealized_pnl": round(sum(r["unrealized_pnl"] for r in rows), 2),
        "realized_pnl_lifetime": dollars(acct.realized_pnl_cents), "as_of": iso(now(s)),
    }


@tool(consumes=("account_id",), produces=("cash_transfer_id",))
def transfer_brokerage_cash(s: TradingState, account_id: str, direction: Literal["deposit", "withdraw"],
                            amount: Money, trading_pin: TradingPin) -> dict:
    """Move cash between a brokerage account and its linked bank account. Deposits raise buying power
    at once; withdrawals can only take cash that open buy orders do not hold back. Needs the account's
    trading PIN.

    Args:
        account_id: The brokerage account, e.g. BRK-1004.
        direction: deposit (bank to brokerage) or withdraw (brokerage to bank).
        amount: Dollars to move.
        trading_pin: The account holder's 6-digit trading PIN.
    """
    acct = get_account(s, account_id)
    check_pin(acct, trading_pin)
    cents = to_cents(amount)
    at = now(s)
    ny_date = local(at).date().isoformat()
    if direction == "deposit":
        if acct.account_type == "ira":
            room = acct.ira_contribution_room_cents or 0
            if cents > room:
                raise ToolError(f"IRA contribution limit exceeded: {account_id} can take at most ${room / 100:,.2f} "
                                "more this tax year", field="amount", code="limit_exceeded")
        else:
            today = sum(t.amount_cents for t in s.cash_transfers.values()
                        if t.account_id == account_id and t.direction == "deposit" and t.ny_date == ny_date)
            if today + cents > DAILY_DEPOSIT_LIMIT_CENTS:
                left = max(0, DAILY_DEPOSIT_LIMIT_CENTS - today)
                raise ToolError(f"daily deposit limit of ${DAILY_DEPOSIT_LIMIT_CENTS / 100:,.0f} reached: "
                                f"${today / 100:,.2f} already deposited today, at most ${left / 100:,.2f} more "
                                "until tomorrow (New York time)", field="amount", code="limit_exceeded")
    else:
        if acct.account_type == "ira":
            raise ToolError(f"{account_id} is an IRA: retirement withdrawals cannot be made online (taxes and "
                            "penalties apply); only individual and joint accounts can withdraw here",
                            field="account_id", code="not_allowed")
        free = buying_power_cents(s, account_id)
        if cents > free:
            raise ToolError(f"insufficient funds: ${free / 100:,.2f} can be withdrawn (cash ${acct.cash_cents / 100:,.2f} "
                            "minus what open buy orders hold back); cancel orders or withdraw less",
                            field="amount", code="insufficient_funds")
    edited = s.accounts.edit(account_id)
    edited.cash_cents += cents if direction == "deposit" else -cents
    if direction == "deposit" and edited.ira_contribution_room_cents is not None:
        edited.ira_contribution_room_cents -= cents
    tid = new_id(s.counters, "CSH")
    s.cash_transfers.put(tid, CashTransfer(tid, account_id, direction, cents, acct.linked_bank, iso(at), ny_date))
    return {"transfer_id": tid, "direction": direction, "amount": dollars(cents), "bank": acct.linked_bank,
            "created_at": iso(at), "account": account_view(s, edited)}
