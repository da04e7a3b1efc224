"""Budget state: one household's budget — members, categories with monthly limits, expenses that add up
into month totals, recurring bills, savings goals and alerts — plus the shared rules.

Month totals are always the sum of the month's expenses (nothing is cached that could drift); alerts
are the accumulated record of limits crossed. Months close automatically: once a month is more than
one month in the past (on 2026-06-10, April and earlier are closed) its expenses are final.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from servers.kit import Cell, Counters, State, Table, ToolError, iso, new_id, require, today

FUTURE_DAYS_LIMIT = 7  # an expense may be dated at most a week ahead (a bill already scheduled)
WARN_RATIO = 0.8
MAX_ACTIVE_GOALS = 8


@dataclass
class Household:
    name: str
    currency: str
    admin_pin: str  # the household admin's 4-digit PIN: needed to lock, unlock, archive or reopen a category
    budget_start: str  # first day of the first budget month


@dataclass
class Member:
    member_id: str
    name: str
    email: str
    role: str  # admin | member


@dataclass
class Category:
    category_id: str
    name: str
    group: str
    monthly_limit: float
    status: str  # active | locked (no new spending) | archived (retired)
    created_at: str


@dataclass
class Expense:
    expense_id: str
    category_id: str
    amount: float
    merchant: str
    spent_on: str
    note: str | None
    paid_by: str  # member_id
    invoice_id: str | None
    recurring_id: str | None
    created_at: str


@dataclass
class Recurring:
    recurring_id: str
    category_id: str
    merchant: str
    amount: float
    day_of_month: int
    next_due: str
    status: str  # active | cancelled
    paid_by: str
    created_at: str
    posted: int = 0
    cancelled_at: str | None = None


@dataclass
class Goal:
    goal_id: str
    name: str
    target_amount: float
    saved: float
    target_date: str
    status: str  # active -> completed | missed
    created_at: str
    completed_at: str | None = None
    contributions: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Alert:
    alert_id: str
    kind: str  # approaching_limit | over_budget | recurring_skipped | goal_completed | goal_missed
    month: str
    message: str
    created_at: str
    category_id: str | None = None
    goal_id: str | None = None
    recurring_id: str | None = None


@dataclass
class InvoiceRef:
    """A bill from the payments platform (same seed), as the household's records know it."""

    invoice_id: str
    merchant_name: str
    customer_name: str
    amount: float
    currency: str
    status: str
    issued_on: str


class BudgetState(State):
    household: Cell[Household]
    members: Table[Member]
    categories: Table[Category]
    expenses: Table[Expense]
    recurring: Table[Recurring]
    goals: Table[Goal]
    alerts: Table[Alert]
    payment_invoices: Table[InvoiceRef]
    counters: Cell[Counters]


# ---------------------------------------------------------------- dates and months
def r2(x: float) -> float:
    return round(x + 0.0, 2)


def month_of(d: str | date) -> str:
    return (d.isoformat() if isinstance(d, date) else d)[:7]


def add_month(d: date, day: int) -> date:
    y, m = (d.year + 1, 1) if d.month == 12 else (d.year, d.month + 1)
    return date(y, m, day)


def prev_month(d: date) -> str:
    return month_of(date(d.year - 1, 12, 1) if d.month == 1 else date(d.year, d.month - 1, 1))


def is_closed(s: BudgetState, month: str) -> bool:
    return month < prev_month(today(s))


def midnight(d: date) -> datetime:
    return datetime.combine(d, time(0, 0), tzinfo=UTC)


def check_spent_on(s: BudgetState, text: str, field: str = "spent_on") -> date:
    """An expense date: not more than a week ahead, not before the budget, not in a closed month."""
    try:
        d = date.fromisoformat(text)
    except ValueError:
        raise ToolError(f"invalid {field} '{text}': expected YYYY-MM-DD", field=field) from None
    t = today(s)
    if d > t + timedelta(days=FUTURE_DAYS_LIMIT):
        raise ToolError(f"{field} {text} is too far in the future: expenses may be dated at most "
                        f"{FUTURE_DAYS_LIMIT} days ahead (until {(t + timedelta(days=FUTURE_DAYS_LIMIT)).isoformat()})",
                        field=field, code="future_date")
    start = s.household.get().budget_start
    if text < start:
        raise ToolError(f"{field} {text} is before the budget started on {start}", field=field, code="out_of_range")
    closed_month(s, month_of(d), field)
    return d


