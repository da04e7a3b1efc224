"""Shopping: how shoppers ask (format: data/intents/__init__.py).

The shopper is known from the session, so ``customer_id`` is never a slot: people say "my cart"."""

from __future__ import annotations

SELF: tuple[str, ...] = ("customer_id",)
SPOKEN: tuple[str, ...] = ("order_id",)

BANK: dict[str, dict[str, list[str]]] = {
    "get_shopper_profile": {
        "ask": [
            "show me the addresses and cards I have saved",
            "tell me which card and address are my defaults",
            "pull up my store account details",
        ],
        "vague": ["check what you have on file for me", "look at my account"],
    },
    "add_shipping_address": {
        "ask": [
            "save {street}, {city}, {state} {zip_code} as a delivery address for {recipient_name}",
            "add {recipient_name}'s place at {street}, {city}, {state} {zip_code} to my addresses",
            "let me ship to {recipient_name} at {street} in {city}, {state} {zip_code}",
        ],
        "vague": ["add a new delivery address", "let me ship to a different address"],
    },
    "add_shopper_payment_card": {
        "ask": [
            "put a new credit card on my account",
            "save my card for checkout — the number is {card_number}, it expires {exp_month}/{exp_year} "
            "and the code on the back is {security_code}",
            "add a card for {cardholder_name} expiring {exp_month}/{exp_year} — the card number is {card_number} "
            "and the security code is {security_code}",
        ],
        "vague": ["let me pay with a different card", "replace my expired card"],
    },
    "add_to_shopping_cart": {
        "ask": [
            "add {product_id} to my cart",
            "put {quantity} of {product_id} in my cart",
            "add {product_id} in {size} to my cart",
            "grab {quantity} of {product_id} for my basket",
        ],
        "vague": ["put something in my basket", "help me buy this"],
    },
    "update_shopping_cart_quantity": {
        "ask": [
            "change {product_id} in my cart to {quantity}",
            "make it {quantity} of {product_id} in my cart instead",
            "set my cart to hold {quantity} of {product_id}",
        ],
        "vague": ["change how many of something I'm getting", "get me more of what's in my basket"],
    },
    "remove_from_shopping_cart": {
        "ask": [
            "take {product_id} out of my cart",
            "drop {product_id} in {size} from my basket",
            "remove {product_id} from my cart, I changed my mind",
        ],
        "vague": ["take something out of my basket", "drop an item I don't want"],
    },
    "view_shopping_cart": {
        "ask": [
            "show me what's in my cart",
            "tell me what my cart comes to",
            "check whether anything in my basket would stop me checking out",
        ],
        "vague": ["show me what I'm about to buy", "tell me how much my order is so far"],
    },
    "clear_shopping_cart": {
        "ask": [
            "empty my cart",
            "clear everything out of my basket",
            "start my cart over from scratch",
        ],
        "vague": ["let me start my basket over", "forget everything I added"],
    },
    "apply_cart_coupon": {
        "ask": [
            "apply {coupon_code} to my cart",
            "use {coupon_code} on this order",
            "knock some money off with {coupon_code}",
        ],
        "vague": ["use my discount code", "get me a discount on this"],
    },
    "remove_cart_coupon": {
        "ask": [
            "take the coupon off my cart",
            "remove the discount code I added",
            "drop the promo from my order so I can use another one",
        ],
        "vague": ["take off the discount I used", "get rid of the coupon"],
    },
    "estimate_cart_shipping": {
        "ask": [
            "tell me what delivery costs to {address_id}",
            "find out how fast my cart can get to {address_id} and what it costs",
            "show me the delivery choices for my basket going to {address_id}",
        ],
        "vague": ["tell me how much delivery is", "check when my stuff would arrive"],
    },
    "checkout_shopping_cart": {
        "ask": [
            "place my order, deliver it to {address_id} and charge {payment_method_id}",
            "check out and send everything {shipping_method} to {address_id}",
            "buy what's in my cart with {payment_method_id}, delivered to {address_id}",
            "go ahead and order it all, {shipping_method} to {address_id}, paying with {payment_method_id}",
        ],
        "vague": ["finish my order", "go ahead and buy my stuff"],
    },
    "search_catalog": {
        "ask": [
            "find me {query} under {max_price}",
            "show me {brand} {category} products",
            "look for {category} items rated at least {min_rating} stars",
            "find {query} priced between {min_price} and {max_price}",
            "show me the top {limit} results for {query}",
            "show me what the store has",
            "find {category} products between {min_price} and {max_price}",
            "show me things rated {min_rating} stars and up",
            "browse the {category} section",
            "find something between {min_price} and {max_price}",
        ],
        "vague": ["help me find something to buy", "help me find a gift"],
    },
    "get_catalog_product": {
        "ask": [
            "tell me more about {product_id}",
            "check if {product_id} is in stock and whether I can send it back",
            "show me the details on {product_id}",
        ],
        "vague": ["tell me about this item", "check whether this thing is any good"],
    },
    "list_product_reviews": {
        "ask": [
            "show me what people say about {product_id}",
            "read me the reviews of {product_id}",
            "show me the {min_stars}-star and up reviews of {product_id}",
            "give me the latest {limit} reviews of {product_id}",
        ],
        "vague": ["see if people like this", "tell me what other buyers are saying"],
    },
    "view_wishlist": {
        "ask": [
            "show me my wishlist",
            "tell me what I've saved for later",
            "check what's on my wishlist and whether it's in stock",
        ],
        "vague": ["remind me what I was thinking of buying", "show the things I saved"],
    },
    "add_to_wishlist": {
        "ask": [
            "save {product_id} for later",
            "add {product_id} to my wishlist",
            "put {product_id} on my wish list so I remember it",
        ],
        "vague": ["keep this for later", "remember this item for me"],
    },
    "remove_from_wishlist": {
        "ask": [
            "take {product_id} off my wishlist",
            "remove {product_id} from my saved items",
            "drop {product_id} from my wishlist, I don't want it anymore",
        ],
        "vague": ["drop something I saved", "clean up my wishlist"],
    },
    "list_shop_orders": {
        "ask": [
            "show me my orders",
            "list my {status} orders",
            "show me my last {limit} orders",
        ],
        "vague": ["show me what I've ordered", "show my purchase history"],
    },
    "get_shop_order_details": {
        "ask": [
            "show me everything about {order_id}",
            "tell me what was in {order_id} and what I paid",
            "pull up {order_id}",
        ],
        "vague": ["remind me what I bought last time", "look up the details of an order"],
    },
    "track_shop_order": {
        "ask": [
            "tell me where {order_id} is",
            "track {order_id}",
            "check when {order_id} will arrive",
        ],
        "vague": ["find out where my package is", "check whether my stuff has shipped"],
    },
    "cancel_shop_order": {
        "ask": [
            "cancel {order_id}",
            "call off {order_id} before it ships",
            "stop {order_id} and give me my money back",
        ],
        "vague": ["call off my order", "stop an order I placed"],
    },
    "return_shop_order_items": {
        "ask": [
            "return {product_ids} from {order_id}",
            "send back {product_ids} from {order_id} as {reason}",
            "get me a refund for {product_ids} from {order_id}",
        ],
        "vague": ["help me send something back", "sort out a return"],
    },
}

