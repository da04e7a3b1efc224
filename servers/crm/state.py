"""CRM records, the session state and the shared rules (pipelines, ownership, lookups).

Every rule that more than one tool enforces lives here, so a refused call always names the rule that
blocked it and what would fix it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal

from servers.kit import Cell, Counters, State, Table, ToolError, iso, parse_date, require, today

LeadStatus = Literal["new", "contacted", "qualified", "converted", "disqualified"]
LeadSource = Literal["website", "referral", "trade_show", "cold_call", "webinar", "partner", "advertising"]
DealStage = Literal["prospecting", "qualification", "proposal", "negotiation", "closed_won", "closed_lost"]
ActivityKind = Literal["call", "meeting", "email", "note", "task"]
Industry = Literal[
    "software", "manufacturing", "healthcare", "finance", "retail", "logistics", "education", "energy",
    "media", "hospitality", "other",
]

OPEN_STAGES: tuple[str, ...] = ("prospecting", "qualification", "proposal", "negotiation")
CLOSED_STAGES: tuple[str, ...] = ("closed_won", "closed_lost")
STAGE_PROBABILITY: dict[str, int] = {
    "prospecting": 10, "qualification": 25, "proposal": 50, "negotiation": 75, "closed_won": 100, "closed_lost": 0,
}
WIN_FROM: tuple[str, ...] = ("proposal", "negotiation")
"""A deal can be won only once a proposal went out."""

LEAD_TRANSITIONS: dict[str, tuple[str, ...]] = {
    "new": ("contacted", "disqualified"),
    "contacted": ("qualified", "disqualified"),
    "qualified": ("contacted", "disqualified"),
    "disqualified": ("new",),
    "converted": (),
}
"""Status changes ``update_crm_lead_status`` may make; ``converted`` is reached only by conversion."""
OPEN_LEAD: tuple[str, ...] = ("new", "contacted", "qualified")
CONTACT_KINDS: tuple[str, ...] = ("call", "meeting", "email")
"""Activities that count as reaching out (they move a new lead to contacted)."""


@dataclass
class SalesRep:
    rep_id: str
    name: str
    email: str
    role: str  # rep | manager
    region: str
    active: bool  # False: on leave / left; cannot own new records
    approval_code: str | None = None  # managers only: 6 digits, approves destructive changes


@dataclass
class Company:
    company_id: str
    name: str
    industry: str
    city: str
    employees: int
    website: str
    owner_rep_id: str
    created_at: str


@dataclass
class Contact:
    contact_id: str
    first_name: str
    last_name: str
    email: str
    phone: str | None
    job_title: str | None
    company_id: str | None
    owner_rep_id: str
    created_at: str
    source_lead_id: str | None = None


@dataclass
class Lead:
    lead_id: str
    first_name: str
    last_name: str
    email: str
    company_name: str
    industry: str
    job_title: str | None
    source: str
    status: str
    owner_rep_id: str
    estimated_value: float | None
    created_at: str
    last_contacted_at: str | None = None
    disqualify_reason: str | None = None
    converted_at: str | None = None
    converted_contact_id: str | None = None
    converted_company_id: str | None = None
    converted_deal_id: str | None = None


@dataclass
class StageChange:
    stage: str
    at: str


@dataclass
class Deal:
    deal_id: str
    name: str
    company_id: str
    company_name: str  # kept so closed deals still read well after their company is deleted
    contact_id: str | None
    owner_rep_id: str
    stage: str
    amount: float | None
    expected_close_date: str
    created_at: str
    past_due: bool = False  # open and its expected close date has passed (kept current by on_time)
    closed_at: str | None = None
    lost_reason: str | None = None
    history: list[StageChange] = field(default_factory=list)


@dataclass
class Activity:
    activity_id: str
    kind: str  # call | meeting | email | note | task
    subject: str
    notes: str | None
    record_id: str  # the contact, company, lead or deal it is about
    owner_rep_id: str
    created_at: str
    status: str  # logged (call/email/note) | scheduled/held (meeting) | open/overdue/completed (task)
    due_date: str | None = None  # tasks
    scheduled_at: str | None = None  # meetings
    completed_at: str | None = None
    outcome: str | None = None


class CrmState(State):
    reps: Table[SalesRep]
    companies: Table[Company]
    contacts: Table[Contact]
    leads: Table[Lead]
    deals: Table[Deal]
    activities: Table[Activity]
    counters: Cell[Counters]


# ---------------------------------------------------------------- lookups
def get_rep(s: CrmState, rep_id: str, field: str = "owner_rep_id", *, need_active: bool = True) -> SalesRep:
    rep = require(s.reps, rep_id, field, what="sales rep")
    if need_active and not rep.active:
        raise ToolError(f"sales rep {rep.name} ({rep_id}) is inactive and cannot own records; pick an active rep",
                        field=field, code="inactive_owner")
    return rep


def get_company(s: CrmState, company_id: str) -> Company:
    return require(s.companies, company_id, "company_id")


def get_contact(s: CrmState, contact_id: str) -> Contact:
    return require(s.contacts, contact_id, "contact_id")


def get_lead(s: CrmState, lead_id: str) -> Lead:
    return require(s.leads, lead_id, "lead_id")


def get_deal(s: CrmState, deal_id: str) -> Deal:
    return require(s.deals, deal_id, "deal_id")


def get_activity(s: CrmState, activity_id: str) -> Activity:
    return require(s.activities, activity_id, "activity_id")


RECORD_TABLES: tuple[tuple[str, str], ...] = (
    ("CMP-", "companies"), ("CON-", "contacts"), ("LEAD-", "leads"), ("DEAL-", "deals"),
)
RECORD_TYPE = {"companies": "company", "contacts": "contact", "leads": "lead", "deals": "deal"}


def record_kind(s: CrmState, record_id: str, field: str = "record_id") -> tuple[str, Any]:
    """(table name, record) for a company, contact, lead or deal id."""
    for prefix, table in RECORD_TABLES:
        if record_id.startswith(prefix):
            rec = getattr(s, table).get(record_id)
            if rec is None:
                break
            return table, rec
    raise ToolError(f"unknown record_id '{record_id}': expected the id of a company (CMP-…), contact (CON-…), "
                    "lead (LEAD-…) or deal (DEAL-…)", field=field, code="not_found")


def contact_by_email(s: CrmState, email: str) -> Contact | None:
    needle = email.strip().lower()
    return next((c for c in s.contacts.values() if c.email.lower() == needle), None)


def company_by_name(s: CrmState, name: str) -> Company | None:
    needle = " ".join(name.lower().split())
    return next((c for c in s.companies.values() if c.name.lower() == needle), None)


def open_deals_of(s: CrmState, company_id: str) -> list[Deal]:
    return [d for d in s.deals.values() if d.company_id == company_id and d.stage in OPEN_STAGES]


# ---------------------------------------------------------------- rules
def future_date(s: CrmState, text: str, field: str, what: str) -> date:
    """An ISO date that is today or later on the session clock."""
    when = parse_date(text, field)
    if when < today(s):
        raise ToolError(f"{what} {text} is in the past (today is {iso(today(s))}); pick today or a later date",
                        field=field, code="date_in_past")
    return when


def clean_name(text: str, field: str) -> str:
    out = " ".join(text.split())
    if not out:
        raise ToolError(f"{field} must not be blank", field=field)
    return out


def money(value: float | None) -> float | None:
    return None if value is None else round(float(value), 2)


def page(rows: list[Any], limit: int, offset: int, key: str) -> dict[str, Any]:
    """One page of ``rows`` with the total, so a caller can ask for the next one."""
    return {"total": len(rows), "offset": offset, "returned": len(rows[offset:offset + limit]),
            key: rows[offset:offset + limit]}


def matches(needle: str | None, *fields: str | None) -> bool:
    if not needle:
        return True
    n = needle.strip().lower()
    return any(n in (f or "").lower() for f in fields)


# ---------------------------------------------------------------- views
def rep_name(s: CrmState, rep_id: str) -> str:
    rep = s.reps.get(rep_id)
    return rep.name if rep else rep_id


def company_view(s: CrmState, c: Company) -> dict[str, Any]:
    deals = [d for d in s.deals.values() if d.company_id == c.company_id]
    open_deals = [d for d in deals if d.stage in OPEN_STAGES]
    return {
        "company_id": c.company_id, "name": c.name, "industry": c.industry, "city": c.city,
        "employees": c.employees, "website": c.website, "owner_rep_id": c.owner_rep_id,
        "owner_name": rep_name(s, c.owner_rep_id), "created_at": c.created_at,
        "contacts": sum(1 for x in s.contacts.values() if x.company_id == c.company_id),
        "open_deals": len(open_deals),
        "open_pipeline_value": round(sum(d.amount or 0.0 for d in open_deals), 2),
        "won_value": round(sum(d.amount or 0.0 for d in deals if d.stage == "closed_won"), 2),
    }


def contact_view(s: CrmState, c: Contact) -> dict[str, Any]:
    company = s.companies.get(c.company_id) if c.company_id else None
    acts = [a for a in s.activities.values() if a.record_id == c.contact_id]
    return {
        "contact_id": c.contact_id, "name": f"{c.first_name} {c.last_name}", "first_name": c.first_name,
        "last_name": c.last_name, "email": c.email, "phone": c.phone, "job_title": c.job_title,
        "company_id": c.company_id, "company_name": company.name if company else None,
        "owner_rep_id": c.owner_rep_id, "owner_name": rep_name(s, c.owner_rep_id), "created_at": c.created_at,
        "open_deals": sum(1 for d in s.deals.values() if d.contact_id == c.contact_id and d.stage in OPEN_STAGES),
        "last_activity_at": max((a.created_at for a in acts), default=None),
    }


def lead_view(s: CrmState, ld: Lead) -> dict[str, Any]:
    return {
        "lead_id": ld.lead_id, "name": f"{ld.first_name} {ld.last_name}", "email": ld.email,
        "company_name": ld.company_name, "industry": ld.industry, "job_title": ld.job_title, "source": ld.source, "status": ld.status,
        "allowed_next_statuses": list(LEAD_TRANSITIONS[ld.status]), "owner_rep_id": ld.owner_rep_id,
        "owner_name": rep_name(s, ld.owner_rep_id), "estimated_value": ld.estimated_value,
        "created_at": ld.created_at, "last_contacted_at": ld.last_contacted_at,
        "disqualify_reason": ld.disqualify_reason, "converted_at": ld.converted_at,
        "converted_contact_id": ld.converted_contact_id, "converted_company_id": ld.converted_company_id,
        "converted_deal_id": ld.converted_deal_id,
    }


def deal_view(s: CrmState, d: Deal) -> dict[str, Any]:
    contact = s.contacts.get(d.contact_id) if d.contact_id else None
    return {
        "deal_id": d.deal_id, "name": d.name, "company_id": d.company_id, "company_name": d.company_name,
        "contact_id": d.contact_id, "contact_name": f"{contact.first_name} {contact.last_name}" if contact else None,
        "owner_rep_id": d.owner_rep_id, "owner_name": rep_name(s, d.owner_rep_id), "stage": d.stage,
        "probability_percent": STAGE_PROBABILITY[d.stage], "amount": d.amount,
        "weighted_amount": round((d.amount or 0.0) * STAGE_PROBABILITY[d.stage] / 100, 2),
        "expected_close_date": d.expected_close_date, "past_due": d.past_due, "created_at": d.created_at,
        "closed_at": d.closed_at, "lost_reason": d.lost_reason,
        "stage_history": [{"stage": h.stage, "at": h.at} for h in d.history],
    }


def activity_view(s: CrmState, a: Activity) -> dict[str, Any]:
    table, rec = None, None
    for prefix, name in RECORD_TABLES:
        if a.record_id.startswith(prefix):
            table, rec = name, getattr(s, name).get(a.record_id)
    label = None
    if rec is not None:
        label = getattr(rec, "name", None) or f"{getattr(rec, 'first_name', '')} {getattr(rec, 'last_name', '')}".strip()
    return {
        "activity_id": a.activity_id, "kind": a.kind, "subject": a.subject, "notes": a.notes,
        "record_id": a.record_id, "record_type": RECORD_TYPE.get(table or ""), "record_name": label,
        "owner_rep_id": a.owner_rep_id, "owner_name": rep_name(s, a.owner_rep_id), "status": a.status,
        "due_date": a.due_date, "scheduled_at": a.scheduled_at, "created_at": a.created_at,
        "completed_at": a.completed_at, "outcome": a.outcome,
    }


# ---------------------------------------------------------------- time
def on_time(s: CrmState, before: datetime, after: datetime) -> None:
    """Tasks whose due date has passed become overdue, meetings whose start time has come are held, and
    open deals past their expected close date are flagged ``past_due`` (tables in key order)."""
    day, stamp = after.date().isoformat(), iso(after)
    overdue = [k for k, a in s.activities.items()
               if a.kind == "task" and a.status == "open" and a.due_date is not None and a.due_date < day]
    held = [k for k, a in s.activities.items()
            if a.kind == "meeting" and a.status == "scheduled" and (a.scheduled_at or "~") <= stamp]
    slipped = [k for k, d in s.deals.items() if d.stage in OPEN_STAGES and not d.past_due
               and d.expected_close_date < day]
    for key in overdue:
        s.activities.edit(key).status = "overdue"
    for key in held:
        s.activities.edit(key).status = "held"
    for key in slipped:
        s.deals.edit(key).past_due = True
