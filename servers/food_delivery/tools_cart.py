"""Food-delivery cart tools: one cart per customer, holding items from one restaurant at a time."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from servers.food_delivery.state import (
    MAX_LINE_QTY,
    Cart,
    CartLine,
    FoodState,
    MenuItem,
    cart_view,
    check_promo,
    get_address,
    get_customer,
    get_item,
    money,
)
from servers.kit import Text, ToolError, iso, new_id, now, tool

Quantity = Annotated[int, Field(ge=1, le=MAX_LINE_QTY)]
NewQuantity = Annotated[int, Field(ge=0, le=MAX_LINE_QTY)]


def _choose(item: MenuItem, options: list[str]) -> tuple[list[str], float]:
    """Validate chosen options against the item's groups; returns (canonical names, extra price)."""
    by_name = {o.name.lower(): (g, o) for g in item.option_groups for o in g.options}
    chosen, extra, per_group = [], 0.0, {}
    for raw in options:
        hit = by_name.get(raw.strip().lower())
        if hit is None:
            valid = ", ".join(o.name for g in item.option_groups for o in g.options) or "none"
            raise ToolError(f"'{raw}' is not a choice for {item.name} (choices: {valid})", field="options")
        g, o = hit
        if o.name in chosen:
            raise ToolError(f"option '{o.name}' was given twice", field="options")
        per_group[g.name] = per_group.get(g.name, 0) + 1
        chosen.append(o.name)
        extra += o.price
    for g in item.option_groups:
        got = per_group.get(g.name, 0)
        if g.required and got == 0:
            raise ToolError(f"{item.name} needs a choice of {g.name.lower()}: one of "
                            f"{', '.join(o.name for o in g.options)}", field="options")
        if got > g.max_choices:
            raise ToolError(f"{item.name} allows at most {g.max_choices} choice(s) of {g.name.lower()}", field="options")
    return chosen, extra


@tool(consumes=("customer_id", "item_id"), produces=("cart_line_id",), establishes=("cart_nonempty",))
def add_item_to_food_cart(s: FoodState, customer_id: str, item_id: str, quantity: Quantity = 1,
                          options: list[str] | None = None, special_instructions: Text | None = None) -> dict:
    """Put a dish in the customer's cart, with its choices (size, toppings, ...). A cart holds dishes from
    one restaurant only, and sold-out dishes cannot be added.

    Args:
        customer_id: The customer's id (CUS-...).
        item_id: The menu item's id (ITM-...).
        quantity: How many (1-20).
        options: Names of the chosen options, e.g. ["Large", "Extra cheese"]; required choices must be given.
        special_instructions: A note for the kitchen, e.g. "no onions".
    """
    c = get_customer(s, customer_id)
    item = get_item(s, item_id)
    r = s.restaurants[item.restaurant_id]
    if not item.available:
        raise ToolError(f"{item.name} is sold out at {r.name} right now; pick another dish", field="item_id",
                        code="unavailable")
    cart = s.carts.get(c.customer_id)
    if cart is not None and cart.restaurant_id != r.restaurant_id:
        raise ToolError(f"the cart already holds dishes from {s.restaurants[cart.restaurant_id].name}; a cart can "
                        f"only hold one restaurant's dishes — clear the cart first to order from {r.name}",
                        field="item_id", code="conflict")
    chosen, extra = _choose(item, options or [])
    note = special_instructions.strip() if special_instructions else None
    if cart is None:
        cart = s.carts.put(c.customer_id, Cart(c.customer_id, r.restaurant_id, [], None, iso(now(s))))
    else:
        cart = s.carts.edit(c.customer_id)
    same = next((x for x in cart.lines if x.item_id == item.item_id and sorted(x.options) == sorted(chosen)
                 and x.special_instructions == note), None)
    if same is not None:
        if same.quantity + quantity > MAX_LINE_QTY:
            raise ToolError(f"at most {MAX_LINE_QTY} of one dish per order (cart already has {same.quantity})",
                            field="quantity", code="limit")
        same.quantity += quantity
    else:
        lid = new_id(s.counters, "CL")
        cart.lines.append(CartLine(lid, item.item_id, item.name, quantity, chosen, money(item.price + extra), note))
    cart.updated_at = iso(now(s))
    return cart_view(s, c)


