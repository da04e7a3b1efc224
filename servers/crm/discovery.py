"""CRM discovery tools (hidden from the model): what synthesis needs to ground requests in live state —
the sales team (with managers' approval codes, which a user would be told), every record with the
attributes people refer to it by, and the values of categorical fields."""

from __future__ import annotations

from typing import Literal

from servers.crm.state import (
    OPEN_STAGES,
    CrmState,
    activity_view,
    company_view,
    contact_view,
    deal_view,
    lead_view,
)
from servers.kit import discovery, value_counts


@discovery(produces=("rep_id",))
def crm_list_sales_reps(s: CrmState) -> list:
    """Every sales rep with role, region, whether active, managers' approval codes and how many records
    each owns."""
    out = []
    for r in s.reps.values():
        out.append({
            "rep_id": r.rep_id, "name": r.name, "email": r.email, "role": r.role, "region": r.region,
            "active": r.active, "approval_code": r.approval_code,
            "companies": sum(1 for c in s.companies.values() if c.owner_rep_id == r.rep_id),
            "contacts": sum(1 for c in s.contacts.values() if c.owner_rep_id == r.rep_id),
            "open_leads": sum(1 for x in s.leads.values() if x.owner_rep_id == r.rep_id
                              and x.status in ("new", "contacted", "qualified")),
            "open_deals": sum(1 for d in s.deals.values() if d.owner_rep_id == r.rep_id and d.stage in OPEN_STAGES),
        })
    return out


@discovery(produces=("company_id", "contact_id", "lead_id", "deal_id", "activity_id"))
def crm_list_records(s: CrmState, kind: Literal["companies", "contacts", "leads", "deals", "activities"]) -> list:
    """Every record of one kind, in full (names, emails, statuses, stages, amounts, owners, dates).

    Args:
        kind: Which records to list.
    """
    if kind == "companies":
        return [company_view(s, c) for c in s.companies.values()]
    if kind == "contacts":
        return [contact_view(s, c) for c in s.contacts.values()]
    if kind == "leads":
        return [lead_view(s, x) for x in s.leads.values()]
    if kind == "deals":
        return [deal_view(s, d) for d in s.deals.values()]
    return [activity_view(s, a) for a in s.activities.values()]


@discovery
def crm_get_unique_values(s: CrmState, field: Literal["industry", "company_city", "job_title", "lead_status",
                                                       "lead_source", "deal_stage", "activity_kind",
                                                       "activity_status", "rep_region"]) -> list:
    """Distinct values of a categorical field with their counts.

    Args:
        field: Which field to enumerate.
    """
    values = {
        "industry": lambda: [c.industry for c in s.companies.values()],
        "company_city": lambda: [c.city for c in s.companies.values()],
        "job_title": lambda: [c.job_title for c in s.contacts.values() if c.job_title],
        "lead_status": lambda: [x.status for x in s.leads.values()],
        "lead_source": lambda: [x.source for x in s.leads.values()],
        "deal_stage": lambda: [d.stage for d in s.deals.values()],
        "activity_kind": lambda: [a.kind for a in s.activities.values()],
        "activity_status": lambda: [a.status for a in s.activities.values()],
        "rep_region": lambda: [r.region for r in s.reps.values()],
    }[field]()
    return value_counts(values)
