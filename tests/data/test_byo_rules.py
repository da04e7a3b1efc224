"""Each rule byo synthesis adds, on a server built to break it (``tests/env/byo_servers/shelf.py``):
delete the rule and one of these fails. Reads must return something and not report an error in
their text; writes must change the snapshot; replay refuses a gold call to a tool the example hides
and a result that differs; dedup keeps no two examples with the same gold calls."""

from __future__ import annotations

import asyncio
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from data.byo import kinds
from data.byo.realise import ServerModel, realise, study
from data.byo.synth import replay, synthesise
from data.config import SynthConfig
from prove_jax.env.byo import ByoBackend, ServerSpec
from prove_jax.env.pool import MCPPool

SHELF = Path(__file__).resolve().parents[1] / "env" / "byo_servers" / "shelf.py"
BROKEN = ("peek_item", "find_item", "touch_item")


def shelf(**kw: Any) -> ServerSpec:
    return ServerSpec(name="shelf", command=[sys.executable, str(SHELF)], snapshot=["cat", "items.json"], warm=1,
                      **kw)


@pytest.fixture(scope="module")
def chains(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Chains opened by every tool (two RNG seeds each), and replay verdicts on one example."""
    tmp = tmp_path_factory.mktemp("shelf")
    spec = shelf()

    async def go() -> dict[str, Any]:
        async with MCPPool({spec.name: ByoBackend(spec, tmp / "run")}) as pool:
            model: ServerModel = await study(pool, spec)
            out: dict[str, Any] = {"steps": {}}
            for first in model.names:
                for k in range(2):
                    chain = await realise(pool, model, first, 2, random.Random(k))
                    out["steps"].setdefault(first, []).append([s.tool for s in chain.steps])
            chain = await realise(pool, model, "add_item", 1, random.Random(0))
            built = kinds.conversation(model, chain.steps, random.Random(0), 0)
            assert built.record is not None
            rec = built.record
            out["as_built"] = await replay(pool, model, rec, built.results)
            out["hidden"] = await replay(pool, model, {**rec, "tools": [t for t in rec["tools"]
                                                                        if t["function"]["name"] != "add_item"]},
                                         built.results)
            out["other_result"] = await replay(pool, model, rec, [r + "!" for r in built.results])
            return out

    return asyncio.run(go())


def test_reads_that_find_nothing_or_say_error_and_writes_that_change_nothing_are_never_kept(
        chains: dict[str, Any]) -> None:
    kept = {t for runs in chains["steps"].values() for steps in runs for t in steps}
    assert not kept & set(BROKEN), chains["steps"]
    assert {"list_items", "add_item"} <= kept  # the server is usable: the rules drop only what breaks them


def test_replay_refuses_a_hidden_tool_and_a_different_result(chains: dict[str, Any]) -> None:
    assert chains["as_built"] == ""
    assert chains["hidden"] == "replay_schema"
    assert chains["other_result"] == "replay_mismatch"


def test_dedup_keeps_no_two_examples_with_the_same_gold_calls(tmp_path: Path) -> None:
    cfg = SynthConfig(n_conversation=6, n_clarification=0, n_abstention_irrelevance=0, irrelevance_rate=0.0,
                      splits=(0.5, 0.25, 0.25))
    res = synthesise(tmp_path / "data", [shelf()], seed=0, cfg=cfg, run_dir=tmp_path / "run")
    import json

    exs = [json.loads(line) for s in ("train", "validation", "test") for line in (tmp_path / "data" / f"{s}.jsonl").open()]
    calls = [json.dumps(sorted((c["name"], json.dumps(c["arguments"], sort_keys=True)) for t in ex["turns"]
                               for g in t["gold"] for c in g["calls"])) for ex in exs]
    assert res.stats["rejections"].get("duplicate_jaccard", 0) > 0  # the shelf has few distinct calls
    assert len(set(calls)) == len(calls)
