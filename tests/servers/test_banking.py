"""Banking domain: tool count, every failure rule of the docstring (error names the
rule/field and the state is unchanged), workflows, scheduled transfers executing with the session
clock."""

from __future__ import annotations

from typing import Any

from servers import PAPER_TOOL_COUNTS
from servers.banking import domain
from servers.banking.state import Account, BankingState
from servers.kit import DomainRuntime
from tests.servers.harness import fails, new_sid, ok, snapshot, state_of


def advance(rt: DomainRuntime, sid: str, seed: int, *, days: int = 0, minutes: int = 0) -> Any:
    return ok(rt, sid, seed, "banking_session_advance_clock", {"minutes": days * 24 * 60 + minutes})


def world(seed: int) -> BankingState:
    return domain.new_world(seed)  # type: ignore[return-value]


def other_pin(pin: str) -> str:
    return "0000" if pin != "0000" else "1111"


def funded_pair(seed: int, minimum: float = 500.0) -> tuple[Account, Account]:
    """Two active accounts of one customer, the first holding at least ``minimum``."""
    w = world(seed)
    by_customer: dict[str, list[Account]] = {}
    for acc in w.accounts.values():
        if acc.status == "active":
            by_customer.setdefault(acc.customer_id, []).append(acc)
    for accounts in by_customer.values():
        rich = [a for a in accounts if a.balance >= minimum]
        if rich and len(accounts) >= 2:
            src = rich[0]
            return src, next(a for a in accounts if a.account_id != src.account_id)
    raise AssertionError(f"seed {seed}: no customer with two active accounts and {minimum} available")


def balance(rt: DomainRuntime, sid: str, seed: int, account_id: str) -> float:
    return ok(rt, sid, seed, "get_account_balance", {"account_id": account_id})["balance"]


def close_account(rt: DomainRuntime, sid: str, seed: int, account_id: str) -> None:
    """No tool closes accounts; set one up the way a back office would (white-box test setup)."""
    s = rt.sessions.open(sid, seed)
    s.begin()
    s.accounts.edit(account_id).status = "closed"  # type: ignore[attr-defined]
    s.commit()


# ---------------------------------------------------------------- (1) tool count, (2) smoke coverage
def test_exactly_seventeen_user_tools_and_named_discovery(rt: DomainRuntime) -> None:
    assert len(domain.user_tools) == PAPER_TOOL_COUNTS["banking"] == 17
    assert len(rt.table.openai_tools()) == 17
    discovery = [s.name for s in domain.tools.values() if s.kind == "discovery"]
    assert 2 <= len(discovery) <= 4 and all(n.startswith("banking_") for n in discovery)
    assert all(s.consumes or s.produces or s.requires for s in domain.user_tools)
    for name in ("transfer_funds", "pay_bill", "schedule_transfer", "unfreeze_card", "open_account"):
        assert rt.table.sensitive_params(name) == ["pin"]
    assert rt.table.sensitive_params("change_pin") == ["current_pin", "new_pin"]
    for name in ("transfer_funds", "pay_bill", "schedule_transfer"):
        assert rt.table.schemas[name]["properties"]["amount"]["x-money"] is True


