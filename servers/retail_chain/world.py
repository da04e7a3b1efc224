"""The seeded Brightmart chain: stores in New York, London and five to seven more cities (shared
``servers.kit.geo`` cities), a catalog of ~40 products, per-store inventory and prices in local
currency, pickup reservations in every state, transfers in transit and supplier restocks on order.

Guaranteed in every seed (the rules need them): three New York stores (flagship, standard, express —
all closed at the 05:00 New York start) and two London stores (open at 10:00 London time); a product the
New York flagship stocks and the New York standard store does not carry; a discontinued product in stock
in London; a limited console (two per customer); a store closed for renovation; a ready pickup in
London, one in New York whose hold expires 90 minutes into the session, one still being prepared, an
expired one; an open restock at the New York flagship and transfers in transit.
"""

from __future__ import annotations

from datetime import timedelta

from servers.kit import Counters, Seeds, iso, new_id
from servers.kit.fake import REFERENCE_DATE
from servers.kit.geo import CITIES, CITY_BY_NAME
from servers.retail_chain.data import (
    CATALOG,
    CHAIN,
    HOURS,
    NEIGHBOURHOODS,
    SUNDAY_CLOSED_COUNTRIES,
    SUPPLIERS,
)
from servers.retail_chain.rules import transit_hours
from servers.retail_chain.state import (
    ACTIVE_RESERVATION,
    CURRENCY_OF_COUNTRY,
    Inventory,
    Product,
    Reservation,
    Restock,
    RetailChainState,
    Sale,
    Store,
    Transfer,
    inv_key,
    local_cents,
)

CALLING_CODE = {"US": "1", "CA": "1", "GB": "44", "FR": "33", "DE": "49", "JP": "81", "AU": "61"}
R = REFERENCE_DATE


def phone(seeds: Seeds, country: str) -> str:
    rng = seeds.rng
    if CALLING_CODE[country] == "1":
        return f"+1 ({rng.randint(201, 989)}) 555-{rng.randint(100, 199):04d}"
    return f"+{CALLING_CODE[country]} {rng.randint(10, 99)} {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}"


def generate(s: RetailChainState, seeds: Seeds) -> None:
    rng = seeds.rng
    s.counters.set(Counters())
    others = [c for c in CITIES if c.name not in ("New York", "London")]
    cities = [CITY_BY_NAME["New York"], CITY_BY_NAME["London"],
              *sorted(seeds.sample(others, rng.randint(5, 7)), key=CITIES.index)]
    stores: list[Store] = []
    for city in cities:
        count = 3 if city.name == "New York" else 2 if city.name == "London" else rng.randint(1, 3)
        formats = (["flagship", "standard", "express"] if city.name == "New York"
                   else ["standard", "flagship"] if city.name == "London"
                   else [seeds.choice(("standard", "standard", "standard", "flagship", "express")) for _ in range(count)])
        for hood, fmt in zip(seeds.sample(NEIGHBOURHOODS[city.name], count), formats, strict=True):
            sid = seeds.ident("ST", 101 + len(stores), 3)
            hours = {d: (None if d == "sun" and fmt == "standard" and city.country in SUNDAY_CLOSED_COUNTRIES
                         else list(h) if h else None) for d, h in HOURS[fmt].items()}
            stores.append(Store(
                store_id=sid, name=f"{CHAIN} {hood}" + (" Express" if fmt == "express" else ""), city=city.name,
                region=city.region, country=city.country, timezone=city.timezone,
                currency=CURRENCY_OF_COUNTRY[city.country], address=f"{rng.randint(1, 899)} {seeds.fake.street_name()}",
                phone=phone(seeds, city.country), lat=round(city.lat + rng.uniform(-0.06, 0.06), 4),
                lon=round(city.lon + rng.uniform(-0.06, 0.06), 4), format=fmt, hours=hours,
                pickup_enabled=fmt != "express", manager=seeds.fake.name(),
            ))
    renovating = seeds.choice([st for st in stores if st.city not in ("New York", "London")])
    renovating.reopens_on = iso((R + timedelta(days=rng.randint(8, 20))).date())
    for st in stores:
        s.stores.put(st.store_id, st)
    products = _catalog(s, seeds)
    _inventory(s, seeds, stores, products)
    _reservations(s, seeds, stores)
    _movements(s, seeds, stores)


