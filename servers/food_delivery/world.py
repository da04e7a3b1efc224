"""The seeded food-delivery world, built on the maps geography of the same seed: every maps
restaurant is a delivery restaurant (same name, address, coordinates and opening hours) and every
customer address is a maps home address, so maps geocodes it to the same coordinates.

Archetypes in every seed (customers shuffled): an order just placed (still cancellable), one being
prepared, one picked up by the courier, one delivered three hours ago (unrated: can be rated, tipped
and have missing items refunded), one delivered and already rated, one delivered ten days ago
(rating and report windows closed) and one cancelled; a customer without orders (first-order promo);
a customer with an address in the suburbs (outside every delivery radius); a sold-out item at each
city's all-night restaurant; promo codes that are valid, expiring within 90 minutes, expired,
first-order only and restaurant-specific; gift cards that are valid, already redeemed and expired.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from servers.food_delivery.menus import COURIERS, MENUS, OPTION_GROUPS, PROMOS
from servers.food_delivery.state import (
    Customer,
    DeliveryAddress,
    FoodState,
    GiftCard,
    MenuItem,
    Option,
    OptionGroup,
    Order,
    OrderLine,
    OrderRating,
    Promo,
    Restaurant,
    WorldInfo,
    distance_km,
    money,
    plan_timeline,
    service_fee,
)
from servers.kit import Counters, Seeds, iso
from servers.kit.fake import REFERENCE_DATE
from servers.kit.geo import CITIES
from servers.maps.data import ALL_DAY_RESTAURANT
from servers.maps.geography import seed_geography

_CODE_CHARS = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
REF = REFERENCE_DATE


def _menu(s: FoodState, seeds: Seeds, r: Restaurant, n_item: int, sold_out: bool) -> int:
    rng = seeds.rng
    templates = MENUS[r.cuisine]
    chosen = sorted(rng.sample(range(len(templates)), k=rng.randint(min(7, len(templates)), len(templates))))
    ids = []
    for t in chosen:
        name, category, base, veg, spicy, groups = templates[t]
        n_item += 1
        iid = f"ITM-{n_item:05d}"
        price = round(base * rng.uniform(0.9, 1.15) * 2) / 2 - 0.01
        opts = [OptionGroup(OPTION_GROUPS[g][0], OPTION_GROUPS[g][1], OPTION_GROUPS[g][2],
                            [Option(o, p) for o, p in OPTION_GROUPS[g][3]]) for g in groups]
        s.menu_items.put(iid, MenuItem(iid, r.restaurant_id, name, category, money(price), veg, spicy,
                                       rng.random() > 0.06, opts))
        ids.append(iid)
    if sold_out:
        s.menu_items.edit(ids[rng.randrange(1, len(ids))]).available = False
    return n_item


def _lines(s: FoodState, seeds: Seeds, r: Restaurant) -> list[OrderLine]:
    rng = seeds.rng
    items = [i for i in s.menu_items.values() if i.restaurant_id == r.restaurant_id and i.available]
    lines = []
    for k, item in enumerate(rng.sample(items, k=min(len(items), rng.randint(2, 4))), start=1):
        opts = [g.options[rng.randrange(len(g.options))].name for g in item.option_groups if g.required]
        unit = money(item.price + sum(o.price for g in item.option_groups for o in g.options if o.name in opts))
        qty = rng.choice([1, 1, 1, 2])
        lines.append(OrderLine(f"L{k}", item.item_id, item.name, qty, opts, unit, money(unit * qty)))
    return lines


def _order(s: FoodState, seeds: Seeds, n: int, c: Customer, a: DeliveryAddress, r: Restaurant,
           placed: datetime, status: str) -> Order:
    rng = seeds.rng
    lines = _lines(s, seeds, r)
    sub = money(sum(x.line_total for x in lines))
    tip = rng.choice([0.0, 2.0, 3.0, 5.0])
    km = distance_km(r, a)
    total = money(sub + r.delivery_fee + service_fee(sub) + tip)
    oid = f"FDO-{n:04d}"
    o = Order(oid, c.customer_id, r.restaurant_id, a.address_id, lines, sub, r.delivery_fee, service_fee(sub), 0.0,
              None, tip, total, 0.0, total, status, plan_timeline(r, len(lines), km, placed, n), km,
              COURIERS[n % len(COURIERS)])
    if status == "cancelled":
        o.cancelled_at = iso(placed + timedelta(minutes=1))
        o.cancel_reason = "changed_mind"
    return s.orders.put(oid, o)


def generate(s: FoodState, seeds: Seeds) -> None:
    """112 restaurants with ~1,000 menu items, 32 customers, ~70 orders, promos and gift cards."""
    rng, fake = seeds.rng, seeds.fake
    geo = seed_geography(seeds.seed)
    s.world.set(WorldInfo(seeds.seed))
    n_item = 0
    all_night: dict[str, Restaurant] = {}
    for k, b in enumerate((b for b in geo.businesses if b.category == "restaurant"), start=1):
        always = b.hours == ALL_DAY_RESTAURANT
        rid = f"RST-{k:04d}"
        r = s.restaurants.put(rid, Restaurant(
            rid, b.place_id, b.name, b.cuisine or "american", b.formatted_address, b.city, b.latitude, b.longitude,
            {d: list(v) for d, v in b.hours.items()}, round(rng.uniform(3.6, 4.9), 1), rng.randint(40, 3000),
            b.price_level, 8.0 if always else rng.choice([3.0, 4.0, 5.0, 6.0, 7.0]),
            rng.choice([10.0, 12.0, 15.0, 20.0, 25.0]), rng.choice([0.99, 1.49, 1.99, 2.49, 2.99, 3.99]),
            rng.randint(10, 25)))
        n_item = _menu(s, seeds, r, n_item, sold_out=always)
        if always:
            all_night[b.city] = r

    homes = {c.name: [h for h in geo.homes if h.city == c.name] for c in CITIES}
    n_cust = n_addr = 0
    suburb_city = rng.choice(CITIES).name
    for city in CITIES:
        near = [h for h in homes[city.name] if not h.suburb]
        suburb = next(h for h in homes[city.name] if h.suburb)
        picks = rng.sample(near, 3)
        for j in range(2):
            n_cust += 1
            cid = f"CUS-{n_cust:04d}"
            name = fake.name()
            first, last = name.split()[0].lower(), name.split()[-1].lower()
            s.customers.put(cid, Customer(
                cid, name, f"{first}.{last}@example.com", f"+1 555-01{rng.randint(0, 99):02d}", city.name,
                rng.choice([0.0, 0.0, 5.0, 10.0, 12.5, 20.0]), rng.choice(["Visa", "Mastercard", "Amex"]),
                f"{rng.randint(0, 9999):04d}"))
            own = [("Home", picks[j])]
            if j == 1:
                own.append(("Work", picks[2]))
            if (j == 0 and city.name == suburb_city) or rng.random() < 0.2:
                own.append(("Parents", suburb))
            for label, h in own:
                n_addr += 1
                aid = f"FDA-{n_addr:04d}"
                s.addresses.put(aid, DeliveryAddress(aid, cid, label, h.formatted_address, h.city, h.latitude,
                                                     h.longitude, None))

    # promos (one restaurant-specific) and gift cards
    for code, kind, value, min_sub, cap, minutes, first, text in PROMOS:
        s.promos.put(code, Promo(code, text, kind, value, min_sub, cap, iso(REF + timedelta(minutes=minutes)), None,
                                 first))
    special = rng.choice(sorted(all_night.values(), key=lambda r: r.restaurant_id))
    code = "".join(ch for ch in special.name.upper() if ch.isalpha())[:6] + "10"
    s.promos.put(code, Promo(code, f"10% off at {special.name}", "percent", 10.0, 10.0, None,
                             iso(REF + timedelta(days=20)), special.restaurant_id, False))
    customers = list(s.customers.values())
    for g in range(1, 9):
        holder = rng.choice(customers)
        code = "-".join("".join(rng.choice(_CODE_CHARS) for _ in range(4)) for _ in range(3))
        expires = REF + timedelta(days=-10 if g == 2 else 180)
        card = GiftCard(f"GC-{g:04d}", code, rng.choice([10.0, 25.0, 50.0]), iso(expires), holder.customer_id)
        if g == 1:
            card.redeemed_by, card.redeemed_at = holder.customer_id, iso(REF - timedelta(days=12))
        s.gift_cards.put(card.gift_card_id, card)

    # orders: archetypes on distinct customers, then history
    order_ids = [c.customer_id for c in customers]
    rng.shuffle(order_ids)
    n = 0
    kinds = [("placed", -1), ("preparing", -12), ("picked_up", -40), ("delivered", -180), ("rated", -24 * 60),
             ("old", -10 * 24 * 60), ("cancelled", -2 * 24 * 60)]
    no_orders = order_ids[len(kinds)]
    for (kind, minutes), cid in zip(kinds, order_ids, strict=False):
        c = s.customers[cid]
        a = next(x for x in s.addresses.values() if x.customer_id == cid and x.label == "Home")
        r = all_night[c.city]
        n += 1
        status = {"rated": "delivered", "old": "delivered"}.get(kind, kind)
        o = _order(s, seeds, n, c, a, r, REF + timedelta(minutes=minutes), status)
        if kind in ("placed", "preparing", "picked_up"):
            _fit(o, REF, kind)
        if kind == "rated":
            o.rating = OrderRating(rng.randint(3, 5), rng.randint(4, 5), "Hot and on time.",
                                   iso(REF - timedelta(hours=20)))
        if kind == "placed":
            s.customers.edit(cid).used_promos.append("SAVE5")
    for cid in order_ids[len(kinds) + 1:]:
        c = s.customers[cid]
        a = next(x for x in s.addresses.values() if x.customer_id == cid and x.label == "Home")
        options = [r for r in s.restaurants.values() if r.city == c.city and distance_km(r, a) <= r.delivery_radius_km]
        for _ in range(rng.randint(0, 3)):
            n += 1
            placed = REF - timedelta(days=rng.randint(3, 60), minutes=rng.randint(0, 600))
            o = _order(s, seeds, n, c, a, rng.choice(options), placed, "delivered")
            if rng.random() < 0.5:
                o.rating = OrderRating(rng.randint(2, 5), rng.randint(3, 5), None,
                                       iso(datetime.fromisoformat(o.timeline["delivered"]) + timedelta(hours=2)))
    assert not any(o.customer_id == no_orders for o in s.orders.values())
    s.counters.set(Counters(next={"FDO": n + 1, "FDA": n_addr + 1}))


def _fit(o: Order, ref: datetime, stage: str) -> None:
    """Shift an in-progress order's plan so that at ``ref`` it sits in ``stage`` with time to spare."""
    offsets = {"placed": (-1, 3, 8), "preparing": (-12, -9, -4), "picked_up": (-40, -35, -30)}[stage]
    placed, accepted, preparing = (ref + timedelta(minutes=m) for m in offsets)
    t = dict(o.timeline)
    prep = datetime.fromisoformat(t["picked_up"]) - datetime.fromisoformat(t["preparing"])
    travel = datetime.fromisoformat(t["delivered"]) - datetime.fromisoformat(t["picked_up"])
    picked = preparing + prep if stage != "picked_up" else ref - timedelta(minutes=3)
    delivered = max(picked + travel, ref + timedelta(minutes=15))
    o.timeline = {"placed": iso(placed), "accepted": iso(accepted), "preparing": iso(preparing),
                  "picked_up": iso(picked), "delivered": iso(delivered)}
