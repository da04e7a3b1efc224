"""Live-state sampling contexts and schema-driven values."""

from __future__ import annotations

import random
import re

from faker import Faker
from hypothesis import given, settings
from hypothesis import strategies as st

from data.catalog import get_catalog
from data.sampler import LiveStateSampler
from data.values import ValueContext, from_pattern, synth_value

PATTERNS = sorted({p["pattern"] for t in get_catalog().tools.values() for p in t.params.values() if "pattern" in p})


def test_contexts_are_typed_supported_and_rotate() -> None:
    catalog = get_catalog()
    sampler = LiveStateSampler(catalog, per_type=6, refresh_every=10)
    for d in catalog.domains:
        ctx = sampler.context(d, 7, 0)
        assert ctx.rows, d
        for t, rows in ctx.rows.items():
            assert 0 < len(rows) <= 6
            assert all(r.type == t or t in r.source for r in rows)
    banking = sampler.context("banking", 7, 0)
    assert {"customer_id", "account_id", "card_id", "payee_id", "transaction_id"} <= set(banking.rows)
    assert all("pin" in r.fields for r in banking.rows["account_id"])  # secrets travel with their entity
    same = sampler.context("banking", 7, 9)
    assert same is banking  # version = conversation index // refresh_every
    later = sampler.context("banking", 7, 10)
    assert [r.id for r in later.rows["account_id"]] != [r.id for r in banking.rows["account_id"]]
    fresh = LiveStateSampler(catalog, per_type=6, refresh_every=10).context("banking", 7, 10)
    assert [r.id for r in fresh.rows["account_id"]] == [r.id for r in later.rows["account_id"]]


def test_unusable_entities_are_filtered_by_probing() -> None:
    """Paths the logged-in user cannot enter fail a read-only probe and leave the context."""
    catalog = get_catalog()
    full = LiveStateSampler(catalog).full("filesystem", 0)
    denied = [r for r in full.rows["path"] if not r.usable]
    assert denied and any(r.usable for r in full.rows["path"])
    assert full.rows.get("archive_path")  # a type no discovery row carries, found by probing


def test_chain_entities_are_related() -> None:
    catalog = get_catalog()
    sampler = LiveStateSampler(catalog)
    ctx = sampler.context("banking", 0, 0)
    chain = [catalog.tools["get_customer_profile"], catalog.tools["pay_bill"]]
    ents = sampler.chain_entities(chain, ctx, random.Random(0))
    customer = ents["customer_id"][0]
    assert ents["account_id"] and ents["payee_id"]
    assert ents["account_id"][0].related & customer.related or ents["payee_id"][0].related & customer.related


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(PATTERNS), st.integers(0, 10_000))
def test_pattern_values_match(pattern: str, seed: int) -> None:
    assert re.search(pattern, from_pattern(pattern, random.Random(seed)))


def test_values_follow_the_schema() -> None:
    vc = ValueContext(random.Random(1), Faker(), __import__("datetime").datetime(2026, 6, 1, 9))
    for tool in get_catalog().tools.values():
        for p, prop in tool.params.items():
            v = synth_value(p, prop, vc)
            if "enum" in prop:
                assert v in prop["enum"]
            if prop.get("type") == "integer":
                assert isinstance(v, int) and prop.get("minimum", v) <= v <= prop.get("maximum", v)
            if prop.get("type") == "array":
                assert isinstance(v, list) and len(v) >= prop.get("minItems", 0)
    vc.bound["date_from"] = "2026-06-03"
    assert synth_value("date_to", {"type": "string", "description": "Last day (YYYY-MM-DD)"}, vc) > "2026-06-03"
