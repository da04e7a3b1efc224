"""The seeded CRM world: a sales team, ~40 companies with contacts, a lead inbox, a deal pipeline and
the activity history around them.

Archetypes every seed has (so every failure rule and workflow has something to act on): an inactive
rep who still owns records, leads in every status (converted ones point at the contact, company and
deal they became), a proposal-stage deal without an amount, deals in every stage, companies without
open deals (deletable) and with them, an overdue task, a task due today and a meeting later today.
"""

from __future__ import annotations

from datetime import timedelta

from servers.crm.state import (
    OPEN_STAGES,
    Activity,
    Company,
    Contact,
    CrmState,
    Deal,
    Lead,
    SalesRep,
    StageChange,
)
from servers.kit import REFERENCE_DATE, Counters, Seeds, iso

INDUSTRIES = ("software", "manufacturing", "healthcare", "finance", "retail", "logistics", "education", "energy",
              "media", "hospitality")
_SUFFIX = {
    "software": ("Labs", "Software", "Systems", "Cloud"), "manufacturing": ("Industries", "Manufacturing", "Works"),
    "healthcare": ("Health", "Medical", "Clinics"), "finance": ("Capital", "Financial", "Partners"),
    "retail": ("Outfitters", "Stores", "Goods"), "logistics": ("Logistics", "Freight", "Shipping"),
    "education": ("Learning", "Academy", "Education"), "energy": ("Energy", "Power", "Solar"),
    "media": ("Media", "Studios", "Publishing"), "hospitality": ("Hotels", "Hospitality", "Resorts"),
}
_TITLES = ("CEO", "CTO", "CFO", "VP of Sales", "VP of Engineering", "Head of Operations", "Procurement Manager",
           "IT Director", "Marketing Director", "Office Manager", "Product Manager", "Operations Analyst")
_PRODUCTS = ("Platform licenses", "Analytics add-on", "Annual renewal", "Implementation services",
             "Enterprise upgrade", "Support plan", "Pilot project", "Team expansion", "Data migration")
SOURCES = ("website", "referral", "trade_show", "cold_call", "webinar", "partner", "advertising")
REGIONS = ("West", "East", "Central", "EMEA", "APAC")
LOST_REASONS = ("went with a competitor", "no budget this year", "project cancelled", "price too high",
                "no decision maker")
DISQUALIFY_REASONS = ("student, no buying intent", "company too small", "duplicate of an existing customer",
                      "outside our sales regions", "unresponsive after 5 attempts")
_CALL_SUBJECTS = ("Intro call", "Discovery call", "Pricing discussion", "Follow-up call", "Check-in call")
_MEETING_SUBJECTS = ("Product demo", "Quarterly business review", "Contract walkthrough", "Onsite visit",
                     "Technical deep dive")
_TASK_SUBJECTS = ("Send proposal", "Prepare quote", "Follow up on contract", "Share case studies",
                  "Schedule demo", "Confirm budget", "Send renewal reminder")
_NOTE_SUBJECTS = ("Budget confirmed", "Champion identified", "Competitor in the mix", "Legal review pending")

NOW = REFERENCE_DATE
TODAY = NOW.date()


def _stamp(days_ago: float, hour: int = 10) -> str:
    return iso((NOW - timedelta(days=days_ago)).replace(hour=hour, minute=0, second=0))


