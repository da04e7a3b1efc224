"""Payments domain: tool count, failure rules (state unchanged), invoice / charge / refund /
payout / webhook lifecycles driven by the clock, replay determinism, the budget link."""

from __future__ import annotations

from typing import Any

from servers import PAPER_TOOL_COUNTS
from servers.kit import DomainRuntime
from servers.payments import domain
from servers.payments.world import seed_invoices
from tests.servers.harness import advance, assert_replays_alike, fails, new_sid, ok, state_of

DAY = 24 * 60


class World:
    """The guaranteed archetypes of a seeded world, found through discovery."""

    def __init__(self, rt: DomainRuntime, sid: str, seed: int) -> None:
        self.merchants = ok(rt, sid, seed, "payments_list_merchants", {})
        self.m = self.merchants[0]
        self.key = self.m["api_key"]
        self.invoices = ok(rt, sid, seed, "payments_list_invoices", {})
        self.state = state_of(rt, sid, seed)

    def inv(self, merchant_id: str | None = None, **want: Any) -> dict[str, Any]:
        mid = merchant_id or self.m["merchant_id"]
        return next(i for i in self.invoices if i["merchant_id"] == mid and all(i.get(k) == v for k, v in want.items()))

    def other_key(self) -> str:
        return self.merchants[1]["api_key"]


# ---------------------------------------------------------------- (1) tool count, (2) smoke coverage
def test_exactly_ten_user_tools_discovery_and_sensitive_keys(rt: DomainRuntime) -> None:
    assert len(domain.user_tools) == PAPER_TOOL_COUNTS["payments"] == 10
    assert len(rt.table.openai_tools()) == 10
    disc = [s.name for s in domain.tools.values() if s.kind == "discovery"]
    assert 2 <= len(disc) <= 4 and all(n.startswith("payments_") for n in disc)
    assert all(s.consumes or s.produces or s.requires for s in domain.user_tools)
    for name in ("pay_payment_invoice", "refund_payment_charge", "create_payment_invoice", "create_merchant_payout",
                 "manage_webhook_endpoint"):
        assert rt.table.sensitive_params(name) == ([] if name == "create_payment_invoice" else ["api_key"])
    props = rt.table.schemas["create_payment_invoice"]["properties"]
    assert props["amount"].get("x-money") and props["description"].get("x-multiline")


def test_world_archetypes_exist_for_many_seeds() -> None:
    for seed in range(12):
        s = domain.new_world(seed).snapshot()
        invs = [i for i in s["invoices"].values() if i["merchant_id"] == "MER-0001"]
        assert {"draft", "open", "paid", "void", "uncollectible"} <= {i["status"] for i in invs}
        assert any(i["overdue"] for i in invs) and 100 <= len(s["invoices"]) <= 200
        pays = [p for p in s["payments"].values() if p["merchant_id"] == "MER-0001"]
        assert {"succeeded", "partially_refunded", "refunded"} <= {p["status"] for p in pays}
        assert any(not p["settled"] for p in pays)
        assert sorted(e["status"] for e in s["endpoints"].values()).count("disabled") == 1
        assert any(e["receiver_status"] == 503 and e["status"] == "enabled" for e in s["endpoints"].values())
        assert any(pm["decline_code"] for pm in s["payment_methods"].values())
        assert s["merchants"]["MER-0003"]["available_balance"] < 30