def _catalog(s: RetailChainState, seeds: Seeds) -> list[Product]:
    rng = seeds.rng
    rows = [row for row in CATALOG if row[0] == "Gaming Console X" or rng.random() < 0.88]
    skus = rng.sample(range(10000, 99999), len(rows))
    products = []
    for (name, category, brand, lo, hi), num in zip(rows, skus, strict=True):
        price = rng.randint(lo, hi) * 100 - 1
        p = Product(sku=f"BM-{num}", name=name, category=category, brand=brand, list_price_usd_cents=price,
                    unit_cost_usd_cents=round(price * rng.uniform(0.42, 0.62)), lead_time_days=rng.randint(2, 6),
                    supplier=SUPPLIERS[category], max_per_customer=2 if name == "Gaming Console X" else None)
        products.append(p)
        s.products.put(p.sku, p)
    seeds.choice([p for p in products if p.max_per_customer is None]).discontinued = True
    return products


def _line(seeds: Seeds, store: Store, p: Product, on_hand: int) -> Inventory:
    rng = seeds.rng
    price = local_cents(p.list_price_usd_cents, store.currency, retail=True)
    if rng.random() < 0.2:  # a local markdown, never below cost
        cost = local_cents(p.unit_cost_usd_cents, store.currency, retail=False)
        marked = local_cents(round(p.list_price_usd_cents * rng.uniform(0.8, 0.92)), store.currency, retail=True)
        price = max(marked, cost + (100 if store.currency == "JPY" else 1))
    capacity = max(on_hand + rng.randint(5, 40), rng.choice((20, 30, 40, 60)))
    return Inventory(store.store_id, p.sku, on_hand, 0, price, capacity, rng.randint(3, 10),
                     f"{seeds.choice('ABCDEFGH')}{rng.randint(1, 24)}",
                     iso(R - timedelta(days=rng.randint(1, 40), hours=rng.randint(0, 12))))


def _inventory(s: RetailChainState, seeds: Seeds, stores: list[Store], products: list[Product]) -> None:
    rng = seeds.rng
    share = {"flagship": 0.9, "standard": 0.75, "express": 0.35}
    ny_flag, ny_std, london_std = stores[0], stores[1], stores[3]
    wrong_store = seeds.choice([p for p in products if not p.discontinued and p.max_per_customer is None])
    must = {(ny_flag.store_id, wrong_store.sku): 12}
    for p in products:
        if p.discontinued or p.max_per_customer:
            must[(london_std.store_id, p.sku)] = 6
    for st in stores:
        for p in products:
            forced = must.get((st.store_id, p.sku))
            if forced is None and (rng.random() >= share[st.format] or (st is ny_std and p is wrong_store)):
                continue
            roll = rng.random()
            on_hand = 0 if roll < 0.08 else rng.randint(1, 4) if roll < 0.28 else rng.randint(5, 60)
            on_hand = forced if forced is not None else on_hand
            s.inventory.put(inv_key(st.store_id, p.sku), _line(seeds, st, p, on_hand))


def _reserve(s: RetailChainState, seeds: Seeds, store: Store, status: str, created_h: float, qty: int = 1) -> None:
    rng = seeds.rng
    lines = [i for i in s.inventory.values() if i.store_id == store.store_id and i.available >= qty + 1
             and not s.products[i.sku].max_per_customer]
    inv = seeds.choice(lines)
    created = R + timedelta(hours=created_h)
    ready = created + timedelta(minutes=60)
    rid = new_id(s.counters, "PU")
    res = Reservation(rid, store.store_id, inv.sku, qty, inv.price_cents, store.currency, seeds.fake.name(),
                      phone(seeds, store.country), f"{rng.randrange(10**6):06d}", status, iso(created), iso(ready),
                      iso(ready + timedelta(hours=48)))
    if status in ACTIVE_RESERVATION:
        s.inventory.edit(inv_key(store.store_id, inv.sku)).reserved += qty
    elif status == "picked_up":
        res.closed_at = iso(ready + timedelta(hours=rng.randint(1, 30)))
        sid = new_id(s.counters, "SALE")
        s.sales.put(sid, Sale(sid, rid, store.store_id, inv.sku, qty, inv.price_cents, qty * inv.price_cents,
                              store.currency, res.customer_name, res.closed_at))
    else:
        res.closed_at = res.expires_at if status == "expired" else iso(created + timedelta(hours=rng.randint(1, 20)))
    s.reservations.put(rid, res)


