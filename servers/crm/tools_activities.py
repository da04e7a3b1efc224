"""CRM tools for the work around records: calls, meetings, emails, notes and follow-up tasks, and who
owns what."""

from __future__ import annotations

from datetime import UTC
from typing import Annotated, Literal

from pydantic import Field

from servers.crm.state import (
    CONTACT_KINDS,
    OPEN_STAGES,
    RECORD_TYPE,
    Activity,
    ActivityKind,
    CrmState,
    activity_view,
    clean_name,
    future_date,
    get_activity,
    get_rep,
    page,
    record_kind,
)
from servers.kit import (
    IsoDate,
    IsoDateTime,
    Name,
    Text,
    ToolError,
    iso,
    new_id,
    now,
    parse_date,
    parse_datetime,
    tool,
)

Limit = Annotated[int, Field(ge=1, le=100)]
Offset = Annotated[int, Field(ge=0, le=10_000)]
PENDING = ("open", "overdue", "scheduled")


@tool(produces=("activity_id",), consumes=("contact_id", "company_id", "lead_id", "deal_id", "rep_id"))
def log_crm_activity(s: CrmState, record_id: str, kind: ActivityKind, subject: Name, notes: Text | None = None,
                     due_date: IsoDate | None = None, scheduled_at: IsoDateTime | None = None,
                     owner_rep_id: str | None = None) -> dict:
    """Record a call, email or note on a contact, company, lead or deal, schedule a meeting, or create a
    follow-up task. Tasks need a due date (today or later) and meetings a future start time. A call,
    meeting or email with a new lead marks it contacted. Converted leads take activities on their contact
    instead.

    Args:
        record_id: The contact (CON-…), company (CMP-…), lead (LEAD-…) or deal (DEAL-…) it is about.
        kind: What kind of activity it is.
        subject: A short subject line.
        notes: Free-text notes or the call summary.
        due_date: When the task is due (YYYY-MM-DD); tasks only.
        scheduled_at: When the meeting starts (YYYY-MM-DDTHH:MM, UTC unless an offset is given); meetings only.
        owner_rep_id: The sales rep doing it (REP-…); defaults to the record's owner.
    """
    table, rec = record_kind(s, record_id)
    if table == "leads" and rec.status == "converted":
        raise ToolError(f"lead {record_id} was converted into contact {rec.converted_contact_id}; log the activity "
                        "on that contact (or its deal) instead", field="record_id", code="lead_converted")
    if kind == "task" and due_date is None:
        raise ToolError("a task needs a due_date", field="due_date")
    if kind != "task" and due_date is not None:
        raise ToolError("due_date only applies to tasks (use scheduled_at for meetings)", field="due_date")
    if kind == "meeting" and scheduled_at is None:
        raise ToolError("a meeting needs a scheduled_at start time", field="scheduled_at")
    if kind != "meeting" and scheduled_at is not None:
        raise ToolError("scheduled_at only applies to meetings", field="scheduled_at")
    due = future_date(s, due_date, "due_date", "task due date") if due_date is not None else None
    start = None
    if scheduled_at is not None:
        start = parse_datetime(scheduled_at, "scheduled_at").astimezone(UTC)
        if start <= now(s):
            raise ToolError(f"meeting time {scheduled_at} is in the past (now is {iso(now(s))}); log a past meeting "
                            "as a note or pick a future time", field="scheduled_at", code="date_in_past")
    owner = owner_rep_id or rec.owner_rep_id
    get_rep(s, owner, "owner_rep_id")
    status = {"task": "open", "meeting": "scheduled"}.get(kind, "logged")
    aid = new_id(s.counters, "ACT")
    act = s.activities.put(aid, Activity(aid, kind, clean_name(subject, "subject"), notes, record_id, owner,
                                         iso(now(s)), status, due_date=iso(due) if due else None,
                                         scheduled_at=iso(start) if start else None))
    out = activity_view(s, act)
    if table == "leads" and kind in CONTACT_KINDS and rec.status == "new":
        lead = s.leads.edit(record_id)
        lead.status, lead.last_contacted_at = "contacted", iso(now(s))
        out["lead_status"] = "contacted"
    return out


@tool(produces=("activity_id",), consumes=("rep_id", "contact_id", "company_id", "lead_id", "deal_id"),
      read_only=True)