GOALS: list[dict[str, list[str]]] = [
    {"tools": ["search_catalog", "add_to_shopping_cart"],
     "ask": ["find me {query} under {max_price} and put it in my cart",
             "look for {query} and add {quantity} of what you find to my basket"]},
    {"tools": ["view_shopping_cart", "apply_cart_coupon", "checkout_shopping_cart"],
     "ask": ["use {coupon_code} and place my order, {shipping_method} to {address_id}",
             "check my cart, put {coupon_code} on it and buy everything with {payment_method_id}"]},
    {"tools": ["get_shopper_profile", "estimate_cart_shipping", "checkout_shopping_cart"],
     "ask": ["see what delivery to {address_id} costs and then check out, {shipping_method}, paying with "
             "{payment_method_id}",
             "check out using my saved address and card, after checking what shipping would cost"]},
    {"tools": ["list_shop_orders", "track_shop_order"],
     "ask": ["find my {status} order and tell me where it is",
             "check on my recent order and tell me when it'll show up"]},
    {"tools": ["list_shop_orders", "cancel_shop_order"],
     "ask": ["find my order that hasn't shipped yet and cancel it",
             "cancel my most recent order before it goes out"]},
    {"tools": ["get_shop_order_details", "return_shop_order_items"],
     "ask": ["send back {product_ids} from {order_id} as {reason}",
             "check what came in {order_id} and return {product_ids}"]},
    {"tools": ["view_wishlist", "add_to_shopping_cart", "remove_from_wishlist"],
     "ask": ["move {product_id} from my wishlist into my cart",
             "buy the thing I saved for later and take it off my wishlist"]},
    {"tools": ["search_catalog", "list_product_reviews", "add_to_wishlist"],
     "ask": ["find {query}, check what reviewers think and save the best one for later",
             "look for {category} things with good reviews and put one on my wishlist"]},
]
