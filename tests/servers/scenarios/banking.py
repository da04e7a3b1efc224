"""Banking smoke scenario: a realistic session that succeeds with every user-visible tool once.

``call(name, args)`` performs a tool call on one session (over whatever transport the harness
chose), asserts it did not return an error, and returns the decoded JSON result.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


async def smoke(call: Call) -> None:
    accounts = await call("banking_list_all_accounts", {"min_balance": 2000, "status": "active"})
    owners: dict[str, list[dict[str, Any]]] = {}
    for acc in accounts:
        owners.setdefault(acc["customer_id"], []).append(acc)
    # a customer with two funded accounts, one of them checking (checking accounts carry a debit card)
    cid, owned = next((c, a) for c, a in owners.items()
                      if len(a) >= 2 and any(x["account_type"] == "checking" for x in a))
    src = next(a for a in owned if a["account_type"] == "checking")
    dst = next(a for a in owned if a is not src)
    await call("get_customer_profile", {"customer_id": cid})
    await call("update_contact_info", {"customer_id": cid, "phone": "(555) 010-2233"})
    listed = await call("list_accounts", {"customer_id": cid})
    assert {a["account_id"] for a in listed} >= {src["account_id"], dst["account_id"]}
    await call("get_account_balance", {"account_id": src["account_id"]})
    txs = await call("list_transactions", {"account_id": src["account_id"], "limit": 50})
    await call("transfer_funds", {"from_account_id": src["account_id"], "to_account_id": dst["account_id"],
                                  "amount": 125.5, "pin": src["pin"], "memo": "rent share"})
    payees = await call("list_payees", {"customer_id": cid})
    await call("pay_bill", {"account_id": src["account_id"], "payee_id": payees[0]["payee_id"], "amount": 60,
                            "pin": src["pin"]})
    await call("add_payee", {"customer_id": cid, "name": "Evergreen Gym", "account_number": "88120045",
                             "category": "other"})
    sched = await call("schedule_transfer", {"from_account_id": src["account_id"],
                                             "to_account_id": dst["account_id"], "amount": 40,
                                             "date": "2026-06-15", "pin": src["pin"]})
    await call("cancel_scheduled_transfer", {"scheduled_transfer_id": sched["scheduled_transfer_id"]})
    cards = await call("list_cards", {"customer_id": cid})
    active = [c for c in cards if c["status"] == "active"]
    if active:
        await call("freeze_card", {"card_id": active[0]["card_id"], "reason": "lost"})
        await call("unfreeze_card", {"card_id": active[0]["card_id"], "pin": _pin_of(accounts, active[0])})
    else:
        await call("unfreeze_card", {"card_id": cards[0]["card_id"], "pin": _pin_of(accounts, cards[0])})
        await call("freeze_card", {"card_id": cards[0]["card_id"], "reason": "travel"})
    charge = next(t for t in txs if t["amount"] < 0 and t["date"] >= "2026-04-05" and t["status"] == "posted")
    await call("dispute_transaction", {"transaction_id": charge["transaction_id"], "reason": "duplicate"})
    await call("open_account", {"customer_id": cid, "account_type": "savings", "initial_deposit": 150,
                                "funding_account_id": src["account_id"], "pin": src["pin"]})
    await call("change_pin", {"account_id": dst["account_id"], "current_pin": dst["pin"], "new_pin": "4826"})


def _pin_of(accounts: list[dict[str, Any]], card: dict[str, Any]) -> str:
    return next(a["pin"] for a in accounts if a["account_id"] == card["account_id"])
