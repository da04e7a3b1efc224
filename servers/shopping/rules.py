"""The store's business rules, shared by every tool module, and the passage of time (``progress_orders``).

Keeping pricing, coupon eligibility and stock checks in one place means the cart view, the shipping
estimate and checkout can never disagree about what an order costs or why it is refused.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from servers.kit import ToolError, require, today
from servers.shopping.state import (
    TAX_RATE,
    Address,
    Cart,
    Coupon,
    Customer,
    Order,
    PaymentMethod,
    Product,
    ShoppingState,
    add_business_days,
    coupon_discount,
)


def get_customer(s: ShoppingState, customer_id: str) -> Customer:
    return require(s.customers, customer_id, "customer_id")


def get_product(s: ShoppingState, product_id: str, field: str = "product_id") -> Product:
    return require(s.products, product_id, field)


def get_cart(s: ShoppingState, customer_id: str) -> Cart:
    get_customer(s, customer_id)
    return s.carts.get(customer_id) or Cart(customer_id)


def edit_cart(s: ShoppingState, customer_id: str) -> Cart:
    """The customer's cart, owned by this call (created on first use)."""
    get_customer(s, customer_id)
    if customer_id not in s.carts:
        return s.carts.put(customer_id, Cart(customer_id))
    return s.carts.edit(customer_id)


def owned_address(s: ShoppingState, customer_id: str, address_id: str) -> Address:
    address = require(s.addresses, address_id, "address_id")
    if address.customer_id != customer_id:
        raise ToolError(f"address_id {address_id} is not one of customer {customer_id}'s saved addresses",
                        field="address_id")
    return address


def owned_payment_method(s: ShoppingState, customer_id: str, payment_method_id: str) -> PaymentMethod:
    pm = require(s.payment_methods, payment_method_id, "payment_method_id")
    if pm.customer_id != customer_id:
        raise ToolError(f"payment_method_id {payment_method_id} does not belong to customer {customer_id}",
                        field="payment_method_id")
    return pm


def card_expired(pm: PaymentMethod, on: date) -> bool:
    """Cards are valid through the last day of their expiry month."""
    return (pm.exp_year, pm.exp_month) < (on.year, on.month)


def resolve_size(product: Product, size: str | None) -> str | None:
    """Validate the size argument against the product: required for sized items, refused otherwise."""
    if product.sizes:
        if size is None:
            raise ToolError(f"product {product.product_id} comes in sizes {', '.join(product.sizes)}; give a size",
                            field="size")
        if size not in product.sizes:
            raise ToolError(f"size '{size}' does not exist for {product.product_id}; available sizes: "
                            f"{', '.join(product.sizes)}", field="size")
        return size
    if size is not None:
        raise ToolError(f"product {product.product_id} is not sold in sizes; omit size", field="size")
    return None


def units_available(product: Product, size: str | None) -> int:
    return product.stock_by_size.get(size, 0) if size is not None else product.stock


def check_quantity(product: Product, size: str | None, quantity: int) -> None:
    """Refuse a cart or order quantity the store cannot honour (stock, per-order limit)."""
    label = f"{product.product_id}" + (f" size {size}" if size else "")
    if quantity > product.max_per_order:
        raise ToolError(f"{product.name} is limited to {product.max_per_order} per order", field="quantity",
                        code="limit")
    available = units_available(product, size)
    if available == 0:
        raise ToolError(f"{product.name} ({label}) is out of stock", field="product_id", code="out_of_stock")
    if quantity > available:
        raise ToolError(f"only {available} unit(s) of {product.name} ({label}) in stock; {quantity} requested",
                        field="quantity", code="insufficient_stock")


def cart_lines(s: ShoppingState, cart: Cart) -> list[dict[str, Any]]:
    rows = []
    for item in cart.items:
        product = s.products[item.product_id]
        available = units_available(product, item.size)
        rows.append({
            "product_id": item.product_id, "name": product.name, "category": product.category,
            "size": item.size, "quantity": item.quantity, "unit_price": product.price,
            "line_total": round(product.price * item.quantity, 2), "units_in_stock": available,
            "available": available >= item.quantity,
        })
    return rows


