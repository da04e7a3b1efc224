"""The robustness knobs on byo data (``data.writer.Knobs`` fed a user's servers instead of the kit's
catalog), on hand-made records, no live server: exact counts, enums gone exactly where chosen,
distractors only from the run's other servers (never the example's own, never one it hides, never
the server an irrelevance request came from), one seed one result, one server no distractors."""

from __future__ import annotations

import copy
import json
import random
from types import SimpleNamespace
from typing import Any

from data.byo import kinds
from data.writer import Knobs

RANGE = (2, 3)


def tool(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": f"{name} things.", "parameters": {
        "type": "object", "properties": {"mode": {"type": "string", "enum": ["a", "b"]},
                                         "items": {"type": "array", "items": {"enum": [1, 2]}}}}}}


SERVERS = {
    "alpha": [tool(n) for n in ("alpha_read", "alpha_list", "alpha_write", "alpha_delete")],
    "beta": [tool(n) for n in ("beta_get", "beta_put", "beta_find", "beta_drop")],
    "gamma": [tool(n) for n in ("gamma_scan", "gamma_note", "gamma_tag")],
}


def owner(name: str) -> str:
    return name.split("_")[0]


def records(servers: dict[str, list[dict[str, Any]]], n: int) -> list[dict[str, Any]]:
    """Conversations, abstentions (a hidden tool) and irrelevance requests realised on the next server."""
    names = sorted(servers)
    out = []
    for i in range(n):
        s = names[i % len(names)]
        meta: dict[str, Any] = {"source_domains": [s], "distractors": [], "enum_stripped": False}
        kind = ("conversation", "abstention", "irrelevance")[i % 3]
        if kind == "abstention":
            meta["hidden"] = [servers[s][i % len(servers[s])]["function"]["name"]]
        if kind == "irrelevance" and len(names) > 1:
            meta["source_domains"] = [names[(names.index(s) + 1) % len(names)]]
        hidden = set(meta.get("hidden", []))
        out.append({"id": f"r{i}", "kind": kind, "servers": [s], "meta": meta,
                    "tools": [t for t in servers[s] if t["function"]["name"] not in hidden]})
    return out


def applied(servers: dict[str, list[dict[str, Any]]], n: int, seed: int, distractors: float = 0.5,
            enums: float = 0.3) -> list[dict[str, Any]]:
    recs = records(servers, n)
    knobs = Knobs(n, servers, distractors, RANGE, enums, seed)
    for i, ex in enumerate(recs):
        knobs.apply(i, ex)
    return recs


def test_exact_counts_and_enums_gone_only_where_chosen() -> None:
    recs = applied(SERVERS, 40, seed=0)
    assert sum(ex["meta"]["enum_stripped"] for ex in recs) == round(0.3 * 40)
    assert sum(bool(ex["meta"]["distractors"]) for ex in recs) == round(0.5 * 40)  # every pool is non-empty here
    for ex in recs:
        assert ('"enum"' in json.dumps(ex["tools"])) != ex["meta"]["enum_stripped"]
        assert all(t["function"]["parameters"]["properties"]["mode"]["type"] == "string" for t in ex["tools"])
    assert '"enum"' in json.dumps(SERVERS)  # stripping copies: the servers' own schemas keep theirs


def test_distractors_come_from_other_servers_never_hidden_never_the_request_source() -> None:
    recs = applied(SERVERS, 60, seed=3, distractors=1.0)
    for ex in recs:
        names = [t["function"]["name"] for t in ex["tools"]]
        picks = ex["meta"]["distractors"]
        assert RANGE[0] <= len(picks) <= RANGE[1]
        assert len(names) == len(set(names))
        assert {owner(p) for p in picks}.isdisjoint(set(ex["servers"]) | set(ex["meta"]["source_domains"]))
        assert set(picks) <= set(names) and not set(ex["meta"].get("hidden", [])) & set(names)
        own = [n for n in names if n not in picks]  # the example's own tools keep their order
        hidden = set(ex["meta"].get("hidden", []))
        assert own == [t["function"]["name"] for d in ex["servers"] for t in SERVERS[d]
                       if t["function"]["name"] not in hidden]
    positions = {[t["function"]["name"] for t in ex["tools"]].index(ex["meta"]["distractors"][0]) for ex in recs}
    assert len(positions) > 2  # inserted at random positions, not appended


def test_a_name_the_example_hides_is_never_readded_from_another_server() -> None:
    """A hand-made pool publishing one name on two servers (a real pool refuses that) still never
    shows an abstention its hidden tool again, nor any example a name twice."""
    servers = {**SERVERS, "beta": [*SERVERS["beta"], *(tool(t["function"]["name"]) for t in SERVERS["alpha"])]}
    for seed in range(5):
        for ex in applied(servers, 30, seed=seed, distractors=1.0):
            names = [t["function"]["name"] for t in ex["tools"]]
            assert len(names) == len(set(names))
            assert not set(ex["meta"].get("hidden", [])) & set(names)


def test_one_seed_one_result_and_another_seed_differs() -> None:
    a, b, c = (applied(SERVERS, 30, seed=s) for s in (7, 7, 8))
    assert json.dumps(a) == json.dumps(b)
    assert json.dumps(a) != json.dumps(c)


def test_a_single_server_gets_no_distractors_but_its_enums_are_stripped() -> None:
    recs = applied({"alpha": SERVERS["alpha"]}, 20, seed=0, distractors=1.0)
    assert all(ex["meta"]["distractors"] == [] for ex in recs)
    assert all({t["function"]["name"] for t in ex["tools"]} <= {t["function"]["name"] for t in SERVERS["alpha"]}
               for ex in recs)
    assert sum(ex["meta"]["enum_stripped"] for ex in recs) == round(0.3 * 20)


def test_knobs_at_zero_leave_the_records_tools_as_built() -> None:
    """The rule that rebuilds ``tools`` (servers' tools minus hidden) gives back what byo kinds built."""
    recs = records(SERVERS, 12)
    before = copy.deepcopy(recs)
    knobs = Knobs(12, SERVERS, 0.0, RANGE, 0.0, 0)
    for i, ex in enumerate(recs):
        knobs.apply(i, ex)
    assert recs == before


def test_an_irrelevance_request_from_another_server_names_it_as_its_source() -> None:
    """So the knobs never draw the tools that would serve the request as distractors."""
    model = SimpleNamespace(name="alpha", root=None, openai=SERVERS["alpha"], prefix="alpha")
    other = SimpleNamespace(name="beta", prefix="beta")
    step = SimpleNamespace(tool="beta_get", read_only=True, binding=SimpleNamespace(bound=[], args={}))
    rec = kinds.irrelevance(model, 0, random.Random(0), 0, (other, step)).record  # type: ignore[arg-type]
    assert rec is not None and rec["meta"]["source_domains"] == ["beta"]
    generic = kinds.irrelevance(model, 0, random.Random(0), 0).record  # type: ignore[arg-type]
    assert generic is not None and generic["meta"]["source_domains"] == ["alpha"]
