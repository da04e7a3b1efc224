"""Budget tools over expenses: record (optionally for a payments invoice), search, correct, remove."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from servers.budget.state import (
    BudgetState,
    Expense,
    alert_views,
    category_month,
    check_limits,
    check_spent_on,
    closed_month,
    expense_view,
    find_member,
    get_category,
    get_expense,
    month_of,
    r2,
    spendable,
)
from servers.kit import IsoDate, Money, Name, Text, ToolError, iso, new_id, now, today, tool

InvoiceId = Annotated[str, Field(pattern=r"^INV-\d{4}$")]
Month = Annotated[str, Field(pattern=r"^\d{4}-(0[1-9]|1[0-2])$")]


def _invoice(s: BudgetState, invoice_id: str) -> Any:
    ref = s.payment_invoices.get(invoice_id)
    if ref is None:
        raise ToolError(f"unknown invoice_id '{invoice_id}': no such invoice on the payments platform",
                        field="invoice_id", code="not_found")
    admin = next(m for m in s.members.values() if m.role == "admin")
    if ref.customer_name != admin.name:
        raise ToolError(f"invoice {invoice_id} from {ref.merchant_name} is billed to {ref.customer_name}, not to "
                        f"this household", field="invoice_id", code="not_owner")
    if ref.status in ("void", "draft"):
        raise ToolError(f"invoice {invoice_id} is {ref.status}: there is nothing to pay, so it cannot be recorded",
                        field="invoice_id", code="illegal_state")
    dup = next((e for e in s.expenses.values() if e.invoice_id == invoice_id), None)
    if dup is not None:
        raise ToolError(f"invoice {invoice_id} is already recorded as expense {dup.expense_id} on {dup.spent_on}",
                        field="invoice_id", code="duplicate")
    return ref


@tool(produces=("expense_id",), consumes=("category_id", "invoice_id"), requires=("category_active",))
def record_budget_expense(s: BudgetState, category_id: str, amount: Money | None = None,
                          merchant: Name | None = None, spent_on: IsoDate | None = None, note: Text | None = None,
                          paid_by: Name | None = None, invoice_id: InvoiceId | None = None,
                          allow_duplicate: bool = False) -> dict:
    """Add a purchase or bill to the household budget in an active category; it counts toward that
    month's total and may raise an approaching-limit or over-budget alert. The date may be at most a
    week ahead and not in a closed month. A bill from the payments platform can be recorded by its
    invoice number, which fills in the merchant and amount (each invoice only once). The same merchant,
    amount and date as an existing expense is refused as a likely duplicate unless confirmed.

    Args:
        category_id: The budget category, e.g. CAT-0002.
        amount: What was spent; optional when invoice_id is given (then it must match the invoice).
        merchant: Where the money was spent; optional when invoice_id is given.
        spent_on: The date of the expense as YYYY-MM-DD; omit for today.
        note: A free-text note.
        paid_by: Which household member paid (first or full name); omit for the household admin.
        invoice_id: The payments-platform invoice this expense pays, e.g. INV-0042.
        allow_duplicate: Record it even though an identical expense exists (a genuine second purchase).
    """
    cat = get_category(s, category_id)
    spendable(cat)
    if invoice_id is not None:
        ref = _invoice(s, invoice_id)
        if amount is not None and round(amount, 2) != ref.amount:
            raise ToolError(f"amount {amount:.2f} does not match invoice {invoice_id} ({ref.amount:.2f} "
                            f"{ref.currency}); omit amount to use the invoice total", field="amount",
                            code="mismatch")
        amount, merchant = ref.amount, merchant or ref.merchant_name
    if amount is None:
        raise ToolError("amount is required unless invoice_id is given", field="amount")
    if merchant is None or not merchant.strip():
        raise ToolError("merchant is required unless invoice_id is given", field="merchant")
    day = check_spent_on(s, spent_on) if spent_on is not None else today(s)
    who = find_member(s, paid_by)
    amount, merchant = r2(amount), merchant.strip()
    if not allow_duplicate:
        dup = next((e for e in s.expenses.values() if e.spent_on == day.isoformat() and e.amount == amount
                    and e.merchant.lower() == merchant.lower()), None)
        if dup is not None:
            raise ToolError(f"possible duplicate of expense {dup.expense_id} ({dup.merchant}, {dup.amount:.2f} on "
                            f"{dup.spent_on}); set allow_duplicate to record it anyway", field="allow_duplicate",
                            code="duplicate")
    eid = new_id(s.counters, "EXP")
    e = s.expenses.put(eid, Expense(eid, category_id, amount, merchant, day.isoformat(), note, who, invoice_id, None,
                                    iso(now(s))))
    month = month_of(day)
    alerts = check_limits(s, category_id, month, now(s))
    return {"expense": expense_view(s, e), "category_month": category_month(s, cat, month),
            "new_alerts": alert_views(s, alerts)}


@tool(produces=("expense_id",), consumes=("category_id",), read_only=True)
def list_budget_expenses(s: BudgetState, category_id: str | None = None, month: Month | None = None,
                         merchant: str | None = None, paid_by: Name | None = None, min_amount: Money | None = None,
                         max_amount: Money | None = None, invoice_linked: bool | None = None,
                         sort_by: Literal["date", "amount"] = "date",
                         limit: Annotated[int, Field(ge=1, le=100)] = 25,
                         offset: Annotated[int, Field(ge=0, le=10_000)] = 0) -> dict:
    """Search the household's expenses, newest (or largest) first, with the total of everything that
    matched.

    Args:
        category_id: Only expenses in this category.
        month: Only expenses dated in this month (YYYY-MM).
        merchant: Case-insensitive part of the merchant name.
        paid_by: Only expenses paid by this member (first or full name).
        min_amount: Only expenses of at least this amount.
        max_amount: Only expenses of at most this amount.
        invoice_linked: Only expenses that pay a payments invoice (true) or only those that do not (false).
        sort_by: Newest first by date, or largest first by amount.
        limit: How many expenses to return (1-100).
        offset: How many matching expenses to skip, for paging.
    """
    if category_id is not None:
        get_category(s, category_id)
    who = find_member(s, paid_by) if paid_by is not None else None
    if min_amount is not None and max_amount is not None and min_amount > max_amount:
        raise ToolError("min_amount is greater than max_amount", field="min_amount")
    needle = (merchant or "").strip().lower()
    rows = [e for e in s.expenses.values()
            if (category_id is None or e.category_id == category_id) and (month is None or e.spent_on.startswith(month))
            and needle in e.merchant.lower() and (who is None or e.paid_by == who)
            and (min_amount is None or e.amount >= min_amount) and (max_amount is None or e.amount <= max_amount)
            and (invoice_linked is None or (e.invoice_id is not None) == invoice_linked)]
    if sort_by == "amount":
        rows.sort(key=lambda e: (-e.amount, e.spent_on, e.expense_id))
    else:
        rows.sort(key=lambda e: (e.spent_on, e.created_at, e.expense_id), reverse=True)
    return {"total": len(rows), "total_amount": r2(sum(e.amount for e in rows)), "offset": offset,
            "expenses": [expense_view(s, e) for e in rows[offset:offset + limit]]}


@tool(consumes=("expense_id", "category_id"), requires=("category_active",))
def update_budget_expense(s: BudgetState, expense_id: str, category_id: str | None = None,
                          amount: Money | None = None, merchant: Name | None = None,
                          spent_on: IsoDate | None = None, note: Text | None = None) -> dict:
    """Correct an expense: move it to another (active) category, or fix its amount, merchant, date or
    note. Expenses in a closed month are final, and the amount and merchant of an expense recorded
    for a payments invoice come from the invoice and cannot be edited.

    Args:
        expense_id: The expense, e.g. EXP-0120.
        category_id: The category to move it to.
        amount: The corrected amount.
        merchant: The corrected merchant name.
        spent_on: The corrected date as YYYY-MM-DD.
        note: A new note (replaces the old one).
    """
    e = get_expense(s, expense_id)
    if all(v is None for v in (category_id, amount, merchant, spent_on, note)):
        raise ToolError("nothing to change: give category_id, amount, merchant, spent_on or note", field="expense_id")
    closed_month(s, month_of(e.spent_on), "expense_id")
    if e.invoice_id is not None and (amount is not None or merchant is not None):
        raise ToolError(f"expense {expense_id} pays invoice {e.invoice_id}: its amount and merchant come from the "
                        "invoice and cannot be edited", field="amount" if amount is not None else "merchant",
                        code="illegal_state")
    if category_id is not None:
        if category_id == e.category_id:
            raise ToolError(f"expense {expense_id} is already in that category", field="category_id",
                            code="illegal_state")
        spendable(get_category(s, category_id))
    day = check_spent_on(s, spent_on) if spent_on is not None else None
    old = (e.category_id, month_of(e.spent_on))
    e = s.expenses.edit(expense_id)
    if category_id is not None:
        e.category_id = category_id
    if amount is not None:
        e.amount = r2(amount)
    if merchant is not None:
        e.merchant = merchant.strip()
    if day is not None:
        e.spent_on = day.isoformat()
    if note is not None:
        e.note = note
    new = (e.category_id, month_of(e.spent_on))
    alerts = check_limits(s, *new, now(s))
    out = {"expense": expense_view(s, e), "category_month": category_month(s, s.categories[new[0]], new[1]),
           "new_alerts": alert_views(s, alerts)}
    if old != new:
        out["previous_category_month"] = category_month(s, s.categories[old[0]], old[1])
    return out


@tool(consumes=("expense_id",))
def delete_budget_expense(s: BudgetState, expense_id: str) -> dict:
    """Remove an expense recorded by mistake (for example a duplicate); the month's total drops by its
    amount. Expenses in a closed month are final.

    Args:
        expense_id: The expense, e.g. EXP-0120.
    """
    e = get_expense(s, expense_id)
    closed_month(s, month_of(e.spent_on), "expense_id")
    view = expense_view(s, e)
    s.expenses.delete(expense_id)
    return {"deleted": view, "category_month": category_month(s, s.categories[e.category_id], month_of(e.spent_on))}
