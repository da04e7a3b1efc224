"""Budget: a household budget that accumulates — categories with monthly limits, expenses that add up
into month totals, recurring bills posted on their day, savings goals, and alerts when a category
nears or passes its limit.

The household is the one that pays bills on the payments platform of the same seed: some expenses
carry a payments ``invoice_id`` (same amount and merchant name), and a new expense can be recorded
straight from such an invoice.

Time (``on_time``): each active recurring bill is posted as an expense when its day comes (or skipped
with an alert if its category is locked or archived) and moves to the next month; an active savings
goal whose target date passes short of its target becomes missed (with an alert). Months close on
their own: once a month is more than one month in the past its expenses are final.

Failure rules (each a ToolError naming the argument; the call changes nothing):

* unknown category_id / expense_id / recurring_id / goal_id / invoice_id, or a paid_by who is not a
  household member;
* spending into (recording, moving to, scheduling in) a locked or an archived category;
* expense dates more than 7 days ahead, before the budget started, or in a closed month; editing or
  deleting an expense of a closed month;
* a likely duplicate (same merchant, amount and date) unless allow_duplicate is set;
* invoices: billed to someone else, void or draft, already recorded, or an amount that differs from
  the invoice; amount and merchant are required without an invoice; the amount and merchant of an
  invoice-linked expense cannot be edited;
* categories: status changes need the admin PIN (missing or wrong PIN refused); a category with an
  active recurring bill cannot be archived; an archived category must be reactivated before its limit
  or name changes; a name already used; no-op changes (same status, name or limit, nothing given);
* months outside the budget (before its start or after the current month);
* recurring bills: a start in the past or more than a year ahead, the same merchant and amount
  already scheduled, cancelling a cancelled bill;
* savings goals: target date not in the future or more than ten years ahead, a duplicate active
  name, more than eight active goals, a first deposit above the target, contributing to a completed
  or missed goal, or a contribution that would overfund the goal.
"""

from servers.budget import discovery, tools_categories, tools_expenses, tools_plans
from servers.budget.state import BudgetState, on_time
from servers.budget.world import generate
from servers.kit import Domain

domain = Domain(
    "budget", BudgetState, generate,
    description=("Budget: a household budget with categories and monthly limits (active, locked or archived), "
                 "expenses that accumulate into month totals and raise alerts near and over the limit, recurring "
                 "bills posted automatically on their day, savings goals with target dates, months that close, "
                 "and bill expenses linked to invoices on the payments platform."),
    modules=(tools_categories, tools_expenses, tools_plans, discovery),
    on_time=on_time,
)

__all__ = ["BudgetState", "discovery", "domain", "generate", "tools_categories", "tools_expenses", "tools_plans"]