def generate(s: CrmState, seeds: Seeds) -> None:
    rng, fake = seeds.rng, seeds.fake
    # -- sales team: 2 managers, 5 active reps and one inactive rep who still owns records
    reps: list[SalesRep] = []
    names: set[str] = set()
    for n in range(1, 9):
        name = fake.name()
        while name in names or "." in name:
            name = fake.name()
        names.add(name)
        words = [w for w in name.split() if not w.endswith(".")]
        first, last = words[0].lower(), words[-1].lower()
        role = "manager" if n <= 2 else "rep"
        rid = seeds.ident("REP", n, 3)
        reps.append(s.reps.put(rid, SalesRep(
            rid, name, f"{first}.{last}@northwind-crm.example", role, REGIONS[(n - 1) % len(REGIONS)],
            active=n != 8, approval_code=f"{rng.randint(0, 999_999):06d}" if role == "manager" else None)))
    active = [r.rep_id for r in reps if r.active and r.role == "rep"]
    inactive = reps[-1].rep_id
    owners = [*active, *active, inactive]  # the inactive rep owns roughly one record in nine

    # -- companies
    companies: list[Company] = []
    taken: set[str] = set()
    for n in range(1, rng.randint(36, 44) + 1):
        industry = seeds.choice(INDUSTRIES)
        name = f"{fake.last_name()} {seeds.choice(_SUFFIX[industry])}"
        while name.lower() in taken:
            name = f"{fake.last_name()} {seeds.choice(_SUFFIX[industry])}"
        taken.add(name.lower())
        cid = seeds.ident("CMP", n)
        slug = "".join(ch for ch in name.lower() if ch.isalnum())
        companies.append(s.companies.put(cid, Company(
            cid, name, industry, fake.city(), seeds.choice([12, 40, 85, 150, 400, 1200, 5000]),
            f"https://www.{slug}.example", seeds.choice(owners), _stamp(rng.randint(60, 900)))))

    # -- contacts: 1-4 per company, plus a few independents
    emails: set[str] = set()
    contacts: list[Contact] = []

    def person_email(first: str, last: str, domain: str) -> str:
        base = f"{first}.{last}".lower().replace("'", "")
        email, k = f"{base}@{domain}", 2
        while email in emails:
            email, k = f"{base}{k}@{domain}", k + 1
        emails.add(email)
        return email

    n_con = 0
    for c in companies:
        domain = c.website.removeprefix("https://www.")
        for _ in range(rng.randint(1, 4)):
            n_con += 1
            first, last = fake.first_name(), fake.last_name()
            cid = seeds.ident("CON", n_con)
            contacts.append(s.contacts.put(cid, Contact(
                cid, first, last, person_email(first, last, domain), fake.numerify("+1-###-###-####"),
                seeds.choice(_TITLES), c.company_id, c.owner_rep_id if rng.random() < 0.8 else seeds.choice(owners),
                _stamp(rng.randint(10, 500)))))
    for _ in range(4):
        n_con += 1
        first, last = fake.first_name(), fake.last_name()
        cid = seeds.ident("CON", n_con)
        contacts.append(s.contacts.put(cid, Contact(
            cid, first, last, person_email(first, last, "gmail.example"), None, None, None, seeds.choice(owners),
            _stamp(rng.randint(10, 300)))))

    # -- deals: forced archetypes first, then random ones; three companies keep no open deal
    order = list(companies)
    rng.shuffle(order)
    dealless, pool = order[:3], order[3:]
    plans = ["proposal_no_amount", "prospecting", "negotiation", "closed_won", "closed_lost", "inactive_owner",
             "past_due"]
    plans += ["random"] * rng.randint(48, 62)
    deals: list[Deal] = []
    for n, plan in enumerate(plans, start=1):
        company = pool[(n - 1) % len(pool)] if n <= len(pool) else seeds.choice(pool)
        deals.append(s.deals.put(seeds.ident("DEAL", n), _make_deal(seeds, seeds.ident("DEAL", n), plan, company,
                                                                       contacts, owners, inactive)))
    n_deal = len(deals)
    for company in dealless[:2]:  # history only: a closed deal each on two of them
        n_deal += 1
        deals.append(s.deals.put(seeds.ident("DEAL", n_deal), _make_deal(
            seeds, seeds.ident("DEAL", n_deal), seeds.choice(["closed_won", "closed_lost"]), company, contacts,
            owners, inactive)))

    # -- leads: every status, converted ones mirror a contact + company + deal
    n_lead = 0
    statuses = ["new", "new", "contacted", "contacted", "qualified", "qualified", "disqualified", "disqualified",
                "converted", "converted"]
    statuses += [seeds.choice(["new", "new", "contacted", "qualified", "disqualified", "converted"])
                 for _ in range(rng.randint(40, 54))]
    convertible = [d for d in deals if d.contact_id is not None]
    rng.shuffle(convertible)
    for status in statuses:
        n_lead += 1
        lid = seeds.ident("LEAD", n_lead)
        created = rng.randint(3, 120)
        if status == "converted" and convertible:
            d = convertible.pop()
            con = s.contacts[d.contact_id or ""]
            s.contacts.edit(con.contact_id).source_lead_id = lid
            s.leads.put(lid, Lead(
                lid, con.first_name, con.last_name, con.email, d.company_name, s.companies[d.company_id].industry,
                con.job_title, seeds.choice(SOURCES),
                "converted", con.owner_rep_id, d.amount, _stamp(created + 30), _stamp(created + 20),
                converted_at=d.created_at, converted_contact_id=con.contact_id, converted_company_id=d.company_id,
                converted_deal_id=d.deal_id))
            continue
        if status == "converted":
            status = "new"
        first, last = fake.first_name(), fake.last_name()
        industry = seeds.choice(INDUSTRIES)
        company_name = f"{fake.last_name()} {seeds.choice(_SUFFIX[industry])}"
        if rng.random() < 0.15:  # someone new at a company we already know
            known = seeds.choice(companies)
            company_name, industry = known.name, known.industry
        domain = "".join(ch for ch in company_name.lower() if ch.isalnum()) + ".example"
        s.leads.put(lid, Lead(
            lid, first, last, person_email(first, last, domain), company_name, industry,
            seeds.choice(_TITLES) if rng.random() < 0.8 else None, seeds.choice(SOURCES), status,
            inactive if n_lead in (3, 9) else seeds.choice(owners),
            seeds.money(2_000, 90_000) if rng.random() < 0.75 else None, _stamp(created),
            _stamp(max(0.5, created - rng.randint(1, 3))) if status in ("contacted", "qualified") else None,
            disqualify_reason=seeds.choice(DISQUALIFY_REASONS) if status == "disqualified" else None))

    # -- activities: history plus open work around now
    n_act = 0

    def act(kind: str, subject: str, record_id: str, owner: str, created: str, status: str, **kw: object) -> None:
        nonlocal n_act
        n_act += 1
        aid = seeds.ident("ACT", n_act)
        s.activities.put(aid, Activity(aid, kind, subject, kw.pop("notes", None), record_id, owner, created,  # type: ignore[arg-type]
                                       status, **kw))  # type: ignore[arg-type]

    open_deals = [d for d in deals if d.stage in OPEN_STAGES]
    for d in deals:
        for _ in range(rng.randint(0, 2)):
            kind = seeds.choice(["call", "call", "email", "note"])
            subject = seeds.choice(_NOTE_SUBJECTS if kind == "note" else _CALL_SUBJECTS)
            act(kind, subject, d.deal_id, d.owner_rep_id, _stamp(rng.randint(1, 60), rng.randint(9, 17)), "logged",
                notes=fake.sentence(nb_words=10) if rng.random() < 0.5 else None)
    for c in contacts[: len(contacts) // 2]:
        act(seeds.choice(["call", "email"]), seeds.choice(_CALL_SUBJECTS), c.contact_id, c.owner_rep_id,
            _stamp(rng.randint(1, 90), rng.randint(9, 17)), "logged")
    # guaranteed: an overdue task, a task due today, a meeting later today, future work
    first_open = open_deals[0]
    act("task", "Send revised proposal", first_open.deal_id, first_open.owner_rep_id, _stamp(12), "overdue",
        due_date=iso(TODAY - timedelta(days=3)))
    act("task", "Confirm budget with finance", open_deals[1].deal_id, open_deals[1].owner_rep_id, _stamp(4), "open",
        due_date=iso(TODAY))
    act("meeting", "Product demo", open_deals[2].deal_id, open_deals[2].owner_rep_id, _stamp(6), "scheduled",
        scheduled_at=iso(NOW.replace(hour=11, minute=0)))
    for _ in range(rng.randint(26, 34)):
        d = seeds.choice(open_deals)
        if rng.random() < 0.7:
            due = TODAY + timedelta(days=rng.randint(-10, 21))
            act("task", seeds.choice(_TASK_SUBJECTS), d.deal_id, d.owner_rep_id, _stamp(rng.randint(12, 30)),
                "overdue" if due < TODAY else "open", due_date=iso(due))
        else:
            when = NOW + timedelta(days=rng.randint(-10, 14), hours=rng.randint(0, 7))
            when = when.replace(minute=0, second=0)
            act("meeting", seeds.choice(_MEETING_SUBJECTS), d.deal_id, d.owner_rep_id, _stamp(rng.randint(12, 30)),
                "held" if when <= NOW else "scheduled", scheduled_at=iso(when))
    for _ in range(rng.randint(8, 12)):
        d = seeds.choice(deals)
        due = TODAY - timedelta(days=rng.randint(5, 40))
        act("task", seeds.choice(_TASK_SUBJECTS), d.deal_id, d.owner_rep_id, _stamp(rng.randint(41, 60)),
            "completed", due_date=iso(due), completed_at=_stamp((TODAY - due).days + 1, 15),
            outcome="done" if rng.random() < 0.7 else None)
    s.counters.set(Counters({"CMP": len(companies) + 1, "CON": n_con + 1, "DEAL": n_deal + 1, "LEAD": n_lead + 1,
                             "ACT": n_act + 1}))


def _make_deal(seeds: Seeds, deal_id: str, plan: str, company: Company, contacts: list[Contact],
               owners: list[str], inactive: str) -> Deal:
    rng = seeds.rng
    if plan in ("proposal_no_amount",):
        stage = "proposal"
    elif plan in ("prospecting", "negotiation", "closed_won", "closed_lost"):
        stage = plan
    elif plan in ("inactive_owner", "past_due"):
        stage = seeds.choice(["qualification", "proposal"])
    else:
        stage = seeds.choice(["prospecting", "qualification", "qualification", "proposal", "negotiation",
                              "closed_won", "closed_won", "closed_lost"])
    people = [c for c in contacts if c.company_id == company.company_id]
    contact = seeds.choice(people) if people and rng.random() < 0.85 else None
    closed = stage in ("closed_won", "closed_lost")
    amount = None if plan == "proposal_no_amount" else seeds.money(3_000, 180_000)
    if plan == "random" and stage in ("prospecting", "qualification") and rng.random() < 0.35:
        amount = None
    age = rng.randint(20, 200) if not closed else rng.randint(60, 400)
    created = NOW - timedelta(days=age)
    path = ["prospecting", "qualification", "proposal", "negotiation"]
    if closed:
        steps = [*path[: rng.randint(3 if stage == "closed_won" else 1, 4)], stage]
    else:
        steps = path[: path.index(stage) + 1]
    span = max(1, age - (rng.randint(5, 40) if closed else 1))
    history = [StageChange(st, _stamp(age - span * i / len(steps))) for i, st in enumerate(steps)]
    if closed:
        expected = history[-1].at[:10]
    elif plan == "past_due":
        expected = iso(TODAY - timedelta(days=rng.randint(2, 20)))
    else:
        expected = iso(TODAY + timedelta(days=rng.randint(7, 120)))
    owner = inactive if plan == "inactive_owner" else (company.owner_rep_id if rng.random() < 0.8
                                                       else seeds.choice(owners))
    return Deal(
        deal_id=deal_id, name=f"{company.name} – {seeds.choice(_PRODUCTS)}", company_id=company.company_id,
        company_name=company.name, contact_id=contact.contact_id if contact else None, owner_rep_id=owner,
        stage=stage, amount=amount, expected_close_date=expected, created_at=iso(created.replace(microsecond=0)),
        past_due=not closed and expected < iso(TODAY), closed_at=history[-1].at if closed else None,
        lost_reason=seeds.choice(LOST_REASONS) if stage == "closed_lost" else None, history=history,
    )
