"""CRM: how sales people ask (format: data/intents/__init__.py)."""

from __future__ import annotations

SELF: tuple[str, ...] = ("owner_rep_id",)
SPOKEN: tuple[str, ...] = ()

BANK: dict[str, dict[str, list[str]]] = {
    "search_crm_contacts": {
        "ask": [
            "who do we know called {query}?",
            "look up {query} in our address book",
            "pull up everyone we have at {company_id}",
            "which people does {owner_rep_id} look after?",
        ],
        "vague": [
            "I need somebody's details from the CRM",
            "find me a person we've talked to before",
        ],
    },
    "create_crm_contact": {
        "ask": [
            "add {first_name} {last_name} ({email}) as a new person at {company_id}",
            "save {first_name} {last_name}, {job_title} at {company_id}, email {email}",
            "put {first_name} {last_name} in the CRM, reachable at {email} or {phone}",
        ],
        "vague": [
            "I met someone new and want to save their details",
            "can you add a person to our records?",
        ],
    },
    "list_crm_companies": {
        "ask": [
            "which {industry} accounts do we have?",
            "show me the accounts {owner_rep_id} owns",
            "rank our customers by how much open business they have",
            "which accounts have nothing in the pipeline right now?",
        ],
        "vague": [
            "give me an overview of our accounts",
            "what companies are we working with?",
        ],
    },
    "create_crm_company": {
        "ask": [
            "set up {name} as a new {industry} account in {city}, owned by {owner_rep_id}",
            "we just started talking to {name} out of {city}; add them and give them to {owner_rep_id}",
            "open an account for {name} ({website}), about {employees} people",
        ],
        "vague": [
            "I need a new account created",
            "add a company for me",
        ],
    },
    "delete_crm_company": {
        "ask": [
            "remove {company_id} from the CRM, my manager's code is {approval_code}",
            "get rid of the {company_id} account for good; approval {approval_code}",
            "wipe {company_id}, it was a test record - code {approval_code}",
        ],
        "vague": [
            "I want to delete an account",
            "clean out a company we no longer need",
        ],
    },
    "list_crm_leads": {
        "ask": [
            "which leads are still {status}?",
            "show me the prospects that came in from {source}",
            "what leads is {owner_rep_id} sitting on?",
            "list prospects worth at least {min_estimated_value}",
        ],
        "vague": [
            "what's in the lead inbox?",
            "any new prospects lately?",
        ],
    },
    "create_crm_lead": {
        "ask": [
            "log {first_name} {last_name} from {company_name} ({email}) as a {source} prospect for {owner_rep_id}",
            "I got a card from {first_name} {last_name} at {company_name}, {email}; route it to {owner_rep_id}",
            "new prospect: {first_name} {last_name}, {job_title} at {company_name}, could be worth {estimated_value}",
        ],
        "vague": [
            "I have a new prospect to enter",
            "somebody reached out and I want to track them",
        ],
    },
    "update_crm_lead_status": {
        "ask": [
            "mark {lead_id} as {status}",
            "I spoke with {lead_id} today, set them to contacted",
            "drop {lead_id}, {reason}",
            "bring {lead_id} back to new, they're interested again",
        ],
        "vague": [
            "update where a prospect stands",
            "one of my leads changed, record it",
        ],
    },
    "convert_crm_lead": {
        "ask": [
            "turn {lead_id} into a customer and open a deal for {deal_amount}",
            "{lead_id} is ready - make them a contact with a deal closing {expected_close_date}",
            "convert {lead_id} under the existing account {company_id}",
        ],
        "vague": [
            "one of my prospects is ready to buy",
            "promote a lead to a real opportunity",
        ],
    },
    "list_crm_deals": {
        "ask": [
            "what's in {stage} right now?",
            "show me {owner_rep_id}'s pipeline sorted by size",
            "which deals should close before {closing_before}?",
            "which opportunities are past their close date?",
            "list everything we have going with {company_id}",
        ],
        "vague": [
            "how does the pipeline look?",
            "give me a pipeline review",
        ],
    },
    "create_crm_deal": {
        "ask": [
            "open a {amount} opportunity called {name} with {company_id}, closing {expected_close_date}",
            "{company_id} wants to expand - track it as {name}, target date {expected_close_date}",
            "start a new deal {name} at {company_id} with {contact_id} as our main person",
        ],
        "vague": [
            "I've got a new opportunity to track",
            "set up a deal for an existing customer",
        ],
    },
    "update_crm_deal": {
        "ask": [
            "move {deal_id} to {stage}",
            "we won {deal_id} at {amount}!",
            "we lost {deal_id}: {lost_reason}",
            "push the close date on {deal_id} to {expected_close_date}",
            "the value of {deal_id} is now {amount}",
        ],
        "vague": [
            "a deal moved forward, update it",
            "I need to change one of my opportunities",
        ],
    },
    "log_crm_activity": {
        "ask": [
            "note that I called {record_id} about {subject}",
            "remind me to {subject} for {record_id} by {due_date}",
            "book a {subject} with {record_id} at {scheduled_at}",
            "jot down on {record_id}: {notes}",
        ],
        "vague": [
            "I want to record a conversation",
            "set a follow-up for me",
        ],
    },
    "list_crm_activities": {
        "ask": [
            "what's on {owner_rep_id}'s to-do list?",
            "show me every {kind} we've had with {record_id}",
            "which follow-ups are {status}?",
            "what tasks are due by {due_before}?",
        ],
        "vague": [
            "what do I have coming up?",
            "show the history on an account",
        ],
    },
    "complete_crm_task": {
        "ask": [
            "tick off {activity_id}",
            "{activity_id} is done - {outcome}",
            "close out the follow-up {activity_id}",
        ],
        "vague": [
            "I finished one of my to-dos",
            "mark a follow-up as done",
        ],
    },
    "reassign_crm_owner": {
        "ask": [
            "hand {record_id} over to {new_owner_rep_id}",
            "{new_owner_rep_id} takes over {record_id}, along with everything under it",
            "move {record_id} off the old rep's plate onto {new_owner_rep_id}",
        ],
        "vague": [
            "someone else should own this account",
            "a rep left and their stuff needs a new home",
        ],
    },
}

