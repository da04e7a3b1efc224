"""The seeded banking world: thirty customers with one to three accounts each, debit cards on checking
accounts, two saved payees per customer and about two and a half months of card, bill and payroll
history. A few accounts are frozen and a few cards are frozen (some for suspicious activity)."""

from __future__ import annotations

from servers.banking.state import INTEREST_RATES, Account, BankingState, Card, Customer, Payee, Transaction
from servers.kit import Counters, Seeds, iso

_MERCHANTS: dict[str, tuple[str, ...]] = {
    "groceries": ("Whole Foods", "Trader Joe's", "Safeway", "Kroger"),
    "dining": ("Chipotle", "Olive Garden", "Blue Bottle Coffee", "Shake Shack"),
    "utilities": ("PG&E", "City Water Dept", "ConEdison"),
    "shopping": ("Amazon", "Target", "Best Buy", "IKEA"),
    "travel": ("Delta Air Lines", "Uber", "Marriott", "Amtrak"),
    "health": ("CVS Pharmacy", "Walgreens", "Kaiser Permanente"),
    "entertainment": ("Netflix", "Spotify", "AMC Theatres"),
}


def generate(s: BankingState, seeds: Seeds) -> None:
    """A few dozen customers with 1–3 accounts, cards, payees and ~2 months of history each."""
    rng, fake = seeds.rng, seeds.fake
    s.counters.set(Counters())
    n_acc = n_tx = n_card = n_payee = 0
    for c in range(1, 31):
        cid = seeds.ident("CUS", c)
        s.customers.put(cid, Customer(
            cid, fake.name(), fake.email(), fake.numerify("(###) ###-####"),
            fake.address().replace("\n", ", "), iso(seeds.date_between(-3650, -200)),
        ))
        for acc_type in seeds.sample(["checking", "savings", "money_market"], rng.randint(1, 3)):
            n_acc += 1
            aid = seeds.ident("ACC", n_acc)
            balance = seeds.money(5, 400) if rng.random() < 0.15 else seeds.money(500, 25_000)
            s.accounts.put(aid, Account(
                aid, cid, acc_type, f"{fake.first_name()}'s {acc_type.replace('_', ' ')}", balance,
                "frozen" if rng.random() < 0.06 else "active", f"{rng.randint(0, 9999):04d}",
                float(seeds.choice([2500, 5000, 10000])), 0.0,
                INTEREST_RATES[acc_type],
                iso(seeds.date_between(-3000, -100)),
            ))
            for _ in range(rng.randint(6, 14)):
                n_tx += 1
                category = seeds.choice([*list(_MERCHANTS), "salary", "rent"])
                if category == "salary":
                    amount, desc = seeds.money(1500, 6000), f"Payroll {fake.company()}"
                elif category == "rent":
                    amount, desc = -seeds.money(900, 3200), f"Rent {fake.street_name()} Apts"
                else:
                    amount, desc = -seeds.money(4, 350), seeds.choice(_MERCHANTS[category])
                tid = seeds.ident("TXN", n_tx, 5)
                s.transactions.put(tid, Transaction(
                    tid, aid, iso(seeds.date_between(-75, -1)), amount, desc, category, "posted"))
            if acc_type == "checking":
                n_card += 1
                card_id = seeds.ident("CRD", n_card)
                s.cards.put(card_id, Card(card_id, aid, cid, "debit", fake.numerify("####"),
                                          "frozen" if rng.random() < 0.1 else "active",
                                          "suspicious activity" if rng.random() < 0.1 else None))
        for category in seeds.sample(["utilities", "rent", "credit_card", "insurance", "phone", "internet"], 2):
            n_payee += 1
            pid = seeds.ident("PAY", n_payee)
            s.payees.put(pid, Payee(pid, cid, f"{fake.company()} {category.replace('_', ' ').title()}",
                                    fake.numerify("##########"), category))
    for card in list(s.cards.values()):
        if card.status == "active" and card.frozen_reason:
            s.cards.edit(card.card_id).frozen_reason = None
