"""Food-delivery discovery tools (hidden from the model): customers with their addresses, orders and
gift-card codes (secrets the user would know), restaurants with their opening state, promotions, and
categorical values — what synthesis needs to ground a request in live state."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from servers.food_delivery.state import FoodState, customer_addresses, opening, order_summary
from servers.kit import discovery, now, value_counts


@discovery(produces=("customer_id", "address_id", "order_id", "gift_code"))
def food_delivery_list_customers(s: FoodState, city: str | None = None) -> list:
    """Every customer with addresses, wallet, card, cart, orders (with status) and gift cards they hold.

    Args:
        city: Only customers living in this city (exact name).
    """
    out = []
    at = now(s)
    for c in s.customers.values():
        if city is not None and c.city != city:
            continue
        cart = s.carts.get(c.customer_id)
        out.append({
            "customer_id": c.customer_id, "name": c.name, "email": c.email, "phone": c.phone, "city": c.city,
            "wallet_balance": c.wallet_balance, "card": f"{c.card_brand} {c.card_last4}",
            "used_promos": list(c.used_promos),
            "addresses": [{"address_id": a.address_id, "label": a.label, "address": a.address}
                          for a in customer_addresses(s, c.customer_id)],
            "cart_restaurant_id": cart.restaurant_id if cart else None,
            "orders": [order_summary(s, o) for o in s.orders.values() if o.customer_id == c.customer_id],
            "gift_cards": [{"code": g.code, "amount": g.amount, "redeemed": g.redeemed_by is not None,
                            "expired": datetime.fromisoformat(g.expires_at) <= at}
                           for g in s.gift_cards.values() if g.holder_customer_id == c.customer_id],
        })
    return out


@discovery(produces=("restaurant_id", "item_id"))
def food_delivery_list_restaurants(s: FoodState, city: str | None = None, open_now: bool | None = None) -> list:
    """Every restaurant with city, cuisine, opening state, minimum order, radius and sold-out items.

    Args:
        city: Only restaurants in this city (exact name).
        open_now: True for open restaurants only, False for closed ones only.
    """
    sold_out: dict[str, list[str]] = {}
    counts: dict[str, int] = {}
    for i in s.menu_items.values():
        counts[i.restaurant_id] = counts.get(i.restaurant_id, 0) + 1
        if not i.available:
            sold_out.setdefault(i.restaurant_id, []).append(i.item_id)
    out = []
    for r in s.restaurants.values():
        o = opening(s, r)
        if (city is not None and r.city != city) or (open_now is not None and o["open_now"] != open_now):
            continue
        out.append({"restaurant_id": r.restaurant_id, "name": r.name, "cuisine": r.cuisine, "city": r.city,
                    "address": r.address, "maps_place_id": r.maps_place_id, "open_now": o["open_now"],
                    "opens_at": o["opens_at"], "min_order": r.min_order, "delivery_fee": r.delivery_fee,
                    "delivery_radius_km": r.delivery_radius_km, "menu_size": counts.get(r.restaurant_id, 0),
                    "sold_out_item_ids": sold_out.get(r.restaurant_id, [])})
    return out


@discovery(produces=("promo_code",))
def food_delivery_list_promotions(s: FoodState) -> list:
    """Every promo code with its terms and whether it has expired at the current time."""
    at = now(s)
    return [{"code": p.code, "description": p.description, "kind": p.kind, "value": p.value,
             "min_subtotal": p.min_subtotal, "max_discount": p.max_discount, "expires_at": p.expires_at,
             "expired": datetime.fromisoformat(p.expires_at) <= at, "restaurant_id": p.restaurant_id,
             "first_order_only": p.first_order_only} for p in s.promos.values()]


@discovery
def food_delivery_get_unique_values(s: FoodState, field: Literal["city", "cuisine", "order_status", "menu_section",
                                                                 "address_label"]) -> list:
    """Distinct values of a categorical field with their counts.

    Args:
        field: Which field to enumerate.
    """
    if field == "order_status":
        return value_counts(o.status for o in s.orders.values())
    if field == "menu_section":
        return value_counts(i.category for i in s.menu_items.values())
    if field == "address_label":
        return value_counts(a.label for a in s.addresses.values())
    return value_counts(getattr(r, field) for r in s.restaurants.values())
