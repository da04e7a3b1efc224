"""data.byo probing and the graph on a hand-built fake server whose dependencies are known.

The fake is a small bank: ``list_accounts`` (rows: own ``account_id``, then the foreign
``owner_id``), ``get_balance`` (echoes its ``account_id``), ``transfer`` (needs a PIN nobody knows:
it can only fail, yet its account parameter must still be found), ``rename`` (a lenient nickname),
``find_owner`` (a lenient lookup that answers ``[]`` for unknown owners), ``open_ticket`` /
``close_ticket`` (a write producer and its consumer) and ``report`` (JSON-free text)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from data.byo.discovery import discover
from data.byo.graph import GraphOptions, InferredGraph, infer_graph
from data.byo.protocol import CallOutcome, ToolAnnotations, ToolListing

S = {"type": "string"}


def t(name: str, props: dict[str, Any], read_only: bool | None = None) -> ToolListing:
    return ToolListing(name, "", {"type": "object", "properties": props, "required": list(props)},
                       ToolAnnotations(read_only=read_only))


LISTING = [
    t("list_accounts", {}),
    t("get_balance", {"account_id": S}),
    t("transfer", {"from_account_id": S, "pin": S}),
    t("rename", {"account_id": S, "nickname": S}),
    t("find_owner", {"owner_id": S}, read_only=True),
    t("open_ticket", {"subject": S}),
    t("close_ticket", {"ticket_id": S}),
    t("report", {"account_id": S}, read_only=True),
    t("get_card", {"card_id": {"type": "string", "description": "The card, e.g. CRD-0001."}}),
]


class FakeBank:
    """A stateful server behind the Session protocol."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.reset_sync()

    def reset_sync(self) -> None:
        self.accounts = {"ACC-0001": "OWN-0001", "ACC-0002": "OWN-0002"}
        self.tickets: dict[str, str] = {}

    async def reset(self) -> None:
        self.reset_sync()

    async def call(self, name: str, args: dict[str, Any]) -> CallOutcome:
        self.calls.append(name)

        def err(msg: str) -> CallOutcome:
            return CallOutcome(f"{name}: {msg}", True)

        acc = args.get("account_id") or args.get("from_account_id")
        if name == "list_accounts":
            rows = [{"account_id": a, "owner_id": o, "status": "open"} for a, o in self.accounts.items()]
            return CallOutcome(json.dumps(rows), False)
        if name == "find_owner":
            return CallOutcome(json.dumps([o for o in self.accounts.values() if o == args["owner_id"]]), False)
        if name in ("get_balance", "transfer", "rename", "report") and acc not in self.accounts:
            return err(f"unknown account '{acc}'")
        if name == "get_balance":
            return CallOutcome(json.dumps({"account_id": acc, "balance": 10}), False)
        if name == "transfer":
            return err("incorrect PIN")
        if name == "rename":
            return CallOutcome(json.dumps({"account_id": acc, "nickname": args["nickname"]}), False)
        if name == "report":
            return CallOutcome(f"Report for {acc}\nbalance: 10\n", False)
        if name == "get_card":
            if args["card_id"] != "CRD-0001":
                return err(f"unknown card '{args['card_id']}'")
            return CallOutcome(json.dumps({"card_id": "CRD-0001", "account_id": "ACC-0002"}), False)
        if name == "open_ticket":
            tid = f"TCK-{len(self.tickets) + 1:04d}"
            self.tickets[tid] = args["subject"]
            return CallOutcome(json.dumps({"ticket_id": tid, "account_id": "ACC-0001"}), False)
        if name == "close_ticket":
            if args["ticket_id"] not in self.tickets:
                return err(f"no ticket '{args['ticket_id']}'")
            del self.tickets[args["ticket_id"]]
            return CallOutcome("closed", False)
        return err("unknown tool")


def graph(options: GraphOptions | None = None) -> tuple[InferredGraph, FakeBank]:
    bank = FakeBank()
    g = asyncio.run(infer_graph(LISTING, discover(LISTING), bank, options or GraphOptions()))
    return g, bank


