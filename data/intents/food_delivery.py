"""How people talk to a food-delivery app: finding food, building a cart, ordering, and sorting out
problems afterwards."""

from __future__ import annotations

SELF: tuple[str, ...] = ("customer_id",)
SPOKEN: tuple[str, ...] = ("order_id",)

BANK: dict[str, dict[str, list[str]]] = {
    "search_food_restaurants": {
        "ask": ["what {cuisine} places deliver to {delivery_address_id}?",
                "find somewhere open now in {city} that does {query}",
                "show me restaurants that deliver to {delivery_address_id}, cheapest delivery first",
                "who can bring {cuisine} food to {delivery_address_id} the fastest?"],
        "vague": ["I'm hungry, what can I get delivered?", "what's good around me?"],
    },
    "get_restaurant_menu": {
        "ask": ["what does {restaurant_id} have on the menu?", "show me the {category} at {restaurant_id}",
                "what vegetarian dishes can I get from {restaurant_id}?"],
        "vague": ["let me see what they serve", "what's on the menu there?"],
    },
    "get_food_customer_profile": {
        "ask": ["pull up my account, I'm {customer_id}", "how much credit do I have? My customer number is {customer_id}",
                "which addresses do I have saved? I'm {customer_id}"],
        "vague": ["check my account", "what's on my profile?"],
    },
    "add_food_delivery_address": {
        "ask": ["add {address} as my \"{label}\" address — I'm {customer_id}",
                "save {address} under {label} for {customer_id}, and tell the driver {dropoff_instructions}",
                "I want food delivered to {address} too; call it {label} (customer {customer_id})"],
        "vague": ["I need to add a new address", "I moved and want to deliver somewhere else"],
    },
    "redeem_food_gift_card": {
        "ask": ["redeem my gift card {gift_code} — account {customer_id}", "put the gift card {gift_code} on {customer_id}",
                "I got a gift card, the code is {gift_code}; add it to {customer_id}"],
        "vague": ["I have a gift card to use", "can I add a gift card to my account?"],
    },
    "add_item_to_food_cart": {
        "ask": ["add {quantity} of {item_id} to my cart ({customer_id}), {options}",
                "put {item_id} in the cart for {customer_id} with {options}, and tell them {special_instructions}",
                "I'll have {item_id} — customer {customer_id}"],
        "vague": ["I want to order something", "add a dish to my basket"],
    },
    "update_food_cart_item": {
        "ask": ["make it {quantity} of line {line_id} in {customer_id}'s cart",
                "change {line_id} to {quantity} for {customer_id}", "actually, drop {line_id} to {quantity} — I'm {customer_id}"],
        "vague": ["I need to change how many I ordered", "fix the quantity in my basket"],
    },
    "view_food_cart": {
        "ask": ["what's in my cart right now? I'm {customer_id}",
                "how much will my basket come to if it goes to {delivery_address_id}? ({customer_id})",
                "show me {customer_id}'s cart total"],
        "vague": ["what do I have in my basket?", "how much is it so far?"],
    },
    "clear_food_cart": {
        "ask": ["empty my cart, I'm {customer_id}", "start over — throw out everything in {customer_id}'s basket",
                "scrap {customer_id}'s cart"],
        "vague": ["I want to start my order over", "get rid of what's in my basket"],
    },
    "apply_food_promo_code": {
        "ask": ["use the code {promo_code} on my cart ({customer_id})", "I have a promo, {promo_code}; apply it for {customer_id}",
                "take the discount code off {customer_id}'s cart"],
        "vague": ["I have a discount code", "can I get a deal on this order?"],
    },
    "place_food_order": {
        "ask": ["go ahead and order it to {delivery_address_id} with a {tip} tip — customer {customer_id}",
                "check out {customer_id}'s basket and send it to {delivery_address_id}",
                "place the order for {customer_id} to {delivery_address_id}, using my credit first",
                "order it now to {delivery_address_id} and tell the driver {dropoff_instructions} ({customer_id})"],
        "vague": ["I'm ready to order", "let's check out"],
    },
    "track_food_order": {
        "ask": ["where's my order {order_id}?", "how long until {order_id} gets here?", "has {order_id} been picked up yet?"],
        "vague": ["where is my food?", "is my delivery close?"],
    },
    "list_food_orders": {
        "ask": ["show me {customer_id}'s past orders", "what have I ordered from {restaurant_id}? I'm {customer_id}",
                "list my {status} orders — customer {customer_id}"],
        "vague": ["what did I order last time?", "show my order history"],
    },
    "cancel_food_order": {
        "ask": ["cancel order {order_id}", "I don't want {order_id} anymore — {reason}", "stop {order_id} before they start cooking"],
        "vague": ["I need to cancel my order", "can I still call off my food?"],
    },
    "add_food_order_tip": {
        "ask": ["add {amount} to the tip on {order_id}", "the driver was great, give them another {amount} for {order_id}",
                "bump the tip on {order_id} by {amount}"],
        "vague": ["I want to tip my driver more", "can I add a tip?"],
    },
    "rate_food_order": {
        "ask": ["give {order_id} {restaurant_rating} stars for the food and {courier_rating} for the driver",
                "rate {order_id}: {restaurant_rating} out of 5, {comment}",
                "I'd like to leave {restaurant_rating} stars on {order_id}"],
        "vague": ["I want to rate my last delivery", "let me leave feedback on my order"],
    },
    "report_missing_food_items": {
        "ask": ["{line_ids} never showed up in {order_id}, I want my money back",
                "order {order_id} was missing {line_ids} — {details}",
                "get me a refund for {line_ids} from {order_id}; it wasn't in the bag"],
        "vague": ["something was missing from my delivery", "part of my order didn't come"],
    },
}

