"""Payments state: merchants, their customers and saved cards, invoices, charges, refunds, payouts,
webhook endpoints and webhook deliveries — plus the shared rules every tool enforces the same way.

Money is kept in the record's own currency (invoices, charges, refunds) or in the merchant's
settlement currency (balances, fees, payouts); :func:`convert` uses fixed reference rates so worlds
and replays stay deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, Literal

from servers.kit import Cell, Counters, State, Table, ToolError, iso, new_id, now, require

Currency = Literal["USD", "EUR", "GBP"]
InvoiceStatus = Literal["draft", "open", "paid", "void", "uncollectible"]
EventType = Literal[
    "invoice.created", "invoice.finalized", "invoice.paid", "invoice.voided", "invoice.marked_uncollectible",
    "invoice.overdue", "charge.succeeded", "charge.refunded", "refund.succeeded", "payout.created", "payout.paid",
]
EVENT_TYPES: tuple[str, ...] = (
    "invoice.created", "invoice.finalized", "invoice.paid", "invoice.voided", "invoice.marked_uncollectible",
    "invoice.overdue", "charge.succeeded", "charge.refunded", "refund.succeeded", "payout.created", "payout.paid",
)
USD_PER: dict[str, float] = {"USD": 1.0, "EUR": 1.08, "GBP": 1.27}
CARD_FEE_RATE, CARD_FEE_FIXED = 0.029, 0.30
INSTANT_FEE_RATE, INSTANT_FEE_MIN = 0.01, 0.50
SETTLEMENT_DELAY = timedelta(days=2)  # a charge's funds become available two days later
REFUND_PROCESSING = timedelta(minutes=30)  # pending refund -> succeeded
STANDARD_PAYOUT = timedelta(days=2)
INSTANT_PAYOUT = timedelta(minutes=30)
MAX_DELIVERY_ATTEMPTS = 5  # a delivery is abandoned (failed) after this many failed attempts
RETRY_BASE = timedelta(minutes=5)  # backoff: 5, 15, 45, 135 minutes between attempts
RETRY_FACTOR = 3
DISABLE_AFTER = timedelta(hours=3)  # an endpoint failing without a single success this long is disabled


@dataclass
class Merchant:
    merchant_id: str
    name: str
    category: str
    email: str
    api_key: str  # secret key; every money-moving call must present it
    currency: str  # settlement currency of the balance and payouts
    available_balance: float
    pending_balance: float
    refund_window_days: int
    instant_payout_daily_limit: float
    payout_bank_last4: str
    created_at: str


@dataclass
class Customer:
    customer_id: str
    merchant_id: str
    name: str
    email: str
    currency: str  # billing currency: every invoice of this customer uses it
    default_payment_method_id: str | None
    created_at: str


@dataclass
class PaymentMethod:
    payment_method_id: str
    customer_id: str
    brand: str
    last4: str
    exp_month: int
    exp_year: int
    available_credit: float  # what the issuer will still authorise (in any invoice currency)
    decline_code: str | None  # e.g. do_not_honor: the issuer refuses every charge


@dataclass
class Invoice:
    invoice_id: str
    merchant_id: str
    customer_id: str
    description: str
    amount: float
    currency: str
    status: str  # draft -> open -> paid | void | uncollectible (uncollectible -> paid | void)
    days_until_due: int
    created_at: str
    finalized_at: str | None = None
    due_date: str | None = None
    overdue: bool = False
    paid_at: str | None = None
    payment_id: str | None = None
    voided_at: str | None = None
    marked_uncollectible_at: str | None = None


@dataclass
class Payment:
    payment_id: str
    merchant_id: str
    customer_id: str
    invoice_id: str
    payment_method_id: str
    amount: float  # in the invoice currency
    currency: str
    fee: float  # in the merchant's settlement currency
    amount_refunded: float
    status: str  # succeeded | partially_refunded | refunded
    created_at: str
    available_on: str
    settled: bool
    settle_amount: float  # what moves from pending to available on available_on


@dataclass
class Refund:
    refund_id: str
    payment_id: str
    merchant_id: str
    amount: float
    currency: str
    reason: str
    status: str  # pending -> succeeded
    created_at: str
    succeeds_at: str


@dataclass
class Payout:
    payout_id: str
    merchant_id: str
    amount: float
    fee: float
    currency: str
    method: str  # standard | instant
    status: str  # in_transit -> paid
    created_at: str
    arrival_at: str
    bank_last4: str


@dataclass
class WebhookEndpoint:
    endpoint_id: str
    merchant_id: str
    url: str
    events: list[str]  # subscribed event types, or ["*"]
    status: str  # enabled | disabled
    disabled_reason: str | None
    receiver_status: int  # the HTTP status the receiver at ``url`` answers with (200 = healthy)
    consecutive_failures: int
    created_at: str
    failing_since: str | None = None  # first failed attempt since the last success


@dataclass
class WebhookDelivery:
    delivery_id: str
    endpoint_id: str
    merchant_id: str
    event_type: str
    object_id: str
    created_at: str
    status: str  # pending -> succeeded | retrying -> ... -> failed
    attempts: int
    next_attempt_at: str | None
    last_attempt_at: str | None = None
    last_response: int | None = None
    attempt_log: list[dict[str, Any]] = field(default_factory=list)


class PaymentsState(State):
    merchants: Table[Merchant]
    customers: Table[Customer]
    payment_methods: Table[PaymentMethod]
    invoices: Table[Invoice]
    payments: Table[Payment]
    refunds: Table[Refund]
    payouts: Table[Payout]
    endpoints: Table[WebhookEndpoint]
    deliveries: Table[WebhookDelivery]
    counters: Cell[Counters]


# ---------------------------------------------------------------- small helpers
def r2(x: float) -> float:
    return round(x + 0.0, 2)


def convert(amount: float, src: str, dst: str) -> float:
    return r2(amount * USD_PER[src] / USD_PER[dst])


def card_fee(amount_settlement: float) -> float:
    return r2(amount_settlement * CARD_FEE_RATE + CARD_FEE_FIXED)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def get_merchant(s: PaymentsState, merchant_id: str) -> Merchant:
    return require(s.merchants, merchant_id, "merchant_id")


def get_customer(s: PaymentsState, customer_id: str) -> Customer:
    return require(s.customers, customer_id, "customer_id")


def get_invoice(s: PaymentsState, invoice_id: str) -> Invoice:
    return require(s.invoices, invoice_id, "invoice_id")


def get_payment(s: PaymentsState, payment_id: str) -> Payment:
    return require(s.payments, payment_id, "payment_id")


def get_endpoint(s: PaymentsState, endpoint_id: str) -> WebhookEndpoint:
    return require(s.endpoints, endpoint_id, "endpoint_id")


def check_api_key(m: Merchant, api_key: str) -> None:
    """Money-moving calls must present the merchant's secret key."""
    if api_key != m.api_key:
        raise ToolError(f"api_key is not a valid secret key for merchant {m.merchant_id} ({m.name}); "
                        "use the key the merchant gave you", field="api_key", code="auth")


