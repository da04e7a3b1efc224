"""Food-delivery browsing and account tools: restaurant search, menus, the customer profile, delivery
addresses (geocoded with the maps rules) and gift cards."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field

from servers.food_delivery.state import (
    MAX_ADDRESSES,
    DeliveryAddress,
    FoodState,
    cart_view,
    customer_addresses,
    get_customer,
    get_restaurant,
    money,
    order_summary,
    restaurant_header,
    restaurant_view,
)
from servers.kit import Money, Name, Sensitive, Text, ToolError, iso, new_id, now, tool
from servers.kit.geo import CITIES
from servers.maps.geocoding import geocode, tokens

Limit = Annotated[int, Field(ge=1, le=50)]
Offset = Annotated[int, Field(ge=0, le=1000)]
GiftCode = Annotated[Sensitive, Field(pattern=r"^[A-Za-z0-9]{4}-[A-Za-z0-9]{4}-[A-Za-z0-9]{4}$")]
Cuisine = Literal["american", "chinese", "indian", "italian", "japanese", "korean", "mediterranean", "mexican",
                  "pizza", "thai", "vegan", "vietnamese"]


def _city(name: str) -> str:
    for c in CITIES:
        if c.name.lower() == name.strip().lower():
            return c.name
    raise ToolError(f"unknown city '{name}': delivery is available in {', '.join(c.name for c in CITIES)}",
                    field="city", code="not_found")


@tool(consumes=("address_id",), produces=("restaurant_id",), read_only=True)
def search_food_restaurants(s: FoodState, delivery_address_id: str | None = None, city: str | None = None,
                            cuisine: Cuisine | None = None, query: str | None = None, open_now: bool = False,
                            deliverable_only: bool = True, max_delivery_fee: Money | None = None,
                            sort_by: Literal["distance", "rating", "delivery_fee", "delivery_time"] = "distance",
                            limit: Limit = 10, offset: Offset = 0) -> dict:
    """Find restaurants to order from, either around one of the customer's delivery addresses (with
    distance, delivery time and whether they deliver there) or anywhere in a city.

    Args:
        delivery_address_id: A saved delivery address (FDA-...) to search around.
        city: City to search in when no delivery address is given.
        cuisine: Only restaurants of this cuisine.
        query: Words in the restaurant's name or a dish on its menu, e.g. "ramen".
        open_now: Only restaurants open at the current time.
        deliverable_only: With a delivery address, hide restaurants that do not deliver there.
        max_delivery_fee: Only restaurants whose delivery fee is at most this.
        sort_by: distance, rating, delivery_fee or delivery_time.
        limit: Maximum number of results.
        offset: Number of results to skip (for the next page).
    """
    addr = None
    if delivery_address_id is not None:
        addr = s.addresses.get(delivery_address_id.strip().upper())
        if addr is None:
            raise ToolError(f"unknown delivery_address_id '{delivery_address_id}'", field="delivery_address_id",
                            code="not_found")
    elif city is None:
        raise ToolError("say where to deliver: give delivery_address_id or a city", field="delivery_address_id")
    in_city = _city(city) if city is not None else addr.city if addr else None
    words = {w for w in tokens(query or "") if w not in ("the", "and", "&")}
    dishes: dict[str, set[str]] = {}
    if words:
        for item in s.menu_items.values():
            dishes.setdefault(item.restaurant_id, set()).update(tokens(item.name))
    rows = []
    for r in s.restaurants.values():
        if r.city != in_city or (cuisine and r.cuisine != cuisine) \
                or (max_delivery_fee is not None and r.delivery_fee > max_delivery_fee):
            continue
        if words and not words <= (set(tokens(r.name)) | dishes.get(r.restaurant_id, set()) | {r.cuisine}):
            continue
        row = restaurant_view(s, r, addr)
        if (open_now and not row["open_now"]) or (addr is not None and deliverable_only and not row["delivers_to_address"]):
            continue
        rows.append(row)
    keys = {"distance": lambda x: (x.get("distance_km", 0.0), x["name"]),
            "rating": lambda x: (-x["rating"], x["name"]), "delivery_fee": lambda x: (x["delivery_fee"], x["name"]),
            "delivery_time": lambda x: (x.get("estimated_delivery_minutes", 0), x["name"])}
    rows.sort(key=keys[sort_by])
    nxt = offset + limit if offset + limit < len(rows) else None
    return {"city": in_city, "total": len(rows), "offset": offset, "next_offset": nxt,
            "results": rows[offset:offset + limit]}


@tool(consumes=("restaurant_id",), produces=("item_id",), read_only=True)
def get_restaurant_menu(s: FoodState, restaurant_id: str, category: str | None = None,
                        vegetarian_only: bool = False) -> dict:
    """Show a restaurant's menu with prices, choices (size, toppings, ...) and what is sold out, plus its
    opening hours, minimum order and delivery fee.

    Args:
        restaurant_id: The restaurant's id (RST-...).
        category: Only this menu section, e.g. "Desserts".
        vegetarian_only: Only vegetarian dishes.
    """
    r = get_restaurant(s, restaurant_id)
    items = [i for i in s.menu_items.values() if i.restaurant_id == r.restaurant_id]
    sections = sorted({i.category for i in items})
    if category is not None:
        match = next((c for c in sections if c.lower() == category.strip().lower()), None)
        if match is None:
            raise ToolError(f"{r.name} has no menu section '{category}'; sections: {', '.join(sections)}",
                            field="category", code="not_found")
        items = [i for i in items if i.category == match]
    if vegetarian_only:
        items = [i for i in items if i.vegetarian]
    return {"restaurant": restaurant_header(s, r), "sections": sections,
            "items": [{"item_id": i.item_id, "name": i.name, "section": i.category, "price": i.price,
                       "vegetarian": i.vegetarian, "spicy": i.spicy, "available": i.available,
                       "choices": [{"group": g.name, "required": g.required, "max_choices": g.max_choices,
                                    "options": [{"name": o.name, "extra_price": o.price} for o in g.options]}
                                   for g in i.option_groups]} for i in items]}


@tool(consumes=("customer_id",), produces=("address_id", "order_id"), read_only=True)
def get_food_customer_profile(s: FoodState, customer_id: str) -> dict:
    """A customer's account: saved delivery addresses, wallet credit, card on file, current cart and
    orders in progress.

    Args:
        customer_id: The customer's id (CUS-...).
    """
    c = get_customer(s, customer_id)
    mine = [o for o in s.orders.values() if o.customer_id == c.customer_id]
    return {"customer_id": c.customer_id, "name": c.name, "email": c.email, "phone": c.phone, "city": c.city,
            "wallet_balance": c.wallet_balance, "card_on_file": f"{c.card_brand} ending {c.card_last4}",
            "addresses": customer_addresses(s, c.customer_id), "used_promo_codes": list(c.used_promos),
            "cart": cart_view(s, c), "active_orders": [order_summary(s, o) for o in mine
                                                       if o.status not in ("delivered", "cancelled")],
            "order_count": len(mine)}


@tool(consumes=("customer_id", "address"), produces=("address_id",))
def add_food_delivery_address(s: FoodState, customer_id: str, address: str, label: Name,
                              dropoff_instructions: Text | None = None) -> dict:
    """Save a new delivery address for a customer. The address must be a real street address the map
    knows (house number, street and city); a customer can keep up to 5 addresses with distinct labels.

    Args:
        customer_id: The customer's id (CUS-...).
        address: Street address, e.g. "412 Oak Street, Boston".
        label: A short name for it, e.g. "Home", "Office" or "Gym".
        dropoff_instructions: Notes for the courier, e.g. "ring twice, 3rd floor".
    """
    c = get_customer(s, customer_id)
    entry = geocode(s.world.get().seed, address, "address")
    mine = customer_addresses(s, c.customer_id)
    same = next((a for a in mine if a.address == entry.formatted_address), None)
    if same is not None:
        raise ToolError(f"{entry.formatted_address} is already saved as '{same.label}' ({same.address_id})",
                        field="address", code="duplicate")
    if any(a.label.lower() == label.strip().lower() for a in mine):
        raise ToolError(f"{c.name} already has an address labelled '{label}'; choose another label", field="label",
                        code="duplicate")
    if len(mine) >= MAX_ADDRESSES:
        raise ToolError(f"{c.name} already has {MAX_ADDRESSES} saved addresses, the maximum", field="customer_id",
                        code="limit")
    aid = new_id(s.counters, "FDA")
    return s.addresses.put(aid, DeliveryAddress(aid, c.customer_id, label.strip(), entry.formatted_address, entry.city,
                                                entry.latitude, entry.longitude, dropoff_instructions))


@tool(consumes=("customer_id", "gift_code"), establishes=("wallet_credit",))
def redeem_food_gift_card(s: FoodState, customer_id: str, gift_code: GiftCode) -> dict:
    """Redeem a gift card into the customer's wallet credit (usable on any order).

    Args:
        customer_id: The customer's id (CUS-...).
        gift_code: The code printed on the gift card, like ABCD-EFGH-JKLM.
    """
    c = get_customer(s, customer_id)
    code = gift_code.strip().upper()
    card = next((g for g in s.gift_cards.values() if g.code == code), None)
    if card is None:
        raise ToolError("gift_code not recognised: check the code on the card", field="gift_code", code="not_found")
    if card.redeemed_by is not None:
        raise ToolError(f"this gift card was already redeemed on {card.redeemed_at[:10]}", field="gift_code",
                        code="used")
    if datetime.fromisoformat(card.expires_at) <= now(s):
        raise ToolError(f"this gift card expired on {card.expires_at[:10]}", field="gift_code", code="expired")
    g = s.gift_cards.edit(card.gift_card_id)
    g.redeemed_by, g.redeemed_at = c.customer_id, iso(now(s))
    cust = s.customers.edit(c.customer_id)
    cust.wallet_balance = money(cust.wallet_balance + card.amount)
    return {"customer_id": c.customer_id, "credited": card.amount, "wallet_balance": cust.wallet_balance}


