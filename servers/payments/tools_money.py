"""Payments tools that move money after a charge: refunds, the merchant's balance, payouts to the bank."""

from __future__ import annotations

from typing import Literal

from servers.kit import Money, ToolError, iso, new_id, now, tool
from servers.payments.state import (
    INSTANT_FEE_MIN,
    INSTANT_FEE_RATE,
    INSTANT_PAYOUT,
    REFUND_PROCESSING,
    STANDARD_PAYOUT,
    Currency,
    PaymentsState,
    Payout,
    Refund,
    balance_view,
    check_api_key,
    convert,
    emit,
    get_merchant,
    get_payment,
    instant_paid_today,
    payment_view,
    payout_view,
    r2,
    refund_deadline,
    refundable,
)
from servers.payments.tools_invoices import ApiKey


@tool(produces=("refund_id",), consumes=("payment_id",), requires=("invoice_paid",),
      establishes=("refund_pending",))
def refund_payment_charge(s: PaymentsState, api_key: ApiKey, payment_id: str, amount: Money | None = None,
                          reason: Literal["requested_by_customer", "duplicate", "fraudulent"] = "requested_by_customer"
                          ) -> dict:
    """Refund a card charge in full or in part, in the charge's currency. The refund never exceeds what
    is left unrefunded, must be made within the merchant's refund window, and is paid out of the
    merchant's pending funds for that charge and then its available balance. It is pending for about
    30 minutes, then succeeds. Needs the merchant's secret API key.

    Args:
        api_key: The merchant's secret API key (sk_live_...), as the merchant gave it.
        payment_id: The charge to refund, e.g. PAY-0031 (shown on the paid invoice).
        amount: How much to refund; omit to refund everything not yet refunded.
        reason: Why the money is returned.
    """
    p = get_payment(s, payment_id)
    m = s.merchants[p.merchant_id]
    check_api_key(m, api_key)
    left = refundable(p)
    if left <= 0:
        raise ToolError(f"charge {payment_id} is already fully refunded ({p.amount_refunded:.2f} {p.currency})",
                        field="payment_id", code="illegal_state")
    value = r2(amount if amount is not None else left)
    if value > left:
        raise ToolError(f"refund amount {value:.2f} exceeds the {left:.2f} {p.currency} still refundable on "
                        f"{payment_id} (charged {p.amount:.2f}, refunded {p.amount_refunded:.2f})", field="amount",
                        code="limit_exceeded")
    t = now(s)
    deadline = refund_deadline(s, p)
    if t > deadline:
        raise ToolError(f"refund window closed: {m.name} allows refunds for {m.refund_window_days} days and "
                        f"{payment_id} was charged on {p.created_at[:10]} (window ended {iso(deadline)[:10]})",
                        field="payment_id", code="expired")
    cost = convert(value, p.currency, m.currency)
    from_pending = 0.0 if p.settled else min(cost, max(0.0, p.settle_amount))
    from_available = r2(cost - from_pending)
    if from_available > m.available_balance:
        raise ToolError(f"insufficient available balance: refunding {value:.2f} {p.currency} needs "
                        f"{from_available:.2f} {m.currency} from the available balance, which holds "
                        f"{m.available_balance:.2f}; wait for pending funds to settle", field="amount",
                        code="insufficient_funds")
    merchant = s.merchants.edit(m.merchant_id)
    merchant.available_balance = r2(merchant.available_balance - from_available)
    pay = s.payments.edit(payment_id)
    if from_pending:
        merchant.pending_balance = r2(merchant.pending_balance - from_pending)
        pay.settle_amount = r2(pay.settle_amount - from_pending)
    pay.amount_refunded = r2(pay.amount_refunded + value)
    pay.status = "refunded" if refundable(pay) <= 0 else "partially_refunded"
    rid = new_id(s.counters, "RF")
    rf = s.refunds.put(rid, Refund(rid, payment_id, m.merchant_id, value, p.currency, reason, "pending", iso(t),
                                   iso(t + REFUND_PROCESSING)))
    emit(s, m.merchant_id, "charge.refunded", payment_id)
    return {"refund_id": rid, "amount": rf.amount, "currency": rf.currency, "status": rf.status,
            "reason": reason, "expected_success_at": rf.succeeds_at, "charge": payment_view(s, pay),
            "balance_debited": {"pending": from_pending, "available": from_available, "currency": m.currency}}