def list_crm_activities(s: CrmState, owner_rep_id: str | None = None, kind: ActivityKind | None = None,
                        status: Literal["pending", "open", "overdue", "completed", "scheduled", "held",
                                        "logged"] | None = None,
                        record_id: str | None = None, due_before: IsoDate | None = None,
                        limit: Limit = 20, offset: Offset = 0) -> dict:
    """List activities: a rep's to-do list (open and overdue tasks, upcoming meetings) or the history of
    one contact, company, lead or deal. Pending work comes soonest first; history newest first.

    Args:
        owner_rep_id: Only activities of this sales rep (REP-…).
        kind: Only this kind of activity.
        status: Only this status; "pending" means open or overdue tasks and scheduled meetings.
        record_id: Only activities about this contact, company, lead or deal.
        due_before: Only tasks due on or before this date (YYYY-MM-DD).
        limit: How many activities to return.
        offset: How many matching activities to skip (for the next page).
    """
    if owner_rep_id is not None:
        get_rep(s, owner_rep_id, need_active=False)
    if record_id is not None:
        record_kind(s, record_id)
    cutoff = iso(parse_date(due_before, "due_before")) if due_before is not None else None
    rows: list[Activity] = []
    for a in s.activities.values():
        if owner_rep_id is not None and a.owner_rep_id != owner_rep_id:
            continue
        if kind is not None and a.kind != kind:
            continue
        if (status == "pending" and a.status not in PENDING) or (status not in (None, "pending") and a.status != status):
            continue
        if record_id is not None and a.record_id != record_id:
            continue
        if cutoff is not None and (a.due_date is None or a.due_date > cutoff):
            continue
        rows.append(a)

    def when(a: Activity) -> str:
        return a.due_date or a.scheduled_at or a.created_at

    if status in PENDING or status == "pending":
        rows.sort(key=lambda a: (when(a), a.activity_id))
    else:
        rows.sort(key=lambda a: (when(a), a.activity_id), reverse=True)
    return page([activity_view(s, a) for a in rows], limit, offset, "activities")


@tool(consumes=("activity_id",))
def complete_crm_task(s: CrmState, activity_id: str, outcome: Text | None = None) -> dict:
    """Mark a follow-up task done (also when it is overdue), optionally with what came of it. Only tasks
    can be completed, and only once.

    Args:
        activity_id: The task (ACT-…).
        outcome: What came of it.
    """
    a = get_activity(s, activity_id)
    if a.kind != "task":
        raise ToolError(f"{activity_id} is a {a.kind}, not a task; only tasks can be completed", field="activity_id",
                        code="not_a_task")
    if a.status == "completed":
        raise ToolError(f"task {activity_id} was already completed at {a.completed_at}", field="activity_id",
                        code="illegal_transition")
    was_overdue = a.status == "overdue"
    rec = s.activities.edit(activity_id)
    rec.status, rec.completed_at, rec.outcome = "completed", iso(now(s)), outcome
    return {**activity_view(s, rec), "completed_late": was_overdue}


@tool(consumes=("company_id", "contact_id", "lead_id", "deal_id", "rep_id"), establishes=("owner_active",))
def reassign_crm_owner(s: CrmState, record_id: str, new_owner_rep_id: str, include_related: bool = False) -> dict:
    """Hand a company, contact, lead or deal over to another (active) sales rep. With include_related, a
    company's contacts and open deals, or a deal's pending tasks and meetings, move too. Won or lost
    deals and converted leads keep their owner.

    Args:
        record_id: The company (CMP-…), contact (CON-…), lead (LEAD-…) or deal (DEAL-…).
        new_owner_rep_id: The sales rep taking over (REP-…).
        include_related: Also move the company's contacts and open deals, or the deal's pending activities.
    """
    table, rec = record_kind(s, record_id)
    new = get_rep(s, new_owner_rep_id, "new_owner_rep_id")
    if rec.owner_rep_id == new_owner_rep_id:
        raise ToolError(f"{record_id} is already owned by {new.name} ({new_owner_rep_id})", field="new_owner_rep_id",
                        code="no_change")
    if table == "deals" and rec.stage not in OPEN_STAGES:
        raise ToolError(f"deal {record_id} is {rec.stage}; closed deals keep their owner for commission reporting",
                        field="record_id", code="deal_closed")
    if table == "leads" and rec.status == "converted":
        raise ToolError(f"lead {record_id} is converted; reassign contact {rec.converted_contact_id} instead",
                        field="record_id", code="lead_converted")
    previous = rec.owner_rep_id
    getattr(s, table).edit(record_id).owner_rep_id = new_owner_rep_id
    moved: list[str] = []
    if include_related and table == "companies":
        moved += [k for k, c in s.contacts.items() if c.company_id == record_id and c.owner_rep_id != new_owner_rep_id]
        moved += [k for k, d in s.deals.items() if d.company_id == record_id and d.stage in OPEN_STAGES
                  and d.owner_rep_id != new_owner_rep_id]
    elif include_related and table == "deals":
        moved += [k for k, a in s.activities.items() if a.record_id == record_id and a.status in PENDING
                  and a.owner_rep_id != new_owner_rep_id]
    for key in moved:
        store = s.contacts if key.startswith("CON-") else s.deals if key.startswith("DEAL-") else s.activities
        store.edit(key).owner_rep_id = new_owner_rep_id
    return {"record_id": record_id, "record_type": RECORD_TYPE[table],
            "previous_owner_rep_id": previous, "new_owner_rep_id": new_owner_rep_id, "new_owner_name": new.name,
            "also_reassigned": moved}
