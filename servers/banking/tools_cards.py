"""Cards and disputes: list, freeze and unfreeze debit cards; dispute a recent charge."""

from __future__ import annotations

from datetime import date
from typing import Literal

from servers.banking.state import DISPUTE_WINDOW_DAYS, BankingState, Dispute, Pin, check_pin
from servers.kit import ToolError, new_id, require, today, tool


@tool(consumes=("customer_id",), produces=("card_id",), read_only=True)
def list_cards(s: BankingState, customer_id: str) -> list:
    """List a customer's cards with their status.

    Args:
        customer_id: The customer's id.
    """
    require(s.customers, customer_id, "customer_id")
    return [{"card_id": c.card_id, "account_id": c.account_id, "card_type": c.card_type, "last4": c.last4,
             "status": c.status} for c in s.cards.values() if c.customer_id == customer_id]


@tool(consumes=("card_id",))
def freeze_card(s: BankingState, card_id: str,
                reason: Literal["lost", "stolen", "suspicious_activity", "travel", "other"]) -> dict:
    """Freeze a card immediately so no new purchases go through.

    Args:
        card_id: The card id, e.g. CRD-0002.
        reason: Why the card is being frozen.
    """
    card = require(s.cards, card_id, "card_id")
    if card.status == "frozen":
        raise ToolError(f"card {card_id} is already frozen", field="card_id", code="illegal_state")
    card = s.cards.edit(card_id)
    card.status, card.frozen_reason = "frozen", reason
    return card


@tool(consumes=("card_id",))
def unfreeze_card(s: BankingState, card_id: str, pin: Pin) -> dict:
    """Unfreeze a frozen card (needs the PIN of the card's account). Cards frozen as stolen cannot be
    unfrozen; they must be replaced.

    Args:
        card_id: The card id.
        pin: The 4-digit PIN of the account the card draws on.
    """
    card = require(s.cards, card_id, "card_id")
    if card.status != "frozen":
        raise ToolError(f"card {card_id} is not frozen", field="card_id", code="illegal_state")
    if card.frozen_reason == "stolen":
        raise ToolError(f"card {card_id} was reported stolen and cannot be unfrozen", field="card_id",
                        code="illegal_state")
    check_pin(s.accounts[card.account_id], pin)
    card = s.cards.edit(card_id)
    card.status, card.frozen_reason = "active", None
    return card


@tool(consumes=("transaction_id",), produces=("dispute_id",))
def dispute_transaction(s: BankingState, transaction_id: str,
                        reason: Literal["unauthorized", "duplicate", "wrong_amount", "not_received",
                                        "other"]) -> dict:
    """Open a dispute on a posted card or bill-pay charge from the last 60 days.

    Args:
        transaction_id: The transaction to dispute.
        reason: Why the charge is wrong.
    """
    tx = require(s.transactions, transaction_id, "transaction_id")
    if tx.amount >= 0:
        raise ToolError(f"transaction {transaction_id} is a credit; only charges can be disputed",
                        field="transaction_id", code="illegal_state")
    if tx.status == "disputed":
        raise ToolError(f"transaction {transaction_id} is already disputed", field="transaction_id",
                        code="illegal_state")
    if (today(s) - date.fromisoformat(tx.date)).days > DISPUTE_WINDOW_DAYS:
        raise ToolError(f"transaction {transaction_id} from {tx.date} is older than {DISPUTE_WINDOW_DAYS} days",
                        field="transaction_id", code="illegal_state")
    s.transactions.edit(transaction_id).status = "disputed"
    did = new_id(s.counters, "DSP")
    return s.disputes.put(did, Dispute(did, transaction_id, reason, "open", today(s).isoformat()))
