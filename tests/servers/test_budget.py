"""Budget domain: tool count, failure rules (state unchanged), accumulation and alerts,
recurring bills / goals / month closing driven by the clock, replay determinism, and the link
to the payments world of the same seed."""

from __future__ import annotations

from typing import Any

import pytest

from servers import PAPER_TOOL_COUNTS
from servers.budget import domain
from servers.kit import DomainRuntime
from servers.payments import domain as payments_domain
from servers.payments.world import household, seed_invoices
from tests.servers.harness import advance, assert_replays_alike, fails, new_sid, ok, state_of

DAY = 24 * 60


class Home:
    """The household of a seeded world, with its categories by name."""

    def __init__(self, rt: DomainRuntime, sid: str, seed: int) -> None:
        self.h = ok(rt, sid, seed, "budget_get_household", {})
        self.cat = {c["name"]: c for c in self.h["categories"]}
        self.pin = self.h["admin_pin"]
        self.state = state_of(rt, sid, seed)

    def cid(self, name: str) -> str:
        return self.cat[name]["category_id"]

    def goal(self, name: str) -> dict[str, Any]:
        return next(g for g in self.h["goals"] if g["name"] == name)

    def expense(self, month: str, **want: Any) -> dict[str, Any]:
        return next(e for e in self.state["expenses"].values() if e["spent_on"].startswith(month)
                    and all(e[k] == v for k, v in want.items()))


# ---------------------------------------------------------------- (1) tool count, (2) smoke coverage
def test_exactly_twelve_user_tools_discovery_and_sensitive_pin(rt: DomainRuntime) -> None:
    assert len(domain.user_tools) == PAPER_TOOL_COUNTS["budget"] == 12
    assert len(rt.table.openai_tools()) == 12
    disc = [s.name for s in domain.tools.values() if s.kind == "discovery"]
    assert 2 <= len(disc) <= 4 and all(n.startswith("budget_") for n in disc)
    assert sum(1 for s in domain.user_tools if s.consumes or s.produces or s.requires) >= 10
    assert rt.table.sensitive_params("update_budget_category") == ["admin_pin"]
    props = rt.table.schemas["record_budget_expense"]["properties"]
    assert props["amount"].get("x-money") and props["note"].get("x-multiline")
    assert props["invoice_id"]["pattern"] == r"^INV-\d{4}$"


def test_world_archetypes_exist_for_many_seeds() -> None:
    for seed in range(12):
        s = domain.new_world(seed).snapshot()
        status = {c["name"]: c["status"] for c in s["categories"].values()}
        assert status["Shopping"] == "locked" and status["Childcare"] == "archived" and "Coffee Shops" in status
        assert any(r["next_due"] in ("2026-06-02", "2026-06-03") for r in s["recurring"].values())
        assert any(r["status"] == "cancelled" for r in s["recurring"].values())
        goals = {g["name"]: g for g in s["goals"].values()}
        assert goals["Summer Vacation"]["saved"] / goals["Summer Vacation"]["target_amount"] > 0.95
        assert goals["Holiday Gifts"]["target_date"] == "2026-06-03"
        assert any(g["status"] == "completed" for g in goals.values())
        assert 150 <= len(s["expenses"]) <= 400 and s["alerts"]


