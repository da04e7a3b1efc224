"""How people ask the retail chain server for things: per-tool phrasings and multi-tool goals."""

from __future__ import annotations

SELF: tuple[str, ...] = ()
SPOKEN: tuple[str, ...] = ("sku", "reservation_id")

BANK: dict[str, dict[str, list[str]]] = {
    "find_retail_stores": {
        "ask": [
            "which Brightmart stores are there in {city}?",
            "is any store in {city} open at this hour?",
            "where can I pick up an online order in {city}?",
            "which shops keep {carries_sku} on their shelves?",
        ],
        "vague": [
            "is there a Brightmart near me?",
            "what time do you close today?",
        ],
    },
    "search_retail_products": {
        "ask": [
            "do you sell {query}?",
            "what {category} stuff does {store_id} have right now, cheapest first?",
            "show me {query} that's actually on the shelf at {store_id}",
            "list your {category} items, priciest first",
        ],
        "vague": [
            "I'm looking for a gift",
            "what kind of things do you carry?",
        ],
    },
    "check_sku_availability": {
        "ask": [
            "who has {sku} in stock in {city}?",
            "which store closest to {near_store_id} still has {sku}?",
            "I need {min_quantity} of {sku}, which branch can do that?",
        ],
        "vague": [
            "is this thing in stock anywhere?",
            "my store ran out, who else has it?",
        ],
    },
    "get_store_inventory_report": {
        "ask": [
            "what's running low at {store_id}?",
            "give me the {category} counts for {store_id}",
            "what do we have on the floor and on the way at {store_id}?",
        ],
        "vague": [
            "how's our stock looking?",
            "what do we need to reorder?",
        ],
    },
    "update_store_price": {
        "ask": [
            "mark {sku} down to {price} at {store_id}",
            "put {sku} on sale for {price} in store {store_id}",
            "change the shelf tag on {sku} at {store_id} to {price}",
        ],
        "vague": [
            "we need to discount something that isn't selling",
            "can I change a price in my store?",
        ],
    },
    "reserve_for_store_pickup": {
        "ask": [
            "hold {quantity} of {sku} at {store_id} for {customer_name}, phone {customer_phone}",
            "I'm {customer_name} ({customer_phone}); set aside {sku} at {store_id} so I can grab it later",
            "reserve {quantity} {sku} at {store_id} for me to collect, number {customer_phone}, "
            "name {customer_name}",
        ],
        "vague": [
            "can you put one aside for me?",
            "I'd like to buy online and get it at the store",
        ],
    },
    "list_store_pickups": {
        "ask": [
            "what orders do I have waiting? my number is {customer_phone}",
            "which pickups at {store_id} are {status}?",
            "has my order for {customer_phone} been picked up already?",
        ],
        "vague": [
            "is my order ready?",
            "what did I reserve?",
        ],
    },
    "complete_store_pickup": {
        "ask": [
            "the customer is here for {reservation_id}, their code is {pickup_code}",
            "hand over order {reservation_id}, code {pickup_code}",
            "I'm at the counter to collect {reservation_id}; my code's {pickup_code}",
        ],
        "vague": [
            "I'm here to pick up my order",
            "someone's at the desk to collect something",
        ],
    },
    "cancel_store_pickup": {
        "ask": [
            "cancel my pickup {reservation_id}",
            "I don't need {reservation_id} anymore, release it",
            "drop reservation {reservation_id}, I bought it elsewhere",
        ],
        "vague": [
            "I changed my mind about the thing I reserved",
            "please call off my order",
        ],
    },
    "request_stock_transfer": {
        "ask": [
            "send {quantity} {sku} from {from_store_id} over to {to_store_id}",
            "{to_store_id} is short on {sku}, move {quantity} from {from_store_id}",
            "ship {quantity} units of {sku} from {from_store_id} to {to_store_id} because {note}",
        ],
        "vague": [
            "can another branch lend us some stock?",
            "we have too many of these, move some elsewhere",
        ],
    },
    "submit_restock_request": {
        "ask": [
            "order {quantity} more {sku} for {store_id}",
            "{store_id} needs {quantity} {sku} from the supplier",
            "reorder {sku} for store {store_id}, {quantity} units",
        ],
        "vague": [
            "we're almost out of something, get more",
            "can you place a supplier order for us?",
        ],
    },
}

GOALS: list[dict[str, list[str]]] = [
    {"tools": ["check_sku_availability", "reserve_for_store_pickup"],
     "ask": ["find a store in {city} with {sku} and hold one for {customer_name}, {customer_phone}",
             "I need {sku} today in {city}; set it aside wherever they have it ({customer_name}, {customer_phone})"]},
    {"tools": ["list_store_pickups", "complete_store_pickup"],
     "ask": ["I'm here for my order, phone {customer_phone}, code {pickup_code}",
             "look up the pickup for {customer_phone} and hand it over, the code is {pickup_code}"]},
    {"tools": ["list_store_pickups", "cancel_store_pickup"],
     "ask": ["cancel whatever I have on hold under {customer_phone}",
             "I don't need my reserved items anymore, my number is {customer_phone}"]},
    {"tools": ["get_store_inventory_report", "submit_restock_request"],
     "ask": ["see what's running low at {store_id} and reorder the worst of it",
             "restock anything at {store_id} that's under its reorder point"]},
    {"tools": ["check_sku_availability", "request_stock_transfer"],
     "ask": ["{to_store_id} is out of {sku}; bring {quantity} over from whichever nearby store has the most",
             "find spare {sku} near {to_store_id} and have {quantity} sent there"]},
    {"tools": ["search_retail_products", "update_store_price"],
     "ask": ["find the {query} at {store_id} and knock it down to {price}",
             "put every {category} item at {store_id} I name on sale, starting with {query} at {price}"]},
    {"tools": ["find_retail_stores", "search_retail_products", "reserve_for_store_pickup"],
     "ask": ["is there a store open in {city} that has {query}? hold one for {customer_name} ({customer_phone})",
             "get me {query} from a Brightmart in {city} that's open now; I'm {customer_name}, {customer_phone}"]},
]
