"""Banking: customers, accounts, cards, payees, transfers, scheduled payments and disputes.

State behaviour: balances change only through transfers, bill payments, account openings and
scheduled transfers, and every movement posts a transaction on each account it touches. Time moves
with the session clock (one minute per call): a scheduled transfer executes when the clock reaches its
date (in id order, dated on its date; it fails with the reason, moving nothing, when an account is no
longer active or the funds are short at that moment), and each new day resets the daily transfer
allowance. Disputes age out: a charge can only be disputed within 60 days of its date.

State-dependent failures an agent must handle: insufficient funds, frozen or closed accounts (no money
moves through them), a wrong PIN, the daily transfer limit, transfers to the same account, payments
above the bank's 1,000,000.00 limit, a payee that belongs to another customer, duplicate payees, an
opening deposit below the minimum or from another customer's account, cards that are already frozen
(or not frozen, or frozen as stolen and so never unfrozen), scheduled transfers dated today or in the
past or more than a year ahead, cancelling a transfer that is no longer scheduled, disputes on credits,
on already disputed charges or on charges older than 60 days, a new PIN equal to the current one or of
four identical digits, and contact updates that change nothing. PINs are sensitive parameters: they
must come from the user, never be guessed.
"""

from servers.banking import discovery, tools_accounts, tools_cards, tools_manage, tools_payments
from servers.banking.state import BankingState, run_due_transfers
from servers.banking.world import generate
from servers.kit import Domain

domain = Domain("banking", BankingState, generate, description=__doc__ or "",
                modules=(tools_accounts, tools_payments, tools_cards, tools_manage, discovery),
                on_time=run_due_transfers)

__all__ = ["domain"]
