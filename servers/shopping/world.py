"""The seeded store on the reference date: a catalog (some items sold out, some sized, some bulky or
final sale), customers with saved addresses and cards (some expired), carts left mid-session (some
holding sold-out items or a coupon that has since expired), wishlists, coupons (valid, expired,
exhausted, category-restricted) and an order history spread across the lifecycle placed -> shipped
-> delivered (plus cancellations and a few returns).
"""

from __future__ import annotations

from datetime import date, timedelta

from servers.kit import Counters, Seeds, iso
from servers.kit.fake import REFERENCE_DATE
from servers.shopping.catalog_data import (
    ADJECTIVES,
    BOOK_WORDS_A,
    BOOK_WORDS_B,
    CATALOG,
    REVIEW_BODIES,
    REVIEW_TITLES,
)
from servers.shopping.state import (
    APPAREL_SIZES,
    BULKY_CATEGORIES,
    CARRIERS,
    DEFAULT_MAX_PER_ORDER,
    NON_RETURNABLE_CATEGORIES,
    SHOE_SIZES,
    TAX_RATE,
    Address,
    Cart,
    CartItem,
    Coupon,
    Customer,
    Order,
    OrderItem,
    PaymentMethod,
    Product,
    ReturnItem,
    ReturnRequest,
    Review,
    ShoppingState,
    Wishlist,
    WishlistItem,
    add_business_days,
    coupon_discount,
    format_address,
    shipping_quote,
)


