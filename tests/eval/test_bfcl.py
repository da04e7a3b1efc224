"""BFCL Multi-Turn through bfcl-eval's own data, executor and multi_turn_checker.

The oracle (``--policy oracle``) replays ground truth through our driver: it must score 800/800,
and a single dropped call must fail its entry — together they bound the harness from both sides.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from prove_jax.eval import bfcl, bfcl_exec
from prove_jax.serve import ChatReply, OpenAIChat
from tests.serve.servelib import free_port


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bfcl")
    bfcl.bfcl_root(out)  # BFCL_PROJECT_ROOT before bfcl_eval is imported
    return out


@pytest.fixture(scope="module")
def truths(root: Path) -> dict[str, list[list[str]]]:
    out: dict[str, list[list[str]]] = {}
    for c in bfcl.CATEGORIES:
        out.update(bfcl.load_category(c, None)[1])
    return out


def test_oracle_scores_800_of_800(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m prove_jax.eval bfcl --policy oracle``: the ground truth of every entry replayed."""
    from prove_jax.eval.__main__ import main

    summary = main(["bfcl", "--policy", "oracle", "--workers", "2", "--out", str(root / "oracle")])
    assert {c: (v["correct"], v["total"]) for c, v in summary["categories"].items()} == {
        c: (200, 200) for c in bfcl.CATEGORIES}
    assert summary["overall"] == 1.0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert printed["overall"] == 100.0 and all(printed[c] == 100.0 for c in bfcl.CATEGORIES)
    bfcl_root = Path(summary["bfcl_project_root"])
    csv = (bfcl_root / "score" / "data_multi_turn.csv").read_text().splitlines()
    assert csv[1] == "1,oracle,100.00%,100.00%,100.00%,100.00%,100.00%"
    for c in bfcl.CATEGORIES:
        lines = (bfcl_root / "result" / "oracle" / "multi_turn" / f"BFCL_v4_{c}_result.json").read_text().splitlines()
        assert len(lines) == 200 and json.loads(lines[0])["id"] == f"{c}_0"
        head = json.loads((bfcl_root / "score" / "oracle" / "multi_turn" / f"BFCL_v4_{c}_score.json")
                          .read_text().splitlines()[0])
        assert head == {"accuracy": 1.0, "correct_count": 200, "total_count": 200}


@pytest.mark.parametrize("category", bfcl.CATEGORIES)
def test_dropping_one_call_fails_that_entry(root: Path, truths: dict[str, Any], category: str) -> None:
    """Entry 0 loses one ground-truth call (the first turn's last); entries 1-3 stay exact."""
    target = f"{category}_0"
    turn = next(t for t, calls in enumerate(truths[target]) if calls)

    def policy(entry: Mapping[str, Any]) -> bfcl.OracleChat:
        drop = (turn, len(truths[target][turn]) - 1) if entry["id"] == target else None
        return bfcl.OracleChat(truths[entry["id"]], drop=drop)

    summary = asyncio.run(bfcl.evaluate(policy, root / f"drop_{category}", f"drop-{category}",
                                        bfcl.BfclConfig(categories=(category,), limit=4, workers=1),
                                        progress=False))
    res = summary["categories"][category]
    assert res["correct"] == 3 and res["total"] == 4
    assert set(res["errors"]) <= {"multi_turn:instance_state_mismatch", "multi_turn:execution_response_mismatch"}


class Recorder:
    """Records what the driver sends; answers with fixed replies (a call every step, or text)."""

    def __init__(self, reply: ChatReply) -> None:
        self.reply = reply
        self.requests: list[tuple[list[dict[str, Any]], list[str]]] = []

    async def chat(self, messages: Sequence[Mapping[str, Any]], tools: Any = None, **_: Any) -> ChatReply:
        self.requests.append(([dict(m) for m in messages], [t["function"]["name"] for t in tools]))
        return self.reply


def _text_reply() -> ChatReply:
    return ChatReply(content="I cannot help with that.", tool_calls=[], finish_reason="stop")


def test_held_out_functions_arrive_at_their_turn(root: Path) -> None:
    from bfcl_eval.constants.default_prompts import DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC

    entries, _ = bfcl.load_category("multi_turn_miss_func", 1)
    entry = entries[0]
    ((turn, missed),) = entry["missed_function"].items()
    names = {f["name"] for f in missed}
    rec = Recorder(_text_reply())
    with bfcl.Workers(1) as workers:
        played = asyncio.run(bfcl.play(rec, entry, workers, 0, "pj_test_holdout", bfcl.BfclConfig()))
    assert len(played["result"]) == len(entry["question"])  # every turn played: one text step each
    assert len(rec.requests) == len(entry["question"])
    for t, (messages, tools) in enumerate(rec.requests):
        assert names.isdisjoint(tools) if t < int(turn) else names <= set(tools)
        assert messages[-1]["role"] == "user"
    assert rec.requests[int(turn)][0][-1]["content"] == DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC
    assert all(m["role"] != "system" for m in rec.requests[-1][0])  # bfcl's FC loop adds no system prompt