# ---------------------------------------------------------------- (3) every failure rule leaves state alone
def test_insufficient_funds(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    src, dst = funded_pair(seed)
    too_much = round(src.balance + 0.01, 2)
    fails(rt, sid, seed, "transfer_funds", {"from_account_id": src.account_id, "to_account_id": dst.account_id,
                                            "amount": too_much, "pin": src.pin}, "insufficient funds", "amount")
    payee = next(p for p in world(seed).payees.values() if p.customer_id == src.customer_id)
    fails(rt, sid, seed, "pay_bill", {"account_id": src.account_id, "payee_id": payee.payee_id, "amount": too_much,
                                      "pin": src.pin}, "insufficient funds", str(src.account_id))
    fails(rt, sid, seed, "open_account", {"customer_id": src.customer_id, "account_type": "savings",
                                          "initial_deposit": max(too_much, 100.0), "funding_account_id": src.account_id,
                                          "pin": src.pin}, "insufficient funds")


def test_frozen_and_closed_accounts_move_no_money(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    w = world(seed)
    frozen = next(a for a in w.accounts.values() if a.status == "frozen")
    src, dst = funded_pair(seed)
    fails(rt, sid, seed, "transfer_funds", {"from_account_id": frozen.account_id, "to_account_id": dst.account_id,
                                            "amount": 1, "pin": frozen.pin}, "is frozen", "from_account_id")
    fails(rt, sid, seed, "transfer_funds", {"from_account_id": src.account_id, "to_account_id": frozen.account_id,
                                            "amount": 1, "pin": src.pin}, "is frozen", "to_account_id")
    fails(rt, sid, seed, "schedule_transfer", {"from_account_id": frozen.account_id, "to_account_id": dst.account_id,
                                               "amount": 1, "date": "2026-06-10", "pin": frozen.pin}, "is frozen")
    payee = next(p for p in w.payees.values() if p.customer_id == frozen.customer_id)
    fails(rt, sid, seed, "pay_bill", {"account_id": frozen.account_id, "payee_id": payee.payee_id, "amount": 1,
                                      "pin": frozen.pin}, "is frozen", "account_id")
    fails(rt, sid, seed, "open_account", {"customer_id": frozen.customer_id, "account_type": "checking",
                                          "initial_deposit": 25, "funding_account_id": frozen.account_id,
                                          "pin": frozen.pin}, "is frozen", "funding_account_id")
    close_account(rt, sid, seed, dst.account_id)
    fails(rt, sid, seed, "transfer_funds", {"from_account_id": src.account_id, "to_account_id": dst.account_id,
                                            "amount": 1, "pin": src.pin}, "is closed", "to_account_id")
    listed = ok(rt, sid, seed, "list_accounts", {"customer_id": src.customer_id})
    assert dst.account_id not in {a["account_id"] for a in listed}  # closed accounts are not listed


def test_wrong_pin_everywhere(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    src, dst = funded_pair(seed)
    bad = other_pin(src.pin)
    move = {"from_account_id": src.account_id, "to_account_id": dst.account_id, "amount": 10, "pin": bad}
    fails(rt, sid, seed, "transfer_funds", move, "incorrect PIN", "pin")
    fails(rt, sid, seed, "schedule_transfer", {**move, "date": "2026-06-10"}, "incorrect PIN", "pin")
    payee = next(p for p in world(seed).payees.values() if p.customer_id == src.customer_id)
    fails(rt, sid, seed, "pay_bill", {"account_id": src.account_id, "payee_id": payee.payee_id, "amount": 10,
                                      "pin": bad}, "incorrect PIN")
    fails(rt, sid, seed, "open_account", {"customer_id": src.customer_id, "account_type": "checking",
                                          "initial_deposit": 25, "funding_account_id": src.account_id, "pin": bad},
          "incorrect PIN")
    fails(rt, sid, seed, "change_pin", {"account_id": src.account_id, "current_pin": bad, "new_pin": "4826"},
          "incorrect PIN")
    card = next(c for c in world(seed).cards.values() if c.status == "active")
    owner = world(seed).accounts[card.account_id]
    ok(rt, sid, seed, "freeze_card", {"card_id": card.card_id, "reason": "lost"})
    fails(rt, sid, seed, "unfreeze_card", {"card_id": card.card_id, "pin": other_pin(owner.pin)}, "incorrect PIN")
    fails(rt, sid, seed, "transfer_funds", {**move, "pin": "12a4"}, "pin")  # not four digits: refused by the schema


def test_daily_transfer_limit_and_its_reset_the_next_day(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    src, dst = funded_pair(seed, 10_100)
    assert src.balance > src.daily_transfer_limit + 100
    limit = src.daily_transfer_limit
    move = {"from_account_id": src.account_id, "to_account_id": dst.account_id, "pin": src.pin}
    fails(rt, sid, seed, "transfer_funds", {**move, "amount": limit + 1}, "daily transfer limit", "amount")
    ok(rt, sid, seed, "transfer_funds", {**move, "amount": limit - 10})
    assert ok(rt, sid, seed, "get_account_balance", {"account_id": src.account_id})["daily_transfer_remaining"] == 10
    fails(rt, sid, seed, "transfer_funds", {**move, "amount": 20}, "daily transfer limit", "10.00 left today")
    payee = next(p for p in world(seed).payees.values() if p.customer_id == src.customer_id)
    ok(rt, sid, seed, "pay_bill", {"account_id": src.account_id, "payee_id": payee.payee_id, "amount": 20,
                                   "pin": src.pin})  # bill payments do not count against the transfer limit
    advance(rt, sid, seed, days=1)
    assert ok(rt, sid, seed, "get_account_balance", {"account_id": src.account_id})["daily_transfer_remaining"] == limit
    ok(rt, sid, seed, "transfer_funds", {**move, "amount": 20})


def test_transfer_shape_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    src, dst = funded_pair(seed)
    move = {"from_account_id": src.account_id, "to_account_id": dst.account_id, "pin": src.pin}
    fails(rt, sid, seed, "transfer_funds", {**move, "to_account_id": src.account_id, "amount": 5}, "same account")
    fails(rt, sid, seed, "transfer_funds", {**move, "amount": 2_000_000}, "exceeds the bank's limit", "amount")
    fails(rt, sid, seed, "transfer_funds", {**move, "amount": 0}, "amount")
    fails(rt, sid, seed, "transfer_funds", {**move, "amount": -5}, "amount")
    fails(rt, sid, seed, "transfer_funds", {**move, "amount": 1.005}, "amount", "two decimals")
    fails(rt, sid, seed, "transfer_funds", {**move, "amount": 5, "from_account_id": "ACC-9999"},
          "unknown from_account_id")
    fails(rt, sid, seed, "transfer_funds", {**move, "amount": 5, "to_account_id": "ACC-9999"}, "unknown to_account_id")
    fails(rt, sid, seed, "get_account_balance", {"account_id": "ACC-9999"}, "unknown account_id")
    fails(rt, sid, seed, "list_transactions", {"account_id": src.account_id, "since": "last month"}, "since")
    fails(rt, sid, seed, "list_transactions", {"account_id": src.account_id, "since": "2026-02-30"}, "since",
          "YYYY-MM-DD")


def test_cards_frozen_not_frozen_and_stolen(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    w = world(seed)
    frozen = next(c for c in w.cards.values() if c.status == "frozen")
    active = next(c for c in w.cards.values() if c.status == "active")
    pin = w.accounts[active.account_id].pin
    fails(rt, sid, seed, "freeze_card", {"card_id": frozen.card_id, "reason": "lost"}, "already frozen", "card_id")
    fails(rt, sid, seed, "unfreeze_card", {"card_id": active.card_id, "pin": pin}, "is not frozen")
    ok(rt, sid, seed, "freeze_card", {"card_id": active.card_id, "reason": "stolen"})
    fails(rt, sid, seed, "unfreeze_card", {"card_id": active.card_id, "pin": pin}, "reported stolen")
    fails(rt, sid, seed, "freeze_card", {"card_id": "CRD-9999", "reason": "lost"}, "unknown card_id")
    fails(rt, sid, seed, "freeze_card", {"card_id": active.card_id, "reason": "bored"}, "reason")


def test_scheduled_transfers_must_be_dated_in_the_future(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    src, dst = funded_pair(seed)
    move = {"from_account_id": src.account_id, "to_account_id": dst.account_id, "amount": 25, "pin": src.pin}
    fails(rt, sid, seed, "schedule_transfer", {**move, "date": "2026-06-01"}, "not in the future", "date")
    fails(rt, sid, seed, "schedule_transfer", {**move, "date": "2026-05-20"}, "not in the future", "today is 2026-06-01")
    fails(rt, sid, seed, "schedule_transfer", {**move, "date": "2027-06-02"}, "at most one year ahead")
    fails(rt, sid, seed, "schedule_transfer", {**move, "date": "2026-13-01"}, "date", "YYYY-MM-DD")
    fails(rt, sid, seed, "schedule_transfer", {**move, "date": "June 3"}, "date")
    fails(rt, sid, seed, "schedule_transfer", {**move, "date": "2026-06-05", "to_account_id": src.account_id},
          "same account")
    sched = ok(rt, sid, seed, "schedule_transfer", {**move, "date": "2026-06-02"})
    advance(rt, sid, seed, days=1)  # what was "tomorrow" is today now: it ran, and today is no longer schedulable
    fails(rt, sid, seed, "schedule_transfer", {**move, "date": "2026-06-02"}, "not in the future", "today is 2026-06-02")
    fails(rt, sid, seed, "cancel_scheduled_transfer", {"scheduled_transfer_id": sched["scheduled_transfer_id"]},
          "already executed")
    other = ok(rt, sid, seed, "schedule_transfer", {**move, "date": "2026-06-09"})
    ok(rt, sid, seed, "cancel_scheduled_transfer", {"scheduled_transfer_id": other["scheduled_transfer_id"]})
    fails(rt, sid, seed, "cancel_scheduled_transfer", {"scheduled_transfer_id": other["scheduled_transfer_id"]},
          "already cancelled", "scheduled_transfer_id")
    fails(rt, sid, seed, "cancel_scheduled_transfer", {"scheduled_transfer_id": "SCH-9999"},
          "unknown scheduled_transfer_id")


def test_disputes_only_on_recent_uncontested_charges(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    txs = list(world(seed).transactions.values())
    credit = next(t for t in txs if t.amount > 0)
    old = next(t for t in txs if t.amount < 0 and t.date < "2026-04-02")
    edge = next(t for t in txs if t.amount < 0 and "2026-04-02" <= t.date <= "2026-04-10")
    fails(rt, sid, seed, "dispute_transaction", {"transaction_id": credit.transaction_id, "reason": "other"},
          "is a credit", "transaction_id")
    fails(rt, sid, seed, "dispute_transaction", {"transaction_id": old.transaction_id, "reason": "duplicate"},
          "older than 60 days")
    fails(rt, sid, seed, "dispute_transaction", {"transaction_id": "TXN-99999", "reason": "other"},
          "unknown transaction_id")
    # the window moves with the clock: a charge inside it today is outside it ten days later
    other = new_sid()
    advance(rt, other, seed, days=10)
    fails(rt, other, seed, "dispute_transaction", {"transaction_id": edge.transaction_id, "reason": "duplicate"},
          "older than 60 days")
    out = ok(rt, sid, seed, "dispute_transaction", {"transaction_id": edge.transaction_id, "reason": "duplicate"})
    assert out["status"] == "open" and out["opened_on"] == "2026-06-01"
    assert state_of(rt, sid, seed)["transactions"][edge.transaction_id]["status"] == "disputed"
    fails(rt, sid, seed, "dispute_transaction", {"transaction_id": edge.transaction_id, "reason": "duplicate"},
          "already disputed")


def test_payee_opening_pin_and_contact_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 4
    w = world(seed)
    src, _ = funded_pair(seed, 1500)
    stranger = next(p for p in w.payees.values() if p.customer_id != src.customer_id)
    fails(rt, sid, seed, "pay_bill", {"account_id": src.account_id, "payee_id": stranger.payee_id, "amount": 5,
                                      "pin": src.pin}, "does not belong", "payee_id")
    fails(rt, sid, seed, "pay_bill", {"account_id": src.account_id, "payee_id": "PAY-9999", "amount": 5,
                                      "pin": src.pin}, "unknown payee_id")
    mine = next(p for p in w.payees.values() if p.customer_id == src.customer_id)
    fails(rt, sid, seed, "add_payee", {"customer_id": src.customer_id, "name": mine.name,
                                       "account_number": mine.account_number}, "already exists", "account_number")
    fails(rt, sid, seed, "add_payee", {"customer_id": src.customer_id, "name": "Gym", "account_number": "12ab"},
          "account_number")
    fails(rt, sid, seed, "open_account", {"customer_id": src.customer_id, "account_type": "money_market",
                                          "initial_deposit": 999.99, "funding_account_id": src.account_id,
                                          "pin": src.pin}, "at least 1000.00", "initial_deposit")
    foreign = next(a for a in w.accounts.values() if a.customer_id != src.customer_id and a.status == "active")
    fails(rt, sid, seed, "open_account", {"customer_id": src.customer_id, "account_type": "checking",
                                          "initial_deposit": 25, "funding_account_id": foreign.account_id,
                                          "pin": foreign.pin}, "does not belong", "funding_account_id")
    fails(rt, sid, seed, "change_pin", {"account_id": src.account_id, "current_pin": src.pin, "new_pin": src.pin},
          "must differ", "new_pin")
    same = "7777" if src.pin != "7777" else "8888"
    fails(rt, sid, seed, "change_pin", {"account_id": src.account_id, "current_pin": src.pin, "new_pin": same},
          "four identical digits")
    fails(rt, sid, seed, "update_contact_info", {"customer_id": src.customer_id}, "nothing to update")
    fails(rt, sid, seed, "update_contact_info", {"customer_id": src.customer_id, "email": "not-an-email"}, "email")
    fails(rt, sid, seed, "update_contact_info", {"customer_id": src.customer_id, "phone": "call me"}, "phone")
    fails(rt, sid, seed, "update_contact_info", {"customer_id": src.customer_id, "address": "1 Main St\nApt 2"},
          "address")
    fails(rt, sid, seed, "get_customer_profile", {"customer_id": "CUS-9999"}, "unknown customer_id")
    fails(rt, sid, seed, "list_cards", {"customer_id": "CUS-9999"}, "unknown customer_id")


# ---------------------------------------------------------------- (4) workflows
def test_transfer_pay_open_and_pin_workflow(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 5
    src, dst = funded_pair(seed, 2000)
    out = ok(rt, sid, seed, "transfer_funds", {"from_account_id": src.account_id, "to_account_id": dst.account_id,
                                               "amount": 125.55, "pin": src.pin, "memo": "rent share"})
    assert out["from_balance"] == round(src.balance - 125.55, 2)
    assert balance(rt, sid, seed, dst.account_id) == round(dst.balance + 125.55, 2)
    snap = state_of(rt, sid, seed)["transactions"]
    assert snap[out["transaction_id"]]["amount"] == -125.55 and snap[out["credit_transaction_id"]]["amount"] == 125.55
    assert snap[out["transaction_id"]]["description"] == "rent share"
    history = ok(rt, sid, seed, "list_transactions", {"account_id": dst.account_id, "category": "transfer", "limit": 1})
    assert history[0]["transaction_id"] == out["credit_transaction_id"]
    payee = ok(rt, sid, seed, "add_payee", {"customer_id": src.customer_id, "name": "Evergreen Gym",
                                            "account_number": "88120045"})
    paid = ok(rt, sid, seed, "pay_bill", {"account_id": src.account_id, "payee_id": payee["payee_id"],
                                          "amount": 60, "pin": src.pin})
    assert paid["balance"] == round(src.balance - 125.55 - 60, 2)
    new = ok(rt, sid, seed, "open_account", {"customer_id": src.customer_id, "account_type": "savings",
                                             "initial_deposit": 150, "funding_account_id": src.account_id,
                                             "pin": src.pin})
    assert balance(rt, sid, seed, new["account_id"]) == 150
    assert new["account_id"] in {a["account_id"] for a in ok(rt, sid, seed, "list_accounts",
                                                             {"customer_id": src.customer_id})}
    ok(rt, sid, seed, "change_pin", {"account_id": new["account_id"], "current_pin": src.pin, "new_pin": "4826"})
    fails(rt, sid, seed, "transfer_funds", {"from_account_id": new["account_id"], "to_account_id": src.account_id,
                                            "amount": 10, "pin": src.pin}, "incorrect PIN")
    ok(rt, sid, seed, "transfer_funds", {"from_account_id": new["account_id"], "to_account_id": src.account_id,
                                         "amount": 10, "pin": "4826"})
    profile = ok(rt, sid, seed, "update_contact_info", {"customer_id": src.customer_id, "phone": "(555) 010-2233",
                                                        "email": "new.mail@example.org"})
    assert profile["phone"] == "(555) 010-2233" and profile["email"] == "new.mail@example.org"


def test_scheduled_transfers_execute_when_the_clock_reaches_their_date(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    src, dst = funded_pair(seed, 1000)
    move = {"from_account_id": src.account_id, "to_account_id": dst.account_id, "pin": src.pin}
    first = ok(rt, sid, seed, "schedule_transfer", {**move, "amount": 40, "date": "2026-06-03"})
    drain = ok(rt, sid, seed, "schedule_transfer", {**move, "amount": round(src.balance - 40 - 5, 2),
                                                    "date": "2026-06-05"})
    late = ok(rt, sid, seed, "schedule_transfer", {**move, "amount": 10, "date": "2026-06-05"})
    cancelled = ok(rt, sid, seed, "schedule_transfer", {**move, "amount": 1, "date": "2026-06-04"})
    ok(rt, sid, seed, "cancel_scheduled_transfer", {"scheduled_transfer_id": cancelled["scheduled_transfer_id"]})
    advance(rt, sid, seed, days=1)  # 2026-06-02: nothing is due yet
    snap = state_of(rt, sid, seed)
    assert all(snap["scheduled"][x["scheduled_transfer_id"]]["status"] == "scheduled" for x in (first, drain, late))
    assert snap["accounts"][src.account_id]["balance"] == src.balance
    advance(rt, sid, seed, days=1)  # 2026-06-03: the first one runs
    snap = state_of(rt, sid, seed)
    done = snap["scheduled"][first["scheduled_transfer_id"]]
    assert done["status"] == "executed" and done["executed_on"] == "2026-06-03"
    assert snap["accounts"][src.account_id]["balance"] == round(src.balance - 40, 2)
    assert snap["accounts"][dst.account_id]["balance"] == round(dst.balance + 40, 2)
    posted = [t for t in snap["transactions"].values() if first["scheduled_transfer_id"] in t["description"]]
    assert sorted((t["account_id"], t["amount"], t["date"]) for t in posted) == sorted(
        [(src.account_id, -40, "2026-06-03"), (dst.account_id, 40, "2026-06-03")])
    assert done["transaction_id"] in snap["transactions"]
    advance(rt, sid, seed, days=3)  # 2026-06-06: both 06-05 transfers are due; they run in id order
    snap = state_of(rt, sid, seed)
    assert snap["scheduled"][drain["scheduled_transfer_id"]]["status"] == "executed"
    failed = snap["scheduled"][late["scheduled_transfer_id"]]
    assert failed["status"] == "failed" and "insufficient funds" in failed["failure_reason"]
    assert snap["scheduled"][cancelled["scheduled_transfer_id"]]["status"] == "cancelled"
    assert snap["accounts"][src.account_id]["balance"] == 5.0
    # a transfer whose account was frozen in the meantime fails without moving money
    other = new_sid()
    sched = ok(rt, other, seed, "schedule_transfer", {**move, "amount": 15, "date": "2026-06-02"})
    s = rt.sessions.open(other, seed)
    s.begin()
    s.accounts.edit(dst.account_id).status = "frozen"  # type: ignore[attr-defined]
    s.commit()
    advance(rt, other, seed, days=1)
    rec = state_of(rt, other, seed)["scheduled"][sched["scheduled_transfer_id"]]
    assert rec["status"] == "failed" and "destination account" in rec["failure_reason"] and "frozen" in rec[
        "failure_reason"]
    assert balance(rt, other, seed, src.account_id) == src.balance


def test_same_calls_replayed_give_identical_state(rt: DomainRuntime) -> None:
    seed = 1
    src, dst = funded_pair(seed, 300)
    move = {"from_account_id": src.account_id, "to_account_id": dst.account_id, "pin": src.pin}
    snaps = []
    for _ in range(2):
        sid = new_sid()
        ok(rt, sid, seed, "schedule_transfer", {**move, "amount": 30, "date": "2026-06-04"})
        ok(rt, sid, seed, "transfer_funds", {**move, "amount": 12.5})
        advance(rt, sid, seed, days=5, minutes=7)
        ok(rt, sid, seed, "list_transactions", {"account_id": dst.account_id})
        snaps.append(snapshot(rt, sid, seed))
    assert snaps[0] == snaps[1]
    assert '"status":"executed"' in snaps[0].replace(" ", "")


def test_failed_calls_do_not_move_the_clock(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    info = lambda: ok(rt, sid, seed, "banking_server_info", {})["now"]  # noqa: E731
    start = info()
    rt.call("get_customer_profile", {"customer_id": "CUS-9999"}, sid, seed)
    assert info() == start
    ok(rt, sid, seed, "get_customer_profile", {"customer_id": "CUS-0001"})
    assert info() > start


# ---------------------------------------------------------------- (5) determinism
def test_unique_values_and_search(rt: DomainRuntime) -> None:
    sid = new_sid()
    kinds = {r["value"] for r in ok(rt, sid, 0, "banking_get_unique_values", {"field": "account_type"})}
    assert kinds <= {"checking", "savings", "money_market"} and "checking" in kinds
    everyone = ok(rt, sid, 0, "banking_search_customers", {})
    assert len(everyone) == 30
    frozen = ok(rt, sid, 0, "banking_list_all_accounts", {"status": "frozen"})
    assert frozen and all(a["status"] == "frozen" for a in frozen)
    assert len(ok(rt, sid, 0, "banking_list_all_accounts", {})) == len(world(0).accounts)


# ---------------------------------------------------------------- layout: listing order and tool modules
USER_TOOL_ORDER = [
    "get_customer_profile", "update_contact_info", "list_accounts", "get_account_balance",
    "list_transactions", "transfer_funds", "list_payees", "add_payee", "pay_bill", "schedule_transfer",
    "cancel_scheduled_transfer", "list_cards", "freeze_card", "unfreeze_card", "dispute_transaction",
    "open_account", "change_pin",
]


def test_user_tool_order_is_pinned() -> None:
    """The listing order the model sees is pinned (where each tool lives is checked for every domain
    by ``test_contract``)."""
    assert [t.name for t in domain.user_tools] == USER_TOOL_ORDER