def closed_month(s: BudgetState, month: str, field: str) -> None:
    if is_closed(s, month):
        raise ToolError(f"month {month} is closed: only {prev_month(today(s))} and later can still change",
                        field=field, code="month_closed")


# ---------------------------------------------------------------- lookups and gates
def get_category(s: BudgetState, category_id: str, field: str = "category_id") -> Category:
    return require(s.categories, category_id, field)


def get_expense(s: BudgetState, expense_id: str) -> Expense:
    return require(s.expenses, expense_id, "expense_id")


def spendable(cat: Category, field: str = "category_id") -> None:
    """New spending only goes into an active category."""
    if cat.status == "locked":
        raise ToolError(f"category '{cat.name}' ({cat.category_id}) is locked by the household admin; unlock it "
                        "first (update_budget_category with the admin PIN)", field=field, code="category_locked")
    if cat.status == "archived":
        raise ToolError(f"category '{cat.name}' ({cat.category_id}) is archived; reactivate it first or choose "
                        "another category", field=field, code="category_archived")


def find_member(s: BudgetState, name: str | None) -> str:
    """The member id for a (first or full) name; the admin when omitted."""
    members = list(s.members.values())
    if name is None:
        return next(m.member_id for m in members if m.role == "admin")
    needle = name.strip().lower()
    for m in members:
        if needle in (m.name.lower(), m.name.split()[0].lower()):
            return m.member_id
    raise ToolError(f"'{name}' is not a member of the household ({', '.join(m.name for m in members)})",
                    field="paid_by", code="not_found")


