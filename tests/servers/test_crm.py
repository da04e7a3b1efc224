"""CRM domain: tool count, failure rules (state unchanged), lifecycles on the session
clock, relational workflows."""

from __future__ import annotations

from typing import Any

from servers import PAPER_TOOL_COUNTS
from servers.crm import domain
from servers.kit import DomainRuntime
from tests.servers.harness import assert_replays_alike, fails, new_sid, ok, state_of

SEEDS = range(6)


def records(rt: DomainRuntime, sid: str, seed: int, kind: str) -> list[dict[str, Any]]:
    return ok(rt, sid, seed, "crm_list_records", {"kind": kind})


def reps(rt: DomainRuntime, sid: str, seed: int) -> dict[str, list[dict[str, Any]]]:
    rows = ok(rt, sid, seed, "crm_list_sales_reps", {})
    return {"manager": [r for r in rows if r["role"] == "manager"],
            "active": [r for r in rows if r["role"] == "rep" and r["active"]],
            "inactive": [r for r in rows if not r["active"]]}


def lead(rt: DomainRuntime, sid: str, seed: int, status: str, active_owner: bool | None = None) -> dict[str, Any]:
    team = reps(rt, sid, seed)
    active_ids = {r["rep_id"] for r in team["active"]}
    return next(x for x in records(rt, sid, seed, "leads") if x["status"] == status
                and (active_owner is None or (x["owner_rep_id"] in active_ids) == active_owner))


def deal(rt: DomainRuntime, sid: str, seed: int, pred: Any) -> dict[str, Any]:
    return next(d for d in records(rt, sid, seed, "deals") if pred(d))


# ---------------------------------------------------------------- (1) tool count, (2) smoke coverage
def test_exactly_sixteen_user_tools_and_named_discovery(rt: DomainRuntime) -> None:
    assert len(domain.user_tools) == PAPER_TOOL_COUNTS["crm"] == 16
    assert len(rt.table.openai_tools()) == 16
    discovery = [s.name for s in domain.tools.values() if s.kind == "discovery"]
    assert 2 <= len(discovery) <= 4 and all(n.startswith("crm_") for n in discovery)
    assert all(s.consumes or s.produces or s.requires for s in domain.user_tools)
    assert rt.table.sensitive_params("delete_crm_company") == ["approval_code"]
    assert [t.name for t in domain.user_tools if rt.table.sensitive_params(t.name)] == ["delete_crm_company"]


def test_world_archetypes_exist_for_many_seeds() -> None:
    for seed in range(12):
        snap = domain.new_world(seed).snapshot()
        leads, deals, acts = snap["leads"].values(), snap["deals"].values(), snap["activities"].values()
        statuses = [x["status"] for x in leads]
        assert all(statuses.count(st) >= 2 for st in ("new", "contacted", "qualified", "disqualified", "converted"))
        assert any(d["stage"] == "proposal" and d["amount"] is None for d in deals)
        assert {d["stage"] for d in deals} >= {"prospecting", "qualification", "proposal", "negotiation",
                                               "closed_won", "closed_lost"}
        inactive = {r["rep_id"] for r in snap["reps"].values() if not r["active"]}
        assert any(d["owner_rep_id"] in inactive and d["stage"] not in ("closed_won", "closed_lost") for d in deals)
        open_by_company = {d["company_id"] for d in deals if d["stage"] not in ("closed_won", "closed_lost")}
        assert sum(1 for c in snap["companies"] if c not in open_by_company) >= 3
        assert any(a["status"] == "overdue" for a in acts)
        assert any(a["kind"] == "task" and a["status"] == "open" and a["due_date"] == "2026-06-01" for a in acts)
        assert any(a["kind"] == "meeting" and a["status"] == "scheduled" and a["scheduled_at"].startswith("2026-06-01")
                   for a in acts)
        assert len(snap["companies"]) >= 30 and len(snap["contacts"]) >= 80 and len(snap["deals"]) >= 50
        for x in leads:  # converted leads point at real records
            if x["status"] == "converted":
                assert x["converted_contact_id"] in snap["contacts"] and x["converted_deal_id"] in snap["deals"]


