"""Food-delivery records and the shared rules: ownership and lookups, restaurant opening and delivery
radius, cart pricing and promo checks, and the order lifecycle the clock drives.

Lifecycle: ``placed → accepted → preparing → picked_up → delivered`` (or ``cancelled``). When an order
is placed its stage times are planned from the restaurant's prep time, the number of lines and the
distance; :func:`advance_orders` (the domain's ``on_time``) moves every active order to the stage its
plan reaches at the new clock time, in order-id order, so replays are identical.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from servers.kit import Cell, Counters, State, Table, ToolError, iso, now, require
from servers.kit.geo import haversine_km
from servers.maps.hours import local_time, open_state, weekly_display

STAGES = ("placed", "accepted", "preparing", "picked_up", "delivered")
ACTIVE = frozenset(STAGES[:-1])
CANCELLABLE = frozenset(("placed", "accepted"))
RATING_WINDOW = timedelta(days=7)
REPORT_WINDOW = timedelta(hours=48)
TIP_WINDOW = timedelta(hours=24)
MAX_ADDRESSES = 5
MAX_LINE_QTY = 20
ROAD_FACTOR = 1.3
COURIER_KMH = 20.0


@dataclass
class Option:
    name: str
    price: float


@dataclass
class OptionGroup:
    name: str
    required: bool
    max_choices: int
    options: list[Option]


@dataclass
class MenuItem:
    item_id: str
    restaurant_id: str
    name: str
    category: str
    price: float
    vegetarian: bool
    spicy: bool
    available: bool
    option_groups: list[OptionGroup]


@dataclass
class Restaurant:
    restaurant_id: str
    maps_place_id: str
    name: str
    cuisine: str
    address: str
    city: str
    latitude: float
    longitude: float
    hours: dict[str, list[str]]
    rating: float
    rating_count: int
    price_level: int | None
    delivery_radius_km: float
    min_order: float
    delivery_fee: float
    prep_minutes: int


@dataclass
class DeliveryAddress:
    address_id: str
    customer_id: str
    label: str
    address: str
    city: str
    latitude: float
    longitude: float
    dropoff_instructions: str | None


@dataclass
class Customer:
    customer_id: str
    name: str
    email: str
    phone: str
    city: str
    wallet_balance: float
    card_brand: str
    card_last4: str
    used_promos: list[str] = field(default_factory=list)


@dataclass
class CartLine:
    line_id: str
    item_id: str
    name: str
    quantity: int
    options: list[str]
    unit_price: float
    special_instructions: str | None


@dataclass
class Cart:
    customer_id: str
    restaurant_id: str
    lines: list[CartLine]
    promo_code: str | None
    updated_at: str


@dataclass
class Promo:
    code: str
    description: str
    kind: str  # percent | flat | free_delivery
    value: float
    min_subtotal: float
    max_discount: float | None
    expires_at: str
    restaurant_id: str | None
    first_order_only: bool


@dataclass
class OrderLine:
    line_id: str
    item_id: str
    name: str
    quantity: int
    options: list[str]
    unit_price: float
    line_total: float
    refunded: bool = False


@dataclass
class Refund:
    refund_id: str
    line_ids: list[str]
    amount: float
    to_card: float
    to_wallet: float
    reason: str
    created_at: str


@dataclass
class OrderRating:
    restaurant_rating: int
    courier_rating: int | None
    comment: str | None
    rated_at: str


@dataclass
class Order:
    order_id: str
    customer_id: str
    restaurant_id: str
    address_id: str
    lines: list[OrderLine]
    subtotal: float
    delivery_fee: float
    service_fee: float
    discount: float
    promo_code: str | None
    tip: float
    total: float
    wallet_used: float
    card_charged: float
    status: str
    timeline: dict[str, str]  # stage -> planned (or actual) ISO time
    distance_km: float
    courier_name: str
    dropoff_instructions: str | None = None
    cancelled_at: str | None = None
    cancel_reason: str | None = None
    rating: OrderRating | None = None
    refunds: list[Refund] = field(default_factory=list)


@dataclass
class GiftCard:
    gift_card_id: str
    code: str
    amount: float
    expires_at: str
    holder_customer_id: str  # who was given the card (and knows its code)
    redeemed_by: str | None = None
    redeemed_at: str | None = None


@dataclass
class WorldInfo:
    seed: int


class FoodState(State):
    restaurants: Table[Restaurant]
    menu_items: Table[MenuItem]
    customers: Table[Customer]
    addresses: Table[DeliveryAddress]
    carts: Table[Cart]  # keyed by customer_id; absent = empty cart
    promos: Table[Promo]  # keyed by code
    orders: Table[Order]
    gift_cards: Table[GiftCard]
    world: Cell[WorldInfo]
    counters: Cell[Counters]


def money(x: float) -> float:
    return round(x + 1e-9, 2)


# ---------------------------------------------------------------- lookups
def get_customer(s: FoodState, customer_id: str) -> Customer:
    return require(s.customers, customer_id.strip().upper(), "customer_id")


def get_restaurant(s: FoodState, restaurant_id: str) -> Restaurant:
    return require(s.restaurants, restaurant_id.strip().upper(), "restaurant_id")


def get_item(s: FoodState, item_id: str) -> MenuItem:
    return require(s.menu_items, item_id.strip().upper(), "item_id")


def get_order(s: FoodState, order_id: str) -> Order:
    return require(s.orders, order_id.strip().upper(), "order_id")


def get_address(s: FoodState, customer: Customer, address_id: str, field: str = "delivery_address_id") -> DeliveryAddress:
    addr = require(s.addresses, address_id.strip().upper(), field)
    if addr.customer_id != customer.customer_id:
        raise ToolError(f"address {addr.address_id} is not one of {customer.name}'s saved addresses", field=field,
                        code="forbidden")
    return addr


def customer_addresses(s: FoodState, customer_id: str) -> list[DeliveryAddress]:
    return [a for a in s.addresses.values() if a.customer_id == customer_id]


# ---------------------------------------------------------------- restaurants
def opening(s: FoodState, r: Restaurant) -> dict:
    return open_state(r.hours, local_time(now(s), r.city))


def distance_km(r: Restaurant, a: DeliveryAddress) -> float:
    return round(haversine_km(r.latitude, r.longitude, a.latitude, a.longitude), 2)


def travel_minutes(km: float) -> int:
    return math.ceil(km * ROAD_FACTOR / COURIER_KMH * 60) + 3


def restaurant_view(s: FoodState, r: Restaurant, addr: DeliveryAddress | None = None) -> dict:
    o = opening(s, r)
    row: dict[str, Any] = {
        "restaurant_id": r.restaurant_id, "name": r.name, "cuisine": r.cuisine, "address": r.address,
        "city": r.city, "rating": r.rating, "rating_count": r.rating_count, "price_level": r.price_level,
        "open_now": o["open_now"], "opens_at": o["opens_at"], "closes_at": o["closes_at"],
        "min_order": r.min_order, "delivery_fee": r.delivery_fee, "delivery_radius_km": r.delivery_radius_km,
    }
    if addr is not None:
        km = distance_km(r, addr)
        row["distance_km"] = km
        row["delivers_to_address"] = addr.city == r.city and km <= r.delivery_radius_km
        row["estimated_delivery_minutes"] = r.prep_minutes + 8 + travel_minutes(km)
    return row


def restaurant_header(s: FoodState, r: Restaurant) -> dict:
    return {**restaurant_view(s, r), "hours": weekly_display(r.hours), "maps_place_id": r.maps_place_id,
            "typical_prep_minutes": r.prep_minutes}


def need_open(s: FoodState, r: Restaurant) -> None:
    o = opening(s, r)
    if not o["open_now"]:
        local = local_time(now(s), r.city).strftime("%a %H:%M")
        when = f"it opens at {o['opens_at']}" if o["opens_at"] else "it has no upcoming opening hours"
        raise ToolError(f"{r.name} is closed right now ({local} local time); {when} — order then or pick an open "
                        "restaurant", field=None, code="closed")


def need_in_radius(r: Restaurant, a: DeliveryAddress) -> float:
    km = distance_km(r, a)
    if a.city != r.city or km > r.delivery_radius_km:
        raise ToolError(f"address outside the delivery radius: {a.label} ({a.address}) is {km:.1f} km from "
                        f"{r.name}, which delivers within {r.delivery_radius_km:.1f} km; choose another address or "
                        "a closer restaurant", field="delivery_address_id", code="out_of_range")
    return km


# ---------------------------------------------------------------- carts and promos
def subtotal(lines: list[CartLine]) -> float:
    return money(sum(line.unit_price * line.quantity for line in lines))


def service_fee(sub: float) -> float:
    return money(max(1.0, min(5.0, sub * 0.05)))


def promo_discount(p: Promo, sub: float, delivery_fee: float) -> float:
    if p.kind == "percent":
        d = sub * p.value / 100
        return money(min(d, p.max_discount) if p.max_discount is not None else d)
    if p.kind == "flat":
        return money(min(p.value, sub))
    return money(delivery_fee)


def check_promo(s: FoodState, customer: Customer, cart: Cart, p: Promo, field: str | None = "promo_code") -> float:
    """The discount ``p`` gives on ``cart`` now, or a ToolError naming the rule that blocks it."""
    at = now(s)
    if datetime.fromisoformat(p.expires_at) <= at:
        raise ToolError(f"promo code {p.code} expired at {p.expires_at}; it can no longer be used", field=field,
                        code="expired")
    if p.restaurant_id is not None and p.restaurant_id != cart.restaurant_id:
        raise ToolError(f"promo code {p.code} is only valid at {s.restaurants[p.restaurant_id].name}", field=field,
                        code="not_eligible")
    if p.code in customer.used_promos:
        raise ToolError(f"promo code {p.code} was already used by {customer.name}; each code works once per "
                        "customer", field=field, code="not_eligible")
    if p.first_order_only and any(o.customer_id == customer.customer_id and o.status != "cancelled"
                                  for o in s.orders.values()):
        raise ToolError(f"promo code {p.code} is only for a customer's first order", field=field, code="not_eligible")
    sub = subtotal(cart.lines)
    if sub < p.min_subtotal:
        raise ToolError(f"promo code {p.code} needs a subtotal of at least ${p.min_subtotal:.2f} (cart is "
                        f"${sub:.2f}); add ${p.min_subtotal - sub:.2f} more", field=field, code="not_eligible")
    return promo_discount(p, sub, s.restaurants[cart.restaurant_id].delivery_fee)


def cart_view(s: FoodState, customer: Customer, addr: DeliveryAddress | None = None) -> dict:
    cart = s.carts.get(customer.customer_id)
    if cart is None:
        return {"customer_id": customer.customer_id, "restaurant": None, "lines": [], "item_count": 0,
                "subtotal": 0.0, "promo_code": None, "discount": 0.0, "estimated_total": 0.0}
    r = s.restaurants[cart.restaurant_id]
    sub = subtotal(cart.lines)
    fee = r.delivery_fee
    discount, promo_note = 0.0, None
    if cart.promo_code is not None:
        try:
            discount = check_promo(s, customer, cart, s.promos[cart.promo_code])
        except ToolError as exc:
            promo_note = str(exc)
    out: dict[str, Any] = {
        "customer_id": customer.customer_id,
        "restaurant": {"restaurant_id": r.restaurant_id, "name": r.name, "open_now": opening(s, r)["open_now"],
                       "min_order": r.min_order},
        "lines": [{"line_id": x.line_id, "item_id": x.item_id, "name": x.name, "quantity": x.quantity,
                   "options": x.options, "unit_price": x.unit_price, "line_total": money(x.unit_price * x.quantity),
                   "special_instructions": x.special_instructions} for x in cart.lines],
        "item_count": sum(x.quantity for x in cart.lines), "subtotal": sub,
        "meets_minimum_order": sub >= r.min_order, "amount_to_minimum": money(max(0.0, r.min_order - sub)),
        "delivery_fee": fee, "service_fee": service_fee(sub), "promo_code": cart.promo_code, "discount": discount,
        "estimated_total": money(sub + fee + service_fee(sub) - discount),
    }
    if promo_note:
        out["promo_problem"] = promo_note
    if addr is not None:
        km = distance_km(r, addr)
        out["delivery_address"] = {"address_id": addr.address_id, "label": addr.label, "distance_km": km,
                                   "in_delivery_radius": addr.city == r.city and km <= r.delivery_radius_km}
    return out


# ---------------------------------------------------------------- orders
def plan_timeline(r: Restaurant, n_lines: int, km: float, placed: datetime, n: int) -> dict[str, str]:
    accepted = placed + timedelta(minutes=2 + n % 3)
    preparing = accepted + timedelta(minutes=5)
    picked = preparing + timedelta(minutes=r.prep_minutes + 2 * n_lines)
    delivered = picked + timedelta(minutes=travel_minutes(km))
    return {"placed": iso(placed), "accepted": iso(accepted), "preparing": iso(preparing),
            "picked_up": iso(picked), "delivered": iso(delivered)}


def stage_at(o: Order, at: datetime) -> str:
    stage = "placed"
    for name in STAGES:
        if datetime.fromisoformat(o.timeline[name]) <= at:
            stage = name
    return stage


def advance_orders(s: FoodState, before: datetime, after: datetime) -> None:
    """``on_time``: every active order moves to the stage its plan has reached (order-id order)."""
    for oid in list(s.orders.keys()):
        o = s.orders[oid]
        if o.status in ACTIVE:
            stage = stage_at(o, after)
            if stage != o.status:
                s.orders.edit(oid).status = stage


def order_view(s: FoodState, o: Order) -> dict:
    r = s.restaurants[o.restaurant_id]
    addr = s.addresses[o.address_id]
    at = now(s)
    timeline = []
    for name in STAGES:
        t = o.timeline[name]
        done = o.status != "cancelled" and STAGES.index(name) <= STAGES.index(o.status)
        timeline.append({"status": name, ("at" if done else "expected_at"): t})
    eta = None
    if o.status in ACTIVE:
        eta = max(0, math.ceil((datetime.fromisoformat(o.timeline["delivered"]) - at).total_seconds() / 60))
    return {
        "order_id": o.order_id, "status": o.status, "customer_id": o.customer_id,
        "restaurant": {"restaurant_id": r.restaurant_id, "name": r.name},
        "delivery_address": {"address_id": addr.address_id, "label": addr.label, "address": addr.address},
        "lines": o.lines, "subtotal": o.subtotal, "delivery_fee": o.delivery_fee, "service_fee": o.service_fee,
        "discount": o.discount, "promo_code": o.promo_code, "tip": o.tip, "total": o.total,
        "paid_with_wallet": o.wallet_used, "charged_to_card": o.card_charged,
        "placed_at": o.timeline["placed"], "timeline": [] if o.status == "cancelled" else timeline,
        "minutes_to_delivery": eta, "courier": o.courier_name if o.status in ("preparing", "picked_up", "delivered") else None,
        "cancelled_at": o.cancelled_at, "cancel_reason": o.cancel_reason, "rating": o.rating, "refunds": o.refunds,
    }


def order_summary(s: FoodState, o: Order) -> dict:
    return {"order_id": o.order_id, "status": o.status, "restaurant": s.restaurants[o.restaurant_id].name,
            "restaurant_id": o.restaurant_id, "placed_at": o.timeline["placed"],
            "delivered_at": o.timeline["delivered"] if o.status == "delivered" else None,
            "item_count": sum(x.quantity for x in o.lines), "total": o.total, "rated": o.rating is not None}


def refund(s: FoodState, o: Order, amount: float) -> tuple[float, float]:
    """Split a refund: back to the card first (up to what it was charged), the rest to the wallet."""
    already = sum(r.to_card for r in o.refunds)
    to_card = money(min(amount, max(0.0, o.card_charged - already)))
    to_wallet = money(amount - to_card)
    if to_wallet > 0:
        s.customers.edit(o.customer_id).wallet_balance = money(s.customers[o.customer_id].wallet_balance + to_wallet)
    return to_card, to_wallet
