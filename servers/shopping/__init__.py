"""Shopping: an online store with a catalog, per-customer carts, wishlists, saved addresses and cards,
coupons, checkout, and orders that are tracked, cancelled or returned.

State behaviour: carts persist between calls and can go stale (an item sells out, an applied coupon
expires or stops qualifying); checkout re-checks everything, charges the card, takes the stock,
redeems the coupon and empties the cart. Orders follow the session clock (one minute per call; the
hidden ``shopping_session_advance_clock`` moves it further): at each new day every placed order whose
ship date (the business day after it was placed) has come ships, and every shipped order whose
estimated delivery date has come is delivered. Coupons and cards expire when the clock passes their
date. Cancelling puts the stock back, refunds the card and frees the coupon.

State-dependent failures an agent must handle: unknown customers, products, coupons, addresses,
cards or orders; out-of-stock items or more units than are on hand, per-order limits, missing, wrong
or unneeded sizes, a product in the cart in several sizes without a size, items not in the cart or
wishlist (or already in the wishlist); expired, exhausted, once-per-customer, already applied or
second coupons, coupon minimums and category restrictions, removing a coupon that is not applied;
an empty cart at checkout or when estimating shipping; addresses or cards that are not the
customer's, expired cards, invalid card numbers (checksum, brand, security-code length), duplicate
cards or addresses, empty address fields, non-US state codes, more than six saved addresses;
overnight shipping to AK/HI or for oversized items; a min_price above max_price; cancelling an order
that is already cancelled or already shipped; and returns of undelivered, final-sale, foreign or
already-returned items or outside the 30-day window. Card numbers and security codes are sensitive
parameters.
"""

from servers.kit import Domain
from servers.shopping import discovery, tools_account, tools_cart, tools_catalog, tools_orders
from servers.shopping.rules import progress_orders
from servers.shopping.state import ShoppingState
from servers.shopping.world import generate

domain = Domain("shopping", ShoppingState, generate, description=__doc__ or "",
                modules=(tools_account, tools_cart, tools_catalog, tools_orders, discovery),
                on_time=progress_orders)

__all__ = ["domain"]