def test_edges_recovered_by_probing() -> None:
    g, _ = graph()
    pairs = g.pairs(("probe",))
    assert ("list_accounts", "get_balance") in pairs
    assert ("list_accounts", "rename") in pairs
    assert ("list_accounts", "report") in pairs  # a text result: the account still names itself
    assert ("open_ticket", "close_ticket") in pairs  # a write producer, re-run before its tests
    edge = next(e for e in g.edges if e.producer == "list_accounts" and e.consumer == "get_balance")
    assert (edge.param, edge.entity, edge.path) == ("account_id", "account", "[].account_id")


def test_a_consumer_that_always_fails_is_still_confirmed() -> None:
    """transfer never succeeds (unknown PIN), but a real account fails differently from an unknown one."""
    g, _ = graph()
    assert ("list_accounts", "transfer") in g.pairs(("probe",))


def test_lenient_parameters_are_not_references() -> None:
    g, _ = graph()
    assert not any(e.param == "nickname" for e in g.edges)


def test_empty_result_counts_as_rejection_but_foreign_keys_do_not_produce() -> None:
    g, _ = graph()
    assert g.probe is not None
    owner = [x for x in g.probe.accepted() if x.consumer == "find_owner"]
    assert owner and owner[0].path == "[].owner_id"  # [] for an unknown owner: owner_id is a reference
    assert ("list_accounts", "find_owner") not in g.pairs()  # ... but a foreign key of the account rows
    loose, _ = graph(GraphOptions(own_ids_only=False))
    assert ("list_accounts", "find_owner") in loose.pairs()


def test_echoed_inputs_and_foreign_keys_of_echoes_produce_nothing() -> None:
    g, _ = graph()
    assert g.probe is not None
    assert not any(e.producer in ("get_balance", "rename") for e in g.edges)
    assert ("open_ticket", "get_balance") not in g.pairs()  # the ticket's account is a foreign key
    for x in g.probe.tests:  # an echo is never even tested as something its tool produced
        assert str(x.value) not in g.probe.runs[x.producer].inputs()
    # get_card's row is the card it was given (card ids are never listed, so no test marked card_id an
    # id): the echoed input parameter is its own id, and the account after it a foreign key
    assert g.probe.runs["get_card"].args == {"card_id": "CRD-0001"}
    assert ("get_card", "get_balance") not in g.pairs()


def test_probing_leaves_the_fixture_as_it_found_it() -> None:
    _, bank = graph()
    assert bank.tickets == {} and set(bank.accounts) == {"ACC-0001", "ACC-0002"}


def test_schema_fallback_only_for_tools_that_never_ran() -> None:
    listing = [*LISTING, t("create_widget", {"color": {"type": "string", "enum": ["red"]}}),
               t("paint_widget", {"widget_id": S})]

    class Broken(FakeBank):
        async def call(self, name: str, args: dict[str, Any]) -> CallOutcome:
            if name == "create_widget":
                return CallOutcome("create_widget: service down", True)
            return await super().call(name, args)

    g = asyncio.run(infer_graph(listing, discover(listing), Broken(), GraphOptions()))
    schema = [e for e in g.edges if e.evidence == "schema"]
    assert [(e.producer, e.consumer) for e in schema] == [("create_widget", "paint_widget")]
    g2 = asyncio.run(infer_graph(listing, discover(listing), Broken(), GraphOptions(schema_fallback=False)))
    assert ("create_widget", "paint_widget") not in g2.pairs()


