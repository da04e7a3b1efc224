"""Hidden, read-only discovery tools that let data synthesis ground queries in real entities."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.kit import discovery, today, value_counts
from servers.shopping.rules import card_expired
from servers.shopping.state import ShoppingState, format_address


@discovery(produces=("customer_id", "address_id", "payment_method_id"))
def shopping_search_customers(s: ShoppingState, name: str | None = None,
                              limit: Annotated[int, Field(ge=1, le=200)] = 50) -> list:
    """Customers (with saved addresses, cards, cart and wishlist contents) whose name contains ``name``.

    Args:
        name: Case-insensitive substring of the customer's name; omit to list everyone.
        limit: Maximum number of customers.
    """
    needle = (name or "").lower()
    now = today(s)
    out = []
    for c in s.customers.values():
        if needle not in c.name.lower():
            continue
        cart = s.carts.get(c.customer_id)
        wishlist = s.wishlists.get(c.customer_id)
        out.append({
            "customer_id": c.customer_id, "name": c.name, "email": c.email,
            "default_address_id": c.default_address_id, "default_payment_method_id": c.default_payment_method_id,
            "addresses": [{"address_id": a.address_id, "address": format_address(a), "state": a.state}
                          for a in s.addresses.values() if a.customer_id == c.customer_id],
            "payment_methods": [{"payment_method_id": p.payment_method_id, "brand": p.brand, "last4": p.last4,
                                 "expired": card_expired(p, now)}
                                for p in s.payment_methods.values() if p.customer_id == c.customer_id],
            "cart": [{"product_id": i.product_id, "size": i.size, "quantity": i.quantity}
                     for i in (cart.items if cart else [])],
            "cart_coupon": cart.coupon_code if cart else None,
            "wishlist": [i.product_id for i in (wishlist.items if wishlist else [])],
        })
    return out[:limit]


@discovery(produces=("coupon_code",))
def shopping_list_coupons(s: ShoppingState, usable_only: bool = False) -> list:
    """Every coupon with its rules and whether it is currently usable (not expired, not exhausted).

    Args:
        usable_only: Only coupons that have not expired and still have uses left.
    """
    now = today(s).isoformat()
    out = []
    for k in s.coupons.values():
        expired = k.expires_on < now
        exhausted = k.usage_limit is not None and k.times_used >= k.usage_limit
        if usable_only and (expired or exhausted):
            continue
        out.append({**k.__dict__, "expired": expired, "exhausted": exhausted})
    return out


@discovery(produces=("order_id", "product_id"))
def shopping_list_all_orders(s: ShoppingState, status: Literal["placed", "shipped", "delivered", "cancelled"]
                             | None = None, customer_id: str | None = None) -> list:
    """Every order (optionally of one status or customer), with items and dates.

    Args:
        status: Only orders in this status.
        customer_id: Only this customer's orders.
    """
    return [o for o in s.orders.values()
            if (status is None or o.status == status) and (customer_id is None or o.customer_id == customer_id)]


@discovery
def shopping_get_unique_values(s: ShoppingState, field: Literal["category", "brand", "order_status",
                                                               "coupon_code", "shipping_method", "card_brand",
                                                               "address_state"]) -> list:
    """Distinct values of a categorical field with their counts.

    Args:
        field: Which field to enumerate.
    """
    source = {
        "category": (s.products, "category"), "brand": (s.products, "brand"),
        "order_status": (s.orders, "status"), "coupon_code": (s.coupons, "code"),
        "shipping_method": (s.orders, "shipping_method"), "card_brand": (s.payment_methods, "brand"),
        "address_state": (s.addresses, "state"),
    }[field]
    return value_counts(getattr(rec, source[1]) for rec in source[0].values())
