"""The seeded budget world: one household's budget since February 2026 — members, 14-17 categories with
monthly limits, four months of expenses (plus the morning of June 1st), recurring bills, savings goals
and the alerts raised so far.

The household is the person who is a customer of every USD merchant in the payments world of the
same seed (:func:`servers.payments.world.household`); the bills it paid there appear here as expenses
carrying the payments ``invoice_id``, merchant name and amount, and every payments invoice is kept in
``payment_invoices`` so a new expense's ``invoice_id`` can be checked.

Guaranteed in every seed: a locked category (Shopping) and an archived one (Childcare), a small
Coffee Shops limit that a modest purchase pushes over, a recurring bill due on June 2nd or 3rd, a
savings goal a contribution would overfund, a goal due June 3rd that will be missed, a completed
goal, a cancelled recurring bill, and an open, unrecorded household invoice.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from servers.budget.state import (
    WARN_RATIO,
    BudgetState,
    Category,
    Expense,
    Goal,
    Household,
    InvoiceRef,
    Member,
    Recurring,
    add_month,
    midnight,
    month_of,
    r2,
    raise_alert,
)
from servers.kit import Counters, Seeds, iso
from servers.kit.fake import REFERENCE_DATE
from servers.payments.world import household, seed_invoices

# name -> (group, (min, max) monthly limit, merchants, (min, max) single expense)
CATEGORIES: dict[str, tuple[str, tuple[int, int], tuple[str, ...], tuple[float, float]]] = {
    "Rent": ("Essentials", (1800, 3200), (), (0, 0)),
    "Groceries": ("Essentials", (550, 900), ("Trader Joe's", "Whole Foods Market", "Safeway", "Costco",
                                             "Kroger"), (18, 160)),
    "Utilities": ("Essentials", (180, 350), ("City Water Department", "PG&E", "Waste Management"), (30, 140)),
    "Internet & Phone": ("Essentials", (90, 180), ("Verizon Wireless", "T-Mobile"), (25, 90)),
    "Insurance": ("Essentials", (150, 400), ("State Farm", "Geico"), (60, 200)),
    "Car & Transport": ("Essentials", (200, 500), ("Shell", "Chevron", "Uber", "City Parking"), (12, 85)),
    "Health & Dental": ("Essentials", (120, 450), ("CVS Pharmacy", "Walgreens", "Urgent Care Clinic"), (10, 120)),
    "Dining Out": ("Lifestyle", (220, 450), ("Chipotle", "Olive Garden", "Sushi Zen", "Panera Bread",
                                            "Joe's Pizza"), (14, 95)),
    "Coffee Shops": ("Lifestyle", (35, 50), ("Starbucks", "Blue Bottle Coffee", "Peet's Coffee"), (4, 9)),
    "Entertainment": ("Lifestyle", (60, 160), ("AMC Theatres", "Steam", "Ticketmaster"), (12, 70)),
    "Shopping": ("Lifestyle", (150, 400), ("Target", "Amazon", "Best Buy", "Old Navy"), (15, 140)),
    "Fitness": ("Lifestyle", (50, 160), ("Decathlon", "Nike"), (20, 90)),
    "Subscriptions": ("Lifestyle", (40, 90), (), (0, 0)),
    "Childcare": ("Family", (400, 1200), ("Little Sprouts Daycare",), (150, 400)),
    "Education": ("Family", (100, 500), ("Barnes & Noble", "Coursera"), (15, 120)),
    "Pets": ("Family", (60, 200), ("Petco", "Chewy"), (15, 80)),
    "Gifts & Donations": ("Family", (50, 200), ("Red Cross", "Etsy"), (20, 80)),
    "Home Maintenance": ("Home", (120, 600), ("Home Depot", "Lowe's", "Ace Hardware"), (15, 180)),
}
# payments merchant category -> budget category
LINKED: dict[str, str] = {"utilities": "Utilities", "health": "Health & Dental", "home_services": "Home Maintenance",
                          "fitness": "Fitness", "education": "Education", "pets": "Pets", "transport": "Car & Transport"}
ALWAYS = ("Rent", "Groceries", "Utilities", "Internet & Phone", "Dining Out", "Coffee Shops", "Shopping", "Childcare",
          "Subscriptions", "Home Maintenance")
# category, merchant, (min, max) amount, day of month; the second one is always due June 2nd or 3rd
RECURRING: tuple[tuple[str, str, tuple[float, float], int | None], ...] = (
    ("Rent", "{last} Property Management", (1500, 2900), 1),
    ("Subscriptions", "Netflix", (15.49, 22.99), None),
    ("Internet & Phone", "Verizon Wireless", (55, 95), 12),
    ("Subscriptions", "Spotify Family", (16.99, 19.99), 18),
)
GOALS = (("Emergency Fund", (6000, 15000), 0.55, 200), ("Summer Vacation", (1800, 4000), 0.97, 45),
         ("New Laptop", (1200, 2400), 0.3, 120), ("Holiday Gifts", (500, 900), 0.4, 2))
MONTHS = (date(2026, 2, 1), date(2026, 3, 1), date(2026, 4, 1), date(2026, 5, 1))


def generate(s: BudgetState, seeds: Seeds) -> None:
    """Household, categories, recurring bills with their history, expenses, linked bills, goals, alerts."""
    rng, fake = seeds.rng, seeds.fake
    s.counters.set(Counters())
    n = {"CAT": 0, "EXP": 0, "REC": 0, "SG": 0}

    def ident(prefix: str) -> str:
        n[prefix] += 1
        return seeds.ident(prefix, n[prefix])

    # -- the household (shared with the payments world of the same seed)
    name, email = household(seeds.seed)
    last = name.split()[-1]
    s.household.set(Household(f"The {last} Household", "USD", f"{rng.randint(0, 9999):04d}", "2026-02-01"))
    people = [(name, email, "admin")]
    for _ in range(rng.randint(1, 3)):
        first = fake.first_name()
        people.append((f"{first} {last}", f"{first.lower()}.{last.lower()}@example.com".replace("'", ""), "member"))
    for k, (pname, pmail, role) in enumerate(people, 1):
        s.members.put(seeds.ident("MEM", k), Member(seeds.ident("MEM", k), pname, pmail, role))
    members = [m.member_id for m in s.members.values()]

    # -- payments invoices; the household's paid ones become linked expenses
    refs = seed_invoices(seeds.seed)
    for ref in refs:
        s.payment_invoices.put(ref.invoice_id, InvoiceRef(ref.invoice_id, ref.merchant_name, ref.customer_name,
                                                          ref.amount, ref.currency, ref.status, ref.issued_on))
    mine = [r for r in refs if r.customer_email == email]
    linked_names = sorted({LINKED[r.merchant_category] for r in mine})

    # -- categories
    optional = [c for c in CATEGORIES if c not in ALWAYS and c not in linked_names]
    chosen = set(ALWAYS) | set(linked_names) | set(seeds.sample(optional, rng.randint(3, 5)))
    cats: dict[str, str] = {}
    for cname in CATEGORIES:  # table order = template order
        if cname not in chosen:
            continue
        group, (lo, hi), _, _ = CATEGORIES[cname]
        cid = ident("CAT")
        status = {"Shopping": "locked", "Childcare": "archived"}.get(cname, "active")
        s.categories.put(cid, Category(cid, cname, group, float(rng.randrange(lo, hi + 1, 5)), status,
                                       "2026-01-28T18:00:00+00:00"))
        cats[cname] = cid

    def expense(cname: str, amount: float, merchant: str, day: date, note: str | None = None,
                invoice_id: str | None = None, recurring_id: str | None = None, who: str | None = None) -> None:
        eid = ident("EXP")
        at = midnight(day) + timedelta(hours=rng.randint(7, 21), minutes=rng.randrange(0, 60, 5))
        if day == REFERENCE_DATE.date():
            at = min(at, REFERENCE_DATE - timedelta(minutes=30))
        s.expenses.put(eid, Expense(eid, cats[cname], r2(amount), merchant, day.isoformat(), note,
                                    who or seeds.choice(members[:2]), invoice_id, recurring_id, iso(at)))

    # -- recurring bills and their history
    for cname, merchant, (lo, hi), day in RECURRING:
        day = day or rng.choice([2, 3])
        merchant = merchant.format(last=fake.last_name())
        rid = ident("REC")
        amount = seeds.money(lo, hi) if cname != "Rent" else float(rng.randrange(int(lo), int(hi), 25))
        rec = Recurring(rid, cats[cname], merchant, amount, day, "", "active", members[0],
                        "2026-01-25T12:00:00+00:00")
        due = date(2026, 2, day)
        while due <= REFERENCE_DATE.date():
            expense(cname, amount, merchant, due, "recurring payment", recurring_id=rid, who=members[0])
            rec.posted += 1
            due = add_month(due, day)
        rec.next_due = due.isoformat()
        s.recurring.put(rid, rec)
    rid = ident("REC")  # a gym membership cancelled in April
    s.recurring.put(rid, Recurring(rid, cats["Subscriptions"], "Planet Fitness", 24.99, 15, "2026-04-15", "cancelled",
                                   members[0], "2026-01-25T12:00:00+00:00", 2, "2026-04-10T19:20:00+00:00"))
    for due in (date(2026, 2, 15), date(2026, 3, 15)):
        expense("Subscriptions", 24.99, "Planet Fitness", due, "recurring payment", recurring_id=rid, who=members[0])

    # -- day-to-day spending, month by month
    for first in MONTHS:
        last_day = (add_month(first, 1) - timedelta(days=1)).day
        for cname, cid in cats.items():
            group, _, merchants, (lo, hi) = CATEGORIES[cname]
            if not merchants or (cname == "Childcare" and first.month > 3):
                continue
            target = s.categories[cid].monthly_limit * rng.uniform(0.45, 1.12)
            spent = 0.0
            while spent < target:
                amount = min(seeds.money(lo, hi), max(1.0, target - spent + 1))
                expense(cname, amount, seeds.choice(merchants), first.replace(day=rng.randint(1, last_day)))
                spent += amount
    june = REFERENCE_DATE.date()
    expense("Coffee Shops", seeds.money(5, 8), seeds.choice(CATEGORIES["Coffee Shops"][2]), june)
    expense("Groceries", seeds.money(30, 90), seeds.choice(CATEGORIES["Groceries"][2]), june)

    # -- bills paid on the payments platform (same invoice id, merchant name and amount)
    for ref in mine:
        if ref.paid_on and ref.paid_on >= "2026-02-01":
            expense(LINKED[ref.merchant_category], ref.amount, ref.merchant_name, date.fromisoformat(ref.paid_on),
                    f"invoice {ref.invoice_id}", invoice_id=ref.invoice_id, who=members[0])

    # -- savings goals: one nearly full, one due June 3rd and far from its target, one completed
    for gname, (lo, hi), share, days in GOALS:
        gid = ident("SG")
        target = float(rng.randrange(lo, hi, 50))
        saved = r2(target * share)
        goal = Goal(gid, gname, target, saved, (june + timedelta(days=days)).isoformat(), "active",
                    "2026-02-01T10:00:00+00:00")
        part = r2(saved / 4)
        goal.contributions = [{"on": f"2026-0{m}-0{rng.randint(1, 9)}", "amount": part if m < 5 else r2(saved - 3 * part)}
                              for m in (2, 3, 4, 5)]
        s.goals.put(gid, goal)
    gid = ident("SG")
    s.goals.put(gid, Goal(gid, "Car Repair Fund", 800.0, 800.0, "2026-05-15", "completed", "2026-02-01T10:00:00+00:00",
                          "2026-05-02T08:00:00+00:00", [{"on": "2026-05-02", "amount": 800.0}]))

    # -- alerts for every limit crossed so far, in time order
    totals: dict[tuple[str, str], float] = {}
    for e in sorted(s.expenses.values(), key=lambda e: (e.created_at, e.expense_id)):
        key = (e.category_id, month_of(e.spent_on))
        was = totals.get(key, 0.0)
        now_total = totals[key] = r2(was + e.amount)
        cat = s.categories[e.category_id]
        limit, when = cat.monthly_limit, datetime.fromisoformat(e.created_at)
        if was <= limit < now_total:
            raise_alert(s, "over_budget", key[1], f"{cat.name} is over budget for {key[1]}: {now_total:.2f} spent "
                        f"of {limit:.2f}", when, category_id=cat.category_id)
        elif was < WARN_RATIO * limit <= now_total <= limit:
            raise_alert(s, "approaching_limit", key[1], f"{cat.name} has used {100 * now_total / limit:.0f}% of "
                        f"its {key[1]} limit ({now_total:.2f} of {limit:.2f})", when, category_id=cat.category_id)
    s.counters.set(Counters(next={**{p: v + 1 for p, v in n.items()}, "ALR": len(s.alerts) + 1}))
