"""Shopping: how users ask (format: data/intents/__init__.py)."""

from __future__ import annotations

BANK: dict[str, dict[str, list[str]]] = {
    "search_catalog": {
        "ask": [
            "search the catalog",
            "look through the store's products",
        ],
        "vague": [
            "find a product",
        ],
    },
    "get_catalog_product": {
        "ask": [
            "show me the details of {product_id}",
            "look up product {product_id}",
        ],
        "vague": [
            "check a product",
        ],
    },
    "add_to_shopping_cart": {
        "ask": [
            "add {product_id} to the cart of {customer_id}",
            "put {product_id} in {customer_id}'s cart",
        ],
        "vague": [
            "add something to my cart",
        ],
    },
    "view_shopping_cart": {
        "ask": [
            "show the cart of {customer_id}",
            "show me what's in the cart of {customer_id}",
        ],
        "vague": [
            "check my cart",
        ],
    },
    "checkout_shopping_cart": {
        "ask": [
            "check out the cart of {customer_id}, shipping to {address_id} and paying with {payment_method_id}",
            "place the order for {customer_id} — ship to {address_id}, charge {payment_method_id}",
        ],
        "vague": [
            "check out my cart",
        ],
    },
    "apply_cart_coupon": {
        "ask": [
            "apply coupon {coupon_code} to the cart of {customer_id}",
            "use the code {coupon_code} on {customer_id}'s cart",
        ],
        "vague": [
            "use a coupon",
        ],
    },
    "list_shop_orders": {
        "ask": [
            "list the orders of {customer_id}",
            "show me {customer_id}'s orders",
        ],
        "vague": [
            "look at my orders",
        ],
    },
    "track_shop_order": {
        "ask": [
            "track {order_id}",
            "tell me where {order_id} is",
        ],
        "vague": [
            "track an order",
        ],
    },
    "cancel_shop_order": {
        "ask": [
            "cancel {order_id} ({reason})",
            "cancel order {order_id}, reason: {reason}",
        ],
        "vague": [
            "cancel an order",
        ],
    },
    "add_to_wishlist": {
        "ask": [
            "save {product_id} to the wishlist of {customer_id}",
            "add {product_id} to {customer_id}'s wishlist",
        ],
        "vague": [
            "save something for later",
        ],
    },
}

GOALS: list[dict[str, list[str]]] = []