GOALS: list[dict[str, list[str]]] = [
    {"tools": ["search_food_restaurants", "get_restaurant_menu", "add_item_to_food_cart", "place_food_order"],
     "ask": ["get me some {cuisine} delivered to {delivery_address_id} — I'm {customer_id}",
             "order dinner from a {cuisine} place that delivers to {delivery_address_id} for {customer_id}"]},
    {"tools": ["add_item_to_food_cart", "apply_food_promo_code", "place_food_order"],
     "ask": ["add {item_id} to my cart, use {promo_code} and send it to {delivery_address_id} ({customer_id})",
             "I'd like {item_id} with the {promo_code} discount, delivered to {delivery_address_id} — customer {customer_id}"]},
    {"tools": ["track_food_order", "cancel_food_order"],
     "ask": ["if {order_id} isn't being cooked yet, cancel it", "check on {order_id} and call it off if it's still possible"]},
    {"tools": ["track_food_order", "rate_food_order", "add_food_order_tip"],
     "ask": ["{order_id} arrived — rate it {restaurant_rating} stars and add {amount} to the driver's tip",
             "my food from {order_id} was great; leave a {restaurant_rating}-star rating and tip another {amount}"]},
    {"tools": ["track_food_order", "report_missing_food_items"],
     "ask": ["part of {order_id} was missing — check what I ordered and refund {line_ids}",
             "look at {order_id}; {line_ids} wasn't in the bag, so get me my money back"]},
    {"tools": ["add_food_delivery_address", "search_food_restaurants"],
     "ask": ["I'm at {address} tonight — save it as {label} for {customer_id} and see who delivers there",
             "add {address} to {customer_id}'s addresses and find food that can come to it"]},
    {"tools": ["redeem_food_gift_card", "place_food_order"],
     "ask": ["put my gift card {gift_code} on {customer_id} and pay for my cart with it, delivered to {delivery_address_id}",
             "use gift card {gift_code} for {customer_id}'s order to {delivery_address_id}"]},
    {"tools": ["view_food_cart", "update_food_cart_item", "place_food_order"],
     "ask": ["check my basket ({customer_id}), make {line_id} {quantity} and then order it to {delivery_address_id}",
             "change {line_id} to {quantity} in {customer_id}'s cart and check out to {delivery_address_id}"]},
]
