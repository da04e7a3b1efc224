"""Dependency graph: known edges, every pair classified, disk cache reused, chain pools."""

from __future__ import annotations

from pathlib import Path

import pytest

from data.catalog import get_catalog
from data.graph import CACHE_STATS, EXPLICIT, IMPLICIT, NONE, load_graph

KNOWN = [
    ("list_accounts", "transfer_funds", EXPLICIT),
    ("list_accounts", "get_account_balance", EXPLICIT),
    ("list_transactions", "dispute_transaction", EXPLICIT),
    ("list_cards", "freeze_card", EXPLICIT),
    ("schedule_transfer", "cancel_scheduled_transfer", EXPLICIT),
    ("start_engine", "shift_gear", IMPLICIT),
    ("set_vehicle_destination", "start_route_guidance", IMPLICIT),
    ("search_navigation_places", "set_vehicle_destination", EXPLICIT),
    ("search_catalog", "add_to_shopping_cart", EXPLICIT),
    ("list_shop_orders", "cancel_shop_order", EXPLICIT),
    ("create_email_draft", "send_email_draft", EXPLICIT),
    ("search_emails", "reply_to_email", EXPLICIT),
    ("list_calendars", "create_calendar_event", EXPLICIT),
    ("search_calendar_users", "list_calendars", EXPLICIT),
    ("list_directory", "read_file", EXPLICIT),
    ("create_file_archive", "list_file_archive", EXPLICIT),
    ("add_to_shopping_cart", "checkout_shopping_cart", IMPLICIT),  # cart_not_empty, inferred by name
    ("get_account_balance", "list_accounts", NONE),
    ("drive_active_route", "start_engine", NONE),
    ("read_file", "list_directory", NONE),
]


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory):
    return load_graph(get_catalog(), cache_dir=tmp_path_factory.mktemp("g"), chains_per_domain=120)


@pytest.mark.parametrize(("a", "b", "relation"), KNOWN)
def test_known_edges(graph, a: str, b: str, relation: str) -> None:
    assert graph.relation(a, b) == relation


def test_state_conditions_are_recorded(graph) -> None:
    assert "engine_on" in graph.edge("start_engine", "shift_gear")["conditions"]
    assert "cart_not_empty" in graph.edge("add_to_shopping_cart", "checkout_shopping_cart")["conditions"]


def test_every_ordered_pair_is_classified(graph) -> None:
    n = len(get_catalog().tools)
    pairs = list(graph.pairs())
    assert len(pairs) == n * (n - 1)
    counts = graph.counts()
    assert sum(counts.values()) == n * (n - 1) and counts[EXPLICIT] > 100 and counts[IMPLICIT] > 10


def test_cross_server_text_edges(graph) -> None:
    assert graph.relation("get_account_balance", "send_email") == EXPLICIT
    assert graph.edge("get_account_balance", "send_email")["via"] == "text"
    assert graph.relation("transfer_funds", "send_email") == NONE  # writes do not feed prose


def test_chain_pool_shape_and_coverage(graph) -> None:
    catalog = get_catalog()
    for d in catalog.domains:
        chains = graph.chains(d)
        assert len(chains) == 120
        assert len({tuple(c) for c in chains}) == len(chains)
        assert all(2 <= len(c) <= 5 and len(set(c)) == len(c) for c in chains)
        assert {t for c in chains for t in c} == {t.name for t in catalog.user_tools(d)}
        info = catalog.tools
        for c in chains:  # every later tool follows an edge, or is a sibling request about the same entity
            for i, b in enumerate(c[1:], 1):
                linked = any(graph.relation(a, b) != NONE for a in c[:i])
                mine = set(info[b].consumes) | set(info[b].param_types.values())
                assert linked or any(mine & (set(info[a].consumes) | set(info[a].param_types.values()))
                                     for a in c[:i]), c
        fully = sum(1 for c in chains if all(any(graph.relation(a, b) != NONE for a in c[:i])
                                             for i, b in enumerate(c) if i))
        assert fully / len(chains) > 0.25, d


def test_graph_cache_is_reused(tmp_path: Path) -> None:
    catalog = get_catalog()
    before = dict(CACHE_STATS)
    load_graph(catalog, cache_dir=tmp_path, chains_per_domain=50)
    files = sorted(tmp_path.glob("graph-*.json"))
    assert len(files) == len(catalog.domains)
    mtimes = [f.stat().st_mtime_ns for f in files]
    assert CACHE_STATS["misses"] - before["misses"] == len(catalog.domains)
    again = load_graph(catalog, cache_dir=tmp_path, chains_per_domain=50)
    assert CACHE_STATS["hits"] - before["hits"] == len(catalog.domains)
    assert [f.stat().st_mtime_ns for f in files] == mtimes
    assert again.chains("banking") == load_graph(catalog, cache_dir=tmp_path, chains_per_domain=50).chains("banking")
    load_graph(catalog, cache_dir=tmp_path, chains_per_domain=51)  # other settings: another key
    assert len(sorted(tmp_path.glob("graph-*.json"))) == 2 * len(catalog.domains)


def test_param_types_from_names_and_descriptions() -> None:
    tools = get_catalog().tools
    assert tools["transfer_funds"].param_types == {"from_account_id": "account_id", "to_account_id": "account_id"}
    assert tools["set_vehicle_destination"].param_types["destination"] == "place_id"  # "its place id" in the description
    assert tools["get_calendar_free_busy"].param_types["emails"] == "email"  # arrays by their singular
    assert tools["read_file"].param_types["path"] == "file_path"  # narrowed to the declared sub-kind
    assert tools["copy_path"].param_types["source"] == "path"
