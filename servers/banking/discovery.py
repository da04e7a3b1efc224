"""Hidden discovery tools: what synthesis enumerates to ground requests in real customers and accounts."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.banking.state import BankingState
from servers.kit import Money, discovery, value_counts


@discovery(produces=("customer_id",))
def banking_search_customers(s: BankingState, name: str | None = None,
                             limit: Annotated[int, Field(ge=1, le=200)] = 50) -> list:
    """Find customers by (part of) their name.

    Args:
        name: Case-insensitive substring of the name; omit to list everyone.
        limit: Maximum number of customers.
    """
    needle = (name or "").lower()
    return [c for c in s.customers.values() if needle in c.name.lower()][:limit]


@discovery(produces=("account_id",))
def banking_list_all_accounts(s: BankingState, min_balance: Money | None = None,
                              status: str | None = None) -> list:
    """Every account (with owner and PIN, for synthesis grounding) with at least ``min_balance``.

    Args:
        min_balance: Only accounts with at least this balance (omit for every account).
        status: Only accounts with this status (active, frozen, closed).
    """
    return [a for a in s.accounts.values() if (min_balance is None or a.balance >= min_balance)
            and (status is None or a.status == status)]


@discovery
def banking_get_unique_values(s: BankingState, field: Literal["account_type", "category", "payee_category",
                                                              "card_status", "account_status"]) -> list:
    """Distinct values of a categorical field with their counts.

    Args:
        field: Which field to enumerate.
    """
    source = {
        "account_type": (s.accounts, "account_type"), "category": (s.transactions, "category"),
        "payee_category": (s.payees, "category"), "card_status": (s.cards, "status"),
        "account_status": (s.accounts, "status"),
    }[field]
    return value_counts(getattr(rec, source[1]) for rec in source[0].values())
