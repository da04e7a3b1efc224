"""The episode driver's token cap is a hard bound: a tool result, user turn or generation prompt
that would take the transcript past ``max_tokens`` is never appended (``finish == "token_cap"``).

Each cap is placed from an uncapped run of the same gold episode (in-process banking server,
deterministic results), one token short of what the next piece needs; the capped run must then
be exactly the uncapped transcript up to the last piece that fit.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from prove_jax.chat import ChatTokenizer
from prove_jax.env import EpisodeConfig, MCPPool, ScriptedPolicy, run_episode
from prove_jax.records import CallRecord, Rollout
from tests.engine import engine_testlib as lib

UNCAPPED = EpisodeConfig(max_tokens=10**6)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    live = asyncio.run(lib.live_data(("banking", "vehicle")))
    tok: ChatTokenizer = lib.build_tokenizer(live, Path(tmp_path_factory.mktemp("tok")))
    tpl = lib.template()
    ex = lib.gold_examples(live)[0]  # list accounts -> reply; second user turn -> transfer -> reply
    out = {"tok": tok, "tpl": tpl, "ex": ex, "prompt": len(tok.encode(tpl.generation_prompt()))}
    out["full"] = play(out, UNCAPPED)
    return out


def play(s: dict[str, Any], cfg: EpisodeConfig) -> Rollout:
    async def go() -> Rollout:
        async with MCPPool.from_spec(["banking"], "inprocess") as pool:
            return await run_episode(s["ex"], ScriptedPolicy.gold(s["ex"], s["tpl"], s["tok"]), pool, s["tpl"],
                                     s["tok"], cfg)

    return asyncio.run(go())


def turns(r: Rollout) -> list[tuple[int, int]]:
    """``(start, end)`` of each assistant turn (runs of the loss mask)."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], r.loss_mask.astype(np.int8), [0]])))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))


def capped(s: dict[str, Any], max_tokens: int) -> Rollout:
    r = play(s, dataclasses.replace(UNCAPPED, max_tokens=max_tokens))
    assert r.finish == "token_cap" and not r.failed
    assert len(r.tokens) <= max_tokens
    np.testing.assert_array_equal(r.tokens, s["full"].tokens[: len(r.tokens)])
    return r


def test_uncapped_gold_run_is_the_reference(setup) -> None:
    full = setup["full"]
    assert full.finish == "done" and len(turns(full)) == 4 and len(full.calls) == 2


def test_a_real_episode_is_a_typed_rollout(setup) -> None:
    """Contract 3 as a type: the driver returns a Rollout (attributes, not string keys) whose calls
    are CallRecords, with the example's id, kind and gold-call count carried over."""
    full, ex = setup["full"], setup["ex"]
    assert type(full) is Rollout
    with pytest.raises(TypeError):
        full["tokens"]  # no dict access survives
    assert (full.example_id, full.group_id, full.sample_idx, full.kind) == (ex.id, ex.id, 0, "conversation")
    assert full.n_gold_calls == ex.n_gold_calls == 2 and full.opening > 0
    assert full.tokens.dtype == np.int32 and full.loss_mask.dtype == bool
    assert full.logprobs.dtype == full.sample_logprobs.dtype == np.float32
    assert len(full.tokens) == len(full.loss_mask) == len(full.logprobs) == len(full.sample_logprobs)
    assert all(type(c) is CallRecord for c in full.calls) and full.parse_errors == ()
    first = full.calls[0]
    assert (first.name, first.turn, first.assistant_turn) == ("list_accounts", 0, 0)
    assert first.parsed_ok and first.schema_ok and first.executed_ok and first.error_kind is None
    assert first.arguments == ex.turns[0].gold[0].calls[0].arguments and first.result
    assert (full.n_user_turns, full.failed, full.failure, full.final_state) == (2, False, None, None)


def test_tool_results_that_would_overflow_are_not_appended(setup) -> None:
    tok, full = setup["tok"], setup["full"]
    (_, call_end), (reply_start, _) = turns(full)[:2]
    tool_len = reply_start - call_end - setup["prompt"]  # the tool turn between the call and the reply
    assert "<tool_response>" in tok.decode(full.tokens[call_end:call_end + tool_len].tolist())
    r = capped(setup, call_end + tool_len - 1)  # one token short
    assert len(r.tokens) == call_end and r.n_assistant_turns == 1
    assert len(r.calls) == 1 and r.calls[0].executed_ok  # the call ran; only its result is left out
    assert "<tool_response>" not in tok.decode(r.tokens.tolist())
    fits = capped(setup, call_end + tool_len)  # exactly fits: appended, and then nothing else can be
    assert len(fits.tokens) == call_end + tool_len


def test_user_turn_that_would_overflow_is_not_appended(setup) -> None:
    full = setup["full"]
    (_, _), (_, reply_end), (call2_start, _), _ = turns(full)
    user_len = call2_start - reply_end - setup["prompt"]
    assert setup["ex"].turns[1].user[:20] in setup["tok"].decode(full.tokens[reply_end:call2_start].tolist())
    r = capped(setup, reply_end + user_len - 1)
    assert len(r.tokens) == reply_end and r.n_assistant_turns == 2 and r.n_user_turns == 1
    assert len(r.calls) == 1


def test_generation_prompt_without_room_for_a_token_is_not_appended(setup) -> None:
    full = setup["full"]
    _, (reply_start, _) = turns(full)[:2]
    r = capped(setup, reply_start)  # the tool turn and the prompt fit, but not one generated token
    assert len(r.tokens) == reply_start - setup["prompt"] and r.n_assistant_turns == 1
