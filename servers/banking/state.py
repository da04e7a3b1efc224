"""Banking records, the session state and the rules every money movement shares.

Money only moves through :func:`withdraw` / :func:`deposit` and every movement posts a transaction via
:func:`post`, so balances and statements never disagree. Scheduled transfers execute in
:func:`run_due_transfers`, the domain's ``on_time`` hook: whenever the session clock reaches their
date they run in id order (``scheduled`` -> ``executed``, or ``failed`` with the reason when the money
cannot move at that moment), and the daily transfer allowance resets when a new day begins.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Annotated, Literal

from pydantic import Field

from servers.kit import Cell, Counters, Phone, Sensitive, State, Table, ToolError, new_id, require, today

AccountType = Literal["checking", "savings", "money_market"]
TxCategory = Literal[
    "groceries", "dining", "utilities", "rent", "salary", "transfer", "shopping", "travel", "health",
    "entertainment", "bill_payment", "fees",
]
PayeeCategory = Literal["utilities", "rent", "credit_card", "insurance", "phone", "internet", "loan", "other"]
Pin = Annotated[Sensitive, Field(pattern=r"^\d{4}$")]
PhoneNumber = Annotated[Phone, Field(pattern=r"^[+(]?[0-9][0-9 ().-]{5,18}[0-9]$")]
"""The kit's :data:`~servers.kit.params.Phone`, also accepting the ``(555) 010-2233`` form every seeded
customer's number has (the kit pattern refuses a leading parenthesis)."""
MIN_OPENING_DEPOSIT = {"checking": 25.0, "savings": 100.0, "money_market": 1000.0}
INTEREST_RATES = {"checking": 0.01, "savings": 2.1, "money_market": 3.4}
DISPUTE_WINDOW_DAYS = 60
MAX_AMOUNT = 1_000_000.0
"""The bank's own ceiling on one payment (stricter than the kit's :data:`~servers.kit.params.Money`)."""


@dataclass
class Customer:
    customer_id: str
    name: str
    email: str
    phone: str
    address: str
    customer_since: str


@dataclass
class Account:
    account_id: str
    customer_id: str
    account_type: str
    nickname: str
    balance: float
    status: str  # active | frozen | closed
    pin: str
    daily_transfer_limit: float
    transferred_today: float
    interest_rate: float
    opened_on: str


@dataclass
class Transaction:
    transaction_id: str
    account_id: str
    date: str
    amount: float  # negative = money out
    description: str
    category: str
    status: str  # posted | pending | disputed


@dataclass
class Payee:
    payee_id: str
    customer_id: str
    name: str
    account_number: str
    category: str


@dataclass
class Card:
    card_id: str
    account_id: str
    customer_id: str
    card_type: str
    last4: str
    status: str  # active | frozen
    frozen_reason: str | None = None


@dataclass
class ScheduledTransfer:
    scheduled_transfer_id: str
    from_account_id: str
    to_account_id: str
    amount: float
    date: str
    status: str  # scheduled | cancelled | executed | failed
    executed_on: str | None = None
    transaction_id: str | None = None  # the debit posted on the source account when it executed
    failure_reason: str | None = None


@dataclass
class Dispute:
    dispute_id: str
    transaction_id: str
    reason: str
    status: str
    opened_on: str


class BankingState(State):
    customers: Table[Customer]
    accounts: Table[Account]
    transactions: Table[Transaction]
    payees: Table[Payee]
    cards: Table[Card]
    scheduled: Table[ScheduledTransfer]
    disputes: Table[Dispute]
    counters: Cell[Counters]


# ---------------------------------------------------------------- rules shared by the tools
def check_amount(amount: float, field: str = "amount") -> None:
    """The bank's per-payment ceiling (the kit already guarantees a positive amount in cents)."""
    if amount > MAX_AMOUNT:
        raise ToolError(f"{field} {amount:.2f} exceeds the bank's limit of {MAX_AMOUNT:,.2f} per payment",
                        field=field, code="limit")


