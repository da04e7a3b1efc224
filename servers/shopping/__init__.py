"""Shopping: an online store with a catalog, per-customer carts, coupons, checkout and orders.

State-dependent failures an agent must handle: out-of-stock items or more units than are on hand,
per-order limits, missing or wrong sizes, expired / exhausted / once-per-customer coupons, coupon
minimums and category restrictions, an empty cart at checkout, addresses or cards that are not the
customer's, expired cards, overnight shipping to AK/HI or for oversized items, cancelling an order
that already shipped, and returns of undelivered, final-sale or already-returned items or outside the
30-day window. Card numbers and security codes are sensitive parameters.
"""

from servers.shopping import account_tools, cart_tools, catalog_tools, discovery, order_tools
from servers.shopping.rules import domain

__all__ = ["account_tools", "cart_tools", "catalog_tools", "discovery", "domain", "order_tools"]
