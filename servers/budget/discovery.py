"""Budget discovery tools (hidden from the model): the household (members and the admin PIN a
synthesized admin must state), categories with this month's standing, recurring bills, goals, linkable
payments invoices, and categorical values."""

from __future__ import annotations

from typing import Literal

from servers.budget.state import (
    BudgetState,
    category_month,
    expense_view,
    goal_view,
    is_closed,
    month_of,
    month_spent,
    recurring_view,
)
from servers.kit import discovery, today, value_counts


@discovery(produces=("category_id", "recurring_id", "goal_id"))
def budget_get_household(s: BudgetState) -> dict:
    """The household: name, admin PIN, members, categories with this month's spending, recurring bills,
    savings goals, and the payments invoices billed to the household that are not recorded yet."""
    h = s.household.get()
    month = month_of(today(s))
    spent = month_spent(s, month)
    admin = next(m for m in s.members.values() if m.role == "admin")
    recorded = {e.invoice_id for e in s.expenses.values() if e.invoice_id}
    return {
        "name": h.name, "currency": h.currency, "admin_pin": h.admin_pin, "budget_start": h.budget_start,
        "members": [{"member_id": m.member_id, "name": m.name, "email": m.email, "role": m.role}
                    for m in s.members.values()],
        "categories": [category_month(s, c, month, spent.get(c.category_id, 0.0)) for c in s.categories.values()],
        "recurring": [recurring_view(s, r) for r in s.recurring.values()],
        "goals": [goal_view(s, g) for g in s.goals.values()],
        "unrecorded_invoices": [{"invoice_id": r.invoice_id, "merchant": r.merchant_name, "amount": r.amount,
                                 "status": r.status, "issued_on": r.issued_on}
                                for r in s.payment_invoices.values()
                                if r.customer_name == admin.name and r.status in ("open", "paid")
                                and r.invoice_id not in recorded],
    }


@discovery(produces=("expense_id",))
def budget_list_expenses(s: BudgetState, month: str | None = None, category_id: str | None = None) -> list:
    """Every expense (optionally of one month YYYY-MM or one category) with whether its month is still open.

    Args:
        month: Only expenses of this month (YYYY-MM).
        category_id: Only expenses in this category.
    """
    return [{**expense_view(s, e), "month_open": not is_closed(s, month_of(e.spent_on))}
            for e in s.expenses.values()
            if (month is None or e.spent_on.startswith(month)) and (category_id is None or e.category_id == category_id)]


@discovery
def budget_get_unique_values(s: BudgetState, field: Literal[
        "merchant", "category", "category_group", "category_status", "paid_by", "month", "alert_kind",
        "goal_status"]) -> list:
    """Distinct values of a categorical field with their counts.

    Args:
        field: Which field to enumerate.
    """
    values = {
        "merchant": lambda: [e.merchant for e in s.expenses.values()],
        "category": lambda: [s.categories[e.category_id].name for e in s.expenses.values()],
        "category_group": lambda: [c.group for c in s.categories.values()],
        "category_status": lambda: [c.status for c in s.categories.values()],
        "paid_by": lambda: [s.members[e.paid_by].name for e in s.expenses.values()],
        "month": lambda: [e.spent_on[:7] for e in s.expenses.values()],
        "alert_kind": lambda: [a.kind for a in s.alerts.values()],
        "goal_status": lambda: [g.status for g in s.goals.values()],
    }[field]()
    return value_counts(values)
