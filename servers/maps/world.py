"""The seeded maps world: the shared geography (see :mod:`servers.maps.geography`) as session state,
sample reviews, and the signed-in user's account with saved places, lists and their own reviews.

Archetypes in every seed (besides the geography's): the user has already saved places (saving one
twice fails), has a list with places in it, and has reviewed two places (reviewing them again fails).
"""

from __future__ import annotations

from datetime import timedelta

from servers.kit import Counters, Seeds, iso
from servers.kit.fake import REFERENCE_DATE
from servers.maps import data
from servers.maps.geography import seed_geography
from servers.maps.state import (
    Account,
    Home,
    ListEntry,
    MapsState,
    Place,
    PlaceList,
    Review,
    SavedPlace,
    WorldInfo,
)


def generate(s: MapsState, seeds: Seeds) -> None:
    """~350 places in 16 cities, 96 homes, 2-3 sample reviews per place, one user account."""
    rng, fake = seeds.rng, seeds.fake
    geo = seed_geography(seeds.seed)
    s.world.set(WorldInfo(seeds.seed))
    for b in geo.businesses:
        s.places.put(b.place_id, Place(
            b.place_id, b.name, b.category, b.cuisine, b.address, b.city, b.formatted_address, b.latitude,
            b.longitude, b.phone, b.website, b.rating, b.review_count, b.price_level,
            {d: list(v) for d, v in b.hours.items()}, list(b.tags), b.status, b.closed_until))
    for h in geo.homes:
        s.homes.put(h.address_id, Home(h.address_id, h.address, h.city, h.formatted_address, h.latitude, h.longitude))

    authors = [f"{fake.first_name()} {fake.last_name()[0]}." for _ in range(40)]
    n = 0
    for p in s.places.values():
        for _ in range(rng.randint(2, 3)):
            n += 1
            stars = max(1, min(5, round(rng.gauss(p.rating, 0.9))))
            text = f"{rng.choice(data.REVIEW_OPENERS)}: {rng.choice(data.REVIEW_DETAILS)}."
            when = REFERENCE_DATE - timedelta(days=rng.randint(1, 400), minutes=rng.randint(0, 1439))
            rid = f"REV-{n:05d}"
            s.reviews.put(rid, Review(rid, p.place_id, rng.choice(authors), stars, text, iso(when)))

    # the signed-in user: a home in one city, work at a place in the same city
    home = rng.choice([h for h in geo.homes if not h.suburb])
    local = [p for p in s.places.values() if p.city == home.city and p.status == "operational"]
    work = rng.choice([p for p in local if p.category in ("hotel", "museum", "supermarket", "pharmacy")])
    name = fake.name()
    s.account.set(Account(name, f"{name.split()[0].lower()}.{name.split()[-1].lower()}@example.com",
                          home.address_id, work.place_id))
    picks = rng.sample([p for p in local if p.place_id != work.place_id], 5)
    labels = {"cafe": "Favourite coffee", "pharmacy": "Pharmacy", "restaurant": "Go-to dinner", "museum": "Museum"}
    for p in picks:
        label = labels.pop(p.category, None)
        when = REFERENCE_DATE - timedelta(days=rng.randint(3, 200))
        s.saved.put(p.place_id, SavedPlace(p.place_id, label, None, iso(when)))

    other = rng.choice([c for c in sorted({p.city for p in s.places.values()}) if c != home.city])
    trip = rng.sample([p for p in s.places.values() if p.city == other and p.status == "operational"], 4)
    cafes = [p for p in local if p.category in ("cafe", "bakery")][:3]
    created = iso(REFERENCE_DATE - timedelta(days=40))
    s.lists.put("LST-0001", PlaceList("LST-0001", f"{other} trip", f"Places to see in {other}", "private", created,
                                      [ListEntry(p.place_id, None, created) for p in trip]))
    s.lists.put("LST-0002", PlaceList("LST-0002", "Coffee spots", "Good places for a coffee near home", "shared",
                                      created, [ListEntry(p.place_id, None, created) for p in cafes]))
    for p in rng.sample([p for p in local if p.category == "restaurant"], 2):
        n += 1
        rid = f"REV-{n:05d}"
        s.reviews.put(rid, Review(rid, p.place_id, name, rng.randint(3, 5), "Came here with friends, would return.",
                                  iso(REFERENCE_DATE - timedelta(days=rng.randint(5, 90))), by_you=True))
    s.counters.set(Counters(next={"LST": 3, "REV": n + 1}))
