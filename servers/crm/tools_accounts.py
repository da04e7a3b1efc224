"""CRM tools for the address book: contacts and the companies (accounts) they work at."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.crm.state import (
    Company,
    Contact,
    CrmState,
    Industry,
    clean_name,
    company_by_name,
    company_view,
    contact_by_email,
    contact_view,
    get_company,
    get_rep,
    matches,
    open_deals_of,
    page,
)
from servers.kit import EmailAddress, Name, Phone, Sensitive, ToolError, Url, iso, new_id, now, tool

Limit = Annotated[int, Field(ge=1, le=100)]
Offset = Annotated[int, Field(ge=0, le=10_000)]
Employees = Annotated[int, Field(ge=1, le=1_000_000)]
ApprovalCode = Annotated[Sensitive, Field(pattern=r"^\d{6}$")]


@tool(produces=("contact_id",), consumes=("company_id", "rep_id"), read_only=True)
def search_crm_contacts(s: CrmState, query: str | None = None, company_id: str | None = None,
                        owner_rep_id: str | None = None, limit: Limit = 20, offset: Offset = 0) -> dict:
    """Find people in the CRM address book by name, email, job title or company name, optionally only
    those at one company or owned by one sales rep. Sorted by last name; paginated.

    Args:
        query: Case-insensitive text found in the person's name, email, job title or company name.
        company_id: Only people working at this company (CMP-…).
        owner_rep_id: Only people owned by this sales rep (REP-…).
        limit: How many contacts to return.
        offset: How many matching contacts to skip (for the next page).
    """
    if company_id is not None:
        get_company(s, company_id)
    if owner_rep_id is not None:
        get_rep(s, owner_rep_id, need_active=False)
    rows = []
    for c in s.contacts.values():
        company = s.companies.get(c.company_id) if c.company_id else None
        if company_id is not None and c.company_id != company_id:
            continue
        if owner_rep_id is not None and c.owner_rep_id != owner_rep_id:
            continue
        if not matches(query, f"{c.first_name} {c.last_name}", c.email, c.job_title, company.name if company else None):
            continue
        rows.append(c)
    rows.sort(key=lambda c: (c.last_name.lower(), c.first_name.lower(), c.contact_id))
    return page([contact_view(s, c) for c in rows], limit, offset, "contacts")


@tool(produces=("contact_id",), consumes=("company_id", "rep_id"))
def create_crm_contact(s: CrmState, first_name: Name, last_name: Name, email: EmailAddress,
                       company_id: str | None = None, phone: Phone | None = None, job_title: Name | None = None,
                       owner_rep_id: str | None = None) -> dict:
    """Add a person to the CRM. The email address must not belong to another contact. The owner defaults
    to the owner of the person's company; a person without a company needs an owner.

    Args:
        first_name: Given name.
        last_name: Family name.
        email: Work email address (unique across contacts).
        company_id: The company the person works at (CMP-…).
        phone: Phone number.
        job_title: Job title, e.g. "IT Director".
        owner_rep_id: The sales rep who owns the relationship (REP-…).
    """
    first, last = clean_name(first_name, "first_name"), clean_name(last_name, "last_name")
    dup = contact_by_email(s, email)
    if dup is not None:
        raise ToolError(f"duplicate email: {email} already belongs to contact {dup.contact_id} "
                        f"({dup.first_name} {dup.last_name}); update that contact instead", field="email",
                        code="duplicate")
    company = get_company(s, company_id) if company_id is not None else None
    if owner_rep_id is None:
        if company is None:
            raise ToolError("owner_rep_id is required for a contact without a company", field="owner_rep_id")
        owner_rep_id = company.owner_rep_id
    get_rep(s, owner_rep_id)
    cid = new_id(s.counters, "CON")
    rec = s.contacts.put(cid, Contact(cid, first, last, email.strip(), phone, job_title, company_id, owner_rep_id,
                                      iso(now(s))))
    return contact_view(s, rec)


@tool(produces=("company_id",), consumes=("rep_id",), read_only=True)
def list_crm_companies(s: CrmState, query: str | None = None, industry: Industry | None = None,
                       owner_rep_id: str | None = None, has_open_deals: bool | None = None,
                       sort_by: Literal["name", "open_pipeline_value", "created_at"] = "name",
                       limit: Limit = 20, offset: Offset = 0) -> dict:
    """List the companies (accounts) in the CRM with their owner, number of contacts and open deals and
    the value of their open pipeline; filter and sort them.

    Args:
        query: Case-insensitive text in the company name or city.
        industry: Only companies in this industry.
        owner_rep_id: Only companies owned by this sales rep (REP-…).
        has_open_deals: true for companies with at least one open deal, false for those without.
        sort_by: name (A–Z), open_pipeline_value (largest first) or created_at (newest first).
        limit: How many companies to return.
        offset: How many matching companies to skip (for the next page).
    """
    if owner_rep_id is not None:
        get_rep(s, owner_rep_id, need_active=False)
    rows = []
    for c in s.companies.values():
        if industry is not None and c.industry != industry:
            continue
        if owner_rep_id is not None and c.owner_rep_id != owner_rep_id:
            continue
        if not matches(query, c.name, c.city):
            continue
        view = company_view(s, c)
        if has_open_deals is not None and (view["open_deals"] > 0) != has_open_deals:
            continue
        rows.append(view)
    if sort_by == "name":
        rows.sort(key=lambda r: (r["name"].lower(), r["company_id"]))
    elif sort_by == "open_pipeline_value":
        rows.sort(key=lambda r: (-r["open_pipeline_value"], r["company_id"]))
    else:
        rows.sort(key=lambda r: (r["created_at"], r["company_id"]), reverse=True)
    return page(rows, limit, offset, "companies")


@tool(produces=("company_id",), consumes=("rep_id",))
def create_crm_company(s: CrmState, name: Name, industry: Industry, city: Name, owner_rep_id: str,
                       website: Url | None = None, employees: Employees | None = None) -> dict:
    """Add a company (account) to the CRM. Company names are unique (case-insensitive) and the owner
    must be an active sales rep.

    Args:
        name: The company's name.
        industry: The company's industry.
        city: Headquarters city.
        owner_rep_id: The sales rep who owns the account (REP-…).
        website: The company's website.
        employees: Approximate head count.
    """
    clean = clean_name(name, "name")
    dup = company_by_name(s, clean)
    if dup is not None:
        raise ToolError(f"duplicate company: '{dup.name}' already exists as {dup.company_id}", field="name",
                        code="duplicate")
    get_rep(s, owner_rep_id)
    slug = "".join(ch for ch in clean.lower() if ch.isalnum()) or "company"
    cid = new_id(s.counters, "CMP")
    rec = s.companies.put(cid, Company(cid, clean, industry, clean_name(city, "city"), employees or 1,
                                       website or f"https://www.{slug}.example", owner_rep_id, iso(now(s))))
    return company_view(s, rec)


@tool(consumes=("company_id",), requires=("no_open_deals",))
def delete_crm_company(s: CrmState, company_id: str, approval_code: ApprovalCode) -> dict:
    """Delete a company from the CRM. Needs a sales manager's 6-digit approval code, and the company must
    have no open deals (close or move them first). Its contacts stay in the CRM without a company; closed
    deals keep the company name for reporting.

    Args:
        company_id: The company to delete (CMP-…).
        approval_code: A sales manager's 6-digit approval code, as the manager gave it.
    """
    company = get_company(s, company_id)
    if not any(r.role == "manager" and r.active and r.approval_code == approval_code for r in s.reps.values()):
        raise ToolError("incorrect approval_code: it is not the approval code of an active sales manager",
                        field="approval_code", code="auth")
    blocking = open_deals_of(s, company_id)
    if blocking:
        ids = ", ".join(f"{d.deal_id} ({d.stage})" for d in blocking)
        raise ToolError(f"cannot delete {company.name} ({company_id}): it still has {len(blocking)} open deal(s): "
                        f"{ids}; close them as won or lost first", field="company_id", code="has_open_deals")
    detached = [key for key, c in s.contacts.items() if c.company_id == company_id]
    for key in detached:
        s.contacts.edit(key).company_id = None
    s.companies.delete(company_id)
    return {"company_id": company_id, "name": company.name, "deleted": True, "contacts_detached": detached,
            "closed_deals_kept": [d.deal_id for d in s.deals.values() if d.company_id == company_id]}
