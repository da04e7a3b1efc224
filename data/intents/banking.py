"""Banking: how account holders ask (format: data/intents/__init__.py).

The customer is known from the session, so ``customer_id`` is never a slot: people say "my accounts"."""

from __future__ import annotations

SELF: tuple[str, ...] = ("customer_id",)
SPOKEN: tuple[str, ...] = ()

BANK: dict[str, dict[str, list[str]]] = {
    "get_customer_profile": {
        "ask": [
            "show me what the bank has on file for me",
            "tell me which email and phone number you have for me",
            "pull up my profile so I can check my details are right",
            "remind me how long I've been banking with you",
        ],
        "vague": ["check what details you have for me", "look up my personal details"],
    },
    "update_contact_info": {
        "ask": [
            "change my email on file to {email}",
            "my number is now {phone}, please put that on my profile",
            "send my mail to {address} from now on, I've moved",
            "switch my contact email to {email} and my phone to {phone}",
            "update my mailing address to {address}",
        ],
        "vague": ["fix my contact details, they're out of date", "help me update how you reach me"],
    },
    "list_accounts": {
        "ask": [
            "show me all my accounts and what's in each",
            "tell me which accounts I have open with you",
            "give me a rundown of my checking and savings balances",
            "check whether any of my accounts are closed or frozen",
        ],
        "vague": ["give me an overview of my money", "show me what I have with you"],
    },
    "get_account_balance": {
        "ask": [
            "tell me how much is in {account_id}",
            "check what's left in {account_id} right now",
            "see how much I can still move out of {account_id} today",
            "give me the balance on {account_id}",
        ],
        "vague": ["tell me how much money I have", "check a balance for me"],
    },
    "list_transactions": {
        "ask": [
            "show me the latest activity on {account_id}",
            "pull up the last {limit} transactions on {account_id}",
            "show me the {category} transactions on {account_id}",
            "show me everything that hit {account_id} after {since}",
            "find the {category} entries on {account_id} from {since} onwards",
        ],
        "vague": ["show me what I've been spending on", "help me look over my recent purchases"],
    },
    "transfer_funds": {
        "ask": [
            "move {amount} from {from_account_id} to {to_account_id}",
            "send {amount} over from {from_account_id} into {to_account_id} — my PIN is {pin}",
            "put {amount} into {to_account_id}, taking it out of {from_account_id}",
            "shift {amount} from {from_account_id} to {to_account_id} and label it {memo}",
            "move {amount} between my accounts",
        ],
        "vague": ["help me move some money around", "top up one of my accounts from another"],
    },
    "list_payees": {
        "ask": [
            "show me who I have set up for bill pay",
            "list the companies I can pay bills to",
            "check whether my landlord is already saved as a payee",
        ],
        "vague": ["remind me who I can pay bills to", "show my saved billers"],
    },
    "add_payee": {
        "ask": [
            "add {name} to my bill pay",
            "set up {name} as a {category} payee, my account with them is {account_number}",
            "save {name} so I can pay them — the account number they gave me is {account_number}",
            "register {name} so I can start paying them through the bank",
        ],
        "vague": ["set up a new bill for me", "add a company I need to pay"],
    },
    "pay_bill": {
        "ask": [
            "pay {amount} to {payee_id} from {account_id}",
            "send {payee_id} {amount} out of {account_id} — my PIN is {pin}",
            "use {account_id} to cover {amount} for {payee_id}",
            "settle {payee_id} today, {amount} from {account_id}",
            "pay {amount} toward one of my bills",
        ],
        "vague": ["help me pay a bill", "take care of a bill that's due"],
    },
    "schedule_transfer": {
        "ask": [
            "move {amount} from {from_account_id} to {to_account_id} on {date}",
            "set up {amount} to go from {from_account_id} into {to_account_id} on {date} — my PIN is {pin}",
            "on {date}, send {amount} over from {from_account_id} to {to_account_id}",
            "plan a transfer of {amount} into {to_account_id} for {date}, out of {from_account_id}",
            "set up {amount} to move between my accounts on {date}",
        ],
        "vague": ["move some money later, not today", "set up a transfer for payday"],
    },
    "cancel_scheduled_transfer": {
        "ask": [
            "cancel {scheduled_transfer_id}",
            "call off {scheduled_transfer_id} before it runs",
            "stop {scheduled_transfer_id} from going through",
        ],
        "vague": ["stop a transfer I planned", "call off a transfer I set up earlier"],
    },
    "list_cards": {
        "ask": [
            "show me all my cards and whether they work",
            "tell me which of my cards are frozen",
            "list my debit and credit cards",
        ],
        "vague": ["show me what cards I have", "check on my cards"],
    },
    "freeze_card": {
        "ask": [
            "freeze {card_id} right now",
            "block {card_id}, marking it as {reason}",
            "lock down {card_id} so nobody can use it",
            "put a hold on {card_id} straight away",
        ],
        "vague": ["stop my card from working", "put a hold on one of my cards"],
    },
    "unfreeze_card": {
        "ask": [
            "unfreeze {card_id}",
            "turn {card_id} back on, I found it — my PIN is {pin}",
            "lift the block on {card_id} so I can use it again",
        ],
        "vague": ["make my card work again", "get my blocked card working"],
    },
    "dispute_transaction": {
        "ask": [
            "dispute {transaction_id}",
            "contest {transaction_id} with the bank",
            "open a claim on {transaction_id} as {reason}",
            "raise a dispute over {transaction_id}, flagging it {reason}",
        ],
        "vague": ["sort out a wrong charge on my statement", "help me fight a charge I don't agree with"],
    },
    "open_account": {
        "ask": [
            "open a {account_type} account for me with {initial_deposit} from {funding_account_id}",
            "start a new {account_type} account and seed it with {initial_deposit} out of {funding_account_id}",
            "get me a {account_type} account as well, funded with {initial_deposit} from {funding_account_id} — "
            "my PIN is {pin}",
        ],
        "vague": ["help me start saving separately", "set me up with another account"],
    },
    "change_pin": {
        "ask": [
            "change the PIN on {account_id} from {current_pin} to {new_pin}",
            "set a new PIN for {account_id}: the old one is {current_pin}, make it {new_pin}",
            "replace my PIN on {account_id} with {new_pin} — the current one is {current_pin}",
        ],
        "vague": ["help me change my PIN", "give my account a different PIN"],
    },
}

