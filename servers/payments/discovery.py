"""Payments discovery tools (hidden from the model): the live entities synthesis grounds requests in,
including each merchant's secret API key (a synthesized merchant must state it for money-moving calls)
and each invoice's payability (the customer's card state) and refundability."""

from __future__ import annotations

from typing import Literal

from servers.kit import discovery, now, today, value_counts
from servers.payments.state import PaymentsState, card_expired, endpoint_view, refund_deadline, refundable


@discovery(produces=("merchant_id", "endpoint_id"))
def payments_list_merchants(s: PaymentsState) -> list:
    """Every merchant with its secret API key, settlement currency, balances, refund window, instant
    payout limit and webhook endpoints."""
    return [{"merchant_id": m.merchant_id, "name": m.name, "category": m.category, "email": m.email,
             "api_key": m.api_key, "currency": m.currency, "available_balance": m.available_balance,
             "pending_balance": m.pending_balance, "refund_window_days": m.refund_window_days,
             "instant_payout_daily_limit": m.instant_payout_daily_limit,
             "customers": sum(1 for c in s.customers.values() if c.merchant_id == m.merchant_id),
             "endpoints": [endpoint_view(s, ep) for ep in s.endpoints.values() if ep.merchant_id == m.merchant_id]}
            for m in s.merchants.values()]


@discovery(produces=("invoice_id", "payment_id", "customer_id", "payment_method_id"))
def payments_list_invoices(s: PaymentsState, merchant_id: str | None = None,
                           status: Literal["draft", "open", "paid", "void", "uncollectible"] | None = None) -> list:
    """Every invoice with its merchant, customer (name, email, currency), the state of the customer's
    default card (expired / declines / available) and, when paid, the charge's refundable amount.

    Args:
        merchant_id: Only invoices of this merchant.
        status: Only invoices in this status.
    """
    day, out = today(s), []
    for inv in s.invoices.values():
        if (merchant_id is not None and inv.merchant_id != merchant_id) or (status is not None and inv.status != status):
            continue
        c = s.customers[inv.customer_id]
        pm = s.payment_methods.get(c.default_payment_method_id or "")
        card = None if pm is None else (
            "expired" if card_expired(pm, day) else "declines" if pm.decline_code or pm.available_credit < inv.amount
            else "ok")
        row = {"invoice_id": inv.invoice_id, "merchant_id": inv.merchant_id,
               "merchant": s.merchants[inv.merchant_id].name, "customer_id": c.customer_id, "customer": c.name,
               "customer_email": c.email, "customer_currency": c.currency, "description": inv.description,
               "amount": inv.amount, "currency": inv.currency, "status": inv.status, "overdue": inv.overdue,
               "due_date": inv.due_date, "default_payment_method_id": c.default_payment_method_id,
               "default_card": card, "payment_id": inv.payment_id}
        if inv.payment_id:
            p = s.payments[inv.payment_id]
            row.update(refundable_amount=refundable(p), refund_window_open=refund_deadline(s, p) >= now(s),
                       charge_settled=p.settled)
        out.append(row)
    return out


@discovery
def payments_get_unique_values(s: PaymentsState, field: Literal[
        "invoice_status", "currency", "merchant_category", "card_brand", "delivery_status", "event_type",
        "endpoint_status", "refund_reason", "payout_method"]) -> list:
    """Distinct values of a categorical field with their counts.

    Args:
        field: Which field to enumerate.
    """
    values = {
        "invoice_status": lambda: [i.status for i in s.invoices.values()],
        "currency": lambda: [i.currency for i in s.invoices.values()],
        "merchant_category": lambda: [m.category for m in s.merchants.values()],
        "card_brand": lambda: [pm.brand for pm in s.payment_methods.values()],
        "delivery_status": lambda: [d.status for d in s.deliveries.values()],
        "event_type": lambda: [d.event_type for d in s.deliveries.values()],
        "endpoint_status": lambda: [e.status for e in s.endpoints.values()],
        "refund_reason": lambda: [r.reason for r in s.refunds.values()],
        "payout_method": lambda: [p.method for p in s.payouts.values()],
    }[field]()
    return value_counts(values)
