"""Banking: how users ask (format: data/intents/__init__.py)."""

from __future__ import annotations

BANK: dict[str, dict[str, list[str]]] = {
    "get_customer_profile": {
        "ask": [
            "pull up the profile for {customer_id}",
            "show me what you have on file for {customer_id}",
        ],
        "vague": [
            "check my profile details",
        ],
    },
    "update_contact_info": {
        "ask": [
            "update the contact details of {customer_id}",
            "change the contact info on file for {customer_id}",
        ],
        "vague": [
            "update my contact information",
        ],
    },
    "list_accounts": {
        "ask": [
            "list the accounts of {customer_id}",
            "show me all accounts for {customer_id}",
            "find the accounts that belong to {customer_id}",
        ],
        "vague": [
            "look at my accounts",
        ],
    },
    "get_account_balance": {
        "ask": [
            "check the balance of {account_id}",
            "tell me how much is in {account_id}",
            "get the current balance on {account_id}",
        ],
        "vague": [
            "check a balance for me",
        ],
    },
    "list_transactions": {
        "ask": [
            "show the recent transactions on {account_id}",
            "list what went through {account_id} lately",
            "pull the latest activity on {account_id}",
        ],
        "vague": [
            "look at some recent transactions",
        ],
    },
    "transfer_funds": {
        "ask": [
            "transfer {amount} from {from_account_id} to {to_account_id}",
            "move {amount} out of {from_account_id} into {to_account_id}",
            "send {amount} from {from_account_id} over to {to_account_id}",
        ],
        "vague": [
            "move some money between accounts",
            "make a transfer",
        ],
    },
    "list_payees": {
        "ask": [
            "list the saved payees of {customer_id}",
            "show me the bill-pay payees for {customer_id}",
        ],
        "vague": [
            "check who I have saved as payees",
        ],
    },
    "add_payee": {
        "ask": [
            "add {name} as a new payee for {customer_id}",
            "save a payee called {name} for {customer_id}",
        ],
        "vague": [
            "add a new payee",
        ],
    },
    "pay_bill": {
        "ask": [
            "pay {amount} to {payee_id} from {account_id}",
            "use {account_id} to pay {payee_id} {amount}",
            "send a bill payment of {amount} to {payee_id} from {account_id}",
        ],
        "vague": [
            "pay a bill",
            "take care of a bill payment",
        ],
    },
    "schedule_transfer": {
        "ask": [
            "schedule a transfer of {amount} from {from_account_id} to {to_account_id} on {date}",
            "set up {amount} to go from {from_account_id} to {to_account_id} on {date}",
        ],
        "vague": [
            "schedule a future transfer",
        ],
    },
    "cancel_scheduled_transfer": {
        "ask": [
            "cancel the scheduled transfer {scheduled_transfer_id}",
            "call off scheduled transfer {scheduled_transfer_id}",
        ],
        "vague": [
            "cancel a scheduled transfer",
        ],
    },
    "list_cards": {
        "ask": [
            "list the cards of {customer_id}",
            "show me which cards {customer_id} has",
        ],
        "vague": [
            "check my cards",
        ],
    },
    "freeze_card": {
        "ask": [
            "freeze {card_id} (reason: {reason})",
            "put a freeze on {card_id}, the reason is {reason}",
            "lock {card_id} right away — {reason}",
        ],
        "vague": [
            "freeze one of my cards",
        ],
    },
    "unfreeze_card": {
        "ask": [
            "unfreeze {card_id}",
            "lift the freeze on {card_id}",
            "reactivate {card_id}",
        ],
        "vague": [
            "unfreeze a card",
        ],
    },
    "dispute_transaction": {
        "ask": [
            "dispute {transaction_id} as {reason}",
            "open a dispute on {transaction_id} — reason: {reason}",
            "flag {transaction_id} as {reason} and dispute it",
        ],
        "vague": [
            "dispute a charge",
        ],
    },
    "open_account": {
        "ask": [
            "open a new {account_type} account for {customer_id} with {initial_deposit} from {funding_account_id}",
            "set up a {account_type} account for {customer_id}, funded with {initial_deposit} from {funding_account_id}",
        ],
        "vague": [
            "open a new account",
        ],
    },
    "change_pin": {
        "ask": [
            "change the PIN on {account_id}",
            "reset the PIN of {account_id}",
        ],
        "vague": [
            "change my PIN",
        ],
    },
}

GOALS: list[dict[str, list[str]]] = []
