"""Moving money: transfers now, bill payments to saved payees, and transfers scheduled for a later date
(they execute when the session clock reaches their date, see ``state.run_due_transfers``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from pydantic import Field

from servers.banking.state import (
    BankingState,
    Payee,
    PayeeCategory,
    Pin,
    ScheduledTransfer,
    check_amount,
    check_pin,
    deposit,
    post,
    usable,
    withdraw,
)
from servers.kit import IsoDate, Money, Name, ToolError, new_id, parse_date, require, today, tool

MAX_SCHEDULE_DAYS = 365


@tool(consumes=("account_id",), produces=("transaction_id",))
def transfer_funds(s: BankingState, from_account_id: str, to_account_id: str, amount: Money, pin: Pin,
                   memo: str | None = None) -> dict:
    """Transfer money now between two accounts at this bank.

    Args:
        from_account_id: Account the money leaves.
        to_account_id: Account the money goes to.
        amount: Amount in USD.
        pin: The 4-digit PIN of the source account, as given by the customer.
        memo: Optional note shown on both statements.
    """
    check_amount(amount)
    if from_account_id == to_account_id:
        raise ToolError("from_account_id and to_account_id are the same account", field="to_account_id")
    src = usable(s, from_account_id, "from_account_id")
    usable(s, to_account_id, "to_account_id")
    check_pin(src, pin)
    withdraw(s, from_account_id, amount, limit=True)
    deposit(s, to_account_id, amount)
    label = memo or f"Transfer {from_account_id} -> {to_account_id}"
    out_id = post(s, from_account_id, -amount, label, "transfer")
    in_id = post(s, to_account_id, amount, label, "transfer")
    return {"transaction_id": out_id, "credit_transaction_id": in_id, "amount": amount,
            "from_balance": s.accounts[from_account_id].balance, "status": "completed"}


@tool(consumes=("customer_id",), produces=("payee_id",), read_only=True)
def list_payees(s: BankingState, customer_id: str) -> list:
    """List the bill-pay payees a customer has saved.

    Args:
        customer_id: The customer's id.
    """
    require(s.customers, customer_id, "customer_id")
    return [p for p in s.payees.values() if p.customer_id == customer_id]


@tool(consumes=("customer_id",), produces=("payee_id",))
def add_payee(s: BankingState, customer_id: str, name: Name, account_number: Annotated[str, Field(
        pattern=r"^\d{6,17}$")], category: PayeeCategory = "other") -> dict:
    """Save a new bill-pay payee for a customer.

    Args:
        customer_id: The customer's id.
        name: The payee's name as it should appear.
        account_number: The customer's account number at the payee (6-17 digits).
        category: What kind of bill this payee is for.
    """
    require(s.customers, customer_id, "customer_id")
    for p in s.payees.values():
        if p.customer_id == customer_id and p.account_number == account_number and p.name == name:
            raise ToolError(f"payee '{name}' with that account number already exists ({p.payee_id})",
                            field="account_number", code="duplicate")
    pid = new_id(s.counters, "PAY-N")
    return s.payees.put(pid, Payee(pid, customer_id, name, account_number, category))


@tool(consumes=("account_id", "payee_id"), produces=("transaction_id",))
def pay_bill(s: BankingState, account_id: str, payee_id: str, amount: Money, pin: Pin) -> dict:
    """Pay a saved payee from one of the payee owner's accounts, today.

    Args:
        account_id: Account to pay from.
        payee_id: The saved payee to pay.
        amount: Amount in USD.
        pin: The 4-digit PIN of the paying account.
    """
    check_amount(amount)
    acc = usable(s, account_id, "account_id")
    payee = require(s.payees, payee_id, "payee_id")
    if payee.customer_id != acc.customer_id:
        raise ToolError(f"payee {payee_id} does not belong to the owner of {account_id}", field="payee_id")
    check_pin(acc, pin)
    withdraw(s, account_id, amount, limit=False)
    tid = post(s, account_id, -amount, f"Bill payment {payee.name}", "bill_payment")
    return {"transaction_id": tid, "payee": payee.name, "amount": amount,
            "balance": s.accounts[account_id].balance, "status": "completed"}


@tool(consumes=("account_id",), produces=("scheduled_transfer_id",))
def schedule_transfer(s: BankingState, from_account_id: str, to_account_id: str, amount: Money, date: IsoDate,
                      pin: Pin) -> dict:
    """Schedule a transfer between two accounts for a future date. It executes on that date if the
    source account then has the funds (otherwise it fails, and nothing moves).

    Args:
        from_account_id: Account the money will leave.
        to_account_id: Account the money will go to.
        amount: Amount in USD.
        date: The execution date (YYYY-MM-DD), after today.
        pin: The 4-digit PIN of the source account.
    """
    check_amount(amount)
    when, now = parse_date(date, "date"), today(s)
    if when <= now:
        raise ToolError(f"date {date} is not in the future (today is {now})", field="date")
    if when > now + timedelta(days=MAX_SCHEDULE_DAYS):
        raise ToolError("transfers can be scheduled at most one year ahead", field="date")
    if from_account_id == to_account_id:
        raise ToolError("from_account_id and to_account_id are the same account", field="to_account_id")
    src = usable(s, from_account_id, "from_account_id")
    usable(s, to_account_id, "to_account_id")
    check_pin(src, pin)
    sid = new_id(s.counters, "SCH")
    return s.scheduled.put(sid, ScheduledTransfer(sid, from_account_id, to_account_id, amount,
                                                  when.isoformat(), "scheduled"))


@tool(consumes=("scheduled_transfer_id",))
def cancel_scheduled_transfer(s: BankingState, scheduled_transfer_id: str) -> dict:
    """Cancel a scheduled transfer that has not run yet.

    Args:
        scheduled_transfer_id: The id returned when the transfer was scheduled, e.g. SCH-0001.
    """
    sch = require(s.scheduled, scheduled_transfer_id, "scheduled_transfer_id")
    if sch.status != "scheduled":
        raise ToolError(f"scheduled transfer {scheduled_transfer_id} is already {sch.status}",
                        field="scheduled_transfer_id", code="illegal_state")
    sch = s.scheduled.edit(scheduled_transfer_id)
    sch.status = "cancelled"
    return sch