def card_expired(pm: PaymentMethod, today: date) -> bool:
    return (pm.exp_year, pm.exp_month) < (today.year, today.month)


def instant_paid_today(s: PaymentsState, merchant_id: str, day: date) -> float:
    return r2(sum(p.amount for p in s.payouts.values()
                  if p.merchant_id == merchant_id and p.method == "instant" and at(p.created_at).date() == day))


# ---------------------------------------------------------------- webhooks
def subscribed(ep: WebhookEndpoint, event_type: str) -> bool:
    return "*" in ep.events or event_type in ep.events


def emit(s: PaymentsState, merchant_id: str, event_type: str, object_id: str, when: datetime | None = None) -> list[str]:
    """Enqueue a delivery of ``event_type`` to every enabled endpoint of the merchant subscribed to it."""
    t = iso(when or now(s))
    out = []
    for ep in s.endpoints.values():
        if ep.merchant_id != merchant_id or ep.status != "enabled" or not subscribed(ep, event_type):
            continue
        did = new_id(s.counters, "DLV", width=5)
        s.deliveries.put(did, WebhookDelivery(did, ep.endpoint_id, merchant_id, event_type, object_id, t,
                                              "pending", 0, t))
        out.append(did)
    return out


def attempt_delivery(s: PaymentsState, delivery_id: str, when: datetime) -> None:
    """One delivery attempt at ``when``: success, or a failure with backoff, abandonment after
    :data:`MAX_DELIVERY_ATTEMPTS`, and the endpoint disabled once it has failed for :data:`DISABLE_AFTER`."""
    d = s.deliveries.edit(delivery_id)
    ep = s.endpoints.edit(d.endpoint_id)
    d.attempts += 1
    d.last_attempt_at = iso(when)
    d.last_response = ep.receiver_status
    d.attempt_log.append({"at": iso(when), "response": ep.receiver_status})
    if ep.receiver_status < 300:
        d.status, d.next_attempt_at = "succeeded", None
        ep.consecutive_failures, ep.failing_since = 0, None
        return
    ep.consecutive_failures += 1
    ep.failing_since = ep.failing_since or iso(when)
    if d.attempts >= MAX_DELIVERY_ATTEMPTS:
        d.status, d.next_attempt_at = "failed", None
    else:
        d.status = "retrying"
        d.next_attempt_at = iso(when + retry_delay(d.attempts))
    if ep.status == "enabled" and when - at(ep.failing_since) >= DISABLE_AFTER:
        ep.status = "disabled"
        ep.disabled_reason = (f"disabled automatically: every delivery failed for {DISABLE_AFTER.seconds // 3600} "
                              f"hours ({ep.consecutive_failures} attempts, last response HTTP {ep.receiver_status})")


