"""Account management: open a new account funded from an existing one, and change an account's PIN."""

from __future__ import annotations

from servers.banking.state import (
    INTEREST_RATES,
    MIN_OPENING_DEPOSIT,
    Account,
    AccountType,
    BankingState,
    Pin,
    check_amount,
    check_pin,
    post,
    usable,
    withdraw,
)
from servers.kit import Money, ToolError, new_id, require, today, tool


@tool(consumes=("customer_id", "account_id"), produces=("account_id",))
def open_account(s: BankingState, customer_id: str, account_type: AccountType, initial_deposit: Money,
                 funding_account_id: str, pin: Pin) -> dict:
    """Open a new account for an existing customer, funded from one of their accounts.

    Args:
        customer_id: The customer's id.
        account_type: The kind of account to open.
        initial_deposit: Opening deposit in USD (checking >= 25, savings >= 100, money_market >= 1000).
        funding_account_id: The customer's account that funds the deposit.
        pin: The 4-digit PIN of the funding account; the new account gets the same PIN.
    """
    check_amount(initial_deposit, "initial_deposit")
    require(s.customers, customer_id, "customer_id")
    src = usable(s, funding_account_id, "funding_account_id")
    if src.customer_id != customer_id:
        raise ToolError(f"account {funding_account_id} does not belong to {customer_id}",
                        field="funding_account_id")
    minimum = MIN_OPENING_DEPOSIT[account_type]
    if initial_deposit < minimum:
        raise ToolError(f"a {account_type} account needs an opening deposit of at least {minimum:.2f}",
                        field="initial_deposit")
    check_pin(src, pin)
    withdraw(s, funding_account_id, initial_deposit, limit=False)
    aid = new_id(s.counters, "ACC-N")
    acc = s.accounts.put(aid, Account(aid, customer_id, account_type, f"New {account_type.replace('_', ' ')}",
                                      round(initial_deposit, 2), "active", pin, 5000.0, 0.0,
                                      INTEREST_RATES[account_type], today(s).isoformat()))
    post(s, funding_account_id, -initial_deposit, f"Opening deposit {aid}", "transfer")
    post(s, aid, initial_deposit, f"Opening deposit from {funding_account_id}", "transfer")
    return {"account_id": aid, "account_type": account_type, "balance": acc.balance, "status": "active"}


@tool(consumes=("account_id",))
def change_pin(s: BankingState, account_id: str, current_pin: Pin, new_pin: Pin) -> dict:
    """Change the 4-digit PIN of an account.

    Args:
        account_id: The account id.
        current_pin: The account's current PIN.
        new_pin: The new PIN (4 digits, different from the current one).
    """
    acc = require(s.accounts, account_id, "account_id")
    check_pin(acc, current_pin)
    if new_pin == current_pin:
        raise ToolError("new_pin must differ from current_pin", field="new_pin")
    if len(set(new_pin)) == 1:
        raise ToolError("new_pin must not be four identical digits", field="new_pin")
    s.accounts.edit(account_id).pin = new_pin
    return {"account_id": account_id, "pin_changed": True}