def usable(s: BankingState, account_id: str, field: str) -> Account:
    """An account money may move through: it exists and is active (not frozen or closed)."""
    acc = require(s.accounts, account_id, field)
    if acc.status != "active":
        raise ToolError(f"account {account_id} is {acc.status}; no money can move through it", field=field,
                        code="illegal_state")
    return acc


def check_pin(acc: Account, pin: str) -> None:
    if acc.pin != pin:
        raise ToolError(f"incorrect PIN for account {acc.account_id}", field="pin", code="auth")


def withdraw(s: BankingState, account_id: str, amount: float, *, limit: bool) -> Account:
    """Take ``amount`` out of an account: refused on insufficient funds, and (``limit``) when the
    daily transfer allowance would be exceeded."""
    acc = s.accounts.edit(account_id)
    if acc.balance < amount:
        raise ToolError(f"insufficient funds in {account_id}: balance {acc.balance:.2f} < {amount:.2f}",
                        field="amount", code="insufficient_funds")
    if limit and acc.transferred_today + amount > acc.daily_transfer_limit:
        left = acc.daily_transfer_limit - acc.transferred_today
        raise ToolError(f"daily transfer limit of {acc.daily_transfer_limit:.2f} for {account_id} would be "
                        f"exceeded ({left:.2f} left today)", field="amount", code="limit")
    acc.balance = round(acc.balance - amount, 2)
    if limit:
        acc.transferred_today = round(acc.transferred_today + amount, 2)
    return acc


def deposit(s: BankingState, account_id: str, amount: float) -> Account:
    acc = s.accounts.edit(account_id)
    acc.balance = round(acc.balance + amount, 2)
    return acc


def post(s: BankingState, account_id: str, amount: float, description: str, category: str,
         on: date | None = None) -> str:
    """Post a transaction (dated today unless ``on`` is given) and return its id."""
    tid = new_id(s.counters, "TXN-N", 5)
    s.transactions.put(tid, Transaction(tid, account_id, (on or today(s)).isoformat(), round(amount, 2),
                                        description, category, "posted"))
    return tid


# ---------------------------------------------------------------- time: the on_time hook
def run_due_transfers(s: BankingState, before: datetime, after: datetime) -> None:
    """What happens while the session clock moves from ``before`` to ``after``.

    A new day resets every account's daily transfer allowance. Every scheduled transfer dated on or
    before the new date executes, in id order, dated on its own date: the money moves and a
    transaction is posted on both accounts (``executed``); if either account is no longer active or
    the source lacks the funds at that moment, nothing moves and the transfer is ``failed`` with the
    reason. Scheduled transfers are pre-authorised, so they do not use the daily allowance.
    """
    if after.date() > before.date():
        for acc in list(s.accounts.values()):
            if acc.transferred_today:
                s.accounts.edit(acc.account_id).transferred_today = 0.0
    due = after.date().isoformat()
    pending = sorted(sid for sid, sch in s.scheduled.items() if sch.status == "scheduled" and sch.date <= due)
    for sid in pending:
        _execute(s, sid)


def _execute(s: BankingState, sid: str) -> None:
    sch = s.scheduled.edit(sid)
    when = date.fromisoformat(sch.date)
    problem = None
    for account_id, role in ((sch.from_account_id, "source"), (sch.to_account_id, "destination")):
        acc = s.accounts.get(account_id)
        if acc is None or acc.status != "active":
            problem = f"{role} account {account_id} is {acc.status if acc else 'missing'}"
            break
    balance = s.accounts[sch.from_account_id].balance if problem is None else 0.0
    if problem is None and balance < sch.amount:
        problem = f"insufficient funds in {sch.from_account_id}: balance {balance:.2f} < {sch.amount:.2f}"
    sch.executed_on = when.isoformat()
    if problem is not None:
        sch.status, sch.failure_reason = "failed", problem
        return
    withdraw(s, sch.from_account_id, sch.amount, limit=False)
    deposit(s, sch.to_account_id, sch.amount)
    label = f"Scheduled transfer {sid} {sch.from_account_id} -> {sch.to_account_id}"
    sch.transaction_id = post(s, sch.from_account_id, -sch.amount, label, "transfer", on=when)
    post(s, sch.to_account_id, sch.amount, label, "transfer", on=when)
    sch.status = "executed"