def _gen_catalog(s: ShoppingState, seeds: Seeds) -> list[Product]:
    rng, fake = seeds.rng, seeds.fake
    reviewers = [f"{fake.first_name()} {fake.last_name()[0]}." for _ in range(30)]
    products: list[Product] = []
    n_rev = 0
    for category, (brands, kinds, points) in CATALOG.items():
        names: set[str] = set()
        for noun, typical in kinds:
            for _ in range(rng.choice((1, 1, 2))):
                brand = seeds.choice(brands)
                if category == "books":
                    name = f"The {seeds.choice(BOOK_WORDS_A)} {seeds.choice(BOOK_WORDS_B)} ({noun})"
                else:
                    name = f"{brand} {seeds.choice(ADJECTIVES)} {noun}"
                if name in names:
                    continue
                names.add(name)
                pid = seeds.ident("PRD", len(products) + 1)
                sizes = list(APPAREL_SIZES if category == "apparel" else SHOE_SIZES if category == "shoes" else ())
                roll = rng.random()
                units = 0 if roll < 0.15 else rng.randint(1, 3) if roll < 0.3 else rng.randint(6, 80)
                by_size: dict[str, int] = {}
                if sizes:
                    for size in sizes:
                        by_size[size] = 0 if units == 0 or rng.random() < 0.2 else rng.randint(1, max(2, units // 2))
                    units = sum(by_size.values())
                rating = round(rng.uniform(2.6, 4.9), 1)
                a, b = seeds.sample(points, 2)
                by = f" from {brand}" if category != "books" else f", published by {brand}"
                product = Product(
                    pid, name, category, brand, f"{noun}{by}: {a}, {b}.",
                    max(1.99, round(typical * rng.uniform(0.7, 1.5)) - 0.01),
                    rating, rng.randint(3, 2400), units, sizes, by_size,
                    2 if rng.random() < 0.08 else DEFAULT_MAX_PER_ORDER,
                    category not in NON_RETURNABLE_CATEGORIES and rng.random() > 0.06,
                    category in BULKY_CATEGORIES, iso(seeds.date_between(-900, -20)),
                )
                s.products.put(pid, product)
                products.append(product)
                for _ in range(rng.randint(0, 5)):
                    n_rev += 1
                    rid = seeds.ident("REV", n_rev, 5)
                    stars = max(1, min(5, round(rng.gauss(rating, 1.0))))
                    mood = "good" if stars >= 4 else "mixed" if stars == 3 else "bad"
                    s.reviews.put(rid, Review(
                        rid, pid, seeds.choice(reviewers), stars, seeds.choice(REVIEW_TITLES[mood]),
                        " ".join(seeds.sample(REVIEW_BODIES[mood], 2)), iso(seeds.date_between(-400, -1)),
                        rng.random() < 0.8,
                    ))
    return products


def _gen_coupons(s: ShoppingState, seeds: Seeds) -> None:
    rng = seeds.rng

    def put(code: str, description: str, kind: str, value: float, min_order: float, category: str | None,
            expires_in: tuple[int, int], limit: int | None, once: bool) -> None:
        used = rng.randint(0, 400)
        s.coupons.put(code, Coupon(code, description, kind, value, min_order, category,
                                   iso(seeds.date_between(*expires_in)), limit if limit is None else max(limit, used),
                                   used, once))

    put("WELCOME10", "10% off your order, once per customer", "percent", 10, 0.0, None, (60, 240), None, True)
    put("SAVE20", "$20 off orders of $100 or more", "fixed", 20, 100.0, None, (10, 120), 5000, False)
    put("TECH15", "15% off electronics over $50", "percent", 15, 50.0, "electronics", (5, 90), None, False)
    put("HOME30", "$30 off home & kitchen orders of $150+", "fixed", 30, 150.0, "home_kitchen", (15, 100), None,
        False)
    put("BOOKWORM20", "20% off books", "percent", 20, 0.0, "books", (20, 180), None, False)
    put("STYLE25", "25% off apparel", "percent", 25, 40.0, "apparel", (-1, 45), None, False)
    put("SPRING15", "15% off everything (spring sale)", "percent", 15, 0.0, None, (-40, -3), None, False)
    put("SHOES40", "$40 off shoes over $120", "fixed", 40, 120.0, "shoes", (-20, -1), None, False)
    put("FLASH50", "$50 off $200+, first 500 shoppers", "fixed", 50, 200.0, None, (3, 30), 500, False)
    put("OUTDOOR10", "10% off sports & outdoors", "percent", 10, 25.0, "sports_outdoors", (-10, 60), None, True)
    flash = s.coupons.edit("FLASH50")
    flash.times_used = flash.usage_limit or 0  # fully redeemed: a realistic "limit reached" code


def generate(s: ShoppingState, seeds: Seeds) -> None:
    """~110 products, 25 customers with addresses, cards, carts, wishlists and order history."""
    rng, fake = seeds.rng, seeds.fake
    s.counters.set(Counters())
    today = REFERENCE_DATE.date()
    products = _gen_catalog(s, seeds)
    _gen_coupons(s, seeds)
    n_addr = n_pm = n_ord = n_ret = 0
    for c in range(1, 26):
        cid = seeds.ident("CUS", c)
        name = fake.name()
        addr_ids: list[str] = []
        for k in range(rng.randint(1, 3)):
            n_addr += 1
            aid = seeds.ident("ADR", n_addr)
            state = "HI" if rng.random() < 0.05 else fake.state_abbr(
                include_territories=False, include_freely_associated_states=False)
            s.addresses.put(aid, Address(aid, cid, name if k == 0 else fake.name(), fake.street_address(),
                                         fake.city(), state, fake.postcode()))
            addr_ids.append(aid)
        pm_ids: list[str] = []
        for k in range(rng.randint(1, 2)):
            n_pm += 1
            pmid = seeds.ident("PM", n_pm)
            expired = (k > 0 and rng.random() < 0.5) or rng.random() < 0.08
            year = rng.randint(2023, 2025) if expired else rng.randint(2027, 2031)
            brand = seeds.choice(("visa", "mastercard", "amex", "discover"))
            s.payment_methods.put(pmid, PaymentMethod(pmid, cid, brand, fake.numerify("####"),
                                                      rng.randint(1, 12), year, name))
            pm_ids.append(pmid)
        s.customers.put(cid, Customer(cid, name, fake.email(), fake.numerify("(###) ###-####"),
                                      iso(seeds.date_between(-2200, -30)), addr_ids[0], pm_ids[0]))
        # a cart left mid-session: sometimes holding an item that sold out since, or an expired coupon
        cart = Cart(cid)
        if rng.random() < 0.45:
            for product in seeds.sample(products, rng.randint(1, 3)):
                size = seeds.choice(product.sizes) if product.sizes else None
                cart.items.append(CartItem(product.product_id, size, rng.randint(1, 2),
                                           iso(seeds.date_between(-20, -1))))
            if rng.random() < 0.35:
                cats = {s.products[i.product_id].category for i in cart.items}
                fits = [k.code for k in s.coupons.values() if (k.category is None or k.category in cats)
                        and k.code not in ("WELCOME10", "FLASH50")]
                cart.coupon_code = seeds.choice(sorted(fits))
        s.carts.put(cid, cart)
        s.wishlists.put(cid, Wishlist(cid, [WishlistItem(p.product_id, iso(seeds.date_between(-120, -1)))
                                            for p in seeds.sample(products, rng.randint(0, 4))]))
        for k in range(rng.randint(1, 4)):
            n_ord += 1
            oid = seeds.ident("ORD", n_ord, 5)
            status = "delivered" if k == 0 and c % 4 == 1 else seeds.choice(
                ("delivered", "delivered", "delivered", "shipped", "placed", "cancelled"))
            order = _gen_order(s, seeds, oid, cid, status, addr_ids, pm_ids, products, today, recent=k == 0)
            if order.status == "delivered" and order.delivered_on and rng.random() < 0.2:
                item = order.items[0]
                if item.returnable:
                    n_ret += 1
                    rid = seeds.ident("RET", n_ret)
                    item.returned_quantity = item.quantity
                    refund = round(item.unit_price * item.quantity * (order.subtotal - order.discount)
                                   * (1 + TAX_RATE) / order.subtotal, 2)
                    s.returns.put(rid, ReturnRequest(rid, oid, cid, [ReturnItem(item.product_id, item.size,
                                                                                item.quantity)],
                                                     seeds.choice(("defective", "wrong_size", "not_as_described",
                                                                   "changed_mind")), refund, "requested",
                                                     order.delivered_on, f"RMA{rng.randint(10**7, 10**8 - 1)}"))
            s.orders.put(oid, order)


def _gen_order(s: ShoppingState, seeds: Seeds, oid: str, cid: str, status: str, addr_ids: list[str],
               pm_ids: list[str], products: list[Product], today: date, *, recent: bool) -> Order:
    rng = seeds.rng
    items = []
    for product in seeds.sample(products, rng.randint(1, 3)):
        items.append(OrderItem(product.product_id, product.name,
                               seeds.choice(product.sizes) if product.sizes else None, rng.randint(1, 2),
                               product.price, product.returnable))
    subtotal = round(sum(i.unit_price * i.quantity for i in items), 2)
    coupon_code, discount = None, 0.0
    welcome = s.coupons.get("WELCOME10")
    if welcome is not None and cid not in welcome.used_by and rng.random() < 0.15:
        coupon_code, discount = "WELCOME10", coupon_discount(welcome, subtotal)
        s.coupons.edit("WELCOME10").used_by.append(cid)
    address = s.addresses[seeds.choice(addr_ids)]
    method = seeds.choice(("standard", "standard", "express")) if not any(
        s.products[i.product_id].bulky for i in items) else "standard"
    ship_cost, days = shipping_quote(method, address.state, subtotal - discount)
    if status == "delivered":
        placed = today - timedelta(days=rng.randint(6, 22) if recent else rng.randint(6, 80))
    elif status == "shipped":
        placed = today - timedelta(days=rng.randint(1, 3))
    elif status == "placed":
        placed = today - timedelta(days=rng.randint(0, 1))
    else:
        placed = today - timedelta(days=rng.randint(2, 60))
    eta = add_business_days(placed, days + 1)
    tax = round((subtotal - discount) * TAX_RATE, 2)
    order = Order(oid, cid, status, items, subtotal, discount, coupon_code, method, ship_cost, tax,
                  round(subtotal - discount + ship_cost + tax, 2), address.address_id, format_address(address),
                  seeds.choice(pm_ids), iso(placed), iso(eta), CARRIERS[method])
    if status in ("shipped", "delivered"):
        order.shipped_on = iso(add_business_days(placed, 1))
        order.tracking_number = f"1Z{rng.randint(10**11, 10**12 - 1)}"
    if status == "delivered":
        order.delivered_on = iso(min(eta, today - timedelta(days=1)))
    if status == "cancelled":
        order.cancelled_on = iso(placed)
        order.cancel_reason = seeds.choice(("changed_mind", "found_better_price", "ordered_by_mistake"))
    return order