# ---------------------------------------------------------------- accumulation and alerts
def month_spent(s: BudgetState, month: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for e in s.expenses.values():
        if e.spent_on.startswith(month):
            out[e.category_id] = r2(out.get(e.category_id, 0.0) + e.amount)
    return out


def category_month(s: BudgetState, cat: Category, month: str, spent: float | None = None) -> dict[str, Any]:
    used = month_spent(s, month).get(cat.category_id, 0.0) if spent is None else spent
    return {"category_id": cat.category_id, "name": cat.name, "group": cat.group, "status": cat.status,
            "month": month, "monthly_limit": cat.monthly_limit, "spent": used,
            "remaining": r2(cat.monthly_limit - used),
            "percent_used": round(100 * used / cat.monthly_limit, 1) if cat.monthly_limit else None}


def raise_alert(s: BudgetState, kind: str, month: str, message: str, when: datetime, **ids: str) -> str:
    aid = new_id(s.counters, "ALR")
    s.alerts.put(aid, Alert(aid, kind, month, message, iso(when), **ids))
    return aid


def check_limits(s: BudgetState, category_id: str, month: str, when: datetime) -> list[str]:
    """Raise the month's approaching-limit / over-budget alert for a category once, when crossed."""
    cat = s.categories[category_id]
    used = month_spent(s, month).get(category_id, 0.0)
    have = {a.kind for a in s.alerts.values() if a.category_id == category_id and a.month == month}
    out = []
    if used > cat.monthly_limit and "over_budget" not in have:
        out.append(raise_alert(s, "over_budget", month, f"{cat.name} is over budget for {month}: {used:.2f} spent "
                               f"of {cat.monthly_limit:.2f}", when, category_id=category_id))
    elif WARN_RATIO * cat.monthly_limit <= used <= cat.monthly_limit and "approaching_limit" not in have \
            and "over_budget" not in have:
        out.append(raise_alert(s, "approaching_limit", month, f"{cat.name} has used {100 * used / cat.monthly_limit:.0f}% "
                               f"of its {month} limit ({used:.2f} of {cat.monthly_limit:.2f})", when,
                               category_id=category_id))
    return out


def alert_views(s: BudgetState, ids: list[str]) -> list[dict[str, Any]]:
    return [{"alert_id": a, "kind": s.alerts[a].kind, "message": s.alerts[a].message} for a in ids]


def post_recurring(s: BudgetState, rec_id: str, due: date) -> None:
    """Post one occurrence of a recurring bill (or skip it, with an alert, if its category is closed)."""
    rec = s.recurring.edit(rec_id)
    cat = s.categories[rec.category_id]
    when = midnight(due)
    if cat.status != "active":
        raise_alert(s, "recurring_skipped", month_of(due), f"{rec.merchant} {rec.amount:.2f} due {due.isoformat()} "
                    f"was not posted: category '{cat.name}' is {cat.status}", when, recurring_id=rec_id,
                    category_id=cat.category_id)
    else:
        eid = new_id(s.counters, "EXP")
        s.expenses.put(eid, Expense(eid, rec.category_id, rec.amount, rec.merchant, due.isoformat(),
                                    "recurring payment", rec.paid_by, None, rec_id, iso(when)))
        rec.posted += 1
        check_limits(s, rec.category_id, month_of(due), when)
    rec.next_due = add_month(due, rec.day_of_month).isoformat()


def on_time(s: BudgetState, before: datetime, after: datetime) -> None:
    """Recurring bills post on their day (oldest due first, ties by id), and active savings goals whose
    target date has passed without reaching the target are marked missed."""
    day = after.date()
    while True:
        due = [(r.next_due, key) for key, r in s.recurring.items() if r.status == "active" and r.next_due <= day.isoformat()]
        if not due:
            break
        when, key = min(due)
        post_recurring(s, key, date.fromisoformat(when))
    for key, g in s.goals.items():
        if g.status == "active" and g.target_date < day.isoformat():
            goal = s.goals.edit(key)
            goal.status = "missed"
            missed = midnight(date.fromisoformat(g.target_date) + timedelta(days=1))
            raise_alert(s, "goal_missed", month_of(missed.date()), f"savings goal '{g.name}' missed its target date "
                        f"{g.target_date}: {g.saved:.2f} of {g.target_amount:.2f} saved", missed, goal_id=key)


# ---------------------------------------------------------------- views
def expense_view(s: BudgetState, e: Expense) -> dict[str, Any]:
    return {"expense_id": e.expense_id, "spent_on": e.spent_on, "merchant": e.merchant, "amount": e.amount,
            "category_id": e.category_id, "category": s.categories[e.category_id].name, "note": e.note,
            "paid_by": s.members[e.paid_by].name, "invoice_id": e.invoice_id, "recurring_id": e.recurring_id}


def recurring_view(s: BudgetState, r: Recurring) -> dict[str, Any]:
    return {"recurring_id": r.recurring_id, "merchant": r.merchant, "amount": r.amount,
            "category_id": r.category_id, "category": s.categories[r.category_id].name,
            "day_of_month": r.day_of_month, "next_due": r.next_due if r.status == "active" else None,
            "status": r.status, "paid_by": s.members[r.paid_by].name, "times_posted": r.posted}


def goal_view(s: BudgetState, g: Goal) -> dict[str, Any]:
    t = today(s)
    left = r2(g.target_amount - g.saved)
    days = (date.fromisoformat(g.target_date) - t).days
    months = max(1, round(days / 30.4)) if days > 0 else None
    return {"goal_id": g.goal_id, "name": g.name, "target_amount": g.target_amount, "saved": g.saved,
            "remaining": left, "percent": round(100 * g.saved / g.target_amount, 1), "target_date": g.target_date,
            "days_left": max(0, days), "status": g.status,
            "monthly_needed": r2(left / months) if months and g.status == "active" else None,
            "completed_at": g.completed_at, "contributions": len(g.contributions)}
