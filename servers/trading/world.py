"""The seeded brokerage: listed instruments, customer accounts with positions built from past fills,
order history (filled, cancelled, expired), resting GTC orders, a pre-market day order, watchlists and
cash transfers.

Guaranteed in every seed (the failure rules need them): an account with almost no cash, an IRA with
limited contribution room, an account that already deposited most of today's limit, instruments with
5- and 10-cent ticks, one symbol halted until further notice and one in a volatility pause that lifts at
10:30 New York time, a filled order, a resting GTC limit order and a resting day order.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from servers.kit import Counters, Seeds, iso, new_id
from servers.kit.fake import REFERENCE_DATE
from servers.trading.state import (
    Account,
    Book,
    CashTransfer,
    Execution,
    Instrument,
    Order,
    Position,
    TradingState,
    Watchlist,
    position_key,
)

# symbol, name, sector, kind, low/high anchor price ($), core (always listed)
LISTINGS: tuple[tuple[str, str, str, str, float, float, bool], ...] = (
    ("NVLT", "Novalight Systems", "Technology", "stock", 120, 180, True),
    ("QBIT", "Qubitronics Inc.", "Technology", "stock", 40, 75, True),
    ("CLDW", "Cloudwell Software", "Technology", "stock", 210, 320, True),
    ("MRGN", "Meridian Semiconductor", "Technology", "stock", 420, 680, True),
    ("PXLS", "Pixelsmith Labs", "Technology", "stock", 18, 35, False),
    ("DTSM", "Datasmith Analytics", "Technology", "stock", 60, 95, False),
    ("HLXB", "Helix Biotherapeutics", "Healthcare", "stock", 25, 60, True),
    ("CRVS", "Curaverse Health", "Healthcare", "stock", 90, 140, False),
    ("MDPT", "Medipoint Devices", "Healthcare", "stock", 150, 230, False),
    ("GNMX", "Genomix Research", "Healthcare", "stock", 8, 20, False),
    ("FRBK", "First Ridge Bancorp", "Financials", "stock", 30, 55, True),
    ("ATLF", "Atlas Financial Group", "Financials", "stock", 70, 110, False),
    ("KYPN", "Keystone Payments", "Financials", "stock", 140, 210, False),
    ("SVRN", "Sovereign Insurance", "Financials", "stock", 50, 80, False),
    ("PTRX", "Petrox Energy", "Energy", "stock", 45, 85, True),
    ("SOLR", "Solaris Renewables", "Energy", "stock", 12, 30, False),
    ("GRDL", "Gridline Power", "Utilities", "stock", 35, 60, False),
    ("AQUA", "Aquaterra Water", "Utilities", "stock", 60, 90, False),
    ("BRWS", "Brewster & Sons Brands", "Consumer", "stock", 55, 90, True),
    ("TRVL", "Travelo Holdings", "Consumer", "stock", 22, 45, False),
    ("GRMT", "Greenmart Stores", "Consumer", "stock", 95, 150, False),
    ("FITX", "Fitrex Apparel", "Consumer", "stock", 15, 40, False),
    ("AERO", "Aerodyne Industries", "Industrials", "stock", 180, 260, True),
    ("RLWY", "Railway Logistics Corp.", "Industrials", "stock", 80, 130, False),
    ("BLDX", "Buildex Materials", "Materials", "stock", 40, 70, False),
    ("CPRM", "Copperline Mining", "Materials", "stock", 10, 28, False),
    ("STRM", "Streamly Media", "Communication", "stock", 30, 65, False),
    ("TLCM", "Telecomm United", "Communication", "stock", 20, 38, False),
    ("RLTY", "Realtyco Properties", "Real Estate", "stock", 45, 75, False),
    ("DCNT", "Datacenter Trust", "Real Estate", "stock", 100, 160, False),
    ("TOTL", "Broadmarket Total Market ETF", "Diversified", "etf", 230, 290, True),
    ("TCHX", "Techsector Select ETF", "Technology", "etf", 160, 220, False),
    ("BNDS", "Aggregate Bond ETF", "Fixed Income", "etf", 70, 100, True),
    ("DIVY", "Dividend Growers ETF", "Diversified", "etf", 45, 70, False),
    ("GLDX", "Gold Trust ETF", "Commodities", "etf", 180, 240, False),
    ("EMKT", "Emerging Markets ETF", "Diversified", "etf", 38, 55, False),
)
EXCHANGES = {"stock": ("NASDAQ", "NYSE"), "etf": ("NYSE Arca",)}
WATCHLIST_NAMES = ("Tech ideas", "Dividend payers", "Watching for dips", "Energy", "Long term", "Earnings week")
BANKS = ("Chase checking", "Wells Fargo savings", "Ally savings", "Citi checking", "Capital One checking")


def _tick(base_dollars: float) -> int:
    return 10 if base_dollars >= 400 else 5 if base_dollars >= 200 else 1


def _market_time(seeds: Seeds, days_ago_lo: int, days_ago_hi: int) -> datetime:
    """A past moment inside regular hours (14:00-19:45 UTC ~ 10:00-15:45 New York in summer)."""
    while True:
        day = REFERENCE_DATE - timedelta(days=seeds.rng.randint(days_ago_lo, days_ago_hi))
        if day.weekday() < 5:
            break
    minutes = seeds.rng.randrange(14 * 60, 19 * 60 + 45, 5)
    return day.replace(hour=0, minute=0) + timedelta(minutes=minutes)


def generate(s: TradingState, seeds: Seeds) -> None:
    rng = seeds.rng
    s.counters.set(Counters())
    chosen = [row for row in LISTINGS if row[6] or rng.random() < 0.75]
    instruments: list[Instrument] = []
    for symbol, name, sector, kind, lo, hi, _core in chosen:
        base = round(rng.uniform(lo, hi), 2)
        tick = _tick(base)
        inst = Instrument(
            symbol=symbol, name=name, kind=kind, sector=sector, exchange=seeds.choice(EXCHANGES[kind]),
            tick_cents=tick, base_cents=round(base * 100 / tick) * tick, spread_ticks=rng.choice((1, 2, 2, 3)),
            level_ticks=rng.choice((1, 1, 2)), depth_qty=rng.choice((60, 100, 150, 200, 300, 500)),
            avg_volume=rng.randrange(400_000, 30_000_000, 10_000), walk_seed=rng.getrandbits(48),
        )
        instruments.append(inst)
    # two halts on non-core symbols: one until further notice, one volatility pause lifting at 10:30 ET
    optional = [i for i in instruments if not next(r[6] for r in LISTINGS if r[0] == i.symbol)]
    halted, paused = seeds.sample(optional, 2)
    halted.halted, halted.halt_reason = True, "news pending: regulatory halt"
    paused.halted, paused.halt_reason = True, "volatility pause (limit up/limit down)"
    paused.halt_until = iso(datetime(2026, 6, 1, 14, 30, tzinfo=UTC))
    for inst in instruments:
        s.instruments.put(inst.symbol, inst)
        s.books.put(inst.symbol, Book(symbol=inst.symbol))
    tradable = [i for i in instruments if not i.halted]
    _accounts(s, seeds, instruments, tradable)


def _price_then(inst: Instrument, when: datetime, seeds: Seeds) -> int:
    """A plausible past fill price: the anchor scaled by up to ±30 %, on the tick grid."""
    raw = inst.base_cents * seeds.rng.uniform(0.7, 1.2)
    return max(inst.tick_cents, round(raw / inst.tick_cents) * inst.tick_cents)


def _accounts(s: TradingState, seeds: Seeds, instruments: list[Instrument], tradable: list[Instrument]) -> None:
    rng, fake = seeds.rng, seeds.fake
    n = rng.randint(14, 18)
    owners: list[tuple[str, str]] = []
    for i in range(n):
        if i >= 3 and owners and rng.random() < 0.25:  # the same person also has an IRA or a joint account
            owner, email = owners[rng.randrange(len(owners))]
        else:
            owner = fake.name()
            email = f"{owner.lower().replace(' ', '.').replace("'", '')}@{fake.free_email_domain()}"
            owners.append((owner, email))
        kind = "ira" if i in (1, 2) else "individual"
        if i >= 6:
            kind = seeds.choice(("individual", "individual", "individual", "joint", "ira"))
        cash = rng.randint(3_000_00, 120_000_00) if kind != "ira" else rng.randint(2_000_00, 40_000_00)
        if i == 0:
            cash = rng.randint(35_00, 180_00)  # archetype: almost no buying power
        if i == 3:
            cash = rng.randint(150_000_00, 400_000_00)  # archetype: a large account
        acct_id = seeds.ident("BRK", 1001 + i, 4)
        label = {"individual": "Brokerage", "joint": "Joint brokerage", "ira": "Roth IRA"}[kind]
        acct = Account(
            account_id=acct_id, owner_name=owner, email=email,
            nickname=f"{owner.split()[0]}'s {label}", account_type=kind, cash_cents=cash,
            trading_pin=f"{rng.randrange(10**6):06d}", linked_bank=f"{seeds.choice(BANKS)} ••{rng.randrange(10**4):04d}",
            opened_on=iso(seeds.date_between(-3000, -120)),
            ira_contribution_room_cents=(rng.choice((500_00, 1_200_00, 2_500_00, 4_000_00)) if kind == "ira" else None),
        )
        if i == 2:
            acct.ira_contribution_room_cents = 300_00  # archetype: nearly maxed out
        s.accounts.put(acct_id, acct)
        _holdings(s, seeds, acct, tradable if i == 3 else instruments, tradable, many=i == 3)
        if i == 4:  # archetype: most of today's deposit limit already used (04:30 New York)
            tid = new_id(s.counters, "CSH")
            s.cash_transfers.put(tid, CashTransfer(tid, acct_id, "deposit", 20_000_00, acct.linked_bank,
                                                   iso(REFERENCE_DATE - timedelta(minutes=30)), "2026-06-01"))
            s.accounts.edit(acct_id).cash_cents += 20_000_00
        elif rng.random() < 0.5:
            when = _market_time(seeds, 3, 200)
            tid = new_id(s.counters, "CSH")
            amount = rng.choice((500_00, 1_000_00, 2_500_00, 5_000_00))
            s.cash_transfers.put(tid, CashTransfer(tid, acct_id, "deposit", amount, acct.linked_bank, iso(when),
                                                   iso(when.date())))
        if i % 2 == 0 or i == 3:
            picks = seeds.sample(instruments, rng.randint(3, 8))
            wid = new_id(s.counters, "WL")
            s.watchlists.put(wid, Watchlist(wid, acct_id, seeds.choice(WATCHLIST_NAMES),
                                            [p.symbol for p in picks], iso(_market_time(seeds, 5, 300))))


def _order(s: TradingState, acct: Account, inst: Instrument, side: str, order_type: str, qty: int, tif: str,
           placed: datetime, status: str, limit: int | None = None, stop: int | None = None) -> Order:
    oid = new_id(s.counters, "ORD")
    order = Order(oid, acct.account_id, inst.symbol, side, order_type, qty, tif, status, iso(placed), iso(placed),
                  limit_cents=limit, stop_cents=stop)
    s.orders.put(oid, order)
    return order


def _fill_past(s: TradingState, order: Order, price: int, when: datetime, realized: int | None) -> None:
    eid = new_id(s.counters, "EXE")
    s.executions.put(eid, Execution(eid, order.order_id, order.account_id, order.symbol, order.side,
                                    order.quantity, price, iso(when), "market", realized))
    order.filled_quantity, order.filled_value_cents = order.quantity, order.quantity * price
    order.execution_ids.append(eid)
    order.closed_at, order.close_reason, order.updated_at = iso(when), "filled", iso(when)


def _holdings(s: TradingState, seeds: Seeds, acct: Account, pool: list[Instrument], tradable: list[Instrument],
              many: bool) -> None:
    rng = seeds.rng
    for inst in seeds.sample(pool, rng.randint(4, 7) if many else rng.randint(1, 5)):
        qty, cost, opened = 0, 0, None
        for _ in range(rng.randint(1, 2)):
            when = _market_time(seeds, 20, 700)
            price = _price_then(inst, when, seeds)
            lot = rng.choice((5, 10, 12, 20, 25, 40, 50, 75, 100, 150, 200))
            order = _order(s, acct, inst, "buy", seeds.choice(("market", "limit")), lot, "day", when, "filled")
            if order.order_type == "limit":
                order.limit_cents = price
            _fill_past(s, order, price, when, None)
            qty, cost = qty + lot, cost + lot * price
            opened = min(opened or when, when)
        realized = 0
        if qty >= 20 and rng.random() < 0.35:  # trimmed the position later, booking a gain or a loss
            when = _market_time(seeds, 2, 19)
            price = _price_then(inst, when, seeds)
            sold = qty // 4
            removed = round(cost * sold / qty)
            realized = sold * price - removed
            order = _order(s, acct, inst, "sell", "market", sold, "day", when, "filled")
            _fill_past(s, order, price, when, realized)
            qty, cost = qty - sold, cost - removed
            s.accounts.edit(acct.account_id).realized_pnl_cents += realized
        s.positions.put(position_key(acct.account_id, inst.symbol),
                        Position(acct.account_id, inst.symbol, qty, cost, realized, iso((opened or REFERENCE_DATE).date())))
    # a cancelled and an expired order from the past (no fills)
    for status in ("cancelled", "expired"):
        if rng.random() < 0.6:
            inst = seeds.choice(tradable)
            when = _market_time(seeds, 1, 60)
            limit = round(inst.base_cents * 0.9 / inst.tick_cents) * inst.tick_cents
            order = _order(s, acct, inst, "buy", "limit", rng.choice((5, 10, 20)), "day", when, status, limit=limit)
            order.closed_at = order.updated_at = iso(when + timedelta(hours=1))
            order.close_reason = ("cancelled by the customer" if status == "cancelled"
                                  else "day order expired at the 16:00 New York close")
    _resting(s, seeds, acct, tradable)


def _resting(s: TradingState, seeds: Seeds, acct: Account, tradable: list[Instrument]) -> None:
    """Live orders far from the market (they never fill on their own): a GTC buy limit, a GTC sell limit
    or stop-loss on a holding, and for one account a pre-market day order placed this morning."""
    rng = seeds.rng
    idx = int(acct.account_id.split("-")[1]) - 1001
    reserved = 0
    if idx in (3, 5, 6) or rng.random() < 0.3:
        inst = seeds.choice([i for i in tradable if i.base_cents < 30_000] or tradable)
        limit = round(inst.base_cents * rng.uniform(0.8, 0.9) / inst.tick_cents) * inst.tick_cents
        qty = max(1, min(50, (acct.cash_cents // 3) // limit))
        if qty * limit <= acct.cash_cents // 2:
            _order(s, acct, inst, "buy", "limit", qty, "gtc", _market_time(seeds, 1, 30), "open", limit=limit)
            reserved += qty * limit
    held = [p for p in s.positions.values() if p.account_id == acct.account_id
            and not s.instruments[p.symbol].halted and p.quantity >= 4]
    if held and (idx == 3 or rng.random() < 0.35):
        pos = seeds.choice(held)
        inst = s.instruments[pos.symbol]
        if rng.random() < 0.5:
            limit = round(inst.base_cents * rng.uniform(1.1, 1.2) / inst.tick_cents) * inst.tick_cents
            _order(s, acct, inst, "sell", "limit", pos.quantity // 2, "gtc", _market_time(seeds, 1, 30), "open",
                   limit=limit)
        else:
            stop = round(inst.base_cents * rng.uniform(0.8, 0.88) / inst.tick_cents) * inst.tick_cents
            _order(s, acct, inst, "sell", "stop", pos.quantity // 2, "gtc", _market_time(seeds, 1, 30), "open",
                   stop=stop)
    if idx == 5:
        inst = seeds.choice(tradable)
        limit = round(inst.base_cents * 0.88 / inst.tick_cents) * inst.tick_cents
        qty = max(1, min(20, (acct.cash_cents - reserved) // (3 * limit)))
        _order(s, acct, inst, "buy", "limit", qty, "day", REFERENCE_DATE - timedelta(minutes=25), "open", limit=limit)

