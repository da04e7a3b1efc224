"""How a merchant asks for payments work: billing customers, collecting, refunds, payouts, webhooks."""

from __future__ import annotations

SELF: tuple[str, ...] = ("merchant_id",)
SPOKEN: tuple[str, ...] = ("invoice_id",)

BANK: dict[str, dict[str, list[str]]] = {
    "list_payment_customers": {
        "ask": ["look up {name} in my customer list", "who do I have on file with the email {email}",
                "pull up the customers of {merchant_id} named {name} and show me their cards",
                "does {name} still have a working card saved with us"],
        "vague": ["I need to find one of my customers", "check which card a client has on file"],
    },
    "list_payment_invoices": {
        "ask": ["which of my invoices are past due", "show me everything I've billed {customer_id} so far",
                "what invoices are still {status} for {merchant_id}",
                "find the invoice about {query} and tell me where it stands"],
        "vague": ["I want to see where my invoices stand", "who still owes me money"],
    },
    "create_payment_invoice": {
        "ask": ["bill {customer_id} {amount} for {description}",
                "send {customer_id} an invoice of {amount} for {description}, payable within {days_until_due} days",
                "put together a draft bill for {customer_id}: {description}, {amount}",
                "charge {customer_id} {amount} in {currency} for {description} and make it payable right away"],
        "vague": ["I need to bill a customer", "can you set up a new invoice for me"],
    },
    "update_payment_invoice_status": {
        "ask": ["{invoice_id} is ready, send it out", "cancel invoice {invoice_id}, we billed it by mistake",
                "write off {invoice_id}, we're never getting that money",
                "I finished the draft {invoice_id}, make it official so the customer can pay"],
        "vague": ["something needs to change on one of my invoices", "I want to cancel a bill I sent"],
    },
    "pay_payment_invoice": {
        "ask": ["charge the card on file for {invoice_id}, my key is {api_key}",
                "collect {invoice_id} now using card {payment_method_id} (secret key {api_key})",
                "the customer said go ahead and settle {invoice_id}; here's my API key {api_key}"],
        "vague": ["collect payment on an invoice", "run a customer's card for what they owe"],
    },
    "refund_payment_charge": {
        "ask": ["refund {amount} of payment {payment_id}, my key is {api_key}",
                "give the customer their money back for {payment_id} (key {api_key})",
                "{payment_id} was charged twice, please reverse it — key {api_key}"],
        "vague": ["a customer wants a refund", "I need to send some money back to a client"],
    },
    "get_merchant_balance": {
        "ask": ["how much money does {merchant_id} have ready to withdraw",
                "what's sitting in my balance at {merchant_id} and when does the rest clear",
                "when will the pending funds for {merchant_id} be available"],
        "vague": ["how much money do I have", "check my balance"],
    },
    "create_merchant_payout": {
        "ask": ["send {amount} from {merchant_id} to my bank, key {api_key}",
                "cash out everything available for {merchant_id} — my secret key is {api_key}",
                "I need {amount} from {merchant_id} in my bank, make it a {method} payout ({api_key})"],
        "vague": ["move my earnings to the bank", "I'd like to withdraw some money"],
    },
    "list_webhook_deliveries": {
        "ask": ["are my webhooks for {merchant_id} getting through",
                "why does {endpoint_id} keep failing", "show me the {event_type} notifications that went out",
                "which webhook notifications {status} for {merchant_id}"],
        "vague": ["my server isn't hearing about payments", "check on the webhook notifications"],
    },
    "manage_webhook_endpoint": {
        "ask": ["turn {endpoint_id} back on, my key is {api_key}",
                "our receiver moved to {url}, point {endpoint_id} there (key {api_key})",
                "resend everything {endpoint_id} missed — API key {api_key}",
                "stop sending notifications to {endpoint_id}, key {api_key}"],
        "vague": ["fix my webhook", "my webhook endpoint got switched off"],
    },
}

GOALS: list[dict[str, list[str]]] = [
    {"tools": ["list_payment_customers", "create_payment_invoice", "update_payment_invoice_status"],
     "ask": ["bill {name} {amount} for {description} and send it out now",
             "look up {name} and get them an invoice for {description} they can pay right away"]},
    {"tools": ["list_payment_invoices", "pay_payment_invoice"],
     "ask": ["find {customer_id}'s unpaid bill and charge their card for it, my key is {api_key}",
             "collect whatever {customer_id} still owes me using the card we have (key {api_key})"]},
    {"tools": ["list_payment_invoices", "refund_payment_charge"],
     "ask": ["the customer on invoice {query} returned part of the order, give them {amount} back (key {api_key})",
             "refund what {customer_id} paid on their last invoice — my secret key is {api_key}"]},
    {"tools": ["get_merchant_balance", "create_merchant_payout"],
     "ask": ["see what {merchant_id} has available and send all of it to the bank, key {api_key}",
             "if there's at least {amount} ready at {merchant_id}, pay it out to me ({api_key})"]},
    {"tools": ["list_webhook_deliveries", "manage_webhook_endpoint"],
     "ask": ["my webhooks for {merchant_id} are broken: move them to {url} and resend what failed (key {api_key})",
             "find out why {merchant_id}'s notifications stopped and get them flowing again, API key {api_key}"]},
    {"tools": ["create_payment_invoice", "pay_payment_invoice", "refund_payment_charge"],
     "ask": ["bill {customer_id} {amount} for {description}, charge it immediately, then refund the deposit part "
             "(key {api_key})",
             "ring up {customer_id} for {description} on their card and then knock {amount} off as a refund, "
             "key {api_key}"]},
    {"tools": ["list_payment_invoices", "update_payment_invoice_status"],
     "ask": ["void every draft I left for {customer_id}", "write off {customer_id}'s overdue invoice"]},
]
