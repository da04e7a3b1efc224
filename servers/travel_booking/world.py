"""The seeded travel world: travellers with passports, loyalty numbers and cards; ~250 scheduled flights
on 8 city pairs over 12 days; ~48 hotels in the kit's 16 cities; and itineraries whose bookings sit in
every lifecycle state.

Archetypes present in every seed (ids shuffled by the seed): a flight departing later today (its
check-in is open) with a ticketed booking on it; a flight with sold-out fare classes; flights that
already left; a hold about to lapse and one that lapsed; ticketed refundable, non-refundable and
basic-economy bookings further out; a hotel stay in progress, a confirmed stay inside the 48-hour
cancellation window and one outside it; a hotel room type sold out for a run of nights; a traveller
whose passport has expired; an expired card; an itinerary still in planning.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from servers.kit import Counters, Seeds, iso
from servers.kit.fake import REFERENCE_DATE
from servers.kit.geo import CITIES, CITY_BY_NAME, haversine_km
from servers.travel_booking.rules import (
    AIRLINES,
    CABIN_SEATS,
    FARE_CLASSES,
    FARE_RULES,
    HOLD_MINUTES,
    TICKET_PREFIX,
    cabin_seats,
    money,
    nights,
)
from servers.travel_booking.state import (
    Fare,
    Flight,
    FlightBooking,
    Hotel,
    HotelReservation,
    Itinerary,
    Passenger,
    PaymentCard,
    RoomType,
    Traveller,
    TravelState,
)

DAYS = range(-1, 11)  # flight schedule: yesterday .. ten days ahead
_NATIONALITY = ("US",) * 6 + ("GB", "CA", "FR", "DE", "JP", "AU")
_BRANDS = ("Harborview", "Grand Meridian", "Parkside Inn", "Lumen Suites", "The Wayfarer", "Copperleaf",
           "Atlas Lodge", "Riverside Plaza", "Nightjar House", "Cobalt Hotel", "Saltbox Inn", "Beacon Court")
_AMENITIES = ("free wifi", "breakfast included", "pool", "gym", "spa", "airport shuttle", "parking",
              "pet friendly", "restaurant", "bar", "business center", "ev charging")
_ROOMS = (("standard", 2, 1.0), ("deluxe", 3, 1.45), ("suite", 4, 2.4), ("family", 5, 1.8))
_CITY_RATE = {"New York": 1.5, "San Francisco": 1.4, "London": 1.45, "Paris": 1.35, "Tokyo": 1.3, "Boston": 1.25,
              "Sydney": 1.2, "Los Angeles": 1.2, "Seattle": 1.15, "Miami": 1.15, "Toronto": 1.1, "Berlin": 1.0,
              "Chicago": 1.1, "Austin": 1.0, "Denver": 0.95, "Atlanta": 0.9}
_NARROW = ("Airbus A320neo", "Boeing 737-800", "Airbus A321neo", "Boeing 737 MAX 8")
_WIDE = ("Boeing 787-9", "Airbus A350-900", "Boeing 777-300ER")


def _at(day: int, hour: int, minute: int = 0) -> datetime:
    return (REFERENCE_DATE + timedelta(days=day)).replace(hour=hour, minute=minute)


def _day(day: int) -> str:
    return (REFERENCE_DATE.date() + timedelta(days=day)).isoformat()


def generate(s: TravelState, seeds: Seeds) -> None:
    s.counters.set(Counters())
    w = _World(s, seeds)
    w.travellers()
    w.flights()
    w.hotels()
    w.trips()
    s.counters.set(Counters(next=dict(w.next)))


class _World:
    def __init__(self, s: TravelState, seeds: Seeds) -> None:
        self.s, self.seeds, self.rng, self.fake = s, seeds, seeds.rng, seeds.fake
        self.next: dict[str, int] = {}
        self.traveller_ids: list[str] = []
        self.flight_ids: list[str] = []

    def ident(self, prefix: str) -> str:
        n = self.next.get(prefix, 1)
        self.next[prefix] = n + 1
        return f"{prefix}-{n:04d}"

    # ------------------------------------------------------------ people
    def travellers(self) -> None:
        rng, fake = self.rng, self.fake
        n = rng.randint(22, 28)
        expired_at, valid_card_only = rng.randrange(n), rng.randrange(n)
        seen: set[str] = set()
        for i in range(n):
            first, last = fake.first_name(), fake.last_name()
            while f"{first} {last}" in seen:
                last = fake.last_name()
            seen.add(f"{first} {last}")
            tid = self.ident("TRV")
            expiry = _day(-rng.randint(20, 200)) if i == expired_at else _day(rng.randint(120, 3400))
            loyalty = {code: fake.numerify("#########") for code in
                       sorted(self.seeds.sample(list(AIRLINES), rng.randint(0, 2)))}
            credit = money(rng.uniform(80, 350)) if rng.random() < 0.2 else 0.0
            self.s.travellers.put(tid, Traveller(
                tid, first, last, f"{first}.{last}@{fake.free_email_domain()}".lower().replace(" ", ""),
                fake.numerify("+1 ###-###-####"), fake.date_of_birth(minimum_age=18, maximum_age=80).isoformat(),
                self.seeds.choice(_NATIONALITY), f"{fake.random_uppercase_letter()}{fake.numerify('########')}",
                expiry, loyalty, credit))
            self.traveller_ids.append(tid)
            for c in range(1 if i == valid_card_only else rng.randint(1, 2)):
                brand = self.seeds.choice(("Visa", "Mastercard", "Amex", "Visa"))
                expired = c == 1 and rng.random() < 0.5
                month = (REFERENCE_DATE.date().replace(day=1) + timedelta(days=31 * (
                    -rng.randint(1, 10) if expired else rng.randint(3, 48)))).strftime("%Y-%m")
                cid = self.ident("CRD")
                self.s.cards.put(cid, PaymentCard(cid, tid, brand, fake.numerify("####"), month,
                                                  fake.numerify("####" if brand == "Amex" else "###")))
        # one expired card always exists (on a traveller who also holds a valid one)
        if not any(c.expiry < "2026-06" for c in self.s.cards.values()):
            owner = next(t for t in self.traveller_ids if t != self.traveller_ids[expired_at])
            cid = self.ident("CRD")
            self.s.cards.put(cid, PaymentCard(cid, owner, "Mastercard", fake.numerify("####"), "2026-02",
                                              fake.numerify("###")))

    # ------------------------------------------------------------ flights
    def flights(self) -> None:
        rng = self.rng
        us = [c for c in CITIES if c.country == "US"]
        abroad = [c for c in CITIES if c.country != "US"]
        pairs = [tuple(self.seeds.sample(us, 2)) for _ in range(5)]
        pairs += [(self.seeds.choice(us), c) for c in self.seeds.sample(abroad, 3)]
        uniq: list[tuple] = []
        for a, b in pairs:
            if (a, b) not in uniq and (b, a) not in uniq:
                uniq.append((a, b))
        while len(uniq) < 8:
            a, b = self.seeds.sample(us, 2)
            if (a, b) not in uniq and (b, a) not in uniq:
                uniq.append((a, b))
        for route, (a, b) in enumerate(uniq):
            km = haversine_km(a.lat, a.lon, b.lat, b.lon)
            intl = a.country != b.country
            airlines = self.seeds.sample(sorted(AIRLINES), 2)
            numbers = [[rng.randint(100, 2999) for _ in range(2)] for _ in range(2)]
            for direction, (o, d) in enumerate(((a, b), (b, a))):
                for day in DAYS:
                    count = 1 if intl else (2 if rng.random() < 0.5 else 1)
                    hours = sorted(self.seeds.sample(range(6, 22), count))
                    for k, hour in enumerate(hours):
                        minute = self.seeds.choice((0, 15, 30, 45))
                        if route == 0 and direction == 0 and day == 0 and k == 0:
                            hour, minute = 16, 30  # check-in is open for this one all morning
                        sold_out = route == 1 and direction == 0 and day == 3 and k == 0
                        self._flight(o.airport, d.airport, _at(day, hour, minute), km, intl,
                                     f"{airlines[k % 2]} {numbers[direction][k]}", day, sold_out)

    def _flight(self, origin: str, dest: str, depart: datetime, km: float, intl: bool, number: str,
                day: int, sold_out: bool) -> None:
        rng = self.rng
        minutes = int(round((km / 820 * 60 + 35) / 5) * 5)
        base = (49 + 0.11 * km if not intl else 150 + 0.075 * km) * rng.uniform(0.85, 1.3)
        base *= 1.25 if day <= 2 else 1.0
        mult = {"basic_economy": 0.8, "economy": 1.0, "premium_economy": 1.75, "business": 4.2 if intl else 3.4}
        seats = {"basic_economy": rng.randint(0, 9), "economy": rng.randint(0, 36),
                 "premium_economy": rng.randint(0, 10), "business": rng.randint(0, 6)}
        if sold_out:
            seats.update(business=0, basic_economy=0)
        if day >= 0 and not sold_out:
            seats["economy"] = max(seats["economy"], 4)  # some cabin always sells
        fares = {cls: Fare(money(base * mult[cls]), seats[cls]) for cls in FARE_CLASSES}
        blocked: list[str] = []
        for cabin in CABIN_SEATS:
            pool = cabin_seats(cabin)
            left = sum(seats[c] for c in FARE_CLASSES if FARE_RULES[c].cabin == cabin)
            taken = max(0, len(pool) - left - 6 - rng.randint(0, 4))
            blocked += sorted(self.seeds.sample(pool, taken), key=pool.index)
        fid = self.ident("FLT")
        self.s.flights.put(fid, Flight(fid, number, number.split()[0], origin, dest, iso(depart),
                                       iso(depart + timedelta(minutes=minutes)), minutes,
                                       self.seeds.choice(_WIDE if intl else _NARROW), fares, blocked))
        self.flight_ids.append(fid)

    # ------------------------------------------------------------ hotels
    def hotels(self) -> None:
        rng = self.rng
        hotel_ids: list[str] = []
        for city in CITIES:
            for brand in self.seeds.sample(_BRANDS, 3):
                stars = rng.randint(2, 5)
                rate = (45 + 32 * stars) * _CITY_RATE[city.name] * rng.uniform(0.9, 1.2)
                rooms = {}
                for name, cap, factor in _ROOMS:
                    if name == "family" and rng.random() < 0.5:
                        continue
                    total = rng.randint(8, 30) if name == "standard" else rng.randint(2, 12)
                    booked = {}
                    for night in self.seeds.sample(range(0, 40), rng.randint(2, 8)):
                        booked[_day(night)] = rng.randint(1, total)
                    rooms[name] = RoomType(name, cap, money(rate * factor), total, dict(sorted(booked.items())))
                hid = self.ident("HTL")
                self.s.hotels.put(hid, Hotel(
                    hid, f"{brand} {city.name}", city.name, f"{self.fake.street_address()}, {city.name}", stars,
                    round(rng.uniform(6.4, 9.7), 1), sorted(self.seeds.sample(_AMENITIES, rng.randint(3, 7))), rooms))
                hotel_ids.append(hid)
        # a room type sold out for a run of nights (a conference in town) in a few hotels
        for hid in self.seeds.sample(hotel_ids, 4):
            hotel = self.s.hotels[hid]
            rt = hotel.rooms[self.seeds.choice(sorted(hotel.rooms))]
            start = rng.randint(4, 14)
            for night in range(start, start + rng.randint(2, 4)):
                rt.booked[_day(night)] = rt.total_rooms
            rt.booked = dict(sorted(rt.booked.items()))

    # ------------------------------------------------------------ trips
    def trips(self) -> None:
        rng, s = self.rng, self.s
        pool = [t for t in self.traveller_ids if s.travellers[t].passport_expiry >= _day(30)]
        rng.shuffle(pool)
        flights = [s.flights[f] for f in self.flight_ids]

        def pick_flight(lo: int, hi: int, cls: str, pax: int, intl: bool | None = None) -> Flight:
            return self.seeds.choice([
                f for f in flights if iso(_at(lo, 0)) <= f.depart_at < iso(_at(hi, 0))
                and f.fares[cls].seats_left >= pax + 1 and (intl is None or _intl(f) == intl)])

        checkin_flight = next(f for f in flights if f.depart_at == iso(_at(0, 16, 30)))
        plans = [  # (kind, passengers, flight, fare class, booking status)
            ("past", 1, None, "economy", "completed"),
            ("checkin", 2, checkin_flight, "economy", "ticketed"),
            ("refundable", 1, None, "business", "ticketed"),
            ("nonrefundable", 2, None, "economy", "ticketed"),
            ("basic", 1, None, "basic_economy", "ticketed"),
            ("held", 1, None, "premium_economy", "held"),
            ("intl", 1, None, "economy", "ticketed"),
            ("expired", 1, None, "economy", "expired"),
            ("cancelled", 1, None, "premium_economy", "cancelled"),
        ]
        plans += [("extra", rng.randint(1, 2), None, self.seeds.choice(FARE_CLASSES[1:]), "ticketed")
                  for _ in range(rng.randint(5, 8))]
        for i, (kind, pax, flight, cls, status) in enumerate(plans):
            start = (i * 2) % (len(pool) - 2)
            group = pool[start:start + pax]
            if flight is None:
                if kind == "past":
                    flight = self.seeds.choice([f for f in flights if f.arrive_at <= iso(_at(0, 8))])
                elif kind == "intl":
                    flight = pick_flight(3, 10, cls, pax, intl=True)
                else:
                    flight = pick_flight(2, 10 if kind not in ("held", "basic") else 8, cls, pax)
            it = self._itinerary(kind, group[0], _city_of(flight.destination))
            self._booking(it, flight, cls, group, status)
            if kind in ("past", "checkin", "refundable", "nonrefundable", "intl", "extra"):
                arrive = (datetime.fromisoformat(flight.arrive_at).date() - REFERENCE_DATE.date()).days
                day, n = (-4, 2) if kind == "past" else (arrive, rng.randint(2, 4))
                self._reserve(it, _city_of(flight.destination), group[0], day, n,
                              "completed" if kind == "past" else "confirmed", guests=len(group))
        # an itinerary still in planning, a stay under way and one starting tomorrow (no flights attached)
        cities = [c.name for c in CITIES]
        self._itinerary("planning", pool[-1], self.seeds.choice(cities))
        city = self.seeds.choice(cities)
        self._reserve(self._itinerary("in_stay", pool[-2], city), city, pool[-2], -1, rng.randint(2, 4), "in_stay")
        city = self.seeds.choice(cities)
        self._reserve(self._itinerary("soon", pool[-3], city), city, pool[-3], 1, rng.randint(1, 3), "confirmed")

    def _itinerary(self, kind: str, lead: str, city: str) -> Itinerary:
        label = {"past": "Weekend in", "planning": "Ideas for", "in_stay": "Stay in"}.get(
            kind, self.seeds.choice(("Trip to", "Meetings in", "Visit to", "Conference in")))
        iid = self.ident("ITN")
        created = iso(REFERENCE_DATE - timedelta(days=self.rng.randint(3, 40), minutes=self.rng.randint(0, 600)))
        notes = self.seeds.choice(("", "Window seats if possible.", "Keep receipts for expenses.",
                                   "Dinner reservation on the first night."))
        return self.s.itineraries.put(iid, Itinerary(iid, f"{label} {city}", lead, notes, created))

    def _booking(self, it: Itinerary, flight: Flight, cls: str, group: list[str], status: str) -> None:
        rng, s = self.rng, self.s
        depart = datetime.fromisoformat(flight.depart_at)
        bid = self.ident("FBK")
        created = REFERENCE_DATE - timedelta(minutes=10) if status == "held" else \
            min(REFERENCE_DATE, depart) - timedelta(days=rng.randint(2, 30))
        total = money(flight.fares[cls].price * len(group))
        b = FlightBooking(bid, it.itinerary_id, flight.flight_id, cls, [Passenger(t) for t in group], status,
                          iso(created), None, total, history=[f"{iso(created)} fare held"])
        if status in ("held", "expired"):
            b.hold_expires_at = iso(created + timedelta(minutes=HOLD_MINUTES))
            if status == "expired":
                b.created_at = iso(REFERENCE_DATE - timedelta(days=2))
                b.hold_expires_at = iso(REFERENCE_DATE - timedelta(days=2) + timedelta(minutes=HOLD_MINUTES))
                b.history = [f"{b.created_at} fare held", f"{b.hold_expires_at} hold expired"]
            else:
                flight.fares[cls].seats_left -= len(group)  # a live hold blocks inventory
        else:
            card = next(c for c in s.cards.values() if c.traveller_id == group[0] and c.expiry >= "2026-06")
            b.card_id = card.card_id
            b.amount_paid = total
            prefix = TICKET_PREFIX[flight.airline_code]
            for p in b.passengers:
                p.ticket_number = f"{prefix}{self.ident('TKT')[4:]:0>10}"
            b.history.append(f"{iso(created + timedelta(minutes=5))} paid and ticketed")
            if FARE_RULES[cls].seat_selection and rng.random() < 0.6:
                free = [x for x in cabin_seats(FARE_RULES[cls].cabin) if x not in flight.blocked_seats
                        and all(x != p.seat for bk in s.flight_bookings.values() if bk.flight_id == flight.flight_id
                                for p in bk.passengers)]
                for p, seat in zip(b.passengers, self.seeds.sample(free, len(b.passengers)), strict=True):
                    p.seat = seat
            if status == "completed":
                for p in b.passengers:
                    p.checked_in = True
                    p.seat = p.seat or self.seeds.choice([x for x in cabin_seats(FARE_RULES[cls].cabin)
                                                          if x not in flight.blocked_seats])
                b.history.append(f"{flight.arrive_at} flight arrived")
            if status == "cancelled":
                fee = FARE_RULES[cls].cancel_fee * len(group)
                b.refunded, b.fees_charged = money(total - fee), money(fee)
                b.history.append(f"{iso(created + timedelta(days=1))} cancelled; refunded {b.refunded:.2f}")
                for p in b.passengers:
                    p.seat = None
        s.flight_bookings.put(bid, b)
        it.flight_booking_ids.append(bid)

    def _reserve(self, it: Itinerary, city: str, traveller: str, day: int, n: int, status: str,
                 guests: int = 1) -> None:
        d_in = REFERENCE_DATE.date() + timedelta(days=day)
        d_out = d_in + timedelta(days=n)
        hotels = [h for h in self.s.hotels.values() if h.city == city]
        self.rng.shuffle(hotels)
        for hotel in hotels:
            options = [rt for rt in hotel.rooms.values() if rt.capacity >= guests and all(
                rt.booked.get(x, 0) < rt.total_rooms for x in nights(d_in, d_out))]
            if options:
                break
        else:
            return
        rt = self.seeds.choice(options)
        for x in nights(d_in, d_out):
            rt.booked[x] = rt.booked.get(x, 0) + 1
        rt.booked = dict(sorted(rt.booked.items()))
        card = next(c for c in self.s.cards.values() if c.traveller_id == traveller and c.expiry >= "2026-06")
        rid = self.ident("HRS")
        created = iso(REFERENCE_DATE - timedelta(days=self.rng.randint(3, 30)))
        self.s.hotel_reservations.put(rid, HotelReservation(
            rid, it.itinerary_id, hotel.hotel_id, rt.name, traveller, guests, d_in.isoformat(), d_out.isoformat(),
            rt.nightly_rate, money(rt.nightly_rate * n), card.card_id, status, created))
        it.hotel_reservation_ids.append(rid)


def _city_of(airport: str) -> str:
    return next(c.name for c in CITIES if c.airport == airport)


def _intl(f: Flight) -> bool:
    return CITY_BY_NAME[_city_of(f.origin)].country != CITY_BY_NAME[_city_of(f.destination)].country


