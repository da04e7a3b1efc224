"""Shopping records, the session state class and the pure pricing/shipping helpers.

Orders move through placed -> shipped -> delivered with the session clock (see
``rules.progress_orders``); they can also be cancelled before they ship and partly returned after
delivery.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Literal

from servers.kit import Cell, Counters, State, Table

Category = Literal[
    "electronics", "home_kitchen", "apparel", "shoes", "beauty", "sports_outdoors", "books", "toys",
    "grocery", "furniture",
]
ShippingMethod = Literal["standard", "express", "overnight"]

APPAREL_SIZES = ("XS", "S", "M", "L", "XL")
SHOE_SIZES = ("7", "8", "9", "10", "11", "12")
NON_RETURNABLE_CATEGORIES = ("grocery",)
BULKY_CATEGORIES = ("furniture",)
REMOTE_STATES = ("AK", "HI")
RETURN_WINDOW_DAYS = 30
TAX_RATE = 0.0725
FREE_SHIPPING_THRESHOLD = 50.0
DEFAULT_MAX_PER_ORDER = 10
MAX_SAVED_ADDRESSES = 6
SHIPPING = {  # method -> (price, business days, business days to AK/HI)
    "standard": (5.99, 5, 8),
    "express": (14.99, 2, 4),
    "overnight": (29.99, 1, 1),
}
CARRIERS = {"standard": "USPS", "express": "UPS", "overnight": "FedEx"}

@dataclass
class Product:
    product_id: str
    name: str
    category: str
    brand: str
    description: str
    price: float
    rating: float
    rating_count: int
    stock: int  # total units on hand (sum over sizes for sized products)
    sizes: list[str]
    stock_by_size: dict[str, int]
    max_per_order: int
    returnable: bool
    bulky: bool
    listed_on: str


@dataclass
class Review:
    review_id: str
    product_id: str
    author: str
    stars: int
    title: str
    body: str
    date: str
    verified_purchase: bool


@dataclass
class Customer:
    customer_id: str
    name: str
    email: str
    phone: str
    member_since: str
    default_address_id: str | None
    default_payment_method_id: str | None


@dataclass
class Address:
    address_id: str
    customer_id: str
    recipient_name: str
    street: str
    city: str
    state: str
    zip_code: str


@dataclass
class PaymentMethod:
    payment_method_id: str
    customer_id: str
    brand: str
    last4: str
    exp_month: int
    exp_year: int
    cardholder_name: str


@dataclass
class CartItem:
    product_id: str
    size: str | None
    quantity: int
    added_on: str


@dataclass
class Cart:
    customer_id: str
    items: list[CartItem] = field(default_factory=list)
    coupon_code: str | None = None


@dataclass
class WishlistItem:
    product_id: str
    added_on: str


@dataclass
class Wishlist:
    customer_id: str
    items: list[WishlistItem] = field(default_factory=list)


@dataclass
class Coupon:
    code: str
    description: str
    kind: str  # percent | fixed
    value: float
    min_order: float
    category: str | None
    expires_on: str
    usage_limit: int | None
    times_used: int
    once_per_customer: bool
    used_by: list[str] = field(default_factory=list)


@dataclass
class OrderItem:
    product_id: str
    name: str
    size: str | None
    quantity: int
    unit_price: float
    returnable: bool
    returned_quantity: int = 0


@dataclass
class Order:
    order_id: str
    customer_id: str
    status: str  # placed | shipped | delivered | cancelled
    items: list[OrderItem]
    subtotal: float
    discount: float
    coupon_code: str | None
    shipping_method: str
    shipping_cost: float
    tax: float
    total: float
    address_id: str
    ship_to: str
    payment_method_id: str
    placed_on: str
    estimated_delivery: str
    carrier: str
    tracking_number: str | None = None
    shipped_on: str | None = None
    delivered_on: str | None = None
    cancelled_on: str | None = None
    cancel_reason: str | None = None


@dataclass
class ReturnItem:
    product_id: str
    size: str | None
    quantity: int


@dataclass
class ReturnRequest:
    return_id: str
    order_id: str
    customer_id: str
    items: list[ReturnItem]
    reason: str
    refund_amount: float
    status: str  # requested
    requested_on: str
    return_label: str


class ShoppingState(State):
    products: Table[Product]
    reviews: Table[Review]
    customers: Table[Customer]
    addresses: Table[Address]
    payment_methods: Table[PaymentMethod]
    carts: Table[Cart]
    wishlists: Table[Wishlist]
    coupons: Table[Coupon]
    orders: Table[Order]
    returns: Table[ReturnRequest]
    counters: Cell[Counters]


# ---------------------------------------------------------------- pure helpers shared with tools
def add_business_days(start: date, days: int) -> date:
    """``start`` plus ``days`` working days (carriers do not deliver on weekends)."""
    current = start
    while days > 0:
        current += timedelta(days=1)
        if current.weekday() < 5:
            days -= 1
    return current


def shipping_quote(method: str, state: str, subtotal_after_discount: float) -> tuple[float, int]:
    """(price, business days) of a shipping method; standard is free above the threshold."""
    price, days, remote_days = SHIPPING[method]
    if method == "standard" and subtotal_after_discount >= FREE_SHIPPING_THRESHOLD:
        price = 0.0
    return price, remote_days if state in REMOTE_STATES else days


def coupon_discount(coupon: Coupon, eligible_subtotal: float) -> float:
    """The discount a coupon gives on the subtotal of the items it applies to."""
    if coupon.kind == "percent":
        return round(eligible_subtotal * coupon.value / 100, 2)
    return round(min(coupon.value, eligible_subtotal), 2)


def format_address(a: Address) -> str:
    return f"{a.recipient_name}, {a.street}, {a.city}, {a.state} {a.zip_code}"
