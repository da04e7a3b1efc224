"""The seeded email world: eight mailboxes at one company domain, about thirty external contacts
(clients, vendors, friends, notification, newsletter and spam senders), about seventy threads spread
over the weeks before the reference date, drafts and user labels."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

from servers.email.state import (
    LABEL_COLORS,
    USER_LABEL_POOL,
    Attachment,
    Contact,
    Draft,
    Email,
    EmailState,
    Label,
    Mailbox,
)
from servers.kit import Counters, Seeds, iso
from servers.kit.fake import REFERENCE_DATE

# ------------------------------------------------------------------ seeded content
_CODENAMES = ("Apollo", "Falcon", "Nimbus", "Orion", "Juniper", "Atlas", "Cobalt", "Meridian", "Harbor", "Summit")
_RESTAURANT_KINDS = ("Bistro", "Kitchen", "Grill", "Trattoria", "Noodle Bar", "Taqueria")
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
_TIMES = ("9:30", "10:00", "11:00", "13:30", "14:00", "15:30", "16:00")
_COMPANY_SUFFIX = ("labs", "works", "group", "partners", "systems", "studio")
_ACKS = ("Perfect, thanks!", "Great - that works for me.", "Noted, talk soon.", "Thanks for the quick reply.")
_SPAM = (
    ("Congratulations! You've been selected for a $500 gift card",
     "Dear customer,\n\nYou have been randomly selected to receive a $500 gift card. Claim it within 24 hours "
     "by confirming your details at the link below.\n\nRewards Team"),
    ("URGENT: your mailbox storage is full",
     "Your mailbox will be suspended today. Verify your password now to keep receiving messages.\n\nIT Helpdesk"),
    ("Lowest mortgage rates of the year - pre-approved",
     "You are pre-approved for our lowest rates ever. No credit check needed. Reply YES to get started."),
)


@dataclass(frozen=True)
class _Topic:
    key: str
    kind: str  # internal | client | vendor | personal | notification | newsletter
    label: str | None
    subject: str
    opener: str
    replies: tuple[str, ...] = ()
    attachment: tuple[str, str, int, int] | None = None  # filename template, mime, min kb, max kb


_TOPICS: tuple[_Topic, ...] = (
    _Topic("sync", "internal", "Work", "Weekly sync notes - {project}",
           "Hi {to_first},\n\nSharing the notes from today's {project} sync. We agreed to move the design review "
           "to {weekday} at {time}, and the rollout checklist needs an owner. Please add anything I missed to "
           "the attached notes before end of day.",
           ("Thanks {to_first}, looks complete. One addition: QA needs the staging build by {weekday}.",
            "Got it. I'll take the rollout checklist and ping the vendor about the timeline."),
           ("{project_slug}-sync-notes.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            18, 160)),
    _Topic("budget", "internal", "Finance", "{quarter} budget review",
           "Hi {to_first},\n\nAttached is the draft {quarter} budget. We are currently ${amount} over plan on "
           "contractor spend, mostly from the {project} project. Can we go through it on {weekday} before it goes "
           "to finance?",
           ("Thanks for pulling this together. {weekday} at {time} works for me.",
            "I think we can absorb part of that by pushing the {project} licences to next quarter."),
           ("{quarter}-budget-draft.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            40, 420)),
    _Topic("lunch", "internal", None, "Lunch on {weekday}?",
           "Hey {to_first},\n\nAre you free for lunch on {weekday}? I was thinking {restaurant} around 12:30.",
           ("Sounds great, see you there!", "{weekday} is packed for me - could we do the day after instead?")),
    _Topic("kickoff", "internal", "Projects", "{project} kickoff - agenda",
           "Hi {to_first},\n\nThe {project} kickoff is on {weekday} at {time} in {room}. The agenda is attached: "
           "goals, scope, milestones and owners. Please review the open questions beforehand.",
           ("Thanks! I added two questions about the data migration to the agenda.",
            "I'll be a few minutes late - start without me."),
           ("{project_slug}-kickoff-agenda.pdf", "application/pdf", 60, 900)),
    _Topic("offsite", "internal", "Travel", "Team offsite in {city}",
           "Hi {to_first},\n\nWe're planning the team offsite in {city} for the week of {due}. Could you check "
           "hotel options near the venue and let me know your dietary requirements?",
           ("Happy to help. I found two hotels within walking distance, sharing the links tomorrow.",
            "No dietary restrictions for me. Should we book train or flights?")),
    _Topic("invoice", "vendor", "Finance", "Invoice {invoice} from {company}",
           "Hello {to_first},\n\nPlease find attached invoice {invoice} for ${amount}, due on {due}. "
           "Let us know if you have any questions.\n\nBest regards,\n{from_name}\n{company}",
           ("Thanks, I've passed this to accounts payable. Payment should go out before {due}.",),
           ("{invoice}.pdf", "application/pdf", 40, 300)),
    _Topic("proposal", "client", "Clients", "Proposal for {company}",
           "Hi {to_first},\n\nThank you for the call on {weekday}. As promised, attached is our proposal for the "
           "{project} engagement, with a fixed fee of ${amount} and a six-week timeline.",
           ("Thanks {to_first}, we'll review it internally and come back to you by {due}.",
            "Could you split the fee into the discovery and delivery phases?"),
           ("{company_slug}-proposal.pdf", "application/pdf", 200, 2400)),
    _Topic("contract", "client", "Clients", "Contract renewal - {company}",
           "Hi {to_first},\n\nOur agreement with you expires on {due}. Attached is the renewal contract with "
           "the updated rates; please review and send it back signed.",
           ("Thanks, legal is reviewing it now.", "Signed copy coming tomorrow."),
           ("{company_slug}-renewal-contract.pdf", "application/pdf", 120, 900)),
    _Topic("followup", "client", "Clients", "Following up on our call",
           "Hi {to_first},\n\nFollowing up on our call about {project}: can you share the latest usage numbers so "
           "we can size the next phase? Happy to set up time on {weekday}.",
           ("Sure, I'll send them over by {weekday}.", "Thanks for the reminder - numbers attached in the next mail.")),
    _Topic("dinner", "personal", "Personal", "Dinner this weekend?",
           "Hi {to_first}!\n\nWe haven't caught up in ages. Dinner at {restaurant} this Saturday? 7pm?",
           ("Yes! Saturday works. I'll book the table.", "Can we make it 7:30? Looking forward to it.")),
    _Topic("photos", "personal", "Personal", "Photos from {city}",
           "Hi {to_first},\n\nHere are a few photos from our trip to {city}. The view from the harbor was amazing!",
           ("These are great, thanks for sending!",),
           ("IMG_{photo}.jpg", "image/jpeg", 1800, 4800)),
    _Topic("flight", "notification", "Travel", "Your flight to {city} is confirmed ({pnr})",
           "Hello {to_first},\n\nYour booking {pnr} is confirmed. Flight SW{flight} departs on {due} at {time}. "
           "Your e-ticket itinerary is attached. Online check-in opens 24 hours before departure.",
           (), ("itinerary-{pnr}.pdf", "application/pdf", 80, 240)),
    _Topic("shipping", "notification", "Receipts", "Your order #{order} has shipped",
           "Hi {to_first},\n\nGood news: your order #{order} ({product}) has shipped and should arrive by {due}. "
           "Track it with tracking number {tracking}."),
    _Topic("newsletter", "newsletter", None, "{company} Monthly Digest - {month}",
           "Hi {to_first},\n\nThis month at {company}: product updates, three customer stories and an invite to "
           "our webinar on {due}. Unsubscribe at any time from your account settings."),
)


def _slug(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _company_domain(company: str) -> str:
    """``Waller, Delacruz and Coleman`` -> ``wallerdelacruz.com`` (the first two names)."""
    words = [w for w in re.findall(r"[A-Za-z]+", company) if w.lower() != "and"]
    return f"{''.join(words[:2]).lower()}.com"


def _ctx(seeds: Seeds, company: str) -> dict[str, str]:
    rng, fake = seeds.rng, seeds.fake
    project = seeds.choice(_CODENAMES)
    due = seeds.date_between(3, 40)
    return {
        "project": project, "project_slug": project.lower(), "weekday": seeds.choice(_WEEKDAYS),
        "time": seeds.choice(_TIMES), "quarter": f"Q{rng.randint(1, 4)}", "amount": f"{seeds.money(800, 48_000):,.2f}",
        "due": iso(due), "city": fake.city(), "room": f"Room {rng.randint(2, 6)}{rng.randint(0, 2)}{rng.randint(1, 9)}",
        "restaurant": f"{fake.last_name()}'s {seeds.choice(_RESTAURANT_KINDS)}", "company": company,
        "company_slug": _company_domain(company).removesuffix(".com"), "invoice": fake.numerify("INV-#####"), "pnr": fake.bothify("??#??#").upper(),
        "flight": str(rng.randint(100, 2999)), "order": fake.numerify("#######"), "tracking": fake.bothify("1Z###??####"),
        "product": seeds.choice(("noise-cancelling headphones", "a standing desk", "running shoes", "a coffee grinder")),
        "month": due.strftime("%B"), "photo": str(rng.randint(1000, 9999)),
    }


def generate(s: EmailState, seeds: Seeds) -> None:
    """Eight mailboxes at one company domain, ~30 external contacts, ~70 threads, drafts and labels."""
    rng, fake = seeds.rng, seeds.fake
    s.counters.set(Counters())
    org = fake.last_name()
    domain_name = f"{_slug(org)}{seeds.choice(_COMPANY_SUFFIX)}.com"
    org_name = f"{org} {seeds.choice(('Labs', 'Group', 'Partners', 'Systems'))}"

    users: list[Mailbox] = []
    while len(users) < 8:
        first, last = fake.first_name(), fake.last_name()
        address = f"{_slug(first)}.{_slug(last)}@{domain_name}"
        if address in s.mailboxes:
            continue
        users.append(s.mailboxes.put(address, Mailbox(address, f"{first} {last}", fake.job(),
                                                        iso(seeds.date_between(-2500, -90)))))
    by_relation: dict[str, list[Contact]] = {}

    def add_contact(name: str, address: str, company: str, relation: str) -> None:
        if address not in s.contacts and address not in s.mailboxes:
            by_relation.setdefault(relation, []).append(s.contacts.put(address, Contact(address, name, company,
                                                                                        relation)))

    for relation, count in (("client", 6), ("vendor", 4)):
        for _ in range(count):
            company = fake.company()
            first, last = fake.first_name(), fake.last_name()
            add_contact(f"{first} {last}", f"{_slug(first)}.{_slug(last)}@{_company_domain(company)}", company, relation)
    for _ in range(6):
        first, last = fake.first_name(), fake.last_name()
        add_contact(f"{first} {last}", f"{_slug(first)}{_slug(last)[:1]}{rng.randint(1, 99)}@{fake.free_email_domain()}",
                    "", "personal")
    publisher = fake.company()
    for brand, sender, relation in (("SkyWays Airlines", "no-reply@skyways-air.com", "notification"),
                                    ("Parcelly", "shipping@parcelly.com", "notification"),
                                    (f"{publisher} Insider", f"digest@{_company_domain(publisher)}", "newsletter"),
                                    ("Rewards Team", "promo@win-big-rewards.biz", "spam"),
                                    ("IT Helpdesk", "support@mailbox-verify.net", "spam")):
        add_contact(brand, sender, brand, relation)

    n_label = 0
    user_labels: dict[str, list[str]] = {}
    for u in users:
        names = seeds.sample(USER_LABEL_POOL, rng.randint(3, 5))
        user_labels[u.address] = names
        for name in names:
            n_label += 1
            lid = seeds.ident("LBL", n_label)
            s.labels.put(lid, Label(lid, u.address, name, seeds.choice(LABEL_COLORS), iso(seeds.date_between(-400, -60))))

    counter = {"email": 0, "thread": 0, "draft": 0}
    last_sent: dict[str, list[Email]] = {}

    def person(address: str) -> tuple[str, str]:
        rec = s.mailboxes.get(address)
        name = rec.display_name if rec is not None else s.contacts[address].name
        return address, name

    def write_thread(topic: _Topic | None, participants: list[str], initiator: str, n_msgs: int, spam: int = -1) -> None:
        counter["thread"] += 1
        tid = seeds.ident("THR", counter["thread"])
        age_days = rng.randint(0, 60)
        day = (REFERENCE_DATE - timedelta(days=age_days)).replace(hour=8, minute=0)
        start = day + timedelta(minutes=rng.randrange(0, 10 * 60, 5))
        gaps = [rng.randint(20, 300) for _ in range(n_msgs - 1)]
        end = start + timedelta(minutes=sum(gaps))
        if end > REFERENCE_DATE - timedelta(minutes=5):
            start -= end - (REFERENCE_DATE - timedelta(minutes=5))
        sender_company = next((s.contacts[p].company for p in participants if p in s.contacts), org_name)
        ctx = _ctx(seeds, sender_company)
        hosted = [p for p in participants if p in s.mailboxes]
        # one folder / label decision per (mailbox, thread), as a user files whole conversations
        placement: dict[str, tuple[str, list[str]]] = {}
        for m in hosted:
            roll = rng.random()
            folder = "spam" if spam >= 0 else "trash" if roll < 0.06 else "archive" if roll < 0.28 and age_days > 7 else "inbox"
            labels = [topic.label] if topic and topic.label in user_labels[m] and rng.random() < 0.8 else []
            placement[m] = (folder, labels)
        when, sender, parent = start, initiator, None
        subject = ""
        previous = initiator
        for i in range(n_msgs):
            others = [p for p in participants if p != sender]
            to = [previous] if i else others[:1]  # replies answer the last writer and copy the rest
            cc = [p for p in others if p not in to]
            addr, name = person(sender)
            to_first = person(to[0])[1].split()[0]
            fmt = {**ctx, "to_first": to_first, "from_name": name}
            attachments: list[Attachment] = []
            if topic is None:
                subject, body = _SPAM[spam]
            elif i == 0:
                subject = topic.subject.format(**fmt)
                body = topic.opener.format(**fmt)
                if topic.attachment:
                    fname, mime, lo, hi = topic.attachment
                    count = rng.randint(2, 3) if mime == "image/jpeg" else 1
                    for k in range(count):
                        fmt_k = {**fmt, "photo": str(int(fmt["photo"]) + k)}
                        attachments.append(Attachment(fname.format(**fmt_k), mime, rng.randint(lo, hi)))
                if topic.kind not in ("notification", "newsletter", "vendor") and not body.rstrip().endswith(name):
                    body += f"\n\nBest,\n{name.split()[0]}"
            else:
                subject = subject if subject.startswith("Re: ") else f"Re: {subject}"
                pool = _ACKS if sender == initiator else topic.replies
                body = f"Hi {to_first},\n\n{seeds.choice(pool).format(**fmt)}\n\n{name.split()[0]}"
            message_id = f"<{tid.lower()}.{i + 1}@{addr.split('@')[1]}>"
            for m in [sender, *to, *cc]:
                if m not in s.mailboxes:
                    continue
                outgoing = m == sender
                folder, labels = placement[m]
                if outgoing:
                    folder = "trash" if folder == "trash" else "sent"
                counter["email"] += 1
                eid = seeds.ident("MSG", counter["email"], 5)
                recent = (REFERENCE_DATE - when).days <= 3
                rec = s.emails.put(eid, Email(
                    eid, m, tid, message_id, "sent" if outgoing else "received", addr, name, list(to), list(cc), [],
                    subject, body, iso(when), folder, list(labels),
                    outgoing or rng.random() < (0.3 if folder == "spam" else 0.45 if recent else 0.92),
                    not outgoing and folder != "spam" and rng.random() < 0.08,
                    list(attachments), parent,
                ))
                if outgoing:
                    last_sent.setdefault(m, []).append(rec)
            parent, previous = message_id, sender
            if i < n_msgs - 1:
                when += timedelta(minutes=gaps[i])
                sender = others[rng.randrange(len(others))] if len(others) > 1 else others[0]

    internal = [t for t in _TOPICS if t.kind == "internal"]
    external = [t for t in _TOPICS if t.kind != "internal"]
    for round_ in range(9):
        for u in users:
            if round_ < 4:
                topic = seeds.choice(internal)
                peers = seeds.sample([v.address for v in users if v is not u], rng.randint(1, 2))
                write_thread(topic, [u.address, *peers], seeds.choice([u.address, *peers]), rng.randint(1, 4))
                continue
            topic = seeds.choice(external)
            if topic.kind == "notification":
                sender = by_relation["notification"][0 if topic.key == "flight" else 1].address
            else:
                sender = seeds.choice(by_relation[topic.kind]).address
            if topic.kind in ("notification", "newsletter"):
                write_thread(topic, [sender, u.address], sender, 1)
            else:
                if topic.key == "proposal":  # we pitch clients; vendors and friends write to us
                    initiator = u.address
                elif topic.key == "followup":
                    initiator = seeds.choice([u.address, sender])
                else:
                    initiator = sender
                write_thread(topic, [u.address, sender], initiator, rng.randint(1, 3))
        if round_ == 8:
            for u in seeds.sample(users, 4):
                pitch = rng.randrange(len(_SPAM))
                spammer = by_relation["spam"][1 if pitch == 1 else 0].address  # the fake helpdesk sends pitch 1
                write_thread(None, [spammer, u.address], spammer, 1, spam=pitch)

    for u in users:
        for kind in seeds.sample(("fresh", "reply", "notes"), rng.randint(1, 3)):
            counter["draft"] += 1
            did = seeds.ident("DRF", counter["draft"])
            updated = iso(REFERENCE_DATE - timedelta(minutes=rng.randint(30, 5000)))
            project = seeds.choice(_CODENAMES)
            if kind == "reply" and last_sent.get(u.address):
                base = seeds.choice(last_sent[u.address])
                draft = Draft(did, u.address, list(base.to), [], [], base.subject if base.subject.startswith("Re: ")
                              else f"Re: {base.subject}", "Hi,\n\nQuick follow-up on this - any update?",
                              base.thread_id, base.message_id, "draft", updated)
            elif kind == "notes":
                draft = Draft(did, u.address, [], [], [], f"Ideas for the {project} retro",
                              "- what went well\n- what slowed us down\n- action items", None, None, "draft", updated)
            else:
                peer = seeds.choice([v for v in users if v is not u])
                draft = Draft(did, u.address, [peer.address], [], [], f"{project} status update",
                              f"Hi {peer.display_name.split()[0]},\n\nHere's where {project} stands this week:",
                              None, None, "draft", updated)
            s.drafts.put(did, draft)
