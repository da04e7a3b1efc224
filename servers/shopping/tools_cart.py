"""The stateful cart: items, one coupon, shipping estimates and checkout into an order.

A cart persists between calls, so it can go stale: an item may sell out after it was added and an
applied coupon may expire or stop qualifying when items are removed. Checkout re-checks everything
and refuses with the reason instead of silently dropping anything.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from servers.kit import ToolError, iso, new_id, require, today, tool
from servers.shopping.rules import (
    card_expired,
    cart_lines,
    cart_summary,
    check_quantity,
    coupon_problem,
    edit_cart,
    get_cart,
    get_product,
    owned_address,
    owned_payment_method,
    resolve_size,
)
from servers.shopping.state import (
    CARRIERS,
    REMOTE_STATES,
    SHIPPING,
    Address,
    Cart,
    CartItem,
    Order,
    OrderItem,
    ShippingMethod,
    ShoppingState,
    add_business_days,
    format_address,
    shipping_quote,
)

Quantity = Annotated[int, Field(ge=1, le=99)]


def _find_line(s: ShoppingState, cart: Cart, product_id: str, size: str | None) -> int:
    """Index of the cart line for (product, size); a sized product in one size needs no size."""
    get_product(s, product_id)
    matches = [i for i, it in enumerate(cart.items) if it.product_id == product_id
               and (size is None or it.size == size)]
    if not matches:
        what = f"{product_id}" + (f" in size {size}" if size else "")
        raise ToolError(f"{what} is not in customer {cart.customer_id}'s cart", field="product_id",
                        code="not_found")
    if len(matches) > 1:
        sizes = ", ".join(str(cart.items[i].size) for i in matches)
        raise ToolError(f"the cart holds {product_id} in several sizes ({sizes}); give size", field="size")
    return matches[0]


@tool(consumes=("customer_id", "product_id"), establishes=("cart_not_empty", "product_in_cart"))
def add_to_shopping_cart(s: ShoppingState, customer_id: str, product_id: str, quantity: Quantity = 1,
                         size: str | None = None) -> dict:
    """Add a product to a customer's cart (adds to the quantity if the same item is already there).
    Stock and the per-order limit are checked.

    Args:
        customer_id: The customer's id.
        product_id: The product to add.
        quantity: How many units to add (at least 1).
        size: The size, required for apparel and shoes (see get_catalog_product), omitted otherwise.
    """
    product = get_product(s, product_id)
    size = resolve_size(product, size)
    cart = get_cart(s, customer_id)
    already = sum(it.quantity for it in cart.items if it.product_id == product_id and it.size == size)
    check_quantity(product, size, already + quantity)
    cart = edit_cart(s, customer_id)
    for item in cart.items:
        if item.product_id == product_id and item.size == size:
            item.quantity += quantity
            break
    else:
        cart.items.append(CartItem(product_id, size, quantity, today(s).isoformat()))
    return cart_summary(s, customer_id)


@tool(consumes=("customer_id", "product_id"), requires=("product_in_cart",))
def update_shopping_cart_quantity(s: ShoppingState, customer_id: str, product_id: str, quantity: Quantity,
                                  size: str | None = None) -> dict:
    """Set the quantity of an item already in the cart (use remove_from_shopping_cart to drop it).

    Args:
        customer_id: The customer's id.
        product_id: The product whose quantity changes.
        quantity: The new quantity (at least 1).
        size: The size of the cart line, needed only when the product is in the cart in several sizes.
    """
    index = _find_line(s, get_cart(s, customer_id), product_id, size)
    cart = edit_cart(s, customer_id)
    item = cart.items[index]
    check_quantity(s.products[product_id], item.size, quantity)
    item.quantity = quantity
    return cart_summary(s, customer_id)


@tool(consumes=("customer_id", "product_id"), requires=("product_in_cart",))
def remove_from_shopping_cart(s: ShoppingState, customer_id: str, product_id: str, size: str | None = None
                              ) -> dict:
    """Remove an item from a customer's cart.

    Args:
        customer_id: The customer's id.
        product_id: The product to remove.
        size: The size of the cart line, needed only when the product is in the cart in several sizes.
    """
    index = _find_line(s, get_cart(s, customer_id), product_id, size)
    cart = edit_cart(s, customer_id)
    del cart.items[index]
    return cart_summary(s, customer_id)


@tool(consumes=("customer_id",), produces=("product_id",), read_only=True)
def view_shopping_cart(s: ShoppingState, customer_id: str) -> dict:
    """Show a customer's cart: items, stock, applied coupon and discount, tax and total before shipping,
    plus warnings about anything that would block checkout.

    Args:
        customer_id: The customer's id.
    """
    return cart_summary(s, customer_id)


@tool(consumes=("customer_id",))
def clear_shopping_cart(s: ShoppingState, customer_id: str) -> dict:
    """Empty a customer's cart and drop any applied coupon.

    Args:
        customer_id: The customer's id.
    """
    removed = len(get_cart(s, customer_id).items)
    cart = edit_cart(s, customer_id)
    cart.items, cart.coupon_code = [], None
    return {"customer_id": customer_id, "removed_items": removed, "cart_empty": True}


@tool(consumes=("customer_id", "coupon_code"), requires=("cart_not_empty",), establishes=("coupon_applied",))
def apply_cart_coupon(s: ShoppingState, customer_id: str, coupon_code: str) -> dict:
    """Apply a coupon code to a customer's cart (one coupon per order). Checks expiry, usage limits,
    minimum order and category restrictions.

    Args:
        customer_id: The customer's id.
        coupon_code: The coupon code as given by the customer, e.g. WELCOME10.
    """
    code = coupon_code.strip().upper()
    coupon = require(s.coupons, code, "coupon_code")
    cart = get_cart(s, customer_id)
    if cart.coupon_code == code:
        raise ToolError(f"coupon {code} is already applied to this cart", field="coupon_code", code="duplicate")
    if cart.coupon_code is not None:
        raise ToolError(f"the cart already has coupon {cart.coupon_code}; only one coupon per order (remove it "
                        "first)", field="coupon_code", code="illegal_state")
    problem = coupon_problem(s, coupon, customer_id, cart_lines(s, cart))
    if problem is not None:
        raise problem
    edit_cart(s, customer_id).coupon_code = code
    return cart_summary(s, customer_id)


@tool(consumes=("customer_id",), requires=("coupon_applied",))
def remove_cart_coupon(s: ShoppingState, customer_id: str) -> dict:
    """Remove the coupon applied to a customer's cart.

    Args:
        customer_id: The customer's id.
    """
    if get_cart(s, customer_id).coupon_code is None:
        raise ToolError(f"customer {customer_id}'s cart has no coupon applied", field="customer_id",
                        code="illegal_state")
    edit_cart(s, customer_id).coupon_code = None
    return cart_summary(s, customer_id)


def _shipping_block(s: ShoppingState, method: str, address: Address, cart: Cart) -> str | None:
    """Why ``method`` cannot deliver this cart to ``address`` (None if it can)."""
    if method != "overnight":
        return None
    if address.state in REMOTE_STATES:
        return f"overnight shipping is not available to {address.state}"
    bulky = [s.products[i.product_id].name for i in cart.items if s.products[i.product_id].bulky]
    if bulky:
        return f"overnight shipping is not available for oversized items ({', '.join(bulky)})"
    return None


def _nonempty_cart(s: ShoppingState, customer_id: str) -> Cart:
    cart = get_cart(s, customer_id)
    if not cart.items:
        raise ToolError(f"customer {customer_id}'s cart is empty", field="customer_id", code="empty_cart")
    return cart


@tool(consumes=("customer_id", "address_id"), requires=("cart_not_empty",), read_only=True)
def estimate_cart_shipping(s: ShoppingState, customer_id: str, address_id: str) -> dict:
    """Compare shipping options (standard, express, overnight) for the cart to a saved address: price,
    estimated delivery date and availability. Standard shipping is free from $50 after discounts.

    Args:
        customer_id: The customer's id.
        address_id: One of the customer's saved addresses.
    """
    cart = _nonempty_cart(s, customer_id)
    address = owned_address(s, customer_id, address_id)
    summary = cart_summary(s, customer_id)
    after_discount = summary["subtotal"] - summary["discount"]
    options = []
    for method in SHIPPING:
        price, days = shipping_quote(method, address.state, after_discount)
        block = _shipping_block(s, method, address, cart)
        options.append({"shipping_method": method, "price": price, "business_days": days,
                        "estimated_delivery": iso(add_business_days(today(s), days + 1)), "carrier": CARRIERS[method],
                        "available": block is None, "unavailable_reason": block})
    return {"customer_id": customer_id, "address_id": address_id, "ship_to": format_address(address),
            "subtotal_after_discount": round(after_discount, 2), "options": options}


@tool(consumes=("customer_id", "address_id", "payment_method_id"), produces=("order_id",),
             requires=("cart_not_empty",))
def checkout_shopping_cart(s: ShoppingState, customer_id: str, address_id: str, payment_method_id: str,
                           shipping_method: ShippingMethod = "standard") -> dict:
    """Place an order for everything in a customer's cart: charges the saved card, reserves stock,
    redeems the applied coupon and empties the cart.

    Args:
        customer_id: The customer's id.
        address_id: One of the customer's saved addresses to ship to.
        payment_method_id: One of the customer's saved cards to charge.
        shipping_method: Shipping speed.
    """
    cart = _nonempty_cart(s, customer_id)
    address = owned_address(s, customer_id, address_id)
    pm = owned_payment_method(s, customer_id, payment_method_id)
    now = today(s)
    if card_expired(pm, now):
        raise ToolError(f"card {payment_method_id} ({pm.brand} ending {pm.last4}) expired "
                        f"{pm.exp_month:02d}/{pm.exp_year}", field="payment_method_id", code="expired")
    block = _shipping_block(s, shipping_method, address, cart)
    if block is not None:
        raise ToolError(block, field="shipping_method", code="unavailable")
    for item in cart.items:
        check_quantity(s.products[item.product_id], item.size, item.quantity)
    summary = cart_summary(s, customer_id)
    coupon_code = cart.coupon_code
    if coupon_code is not None:
        problem = coupon_problem(s, s.coupons[coupon_code], customer_id, summary["items"])
        if problem is not None:
            raise ToolError(f"{problem}; remove the coupon or change the cart", field="coupon_code",
                            code=problem.code)
        coupon = s.coupons.edit(coupon_code)
        coupon.times_used += 1
        if customer_id not in coupon.used_by:
            coupon.used_by.append(customer_id)
    items: list[OrderItem] = []
    for item in cart.items:
        product = s.products.edit(item.product_id)
        product.stock -= item.quantity
        if item.size is not None:
            product.stock_by_size[item.size] -= item.quantity
        items.append(OrderItem(product.product_id, product.name, item.size, item.quantity, product.price,
                               product.returnable))
    after_discount = round(summary["subtotal"] - summary["discount"], 2)
    ship_cost, days = shipping_quote(shipping_method, address.state, after_discount)
    oid = new_id(s.counters, "ORD-N", 5)
    order = s.orders.put(oid, Order(
        oid, customer_id, "placed", items, summary["subtotal"], summary["discount"], coupon_code, shipping_method,
        ship_cost, summary["tax"], round(after_discount + ship_cost + summary["tax"], 2), address_id,
        format_address(address), payment_method_id, now.isoformat(),
        iso(add_business_days(now, days + 1)), CARRIERS[shipping_method],
    ))
    emptied = edit_cart(s, customer_id)
    emptied.items, emptied.coupon_code = [], None
    result: dict[str, Any] = {"order_id": oid, "status": order.status, "items": items,
                              "subtotal": order.subtotal, "discount": order.discount, "coupon_code": coupon_code,
                              "shipping_method": shipping_method, "shipping_cost": ship_cost, "tax": order.tax,
                              "total": order.total, "charged_to": f"{pm.brand} ending {pm.last4}",
                              "ship_to": order.ship_to, "estimated_delivery": order.estimated_delivery}
    return result