@tool(consumes=("merchant_id",), read_only=True)
def get_merchant_balance(s: PaymentsState, merchant_id: str) -> dict:
    """Show a merchant's balance: funds available to pay out, funds still pending (with when each charge
    settles), today's remaining instant-payout allowance and recent payouts to the bank.

    Args:
        merchant_id: The merchant, e.g. MER-0001.
    """
    m = get_merchant(s, merchant_id)
    out = balance_view(s, m)
    payouts = sorted((po for po in s.payouts.values() if po.merchant_id == merchant_id),
                     key=lambda po: (po.created_at, po.payout_id), reverse=True)
    out["recent_payouts"] = [payout_view(po) for po in payouts[:5]]
    return out


@tool(produces=("payout_id",), consumes=("merchant_id",))
def create_merchant_payout(s: PaymentsState, api_key: ApiKey, merchant_id: str, amount: Money | None = None,
                           method: Literal["standard", "instant"] = "standard",
                           currency: Currency | None = None) -> dict:
    """Pay money from the merchant's available balance out to its bank account. Standard payouts are free
    and arrive in two days; instant payouts arrive in about 30 minutes for a 1% fee (at least 0.50) and
    are capped per day. Pending funds cannot be paid out. Needs the merchant's secret API key.

    Args:
        api_key: The merchant's secret API key (sk_live_...), as the merchant gave it.
        merchant_id: The merchant, e.g. MER-0001.
        amount: How much to pay out; omit to pay out the whole available balance.
        method: How fast the money should arrive.
        currency: The payout currency; must be the merchant's settlement currency (default).
    """
    m = get_merchant(s, merchant_id)
    check_api_key(m, api_key)
    if currency is not None and currency != m.currency:
        raise ToolError(f"currency mismatch: {m.name}'s balance is held in {m.currency}; a payout in {currency} "
                        "is not possible", field="currency", code="currency_mismatch")
    value = r2(amount if amount is not None else m.available_balance)
    if value <= 0:
        raise ToolError(f"nothing to pay out: the available balance is 0.00 {m.currency} "
                        f"({m.pending_balance:.2f} still pending)", field="amount", code="insufficient_funds")
    if value > m.available_balance:
        raise ToolError(f"insufficient available balance: {value:.2f} {m.currency} requested but only "
                        f"{m.available_balance:.2f} is available ({m.pending_balance:.2f} still pending)",
                        field="amount", code="insufficient_funds")
    t = now(s)
    fee = 0.0
    if method == "instant":
        used = instant_paid_today(s, merchant_id, t.date())
        if used + value > m.instant_payout_daily_limit:
            raise ToolError(f"instant payout limit exceeded: {m.instant_payout_daily_limit:.2f} {m.currency} per "
                            f"day, {used:.2f} already paid out instantly today; use a standard payout or a "
                            f"smaller amount", field="amount", code="limit_exceeded")
        fee = r2(max(INSTANT_FEE_MIN, value * INSTANT_FEE_RATE))
    merchant = s.merchants.edit(merchant_id)
    merchant.available_balance = r2(merchant.available_balance - value)
    pid = new_id(s.counters, "PO")
    po = s.payouts.put(pid, Payout(pid, merchant_id, value, fee, m.currency, method, "in_transit", iso(t),
                                   iso(t + (INSTANT_PAYOUT if method == "instant" else STANDARD_PAYOUT)),
                                   m.payout_bank_last4))
    emit(s, merchant_id, "payout.created", pid)
    return {**payout_view(po), "balance": balance_view(s, merchant)}