def _reservations(s: RetailChainState, seeds: Seeds, stores: list[Store]) -> None:
    rng = seeds.rng
    ny_flag, london_std, london_flag = stores[0], stores[3], stores[4]
    _reserve(s, seeds, london_std, "ready", -3)
    _reserve(s, seeds, ny_flag, "ready", -47.5)  # ready at -46.5 h: the 48-hour hold ends at +1.5 h
    _reserve(s, seeds, london_flag, "preparing", -10 / 60)
    _reserve(s, seeds, ny_flag, "expired", -24 * 5)
    pickup = [st for st in stores if st.pickup_enabled and st.reopens_on is None]
    for _ in range(rng.randint(8, 14)):
        status = seeds.choice(("picked_up", "picked_up", "picked_up", "cancelled", "expired", "ready"))
        created = -rng.uniform(3, 40) if status == "ready" else -rng.uniform(60, 24 * 30)
        _reserve(s, seeds, seeds.choice(pickup), status, created, qty=rng.choice((1, 1, 2)))


def _movements(s: RetailChainState, seeds: Seeds, stores: list[Store]) -> None:
    rng = seeds.rng
    ny_flag = stores[0]
    active = [st for st in stores if st.reopens_on is None]
    # an open restock at the New York flagship, another somewhere else, and delivered ones
    plans = [(ny_flag, "ordered"), (seeds.choice(active), "ordered")]
    plans += [(seeds.choice(active), "delivered") for _ in range(rng.randint(3, 5))]
    for store, status in plans:
        lines = [i for i in s.inventory.values() if i.store_id == store.store_id
                 and not s.products[i.sku].discontinued and i.on_hand + 10 <= i.capacity
                 and not any(r.status == "ordered" and r.store_id == store.store_id and r.sku == i.sku
                             for r in s.restocks.values())]
        inv = seeds.choice(lines)
        product = s.products[inv.sku]
        qty = rng.randint(5, min(30, inv.capacity - inv.on_hand - 5))
        ordered = R - timedelta(days=rng.randint(0, product.lead_time_days - 1) if status == "ordered" else rng.randint(8, 60),
                                hours=rng.randint(1, 9))
        eta = ordered + timedelta(days=product.lead_time_days)
        rid = new_id(s.counters, "RST")
        s.restocks.put(rid, Restock(rid, store.store_id, inv.sku, qty, product.supplier, status, iso(ordered), iso(eta),
                                    iso(eta) if status == "delivered" else None))
    # transfers between stores of one country: two on the road, a few received
    for status in ["in_transit", "in_transit"] + ["received"] * rng.randint(2, 4):
        src = seeds.choice([st for st in active if sum(o.country == st.country for o in active) > 1])
        dst = seeds.choice([st for st in active if st.country == src.country and st is not src])
        lines = [i for i in s.inventory.values() if i.store_id == src.store_id and i.available >= 6]
        inv = seeds.choice(lines)
        qty = rng.randint(2, min(10, inv.available - 2))
        hours = transit_hours(src, dst)
        sent = R - timedelta(hours=rng.uniform(0.5, hours - 0.5)) if status == "in_transit" \
            else R - timedelta(days=rng.randint(3, 40))
        sent = sent.replace(second=0, microsecond=0)
        eta = sent + timedelta(hours=hours)
        tid = new_id(s.counters, "TRF")
        s.transfers.put(tid, Transfer(tid, inv.sku, src.store_id, dst.store_id, qty, status, iso(sent), iso(eta),
                                      iso(eta) if status == "received" else None, "rebalancing stock"))