GOALS: list[dict[str, list[str]]] = [
    {"tools": ["list_crm_leads", "update_crm_lead_status", "convert_crm_lead"],
     "ask": ["take my best qualified prospect and turn it into a real deal",
             "convert whichever qualified lead is worth the most into a customer with an opportunity"]},
    {"tools": ["reassign_crm_owner", "convert_crm_lead"],
     "ask": ["{lead_id} belongs to someone who left; give it to {new_owner_rep_id} and convert it",
             "move {lead_id} to {new_owner_rep_id} and make them a customer"]},
    {"tools": ["create_crm_company", "create_crm_contact", "create_crm_deal"],
     "ask": ["we signed up a new account {name} in {city}; add them, their buyer {first_name} {last_name} "
             "({email}), and a deal closing {expected_close_date}",
             "set up {name} with {first_name} {last_name} as our contact and start tracking an opportunity"]},
    {"tools": ["list_crm_deals", "update_crm_deal"],
     "ask": ["close out the biggest deal in negotiation as won",
             "any of {owner_rep_id}'s opportunities past their date should move out to {expected_close_date}"]},
    {"tools": ["list_crm_deals", "update_crm_deal", "delete_crm_company"],
     "ask": ["{company_id} went out of business - mark their open deals lost and remove the account; "
             "approval code {approval_code}",
             "shut down everything with {company_id} and delete it, code {approval_code}"]},
    {"tools": ["list_crm_activities", "complete_crm_task"],
     "ask": ["clear the overdue follow-ups on {owner_rep_id}'s list",
             "I did everything due today, tick it all off"]},
    {"tools": ["search_crm_contacts", "log_crm_activity"],
     "ask": ["I just called {query}; write down that we talked about {subject}",
             "find {query} and set me a reminder to follow up by {due_date}"]},
    {"tools": ["create_crm_lead", "log_crm_activity", "update_crm_lead_status"],
     "ask": ["met {first_name} {last_name} from {company_name} at a booth, already had a call, and they're a good fit",
             "add {first_name} {last_name} ({email}) as a prospect, log my intro call and qualify them"]},
]
