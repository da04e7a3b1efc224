"""Food delivery: restaurants with menus (dishes with options, prices and sold-out flags), one cart
per customer, promo codes, gift cards and wallet credit, and orders that move through
placed → accepted → preparing → picked_up → delivered on the session clock (each order's stage
times are planned at checkout from the restaurant's prep time, the number of dishes and the
distance; ``on_time`` advances every active order). Restaurants are the maps restaurants of the same
seed (same names, addresses, coordinates and opening hours in local time) and every customer
address is a maps address that maps geocodes to the same coordinates; new addresses are geocoded
with the maps rules. All prices are in USD.

Failure rules (a failed call changes nothing):

* unknown customer, restaurant, item, address, order, cart line or promo code; an address that
  belongs to another customer; a menu section the restaurant does not have; an unknown city;
* cart: a sold-out item; items from a second restaurant; an option that is not offered, given twice,
  a required choice missing or too many choices in a group; more than 20 of one dish; changing or
  clearing an empty cart;
* promo codes: expired (the clock passes ``expires_at``), below the code's minimum subtotal, tied to
  another restaurant, first-order only for a customer with orders, already used by the customer;
  removing a code when none is applied; an applied code that expired before checkout;
* checkout: empty cart, restaurant closed (its opening hours vs the clock in its time zone),
  minimum order not met, address outside the delivery radius (or in another city);
* cancel only before preparing (not while preparing, after pickup, after delivery, or twice);
* tips: not on a cancelled order, not more than 24 h after delivery, total tip at most the subtotal;
* ratings: only after delivery, once, within 7 days of delivery;
* missing items: only after delivery, within 48 h, lines that exist and were not already refunded;
* delivery addresses: address not found or ambiguous (maps geocoding), already saved, label in use,
  more than 5;
* gift cards: unknown code, already redeemed, expired.
"""

from servers.food_delivery import discovery, tools_browse, tools_cart, tools_orders
from servers.food_delivery.state import FoodState, advance_orders
from servers.food_delivery.world import generate
from servers.kit import Domain

domain = Domain("food_delivery", FoodState, generate, description=(__doc__ or "").split("\n\n")[0],
                modules=(tools_browse, tools_cart, tools_orders, discovery), on_time=advance_orders)

__all__ = ["domain"]
