"""Customer and account reads, and contact details: profile, accounts, balances and statements."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from pydantic import Field

from servers.banking.state import BankingState, PhoneNumber, TxCategory
from servers.kit import EmailAddress, IsoDate, ToolError, parse_date, require, tool


@tool(consumes=("customer_id",), read_only=True)
def get_customer_profile(s: BankingState, customer_id: str) -> dict:
    """Get a customer's profile (name, contact details, customer since).

    Args:
        customer_id: The customer's id, e.g. CUS-0001.
    """
    return require(s.customers, customer_id, "customer_id")


@tool(consumes=("customer_id",))
def update_contact_info(s: BankingState, customer_id: str, email: EmailAddress | None = None,
                        phone: PhoneNumber | None = None, address: str | None = None) -> dict:
    """Update a customer's email, phone number and/or mailing address.

    Args:
        customer_id: The customer's id.
        email: New email address.
        phone: New phone number.
        address: New mailing address (one line).
    """
    require(s.customers, customer_id, "customer_id")
    if email is None and phone is None and address is None:
        raise ToolError("nothing to update: give at least one of email, phone, address", field="email")
    cust = s.customers.edit(customer_id)
    for key, value in (("email", email), ("phone", phone), ("address", address)):
        if value is not None:
            setattr(cust, key, value)
    return cust


@tool(consumes=("customer_id",), produces=("account_id",), read_only=True)
def list_accounts(s: BankingState, customer_id: str) -> list:
    """List a customer's accounts with type, nickname, status and balance.

    Args:
        customer_id: The customer's id.
    """
    require(s.customers, customer_id, "customer_id")
    return [{"account_id": a.account_id, "account_type": a.account_type, "nickname": a.nickname,
             "status": a.status, "balance": a.balance}
            for a in s.accounts.values() if a.customer_id == customer_id and a.status != "closed"]


@tool(consumes=("account_id",), read_only=True)
def get_account_balance(s: BankingState, account_id: str) -> dict:
    """Get the current balance and remaining daily transfer allowance of an account.

    Args:
        account_id: The account id, e.g. ACC-0003.
    """
    acc = require(s.accounts, account_id, "account_id")
    return {"account_id": account_id, "balance": acc.balance, "currency": "USD", "status": acc.status,
            "daily_transfer_remaining": round(acc.daily_transfer_limit - acc.transferred_today, 2)}


@tool(consumes=("account_id",), produces=("transaction_id",), read_only=True)
def list_transactions(s: BankingState, account_id: str, limit: Annotated[int, Field(ge=1, le=100)] = 10,
                      category: TxCategory | None = None, since: IsoDate | None = None) -> list:
    """List an account's most recent transactions, newest first.

    Args:
        account_id: The account id.
        limit: Maximum number of transactions to return.
        category: Only transactions of this category.
        since: Only transactions on or after this date (YYYY-MM-DD).
    """
    require(s.accounts, account_id, "account_id")
    start = parse_date(since, "since") if since else None
    rows = [t for t in s.transactions.values() if t.account_id == account_id
            and (category is None or t.category == category)
            and (start is None or date.fromisoformat(t.date) >= start)]
    rows.sort(key=lambda t: (t.date, t.transaction_id), reverse=True)
    return rows[:limit]