def retry_delay(attempts: int) -> timedelta:
    """Backoff after the ``attempts``-th failed attempt: 5, 15, 45, 135 minutes."""
    return RETRY_BASE * (RETRY_FACTOR ** (attempts - 1))


# ---------------------------------------------------------------- the clock
def on_time(s: PaymentsState, before: datetime, after: datetime) -> None:
    """Everything whose time came between ``before`` and ``after``, in time order (ties by id):
    charges settle into the available balance, pending refunds succeed, payouts arrive, open invoices
    past their due date turn overdue (each emitting its webhook event), then due webhook deliveries
    are attempted with retries and backoff."""
    due: list[tuple[datetime, int, str]] = []
    for key, p in s.payments.items():
        if not p.settled and at(p.available_on) <= after:
            due.append((at(p.available_on), 0, key))
    for key, rf in s.refunds.items():
        if rf.status == "pending" and at(rf.succeeds_at) <= after:
            due.append((at(rf.succeeds_at), 1, key))
    for key, po in s.payouts.items():
        if po.status == "in_transit" and at(po.arrival_at) <= after:
            due.append((at(po.arrival_at), 2, key))
    for key, inv in s.invoices.items():
        if inv.status == "open" and not inv.overdue and inv.due_date is not None:
            overdue_at = datetime.combine(date.fromisoformat(inv.due_date) + timedelta(days=1),
                                          datetime.min.time(), tzinfo=after.tzinfo)
            if overdue_at <= after:
                due.append((overdue_at, 3, key))
    for when, kind, key in sorted(due):
        if kind == 0:
            p = s.payments.edit(key)
            m = s.merchants.edit(p.merchant_id)
            m.pending_balance = r2(m.pending_balance - p.settle_amount)
            m.available_balance = r2(m.available_balance + p.settle_amount)
            p.settled = True
        elif kind == 1:
            rf = s.refunds.edit(key)
            rf.status = "succeeded"
            emit(s, rf.merchant_id, "refund.succeeded", key, when)
        elif kind == 2:
            po = s.payouts.edit(key)
            po.status = "paid"
            emit(s, po.merchant_id, "payout.paid", key, when)
        else:
            inv = s.invoices.edit(key)
            inv.overdue = True
            emit(s, inv.merchant_id, "invoice.overdue", key, when)
    while True:
        ready = [(at(d.next_attempt_at), key) for key, d in s.deliveries.items()
                 if d.status in ("pending", "retrying") and d.next_attempt_at is not None
                 and at(d.next_attempt_at) <= after and s.endpoints[d.endpoint_id].status == "enabled"]
        if not ready:
            return
        when, key = min(ready)
        attempt_delivery(s, key, when)


# ---------------------------------------------------------------- views
def card_view(pm: PaymentMethod, today: date, default_id: str | None) -> dict[str, Any]:
    return {"payment_method_id": pm.payment_method_id, "brand": pm.brand, "last4": pm.last4,
            "expires": f"{pm.exp_month:02d}/{pm.exp_year}", "expired": card_expired(pm, today),
            "default": pm.payment_method_id == default_id}


def refundable(p: Payment) -> float:
    return r2(p.amount - p.amount_refunded)