# ---------------------------------------------------------------- (3) failure rules leave state alone
def test_unknown_ids_and_wrong_api_key(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    w = World(rt, sid, seed)
    mid, key, bad = w.m["merchant_id"], w.key, w.other_key()
    opened, paid = w.inv(status="open", default_card="ok", overdue=False), w.inv(status="paid")
    fails(rt, sid, seed, "list_payment_invoices", {"merchant_id": "MER-9999"}, "unknown merchant_id")
    fails(rt, sid, seed, "list_payment_invoices", {"customer_id": "CUS-9999"}, "unknown customer_id")
    fails(rt, sid, seed, "list_payment_customers", {"merchant_id": "MER-9999"}, "unknown merchant_id")
    fails(rt, sid, seed, "create_payment_invoice", {"customer_id": "CUS-9999", "description": "x", "amount": 5},
          "unknown customer_id")
    fails(rt, sid, seed, "update_payment_invoice_status", {"invoice_id": "INV-9999", "action": "void"},
          "unknown invoice_id")
    fails(rt, sid, seed, "pay_payment_invoice", {"api_key": key, "invoice_id": "INV-9999"}, "unknown invoice_id")
    fails(rt, sid, seed, "pay_payment_invoice", {"api_key": key, "invoice_id": opened["invoice_id"],
                                                 "payment_method_id": "PM-9999"}, "unknown payment_method_id")
    fails(rt, sid, seed, "refund_payment_charge", {"api_key": key, "payment_id": "PAY-9999"}, "unknown payment_id")
    fails(rt, sid, seed, "get_merchant_balance", {"merchant_id": "MER-9999"}, "unknown merchant_id")
    fails(rt, sid, seed, "manage_webhook_endpoint", {"api_key": key, "endpoint_id": "WH-9999", "action": "enable"},
          "unknown endpoint_id")
    fails(rt, sid, seed, "list_webhook_deliveries", {"endpoint_id": "WH-9999"}, "unknown endpoint_id")
    # another merchant's key is refused on every money-moving / endpoint call
    fails(rt, sid, seed, "pay_payment_invoice", {"api_key": bad, "invoice_id": opened["invoice_id"]},
          "api_key", "not a valid secret key")
    fails(rt, sid, seed, "refund_payment_charge", {"api_key": bad, "payment_id": paid["payment_id"]}, "api_key")
    fails(rt, sid, seed, "create_merchant_payout", {"api_key": bad, "merchant_id": mid, "amount": 5}, "api_key")
    endpoint = w.m["endpoints"][0]["endpoint_id"]
    fails(rt, sid, seed, "manage_webhook_endpoint", {"api_key": bad, "endpoint_id": endpoint, "action": "disable"},
          "api_key")
    fails(rt, sid, seed, "list_webhook_deliveries", {"merchant_id": w.merchants[1]["merchant_id"],
                                                     "endpoint_id": endpoint}, "belongs to")


def test_currency_mismatch_and_invoice_transitions(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    w = World(rt, sid, seed)
    mid, cur = w.m["merchant_id"], w.m["currency"]
    foreign = next(c for c in w.state["customers"].values() if c["merchant_id"] == mid and c["currency"] != cur)
    fails(rt, sid, seed, "create_payment_invoice", {"customer_id": foreign["customer_id"], "description": "Visit",
                                                    "amount": 80, "currency": cur}, "currency mismatch", "currency")
    other = "EUR" if cur != "EUR" else "GBP"
    fails(rt, sid, seed, "create_merchant_payout", {"api_key": w.key, "merchant_id": mid, "amount": 10,
                                                    "currency": other}, "currency mismatch")
    fails(rt, sid, seed, "create_payment_invoice", {"customer_id": foreign["customer_id"], "description": "  ",
                                                    "amount": 80}, "description must not be empty")
    ok(rt, sid, seed, "create_payment_invoice", {"customer_id": foreign["customer_id"], "description": "Visit",
                                                 "amount": 80})
    draft, opened = w.inv(status="draft"), w.inv(status="open")
    paid, void, bad_debt = w.inv(status="paid"), w.inv(status="void"), w.inv(status="uncollectible")
    fails(rt, sid, seed, "update_payment_invoice_status", {"invoice_id": opened["invoice_id"], "action": "finalize"},
          "cannot finalize", "needs status draft")
    fails(rt, sid, seed, "update_payment_invoice_status", {"invoice_id": paid["invoice_id"], "action": "void"},
          "already paid", "refund")
    fails(rt, sid, seed, "update_payment_invoice_status", {"invoice_id": draft["invoice_id"], "action": "void"},
          "still a draft")
    fails(rt, sid, seed, "update_payment_invoice_status", {"invoice_id": void["invoice_id"], "action": "void"},
          "voided and is final")
    fails(rt, sid, seed, "update_payment_invoice_status", {"invoice_id": bad_debt["invoice_id"],
                                                           "action": "mark_uncollectible"}, "needs status open")
    fails(rt, sid, seed, "pay_payment_invoice", {"api_key": w.key, "invoice_id": void["invoice_id"]}, "voided")
    fails(rt, sid, seed, "pay_payment_invoice", {"api_key": w.key, "invoice_id": paid["invoice_id"]}, "already paid")
    fails(rt, sid, seed, "pay_payment_invoice", {"api_key": w.key, "invoice_id": draft["invoice_id"]},
          "still a draft", "finalize it first")
    # uncollectible can still be voided or paid; void is final
    out = ok(rt, sid, seed, "update_payment_invoice_status", {"invoice_id": bad_debt["invoice_id"], "action": "void"})
    assert out["status"] == "void" and out["amount_due"] == 0.0


def test_card_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    w = World(rt, sid, seed)
    expired = w.inv(status="open", default_card="expired")
    fails(rt, sid, seed, "pay_payment_invoice", {"api_key": w.key, "invoice_id": expired["invoice_id"]},
          "card declined", "expired", "payment_method_id")
    texts = [fails(rt, sid, seed, "pay_payment_invoice", {"api_key": w.key, "invoice_id": i["invoice_id"]},
                   "card declined")
             for i in w.invoices if i["merchant_id"] == w.m["merchant_id"] and i["status"] == "open"
             and i["default_card"] == "declines"]
    assert any("insufficient_funds" in t for t in texts) and any("do_not_honor" in t for t in texts)
    no_card = w.inv(status="open", default_card=None)
    fails(rt, sid, seed, "pay_payment_invoice", {"api_key": w.key, "invoice_id": no_card["invoice_id"]},
          "has no saved card", "payment_method_id")
    good = w.inv(status="open", default_card="ok")
    stranger = next(pm for pm in w.state["payment_methods"].values() if pm["customer_id"] != good["customer_id"])
    fails(rt, sid, seed, "pay_payment_invoice", {"api_key": w.key, "invoice_id": good["invoice_id"],
                                                 "payment_method_id": stranger["payment_method_id"]},
          "does not belong to", "payment_method_id")
    # with the customer's own default card the same invoice goes through
    out = ok(rt, sid, seed, "pay_payment_invoice", {"api_key": w.key, "invoice_id": good["invoice_id"]})
    assert out["status"] == "paid" and out["payment"]["amount"] == good["amount"]


def test_refund_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    w = World(rt, sid, seed)
    fresh = w.inv(status="paid", refund_window_open=True, charge_settled=True)
    old = next(i for i in w.invoices if i["merchant_id"] == w.m["merchant_id"] and i["status"] == "paid"
               and not i["refund_window_open"] and i["refundable_amount"] > 0)
    full = next(i for i in w.invoices if i["merchant_id"] == w.m["merchant_id"] and i["payment_id"]
                and i["refundable_amount"] == 0)
    k = w.key
    fails(rt, sid, seed, "refund_payment_charge", {"api_key": k, "payment_id": full["payment_id"]},
          "already fully refunded")
    fails(rt, sid, seed, "refund_payment_charge", {"api_key": k, "payment_id": fresh["payment_id"],
                                                   "amount": fresh["refundable_amount"] + 1}, "exceeds", "amount")
    fails(rt, sid, seed, "refund_payment_charge", {"api_key": k, "payment_id": old["payment_id"]},
          "refund window closed")
    low = w.merchants[2]
    rich = next(i for i in w.invoices if i["merchant_id"] == low["merchant_id"] and i["status"] == "paid"
                and i["refund_window_open"] and i["charge_settled"] and i["refundable_amount"] > low["available_balance"])
    fails(rt, sid, seed, "refund_payment_charge", {"api_key": low["api_key"], "payment_id": rich["payment_id"]},
          "insufficient available balance")
    # partial, then the rest: the second refund may take exactly what is left and no more
    half = round(fresh["refundable_amount"] / 2, 2)
    ok(rt, sid, seed, "refund_payment_charge", {"api_key": k, "payment_id": fresh["payment_id"], "amount": half})
    rest = ok(rt, sid, seed, "refund_payment_charge", {"api_key": k, "payment_id": fresh["payment_id"]})
    assert rest["charge"]["status"] == "refunded" and rest["charge"]["refundable_amount"] == 0.0
    fails(rt, sid, seed, "refund_payment_charge", {"api_key": k, "payment_id": fresh["payment_id"], "amount": 1},
          "already fully refunded")


def test_payout_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 4
    w = World(rt, sid, seed)
    mid, k = w.m["merchant_id"], w.key
    bal = ok(rt, sid, seed, "get_merchant_balance", {"merchant_id": mid})
    fails(rt, sid, seed, "create_merchant_payout", {"api_key": k, "merchant_id": mid,
                                                    "amount": round(bal["available"] + 1, 2)},
          "insufficient available balance", "pending")
    ok(rt, sid, seed, "create_merchant_payout", {"api_key": k, "merchant_id": mid, "amount": 1500, "method": "instant"})
    fails(rt, sid, seed, "create_merchant_payout", {"api_key": k, "merchant_id": mid, "amount": 600,
                                                    "method": "instant"}, "instant payout limit exceeded")
    everything = ok(rt, sid, seed, "create_merchant_payout", {"api_key": k, "merchant_id": mid})
    assert everything["amount"] == round(bal["available"] - 1500, 2) and everything["balance"]["available"] == 0.0
    fails(rt, sid, seed, "create_merchant_payout", {"api_key": k, "merchant_id": mid}, "nothing to pay out")


def test_webhook_endpoint_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 5
    w = World(rt, sid, seed)
    eps = {e["endpoint_id"]: e for m in w.merchants for e in m["endpoints"]}
    healthy = next(e for e in w.m["endpoints"] if e["status"] == "enabled" and not e["consecutive_failures"])
    dead = next(e for e in eps.values() if e["status"] == "disabled")
    dead_key = next(m["api_key"] for m in w.merchants if m["merchant_id"] == dead["merchant_id"])
    h = {"api_key": w.key, "endpoint_id": healthy["endpoint_id"]}
    fails(rt, sid, seed, "manage_webhook_endpoint", {**h, "action": "enable"}, "already enabled")
    fails(rt, sid, seed, "manage_webhook_endpoint", {**h, "action": "update_url"}, "url is required")
    fails(rt, sid, seed, "manage_webhook_endpoint", {**h, "action": "enable", "url": "https://a.example.com/x"},
          "only allowed with it")
    fails(rt, sid, seed, "manage_webhook_endpoint", {**h, "action": "update_url", "url": healthy["url"]},
          "already points at")
    fails(rt, sid, seed, "manage_webhook_endpoint", {**h, "action": "retry_failed"}, "no failed deliveries")
    d = {"api_key": dead_key, "endpoint_id": dead["endpoint_id"]}
    fails(rt, sid, seed, "manage_webhook_endpoint", {**d, "action": "disable"}, "already disabled")
    fails(rt, sid, seed, "manage_webhook_endpoint", {**d, "action": "retry_failed"}, "is disabled",
          "enable it before retrying")
    ok(rt, sid, seed, "manage_webhook_endpoint", {**h, "action": "disable"})
    # a disabled endpoint receives no new events
    before = len(state_of(rt, sid, seed)["deliveries"])
    ok(rt, sid, seed, "create_payment_invoice", {"customer_id": w.inv(status="open")["customer_id"],
                                                 "description": "Extra", "amount": 10})
    after = state_of(rt, sid, seed)["deliveries"]
    assert all(x["endpoint_id"] != healthy["endpoint_id"] for x in list(after.values())[before:])


# ---------------------------------------------------------------- (4) lifecycles driven by the clock
def test_invoice_goes_overdue_and_charge_settles(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    w = World(rt, sid, seed)
    mid = w.m["merchant_id"]
    cust = w.inv(status="open", default_card="ok")["customer_id"]
    inv = ok(rt, sid, seed, "create_payment_invoice", {"customer_id": cust, "description": "Rush job", "amount": 300,
                                                       "days_until_due": 1, "finalize": True})
    assert inv["status"] == "open" and inv["due_date"] == "2026-06-02"
    later = ok(rt, sid, seed, "create_payment_invoice", {"customer_id": cust, "description": "Follow-up",
                                                         "amount": 200, "finalize": True})
    paid = ok(rt, sid, seed, "pay_payment_invoice", {"api_key": w.key, "invoice_id": later["invoice_id"]})
    bal0 = ok(rt, sid, seed, "get_merchant_balance", {"merchant_id": mid})
    assert any(u["payment_id"] == paid["payment"]["payment_id"] for u in bal0["upcoming_settlements"])
    advance(rt, sid, seed, 2 * DAY)
    got = ok(rt, sid, seed, "list_payment_invoices", {"merchant_id": mid, "overdue_only": True, "limit": 50})
    assert inv["invoice_id"] in {i["invoice_id"] for i in got["invoices"]}
    events = state_of(rt, sid, seed)["deliveries"].values()
    assert any(d["event_type"] == "invoice.overdue" and d["object_id"] == inv["invoice_id"] for d in events)
    bal = ok(rt, sid, seed, "get_merchant_balance", {"merchant_id": mid})
    net = paid["settlement"]["net"]
    assert paid["payment"]["payment_id"] not in {u["payment_id"] for u in bal["upcoming_settlements"]}
    assert bal["available"] >= round(bal0["available"] + net, 2) and bal["pending"] < bal0["pending"]
    # paying the overdue invoice clears the flag
    out = ok(rt, sid, seed, "pay_payment_invoice", {"api_key": w.key, "invoice_id": inv["invoice_id"]})
    assert out["status"] == "paid" and out["overdue"] is False


def test_refund_and_payout_complete_with_time(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    w = World(rt, sid, seed)
    fresh = w.inv(status="paid", refund_window_open=True, charge_settled=True)
    rf = ok(rt, sid, seed, "refund_payment_charge", {"api_key": w.key, "payment_id": fresh["payment_id"],
                                                     "amount": 5, "reason": "duplicate"})
    po = ok(rt, sid, seed, "create_merchant_payout", {"api_key": w.key, "merchant_id": w.m["merchant_id"],
                                                      "amount": 100, "method": "instant"})
    assert rf["status"] == "pending" and po["status"] == "in_transit" and po["fee"] == 1.0
    advance(rt, sid, seed, 31)
    s = state_of(rt, sid, seed)
    assert s["refunds"][rf["refund_id"]]["status"] == "succeeded"
    assert s["payouts"][po["payout_id"]]["status"] == "paid"
    kinds = {(d["event_type"], d["object_id"]) for d in s["deliveries"].values()}
    assert ("refund.succeeded", rf["refund_id"]) in kinds or ("payout.paid", po["payout_id"]) in kinds


def test_failing_endpoint_retries_is_disabled_and_recovers(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    w = World(rt, sid, seed)
    failing = next(e for e in w.m["endpoints"] if e["consecutive_failures"] > 0)
    eid = failing["endpoint_id"]
    mine = ok(rt, sid, seed, "list_webhook_deliveries", {"endpoint_id": eid, "status": "retrying"})
    assert mine["total"] == 2 and all(d["attempts"] == 1 for d in mine["deliveries"])
    advance(rt, sid, seed, 30)  # attempts at +5 and +15 minutes have failed by now
    mine = ok(rt, sid, seed, "list_webhook_deliveries", {"endpoint_id": eid, "status": "retrying"})
    assert all(d["attempts"] == 3 for d in mine["deliveries"])
    advance(rt, sid, seed, 4 * 60)  # 5 attempts used up, failing for more than 3 hours
    after = ok(rt, sid, seed, "list_webhook_deliveries", {"endpoint_id": eid})
    assert after["endpoints"][0]["status"] == "disabled" and "3 hours" in after["endpoints"][0]["disabled_reason"]
    failed = [d["delivery_id"] for d in after["deliveries"] if d["status"] == "failed"]
    paused = [d["delivery_id"] for d in after["deliveries"] if d["status"] == "retrying"]
    assert failed and len(failed) + len(paused) >= 2  # the last retry is paused while the endpoint is disabled
    advance(rt, sid, seed, 60)
    assert ok(rt, sid, seed, "list_webhook_deliveries", {"endpoint_id": eid, "status": "retrying"})["total"] == len(paused)
    k = {"api_key": w.key, "endpoint_id": eid}
    ok(rt, sid, seed, "manage_webhook_endpoint", {**k, "action": "update_url", "url": "https://new.example.com/hook"})
    ok(rt, sid, seed, "manage_webhook_endpoint", {**k, "action": "enable"})
    out = ok(rt, sid, seed, "manage_webhook_endpoint", {**k, "action": "retry_failed"})
    assert set(failed) <= set(out["requeued"])
    advance(rt, sid, seed, 1)
    done = ok(rt, sid, seed, "list_webhook_deliveries", {"endpoint_id": eid, "limit": 50})
    assert {d["status"] for d in done["deliveries"]} == {"succeeded"}
    assert done["endpoints"][0]["consecutive_failures"] == 0 and done["endpoints"][0]["status"] == "enabled"


def test_replaying_the_same_calls_gives_the_same_state(rt: DomainRuntime) -> None:
    assert_replays_alike(rt, 3, [("payments_session_advance_clock", {"minutes": 3 * DAY})])


# ---------------------------------------------------------------- (5) determinism, cross-domain link
def test_seed_invoices_mirror_the_world() -> None:
    for seed in (0, 4):
        world = domain.new_world(seed).snapshot()
        refs = seed_invoices(seed)
        assert [r.invoice_id for r in refs] == list(world["invoices"])
        for r in refs:
            inv = world["invoices"][r.invoice_id]
            assert (r.amount, r.currency, r.status) == (inv["amount"], inv["currency"], inv["status"])
            assert r.merchant_name == world["merchants"][inv["merchant_id"]]["name"]


def test_unique_values(rt: DomainRuntime) -> None:
    vals = {r["value"] for r in ok(rt, new_sid(), 0, "payments_get_unique_values", {"field": "invoice_status"})}
    assert vals == {"draft", "open", "paid", "void", "uncollectible"}
