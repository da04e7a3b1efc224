"""A shopper's account: profile, saved shipping addresses and saved payment cards.

Card numbers and security codes are sensitive parameters: they must come from the customer. Only the
brand and last four digits are stored; checkout refers to a card by its payment_method_id.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from servers.kit import Name, Sensitive, ToolError, new_id, today, tool
from servers.shopping.rules import card_expired, get_customer
from servers.shopping.state import MAX_SAVED_ADDRESSES, Address, PaymentMethod, ShoppingState, format_address

US_STATES = frozenset((
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL", "IN", "IA",
    "KS", "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM",
    "NY", "NC", "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA",
    "WV", "WI", "WY",
))
CardNumber = Annotated[Sensitive, Field(pattern=r"^\d{13,19}$")]
SecurityCode = Annotated[Sensitive, Field(pattern=r"^\d{3,4}$")]


@tool(consumes=("customer_id",), produces=("address_id", "payment_method_id"), read_only=True)
def get_shopper_profile(s: ShoppingState, customer_id: str) -> dict:
    """Get a customer's store profile: contact details, saved shipping addresses and saved cards
    (brand, last 4 digits, expiry) with the defaults marked.

    Args:
        customer_id: The customer's id, e.g. CUS-0001.
    """
    c = get_customer(s, customer_id)
    now = today(s)
    return {
        "customer_id": c.customer_id, "name": c.name, "email": c.email, "phone": c.phone,
        "member_since": c.member_since,
        "addresses": [{"address_id": a.address_id, "address": format_address(a), "state": a.state,
                       "is_default": a.address_id == c.default_address_id}
                      for a in s.addresses.values() if a.customer_id == customer_id],
        "payment_methods": [{"payment_method_id": p.payment_method_id, "brand": p.brand, "last4": p.last4,
                             "expires": f"{p.exp_month:02d}/{p.exp_year}", "expired": card_expired(p, now),
                             "is_default": p.payment_method_id == c.default_payment_method_id}
                            for p in s.payment_methods.values() if p.customer_id == customer_id],
    }


@tool(consumes=("customer_id",), produces=("address_id",))
def add_shipping_address(s: ShoppingState, customer_id: str, recipient_name: Name, street: str, city: str,
                         state: Annotated[str, Field(pattern=r"^[A-Z]{2}$")],
                         zip_code: Annotated[str, Field(pattern=r"^\d{5}(-\d{4})?$")],
                         make_default: bool = False) -> dict:
    """Save a new shipping address for a customer (US addresses only).

    Args:
        customer_id: The customer's id.
        recipient_name: Who the parcel is addressed to.
        street: Street address, including apartment or suite.
        city: City.
        state: Two-letter US state code, e.g. CA.
        zip_code: 5-digit ZIP code (optionally ZIP+4).
        make_default: Use this address by default for future orders.
    """
    get_customer(s, customer_id)
    if state not in US_STATES:
        raise ToolError(f"'{state}' is not a US state code; the store ships within the US only", field="state")
    if not recipient_name.strip() or not street.strip() or not city.strip():
        raise ToolError("recipient_name, street and city must not be empty", field="street")
    saved = [a for a in s.addresses.values() if a.customer_id == customer_id]
    for a in saved:
        if a.street.strip().lower() == street.strip().lower() and a.zip_code[:5] == zip_code[:5]:
            raise ToolError(f"this address is already saved as {a.address_id}", field="street", code="duplicate")
    if len(saved) >= MAX_SAVED_ADDRESSES:
        raise ToolError(f"customer {customer_id} already has {MAX_SAVED_ADDRESSES} saved addresses (the maximum)",
                        field="customer_id", code="limit")
    aid = new_id(s.counters, "ADR-N")
    address = s.addresses.put(aid, Address(aid, customer_id, recipient_name.strip(), street.strip(), city.strip(),
                                           state, zip_code))
    if make_default or s.customers[customer_id].default_address_id is None:
        s.customers.edit(customer_id).default_address_id = aid
    return {"address_id": aid, "address": format_address(address),
            "is_default": s.customers[customer_id].default_address_id == aid}


def _luhn_ok(number: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(number)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _card_brand(number: str) -> str | None:
    if number.startswith("4") and len(number) in (13, 16, 19):
        return "visa"
    if number[:2] in ("51", "52", "53", "54", "55") and len(number) == 16:
        return "mastercard"
    if number[:2] in ("34", "37") and len(number) == 15:
        return "amex"
    if number.startswith("6011") or number.startswith("65"):
        return "discover" if len(number) == 16 else None
    return None


@tool(consumes=("customer_id",), produces=("payment_method_id",))
def add_shopper_payment_card(s: ShoppingState, customer_id: str, card_number: CardNumber,
                             exp_month: Annotated[int, Field(ge=1, le=12)],
                             exp_year: Annotated[int, Field(ge=2000, le=2100)], security_code: SecurityCode,
                             cardholder_name: Name | None = None, make_default: bool = False) -> dict:
    """Save a credit or debit card to a customer's account for checkout (Visa, Mastercard, Amex,
    Discover). Only the brand and last 4 digits are kept.

    Args:
        customer_id: The customer's id.
        card_number: The full card number as given by the customer (digits only).
        exp_month: Expiry month (1-12).
        exp_year: Expiry year, four digits.
        security_code: The card's CVV/CVC (4 digits for Amex, 3 otherwise).
        cardholder_name: Name on the card; defaults to the customer's name.
        make_default: Use this card by default for future orders.
    """
    customer = get_customer(s, customer_id)
    if not _luhn_ok(card_number):
        raise ToolError("card_number is not a valid card number (checksum failed)", field="card_number")
    brand = _card_brand(card_number)
    if brand is None:
        raise ToolError("card_number is not a Visa, Mastercard, Amex or Discover card", field="card_number")
    if len(security_code) != (4 if brand == "amex" else 3):
        raise ToolError(f"{brand} cards have a {4 if brand == 'amex' else 3}-digit security code",
                        field="security_code")
    probe = PaymentMethod("", customer_id, brand, card_number[-4:], exp_month, exp_year, "")
    if card_expired(probe, today(s)):
        raise ToolError(f"the card expired in {exp_month:02d}/{exp_year}", field="exp_year", code="expired")
    for pm in s.payment_methods.values():
        if (pm.customer_id == customer_id and pm.brand == brand and pm.last4 == card_number[-4:]
                and (pm.exp_month, pm.exp_year) == (exp_month, exp_year)):
            raise ToolError(f"this card is already saved as {pm.payment_method_id}", field="card_number",
                            code="duplicate")
    pmid = new_id(s.counters, "PM-N")
    s.payment_methods.put(pmid, PaymentMethod(pmid, customer_id, brand, card_number[-4:], exp_month, exp_year,
                                              (cardholder_name or customer.name).strip()))
    if make_default or customer.default_payment_method_id is None:
        s.customers.edit(customer_id).default_payment_method_id = pmid
    return {"payment_method_id": pmid, "brand": brand, "last4": card_number[-4:],
            "expires": f"{exp_month:02d}/{exp_year}",
            "is_default": s.customers[customer_id].default_payment_method_id == pmid}