def coupon_problem(s: ShoppingState, coupon: Coupon, customer_id: str, lines: list[dict[str, Any]]
                   ) -> ToolError | None:
    """Why ``coupon`` cannot be used on these cart lines right now (None if it can)."""
    code = coupon.code
    if date.fromisoformat(coupon.expires_on) < today(s):
        return ToolError(f"coupon {code} expired on {coupon.expires_on}", field="coupon_code", code="expired")
    if coupon.usage_limit is not None and coupon.times_used >= coupon.usage_limit:
        return ToolError(f"coupon {code} has reached its usage limit of {coupon.usage_limit}",
                         field="coupon_code", code="limit")
    if coupon.once_per_customer and customer_id in coupon.used_by:
        return ToolError(f"coupon {code} can be used once per customer and {customer_id} already used it",
                         field="coupon_code", code="already_used")
    if not lines:
        return ToolError("the cart is empty; add items before using a coupon", field="customer_id",
                         code="empty_cart")
    eligible = eligible_subtotal(coupon, lines)
    if coupon.category is not None and eligible == 0:
        return ToolError(f"coupon {code} only applies to {coupon.category} items and the cart has none",
                         field="coupon_code", code="not_applicable")
    if eligible < coupon.min_order:
        scope = f"{coupon.category} items" if coupon.category else "the order"
        return ToolError(f"coupon {code} needs a minimum of {coupon.min_order:.2f} on {scope}; the cart has "
                         f"{eligible:.2f}", field="coupon_code", code="minimum_not_met")
    return None


def eligible_subtotal(coupon: Coupon, lines: list[dict[str, Any]]) -> float:
    return round(sum(r["line_total"] for r in lines if coupon.category in (None, r["category"])), 2)


def cart_summary(s: ShoppingState, customer_id: str) -> dict[str, Any]:
    """The cart with prices, the coupon's effect (or why it no longer applies), tax and total."""
    cart = get_cart(s, customer_id)
    lines = cart_lines(s, cart)
    subtotal = round(sum(r["line_total"] for r in lines), 2)
    discount, warnings = 0.0, []
    coupon = s.coupons.get(cart.coupon_code) if cart.coupon_code else None
    if coupon is not None:
        problem = coupon_problem(s, coupon, customer_id, lines)
        if problem is None:
            discount = coupon_discount(coupon, eligible_subtotal(coupon, lines))
        else:
            warnings.append(f"coupon no longer applies: {problem}")
    for r in lines:
        if not r["available"]:
            warnings.append(f"{r['name']} has only {r['units_in_stock']} unit(s) in stock")
    taxable = round(subtotal - discount, 2)
    tax = round(taxable * TAX_RATE, 2)
    return {
        "customer_id": customer_id, "items": lines, "item_count": sum(r["quantity"] for r in lines),
        "subtotal": subtotal, "coupon_code": cart.coupon_code, "discount": discount, "tax": tax,
        "total_before_shipping": round(taxable + tax, 2), "warnings": warnings,
    }


# ---------------------------------------------------------------- time: the on_time hook
def ship_date(order: Order) -> date:
    """Orders leave the warehouse on the business day after they were placed."""
    return add_business_days(date.fromisoformat(order.placed_on), 1)


def progress_orders(s: ShoppingState, before: datetime, after: datetime) -> None:
    """Deliveries follow the session clock. At each new day (the carriers' nightly scan) every placed
    order whose ship date has come ships (``shipped_on`` = its ship date, with a tracking number) and
    every shipped order whose estimated delivery date has come is delivered on that date; a long jump
    of the clock can do both to one order. Within a day nothing changes. Coupons and cards need no
    step here: their expiry is always judged against ``today(s)``."""
    if after.date() <= before.date():
        return
    day = after.date()
    for oid, order in list(s.orders.items()):
        if order.status == "placed" and ship_date(order) <= day:
            rec = s.orders.edit(oid)
            rec.status, rec.shipped_on = "shipped", ship_date(order).isoformat()
            rec.tracking_number = rec.tracking_number or f"1Z{int(oid.rsplit('-', 1)[-1]):012d}"
            order = rec
        if order.status == "shipped" and date.fromisoformat(order.estimated_delivery) <= day:
            rec = s.orders.edit(oid)
            rec.status, rec.delivered_on = "delivered", order.estimated_delivery
