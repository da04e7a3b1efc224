"""Banking: customers, accounts, cards, payees, transfers, scheduled payments and disputes.

State-dependent failures an agent must handle: insufficient funds, frozen or closed accounts, a wrong
PIN, the daily transfer limit, cards that are already frozen, payments dated in the past, disputes on
credits or on transactions older than 60 days. PINs are sensitive parameters: they must come from the
user, never be guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Annotated, Literal

from pydantic import Field

from servers.kit import (
    Cell,
    Counters,
    Domain,
    Seeds,
    Sensitive,
    State,
    Table,
    ToolError,
    iso,
    new_id,
    parse_date,
    require,
    value_counts,
)
from servers.kit.fake import REFERENCE_DATE

AccountType = Literal["checking", "savings", "money_market"]
TxCategory = Literal[
    "groceries", "dining", "utilities", "rent", "salary", "transfer", "shopping", "travel", "health",
    "entertainment", "bill_payment", "fees",
]
PayeeCategory = Literal["utilities", "rent", "credit_card", "insurance", "phone", "internet", "loan", "other"]
Amount = Annotated[float, Field(gt=0, le=1_000_000)]
Pin = Annotated[Sensitive, Field(pattern=r"^\d{4}$")]
MIN_OPENING_DEPOSIT = {"checking": 25.0, "savings": 100.0, "money_market": 1000.0}
DISPUTE_WINDOW_DAYS = 60


@dataclass
class Customer:
    customer_id: str
    name: str
    email: str
    phone: str
    address: str
    customer_since: str


@dataclass
class Account:
    account_id: str
    customer_id: str
    account_type: str
    nickname: str
    balance: float
    status: str  # active | frozen | closed
    pin: str
    daily_transfer_limit: float
    transferred_today: float
    interest_rate: float
    opened_on: str


@dataclass
class Transaction:
    transaction_id: str
    account_id: str
    date: str
    amount: float  # negative = money out
    description: str
    category: str
    status: str  # posted | pending | disputed


@dataclass
class Payee:
    payee_id: str
    customer_id: str
    name: str
    account_number: str
    category: str


@dataclass
class Card:
    card_id: str
    account_id: str
    customer_id: str
    card_type: str
    last4: str
    status: str  # active | frozen
    frozen_reason: str | None = None


@dataclass
class ScheduledTransfer:
    scheduled_transfer_id: str
    from_account_id: str
    to_account_id: str
    amount: float
    date: str
    status: str  # scheduled | cancelled


@dataclass
class Dispute:
    dispute_id: str
    transaction_id: str
    reason: str
    status: str
    opened_on: str


@dataclass
class Clock:
    today: str = field(default_factory=lambda: REFERENCE_DATE.date().isoformat())


class BankingState(State):
    customers: Table[Customer]
    accounts: Table[Account]
    transactions: Table[Transaction]
    payees: Table[Payee]
    cards: Table[Card]
    scheduled: Table[ScheduledTransfer]
    disputes: Table[Dispute]
    clock: Cell[Clock]
    counters: Cell[Counters]


_MERCHANTS: dict[str, tuple[str, ...]] = {
    "groceries": ("Whole Foods", "Trader Joe's", "Safeway", "Kroger"),
    "dining": ("Chipotle", "Olive Garden", "Blue Bottle Coffee", "Shake Shack"),
    "utilities": ("PG&E", "City Water Dept", "ConEdison"),
    "shopping": ("Amazon", "Target", "Best Buy", "IKEA"),
    "travel": ("Delta Air Lines", "Uber", "Marriott", "Amtrak"),
    "health": ("CVS Pharmacy", "Walgreens", "Kaiser Permanente"),
    "entertainment": ("Netflix", "Spotify", "AMC Theatres"),
}


def generate(s: BankingState, seeds: Seeds) -> None:
    """A few dozen customers with 1–3 accounts, cards, payees and ~2 months of history each."""
    rng, fake = seeds.rng, seeds.fake
    s.clock.set(Clock())
    s.counters.set(Counters())
    n_acc = n_tx = n_card = n_payee = 0
    for c in range(1, 31):
        cid = seeds.ident("CUS", c)
        s.customers.put(cid, Customer(
            cid, fake.name(), fake.email(), fake.numerify("(###) ###-####"),
            fake.address().replace("\n", ", "), iso(seeds.date_between(-3650, -200)),
        ))
        for acc_type in seeds.sample(["checking", "savings", "money_market"], rng.randint(1, 3)):
            n_acc += 1
            aid = seeds.ident("ACC", n_acc)
            balance = seeds.money(5, 400) if rng.random() < 0.15 else seeds.money(500, 25_000)
            s.accounts.put(aid, Account(
                aid, cid, acc_type, f"{fake.first_name()}'s {acc_type.replace('_', ' ')}", balance,
                "frozen" if rng.random() < 0.06 else "active", f"{rng.randint(0, 9999):04d}",
                float(seeds.choice([2500, 5000, 10000])), 0.0,
                {"checking": 0.01, "savings": 2.1, "money_market": 3.4}[acc_type],
                iso(seeds.date_between(-3000, -100)),
            ))
            for _ in range(rng.randint(6, 14)):
                n_tx += 1
                category = seeds.choice([*list(_MERCHANTS), "salary", "rent"])
                if category == "salary":
                    amount, desc = seeds.money(1500, 6000), f"Payroll {fake.company()}"
                elif category == "rent":
                    amount, desc = -seeds.money(900, 3200), f"Rent {fake.street_name()} Apts"
                else:
                    amount, desc = -seeds.money(4, 350), seeds.choice(_MERCHANTS[category])
                tid = seeds.ident("TXN", n_tx, 5)
                s.transactions.put(tid, Transaction(
                    tid, aid, iso(seeds.date_between(-75, -1)), amount, desc, category, "posted"))
            if acc_type == "checking":
                n_card += 1
                card_id = seeds.ident("CRD", n_card)
                s.cards.put(card_id, Card(card_id, aid, cid, "debit", fake.numerify("####"),
                                          "frozen" if rng.random() < 0.1 else "active",
                                          "suspicious activity" if rng.random() < 0.1 else None))
        for category in seeds.sample(["utilities", "rent", "credit_card", "insurance", "phone", "internet"], 2):
            n_payee += 1
            pid = seeds.ident("PAY", n_payee)
            s.payees.put(pid, Payee(pid, cid, f"{fake.company()} {category.replace('_', ' ').title()}",
                                    fake.numerify("##########"), category))
    for card in list(s.cards.values()):
        if card.status == "active" and card.frozen_reason:
            s.cards.edit(card.card_id).frozen_reason = None


domain = Domain("banking", BankingState, generate, description=__doc__ or "")


def _today(s: BankingState) -> date:
    return date.fromisoformat(s.clock.get().today)


def _usable(s: BankingState, account_id: str, field: str) -> Account:
    acc = require(s.accounts, account_id, field)
    if acc.status != "active":
        raise ToolError(f"account {account_id} is {acc.status}; no money can move through it", field=field,
                        code="illegal_state")
    return acc


def _check_pin(acc: Account, pin: str) -> None:
    if acc.pin != pin:
        raise ToolError(f"incorrect PIN for account {acc.account_id}", field="pin", code="auth")


def _withdraw(s: BankingState, account_id: str, amount: float, field: str, *, limit: bool) -> Account:
    acc = s.accounts.edit(account_id)
    if acc.balance < amount:
        raise ToolError(f"insufficient funds in {account_id}: balance {acc.balance:.2f} < {amount:.2f}",
                        field="amount", code="insufficient_funds")
    if limit and acc.transferred_today + amount > acc.daily_transfer_limit:
        left = acc.daily_transfer_limit - acc.transferred_today
        raise ToolError(f"daily transfer limit of {acc.daily_transfer_limit:.2f} for {account_id} would be "
                        f"exceeded ({left:.2f} left today)", field="amount", code="limit")
    acc.balance = round(acc.balance - amount, 2)
    if limit:
        acc.transferred_today = round(acc.transferred_today + amount, 2)
    return acc


def _post(s: BankingState, account_id: str, amount: float, description: str, category: str) -> str:
    tid = new_id(s.counters, "TXN-N", 5)
    s.transactions.put(tid, Transaction(tid, account_id, _today(s).isoformat(), round(amount, 2),
                                        description, category, "posted"))
    return tid


# ---------------------------------------------------------------- user-visible tools (17)
@domain.tool(consumes=("customer_id",), read_only=True)
def get_customer_profile(s: BankingState, customer_id: str) -> dict:
    """Get a customer's profile (name, contact details, customer since).

    Args:
        customer_id: The customer's id, e.g. CUS-0001.
    """
    return require(s.customers, customer_id, "customer_id")


@domain.tool(consumes=("customer_id",))
def update_contact_info(s: BankingState, customer_id: str, email: str | None = None, phone: str | None = None,
                        address: str | None = None) -> dict:
    """Update a customer's email, phone number and/or mailing address.

    Args:
        customer_id: The customer's id.
        email: New email address.
        phone: New phone number.
        address: New mailing address.
    """
    require(s.customers, customer_id, "customer_id")
    if email is None and phone is None and address is None:
        raise ToolError("nothing to update: give at least one of email, phone, address", field="email")
    if email is not None and ("@" not in email or "." not in email.split("@")[-1]):
        raise ToolError(f"invalid email '{email}'", field="email")
    cust = s.customers.edit(customer_id)
    for key, value in (("email", email), ("phone", phone), ("address", address)):
        if value is not None:
            setattr(cust, key, value)
    return cust


@domain.tool(consumes=("customer_id",), produces=("account_id",), read_only=True)
def list_accounts(s: BankingState, customer_id: str) -> list:
    """List a customer's accounts with type, nickname, status and balance.

    Args:
        customer_id: The customer's id.
    """
    require(s.customers, customer_id, "customer_id")
    return [{"account_id": a.account_id, "account_type": a.account_type, "nickname": a.nickname,
             "status": a.status, "balance": a.balance}
            for a in s.accounts.values() if a.customer_id == customer_id and a.status != "closed"]


@domain.tool(consumes=("account_id",), read_only=True)
def get_account_balance(s: BankingState, account_id: str) -> dict:
    """Get the current balance and remaining daily transfer allowance of an account.

    Args:
        account_id: The account id, e.g. ACC-0003.
    """
    acc = require(s.accounts, account_id, "account_id")
    return {"account_id": account_id, "balance": acc.balance, "currency": "USD", "status": acc.status,
            "daily_transfer_remaining": round(acc.daily_transfer_limit - acc.transferred_today, 2)}


@domain.tool(consumes=("account_id",), produces=("transaction_id",), read_only=True)
def list_transactions(s: BankingState, account_id: str, limit: Annotated[int, Field(ge=1, le=100)] = 10,
                      category: TxCategory | None = None, since: str | None = None) -> list:
    """List an account's most recent transactions, newest first.

    Args:
        account_id: The account id.
        limit: Maximum number of transactions to return.
        category: Only transactions of this category.
        since: Only transactions on or after this date (YYYY-MM-DD).
    """
    require(s.accounts, account_id, "account_id")
    start = parse_date(since, "since") if since else None
    rows = [t for t in s.transactions.values() if t.account_id == account_id
            and (category is None or t.category == category)
            and (start is None or date.fromisoformat(t.date) >= start)]
    rows.sort(key=lambda t: (t.date, t.transaction_id), reverse=True)
    return rows[:limit]


@domain.tool(consumes=("account_id",), produces=("transaction_id",))
def transfer_funds(s: BankingState, from_account_id: str, to_account_id: str, amount: Amount, pin: Pin,
                   memo: str | None = None) -> dict:
    """Transfer money now between two accounts at this bank.

    Args:
        from_account_id: Account the money leaves.
        to_account_id: Account the money goes to.
        amount: Amount in USD.
        pin: The 4-digit PIN of the source account, as given by the customer.
        memo: Optional note shown on both statements.
    """
    if from_account_id == to_account_id:
        raise ToolError("from_account_id and to_account_id are the same account", field="to_account_id")
    src = _usable(s, from_account_id, "from_account_id")
    _usable(s, to_account_id, "to_account_id")
    _check_pin(src, pin)
    _withdraw(s, from_account_id, amount, "from_account_id", limit=True)
    dst = s.accounts.edit(to_account_id)
    dst.balance = round(dst.balance + amount, 2)
    label = memo or f"Transfer {from_account_id} -> {to_account_id}"
    out_id = _post(s, from_account_id, -amount, label, "transfer")
    in_id = _post(s, to_account_id, amount, label, "transfer")
    return {"transaction_id": out_id, "credit_transaction_id": in_id, "amount": amount,
            "from_balance": s.accounts[from_account_id].balance, "status": "completed"}


@domain.tool(consumes=("customer_id",), produces=("payee_id",), read_only=True)
def list_payees(s: BankingState, customer_id: str) -> list:
    """List the bill-pay payees a customer has saved.

    Args:
        customer_id: The customer's id.
    """
    require(s.customers, customer_id, "customer_id")
    return [p for p in s.payees.values() if p.customer_id == customer_id]


@domain.tool(consumes=("customer_id",), produces=("payee_id",))
def add_payee(s: BankingState, customer_id: str, name: str, account_number: Annotated[str, Field(
        pattern=r"^\d{6,17}$")], category: PayeeCategory = "other") -> dict:
    """Save a new bill-pay payee for a customer.

    Args:
        customer_id: The customer's id.
        name: The payee's name as it should appear.
        account_number: The customer's account number at the payee (6-17 digits).
        category: What kind of bill this payee is for.
    """
    require(s.customers, customer_id, "customer_id")
    for p in s.payees.values():
        if p.customer_id == customer_id and p.account_number == account_number and p.name == name:
            raise ToolError(f"payee '{name}' with that account number already exists ({p.payee_id})",
                            field="account_number", code="duplicate")
    pid = new_id(s.counters, "PAY-N")
    return s.payees.put(pid, Payee(pid, customer_id, name, account_number, category))


@domain.tool(consumes=("account_id", "payee_id"), produces=("transaction_id",))
def pay_bill(s: BankingState, account_id: str, payee_id: str, amount: Amount, pin: Pin) -> dict:
    """Pay a saved payee from one of the payee owner's accounts, today.

    Args:
        account_id: Account to pay from.
        payee_id: The saved payee to pay.
        amount: Amount in USD.
        pin: The 4-digit PIN of the paying account.
    """
    acc = _usable(s, account_id, "account_id")
    payee = require(s.payees, payee_id, "payee_id")
    if payee.customer_id != acc.customer_id:
        raise ToolError(f"payee {payee_id} does not belong to the owner of {account_id}", field="payee_id")
    _check_pin(acc, pin)
    _withdraw(s, account_id, amount, "account_id", limit=False)
    tid = _post(s, account_id, -amount, f"Bill payment {payee.name}", "bill_payment")
    return {"transaction_id": tid, "payee": payee.name, "amount": amount,
            "balance": s.accounts[account_id].balance, "status": "completed"}


@domain.tool(consumes=("account_id",), produces=("scheduled_transfer_id",))
def schedule_transfer(s: BankingState, from_account_id: str, to_account_id: str, amount: Amount, date: str,
                      pin: Pin) -> dict:
    """Schedule a transfer between two accounts for a future date.

    Args:
        from_account_id: Account the money will leave.
        to_account_id: Account the money will go to.
        amount: Amount in USD.
        date: The execution date (YYYY-MM-DD), after today.
        pin: The 4-digit PIN of the source account.
    """
    when = parse_date(date, "date")
    if when <= _today(s):
        raise ToolError(f"date {date} is not in the future (today is {_today(s)})", field="date")
    if when > _today(s) + timedelta(days=365):
        raise ToolError("transfers can be scheduled at most one year ahead", field="date")
    if from_account_id == to_account_id:
        raise ToolError("from_account_id and to_account_id are the same account", field="to_account_id")
    src = _usable(s, from_account_id, "from_account_id")
    _usable(s, to_account_id, "to_account_id")
    _check_pin(src, pin)
    sid = new_id(s.counters, "SCH")
    return s.scheduled.put(sid, ScheduledTransfer(sid, from_account_id, to_account_id, amount,
                                                  when.isoformat(), "scheduled"))


@domain.tool(consumes=("scheduled_transfer_id",))
def cancel_scheduled_transfer(s: BankingState, scheduled_transfer_id: str) -> dict:
    """Cancel a scheduled transfer that has not run yet.

    Args:
        scheduled_transfer_id: The id returned when the transfer was scheduled, e.g. SCH-0001.
    """
    sch = require(s.scheduled, scheduled_transfer_id, "scheduled_transfer_id")
    if sch.status != "scheduled":
        raise ToolError(f"scheduled transfer {scheduled_transfer_id} is already {sch.status}",
                        field="scheduled_transfer_id", code="illegal_state")
    sch = s.scheduled.edit(scheduled_transfer_id)
    sch.status = "cancelled"
    return sch


@domain.tool(consumes=("customer_id",), produces=("card_id",), read_only=True)
def list_cards(s: BankingState, customer_id: str) -> list:
    """List a customer's cards with their status.

    Args:
        customer_id: The customer's id.
    """
    require(s.customers, customer_id, "customer_id")
    return [{"card_id": c.card_id, "account_id": c.account_id, "card_type": c.card_type, "last4": c.last4,
             "status": c.status} for c in s.cards.values() if c.customer_id == customer_id]


@domain.tool(consumes=("card_id",))
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


@domain.tool(consumes=("card_id",))
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
    _check_pin(s.accounts[card.account_id], pin)
    card = s.cards.edit(card_id)
    card.status, card.frozen_reason = "active", None
    return card


@domain.tool(consumes=("transaction_id",), produces=("dispute_id",))
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
    if (_today(s) - date.fromisoformat(tx.date)).days > DISPUTE_WINDOW_DAYS:
        raise ToolError(f"transaction {transaction_id} from {tx.date} is older than {DISPUTE_WINDOW_DAYS} days",
                        field="transaction_id", code="illegal_state")
    s.transactions.edit(transaction_id).status = "disputed"
    did = new_id(s.counters, "DSP")
    return s.disputes.put(did, Dispute(did, transaction_id, reason, "open", _today(s).isoformat()))


@domain.tool(consumes=("customer_id", "account_id"), produces=("account_id",))
def open_account(s: BankingState, customer_id: str, account_type: AccountType, initial_deposit: Amount,
                 funding_account_id: str, pin: Pin) -> dict:
    """Open a new account for an existing customer, funded from one of their accounts.

    Args:
        customer_id: The customer's id.
        account_type: The kind of account to open.
        initial_deposit: Opening deposit in USD (checking >= 25, savings >= 100, money_market >= 1000).
        funding_account_id: The customer's account that funds the deposit.
        pin: The 4-digit PIN of the funding account; the new account gets the same PIN.
    """
    require(s.customers, customer_id, "customer_id")
    src = _usable(s, funding_account_id, "funding_account_id")
    if src.customer_id != customer_id:
        raise ToolError(f"account {funding_account_id} does not belong to {customer_id}",
                        field="funding_account_id")
    minimum = MIN_OPENING_DEPOSIT[account_type]
    if initial_deposit < minimum:
        raise ToolError(f"a {account_type} account needs an opening deposit of at least {minimum:.2f}",
                        field="initial_deposit")
    _check_pin(src, pin)
    _withdraw(s, funding_account_id, initial_deposit, "funding_account_id", limit=False)
    aid = new_id(s.counters, "ACC-N")
    acc = s.accounts.put(aid, Account(aid, customer_id, account_type, f"New {account_type.replace('_', ' ')}",
                                      round(initial_deposit, 2), "active", pin, 5000.0, 0.0,
                                      {"checking": 0.01, "savings": 2.1, "money_market": 3.4}[account_type],
                                      _today(s).isoformat()))
    _post(s, funding_account_id, -initial_deposit, f"Opening deposit {aid}", "transfer")
    _post(s, aid, initial_deposit, f"Opening deposit from {funding_account_id}", "transfer")
    return {"account_id": aid, "account_type": account_type, "balance": acc.balance, "status": "active"}


@domain.tool(consumes=("account_id",))
def change_pin(s: BankingState, account_id: str, current_pin: Pin, new_pin: Pin) -> dict:
    """Change the 4-digit PIN of an account.

    Args:
        account_id: The account id.
        current_pin: The account's current PIN.
        new_pin: The new PIN (4 digits, different from the current one).
    """
    acc = require(s.accounts, account_id, "account_id")
    _check_pin(acc, current_pin)
    if new_pin == current_pin:
        raise ToolError("new_pin must differ from current_pin", field="new_pin")
    if len(set(new_pin)) == 1:
        raise ToolError("new_pin must not be four identical digits", field="new_pin")
    s.accounts.edit(account_id).pin = new_pin
    return {"account_id": account_id, "pin_changed": True}


# ---------------------------------------------------------------- discovery (hidden)
@domain.discovery(produces=("customer_id",))
def banking_search_customers(s: BankingState, name: str | None = None, limit: Annotated[int, Field(ge=1, le=200)] = 50
                     ) -> list:
    """Find customers by (part of) their name.

    Args:
        name: Case-insensitive substring of the name; omit to list everyone.
        limit: Maximum number of customers.
    """
    needle = (name or "").lower()
    return [c for c in s.customers.values() if needle in c.name.lower()][:limit]


@domain.discovery(produces=("account_id",))
def banking_list_all_accounts(s: BankingState, min_balance: float = 0.0, status: str | None = None) -> list:
    """Every account (with owner and PIN, for synthesis grounding) with at least ``min_balance``.

    Args:
        min_balance: Only accounts with at least this balance.
        status: Only accounts with this status (active, frozen).
    """
    return [a for a in s.accounts.values() if a.balance >= min_balance and (status is None or a.status == status)]


@domain.discovery
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