# ---------------------------------------------------------------- (3) failure rules leave state alone
def test_unknown_ids_are_named(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    fails(rt, sid, seed, "search_crm_contacts", {"company_id": "CMP-9999"}, "unknown company_id")
    fails(rt, sid, seed, "create_crm_contact", {"first_name": "A", "last_name": "B", "email": "a.b@x.example",
                                                "company_id": "CMP-9999"}, "unknown company_id")
    fails(rt, sid, seed, "update_crm_lead_status", {"lead_id": "LEAD-9999", "status": "contacted"}, "unknown lead_id")
    fails(rt, sid, seed, "update_crm_deal", {"deal_id": "DEAL-9999", "stage": "proposal"}, "unknown deal_id")
    fails(rt, sid, seed, "complete_crm_task", {"activity_id": "ACT-9999"}, "unknown activity_id")
    fails(rt, sid, seed, "log_crm_activity", {"record_id": "XYZ-1", "kind": "note", "subject": "x"},
          "unknown record_id")
    fails(rt, sid, seed, "reassign_crm_owner", {"record_id": "CMP-0001", "new_owner_rep_id": "REP-999"},
          "unknown sales rep", "new_owner_rep_id")
    fails(rt, sid, seed, "list_crm_deals", {"owner_rep_id": "REP-999"}, "unknown sales rep")
    fails(rt, sid, seed, "list_crm_activities", {"record_id": "DEAL-9999"}, "unknown record_id")
    fails(rt, sid, seed, "create_crm_deal", {"company_id": "CMP-0001", "name": "Renewal",
                                             "expected_close_date": "2026-09-01", "contact_id": "CON-9999"},
          "unknown contact_id")


def test_duplicates_are_refused(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    contact = records(rt, sid, seed, "contacts")[0]
    company = records(rt, sid, seed, "companies")[0]
    rep = reps(rt, sid, seed)["active"][0]["rep_id"]
    fails(rt, sid, seed, "create_crm_contact", {"first_name": "Sam", "last_name": "Doe",
                                                "email": contact["email"].upper(), "company_id": company["company_id"]},
          "duplicate email", contact["contact_id"])
    fails(rt, sid, seed, "create_crm_lead", {"first_name": "Sam", "last_name": "Doe", "email": contact["email"],
                                             "company_name": "Zed Co", "source": "website", "owner_rep_id": rep},
          "duplicate email", "log an activity on the contact")
    open_lead = lead(rt, sid, seed, "new")
    fails(rt, sid, seed, "create_crm_lead", {"first_name": "Sam", "last_name": "Doe", "email": open_lead["email"],
                                             "company_name": "Zed Co", "source": "website", "owner_rep_id": rep},
          "duplicate email", open_lead["lead_id"])
    fails(rt, sid, seed, "create_crm_company", {"name": company["name"].lower(), "industry": "software",
                                                "city": "Austin", "owner_rep_id": rep},
          "duplicate company", company["company_id"])


def test_inactive_reps_cannot_take_records(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    team = reps(rt, sid, seed)
    gone = team["inactive"][0]["rep_id"]
    company = records(rt, sid, seed, "companies")[0]
    fails(rt, sid, seed, "create_crm_company", {"name": "Quiet Harbor Tech", "industry": "software",
                                                "city": "Boise", "owner_rep_id": gone}, "inactive", "owner_rep_id")
    fails(rt, sid, seed, "reassign_crm_owner", {"record_id": company["company_id"], "new_owner_rep_id": gone},
          "inactive", "new_owner_rep_id")
    fails(rt, sid, seed, "create_crm_deal", {"company_id": company["company_id"], "name": "X",
                                             "expected_close_date": "2026-09-01", "owner_rep_id": gone}, "inactive")


def test_inactive_owner_blocks_conversion_in_every_seed(rt: DomainRuntime) -> None:
    for seed in SEEDS:
        sid = new_sid()
        gone = reps(rt, sid, seed)["inactive"][0]["rep_id"]
        stale = next(x for x in records(rt, sid, seed, "leads") if x["owner_rep_id"] == gone
                     and x["status"] in ("new", "contacted", "qualified"))
        path = {"new": ["contacted", "qualified"], "contacted": ["qualified"], "qualified": []}[stale["status"]]
        for st in path:
            ok(rt, sid, seed, "update_crm_lead_status", {"lead_id": stale["lead_id"], "status": st})
        fails(rt, sid, seed, "convert_crm_lead", {"lead_id": stale["lead_id"]}, "inactive", "lead_id")
        taker = reps(rt, sid, seed)["active"][0]["rep_id"]
        ok(rt, sid, seed, "reassign_crm_owner", {"record_id": stale["lead_id"], "new_owner_rep_id": taker})
        assert ok(rt, sid, seed, "convert_crm_lead", {"lead_id": stale["lead_id"]})["deal"]["owner_rep_id"] == taker


def test_delete_company_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    manager = reps(rt, sid, seed)["manager"][0]
    busy = ok(rt, sid, seed, "list_crm_companies", {"has_open_deals": True})["companies"][0]
    idle = ok(rt, sid, seed, "list_crm_companies", {"has_open_deals": False})["companies"][0]
    wrong = "000000" if manager["approval_code"] != "000000" else "111111"
    fails(rt, sid, seed, "delete_crm_company", {"company_id": idle["company_id"], "approval_code": wrong},
          "incorrect approval_code")
    fails(rt, sid, seed, "delete_crm_company", {"company_id": busy["company_id"],
                                                "approval_code": manager["approval_code"]},
          "open deal", "company_id")
    fails(rt, sid, seed, "delete_crm_company", {"company_id": "CMP-9999", "approval_code": manager["approval_code"]},
          "unknown company_id")
    # a deal closed as lost frees the company for deletion; its contacts stay, detached
    for d in ok(rt, sid, seed, "list_crm_deals", {"company_id": busy["company_id"], "stage": "open"})["deals"]:
        ok(rt, sid, seed, "update_crm_deal", {"deal_id": d["deal_id"], "stage": "closed_lost",
                                              "lost_reason": "account closed"})
    people = ok(rt, sid, seed, "search_crm_contacts", {"company_id": busy["company_id"], "limit": 100})["contacts"]
    out = ok(rt, sid, seed, "delete_crm_company", {"company_id": busy["company_id"],
                                                   "approval_code": manager["approval_code"]})
    assert sorted(out["contacts_detached"]) == sorted(p["contact_id"] for p in people)
    snap = state_of(rt, sid, seed)
    assert busy["company_id"] not in snap["companies"]
    assert all(snap["contacts"][p["contact_id"]]["company_id"] is None for p in people)
    assert out["closed_deals_kept"] and all(snap["deals"][d]["company_name"] == busy["name"]
                                           for d in out["closed_deals_kept"])


def test_lead_status_workflow_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 4
    new, conv, disq = lead(rt, sid, seed, "new"), lead(rt, sid, seed, "converted"), lead(rt, sid, seed, "disqualified")
    text = fails(rt, sid, seed, "update_crm_lead_status", {"lead_id": new["lead_id"], "status": "qualified"},
                 "illegal lead status change new → qualified", "status")
    assert "contacted, disqualified" in text
    fails(rt, sid, seed, "update_crm_lead_status", {"lead_id": new["lead_id"], "status": "new"}, "already new")
    fails(rt, sid, seed, "update_crm_lead_status", {"lead_id": conv["lead_id"], "status": "contacted"},
          "converted leads cannot change status")
    fails(rt, sid, seed, "update_crm_lead_status", {"lead_id": new["lead_id"], "status": "disqualified"},
          "reason is required", "reason")
    fails(rt, sid, seed, "update_crm_lead_status", {"lead_id": new["lead_id"], "status": "contacted",
                                                    "reason": "called"}, "only applies when disqualifying")
    fails(rt, sid, seed, "update_crm_lead_status", {"lead_id": disq["lead_id"], "status": "qualified"},
          "allowed statuses are: new")
    # conversion rules
    fails(rt, sid, seed, "convert_crm_lead", {"lead_id": disq["lead_id"]}, "cannot convert disqualified lead",
          "reopen")
    fails(rt, sid, seed, "convert_crm_lead", {"lead_id": new["lead_id"]}, "only qualified leads", "is new")
    fails(rt, sid, seed, "convert_crm_lead", {"lead_id": conv["lead_id"]}, "already converted")
    qual = lead(rt, sid, seed, "qualified", active_owner=True)
    fails(rt, sid, seed, "convert_crm_lead", {"lead_id": qual["lead_id"], "expected_close_date": "2026-05-01"},
          "in the past", "expected_close_date")
    fails(rt, sid, seed, "convert_crm_lead", {"lead_id": qual["lead_id"], "company_id": "CMP-9999"},
          "unknown company_id")
    # reopening a disqualified lead walks it back into the funnel
    ok(rt, sid, seed, "update_crm_lead_status", {"lead_id": disq["lead_id"], "status": "new"})
    row = ok(rt, sid, seed, "list_crm_leads", {"query": disq["email"]})["leads"][0]
    assert row["status"] == "new" and row["disqualify_reason"] is None and row["allowed_next_statuses"] == [
        "contacted", "disqualified"]


def test_deal_stage_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 5
    won = deal(rt, sid, seed, lambda d: d["stage"] == "closed_won")
    lost = deal(rt, sid, seed, lambda d: d["stage"] == "closed_lost")
    early = deal(rt, sid, seed, lambda d: d["stage"] == "prospecting")
    bare = deal(rt, sid, seed, lambda d: d["stage"] == "proposal" and d["amount"] is None)
    fails(rt, sid, seed, "update_crm_deal", {"deal_id": won["deal_id"], "stage": "negotiation"},
          "closed deals are final", "deal_id")
    fails(rt, sid, seed, "update_crm_deal", {"deal_id": lost["deal_id"], "amount": 5000}, "closed deals are final")
    fails(rt, sid, seed, "update_crm_deal", {"deal_id": early["deal_id"], "stage": "closed_won", "amount": 900},
          "can be won only from proposal or negotiation", "stage")
    fails(rt, sid, seed, "update_crm_deal", {"deal_id": bare["deal_id"], "stage": "closed_won"},
          "has no amount", "amount")
    fails(rt, sid, seed, "update_crm_deal", {"deal_id": bare["deal_id"], "stage": "closed_lost"},
          "lost_reason is required")
    fails(rt, sid, seed, "update_crm_deal", {"deal_id": bare["deal_id"], "stage": "negotiation",
                                             "lost_reason": "price"}, "only applies when moving the deal to closed_lost")
    fails(rt, sid, seed, "update_crm_deal", {"deal_id": bare["deal_id"], "stage": "proposal"}, "already in proposal")
    fails(rt, sid, seed, "update_crm_deal", {"deal_id": bare["deal_id"]}, "nothing to change")
    fails(rt, sid, seed, "update_crm_deal", {"deal_id": bare["deal_id"], "expected_close_date": "2026-05-31"},
          "in the past", "expected_close_date")
    stranger = next(c for c in records(rt, sid, seed, "contacts") if c["company_id"] != bare["company_id"])
    fails(rt, sid, seed, "update_crm_deal", {"deal_id": bare["deal_id"], "contact_id": stranger["contact_id"]},
          "does not work at", "contact_id")
    # the same deal wins once it has an amount; then it is final
    out = ok(rt, sid, seed, "update_crm_deal", {"deal_id": bare["deal_id"], "stage": "closed_won", "amount": 21000})
    assert out["stage"] == "closed_won" and out["probability_percent"] == 100 and out["closed_at"]
    assert [h["stage"] for h in out["stage_history"]][-2:] == ["proposal", "closed_won"]
    fails(rt, sid, seed, "update_crm_deal", {"deal_id": bare["deal_id"], "stage": "proposal"}, "closed deals are final")


def test_create_deal_and_contact_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    companies = records(rt, sid, seed, "companies")
    a = companies[0]
    stranger = next(c for c in records(rt, sid, seed, "contacts") if c["company_id"] not in (None, a["company_id"]))
    fails(rt, sid, seed, "create_crm_deal", {"company_id": a["company_id"], "name": "Renewal",
                                             "expected_close_date": "2026-05-20"}, "in the past", "expected_close_date")
    fails(rt, sid, seed, "create_crm_deal", {"company_id": a["company_id"], "name": "Renewal",
                                             "expected_close_date": "2026-02-30"}, "invalid expected_close_date")
    fails(rt, sid, seed, "create_crm_deal", {"company_id": a["company_id"], "name": "Renewal",
                                             "expected_close_date": "2026-09-01", "contact_id": stranger["contact_id"]},
          "works at", "contact_id")
    fails(rt, sid, seed, "create_crm_contact", {"first_name": "Lone", "last_name": "Wolf",
                                                "email": "lone.wolf@free.example"}, "owner_rep_id is required")
    fails(rt, sid, seed, "create_crm_contact", {"first_name": "  ", "last_name": "Wolf",
                                                "email": "lone.wolf@free.example", "company_id": a["company_id"]},
          "first_name must not be blank")


def test_activity_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    d = deal(rt, sid, seed, lambda x: x["stage"] == "negotiation")
    conv = lead(rt, sid, seed, "converted")
    base = {"record_id": d["deal_id"], "subject": "Follow up"}
    fails(rt, sid, seed, "log_crm_activity", {**base, "kind": "task", "due_date": "2026-05-31"},
          "task due date 2026-05-31 is in the past", "due_date")
    fails(rt, sid, seed, "log_crm_activity", {**base, "kind": "task"}, "a task needs a due_date")
    fails(rt, sid, seed, "log_crm_activity", {**base, "kind": "call", "due_date": "2026-06-09"},
          "due_date only applies to tasks")
    fails(rt, sid, seed, "log_crm_activity", {**base, "kind": "meeting"}, "a meeting needs a scheduled_at")
    fails(rt, sid, seed, "log_crm_activity", {**base, "kind": "meeting", "scheduled_at": "2026-06-01T08:00"},
          "in the past", "scheduled_at")
    fails(rt, sid, seed, "log_crm_activity", {**base, "kind": "note", "scheduled_at": "2026-06-03T08:00"},
          "scheduled_at only applies to meetings")
    fails(rt, sid, seed, "log_crm_activity", {"record_id": conv["lead_id"], "kind": "call", "subject": "Hi"},
          "was converted", conv["converted_contact_id"])
    call = ok(rt, sid, seed, "log_crm_activity", {**base, "kind": "call", "notes": "Talked pricing.\nSent deck."})
    fails(rt, sid, seed, "complete_crm_task", {"activity_id": call["activity_id"]}, "not a task")
    task = ok(rt, sid, seed, "log_crm_activity", {**base, "kind": "task", "due_date": "2026-06-01"})
    ok(rt, sid, seed, "complete_crm_task", {"activity_id": task["activity_id"]})
    fails(rt, sid, seed, "complete_crm_task", {"activity_id": task["activity_id"]}, "already completed")


def test_reassignment_rules_and_cascade(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    team = reps(rt, sid, seed)
    won = deal(rt, sid, seed, lambda d: d["stage"] == "closed_won")
    conv = lead(rt, sid, seed, "converted")
    other = next(r["rep_id"] for r in team["active"] if r["rep_id"] != won["owner_rep_id"])
    fails(rt, sid, seed, "reassign_crm_owner", {"record_id": won["deal_id"], "new_owner_rep_id": other},
          "closed deals keep their owner")
    fails(rt, sid, seed, "reassign_crm_owner", {"record_id": conv["lead_id"], "new_owner_rep_id": other},
          "is converted", conv["converted_contact_id"])
    company = ok(rt, sid, seed, "list_crm_companies", {"has_open_deals": True, "sort_by": "open_pipeline_value"}
                 )["companies"][0]
    fails(rt, sid, seed, "reassign_crm_owner", {"record_id": company["company_id"],
                                                "new_owner_rep_id": company["owner_rep_id"]}, "already owned")
    taker = next(r["rep_id"] for r in team["active"] if r["rep_id"] != company["owner_rep_id"])
    out = ok(rt, sid, seed, "reassign_crm_owner", {"record_id": company["company_id"], "new_owner_rep_id": taker,
                                                   "include_related": True})
    assert out["previous_owner_rep_id"] == company["owner_rep_id"]
    people = ok(rt, sid, seed, "search_crm_contacts", {"company_id": company["company_id"], "limit": 100})["contacts"]
    assert all(p["owner_rep_id"] == taker for p in people)
    deals = ok(rt, sid, seed, "list_crm_deals", {"company_id": company["company_id"], "stage": "open"})["deals"]
    assert deals and all(d["owner_rep_id"] == taker for d in deals)
    closed = ok(rt, sid, seed, "list_crm_deals", {"company_id": company["company_id"], "stage": "closed"})["deals"]
    assert all(d["owner_rep_id"] != taker or d["owner_rep_id"] == company["owner_rep_id"] for d in closed)


# ---------------------------------------------------------------- (4) workflows and the clock
def test_conversion_reuses_known_company_and_contacting_a_lead(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    team = reps(rt, sid, seed)
    rep = team["active"][0]["rep_id"]
    company = records(rt, sid, seed, "companies")[5]
    new = ok(rt, sid, seed, "create_crm_lead", {"first_name": "Ines", "last_name": "Moreau",
                                                "email": "ines.moreau@newco.example",
                                                "company_name": company["name"].upper(), "source": "webinar",
                                                "owner_rep_id": rep, "estimated_value": 15250.5})
    assert new["status"] == "new" and new["company_name"] == company["name"] and new["industry"] == company["industry"]
    call = ok(rt, sid, seed, "log_crm_activity", {"record_id": new["lead_id"], "kind": "call", "subject": "Intro"})
    assert call["lead_status"] == "contacted"
    ok(rt, sid, seed, "update_crm_lead_status", {"lead_id": new["lead_id"], "status": "qualified"})
    out = ok(rt, sid, seed, "convert_crm_lead", {"lead_id": new["lead_id"], "deal_name": "Pilot"})
    assert out["company_id"] == company["company_id"] and not out["company_created"] and out["contact_created"]
    d = out["deal"]
    assert d["stage"] == "prospecting" and d["amount"] == 15250.5 and d["expected_close_date"] == "2026-07-01"
    assert d["contact_id"] == out["contact_id"] and d["owner_rep_id"] == rep
    contact = ok(rt, sid, seed, "search_crm_contacts", {"query": "ines.moreau"})["contacts"][0]
    assert contact["company_id"] == company["company_id"] and contact["open_deals"] == 1
    fails(rt, sid, seed, "log_crm_activity", {"record_id": new["lead_id"], "kind": "note", "subject": "x"},
          "was converted")
    # a brand-new company is created from the lead's company name
    qual = lead(rt, sid, seed, "qualified", active_owner=True)
    known = {c["name"].lower() for c in records(rt, sid, seed, "companies")}
    out = ok(rt, sid, seed, "convert_crm_lead", {"lead_id": qual["lead_id"]})
    assert out["company_created"] == (qual["company_name"].lower() not in known)


def test_clock_makes_tasks_overdue_meetings_held_and_deals_past_due(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 4
    acts = records(rt, sid, seed, "activities")
    due_today = next(a for a in acts if a["kind"] == "task" and a["status"] == "open" and a["due_date"] == "2026-06-01")
    meeting = next(a for a in acts if a["kind"] == "meeting" and a["status"] == "scheduled"
                   and a["scheduled_at"].startswith("2026-06-01"))
    d = deal(rt, sid, seed, lambda x: x["stage"] == "negotiation" and not x["past_due"])
    ok(rt, sid, seed, "update_crm_deal", {"deal_id": d["deal_id"], "expected_close_date": "2026-06-02"})
    pending = ok(rt, sid, seed, "list_crm_activities", {"owner_rep_id": due_today["owner_rep_id"],
                                                        "status": "open", "limit": 100})["activities"]
    assert due_today["activity_id"] in {a["activity_id"] for a in pending}
    ok(rt, sid, seed, "crm_session_advance_clock", {"minutes": 3 * 60})
    held = ok(rt, sid, seed, "list_crm_activities", {"record_id": meeting["record_id"], "kind": "meeting"})
    assert next(a for a in held["activities"] if a["activity_id"] == meeting["activity_id"])["status"] == "held"
    assert ok(rt, sid, seed, "list_crm_activities", {"status": "open", "limit": 100,
                                                     "owner_rep_id": due_today["owner_rep_id"]})["total"] >= 1
    ok(rt, sid, seed, "crm_session_advance_clock", {"minutes": 2 * 24 * 60})
    overdue = ok(rt, sid, seed, "list_crm_activities", {"status": "overdue", "limit": 100})["activities"]
    assert due_today["activity_id"] in {a["activity_id"] for a in overdue}
    late = ok(rt, sid, seed, "list_crm_deals", {"past_due_only": True, "limit": 100})["deals"]
    assert d["deal_id"] in {x["deal_id"] for x in late}
    done = ok(rt, sid, seed, "complete_crm_task", {"activity_id": due_today["activity_id"]})
    assert done["completed_late"] is True and done["completed_at"].startswith("2026-06-03")
    # a new due date today or later is still accepted; yesterday's is not
    fails(rt, sid, seed, "log_crm_activity", {"record_id": d["deal_id"], "kind": "task", "subject": "x",
                                              "due_date": "2026-06-02"}, "in the past")
    ok(rt, sid, seed, "update_crm_deal", {"deal_id": d["deal_id"], "expected_close_date": "2026-06-20"})
    assert d["deal_id"] not in {x["deal_id"] for x in ok(rt, sid, seed, "list_crm_deals",
                                                         {"past_due_only": True, "limit": 100})["deals"]}


def test_replaying_the_same_calls_gives_the_same_state(rt: DomainRuntime) -> None:
    assert_replays_alike(rt, 2, [("crm_session_advance_clock", {"minutes": 5 * 24 * 60}),
                                        ("list_crm_activities", {"status": "overdue"})])


def test_listing_filters_sort_and_paginate(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    first = ok(rt, sid, seed, "list_crm_deals", {"stage": "open", "sort_by": "amount", "limit": 5})
    second = ok(rt, sid, seed, "list_crm_deals", {"stage": "open", "sort_by": "amount", "limit": 5, "offset": 5})
    amounts = [d["amount"] or 0 for d in first["deals"] + second["deals"]]
    assert amounts == sorted(amounts, reverse=True) and first["total"] == second["total"] > 10
    assert first["pipeline"]["amount"] >= sum(amounts)
    assert all(d["stage"] not in ("closed_won", "closed_lost") for d in first["deals"])
    cutoff = ok(rt, sid, seed, "list_crm_deals", {"closing_before": "2026-06-30", "stage": "open", "limit": 100})
    assert all(d["expected_close_date"] <= "2026-06-30" for d in cutoff["deals"])
    big = ok(rt, sid, seed, "list_crm_leads", {"min_estimated_value": 50000, "limit": 100})["leads"]
    assert all(x["estimated_value"] >= 50000 for x in big)
    software = ok(rt, sid, seed, "list_crm_companies", {"industry": "software", "limit": 100})["companies"]
    assert all(c["industry"] == "software" for c in software)


# ---------------------------------------------------------------- (5) determinism
def test_unique_values(rt: DomainRuntime) -> None:
    stages = {r["value"] for r in ok(rt, new_sid(), 0, "crm_get_unique_values", {"field": "deal_stage"})}
    assert stages == {"prospecting", "qualification", "proposal", "negotiation", "closed_won", "closed_lost"}
    statuses = ok(rt, new_sid(), 0, "crm_get_unique_values", {"field": "lead_status"})
    assert sum(r["count"] for r in statuses) == len(domain.new_world(0).snapshot()["leads"])
