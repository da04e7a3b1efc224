"""Retail chain: Brightmart, a store chain with inventory scoped to each location.

Stores sit in New York, London and five to seven more shared cities (``servers.kit.geo``), each with
local opening hours in its own time zone, a format (flagship, standard, express), a local currency
and its own shelf price per product. Every store keeps its own stock per SKU: units on hand, units
held for pickup reservations, shelf capacity and a reorder point. Customers reserve units at a store
for buy-online-pick-up-in-store (prepared within an hour of opening time, held 48 hours, then expired
by ``on_time`` with the units released); staff move stock between stores of one country (in transit,
then received at the destination by ``on_time`` after the transit time) and order supplier restocks
(delivered by ``on_time`` after the supplier's lead time). Collecting a pickup records a sale.

Failure rules (each raises a ToolError naming the argument; the call changes nothing):
* unknown store_id / sku / reservation_id, a city without stores;
* the product is not carried at that store (stock at the wrong store; the message names stores in the
  same city that have it) — for pickups, price changes, transfers out and restocks;
* store temporarily closed for renovation (reservations, transfers in or out, restocks);
* store closed right now by its local hours (collecting a pickup);
* express stores have no pickup counter;
* reserving more than is available (on hand minus units held for other pickups);
* per-customer limit on limited items (by phone number, over open pickups);
* pickups: wrong pickup_code, not ready yet, expired (hold ran out), already picked up or cancelled;
* transfers: same source and destination, between countries, more than the source has available,
  more than the destination has shelf room for;
* restocks: discontinued product, a restock of the product already on order, over shelf capacity;
* prices: below cost, above the list price, unchanged, fractional yen.
"""

from servers.kit import Domain
from servers.retail_chain import discovery, tools_pickup, tools_stock, tools_stores
from servers.retail_chain.rules import on_time
from servers.retail_chain.state import RetailChainState
from servers.retail_chain.world import generate

domain = Domain(
    "retail_chain", RetailChainState, generate,
    description=("A store chain across cities: per-store inventory, local hours and prices, buy-online-pick-up-"
                 "in-store reservations that expire, stock transfers between stores and supplier restocks."),
    modules=(tools_stores, tools_pickup, tools_stock, discovery),
    on_time=on_time,
)

__all__ = ["RetailChainState", "domain", "generate"]