@tool(consumes=("customer_id", "cart_line_id"), requires=("cart_nonempty",))
def update_food_cart_item(s: FoodState, customer_id: str, line_id: str, quantity: NewQuantity) -> dict:
    """Change how many of a dish are in the cart; quantity 0 takes it out (an emptied cart is cleared).

    Args:
        customer_id: The customer's id (CUS-...).
        line_id: The cart line to change (CL-..., from the cart).
        quantity: The new quantity (0 removes the line).
    """
    c = get_customer(s, customer_id)
    cart = s.carts.get(c.customer_id)
    if cart is None:
        raise ToolError(f"{c.name}'s cart is empty", field="customer_id", code="precondition")
    key = line_id.strip().upper()
    if not any(x.line_id == key for x in cart.lines):
        raise ToolError(f"unknown line_id '{line_id}': the cart has lines {', '.join(x.line_id for x in cart.lines)}",
                        field="line_id", code="not_found")
    cart = s.carts.edit(c.customer_id)
    if quantity == 0:
        cart.lines = [x for x in cart.lines if x.line_id != key]
    else:
        next(x for x in cart.lines if x.line_id == key).quantity = quantity
    cart.updated_at = iso(now(s))
    if not cart.lines:
        s.carts.delete(c.customer_id)
    return cart_view(s, c)


@tool(consumes=("customer_id", "address_id"), produces=("cart_line_id",), read_only=True)
def view_food_cart(s: FoodState, customer_id: str, delivery_address_id: str | None = None) -> dict:
    """Show the customer's cart: dishes, subtotal, fees, promo discount, estimated total and whether the
    minimum order is met; with an address, also whether the restaurant delivers there.

    Args:
        customer_id: The customer's id (CUS-...).
        delivery_address_id: A saved delivery address (FDA-...) to check delivery to.
    """
    c = get_customer(s, customer_id)
    addr = get_address(s, c, delivery_address_id) if delivery_address_id is not None else None
    return cart_view(s, c, addr)


@tool(consumes=("customer_id",), requires=("cart_nonempty",))
def clear_food_cart(s: FoodState, customer_id: str) -> dict:
    """Empty the customer's cart (dishes and any promo code).

    Args:
        customer_id: The customer's id (CUS-...).
    """
    c = get_customer(s, customer_id)
    if c.customer_id not in s.carts:
        raise ToolError(f"{c.name}'s cart is already empty", field="customer_id", code="precondition")
    s.carts.delete(c.customer_id)
    return cart_view(s, c)


@tool(consumes=("customer_id", "promo_code"), requires=("cart_nonempty",), establishes=("promo_applied",))
def apply_food_promo_code(s: FoodState, customer_id: str, promo_code: str | None = None) -> dict:
    """Apply a promo code to the cart (replacing any other), or remove the applied code when no code is given.
    Codes expire, may need a minimum subtotal, may be tied to one restaurant or to a first order, and work
    once per customer.

    Args:
        customer_id: The customer's id (CUS-...).
        promo_code: The code, e.g. SAVE5; omit to remove the code now on the cart.
    """
    c = get_customer(s, customer_id)
    cart = s.carts.get(c.customer_id)
    if cart is None:
        raise ToolError(f"{c.name}'s cart is empty: add dishes before applying a promo code", field="customer_id",
                        code="precondition")
    if promo_code is None:
        if cart.promo_code is None:
            raise ToolError("there is no promo code on the cart to remove", field="promo_code", code="precondition")
        s.carts.edit(c.customer_id).promo_code = None
        return cart_view(s, c)
    p = s.promos.get(promo_code.strip().upper())
    if p is None:
        raise ToolError(f"promo code '{promo_code}' does not exist", field="promo_code", code="not_found")
    check_promo(s, c, cart, p)
    s.carts.edit(c.customer_id).promo_code = p.code
    return cart_view(s, c)
