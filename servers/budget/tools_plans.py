"""Budget tools for what lies ahead: recurring bills (posted automatically on their day) and savings goals."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Literal

from pydantic import Field

from servers.budget.state import (
    MAX_ACTIVE_GOALS,
    BudgetState,
    Goal,
    Recurring,
    add_month,
    find_member,
    get_category,
    goal_view,
    r2,
    raise_alert,
    recurring_view,
    spendable,
)
from servers.kit import IsoDate, Money, Name, Text, ToolError, iso, new_id, now, require, today, tool

Month = Annotated[str, Field(pattern=r"^\d{4}-(0[1-9]|1[0-2])$")]


@tool(produces=("recurring_id",), consumes=("category_id",), requires=("category_active",))
def schedule_recurring_expense(s: BudgetState, category_id: str, merchant: Name, amount: Money,
                               day_of_month: Annotated[int, Field(ge=1, le=28)],
                               starting_month: Month | None = None, paid_by: Name | None = None) -> dict:
    """Set up a bill that repeats every month (rent, a subscription, insurance): on its day it is posted
    automatically as an expense in the (active) category. The first payment is this month if the day
    is still ahead, otherwise next month, unless a later starting month is given.

    Args:
        category_id: The budget category the bill is posted to.
        merchant: Who is paid every month.
        amount: The monthly amount.
        day_of_month: The day of the month it is paid (1-28).
        starting_month: The first month it is paid (YYYY-MM); must not be in the past.
        paid_by: Which household member pays it (first or full name); omit for the household admin.
    """
    cat = get_category(s, category_id)
    spendable(cat)
    t = today(s)
    first = date(t.year, t.month, day_of_month)
    if first < t:
        first = add_month(first, day_of_month)
    if starting_month is not None:
        wanted = date(int(starting_month[:4]), int(starting_month[5:]), day_of_month)
        if wanted < t:
            raise ToolError(f"starting_month {starting_month} with day {day_of_month} is in the past (today is "
                            f"{t.isoformat()})", field="starting_month", code="out_of_range")
        if wanted > t + timedelta(days=366):
            raise ToolError("starting_month must be within the next year", field="starting_month", code="out_of_range")
        first = wanted
    amount, merchant = r2(amount), merchant.strip()
    dup = next((r for r in s.recurring.values() if r.status == "active" and r.merchant.lower() == merchant.lower()
                and r.amount == amount), None)
    if dup is not None:
        raise ToolError(f"{merchant} {amount:.2f} is already scheduled as {dup.recurring_id} (day {dup.day_of_month})",
                        field="merchant", code="duplicate")
    rid = new_id(s.counters, "REC")
    rec = s.recurring.put(rid, Recurring(rid, category_id, merchant, amount, day_of_month, first.isoformat(), "active",
                                         find_member(s, paid_by), iso(now(s))))
    return recurring_view(s, rec)


@tool(consumes=("recurring_id",))
def cancel_recurring_expense(s: BudgetState, recurring_id: str) -> dict:
    """Stop a recurring bill: nothing more is posted for it (expenses already posted stay).

    Args:
        recurring_id: The recurring bill, e.g. REC-0002.
    """
    rec = require(s.recurring, recurring_id, "recurring_id")
    if rec.status == "cancelled":
        raise ToolError(f"recurring bill {recurring_id} ({rec.merchant}) was already cancelled on "
                        f"{(rec.cancelled_at or '')[:10]}", field="recurring_id", code="illegal_state")
    rec = s.recurring.edit(recurring_id)
    rec.status, rec.cancelled_at = "cancelled", iso(now(s))
    return recurring_view(s, rec)


@tool(produces=("goal_id",), read_only=True)
def list_savings_goals(s: BudgetState, status: Literal["active", "completed", "missed"] | None = None) -> list:
    """Show the household's savings goals with progress: saved, remaining, percent, days left and how much
    per month would still reach the target in time.

    Args:
        status: Only goals with this status.
    """
    return [goal_view(s, g) for g in s.goals.values() if status is None or g.status == status]


@tool(produces=("goal_id",))
def create_savings_goal(s: BudgetState, name: Name, target_amount: Money, target_date: IsoDate,
                        initial_deposit: Money | None = None) -> dict:
    """Start saving toward something: a named goal with a target amount and date (in the future, at most
    ten years ahead), optionally with a first deposit. At most eight goals can be active at once.

    Args:
        name: What the household is saving for; must differ from the other active goals.
        target_amount: How much to save in total.
        target_date: When the money is needed, as YYYY-MM-DD.
        initial_deposit: A first amount put aside now (not more than the target).
    """
    t = today(s)
    try:
        due = date.fromisoformat(target_date)
    except ValueError:
        raise ToolError(f"invalid target_date '{target_date}'", field="target_date") from None
    if due <= t or due > t + timedelta(days=3653):
        raise ToolError(f"target_date must be after today ({t.isoformat()}) and within ten years",
                        field="target_date", code="out_of_range")
    active = [g for g in s.goals.values() if g.status == "active"]
    if any(g.name.lower() == name.strip().lower() for g in active):
        raise ToolError(f"an active savings goal named '{name.strip()}' already exists", field="name", code="duplicate")
    if len(active) >= MAX_ACTIVE_GOALS:
        raise ToolError(f"limit exceeded: at most {MAX_ACTIVE_GOALS} savings goals can be active; finish or "
                        "reach one first", field="name", code="limit_exceeded")
    if initial_deposit is not None and initial_deposit > target_amount:
        raise ToolError(f"initial_deposit {initial_deposit:.2f} is more than the target {target_amount:.2f}",
                        field="initial_deposit", code="overfunded")
    gid = new_id(s.counters, "SG")
    goal = Goal(gid, name.strip(), r2(target_amount), 0.0, due.isoformat(), "active", iso(now(s)))
    if initial_deposit is not None:
        goal.saved = r2(initial_deposit)
        goal.contributions.append({"on": t.isoformat(), "amount": r2(initial_deposit)})
        if goal.saved >= goal.target_amount:
            goal.status, goal.completed_at = "completed", iso(now(s))
    s.goals.put(gid, goal)
    return goal_view(s, goal)


@tool(consumes=("goal_id",))
def contribute_to_savings_goal(s: BudgetState, goal_id: str, amount: Money, note: Text | None = None) -> dict:
    """Put money toward an active savings goal. A contribution may not take the goal past its target;
    reaching the target completes the goal.

    Args:
        goal_id: The savings goal, e.g. SG-0002.
        amount: How much to put aside.
        note: A free-text note about the contribution.
    """
    g = require(s.goals, goal_id, "goal_id")
    if g.status != "active":
        why = "already reached its target" if g.status == "completed" else f"missed its target date {g.target_date}"
        raise ToolError(f"savings goal '{g.name}' {why}; contributions go to active goals only", field="goal_id",
                        code="illegal_state")
    left = r2(g.target_amount - g.saved)
    if round(amount, 2) > left:
        raise ToolError(f"that would overfund '{g.name}': only {left:.2f} of {g.target_amount:.2f} is left to save",
                        field="amount", code="overfunded")
    g = s.goals.edit(goal_id)
    g.saved = r2(g.saved + amount)
    g.contributions.append({"on": today(s).isoformat(), "amount": r2(amount), **({"note": note} if note else {})})
    alert = None
    if g.saved >= g.target_amount:
        g.status, g.completed_at = "completed", iso(now(s))
        alert = raise_alert(s, "goal_completed", today(s).isoformat()[:7], f"savings goal '{g.name}' reached its "
                            f"target of {g.target_amount:.2f}", now(s), goal_id=goal_id)
    return {**goal_view(s, g), "completed_now": alert is not None}
