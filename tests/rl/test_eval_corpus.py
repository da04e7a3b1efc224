"""In-domain eval metrics on crafted rollouts, and the tokenizer corpus built from live results."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from prove_jax.chat import get_template
from prove_jax.env import MCPPool
from prove_jax.env.corpus import tokenizer_corpus
from prove_jax.eval.indomain import Scored, success, summarize
from prove_jax.records import CallRecord
from tests.engine import engine_testlib as lib
from tests.rl.rl_testlib import call_record, crafted_rollout


def _ro(kind: str, calls: list[CallRecord], comps: dict[str, float], turns: int, n_gold: int,
        match: bool | None = None) -> Scored:
    rollout = crafted_rollout("e", calls, kind=kind, n_assistant_turns=turns, n_gold_calls=n_gold)
    return Scored(rollout, {"total": 0.0, **comps}, state_match=match)


def _call(turn: int, ok: bool = True) -> CallRecord:
    return call_record("t", executed_ok=ok, assistant_turn=turn)


C = {"val": 1.0, "cov": 1.0, "eff": 0.0, "name": 1.0, "arg": 1.0, "total": 1.45}


def test_success_and_parsed_call_fraction_by_hand() -> None:
    good = _ro("conversation", [_call(0), _call(0), _call(1, ok=False)], C, turns=3, n_gold=2, match=True)
    verbose = _ro("conversation", [_call(0)] * 4, {**C, "eff": -0.25}, turns=2, n_gold=2)
    wrong_args = _ro("conversation", [_call(0)], {**C, "arg": 0.5}, turns=2, n_gold=1, match=False)
    refused = _ro("abstention", [], {**C, "total": 1.0}, turns=1, n_gold=0)
    called = _ro("irrelevance", [_call(0)], {**C, "total": 0.0}, turns=2, n_gold=0)
    assert [success(s.rollout, s.reward) for s in (good, verbose, wrong_args, refused, called)] == \
        [True, False, False, True, False]
    s = summarize([good, verbose, wrong_args])
    # turns with >= 1 call: good 2 of 3, verbose 1 of 2, wrong_args 1 of 2 -> 4 / 7
    assert s["parsed_call_fraction"] == 4 / 7
    assert s["calls_per_episode"] == 8 / 3 and s["tool_error_rate"] == 1 / 8
    assert s["success"] == 1 / 3 and s["final_state_match"] == 0.5 and s["n"] == 3
    assert s["reward"] == 1.45 and "train_reward" not in s  # no train_reward unless the run's reward differs


def test_tokenizer_corpus_contains_live_results_and_control_tokens() -> None:
    async def go() -> tuple[list[str], dict[str, Any]]:
        live = await lib.live_data(("banking", "vehicle"))
        exs = lib.gold_examples(live)
        async with MCPPool.from_spec(lib.DOMAINS, "inprocess") as pool:
            texts = await tokenizer_corpus(exs, pool, get_template("qwen3", enable_thinking=False))
        return texts, live

    texts, live = asyncio.run(go())
    assert len(texts) == 3
    bank = texts[0]
    account = next(a for a in live["accounts"] if a["account_id"] in bank)
    assert f'"balance": {account["balance"]}' in bank or json.dumps(account["balance"]) in bank
    talk = bank[bank.index("<|im_start|>user"):]  # after the system prompt (which explains the tags)
    assert talk.count("<tool_call>") == 2 and talk.count("<tool_response>") == 2  # one per gold call
    assert "<|im_start|>assistant" in bank and "Done, the money is moved." in bank
