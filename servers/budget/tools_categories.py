"""Budget tools over categories and months: limits, locking and archiving, and the month summary."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.budget.state import (
    BudgetState,
    alert_views,
    category_month,
    check_limits,
    get_category,
    is_closed,
    month_of,
    month_spent,
    r2,
    recurring_view,
)
from servers.kit import Money, Name, Sensitive, ToolError, now, today, tool

Month = Annotated[str, Field(pattern=r"^\d{4}-(0[1-9]|1[0-2])$")]
AdminPin = Annotated[Sensitive, Field(pattern=r"^\d{4}$")]
CategoryStatus = Literal["active", "locked", "archived"]


def _month(s: BudgetState, month: str | None) -> str:
    current = month_of(today(s))
    if month is None:
        return current
    start = month_of(s.household.get().budget_start)
    if not start <= month <= current:
        raise ToolError(f"no budget for {month}: months run from {start} to {current}", field="month",
                        code="out_of_range")
    return month


@tool(produces=("category_id",), read_only=True)
def list_budget_categories(s: BudgetState, month: Month | None = None, status: CategoryStatus | None = None,
                           group: Literal["Essentials", "Lifestyle", "Family", "Home"] | None = None) -> dict:
    """Show the budget categories with their monthly limit and how much of it a month has used (spent,
    remaining, percent), plus whether each is active, locked or archived. Defaults to this month.

    Args:
        month: The month as YYYY-MM; omit for the current month.
        status: Only categories with this status.
        group: Only categories in this group.
    """
    month = _month(s, month)
    spent = month_spent(s, month)
    rows = [category_month(s, c, month, spent.get(c.category_id, 0.0)) for c in s.categories.values()
            if (status is None or c.status == status) and (group is None or c.group == group)]
    return {"month": month, "month_closed": is_closed(s, month), "categories": rows,
            "total_limit": r2(sum(r["monthly_limit"] for r in rows if r["status"] != "archived")),
            "total_spent": r2(sum(r["spent"] for r in rows))}


@tool(consumes=("category_id",), establishes=("category_active",))
def update_budget_category(s: BudgetState, category_id: str, monthly_limit: Money | None = None,
                           name: Name | None = None, status: CategoryStatus | None = None,
                           admin_pin: AdminPin | None = None) -> dict:
    """Change a budget category: its monthly limit, its name, or its status — lock it (no new spending),
    unlock or reactivate it, or archive it. Any status change needs the household admin's 4-digit PIN;
    a category with an active recurring bill cannot be archived, and an archived category must be
    reactivated before its limit or name can change.

    Args:
        category_id: The category, e.g. CAT-0003.
        monthly_limit: The new monthly spending limit.
        name: The new name; must not be used by another category.
        status: The new status.
        admin_pin: The household admin's 4-digit PIN, as the admin gave it; needed to change the status.
    """
    cat = get_category(s, category_id)
    if monthly_limit is None and name is None and status is None:
        raise ToolError("nothing to change: give monthly_limit, name or status", field="monthly_limit")
    if status is not None:
        if status == cat.status:
            raise ToolError(f"category '{cat.name}' is already {status}", field="status", code="illegal_state")
        if admin_pin is None:
            raise ToolError(f"changing the status of '{cat.name}' needs the household admin_pin", field="admin_pin",
                            code="auth")
        if admin_pin != s.household.get().admin_pin:
            raise ToolError("incorrect admin_pin: not the household admin's PIN", field="admin_pin", code="auth")
        if status == "archived":
            bills = [r.recurring_id for r in s.recurring.values() if r.category_id == category_id and r.status == "active"]
            if bills:
                raise ToolError(f"cannot archive '{cat.name}': recurring bill {', '.join(bills)} still posts into it; "
                                "cancel it first", field="status", code="illegal_state")
    elif cat.status == "archived":
        raise ToolError(f"category '{cat.name}' is archived; reactivate it (status active) to change it",
                        field="category_id", code="category_archived")
    if name is not None:
        clash = next((c for c in s.categories.values() if c.name.lower() == name.strip().lower()
                      and c.category_id != category_id), None)
        if clash is not None:
            raise ToolError(f"a category named '{clash.name}' already exists ({clash.category_id})", field="name",
                            code="duplicate")
        if name.strip() == cat.name:
            raise ToolError(f"the category is already named '{cat.name}'", field="name", code="illegal_state")
    if monthly_limit is not None and round(monthly_limit, 2) == cat.monthly_limit:
        raise ToolError(f"the monthly limit of '{cat.name}' is already {cat.monthly_limit:.2f}", field="monthly_limit",
                        code="illegal_state")
    cat = s.categories.edit(category_id)
    changed = []
    if monthly_limit is not None:
        cat.monthly_limit, changed = r2(monthly_limit), [*changed, "monthly_limit"]
    if name is not None:
        cat.name, changed = name.strip(), [*changed, "name"]
    if status is not None:
        cat.status, changed = status, [*changed, "status"]
    month = month_of(today(s))
    alerts = check_limits(s, category_id, month, now(s)) if "monthly_limit" in changed else []
    return {**category_month(s, cat, month), "changed": changed, "new_alerts": alert_views(s, alerts)}


@tool(produces=("recurring_id", "category_id"), read_only=True)
def get_budget_month_summary(s: BudgetState, month: Month | None = None) -> dict:
    """Summarise a month of the household budget: total limit, spent and remaining, spending by group,
    the categories over their limit, the top merchants, alerts raised, recurring bills posted or still
    due that month, and savings contributions. Defaults to this month.

    Args:
        month: The month as YYYY-MM; omit for the current month.
    """
    month = _month(s, month)
    spent = month_spent(s, month)
    cats = [c for c in s.categories.values() if c.status != "archived" or spent.get(c.category_id)]
    rows = [category_month(s, c, month, spent.get(c.category_id, 0.0)) for c in cats]
    groups: dict[str, float] = {}
    merchants: dict[str, float] = {}
    for e in s.expenses.values():
        if e.spent_on.startswith(month):
            group = s.categories[e.category_id].group
            groups[group] = r2(groups.get(group, 0.0) + e.amount)
            merchants[e.merchant] = r2(merchants.get(e.merchant, 0.0) + e.amount)
    total_limit = r2(sum(c.monthly_limit for c in cats if c.status != "archived"))
    total = r2(sum(spent.values()))
    posted = sorted({e.recurring_id for e in s.expenses.values() if e.recurring_id and e.spent_on.startswith(month)})
    return {
        "month": month, "month_closed": is_closed(s, month), "total_limit": total_limit, "total_spent": total,
        "remaining": r2(total_limit - total),
        "by_group": [{"group": g, "spent": v} for g, v in sorted(groups.items())],
        "over_budget": [r for r in rows if r["spent"] > r["monthly_limit"]],
        "top_merchants": [{"merchant": m, "spent": v}
                          for m, v in sorted(merchants.items(), key=lambda kv: (-kv[1], kv[0]))[:5]],
        "alerts": [{"alert_id": a.alert_id, "kind": a.kind, "message": a.message, "created_at": a.created_at}
                   for a in s.alerts.values() if a.month == month],
        "recurring_posted": [recurring_view(s, s.recurring[r]) for r in posted],
        "recurring_upcoming": [recurring_view(s, r) for r in s.recurring.values()
                               if r.status == "active" and r.next_due.startswith(month)],
        "savings_contributed": r2(sum(c["amount"] for g in s.goals.values() for c in g.contributions
                                      if c["on"].startswith(month))),
    }
