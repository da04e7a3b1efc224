"""CRM: a B2B sales team's customer relationship manager — sales reps, companies (accounts), the
contacts who work there, an inbox of leads, a pipeline of deals and the calls, meetings, emails, notes
and follow-up tasks around them. Records are relational: contacts belong to companies, deals to a
company and a contact, everything to an owning sales rep, and converting a lead creates (or reuses)
a contact, a company and a deal.

Lifecycles. Leads: new → contacted → qualified → converted, any open lead → disqualified, qualified →
contacted, disqualified → new (reopen). Deals: prospecting → qualification → proposal → negotiation
(open stages move freely) → closed_won / closed_lost (final). Time (the session clock): open tasks
past their due date become overdue, scheduled meetings whose start time has come are held, open deals
past their expected close date are flagged past_due.

Failure rules (each names the argument at fault and leaves the state unchanged):

* unknown company_id / contact_id / lead_id / deal_id / activity_id / rep id / record_id;
* duplicate contact email (create_crm_contact); a new lead whose email is already a contact or an open
  lead (create_crm_lead); duplicate company name (create_crm_company);
* an inactive sales rep cannot own new records or take over records (owner_rep_id, new_owner_rep_id);
  converting a lead still owned by an inactive rep is refused until it is reassigned;
* deleting a company needs an active sales manager's approval code (approval_code, sensitive) and is
  refused while the company still has open deals;
* lead status: converted leads are final; only the listed transitions are allowed (the message lists
  the allowed ones); disqualifying needs a reason; a reason is refused for other statuses;
* converting: a disqualified lead (reopen and qualify first), a new or contacted lead (qualify first)
  or an already converted lead is refused;
* deals: closed (won/lost) deals cannot move back to an open stage or be edited; a deal can be won
  only from proposal or negotiation; closing won without an amount is refused; closing lost needs a
  lost_reason (and lost_reason is refused otherwise); moving to the stage it is in; nothing to change;
  a contact who does not work at the deal's company;
* dates: an expected close date or a task due date in the past; a meeting start time in the past;
  a task without due_date, a meeting without scheduled_at, due_date/scheduled_at on other kinds;
* activities cannot be logged on a converted lead (use its contact);
* complete_crm_task: only tasks, and only once;
* reassign_crm_owner: already owned by that rep; won/lost deals and converted leads keep their owner.
"""

from servers.crm import discovery, tools_accounts, tools_activities, tools_pipeline
from servers.crm.state import CrmState, on_time
from servers.crm.world import generate
from servers.kit import Domain

domain = Domain(
    "crm", CrmState, generate,
    description=(
        "CRM for a B2B sales team: companies and their contacts, a lead inbox (qualify, disqualify, convert "
        "into contact + company + deal), a deal pipeline from prospecting to won or lost with amounts and "
        "close dates, activities (calls, meetings, emails, notes, follow-up tasks that become overdue) and "
        "ownership by sales reps, with reassignment."
    ),
    modules=(tools_accounts, tools_pipeline, tools_activities, discovery),
    on_time=on_time,
)

__all__ = ["CrmState", "domain", "generate"]
