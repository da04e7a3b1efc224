"""Seeded, realistic fake data: the same seed always yields byte-identical worlds.

Faker gives realistic names, addresses, companies and text; a ``random.Random`` seeded from the same
seed drives every structural choice. Nothing reads the wall clock: worlds are anchored to a fixed
reference date so "expired coupon" or "meeting tomorrow" are reproducible.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from faker import Faker

REFERENCE_DATE = datetime(2026, 6, 1, 9, 0, 0, tzinfo=UTC)
"""The "now" of every seeded world (domains keep it in their state so tools never read the clock)."""


@dataclass
class Seeds:
    """The random sources a domain generator draws from."""

    seed: int
    rng: random.Random
    fake: Faker

    def ident(self, prefix: str, n: int, width: int = 4) -> str:
        """Stable readable ids such as ``ACC-0007``."""
        return f"{prefix}-{n:0{width}d}"

    def money(self, lo: float, hi: float) -> float:
        return round(self.rng.uniform(lo, hi), 2)

    def choice(self, seq: list[Any] | tuple[Any, ...]) -> Any:
        return seq[self.rng.randrange(len(seq))]

    def sample(self, seq: list[Any] | tuple[Any, ...], k: int) -> list[Any]:
        return self.rng.sample(list(seq), k)

    def date_between(self, start_days: int, end_days: int) -> date:
        """A date offset from the reference date by a uniform number of days."""
        return (REFERENCE_DATE + timedelta(days=self.rng.randint(start_days, end_days))).date()

    def datetime_between(self, start_days: int, end_days: int, *, minute_step: int = 15) -> datetime:
        base = REFERENCE_DATE + timedelta(days=self.rng.randint(start_days, end_days))
        minutes = self.rng.randrange(8 * 60, 18 * 60, minute_step)
        return base.replace(hour=0, minute=0) + timedelta(minutes=minutes)


def make_seeds(seed: int, *, salt: str = "") -> Seeds:
    """Seeds for one world; ``salt`` (the domain name) decorrelates domains sharing a seed."""
    mixed = random.Random(f"{salt}:{seed}").getrandbits(63)
    fake = Faker("en_US")
    fake.seed_instance(mixed)
    return Seeds(seed=seed, rng=random.Random(mixed), fake=fake)


def iso(dt: datetime | date) -> str:
    """ISO-8601 text without microseconds (what tools return and accept)."""
    if isinstance(dt, datetime):
        return dt.replace(microsecond=0).isoformat()
    return dt.isoformat()