GOALS: list[dict[str, list[str]]] = [
    {"tools": ["list_accounts", "transfer_funds"],
     "ask": ["move {amount} from {from_account_id} to {to_account_id}, I don't have the account numbers handy",
             "top up {to_account_id} with {amount} out of {from_account_id} — my PIN is {pin}",
             "look at my accounts and shift {amount} from {from_account_id} over to {to_account_id}"]},
    {"tools": ["list_payees", "pay_bill", "get_account_balance"],
     "ask": ["pay {payee_id} {amount} from {account_id} and tell me what's left",
             "settle my bill with {payee_id} out of {account_id}, then check how much I have left",
             "pay one of my saved bills and let me know what's left in the account afterwards"]},
    {"tools": ["list_accounts", "list_transactions", "dispute_transaction"],
     "ask": ["find the bad charge on my account and contest it as {reason}",
             "look through my recent {category} spending and dispute {transaction_id}"]},
    {"tools": ["list_cards", "freeze_card"],
     "ask": ["freeze {card_id} right away",
             "find {card_id} and put a block on it, marking it as {reason}"]},
    {"tools": ["add_payee", "pay_bill"],
     "ask": ["add {name} as a payee and pay them {amount} from {account_id}",
             "set up {name} for bill pay and send them {amount} out of {account_id} — my PIN is {pin}"]},
    {"tools": ["list_accounts", "open_account"],
     "ask": ["open a {account_type} account and fund it with {initial_deposit} from {funding_account_id}",
             "start a new {account_type} account for me, moving {initial_deposit} into it from {funding_account_id}"]},
    {"tools": ["get_account_balance", "schedule_transfer"],
     "ask": ["if {from_account_id} has enough in it, set up {amount} to go into {to_account_id} on {date}",
             "check {from_account_id} can cover it and then schedule {amount} into {to_account_id} for {date}"]},
    {"tools": ["list_cards", "unfreeze_card", "list_transactions"],
     "ask": ["unfreeze {card_id} and show me what went through on {account_id} while it was blocked",
             "turn {card_id} back on — my PIN is {pin} — and check nothing odd hit the account"]},
]
