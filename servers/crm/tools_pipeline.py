"""CRM tools for the sales pipeline: the lead inbox (qualify, disqualify, convert) and deals moving
through their stages to won or lost."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Literal

from pydantic import Field

from servers.crm.state import (
    CLOSED_STAGES,
    LEAD_TRANSITIONS,
    OPEN_LEAD,
    OPEN_STAGES,
    WIN_FROM,
    Company,
    Contact,
    CrmState,
    Deal,
    DealStage,
    Industry,
    Lead,
    LeadSource,
    StageChange,
    clean_name,
    company_by_name,
    contact_by_email,
    deal_view,
    future_date,
    get_company,
    get_contact,
    get_deal,
    get_lead,
    get_rep,
    lead_view,
    matches,
    money,
    page,
)
from servers.kit import (
    EmailAddress,
    IsoDate,
    Money,
    Name,
    ToolError,
    iso,
    new_id,
    now,
    parse_date,
    today,
    tool,
)

Limit = Annotated[int, Field(ge=1, le=100)]
Offset = Annotated[int, Field(ge=0, le=10_000)]
SettableLeadStatus = Literal["new", "contacted", "qualified", "disqualified"]


# ---------------------------------------------------------------- leads
@tool(produces=("lead_id",), consumes=("rep_id",), read_only=True)
def list_crm_leads(s: CrmState, status: Literal["new", "contacted", "qualified", "converted", "disqualified",
                                                "open"] | None = None,
                   source: LeadSource | None = None, owner_rep_id: str | None = None,
                   min_estimated_value: Money | None = None, query: str | None = None,
                   sort_by: Literal["created_at", "estimated_value", "name"] = "created_at",
                   limit: Limit = 20, offset: Offset = 0) -> dict:
    """List sales leads (prospects not yet customers) with their status, source, owner and estimated
    value, and which status changes each one allows next.

    Args:
        status: Only leads in this status; "open" means new, contacted or qualified.
        source: Only leads that came from this channel.
        owner_rep_id: Only leads owned by this sales rep (REP-…).
        min_estimated_value: Only leads estimated at this amount or more.
        query: Case-insensitive text in the person's name, email or company name.
        sort_by: created_at (newest first), estimated_value (largest first) or name (A–Z).
        limit: How many leads to return.
        offset: How many matching leads to skip (for the next page).
    """
    if owner_rep_id is not None:
        get_rep(s, owner_rep_id, need_active=False)
    rows: list[Lead] = []
    for ld in s.leads.values():
        if (status == "open" and ld.status not in OPEN_LEAD) or (status not in (None, "open") and ld.status != status):
            continue
        if source is not None and ld.source != source:
            continue
        if owner_rep_id is not None and ld.owner_rep_id != owner_rep_id:
            continue
        if min_estimated_value is not None and (ld.estimated_value or 0.0) < min_estimated_value:
            continue
        if not matches(query, f"{ld.first_name} {ld.last_name}", ld.email, ld.company_name):
            continue
        rows.append(ld)
    if sort_by == "created_at":
        rows.sort(key=lambda x: (x.created_at, x.lead_id), reverse=True)
    elif sort_by == "estimated_value":
        rows.sort(key=lambda x: (-(x.estimated_value or 0.0), x.lead_id))
    else:
        rows.sort(key=lambda x: (x.last_name.lower(), x.first_name.lower(), x.lead_id))
    return page([lead_view(s, x) for x in rows], limit, offset, "leads")


@tool(produces=("lead_id",), consumes=("rep_id",))
def create_crm_lead(s: CrmState, first_name: Name, last_name: Name, email: EmailAddress, company_name: Name,
                    source: LeadSource, owner_rep_id: str, estimated_value: Money | None = None,
                    job_title: Name | None = None, industry: Industry | None = None) -> dict:
    """Add a new sales lead in status new. A person who is already a contact, or who already has an open
    lead, is refused as a duplicate; the owner must be an active sales rep.

    Args:
        first_name: Given name.
        last_name: Family name.
        email: The person's email address.
        company_name: The company the person works for.
        source: Where the lead came from.
        owner_rep_id: The sales rep who will work the lead (REP-…).
        estimated_value: Rough value of the business, if known.
        job_title: The person's job title.
        industry: The company's industry, if known.
    """
    first, last = clean_name(first_name, "first_name"), clean_name(last_name, "last_name")
    contact = contact_by_email(s, email)
    if contact is not None:
        raise ToolError(f"duplicate email: {email} is already contact {contact.contact_id} "
                        f"({contact.first_name} {contact.last_name}); log an activity on the contact instead",
                        field="email", code="duplicate")
    needle = email.strip().lower()
    dup = next((x for x in s.leads.values() if x.email.lower() == needle and x.status in OPEN_LEAD), None)
    if dup is not None:
        raise ToolError(f"duplicate email: {email} already has open lead {dup.lead_id} (status {dup.status})",
                        field="email", code="duplicate")
    get_rep(s, owner_rep_id)
    known = company_by_name(s, company_name)
    lid = new_id(s.counters, "LEAD")
    rec = s.leads.put(lid, Lead(
        lid, first, last, email.strip(), known.name if known else clean_name(company_name, "company_name"),
        industry or (known.industry if known else "other"), job_title, source, "new", owner_rep_id,
        money(estimated_value), iso(now(s))))
    return lead_view(s, rec)


@tool(consumes=("lead_id",), establishes=("lead_qualified",))
def update_crm_lead_status(s: CrmState, lead_id: str, status: SettableLeadStatus, reason: str | None = None) -> dict:
    """Move a lead along its status: new → contacted → qualified, any open lead → disqualified (with a
    reason), a qualified lead back to contacted, and a disqualified lead back to new (reopen). Converted
    leads are final; conversion itself happens with convert_crm_lead.

    Args:
        lead_id: The lead (LEAD-…).
        status: The new status.
        reason: Why the lead is disqualified (required for disqualified, not allowed otherwise).
    """
    ld = get_lead(s, lead_id)
    if ld.status == "converted":
        raise ToolError(f"lead {lead_id} was converted into contact {ld.converted_contact_id} and deal "
                        f"{ld.converted_deal_id}; converted leads cannot change status", field="lead_id",
                        code="illegal_transition")
    if ld.status == status:
        raise ToolError(f"lead {lead_id} is already {status}", field="status", code="illegal_transition")
    allowed = LEAD_TRANSITIONS[ld.status]
    if status not in allowed:
        raise ToolError(f"illegal lead status change {ld.status} → {status}; from {ld.status} the allowed "
                        f"statuses are: {', '.join(allowed)}", field="status", code="illegal_transition")
    if status == "disqualified" and not (reason or "").strip():
        raise ToolError("a reason is required to disqualify a lead", field="reason")
    if status != "disqualified" and reason is not None:
        raise ToolError("reason only applies when disqualifying a lead", field="reason")
    rec = s.leads.edit(lead_id)
    rec.status = status
    rec.disqualify_reason = reason.strip() if status == "disqualified" and reason else None
    if status == "contacted":
        rec.last_contacted_at = iso(now(s))
    return lead_view(s, rec)


@tool(consumes=("lead_id", "company_id"), produces=("contact_id", "company_id", "deal_id"),
      requires=("lead_qualified",))
def convert_crm_lead(s: CrmState, lead_id: str, deal_name: Name | None = None, deal_amount: Money | None = None,
                     expected_close_date: IsoDate | None = None, company_id: str | None = None) -> dict:
    """Convert a qualified lead into a customer: creates (or reuses, matched by email) the contact,
    creates (or reuses, matched by name, or the given company) the company, and opens a deal in
    prospecting owned by the lead's owner. Only qualified leads convert; a disqualified lead must be
    reopened and qualified first, and a lead owned by an inactive rep must be reassigned first.

    Args:
        lead_id: The qualified lead (LEAD-…).
        deal_name: Name of the new deal; defaults to "<company> – New business".
        deal_amount: Expected deal value; defaults to the lead's estimated value.
        expected_close_date: Expected close date as YYYY-MM-DD (today or later); defaults to 30 days out.
        company_id: Attach the new contact and deal to this existing company (CMP-…) instead of matching
            the lead's company name.
    """
    ld = get_lead(s, lead_id)
    if ld.status == "converted":
        raise ToolError(f"lead {lead_id} was already converted (contact {ld.converted_contact_id}, deal "
                        f"{ld.converted_deal_id})", field="lead_id", code="illegal_transition")
    if ld.status == "disqualified":
        raise ToolError(f"cannot convert disqualified lead {lead_id} ({ld.disqualify_reason}); reopen it (status "
                        "new) and qualify it first", field="lead_id", code="illegal_transition")
    if ld.status != "qualified":
        raise ToolError(f"only qualified leads can be converted; lead {lead_id} is {ld.status} — qualify it first",
                        field="lead_id", code="illegal_transition")
    get_rep(s, ld.owner_rep_id, "lead_id")
    close = future_date(s, expected_close_date, "expected_close_date", "expected_close_date") \
        if expected_close_date is not None else today(s) + timedelta(days=30)
    stamp = iso(now(s))
    company = get_company(s, company_id) if company_id is not None else company_by_name(s, ld.company_name)
    created_company = company is None
    if company is None:
        slug = "".join(ch for ch in ld.company_name.lower() if ch.isalnum()) or "company"
        cid = new_id(s.counters, "CMP")
        company = s.companies.put(cid, Company(cid, ld.company_name, ld.industry, "unknown", 1,
                                               f"https://www.{slug}.example", ld.owner_rep_id, stamp))
    contact = contact_by_email(s, ld.email)
    created_contact = contact is None
    if contact is None:
        con_id = new_id(s.counters, "CON")
        contact = s.contacts.put(con_id, Contact(con_id, ld.first_name, ld.last_name, ld.email, None, ld.job_title,
                                                 company.company_id, ld.owner_rep_id, stamp, source_lead_id=lead_id))
    elif contact.company_id is None:
        s.contacts.edit(contact.contact_id).company_id = company.company_id
    deal_id = new_id(s.counters, "DEAL")
    amount = money(deal_amount) if deal_amount is not None else ld.estimated_value
    name = clean_name(deal_name, "deal_name") if deal_name else f"{company.name} – New business"
    deal = s.deals.put(deal_id, Deal(deal_id, name, company.company_id, company.name, contact.contact_id,
                                     ld.owner_rep_id, "prospecting", amount, iso(close), stamp,
                                     history=[StageChange("prospecting", stamp)]))
    rec = s.leads.edit(lead_id)
    rec.status, rec.converted_at = "converted", stamp
    rec.converted_contact_id, rec.converted_company_id, rec.converted_deal_id = (
        contact.contact_id, company.company_id, deal_id)
    return {"lead": lead_view(s, rec), "contact_id": contact.contact_id, "contact_created": created_contact,
            "company_id": company.company_id, "company_created": created_company, "deal": deal_view(s, deal)}


# ---------------------------------------------------------------- deals
@tool(produces=("deal_id",), consumes=("company_id", "rep_id"), read_only=True)
def list_crm_deals(s: CrmState, stage: Literal["prospecting", "qualification", "proposal", "negotiation",
                                               "closed_won", "closed_lost", "open", "closed"] | None = None,
                   owner_rep_id: str | None = None, company_id: str | None = None,
                   closing_before: IsoDate | None = None, min_amount: Money | None = None, past_due_only: bool = False,
                   sort_by: Literal["expected_close_date", "amount", "created_at"] = "expected_close_date",
                   limit: Limit = 20, offset: Offset = 0) -> dict:
    """List deals in the sales pipeline with stage, amount, win probability and expected close date,
    plus the count, total and probability-weighted value of everything that matched.

    Args:
        stage: Only deals in this stage; "open" means not yet won or lost, "closed" means won or lost.
        owner_rep_id: Only deals owned by this sales rep (REP-…).
        company_id: Only deals with this company (CMP-…).
        closing_before: Only deals expected to close on or before this date (YYYY-MM-DD).
        min_amount: Only deals worth at least this amount.
        past_due_only: Only open deals whose expected close date has passed.
        sort_by: expected_close_date (soonest first), amount (largest first) or created_at (newest first).
        limit: How many deals to return.
        offset: How many matching deals to skip (for the next page).
    """
    if owner_rep_id is not None:
        get_rep(s, owner_rep_id, need_active=False)
    if company_id is not None:
        get_company(s, company_id)
    cutoff = iso(parse_date(closing_before, "closing_before")) if closing_before is not None else None
    rows: list[Deal] = []
    for d in s.deals.values():
        if (stage == "open" and d.stage not in OPEN_STAGES) or (stage == "closed" and d.stage not in CLOSED_STAGES):
            continue
        if stage not in (None, "open", "closed") and d.stage != stage:
            continue
        if owner_rep_id is not None and d.owner_rep_id != owner_rep_id:
            continue
        if company_id is not None and d.company_id != company_id:
            continue
        if cutoff is not None and d.expected_close_date > cutoff:
            continue
        if min_amount is not None and (d.amount or 0.0) < min_amount:
            continue
        if past_due_only and not d.past_due:
            continue
        rows.append(d)
    if sort_by == "expected_close_date":
        rows.sort(key=lambda d: (d.expected_close_date, d.deal_id))
    elif sort_by == "amount":
        rows.sort(key=lambda d: (-(d.amount or 0.0), d.deal_id))
    else:
        rows.sort(key=lambda d: (d.created_at, d.deal_id), reverse=True)
    views = [deal_view(s, d) for d in rows]
    out = page(views, limit, offset, "deals")
    out["pipeline"] = {"count": len(views), "amount": round(sum(v["amount"] or 0.0 for v in views), 2),
                       "weighted_amount": round(sum(v["weighted_amount"] for v in views), 2)}
    return out


@tool(produces=("deal_id",), consumes=("company_id", "contact_id", "rep_id"))
def create_crm_deal(s: CrmState, company_id: str, name: Name, expected_close_date: IsoDate,
                    amount: Money | None = None, contact_id: str | None = None,
                    owner_rep_id: str | None = None) -> dict:
    """Open a new deal with an existing company, starting in prospecting. The expected close date must
    not be in the past, the contact (if given) must work at that company, and the owner (default: the
    company's owner) must be an active sales rep.

    Args:
        company_id: The company the deal is with (CMP-…).
        name: A short name for the deal.
        expected_close_date: Expected close date as YYYY-MM-DD (today or later).
        amount: Expected value of the deal, if known.
        contact_id: The main contact person at the company (CON-…).
        owner_rep_id: The sales rep who owns the deal (REP-…).
    """
    company = get_company(s, company_id)
    close = future_date(s, expected_close_date, "expected_close_date", "expected_close_date")
    if contact_id is not None:
        contact = get_contact(s, contact_id)
        if contact.company_id != company_id:
            where = s.companies[contact.company_id].name if contact.company_id in s.companies else "no company"
            raise ToolError(f"contact {contact_id} ({contact.first_name} {contact.last_name}) works at {where}, "
                            f"not {company.name}", field="contact_id", code="mismatch")
    owner = owner_rep_id or company.owner_rep_id
    get_rep(s, owner, "owner_rep_id")
    deal_id = new_id(s.counters, "DEAL")
    stamp = iso(now(s))
    deal = s.deals.put(deal_id, Deal(deal_id, clean_name(name, "name"), company_id, company.name, contact_id, owner,
                                     "prospecting", money(amount), iso(close), stamp,
                                     history=[StageChange("prospecting", stamp)]))
    return deal_view(s, deal)


@tool(consumes=("deal_id", "contact_id"), establishes=("no_open_deals",))
def update_crm_deal(s: CrmState, deal_id: str, stage: DealStage | None = None, amount: Money | None = None,
                    expected_close_date: IsoDate | None = None, lost_reason: str | None = None,
                    contact_id: str | None = None) -> dict:
    """Move a deal to another pipeline stage and/or change its amount, expected close date or main
    contact. Open stages may move back and forth; a deal can be won only from proposal or negotiation and
    only with an amount; losing it needs a reason. Won and lost deals are final and cannot be reopened or
    edited.

    Args:
        deal_id: The deal (DEAL-…).
        stage: The new stage.
        amount: The deal's value (required, here or already on the deal, to close it as won).
        expected_close_date: New expected close date as YYYY-MM-DD (today or later).
        lost_reason: Why the deal was lost (required for closed_lost, not allowed otherwise).
        contact_id: New main contact (CON-…), who must work at the deal's company.
    """
    d = get_deal(s, deal_id)
    if stage is None and amount is None and expected_close_date is None and lost_reason is None \
            and contact_id is None:
        raise ToolError("nothing to change: give a stage, amount, expected_close_date, lost_reason or contact_id",
                        field="stage")
    if d.stage in CLOSED_STAGES:
        raise ToolError(f"deal {deal_id} is {d.stage} since {d.closed_at}; closed deals are final and cannot move "
                        "back to an open stage or be edited — open a new deal instead", field="deal_id",
                        code="deal_closed")
    if stage is not None and stage == d.stage:
        raise ToolError(f"deal {deal_id} is already in {stage}", field="stage", code="illegal_transition")
    close = future_date(s, expected_close_date, "expected_close_date", "expected_close_date") \
        if expected_close_date is not None else None
    if lost_reason is not None and stage != "closed_lost":
        raise ToolError("lost_reason only applies when moving the deal to closed_lost", field="lost_reason")
    if stage == "closed_lost" and not (lost_reason or "").strip():
        raise ToolError("a lost_reason is required to close a deal as lost", field="lost_reason")
    if stage == "closed_won":
        if d.stage not in WIN_FROM:
            raise ToolError(f"deal {deal_id} is in {d.stage}: a deal can be won only from "
                            f"{' or '.join(WIN_FROM)}; move it to proposal first", field="stage",
                            code="illegal_transition")
        if amount is None and not d.amount:
            raise ToolError(f"deal {deal_id} has no amount: set the amount to close it as won", field="amount",
                            code="missing_amount")
    if contact_id is not None:
        contact = get_contact(s, contact_id)
        if contact.company_id != d.company_id:
            raise ToolError(f"contact {contact_id} does not work at {d.company_name}", field="contact_id",
                            code="mismatch")
    rec = s.deals.edit(deal_id)
    stamp = iso(now(s))
    if amount is not None:
        rec.amount = money(amount)
    if close is not None:
        rec.expected_close_date = iso(close)
        rec.past_due = False
    if contact_id is not None:
        rec.contact_id = contact_id
    if stage is not None:
        rec.stage = stage
        rec.history.append(StageChange(stage, stamp))
        if stage in CLOSED_STAGES:
            rec.closed_at, rec.past_due = stamp, False
            rec.expected_close_date = iso(today(s))
            rec.lost_reason = lost_reason.strip() if lost_reason else None
    return deal_view(s, rec)
