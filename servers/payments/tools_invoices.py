"""Payments tools: customers and their saved cards, invoices (draft -> open -> paid / void /
uncollectible) and paying an invoice with a card."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any, Literal

from pydantic import Field

from servers.kit import Money, Sensitive, Text, ToolError, iso, new_id, now, today, tool
from servers.payments.state import (
    SETTLEMENT_DELAY,
    Currency,
    Invoice,
    InvoiceStatus,
    Payment,
    PaymentsState,
    card_expired,
    card_fee,
    card_view,
    check_api_key,
    convert,
    emit,
    get_customer,
    get_invoice,
    get_merchant,
    invoice_view,
    r2,
)

ApiKey = Annotated[Sensitive, Field(pattern=r"^sk_live_[A-Za-z0-9]{24}$")]
Limit = Annotated[int, Field(ge=1, le=50)]
Offset = Annotated[int, Field(ge=0, le=10_000)]


@tool(produces=("customer_id", "payment_method_id"), read_only=True)
def list_payment_customers(s: PaymentsState, merchant_id: str | None = None, name: str | None = None,
                           email: str | None = None, limit: Limit = 20, offset: Offset = 0) -> dict:
    """Find a merchant's customers by name or email, with their billing currency, saved cards (brand, last
    four digits, expiry, whether expired) and what they currently owe on open invoices.

    Args:
        merchant_id: Only customers of this merchant, e.g. MER-0001.
        name: Case-insensitive part of the customer's name.
        email: Case-insensitive part of the customer's email address.
        limit: How many customers to return (1-50).
        offset: How many matching customers to skip, for paging.
    """
    if merchant_id is not None:
        get_merchant(s, merchant_id)
    day = today(s)
    owed: dict[str, float] = {}
    for inv in s.invoices.values():
        if inv.status in ("open", "uncollectible"):
            owed[inv.customer_id] = r2(owed.get(inv.customer_id, 0.0) + inv.amount)
    rows = [c for c in s.customers.values()
            if (merchant_id is None or c.merchant_id == merchant_id)
            and (name is None or name.strip().lower() in c.name.lower())
            and (email is None or email.strip().lower() in c.email.lower())]
    rows.sort(key=lambda c: (c.name.lower(), c.customer_id))
    out = []
    for c in rows[offset:offset + limit]:
        cards = [card_view(pm, day, c.default_payment_method_id) for pm in s.payment_methods.values()
                 if pm.customer_id == c.customer_id]
        out.append({"customer_id": c.customer_id, "merchant_id": c.merchant_id, "name": c.name, "email": c.email,
                    "currency": c.currency, "cards": cards, "open_balance": owed.get(c.customer_id, 0.0)})
    return {"total": len(rows), "offset": offset, "customers": out}


@tool(produces=("invoice_id", "payment_id"), consumes=("customer_id",), read_only=True)
def list_payment_invoices(s: PaymentsState, merchant_id: str | None = None, customer_id: str | None = None,
                          status: InvoiceStatus | None = None, overdue_only: bool = False,
                          query: str | None = None,
                          sort_by: Literal["due_date", "created", "amount"] = "created",
                          limit: Limit = 20, offset: Offset = 0) -> dict:
    """Search invoices with their status, amount due, due date and overdue flag; paid invoices include
    their charge with the amount already refunded, what can still be refunded and until when.
    Newest first when sorted by creation, soonest due first by due date, largest first by amount.

    Args:
        merchant_id: Only invoices of this merchant.
        customer_id: Only invoices billed to this customer.
        status: Only invoices in this status.
        overdue_only: Only open invoices whose due date has passed.
        query: Case-insensitive text found in the description, customer name or invoice number.
        sort_by: Sort order.
        limit: How many invoices to return (1-50).
        offset: How many matching invoices to skip, for paging.
    """
    if merchant_id is not None:
        get_merchant(s, merchant_id)
    if customer_id is not None:
        get_customer(s, customer_id)
    needle = (query or "").strip().lower()
    rows = []
    for inv in s.invoices.values():
        if (merchant_id is not None and inv.merchant_id != merchant_id) or \
                (customer_id is not None and inv.customer_id != customer_id) or \
                (status is not None and inv.status != status) or (overdue_only and not inv.overdue):
            continue
        if needle and needle not in f"{inv.description} {s.customers[inv.customer_id].name} {inv.invoice_id}".lower():
            continue
        rows.append(inv)
    if sort_by == "due_date":
        rows.sort(key=lambda i: (i.due_date is None, i.due_date or "", i.invoice_id))
    elif sort_by == "amount":
        rows.sort(key=lambda i: (-i.amount, i.invoice_id))
    else:
        rows.sort(key=lambda i: (i.created_at, i.invoice_id), reverse=True)
    return {"total": len(rows), "offset": offset,
            "invoices": [invoice_view(s, inv) for inv in rows[offset:offset + limit]]}


@tool(produces=("invoice_id",), consumes=("customer_id",), establishes=("invoice_draft",))
def create_payment_invoice(s: PaymentsState, customer_id: str, description: Text, amount: Money,
                           currency: Currency | None = None,
                           days_until_due: Annotated[int, Field(ge=1, le=90)] = 30,
                           finalize: bool = False) -> dict:
    """Bill a customer: create an invoice as a draft, or finalize it at once so it is open and payable.
    An invoice is always in the customer's billing currency; the due date is counted from finalization.

    Args:
        customer_id: The customer to bill, e.g. CUS-0007.
        description: What the invoice is for, as the customer will read it.
        amount: The amount to bill.
        currency: The invoice currency; must be the customer's billing currency (default).
        days_until_due: Payment terms in days after the invoice is finalized (1-90).
        finalize: Finalize the invoice now (open, payable, due date set) instead of leaving a draft.
    """
    c = get_customer(s, customer_id)
    if currency is not None and currency != c.currency:
        raise ToolError(f"currency mismatch: {c.name} ({customer_id}) is billed in {c.currency}, so the "
                        f"invoice cannot be in {currency}; omit currency or use {c.currency}", field="currency",
                        code="currency_mismatch")
    if not description.strip():
        raise ToolError("description must not be empty", field="description")
    t = now(s)
    iid = new_id(s.counters, "INV")
    inv = s.invoices.put(iid, Invoice(iid, c.merchant_id, customer_id, description.strip(), r2(amount), c.currency,
                                      "draft", days_until_due, iso(t)))
    emit(s, c.merchant_id, "invoice.created", iid)
    if finalize:
        _finalize(s, inv)
    return invoice_view(s, inv)


def _finalize(s: PaymentsState, inv: Invoice) -> None:
    t = now(s)
    inv.status, inv.finalized_at = "open", iso(t)
    inv.due_date = (t.date() + timedelta(days=inv.days_until_due)).isoformat()
    emit(s, inv.merchant_id, "invoice.finalized", inv.invoice_id)


_ALLOWED = {"finalize": ("draft",), "void": ("open", "uncollectible"), "mark_uncollectible": ("open",)}
_HINTS = {
    "paid": "it is already paid; refund its charge instead (refund_payment_charge)",
    "void": "it was voided and is final",
    "draft": "it is still a draft; finalize it first, or simply leave the draft unsent",
}


@tool(consumes=("invoice_id",), requires=("invoice_draft",), establishes=("invoice_open",))
def update_payment_invoice_status(s: PaymentsState, invoice_id: str,
                                  action: Literal["finalize", "void", "mark_uncollectible"]) -> dict:
    """Move an invoice through its lifecycle: finalize a draft (it becomes open and payable, with its due
    date set), void an open or uncollectible invoice (cancel it for good), or mark an open invoice as
    uncollectible (written off, though it can still be paid later).

    Args:
        invoice_id: The invoice, e.g. INV-0042.
        action: What to do with the invoice.
    """
    inv = get_invoice(s, invoice_id)
    if inv.status not in _ALLOWED[action]:
        why = _HINTS.get(inv.status, f"it is {inv.status}")
        raise ToolError(f"cannot {action.replace('_', ' ')} invoice {invoice_id}: {why} (status {inv.status}; "
                        f"{action} needs status {' or '.join(_ALLOWED[action])})", field="action",
                        code="illegal_transition")
    inv = s.invoices.edit(invoice_id)
    if action == "finalize":
        _finalize(s, inv)
    elif action == "void":
        inv.status, inv.voided_at = "void", iso(now(s))
        emit(s, inv.merchant_id, "invoice.voided", invoice_id)
    else:
        inv.status, inv.marked_uncollectible_at = "uncollectible", iso(now(s))
        emit(s, inv.merchant_id, "invoice.marked_uncollectible", invoice_id)
    return invoice_view(s, inv)


@tool(produces=("payment_id",), consumes=("invoice_id", "payment_method_id"), requires=("invoice_open",),
      establishes=("invoice_paid",))
def pay_payment_invoice(s: PaymentsState, api_key: ApiKey, invoice_id: str,
                        payment_method_id: str | None = None) -> dict:
    """Charge the customer's card for the full amount of an open (or uncollectible) invoice, which then
    becomes paid. Uses the customer's default card unless another of their cards is given; the card
    must not be expired and the issuer must approve. Needs the merchant's secret API key.

    Args:
        api_key: The merchant's secret API key (sk_live_...), as the merchant gave it.
        invoice_id: The invoice to pay, e.g. INV-0042.
        payment_method_id: One of the customer's saved cards, e.g. PM-0012; omit to use the default card.
    """
    inv = get_invoice(s, invoice_id)
    m = s.merchants[inv.merchant_id]
    check_api_key(m, api_key)
    if inv.status not in ("open", "uncollectible"):
        why = {"paid": f"it was already paid on {inv.paid_at} (charge {inv.payment_id})",
               "void": "it was voided; create a new invoice instead",
               "draft": "it is still a draft; finalize it first (update_payment_invoice_status)"}[inv.status]
        raise ToolError(f"cannot pay invoice {invoice_id}: {why}", field="invoice_id", code="illegal_state")
    c = s.customers[inv.customer_id]
    pm_id = payment_method_id or c.default_payment_method_id
    if pm_id is None:
        raise ToolError(f"{c.name} has no saved card; give a payment_method_id", field="payment_method_id")
    pm = s.payment_methods.get(pm_id)
    if pm is None:
        raise ToolError(f"unknown payment_method_id '{pm_id}'", field="payment_method_id", code="not_found")
    if pm.customer_id != c.customer_id:
        raise ToolError(f"card {pm_id} does not belong to {c.name} ({c.customer_id}), who is billed on "
                        f"{invoice_id}", field="payment_method_id", code="not_owner")
    if card_expired(pm, today(s)):
        raise ToolError(f"card declined: {pm.brand} ending {pm.last4} expired {pm.exp_month:02d}/{pm.exp_year}; "
                        "use another card of the customer", field="payment_method_id", code="card_expired")
    if pm.decline_code is not None:
        raise ToolError(f"card declined by the issuer ({pm.decline_code}): {pm.brand} ending {pm.last4}; the "
                        "customer must contact their bank or use another card", field="payment_method_id",
                        code="card_declined")
    if pm.available_credit < inv.amount:
        raise ToolError(f"card declined (insufficient_funds): {pm.brand} ending {pm.last4} cannot cover "
                        f"{inv.amount:.2f} {inv.currency}; use another card", field="payment_method_id",
                        code="card_declined")
    t = now(s)
    card = s.payment_methods.edit(pm_id)
    card.available_credit = r2(card.available_credit - inv.amount)
    gross = convert(inv.amount, inv.currency, m.currency)
    fee = card_fee(gross)
    pid = new_id(s.counters, "PAY")
    s.payments.put(pid, Payment(pid, m.merchant_id, c.customer_id, invoice_id, pm_id, inv.amount, inv.currency,
                                fee, 0.0, "succeeded", iso(t), iso(t + SETTLEMENT_DELAY), False, r2(gross - fee)))
    merchant = s.merchants.edit(m.merchant_id)
    merchant.pending_balance = r2(merchant.pending_balance + gross - fee)
    inv = s.invoices.edit(invoice_id)
    inv.status, inv.paid_at, inv.payment_id, inv.overdue = "paid", iso(t), pid, False
    emit(s, m.merchant_id, "invoice.paid", invoice_id)
    emit(s, m.merchant_id, "charge.succeeded", pid)
    out: dict[str, Any] = invoice_view(s, inv)
    out["settlement"] = {"gross": gross, "fee": fee, "net": r2(gross - fee), "currency": m.currency,
                         "available_on": iso(t + SETTLEMENT_DELAY)}
    return out