def test_step_cap_force_terminates(root: Path) -> None:
    """A policy that calls a tool every step is stopped after MAXIMUM_STEP_LIMIT + 1 steps and the
    entry fails as bfcl's runner fails it (fewer turns than the ground truth)."""
    from bfcl_eval.constants.default_prompts import MAXIMUM_STEP_LIMIT

    entries, truth = bfcl.load_category("multi_turn_base", 1)
    call = {"id": "c", "type": "function", "function": {"name": "pwd", "arguments": "{}"}}
    rec = Recorder(ChatReply(content="", tool_calls=[call], finish_reason="tool_calls"))
    with bfcl.Workers(1) as workers:
        played = asyncio.run(bfcl.play(rec, entries[0], workers, 0, "pj_test_cap", bfcl.BfclConfig()))
        verdict = asyncio.run(bfcl.score_entry(played, truth[entries[0]["id"]], entries[0], workers, 0,
                                               "pj_test_cap"))
    assert played["stop"] == "step_limit" and played["steps"] == MAXIMUM_STEP_LIMIT + 1
    assert len(played["result"]) == 1 and not verdict["valid"]
    assert verdict["error_type"] == "multi_turn:force_terminated"
    tool_msgs = [m for m in rec.requests[-1][0] if m["role"] == "tool"]
    assert len(tool_msgs) == MAXIMUM_STEP_LIMIT and "/" in tool_msgs[0]["content"]  # pwd really ran


def test_malformed_arguments_end_the_turn_not_the_run(root: Path) -> None:
    entries, _ = bfcl.load_category("multi_turn_base", 1)
    bad = {"id": "c", "type": "function", "function": {"name": "cd", "arguments": "{folder: oops"}}
    rec = Recorder(ChatReply(content="", tool_calls=[bad], finish_reason="tool_calls"))
    with bfcl.Workers(1) as workers:
        played = asyncio.run(bfcl.play(rec, entries[0], workers, 0, "pj_test_bad", bfcl.BfclConfig()))
    assert played["stop"] is None and played["calls"] == 0
    assert len(played["result"]) == len(entries[0]["question"])  # each turn: one step, then over


def test_rollouts_never_share_instances(root: Path) -> None:
    """The pitfall bfcl-eval has: instances cached per model name. Each rollout gets its own name
    and the worker forgets them once scored, so a wrong run cannot spoil a right one."""
    entries, truth = bfcl.load_category("multi_turn_base", 1)
    entry = entries[0]
    with bfcl.Workers(1) as workers:
        first = bfcl.OracleChat(truth[entry["id"]], drop=(0, 0))
        played = asyncio.run(bfcl.play(first, entry, workers, 0, "pj_iso_a", bfcl.BfclConfig()))
        bad = asyncio.run(bfcl.score_entry(played, truth[entry["id"]], entry, workers, 0, "pj_iso_a"))
        played = asyncio.run(bfcl.play(bfcl.OracleChat(truth[entry["id"]]), entry, workers, 0, "pj_iso_b",
                                       bfcl.BfclConfig()))
        good = asyncio.run(bfcl.score_entry(played, truth[entry["id"]], entry, workers, 0, "pj_iso_b"))
        left = asyncio.run(workers.run(0, bfcl_exec.forget, "pj_iso"))
    assert not bad["valid"] and good["valid"]
    assert left == 0  # nothing cached after scoring (the prefix would match both rollouts' instances)


def test_tools_follow_bfcl_type_mapping(root: Path) -> None:
    entries, _ = bfcl.load_category("multi_turn_base", 1)
    b = bfcl._bfcl()
    tools = bfcl.to_tools(entries[0]["function"], b.types)
    assert len(tools) == len(entries[0]["function"])
    flat = json.dumps([t["function"]["parameters"] for t in tools])  # ("response" stays as bfcl sends it)
    assert '"type": "dict"' not in flat and '"type": "float"' not in flat
    assert all(t["function"]["parameters"]["type"] == "object" for t in tools)
    assert bfcl.call_strings([{"function": {"name": "mv", "arguments": '{"source": "a.txt", "n": 2}'}}]) == [
        "mv(source='a.txt',n=2)"]


def test_a_served_policy_plays_the_whole_protocol(root: Path, tiny_policy_dir: Path) -> None:
    """``python -m prove_jax.serve`` (a real subprocess) with the tiny policy, driven over HTTP by
    ``python -m prove_jax.eval bfcl --url``: every turn of every entry is played and scored."""
    port = free_port()
    env = {**os.environ, "XLA_FLAGS": ""}
    proc = subprocess.Popen([sys.executable, "-m", "prove_jax.serve", "--model", str(tiny_policy_dir), "--port",
                             str(port), "--dtype", "float32", "--slots", "4", "--max-len", "16384", "--max-chunk",
                             "256", "--served-model-name", "tiny"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        from prove_jax.eval.__main__ import main

        summary = main(["bfcl", "--url", url, "--served-model", "tiny", "--limit", "1", "--max-tokens", "16",
                        "--out", str(root / "served")])
        health = httpx.get(f"http://127.0.0.1:{port}/health").json()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert set(summary["categories"]) == set(bfcl.CATEGORIES)
    entries = {c: bfcl.load_category(c, 1)[0][0] for c in bfcl.CATEGORIES}
    for c, res in summary["categories"].items():
        assert res["total"] == 1 and not res["stopped"], res
        assert res["steps_per_entry"] >= len(entries[c]["question"])  # at least one request per turn
    assert health["requests"] >= sum(len(e["question"]) for e in entries.values())
    assert health["errors"] == 0


def test_openai_chat_reports_http_errors(root: Path) -> None:
    async def go() -> None:
        async with OpenAIChat("http://127.0.0.1:9/v1", "x", timeout=2) as client:
            await client.chat([{"role": "user", "content": "hi"}])

    with pytest.raises(httpx.HTTPError):
        asyncio.run(go())