def test_a_reference_inside_an_object_parameter_is_probed() -> None:
    """``tag(items=[{account_id, tag}])``: the account is a field, as memory's ``observations[].entityName``."""
    item = {"type": "object", "properties": {"account_id": S, "tag": {"type": "string", "enum": ["x"]}},
            "required": ["account_id", "tag"]}
    listing = [*LISTING, t("tag_accounts", {"items": {"type": "array", "items": item}})]

    class Tagging(FakeBank):
        async def call(self, name: str, args: dict[str, Any]) -> CallOutcome:
            if name == "tag_accounts":
                bad = [i["account_id"] for i in args["items"] if i["account_id"] not in self.accounts]
                return CallOutcome(f"no account '{bad[0]}'", True) if bad else CallOutcome("tagged", False)
            return await super().call(name, args)

    g = asyncio.run(infer_graph(listing, discover(listing), Tagging(), GraphOptions(schema_fallback=False)))
    edge = next(e for e in g.edges if (e.producer, e.consumer) == ("list_accounts", "tag_accounts"))
    assert (edge.param, edge.entity) == ("items[].account_id", "account")
    assert g.probe is not None and g.probe.runs["tag_accounts"].args["items"][0]["account_id"] in ("ACC-0001", "ACC-0002")


def test_own_ids_come_from_rows_not_from_nested_links_or_a_writes_lists() -> None:
    from data.byo.extract import extract
    from data.byo.graph import own_paths
    from data.byo.probe import Run

    keys = {"device_id", "home_id", "scene_id", "product_id"}

    def own(tool: str, args: dict[str, Any], result: Any, read_only: bool = True) -> set[str]:
        return own_paths(Run(tool, args, extract(json.dumps(result)), read_only), keys)

    # a device's home is a link, not something reading a device finds
    assert own("get_device", {"device_id": "D-1"}, {"device_id": "D-1", "home": {"home_id": "H-1"}}) == set()
    # a scene's member devices are the scene's, not rows of the scene listing
    assert own("list_scenes", {}, [{"scene_id": "S-1", "devices": [{"device_id": "D-1"}]}]) == {"[].scene_id"}
    # a read's list under a top-level key: the rows (the home echoed around them)
    assert own("list_devices", {"home_id": "H-1"}, {"home_id": "H-1", "devices": [{"device_id": "D-1"}]}) \
        == {"devices[].device_id"}
    # the cart a write returns lists products it did not make
    assert own("update_cart", {"product_id": "P-1"}, {"items": [{"product_id": "P-2"}]}, read_only=False) == set()


def test_a_broken_session_stops_probing_instead_of_accepting_everything() -> None:
    """After a timeout the pool answers every call "episode already failed": a different error
    skeleton from a real rejection, which must not pass for a hit."""

    class Dying(FakeBank):
        async def call(self, name: str, args: dict[str, Any]) -> CallOutcome:
            if len(self.calls) >= 12:
                self.calls.append(name)
                return CallOutcome("episode already failed: 'x' timed out", True, broken=True)
            return await super().call(name, args)

    g = asyncio.run(infer_graph(LISTING, discover(LISTING), Dying(), GraphOptions(schema_fallback=False)))
    assert g.probe is not None and "timed out" in g.probe.broken
    assert all(x.value in ("ACC-0001", "ACC-0002") for x in g.probe.accepted())  # nothing accepted after the break
    assert len(g.probe.accepted()) <= 2


def test_a_tool_tries_more_than_two_known_values() -> None:
    """The first known paths are often directories (the root, a listed folder); a file reader must
    get to the third."""
    listing = [t("list_paths", {}, read_only=True), t("read_file", {"path": S}, read_only=True)]

    class Files:
        async def reset(self) -> None:
            return None

        async def call(self, name: str, args: dict[str, Any]) -> CallOutcome:
            if name == "list_paths":
                return CallOutcome(json.dumps([{"path": p} for p in ("/h", "/h/docs", "/h/a.txt")]), False)
            if args["path"] == "/h/a.txt":
                return CallOutcome(json.dumps({"lines": 3}), False)
            return CallOutcome(f"'{args['path']}' is a directory" if args["path"] in ("/h", "/h/docs")
                               else f"no such file '{args['path']}'", True)

    g = asyncio.run(infer_graph(listing, discover(listing), Files(), GraphOptions()))
    assert g.probe is not None and g.probe.runs["read_file"].args == {"path": "/h/a.txt"}
