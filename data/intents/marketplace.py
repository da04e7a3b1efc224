"""How people ask the marketplace server for things: per-tool phrasings and multi-tool goals."""

from __future__ import annotations

SELF: tuple[str, ...] = ()
SPOKEN: tuple[str, ...] = ("order_id",)

BANK: dict[str, dict[str, list[str]]] = {
    "search_marketplace_listings": {
        "ask": [
            "find me {query} for sale under {max_price}",
            "what {category} auctions are there near {city}?",
            "show me everything {seller} is selling right now, cheapest first",
            "look for a {query} I can buy outright, no bidding",
            "which auctions with the most action end soonest?",
        ],
        "vague": [
            "I'm hunting for a bargain, what's out there?",
            "anything good for sale at the moment?",
        ],
    },
    "get_marketplace_listing": {
        "ask": [
            "tell me more about item {listing_id}",
            "what's the going bid on {listing_id} and how long is left?",
            "who's selling {listing_id} and are they any good?",
            "has the reserve been met on {listing_id}?",
        ],
        "vague": [
            "can you pull up that item I was looking at?",
            "I want the details on one of the auctions",
        ],
    },
    "create_marketplace_listing": {
        "ask": [
            "I'm {seller}; put my {title} up for auction starting at {price} for {duration_days} days",
            "sell my {title} for {price} flat, buyers can send offers",
            "list a {condition} {title} in {category} at {price} with {shipping_cost} shipping",
            "start an auction for my {title} at {price} but don't let it go below {reserve_price}",
        ],
        "vague": [
            "I've got something I'd like to sell",
            "can you help me get an item up on the site?",
        ],
    },
    "revise_marketplace_listing_price": {
        "ask": [
            "drop the price on {listing_id} to {new_price}",
            "I'm {seller}, change my asking price for {listing_id} to {new_price}",
            "nobody's biting on {listing_id}, lower the starting bid to {new_price}",
        ],
        "vague": [
            "I think I priced one of my items wrong",
            "can I change what I'm asking for something?",
        ],
    },
    "end_marketplace_listing_early": {
        "ask": [
            "take down listing {listing_id}, it got broken",
            "I'm {seller}; pull {listing_id} off the site, I don't have it anymore",
            "stop the sale of {listing_id} now, I made a mistake in it",
        ],
        "vague": [
            "I need to cancel one of my listings",
            "something I'm selling isn't available anymore",
        ],
    },
    "relist_marketplace_listing": {
        "ask": [
            "{listing_id} didn't sell, put it back up for {duration_days} days",
            "relist {listing_id} at {new_price} this time",
            "I'm {seller}; give {listing_id} another go",
        ],
        "vague": [
            "my item didn't sell, can I try again?",
            "let's put that unsold thing back on the market",
        ],
    },
    "place_auction_bid": {
        "ask": [
            "bid {amount} on {listing_id} for me",
            "I'm {bidder}; put in {amount} on auction {listing_id}",
            "I want to outbid everyone on {listing_id}, go {amount}",
            "raise my offer on auction {listing_id} to {amount}",
        ],
        "vague": [
            "I want to get in on that auction",
            "can you bid for me?",
        ],
    },
    "buy_marketplace_listing": {
        "ask": [
            "buy {listing_id} right now, my card code is {card_cvv}",
            "I'm {buyer}; purchase {listing_id} with my card, CVV {card_cvv}",
            "grab {listing_id} before someone else does, security code {card_cvv}",
        ],
        "vague": [
            "I want to buy that item outright",
            "let's just purchase it",
        ],
    },
    "make_marketplace_offer": {
        "ask": [
            "offer {amount} for {listing_id}",
            "I'm {buyer}; ask the seller of {listing_id} if they'd take {amount}",
            "send {amount} on {listing_id} with the note '{message}'",
        ],
        "vague": [
            "the price is a bit steep, can I haggle?",
            "could I try paying less than they're asking?",
        ],
    },
    "respond_to_marketplace_offer": {
        "ask": [
            "accept offer {offer_id}",
            "I'm {seller}; turn down offer {offer_id}, it's too low",
            "go ahead and take the buyer's offer {offer_id}",
        ],
        "vague": [
            "someone made me an offer, what do I do?",
            "I want to answer a buyer's offer",
        ],
    },
    "list_marketplace_orders": {
        "ask": [
            "what have I bought lately? I'm {member}",
            "show {member}'s sales that still need to go out",
            "list my orders as a {role} that are {status}",
        ],
        "vague": [
            "where are my orders at?",
            "what's going on with my purchases?",
        ],
    },
    "ship_marketplace_order": {
        "ask": [
            "order {order_id} went out with {carrier}, tracking {tracking_number}",
            "I'm {seller}; mark {order_id} as sent, {carrier} number {tracking_number}",
            "I dropped {order_id} at {carrier} today, the tracking is {tracking_number}",
        ],
        "vague": [
            "I just mailed something I sold",
            "I need to update an order as shipped",
        ],
    },
    "leave_marketplace_feedback": {
        "ask": [
            "rate the seller on {order_id} {rating}: '{comment}'",
            "I'm {author}; leave {rating} feedback on {order_id} saying {comment}",
            "give my buyer on {order_id} a thumbs up, '{comment}'",
        ],
        "vague": [
            "I want to review a purchase",
            "let them know how the transaction went",
        ],
    },
}

GOALS: list[dict[str, list[str]]] = [
    {"tools": ["search_marketplace_listings", "place_auction_bid"],
     "ask": ["find a {query} auction ending soon and put in the lowest bid that takes the lead",
             "I want that {query} - get me in as top bidder on whichever auction closes first"]},
    {"tools": ["search_marketplace_listings", "buy_marketplace_listing"],
     "ask": ["buy the cheapest {query} I can get right away, my card code is {card_cvv}",
             "just get me a {query} under {max_price} without any bidding; CVV is {card_cvv}"]},
    {"tools": ["get_marketplace_listing", "make_marketplace_offer"],
     "ask": ["check what {listing_id} costs and offer them about 20 percent less",
             "see if the seller of {listing_id} will go lower and send them {amount}"]},
    {"tools": ["get_marketplace_listing", "respond_to_marketplace_offer"],
     "ask": ["see what offers came in on my {listing_id} and accept the best one",
             "turn down every lowball offer on {listing_id}"]},
    {"tools": ["list_marketplace_orders", "ship_marketplace_order"],
     "ask": ["I'm {seller}; my sold item went out with {carrier} today, tracking {tracking_number}",
             "mark whatever I sold that's still waiting as shipped via {carrier}"]},
    {"tools": ["list_marketplace_orders", "leave_marketplace_feedback"],
     "ask": ["my last purchase arrived, give the seller glowing feedback",
             "I'm {author}; rate the seller of the thing I got last week as {rating}"]},
    {"tools": ["create_marketplace_listing", "revise_marketplace_listing_price"],
     "ask": ["put my {title} up for {price} and then knock it down to {new_price}",
             "list my {title} and fix the price to {new_price} right after"]},
    {"tools": ["end_marketplace_listing_early", "relist_marketplace_listing"],
     "ask": ["pull {listing_id} and put it back up fresh at {new_price}",
             "restart my listing {listing_id} from scratch for {duration_days} days"]},
]
