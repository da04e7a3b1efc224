"""Budget smoke scenario: the household admin logs groceries, fixes and removes a mistaken entry, records
a bill paid on the payments platform by its invoice number, unlocks a category and raises a limit,
reviews the month, manages recurring bills and saves toward a new goal — succeeding once with every
user-visible tool.

``call(name, args)`` performs a tool call on one session (over whatever transport the harness
chose), asserts it did not return an error, and returns the decoded JSON result.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


async def smoke(call: Call) -> None:
    home = await call("budget_get_household", {})
    cats = await call("list_budget_categories", {})
    by_name = {c["name"]: c for c in cats["categories"]}
    groceries, repairs = by_name["Groceries"], by_name["Home Maintenance"]

    # Log a grocery run, fix its amount, and remove an accidental second entry.
    first = await call("record_budget_expense", {"category_id": groceries["category_id"], "amount": 54.2,
                                                 "merchant": "Trader Joe's", "note": "weekly shop"})
    assert first["category_month"]["spent"] == round(groceries["spent"] + 54.2, 2)
    oops = await call("record_budget_expense", {"category_id": groceries["category_id"], "amount": 54.2,
                                                "merchant": "Trader Joe's", "allow_duplicate": True})
    found = await call("list_budget_expenses", {"category_id": groceries["category_id"], "month": cats["month"],
                                                "merchant": "trader"})
    assert {first["expense"]["expense_id"], oops["expense"]["expense_id"]} <= {e["expense_id"] for e in found["expenses"]}
    await call("update_budget_expense", {"expense_id": first["expense"]["expense_id"], "amount": 56.1})
    await call("delete_budget_expense", {"expense_id": oops["expense"]["expense_id"]})

    # A bill from the payments platform, recorded by its invoice number.
    bill = home["unrecorded_invoices"][0]
    linked = await call("record_budget_expense", {"category_id": repairs["category_id"], "invoice_id": bill["invoice_id"]})
    assert linked["expense"]["amount"] == bill["amount"] and linked["expense"]["merchant"] == bill["merchant"]

    # The admin unlocks shopping and gives coffee a bit more room, then reviews the month.
    shopping, coffee = by_name["Shopping"], by_name["Coffee Shops"]
    await call("update_budget_category", {"category_id": shopping["category_id"], "status": "active",
                                          "admin_pin": home["admin_pin"]})
    await call("update_budget_category", {"category_id": coffee["category_id"], "monthly_limit": 60.0})
    summary = await call("get_budget_month_summary", {})
    assert summary["total_spent"] >= 56.1

    # Subscriptions: add a new one, drop one that is no longer used.
    subs = by_name["Subscriptions"]
    new_sub = await call("schedule_recurring_expense", {"category_id": subs["category_id"], "merchant": "Disney+",
                                                        "amount": 13.99, "day_of_month": 20})
    assert new_sub["status"] == "active"
    old = next(r for r in summary["recurring_upcoming"] if r["merchant"] != "Disney+" and r["category_id"] == subs["category_id"])
    await call("cancel_recurring_expense", {"recurring_id": old["recurring_id"]})

    # Savings: look at the goals, start a new one and put something toward it.
    goals = await call("list_savings_goals", {"status": "active"})
    assert goals
    goal = await call("create_savings_goal", {"name": "Kitchen Renovation", "target_amount": 5000.0,
                                              "target_date": "2027-03-01", "initial_deposit": 250.0})
    out = await call("contribute_to_savings_goal", {"goal_id": goal["goal_id"], "amount": 100.0})
    assert out["saved"] == 350.0
