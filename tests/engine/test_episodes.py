"""Multi-turn tool-use episodes against the real domains (in-process MCP pool).

The engine-driven tests use the tiny random model (its calls are garbage, which is the point:
nothing may crash); the scripted tests replay gold calls through the same driver path.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from prove_jax.chat import Transcript
from prove_jax.engine import Engine, Sampler, SamplingConfig
from prove_jax.env import (
    CallResult,
    EnginePolicy,
    EpisodeConfig,
    MCPPool,
    ScriptedPolicy,
    run_episode,
    run_rollouts,
)
from prove_jax.env.episode import opening_messages
from prove_jax.records import CallRecord, Example, ParseError, Rollout
from prove_jax.rewards import score, score_rollouts
from tests.engine import engine_testlib as lib
from tests.engine.conftest import ENGINE

LP_TOL = 1e-4
SAMPLING = SamplingConfig(temperature=1.0, max_new_tokens=16)
EPISODE = EpisodeConfig(max_tokens=ENGINE.max_len)
SNAPSHOTS = dataclasses.replace(EPISODE, snapshots=True)  # where a test reads the servers' end state


@pytest.fixture(scope="module")
def gold(live: dict[str, Any]) -> list[Example]:
    return lib.gold_examples(live)


def teacher_forced_error(model: Any, tokens: np.ndarray, logprobs: np.ndarray, positions: np.ndarray) -> float:
    """Max |sampler log-prob - full-forward log-prob| over ``positions`` of the transcript."""
    lp = lib.full_logprobs(model, tokens[:-1], ENGINE.max_len)
    ref = lp[positions - 1, tokens[positions]]
    return float(np.max(np.abs(ref - logprobs[positions])))


def check_record(r: Rollout) -> None:
    """Structural invariants of a Rollout record (Contract 3)."""
    assert isinstance(r, Rollout)
    t = len(r.tokens)
    assert r.tokens.dtype == np.int32 and r.loss_mask.dtype == bool and r.logprobs.dtype == np.float32
    assert len(r.loss_mask) == len(r.logprobs) == len(r.sample_logprobs) == t
    assert not r.loss_mask[0] and r.loss_mask.any()
    assert (r.logprobs[~r.loss_mask] == 0).all() and (r.sample_logprobs[~r.loss_mask] == 0).all()
    assert not hasattr(r, "reward")  # the driver does not score: its callers do
    assert all(isinstance(c, CallRecord) for c in r.calls)
    assert all(isinstance(e, ParseError) for e in r.parse_errors)


def test_gold_policy_gets_gold_results_and_max_reward(gold, live, template, tokenizer) -> None:
    async def go() -> list[Rollout]:
        async with MCPPool.from_spec(["banking", "vehicle"], "inprocess") as pool:
            return list(await asyncio.gather(*(
                run_episode(ex, ScriptedPolicy.gold(ex, template, tokenizer), pool, template, tokenizer, SNAPSHOTS)
                for ex in gold)))

    rollouts = asyncio.run(go())
    for ex, r in zip(gold, rollouts, strict=True):
        check_record(r)
        expect = list(ex.gold_calls())
        assert [(c.name, c.arguments) for c in r.calls] == [(c.name, c.arguments) for c in expect]
        assert all(c.parsed_ok and c.schema_ok and c.executed_ok for c in r.calls), r.calls
        assert r.finish == "done" and not r.failed and r.parse_errors == ()
        assert r.n_user_turns == len(ex.turns)
        comps = score_rollouts(ex, [r])[0]
        assert (comps["val"], comps["cov"], comps["eff"], comps["name"], comps["arg"]) == (1.0, 1.0, 0.0, 1.0, 1.0)
        assert comps["total"] == pytest.approx(1.3) == score(ex, r.calls)["total"]
        generated = tokenizer.decode(r.tokens[r.loss_mask].tolist())
        context = tokenizer.decode(r.tokens[~r.loss_mask].tolist())
        assert generated.count("<tool_call>") == len(r.calls) == context.count("<tool_response>")
    transfer = next(r for r in rollouts if r.example_id == "bank-transfer")
    args = transfer.calls[1].arguments
    accounts = transfer.final_state["banking"]["accounts"]
    before = {a["account_id"]: a["balance"] for a in live["accounts"]}
    assert accounts[args["from_account_id"]]["balance"] == pytest.approx(before[args["from_account_id"]] - 25)
    assert accounts[args["to_account_id"]]["balance"] == pytest.approx(before[args["to_account_id"]] + 25)


def test_random_model_episodes_on_all_domains(sampler: Sampler, model, live, template, tokenizer) -> None:
    """Six domains, four slots: every episode completes (bad calls are fine, crashes are not),
    the transcript's log-probs equal a teacher-forced forward, and an episode run alone (same
    seed) is token-for-token the same as inside the busy batch."""
    examples = lib.domain_examples(live)
    assert {ex.servers[0] for ex in examples} == set(lib.DOMAINS)

    async def go(exs: Sequence[Example]) -> tuple[list[Rollout], Any]:
        async with MCPPool.from_spec(lib.DOMAINS, "inprocess") as pool, \
                Engine(sampler, ENGINE, sampling=SAMPLING) as eng:
            out = await run_rollouts(eng, pool, exs, template, tokenizer, n_samples=1, config=SNAPSHOTS, seed=3)
            return out, eng.stats

    rollouts, stats = asyncio.run(go(examples))
    assert stats.turns == sum(r.n_assistant_turns for r in rollouts) and stats.prefill_calls > 0
    for r in rollouts:
        check_record(r)
        assert not r.failed and r.finish in ("done", "token_cap", "assistant_cap")
        assert r.n_assistant_turns >= 2 and r.final_state is not None
        pos = np.nonzero(r.loss_mask)[0]
        assert teacher_forced_error(model, r.tokens, r.logprobs, pos) <= LP_TOL
    for i in (1, 4):
        (solo,), _ = asyncio.run(go([examples[i]]))
        np.testing.assert_array_equal(solo.tokens, rollouts[i].tokens)
        np.testing.assert_array_equal(solo.logprobs, rollouts[i].logprobs)


class MixedPolicy:
    """Gold turns first (teacher-forced text), then the engine samples: the engine must prefill
    a context that holds scripted calls and real tool results."""

    def __init__(self, scripted: ScriptedPolicy, engine: EnginePolicy, n_scripted: int) -> None:
        self.scripted, self.engine, self.n = scripted, engine, n_scripted
        self.sampled: list[tuple[int, int]] = []

    async def generate(self, context: Sequence[int], *, max_new_tokens: int, stream: int) -> Any:
        if stream < self.n:
            return await self.scripted.generate(context, max_new_tokens=max_new_tokens, stream=stream)
        gen = await self.engine.generate(context, max_new_tokens=max_new_tokens, stream=stream)
        self.sampled.append((len(context), len(gen.ids)))
        return gen


def test_transcript_is_what_the_sampler_saw(sampler: Sampler, model, gold, template, tokenizer) -> None:
    """After scripted gold calls and their live results, the engine's turns' log-probs equal a
    teacher-forced forward over the final transcript (<= 1e-4, f32)."""
    ex = gold[1]  # vehicle: start_engine, then a second user turn

    async def go() -> tuple[Rollout, MixedPolicy]:
        async with MCPPool.from_spec(["vehicle"], "inprocess") as pool, \
                Engine(sampler, ENGINE, sampling=SAMPLING) as eng, eng.session(7) as sess:
            policy = MixedPolicy(ScriptedPolicy.gold(ex, template, tokenizer), EnginePolicy(sess, SAMPLING), 1)
            return await run_episode(ex, policy, pool, template, tokenizer, EPISODE), policy

    r, policy = asyncio.run(go())
    check_record(r)
    assert r.calls[0].executed_ok and len(policy.sampled) >= 1
    pos = np.concatenate([np.arange(s, s + n) for s, n in policy.sampled])
    assert r.loss_mask[pos].all()
    assert "<tool_response>" in tokenizer.decode(r.tokens[: policy.sampled[0][0]].tolist())
    assert teacher_forced_error(model, r.tokens, r.logprobs, pos) <= LP_TOL
    # and the sample log-probs of a T=1, untruncated sampler differ from the model's only by the
    # padded-vocabulary mass (the sampler renormalises over real ids): never lower
    assert (r.sample_logprobs[pos] >= r.logprobs[pos] - 1e-6).all()


def test_bad_calls_are_recorded_not_fatal(gold, template, tokenizer) -> None:
    ex = gold[0]  # banking, tools: list_accounts, transfer_funds, get_account_balance
    msgs = [
        {"role": "assistant", "content": "", "tool_calls": [
            {"name": "launch_rocket", "arguments": {}},                      # not a tool anywhere
            {"name": "get_customer_profile", "arguments": {"customer_id": "CUS-0001"}},  # hidden from the model
            {"name": "list_accounts", "arguments": {"customer_id": 5}},      # wrong type
        ]},
        {"role": "assistant", "content": '<tool_call>\n{"name": "list_accounts", "arguments": {oops}\n</tool_call>'},
        {"role": "assistant", "content": "I could not do it."},
    ]

    async def go() -> Rollout:
        async with MCPPool.from_spec(["banking"], "inprocess") as pool:
            return await run_episode(ex, ScriptedPolicy(msgs, template, tokenizer), pool, template, tokenizer,
                                     EPISODE)

    r = asyncio.run(go())
    check_record(r)
    rocket, hidden, typed = r.calls
    assert not rocket.executed_ok and not rocket.schema_ok and rocket.error_kind == "unknown_tool"
    assert not hidden.executed_ok and hidden.error_kind == "unknown_tool"
    assert not typed.schema_ok and not typed.executed_ok and typed.error_kind == "tool"
    assert all(c.parsed_ok for c in r.calls) and [c.turn for c in r.calls] == [0, 0, 0]
    assert len(r.parse_errors) == 1 and "invalid JSON" in r.parse_errors[0].reason
    assert r.parse_errors[0].assistant_turn == 1 and r.finish == "done" and not r.failed
    assert score(ex, r.calls)["total"] < 1.0


def test_dead_server_ends_only_its_episode(gold, template, tokenizer) -> None:
    bank, vehicle = gold[0], gold[1]

    async def go() -> tuple[Rollout, Rollout]:
        async with MCPPool.from_spec(["banking", "vehicle"], "inprocess") as pool:
            backend = pool.backends["banking"]
            real_call = backend.call

            async def dying(pin: Any, session: str, seed: int, name: str, args: Any) -> CallResult:
                if name == "list_accounts":
                    return CallResult("banking server died", True, "server_died")
                return await real_call(pin, session, seed, name, args)

            backend.call = dying  # type: ignore[method-assign]
            return await asyncio.gather(
                run_episode(bank, ScriptedPolicy.gold(bank, template, tokenizer), pool, template, tokenizer, SNAPSHOTS),
                run_episode(vehicle, ScriptedPolicy.gold(vehicle, template, tokenizer), pool, template, tokenizer,
                            SNAPSHOTS))

    dead, alive = asyncio.run(go())
    assert dead.failed and dead.finish == "env_failed" and dead.final_state is None
    assert len(dead.calls) == 1 and not dead.calls[0].executed_ok and dead.n_assistant_turns == 1
    assert not alive.failed and alive.finish == "done" and alive.final_state is not None
    assert score(vehicle, alive.calls)["total"] == pytest.approx(1.3)


def test_turn_and_token_caps(gold, template, tokenizer) -> None:
    ex = gold[2]
    call = {"role": "assistant", "content": "", "tool_calls": [
        {"name": "get_account_balance", "arguments": ex.turns[0].gold[0].calls[0].arguments}]}

    async def go(policy: Any, cfg: EpisodeConfig, example: Example = ex) -> Rollout:
        async with MCPPool.from_spec(["banking"], "inprocess") as pool:
            return await run_episode(example, policy, pool, template, tokenizer, cfg)

    looping = asyncio.run(go(ScriptedPolicy([call] * 20, template, tokenizer),
                             dataclasses.replace(EPISODE, max_assistant_turns=4)))
    assert looping.finish == "assistant_cap" and looping.n_assistant_turns == 4
    # 4 calls exceed the budget B = n_gt + ceil(n_gt / 2) = 3 of this two-call example
    assert len(looping.calls) == 4 and score(ex, looping.calls)["eff"] < 0
    bank = gold[0]
    tr = Transcript.start(template, tokenizer, opening_messages(bank), bank.tools)
    tr.start_assistant()
    opening = len(tr)
    short = asyncio.run(go(ScriptedPolicy.gold(bank, template, tokenizer),
                           dataclasses.replace(EPISODE, max_tokens=opening + 12), bank))
    assert short.finish == "token_cap" and short.n_assistant_turns == 1
    assert short.loss_mask.sum() == 12 and short.calls == ()
    assert short.parse_errors and "unterminated" in short.parse_errors[0].reason
