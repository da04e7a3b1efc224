"""How a household talks about its budget: spending, categories, bills that repeat, saving up."""

from __future__ import annotations

SELF: tuple[str, ...] = ()
SPOKEN: tuple[str, ...] = ()

BANK: dict[str, dict[str, list[str]]] = {
    "list_budget_categories": {
        "ask": ["how much do we have left in each category this month",
                "show me where we stood per category in {month}",
                "which of our {group} categories are close to their limit",
                "list the categories that are {status} right now"],
        "vague": ["how are we doing on the budget", "give me the overview of our spending buckets"],
    },
    "update_budget_category": {
        "ask": ["raise the limit on {category_id} to {monthly_limit}",
                "call {category_id} {name} from now on",
                "lock {category_id} so nobody spends from it, the admin PIN is {admin_pin}",
                "open {category_id} up again, PIN {admin_pin}"],
        "vague": ["I want to change one of our spending limits", "adjust a budget category"],
    },
    "get_budget_month_summary": {
        "ask": ["how did we do in {month}", "sum up this month's spending for me",
                "did we blow through any limits in {month}", "what bills are still coming up this month"],
        "vague": ["give me the monthly rundown", "how's the month looking"],
    },
    "record_budget_expense": {
        "ask": ["I spent {amount} at {merchant}, put it under {category_id}",
                "log {amount} at {merchant} on {spent_on} for {category_id}, {paid_by} paid",
                "we paid bill {invoice_id}, add it to {category_id}",
                "add {amount} from {merchant} to {category_id} with the note {note}"],
        "vague": ["I need to log something I bought", "add a purchase to the budget"],
    },
    "list_budget_expenses": {
        "ask": ["what did we spend at {merchant} in {month}", "show me everything in {category_id} for {month}",
                "list what {paid_by} paid for this month", "show our biggest purchases over {min_amount}"],
        "vague": ["show me what we've been spending on", "pull up our recent purchases"],
    },
    "update_budget_expense": {
        "ask": ["{expense_id} belongs in {category_id}, move it", "the {expense_id} charge was actually {amount}",
                "change the date on {expense_id} to {spent_on}", "add the note {note} to {expense_id}"],
        "vague": ["one of the entries is wrong", "fix an expense I logged"],
    },
    "delete_budget_expense": {
        "ask": ["take {expense_id} off the budget, it was entered twice", "remove {expense_id}, that was a mistake",
                "get rid of {expense_id}, it got refunded"],
        "vague": ["delete something I entered by mistake", "there's an entry that shouldn't be there"],
    },
    "schedule_recurring_expense": {
        "ask": ["we pay {merchant} {amount} every month on the {day_of_month}, put it in {category_id}",
                "set up {merchant} at {amount} a month under {category_id}, starting {starting_month} on day "
                "{day_of_month}",
                "add our new {merchant} subscription, {amount} on the {day_of_month} of each month, to {category_id}"],
        "vague": ["add a monthly bill", "we signed up for something that charges every month"],
    },
    "cancel_recurring_expense": {
        "ask": ["we cancelled {recurring_id}, stop counting it", "stop the monthly {recurring_id} bill",
                "{recurring_id} is over, take it off the schedule"],
        "vague": ["we dropped one of our subscriptions", "stop a bill that repeats"],
    },
    "list_savings_goals": {
        "ask": ["how close are we on our savings goals", "which savings goals are still {status}",
                "how much a month do we need to put away to hit our goals"],
        "vague": ["how's our saving going", "check on what we're saving for"],
    },
    "create_savings_goal": {
        "ask": ["we want to save {target_amount} for {name} by {target_date}",
                "start a {name} fund: {target_amount} by {target_date}, and put {initial_deposit} in now",
                "help us set aside {target_amount} for {name} before {target_date}"],
        "vague": ["we want to start saving for something", "set up a new savings target"],
    },
    "contribute_to_savings_goal": {
        "ask": ["put {amount} toward {goal_id}", "move {amount} into the {goal_id} savings, note it as {note}",
                "add {amount} to what we've saved for {goal_id}"],
        "vague": ["add some money to our savings", "we have a little extra to put aside"],
    },
}

GOALS: list[dict[str, list[str]]] = [
    {"tools": ["list_budget_categories", "record_budget_expense"],
     "ask": ["I just spent {amount} at {merchant} on groceries, log it and tell me what's left",
             "put {amount} from {merchant} in the right category and check we're still under"]},
    {"tools": ["list_budget_expenses", "delete_budget_expense"],
     "ask": ["I think the {merchant} purchase got entered twice in {month}, remove the extra one",
             "find the duplicate {merchant} charge from {month} and take it out"]},
    {"tools": ["list_budget_expenses", "update_budget_expense"],
     "ask": ["the {merchant} purchases in {month} should be under {category_id}, move them",
             "fix the {merchant} entry from {month}, it was really {amount}"]},
    {"tools": ["get_budget_month_summary", "update_budget_category"],
     "ask": ["see which categories went over in {month} and bump the worst one to {monthly_limit}",
             "check where we overspent this month and give that category {monthly_limit}"]},
    {"tools": ["get_budget_month_summary", "cancel_recurring_expense", "schedule_recurring_expense"],
     "ask": ["we switched from our old streaming plan to {merchant} at {amount} on the {day_of_month}, update the "
             "monthly bills",
             "swap the old subscription for {merchant}, {amount} a month on day {day_of_month}"]},
    {"tools": ["list_savings_goals", "contribute_to_savings_goal"],
     "ask": ["put {amount} toward whichever goal is closest to done",
             "see how our savings goals are doing and add {amount} to the one that is furthest behind"]},
    {"tools": ["update_budget_category", "record_budget_expense"],
     "ask": ["unlock {category_id} with PIN {admin_pin} and log the {amount} I spent at {merchant}",
             "I need to add a {merchant} purchase of {amount} to {category_id} — it's locked, the PIN is {admin_pin}"]},
]
