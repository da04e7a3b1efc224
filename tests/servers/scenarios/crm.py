"""CRM smoke scenario: a sales manager onboards a new account and opens and wins a deal with it,
works the lead inbox (hand over, convert, add and contact a new lead), schedules and completes a
follow-up, and clears out an account without open business — succeeding once with every user tool.

``call(name, args)`` performs a tool call on one session and returns the decoded JSON result.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


async def smoke(call: Call) -> None:
    reps = await call("crm_list_sales_reps", {})
    manager = next(r for r in reps if r["role"] == "manager" and r["active"])
    sellers = [r for r in reps if r["role"] == "rep" and r["active"]]
    rep = sellers[0]

    # A new account: company, its first contact, a deal that goes to proposal and is won.
    company = await call("create_crm_company", {"name": "Brightwater Robotics", "industry": "manufacturing",
                                                "city": "Denver", "owner_rep_id": rep["rep_id"],
                                                "employees": 230})
    person = await call("create_crm_contact", {"first_name": "Nadia", "last_name": "Okafor",
                                               "email": "nadia.okafor@brightwater-robotics.example",
                                               "company_id": company["company_id"], "job_title": "COO",
                                               "phone": "+1 303 555 0188"})
    found = await call("search_crm_contacts", {"query": "okafor"})
    assert person["contact_id"] in {c["contact_id"] for c in found["contacts"]}
    deal = await call("create_crm_deal", {"company_id": company["company_id"], "name": "Assembly line analytics",
                                          "expected_close_date": "2026-07-15", "contact_id": person["contact_id"]})
    await call("update_crm_deal", {"deal_id": deal["deal_id"], "stage": "proposal", "amount": 48500})
    won = await call("update_crm_deal", {"deal_id": deal["deal_id"], "stage": "closed_won"})
    assert won["stage"] == "closed_won" and won["amount"] == 48500

    # The lead inbox: hand a qualified lead to another rep and convert it; add and contact a new lead.
    qualified = (await call("list_crm_leads", {"status": "qualified", "sort_by": "estimated_value"}))["leads"][0]
    taker = next(r for r in sellers if r["rep_id"] != qualified["owner_rep_id"])
    await call("reassign_crm_owner", {"record_id": qualified["lead_id"], "new_owner_rep_id": taker["rep_id"]})
    converted = await call("convert_crm_lead", {"lead_id": qualified["lead_id"], "deal_amount": 12000,
                                                "expected_close_date": "2026-08-31"})
    new_deal = converted["deal"]
    lead = await call("create_crm_lead", {"first_name": "Tomas", "last_name": "Rivera",
                                          "email": "tomas.rivera@harborlight.example",
                                          "company_name": "Harborlight Foods", "source": "trade_show",
                                          "owner_rep_id": rep["rep_id"], "estimated_value": 7500})
    await call("update_crm_lead_status", {"lead_id": lead["lead_id"], "status": "contacted"})

    # A follow-up task on the converted deal, found in the rep's to-do list and completed.
    task = await call("log_crm_activity", {"record_id": new_deal["deal_id"], "kind": "task",
                                           "subject": "Send onboarding pack", "due_date": "2026-06-05"})
    todo = await call("list_crm_activities", {"owner_rep_id": taker["rep_id"], "status": "pending", "limit": 100})
    assert task["activity_id"] in {a["activity_id"] for a in todo["activities"]}
    await call("complete_crm_task", {"activity_id": task["activity_id"], "outcome": "Pack sent by email"})

    # Clear out an account that has no open business left.
    idle = (await call("list_crm_companies", {"has_open_deals": False, "sort_by": "name"}))["companies"]
    target = next(c for c in idle if c["company_id"] != company["company_id"])
    deals = await call("list_crm_deals", {"company_id": target["company_id"], "stage": "open"})
    assert deals["total"] == 0
    await call("delete_crm_company", {"company_id": target["company_id"], "approval_code": manager["approval_code"]})
