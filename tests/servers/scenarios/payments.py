"""Payments smoke scenario: a merchant bills a customer, collects the payment by card, refunds part of
it, checks the balance and pays out, then repairs a failing webhook endpoint and replays its failed
deliveries — succeeding once with every user-visible tool.

``call(name, args)`` performs a tool call on one session (over whatever transport the harness
chose), asserts it did not return an error, and returns the decoded JSON result.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


async def smoke(call: Call) -> None:
    merchants = await call("payments_list_merchants", {})
    shop = merchants[0]
    mid, key = shop["merchant_id"], shop["api_key"]
    invoices = await call("payments_list_invoices", {"merchant_id": mid, "status": "open"})
    good = next(i for i in invoices if i["default_card"] == "ok" and i["customer_currency"] == shop["currency"])

    # Find the customer the way a merchant would: by name.
    found = await call("list_payment_customers", {"merchant_id": mid, "name": good["customer"].split()[-1]})
    customer = next(c for c in found["customers"] if c["customer_id"] == good["customer_id"])
    assert any(card["default"] and not card["expired"] for card in customer["cards"])

    # Bill them, finalize, and collect the payment with the card on file.
    draft = await call("create_payment_invoice", {"customer_id": customer["customer_id"],
                                                  "description": "Service visit and parts", "amount": 120.0,
                                                  "days_until_due": 14})
    assert draft["status"] == "draft"
    opened = await call("update_payment_invoice_status", {"invoice_id": draft["invoice_id"], "action": "finalize"})
    assert opened["status"] == "open" and opened["due_date"]
    paid = await call("pay_payment_invoice", {"api_key": key, "invoice_id": draft["invoice_id"]})
    assert paid["status"] == "paid"
    recent = await call("list_payment_invoices", {"merchant_id": mid, "status": "paid", "limit": 5})
    charge = next(i["payment"] for i in recent["invoices"] if i["invoice_id"] == draft["invoice_id"])

    # The customer returns one part: refund it, then look at the money.
    refund = await call("refund_payment_charge", {"api_key": key, "payment_id": charge["payment_id"],
                                                  "amount": 20.0})
    assert refund["charge"]["refundable_amount"] == 100.0
    balance = await call("get_merchant_balance", {"merchant_id": mid})
    payout = await call("create_merchant_payout", {"api_key": key, "merchant_id": mid,
                                                   "amount": min(100.0, balance["available"])})
    assert payout["status"] == "in_transit"

    # A webhook endpoint keeps failing: point it at the new receiver and replay what failed.
    hooks = await call("list_webhook_deliveries", {"merchant_id": mid, "status": "failed"})
    broken = next(e for e in hooks["endpoints"] if e["deliveries"].get("failed"))
    await call("manage_webhook_endpoint", {"api_key": key, "endpoint_id": broken["endpoint_id"],
                                           "action": "update_url", "url": "https://hooks.example.com/v2/payments"})
    await call("manage_webhook_endpoint", {"api_key": key, "endpoint_id": broken["endpoint_id"],
                                           "action": "retry_failed"})