# ---------------------------------------------------------------- (3) failure rules leave state alone
def test_unknown_ids_and_members(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    w = Home(rt, sid, seed)
    g = w.cid("Groceries")
    fails(rt, sid, seed, "record_budget_expense", {"category_id": "CAT-9999", "amount": 5, "merchant": "X"},
          "unknown category_id")
    fails(rt, sid, seed, "list_budget_expenses", {"category_id": "CAT-9999"}, "unknown category_id")
    fails(rt, sid, seed, "update_budget_category", {"category_id": "CAT-9999", "monthly_limit": 5},
          "unknown category_id")
    fails(rt, sid, seed, "update_budget_expense", {"expense_id": "EXP-9999", "note": "x"}, "unknown expense_id")
    fails(rt, sid, seed, "delete_budget_expense", {"expense_id": "EXP-9999"}, "unknown expense_id")
    fails(rt, sid, seed, "cancel_recurring_expense", {"recurring_id": "REC-9999"}, "unknown recurring_id")
    fails(rt, sid, seed, "contribute_to_savings_goal", {"goal_id": "SG-9999", "amount": 5}, "unknown goal_id")
    fails(rt, sid, seed, "record_budget_expense", {"category_id": g, "amount": 5, "merchant": "X",
                                                   "paid_by": "Zebulon"}, "not a member", "paid_by")
    fails(rt, sid, seed, "list_budget_expenses", {"paid_by": "Zebulon"}, "not a member")
    fails(rt, sid, seed, "record_budget_expense", {"category_id": g, "merchant": "X"}, "amount is required")
    fails(rt, sid, seed, "record_budget_expense", {"category_id": g, "amount": 5}, "merchant is required")
    fails(rt, sid, seed, "list_budget_expenses", {"min_amount": 50, "max_amount": 10}, "min_amount")
    member = w.h["members"][-1]["name"].split()[0]
    out = ok(rt, sid, seed, "record_budget_expense", {"category_id": g, "amount": 5, "merchant": "X", "paid_by": member})
    assert out["expense"]["paid_by"].startswith(member)


def test_locked_and_archived_categories(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    w = Home(rt, sid, seed)
    shop, care, dine = w.cid("Shopping"), w.cid("Childcare"), w.cid("Dining Out")
    fails(rt, sid, seed, "record_budget_expense", {"category_id": shop, "amount": 20, "merchant": "Target"},
          "is locked", "admin PIN")
    fails(rt, sid, seed, "record_budget_expense", {"category_id": care, "amount": 20, "merchant": "Daycare"},
          "is archived", "reactivate")
    mine = w.expense("2026-05", category_id=dine)
    fails(rt, sid, seed, "update_budget_expense", {"expense_id": mine["expense_id"], "category_id": shop}, "is locked")
    fails(rt, sid, seed, "update_budget_expense", {"expense_id": mine["expense_id"], "category_id": dine},
          "already in that category")
    fails(rt, sid, seed, "schedule_recurring_expense", {"category_id": care, "merchant": "Nanny", "amount": 300,
                                                        "day_of_month": 5}, "is archived")
    # status changes need the admin PIN
    fails(rt, sid, seed, "update_budget_category", {"category_id": shop, "status": "active"}, "needs", "admin_pin")
    wrong = "0000" if w.pin != "0000" else "1111"
    fails(rt, sid, seed, "update_budget_category", {"category_id": shop, "status": "active", "admin_pin": wrong},
          "incorrect admin_pin")
    fails(rt, sid, seed, "update_budget_category", {"category_id": shop, "status": "locked", "admin_pin": w.pin},
          "already locked")
    fails(rt, sid, seed, "update_budget_category", {"category_id": care, "monthly_limit": 500}, "is archived",
          "reactivate")
    rent = w.cid("Rent")
    fails(rt, sid, seed, "update_budget_category", {"category_id": rent, "status": "archived", "admin_pin": w.pin},
          "cannot archive", "recurring bill")
    fails(rt, sid, seed, "update_budget_category", {"category_id": dine, "name": "groceries"}, "already exists")
    fails(rt, sid, seed, "update_budget_category", {"category_id": dine, "name": "Dining Out"}, "already named")
    fails(rt, sid, seed, "update_budget_category", {"category_id": dine,
                                                    "monthly_limit": w.cat["Dining Out"]["monthly_limit"]},
          "already")
    fails(rt, sid, seed, "update_budget_category", {"category_id": dine}, "nothing to change")
    ok(rt, sid, seed, "update_budget_category", {"category_id": shop, "status": "active", "admin_pin": w.pin})
    ok(rt, sid, seed, "record_budget_expense", {"category_id": shop, "amount": 20, "merchant": "Target"})


def test_dates_duplicates_and_closed_months(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    w = Home(rt, sid, seed)
    g = w.cid("Groceries")
    base = {"category_id": g, "amount": 12.5, "merchant": "Safeway"}
    fails(rt, sid, seed, "record_budget_expense", {**base, "spent_on": "2026-06-09"}, "too far in the future")
    ok(rt, sid, seed, "record_budget_expense", {**base, "spent_on": "2026-06-08"})
    fails(rt, sid, seed, "record_budget_expense", {**base, "spent_on": "2026-01-20"}, "before the budget started")
    fails(rt, sid, seed, "record_budget_expense", {**base, "spent_on": "2026-04-20"}, "month 2026-04 is closed")
    fails(rt, sid, seed, "record_budget_expense", {**base, "spent_on": "2026-13-01"}, "invalid spent_on")
    may = w.expense("2026-05", category_id=g)
    dup = {"category_id": g, "amount": may["amount"], "merchant": may["merchant"].upper(), "spent_on": may["spent_on"]}
    fails(rt, sid, seed, "record_budget_expense", dup, "possible duplicate", may["expense_id"], "allow_duplicate")
    ok(rt, sid, seed, "record_budget_expense", {**dup, "allow_duplicate": True})
    april = w.expense("2026-04")
    fails(rt, sid, seed, "update_budget_expense", {"expense_id": april["expense_id"], "note": "x"}, "is closed")
    fails(rt, sid, seed, "delete_budget_expense", {"expense_id": april["expense_id"]}, "is closed")
    fails(rt, sid, seed, "update_budget_expense", {"expense_id": may["expense_id"], "spent_on": "2026-04-30"},
          "is closed")
    fails(rt, sid, seed, "update_budget_expense", {"expense_id": may["expense_id"]}, "nothing to change")
    fails(rt, sid, seed, "get_budget_month_summary", {"month": "2026-01"}, "no budget for 2026-01", "month")
    fails(rt, sid, seed, "get_budget_month_summary", {"month": "2026-07"}, "no budget for 2026-07")
    fails(rt, sid, seed, "list_budget_categories", {"month": "2025-12"}, "no budget")
    assert ok(rt, sid, seed, "get_budget_month_summary", {"month": "2026-03"})["month_closed"] is True


def test_invoice_link_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    w = Home(rt, sid, seed)
    home = w.cid("Home Maintenance")
    admin = w.h["members"][0]["name"]
    refs = seed_invoices(seed)
    someone_else = next(r for r in refs if r.customer_name != admin)
    void = next(r for r in refs if r.customer_name == admin and r.status == "void")
    linked = next(e for e in w.state["expenses"].values() if e["invoice_id"])
    bill = w.h["unrecorded_invoices"][0]
    fails(rt, sid, seed, "record_budget_expense", {"category_id": home, "invoice_id": "INV-9999"},
          "unknown invoice_id")
    fails(rt, sid, seed, "record_budget_expense", {"category_id": home, "invoice_id": someone_else.invoice_id},
          "billed to", "not to this household")
    fails(rt, sid, seed, "record_budget_expense", {"category_id": home, "invoice_id": void.invoice_id}, "is void")
    fails(rt, sid, seed, "record_budget_expense", {"category_id": home, "invoice_id": linked["invoice_id"]},
          "already recorded", linked["expense_id"])
    fails(rt, sid, seed, "record_budget_expense", {"category_id": home, "invoice_id": bill["invoice_id"],
                                                   "amount": round(bill["amount"] + 1, 2)}, "does not match", "amount")
    fails(rt, sid, seed, "record_budget_expense", {"category_id": home, "invoice_id": "INV-12"}, "invoice_id")
    if linked["spent_on"] >= "2026-05":
        fails(rt, sid, seed, "update_budget_expense", {"expense_id": linked["expense_id"], "amount": 1},
              "cannot be edited")
    out = ok(rt, sid, seed, "record_budget_expense", {"category_id": home, "invoice_id": bill["invoice_id"],
                                                      "amount": bill["amount"]})
    assert out["expense"]["invoice_id"] == bill["invoice_id"] and out["expense"]["merchant"] == bill["merchant"]
    fails(rt, sid, seed, "update_budget_expense", {"expense_id": out["expense"]["expense_id"], "merchant": "Other"},
          "cannot be edited")
    ok(rt, sid, seed, "update_budget_expense", {"expense_id": out["expense"]["expense_id"], "note": "paid by card"})


def test_recurring_and_goal_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 4
    w = Home(rt, sid, seed)
    subs = w.cid("Subscriptions")
    sub = {"category_id": subs, "merchant": "Hulu", "amount": 9.99, "day_of_month": 10}
    fails(rt, sid, seed, "schedule_recurring_expense", {**sub, "starting_month": "2026-05"}, "in the past")
    fails(rt, sid, seed, "schedule_recurring_expense", {**sub, "starting_month": "2027-08"}, "within the next year")
    first = ok(rt, sid, seed, "schedule_recurring_expense", sub)
    assert first["next_due"] == "2026-06-10"
    fails(rt, sid, seed, "schedule_recurring_expense", {**sub, "merchant": "hulu"}, "already scheduled")
    ok(rt, sid, seed, "cancel_recurring_expense", {"recurring_id": first["recurring_id"]})
    fails(rt, sid, seed, "cancel_recurring_expense", {"recurring_id": first["recurring_id"]}, "already cancelled")
    cancelled = next(r for r in w.h["recurring"] if r["status"] == "cancelled")
    fails(rt, sid, seed, "cancel_recurring_expense", {"recurring_id": cancelled["recurring_id"]}, "already cancelled")
    # goals
    vacation, done = w.goal("Summer Vacation"), next(g for g in w.h["goals"] if g["status"] == "completed")
    fails(rt, sid, seed, "contribute_to_savings_goal", {"goal_id": vacation["goal_id"],
                                                        "amount": round(vacation["remaining"] + 0.01, 2)},
          "overfund", f"only {vacation['remaining']:.2f}")
    fails(rt, sid, seed, "contribute_to_savings_goal", {"goal_id": done["goal_id"], "amount": 5}, "already reached")
    fails(rt, sid, seed, "create_savings_goal", {"name": "Boat", "target_amount": 900, "target_date": "2026-06-01"},
          "after today")
    fails(rt, sid, seed, "create_savings_goal", {"name": "Boat", "target_amount": 900, "target_date": "2037-01-01"},
          "within ten years")
    fails(rt, sid, seed, "create_savings_goal", {"name": "emergency fund", "target_amount": 900,
                                                 "target_date": "2027-01-01"}, "already exists")
    fails(rt, sid, seed, "create_savings_goal", {"name": "Boat", "target_amount": 900, "target_date": "2027-01-01",
                                                 "initial_deposit": 901}, "more than the target")
    active = sum(1 for g in w.h["goals"] if g["status"] == "active")
    for k in range(8 - active):
        ok(rt, sid, seed, "create_savings_goal", {"name": f"Goal {k}", "target_amount": 100,
                                                  "target_date": "2027-01-01"})
    fails(rt, sid, seed, "create_savings_goal", {"name": "One too many", "target_amount": 100,
                                                 "target_date": "2027-01-01"}, "limit exceeded")
    out = ok(rt, sid, seed, "contribute_to_savings_goal", {"goal_id": vacation["goal_id"],
                                                           "amount": vacation["remaining"], "note": "last bit"})
    assert out["status"] == "completed" and out["completed_now"] is True


# ---------------------------------------------------------------- (4) accumulation, alerts and the clock
def test_month_totals_accumulate_and_alerts_fire_once(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 5
    w = Home(rt, sid, seed)
    coffee = w.cat["Coffee Shops"]
    limit, spent = coffee["monthly_limit"], coffee["spent"]
    warn = round(0.85 * limit - spent, 2)
    a = ok(rt, sid, seed, "record_budget_expense", {"category_id": coffee["category_id"], "amount": warn,
                                                    "merchant": "Starbucks"})
    assert a["category_month"]["spent"] == round(spent + warn, 2)
    assert [x["kind"] for x in a["new_alerts"]] == ["approaching_limit"]
    b = ok(rt, sid, seed, "record_budget_expense", {"category_id": coffee["category_id"], "amount": 1,
                                                    "merchant": "Peet's Coffee"})
    assert b["new_alerts"] == []
    c = ok(rt, sid, seed, "record_budget_expense", {"category_id": coffee["category_id"], "amount": 20,
                                                    "merchant": "Blue Bottle Coffee"})
    assert [x["kind"] for x in c["new_alerts"]] == ["over_budget"]
    summary = ok(rt, sid, seed, "get_budget_month_summary", {})
    assert coffee["category_id"] in {r["category_id"] for r in summary["over_budget"]}
    assert round(spent + warn + 21, 2) == next(r["spent"] for r in summary["over_budget"]
                                                if r["category_id"] == coffee["category_id"])
    ok(rt, sid, seed, "delete_budget_expense", {"expense_id": c["expense"]["expense_id"]})
    cats = ok(rt, sid, seed, "list_budget_categories", {})
    assert next(x for x in cats["categories"] if x["name"] == "Coffee Shops")["spent"] == round(spent + warn + 1, 2)
    # raising the limit under the spending raises no new alert; lowering it below does
    low = ok(rt, sid, seed, "update_budget_category", {"category_id": coffee["category_id"],
                                                       "monthly_limit": round(spent + warn, 2)})
    assert low["new_alerts"] == []  # the over-budget alert of this month already exists


def test_clock_posts_recurring_bills_misses_goals_and_closes_months(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    w = Home(rt, sid, seed)
    soon = next(r for r in w.h["recurring"] if r["next_due"] in ("2026-06-02", "2026-06-03"))
    gifts = w.goal("Holiday Gifts")
    may = w.expense("2026-05", invoice_id=None, recurring_id=None)
    advance(rt, sid, seed, 3 * DAY)  # now June 4th
    s = state_of(rt, sid, seed)
    posted = [e for e in s["expenses"].values() if e["recurring_id"] == soon["recurring_id"]
              and e["spent_on"].startswith("2026-06")]
    assert len(posted) == 1 and posted[0]["amount"] == soon["amount"]
    assert s["recurring"][soon["recurring_id"]]["next_due"].startswith("2026-07")
    assert s["goals"][gifts["goal_id"]]["status"] == "missed"
    assert any(a["kind"] == "goal_missed" and a["goal_id"] == gifts["goal_id"] for a in s["alerts"].values())
    fails(rt, sid, seed, "contribute_to_savings_goal", {"goal_id": gifts["goal_id"], "amount": 5}, "missed its target")
    # a bill whose category was locked is skipped, with an alert
    sub = ok(rt, sid, seed, "schedule_recurring_expense", {"category_id": w.cid("Dining Out"), "merchant": "Meal Kit",
                                                           "amount": 60, "day_of_month": 6})
    ok(rt, sid, seed, "update_budget_category", {"category_id": w.cid("Dining Out"), "status": "locked",
                                                 "admin_pin": w.pin})
    advance(rt, sid, seed, 3 * DAY)
    s = state_of(rt, sid, seed)
    assert not [e for e in s["expenses"].values() if e["recurring_id"] == sub["recurring_id"]]
    assert any(a["kind"] == "recurring_skipped" and a["recurring_id"] == sub["recurring_id"] for a in s["alerts"].values())
    assert s["recurring"][sub["recurring_id"]]["next_due"] == "2026-07-06"
    # in July, May is closed
    ok(rt, sid, seed, "update_budget_expense", {"expense_id": may["expense_id"], "note": "checked"})
    advance(rt, sid, seed, 30 * DAY)
    fails(rt, sid, seed, "update_budget_expense", {"expense_id": may["expense_id"], "note": "again"},
          "month 2026-05 is closed")
    rent = [e for e in state_of(rt, sid, seed)["expenses"].values() if e["merchant"].endswith("Property Management")
            and e["spent_on"] == "2026-07-01"]
    assert len(rent) == 1


def test_replaying_the_same_calls_gives_the_same_state(rt: DomainRuntime) -> None:
    assert_replays_alike(rt, 2, [("budget_session_advance_clock", {"minutes": 20 * DAY})])


# ---------------------------------------------------------------- (5) determinism and the payments link
@pytest.mark.parametrize("seed", [0, 3, 9])
def test_linked_expenses_match_the_payments_world_of_the_same_seed(seed: int) -> None:
    budget = domain.new_world(seed).snapshot()
    pay = payments_domain.new_world(seed).snapshot()
    linked = [e for e in budget["expenses"].values() if e["invoice_id"]]
    assert len(linked) >= 3
    name, _ = household(seed)
    admin = next(m for m in budget["members"].values() if m["role"] == "admin")
    assert admin["name"] == name
    for e in linked:
        inv = pay["invoices"][e["invoice_id"]]
        assert e["amount"] == inv["amount"] and e["merchant"] == pay["merchants"][inv["merchant_id"]]["name"]
        assert pay["customers"][inv["customer_id"]]["name"] == name
    assert set(budget["payment_invoices"]) == set(pay["invoices"])
