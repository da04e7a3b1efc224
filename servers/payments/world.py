"""The seeded payments world: four or five small merchants (home services, dental, internet, fitness...)
with their customers, saved cards, six months of invoices, charges, refunds, payouts and webhook traffic.

Guaranteed in every seed (the failure rules always have something to act on):

* the first merchant (USD) has an invoice in every status — draft, open (not yet due), overdue,
  void, uncollectible, paid recently (refundable), paid before the refund window, partly and fully
  refunded — plus a customer whose only card has expired and one whose card is declined, each with
  an open invoice, a customer with no saved card, and a customer billed in a foreign currency;
* a healthy webhook endpoint and a failing one (receiver answering 503, deliveries retrying) on the
  first merchant, an auto-disabled endpoint with failed deliveries on the second;
* a USD merchant whose available balance is nearly empty but who has a settled, refundable charge;
* the first merchant's daily instant-payout limit (2,000) is below its available balance;
* one household (the same person) is a customer of every USD merchant, with paid and open invoices:
  :func:`seed_invoices` exposes every invoice so the budget world of the same seed can reference them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

from servers.kit import Counters, Seeds, iso
from servers.kit.clock import set_time
from servers.kit.fake import REFERENCE_DATE, make_seeds
from servers.payments.state import (
    DISABLE_AFTER,
    EVENT_TYPES,
    MAX_DELIVERY_ATTEMPTS,
    RETRY_BASE,
    Customer,
    Invoice,
    Merchant,
    Payment,
    PaymentMethod,
    PaymentsState,
    Payout,
    Refund,
    WebhookDelivery,
    WebhookEndpoint,
    card_fee,
    convert,
    r2,
)

# kind -> (name suffix, category, (min, max) invoice amount, invoice descriptions)
KINDS: dict[str, tuple[str, str, tuple[float, float], tuple[str, ...]]] = {
    "plumbing": ("Plumbing & Heating", "home_services", (85, 950), (
        "Water heater repair", "Kitchen sink unclog", "Annual boiler service", "Leaking pipe repair",
        "Bathroom faucet replacement")),
    "dental": ("Family Dental", "health", (60, 820), (
        "Routine cleaning and exam", "Filling, lower molar", "Dental x-rays", "Crown fitting", "Whitening session")),
    "internet": ("Fiber Internet", "utilities", (45, 160), (
        "Fiber 500 monthly plan", "Router rental and service", "Gigabit plan with TV add-on", "Installation fee")),
    "fitness": ("Fitness Club", "fitness", (40, 260), (
        "Monthly membership", "Personal training package", "Spin class bundle", "Annual locker rental")),
    "electric": ("Electric Co-op", "utilities", (55, 340), (
        "Electricity usage statement", "Meter upgrade", "Seasonal usage statement")),
    "tutoring": ("Tutoring Center", "education", (70, 480), (
        "Math tutoring, 8 sessions", "SAT prep course", "Reading program monthly fee")),
    "landscaping": ("Landscaping", "home_services", (90, 1200), (
        "Spring yard cleanup", "Lawn mowing, monthly", "Hedge trimming", "Irrigation repair")),
    "veterinary": ("Veterinary Clinic", "pets", (55, 900), (
        "Annual checkup and vaccines", "Dental cleaning for pet", "Emergency visit", "Spay surgery")),
    "auto": ("Auto Repair", "transport", (80, 1400), (
        "Brake pad replacement", "Oil change and inspection", "Transmission service", "Tire rotation")),
}
BRANDS = ("visa", "visa", "mastercard", "mastercard", "amex", "discover")
MAIL_DOMAINS = ("example.com", "mail.example.org", "inbox.example.net")
FORCED = ("draft", "open", "overdue", "void", "uncollectible", "paid_recent", "paid_fresh", "paid_old", "partial_refund",
          "full_refund")


@dataclass(frozen=True)
class InvoiceRef:
    """What another domain may know about a payments invoice of the same seed."""

    invoice_id: str
    merchant_name: str
    merchant_category: str
    customer_name: str
    customer_email: str
    amount: float
    currency: str
    status: str
    issued_on: str  # date the invoice was created
    paid_on: str | None


class _Gen:
    def __init__(self, s: PaymentsState, seeds: Seeds) -> None:
        self.s, self.seeds, self.rng, self.fake = s, seeds, seeds.rng, seeds.fake
        self.n = {"CUS": 0, "PM": 0, "INV": 0, "PAY": 0, "RF": 0, "PO": 0, "WH": 0, "DLV": 0}
        self.events: list[tuple[datetime, str, str, str]] = []  # (when, merchant, type, object)

    def next(self, prefix: str) -> str:
        self.n[prefix] += 1
        return self.seeds.ident(prefix, self.n[prefix], 5 if prefix == "DLV" else 4)

    def when(self, days_ago: float) -> datetime:
        t = REFERENCE_DATE - timedelta(days=days_ago)
        return t.replace(minute=self.rng.randrange(0, 60, 5), second=0, microsecond=0)

    # -- people and cards
    def customer(self, m: Merchant, name: str, email: str, currency: str, card: str = "good") -> Customer:
        cid = self.next("CUS")
        pms = []
        for _ in range(0 if card == "none" else 1 if card != "good" or self.rng.random() < 0.75 else 2):
            pid = self.next("PM")
            year = self.rng.randint(2026, 2030)
            month = self.rng.randint(7 if year == 2026 else 1, 12)
            credit, decline = r2(self.rng.uniform(1500, 9000)), None
            if card == "expired":
                year, month = self.rng.choice([(2025, self.rng.randint(1, 12)), (2026, self.rng.randint(1, 5))])
            elif card == "declined":
                credit = r2(self.rng.uniform(5, 30))
            elif card == "blocked":
                decline = "do_not_honor"
            self.s.payment_methods.put(pid, PaymentMethod(pid, cid, self.seeds.choice(BRANDS),
                                                          f"{self.rng.randint(0, 9999):04d}", month, year, credit,
                                                          decline))
            pms.append(pid)
        return self.s.customers.put(cid, Customer(cid, m.merchant_id, name, email, currency, pms[0] if pms else None,
                                                  iso(self.when(self.rng.randint(150, 700)))))

    def person(self) -> tuple[str, str]:
        first, last = self.fake.first_name(), self.fake.last_name()
        return f"{first} {last}", f"{first}.{last}".lower().replace("'", "") + "@" + self.seeds.choice(MAIL_DOMAINS)

    # -- invoices, charges, refunds
    def invoice(self, m: Merchant, c: Customer, kind: str, fate: str) -> Invoice:
        _, _, (lo, hi), descs = KINDS[kind]
        iid = self.next("INV")
        amount = convert(self.seeds.money(lo, hi), "USD", c.currency) if c.currency != "USD" else self.seeds.money(lo, hi)
        terms = self.seeds.choice([7, 14, 30, 30])
        age = {"draft": self.rng.uniform(0.2, 6), "open": self.rng.uniform(0.5, terms - 1),
               "overdue": self.rng.uniform(terms + 2, terms + 40), "paid_recent": self.rng.uniform(4, 12),
               "paid_fresh": self.rng.uniform(2, 4),
               "paid_old": self.rng.uniform(m.refund_window_days + 8, 175)}.get(fate, self.rng.uniform(5, 175))
        created = self.when(age)
        inv = Invoice(iid, m.merchant_id, c.customer_id, self.seeds.choice(descs), amount, c.currency, "draft",
                      terms, iso(created))
        self.events.append((created, m.merchant_id, "invoice.created", iid))
        if fate == "draft":
            return self.s.invoices.put(iid, inv)
        finalized = created + timedelta(minutes=self.rng.randrange(5, 600, 5))
        inv.status, inv.finalized_at = "open", iso(finalized)
        inv.due_date = (finalized + timedelta(days=terms)).date().isoformat()
        inv.overdue = finalized.date() + timedelta(days=terms) < REFERENCE_DATE.date()
        self.events.append((finalized, m.merchant_id, "invoice.finalized", iid))
        if fate in ("void", "uncollectible"):
            later = finalized + timedelta(days=self.rng.uniform(1, max(1.5, min(age - 0.1, terms + 20))))
            later = min(later, REFERENCE_DATE - timedelta(hours=2)).replace(second=0, microsecond=0)
            inv.status = fate
            if fate == "void":
                inv.voided_at = iso(later)
                self.events.append((later, m.merchant_id, "invoice.voided", iid))
            else:
                inv.marked_uncollectible_at = iso(later)
                self.events.append((later, m.merchant_id, "invoice.marked_uncollectible", iid))
        elif fate.startswith("paid") or fate.endswith("refund"):
            if fate == "paid_fresh":  # not settled yet: still in the pending balance
                paid = REFERENCE_DATE - timedelta(days=self.rng.uniform(0.1, 1.5))
            elif fate == "paid_old":  # paid promptly, long before the refund window closed
                paid = finalized + timedelta(days=self.rng.uniform(0.05, 2))
            else:
                paid = finalized + timedelta(days=self.rng.uniform(0.05, max(0.1, min(age - 3.5, terms))))
            self.pay(m, c, inv, paid, fate)
        return self.s.invoices.put(iid, inv)

    def pay(self, m: Merchant, c: Customer, inv: Invoice, paid: datetime, fate: str) -> None:
        paid = paid.replace(second=0, microsecond=0)
        pid = self.next("PAY")
        inv.status, inv.paid_at, inv.payment_id, inv.overdue = "paid", iso(paid), pid, False
        settle_gross = convert(inv.amount, inv.currency, m.currency)
        fee = card_fee(settle_gross)
        available_on = paid + timedelta(days=2)
        settled = available_on <= REFERENCE_DATE
        p = Payment(pid, m.merchant_id, c.customer_id, inv.invoice_id, c.default_payment_method_id or "",
                    inv.amount, inv.currency, fee, 0.0, "succeeded", iso(paid), iso(available_on), settled,
                    r2(settle_gross - fee))
        self.events += [(paid, m.merchant_id, "invoice.paid", inv.invoice_id), (paid, m.merchant_id,
                                                                                 "charge.succeeded", pid)]
        if fate in ("partial_refund", "full_refund"):
            amount = p.amount if fate == "full_refund" else r2(p.amount * self.rng.choice([0.2, 0.25, 0.5]))
            made = paid + timedelta(days=self.rng.uniform(0.5, 3))
            made = min(made, REFERENCE_DATE - timedelta(hours=3)).replace(second=0, microsecond=0)
            rid = self.next("RF")
            self.s.refunds.put(rid, Refund(rid, pid, m.merchant_id, amount, p.currency,
                                           self.seeds.choice(["requested_by_customer", "duplicate"]), "succeeded",
                                           iso(made), iso(made + timedelta(minutes=30))))
            p.amount_refunded = amount
            p.status = "refunded" if fate == "full_refund" else "partially_refunded"
            if not settled:
                p.settle_amount = r2(p.settle_amount - convert(amount, p.currency, m.currency))
            self.events.append((made, m.merchant_id, "charge.refunded", pid))
        if not settled:
            m.pending_balance = r2(m.pending_balance + p.settle_amount)
        self.s.payments.put(pid, p)

    # -- payouts and webhooks
    def payouts(self, m: Merchant) -> None:
        for k in range(self.rng.randint(2, 4), 0, -1):
            created = self.when(k * 14 + self.rng.uniform(0, 5))
            self._payout(m, created, "paid", r2(self.rng.uniform(400, 4000)))
        if self.rng.random() < 0.5:
            self._payout(m, self.when(self.rng.uniform(0.2, 1.5)), "in_transit", r2(self.rng.uniform(200, 1500)))

    def _payout(self, m: Merchant, created: datetime, status: str, amount: float) -> None:
        pid = self.next("PO")
        arrival = created + timedelta(days=2)
        self.s.payouts.put(pid, Payout(pid, m.merchant_id, amount, 0.0, m.currency, "standard", status, iso(created),
                                       iso(arrival), m.payout_bank_last4))
        self.events.append((created, m.merchant_id, "payout.created", pid))
        if status == "paid":
            self.events.append((arrival, m.merchant_id, "payout.paid", pid))

    def endpoint(self, m: Merchant, health: str) -> WebhookEndpoint:
        eid = self.next("WH")
        host = m.name.split()[0].lower().replace("'", "")
        path = self.seeds.choice(["/webhooks/payments", "/api/hooks/billing", "/stripe-events", "/hooks/invoices"])
        events = ["*"] if self.rng.random() < 0.5 else sorted(self.seeds.sample(EVENT_TYPES, self.rng.randint(4, 8)))
        if health != "healthy":
            events = ["*"]
        ep = WebhookEndpoint(eid, m.merchant_id, f"https://{host}-{eid[-2:]}.example.com{path}", events,
                             "disabled" if health == "disabled" else "enabled", None,
                             {"healthy": 200, "failing": 503, "disabled": 410}[health], 0,
                             iso(self.when(self.rng.randint(60, 400))))
        if health == "disabled":
            ep.consecutive_failures = 12
            ep.disabled_reason = (f"disabled automatically: every delivery failed for {DISABLE_AFTER.seconds // 3600} "
                                  f"hours ({ep.consecutive_failures} attempts, last response HTTP {ep.receiver_status})")
        return self.s.endpoints.put(eid, ep)

    def deliveries(self) -> None:
        """Replay the last week's events into deliveries, oldest first. Healthy receivers answered 200;
        a disabled endpoint's receiver kept failing until it was switched off; the failing endpoint had
        an outage earlier in the week (one delivery abandoned), recovered, and went down again three
        minutes ago: its two newest deliveries are waiting for their first retry."""
        recent = sorted(e for e in self.events if REFERENCE_DATE - timedelta(days=7) <= e[0] < REFERENCE_DATE)
        for ep in self.s.endpoints.values():
            mine = [e for e in recent if e[1] == ep.merchant_id and ("*" in ep.events or e[2] in ep.events)]
            if ep.status == "disabled":
                older = sorted(e for e in self.events if e[1] == ep.merchant_id and e[0] < REFERENCE_DATE)
                mine = mine[:4] or older[-2:]
            for n, (when, mid, etype, obj) in enumerate(mine):
                did = self.next("DLV")
                d = WebhookDelivery(did, ep.endpoint_id, mid, etype, obj, iso(when), "succeeded", 1, None,
                                    iso(when), 200, [{"at": iso(when), "response": 200}])
                if ep.status == "disabled" or (ep.receiver_status >= 300 and n == 0):
                    code = ep.receiver_status
                    d.attempts, d.status, d.last_response = MAX_DELIVERY_ATTEMPTS, "failed", code
                    d.attempt_log = [{"at": iso(when + RETRY_BASE * ((3 ** k - 1) // 2)), "response": code}
                                     for k in range(MAX_DELIVERY_ATTEMPTS)]
                    d.last_attempt_at = d.attempt_log[-1]["at"]
                self.s.deliveries.put(did, d)
            if ep.status == "enabled" and ep.receiver_status >= 300:
                pay = next(p for p in self.s.payments.values() if p.merchant_id == ep.merchant_id)
                for k, (etype, obj) in enumerate((("invoice.paid", pay.invoice_id), ("charge.succeeded",
                                                                                      pay.payment_id))):
                    first = REFERENCE_DATE - timedelta(minutes=3 - k)
                    did = self.next("DLV")
                    self.s.deliveries.put(did, WebhookDelivery(
                        did, ep.endpoint_id, ep.merchant_id, etype, obj, iso(first), "retrying", 1,
                        iso(first + RETRY_BASE), iso(first), ep.receiver_status,
                        [{"at": iso(first), "response": ep.receiver_status}]))
                    ep.consecutive_failures += 1
                    ep.failing_since = ep.failing_since or iso(first)


def generate(s: PaymentsState, seeds: Seeds) -> None:
    """Merchants, customers, cards, ~150 invoices with their charges and refunds, payouts, webhooks."""
    g, rng = _Gen(s, seeds), seeds.rng
    kinds = seeds.sample(list(KINDS), rng.randint(4, 5))
    household_name, household_email = household(seeds.seed)
    merchants: list[Merchant] = []
    for k, kind in enumerate(kinds, 1):
        suffix, category, _, _ = KINDS[kind]
        mid = seeds.ident("MER", k)
        name = f"{seeds.fake.last_name()} {suffix}"
        key = "sk_live_" + "".join(seeds.choice("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789")
                                   for _ in range(24))
        currency = "USD" if k <= 3 else seeds.choice(["EUR", "GBP"])
        low = k == 3  # the nearly-empty balance archetype
        m = s.merchants.put(mid, Merchant(
            mid, name, category, f"billing@{name.split()[0].lower()}{k}.example.com", key, currency,
            r2(rng.uniform(8, 25)) if low else r2(rng.uniform(2500, 12000)), 0.0, seeds.choice([30, 60, 90]),
            2000.0 if k == 1 else seeds.choice([2000.0, 5000.0, 10000.0]), f"{rng.randint(0, 9999):04d}",
            iso(g.when(rng.randint(400, 900)))))
        merchants.append(m)
        custs = []
        for j in range(rng.randint(10, 13)):
            name_j, email_j = g.person()
            foreign = currency == "USD" and j == 5
            custs.append(g.customer(m, name_j, email_j, seeds.choice(["EUR", "GBP"]) if foreign else currency))
        if currency == "USD":  # the household shared with the budget world
            home = g.customer(m, household_name, household_email, "USD")
            g.invoice(m, home, kind, "paid_recent")
            for _ in range(rng.randint(1, 2)):
                g.invoice(m, home, kind, seeds.choice(["paid", "paid_recent"]))
            g.invoice(m, home, kind, "open")
            if k == 1:
                g.invoice(m, home, kind, "void")
        if k == 1:
            for fate, c in zip(FORCED, custs, strict=False):
                g.invoice(m, c, kind, fate)
            for card in ("expired", "declined", "blocked", "none"):
                name_c, email_c = g.person()
                bad = g.customer(m, name_c, email_c, currency, card=card)
                g.invoice(m, bad, kind, "open")
                if card != "none":
                    g.invoice(m, bad, kind, "paid")
        if low:
            g.invoice(m, custs[0], kind, "paid_recent")
        for c in custs:
            for _ in range(rng.randint(1, 3)):
                r = rng.random()
                fate = ("paid" if r < 0.6 else "open" if r < 0.7 else "overdue" if r < 0.8 else "draft" if r < 0.85
                        else "void" if r < 0.9 else "uncollectible" if r < 0.93 else "partial_refund")
                g.invoice(m, c, kind, fate)
        g.payouts(m)
        g.endpoint(m, "healthy")
        if k == 1:
            g.endpoint(m, "failing")
        elif k == 2:
            g.endpoint(m, "disabled")
        elif rng.random() < 0.3:
            g.endpoint(m, "healthy")
    g.deliveries()
    s.counters.set(Counters(next={p: n + 1 for p, n in g.n.items()}))


def household(seed: int) -> tuple[str, str]:
    """(name, email) of the person who is a customer of every USD merchant in the payments world of
    ``seed``: the household whose budget the budget world of the same seed keeps."""
    fake = make_seeds(seed, salt="payments-household").fake
    first, last = fake.first_name(), fake.last_name()
    return f"{first} {last}", f"{first}.{last}".lower().replace("'", "") + "@example.com"


@lru_cache(maxsize=64)
def seed_invoices(seed: int) -> tuple[InvoiceRef, ...]:
    """Every invoice of the payments world of ``seed`` (deterministic, cached): what the budget world
    of the same seed links its bill expenses to."""
    s = PaymentsState()
    s.begin()
    set_time(s, REFERENCE_DATE)
    generate(s, make_seeds(seed, salt="payments"))
    s.commit()
    out = []
    for inv in s.invoices.values():
        m, c = s.merchants[inv.merchant_id], s.customers[inv.customer_id]
        out.append(InvoiceRef(inv.invoice_id, m.name, m.category, c.name, c.email, inv.amount, inv.currency, inv.status,
                              inv.created_at[:10], inv.paid_at[:10] if inv.paid_at else None))
    return tuple(out)