def refund_deadline(s: PaymentsState, p: Payment) -> datetime:
    return at(p.created_at) + timedelta(days=s.merchants[p.merchant_id].refund_window_days)


def payment_view(s: PaymentsState, p: Payment) -> dict[str, Any]:
    pm = s.payment_methods.get(p.payment_method_id)
    return {"payment_id": p.payment_id, "invoice_id": p.invoice_id, "amount": p.amount, "currency": p.currency,
            "status": p.status, "amount_refunded": p.amount_refunded, "refundable_amount": refundable(p),
            "refundable_until": iso(refund_deadline(s, p)), "fee": p.fee,
            "card": f"{pm.brand} ending {pm.last4}" if pm else None, "created_at": p.created_at,
            "refunds": [{"refund_id": rf.refund_id, "amount": rf.amount, "status": rf.status, "reason": rf.reason,
                         "created_at": rf.created_at} for rf in s.refunds.values() if rf.payment_id == p.payment_id]}


def invoice_view(s: PaymentsState, inv: Invoice) -> dict[str, Any]:
    cust = s.customers[inv.customer_id]
    out: dict[str, Any] = {
        "invoice_id": inv.invoice_id, "merchant_id": inv.merchant_id, "merchant": s.merchants[inv.merchant_id].name,
        "customer_id": inv.customer_id, "customer": cust.name, "description": inv.description,
        "amount": inv.amount, "currency": inv.currency, "status": inv.status, "overdue": inv.overdue,
        "amount_due": inv.amount if inv.status in ("open", "uncollectible") else 0.0,
        "created_at": inv.created_at, "finalized_at": inv.finalized_at, "due_date": inv.due_date,
        "paid_at": inv.paid_at, "voided_at": inv.voided_at, "marked_uncollectible_at": inv.marked_uncollectible_at,
    }
    if inv.status == "draft":
        out["days_until_due"] = inv.days_until_due
    out["payment"] = payment_view(s, s.payments[inv.payment_id]) if inv.payment_id else None
    return out


def balance_view(s: PaymentsState, m: Merchant) -> dict[str, Any]:
    t = now(s)
    upcoming = sorted((p.available_on, p.payment_id, p.settle_amount) for p in s.payments.values()
                       if p.merchant_id == m.merchant_id and not p.settled)
    return {
        "merchant_id": m.merchant_id, "merchant": m.name, "currency": m.currency,
        "available": m.available_balance, "pending": m.pending_balance,
        "upcoming_settlements": [{"payment_id": pid, "amount": amt, "available_on": when}
                                 for when, pid, amt in upcoming],
        "instant_payout_remaining_today": r2(max(0.0, m.instant_payout_daily_limit
                                                 - instant_paid_today(s, m.merchant_id, t.date()))),
        "payout_bank": f"bank account ending {m.payout_bank_last4}",
        "as_of": iso(t),
    }


def payout_view(po: Payout) -> dict[str, Any]:
    return {"payout_id": po.payout_id, "amount": po.amount, "fee": po.fee, "arriving_amount": r2(po.amount - po.fee),
            "currency": po.currency, "method": po.method, "status": po.status, "created_at": po.created_at,
            "arrival_at": po.arrival_at, "bank": f"bank account ending {po.bank_last4}"}


def endpoint_view(s: PaymentsState, ep: WebhookEndpoint) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for d in s.deliveries.values():
        if d.endpoint_id == ep.endpoint_id:
            counts[d.status] = counts.get(d.status, 0) + 1
    return {"endpoint_id": ep.endpoint_id, "merchant_id": ep.merchant_id, "url": ep.url, "events": list(ep.events),
            "status": ep.status, "disabled_reason": ep.disabled_reason,
            "consecutive_failures": ep.consecutive_failures, "failing_since": ep.failing_since,
            "deliveries": {k: counts[k] for k in sorted(counts)}}


def delivery_view(d: WebhookDelivery) -> dict[str, Any]:
    return {"delivery_id": d.delivery_id, "endpoint_id": d.endpoint_id, "event_type": d.event_type,
            "object_id": d.object_id, "status": d.status, "attempts": d.attempts,
            "last_response": d.last_response, "last_attempt_at": d.last_attempt_at,
            "next_attempt_at": d.next_attempt_at, "created_at": d.created_at}
