"""One scoring of a rollout, two rewards: a run trains on its own reward config and is evaluated on
the paper's (the yardstick shared by every run), and reports both.

A scripted engine stands in for the sampler (each session replays the turns written for the
rollout whose sampling seed opens it), so the GRPO rollout path and the in-domain eval run
through the real episode driver and in-process servers with rollouts chosen to separate the two
rewards: the gold calls plus a call to a tool that does not exist have full coverage (recall-only
reward 1) but lower validity and name precision (a lower paper reward). The launcher test checks
that the eval stage is handed the run's reward section.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from prove_jax.chat import ChatTemplate, ChatTokenizer
from prove_jax.engine import SamplingConfig
from prove_jax.env import EpisodeConfig, MCPPool, ScriptedPolicy, sample_seed
from prove_jax.eval.config import EvalConfig
from prove_jax.eval.indomain import YARDSTICK, evaluate
from prove_jax.records import Example, Rollout
from prove_jax.rewards import DEFAULT_WEIGHTS, PAPER_COMPONENTS, RewardConfig, score, variant
from prove_jax.rl.advantages import ADVANTAGES
from prove_jax.rl.grpo import GRPOConfig, GRPOContext, _Generator, rollouts_to_rows, step_seed
from tests.engine import engine_testlib as lib

RECALL = variant("recall_only")
EPISODE = EpisodeConfig(max_tokens=4096)


class _Session:
    def __init__(self, policy: ScriptedPolicy) -> None:
        self.policy = policy

    async def generate(self, context: Sequence[int], sampling: SamplingConfig, *, stream: int) -> Any:
        return await self.policy.generate(context, max_new_tokens=sampling.max_new_tokens, stream=stream)


class ScriptedEngine:
    """What ``run_rollouts`` and GRPO's generator use of an ``Engine``; ``script(seed)`` is the
    policy of the episode whose sampling seed is ``seed``."""

    def __init__(self, script: Callable[[int], ScriptedPolicy]) -> None:
        self.script = script
        self.sampling = SamplingConfig(max_new_tokens=512)
        self.stats = SimpleNamespace(device_busy_s=0.0, generated_tokens=0)

    @contextlib.asynccontextmanager
    async def session(self, seed: int) -> AsyncIterator[_Session]:
        yield _Session(self.script(seed))


@pytest.fixture(scope="module")
def world(live: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    tok = lib.build_tokenizer(live, tmp_path_factory.mktemp("tok"))
    _, vehicle, balances = lib.gold_examples(live)
    abstain = Example.from_dict({
        **balances.to_dict(), "id": "abstain-joke", "kind": "abstention",
        "turns": [{"user": "Tell me a joke about banks.", "gold": [], "reply": "I can only help with accounts."}],
        "complexity": {"n_calls": 0, "n_steps": 0, "n_turns": 1, "n_servers": 1}})
    return SimpleNamespace(tpl=lib.template(), tok=tok, vehicle=vehicle, balances=balances, abstain=abstain)


def gold_plus_junk(ex: Example, tpl: ChatTemplate, tok: ChatTokenizer) -> ScriptedPolicy:
    """The gold calls of a one-step example, plus a call to a tool that exists nowhere, in one turn."""
    (turn,) = ex.turns
    calls = [{"name": c.name, "arguments": c.arguments} for s in turn.gold for c in s.calls]
    calls.append({"name": "launch_rocket", "arguments": {}})
    return ScriptedPolicy([{"role": "assistant", "content": "", "tool_calls": calls},
                           {"role": "assistant", "content": turn.reply}], tpl, tok)


def saying_done(tpl: ChatTemplate, tok: ChatTokenizer) -> ScriptedPolicy:
    return ScriptedPolicy([], tpl, tok)  # "Done." without a call, forever


def _context(w: SimpleNamespace, engine: ScriptedEngine, pool: MCPPool, reward: RewardConfig) -> GRPOContext:
    # the generator reads the engine, pool, chat, episode and reward; no trainer runs here
    return GRPOContext(trainer=None, engine=engine, pool=pool, template=w.tpl, tokenizer=w.tok,  # type: ignore[arg-type]
                       episode=EPISODE, reward=reward, max_len=EPISODE.max_tokens)


def grpo_rollouts(w: SimpleNamespace, reward: RewardConfig, scripts: Sequence[Callable[[], ScriptedPolicy]],
                  ex: Example) -> list[Rollout]:
    """GRPO's rollouts of step 0 (one group of ``ex``; sample ``k`` plays ``scripts[k]``)."""
    cfg = GRPOConfig(group_size=len(scripts), prompts_per_step=1)
    base = step_seed(0, 0)
    by_seed = {sample_seed(base, ex.id, k): s for k, s in enumerate(scripts)}

    async def go() -> list[Rollout]:
        async with MCPPool.from_spec(["banking", "vehicle"], "inprocess") as pool:
            engine = ScriptedEngine(lambda seed: by_seed[seed]())
            batch = await _Generator(_context(w, engine, pool, reward), cfg, seed=0)([ex], 0)
            return batch["rollouts"]

    return asyncio.run(go())


def test_grpo_trains_on_the_runs_reward(world: SimpleNamespace) -> None:
    """A recall-only run: the gold calls and the gold calls plus a junk call have equal coverage,
    so equal rewards and advantages; under the paper's reward the junk call costs validity."""
    w, ex = world, world.balances
    scripts = [lambda: ScriptedPolicy.gold(ex, w.tpl, w.tok), lambda: gold_plus_junk(ex, w.tpl, w.tok),
               lambda: saying_done(w.tpl, w.tok)]
    ros = grpo_rollouts(w, RECALL, scripts, ex)
    assert [len(r.calls) for r in ros] == [2, 3, 0] and not any(r.failed for r in ros)
    cfg = GRPOConfig(group_size=3, prompts_per_step=1)
    recall_rows, recall_stats = rollouts_to_rows([ex], ros, RECALL, cfg)
    paper_rows, _ = rollouts_to_rows([ex], ros, YARDSTICK, cfg)
    covs = np.array([score(ex, r.calls)["cov"] for r in ros])
    np.testing.assert_array_equal(covs, [1.0, 1.0, 0.0])
    np.testing.assert_allclose([r.advantage for r in recall_rows], ADVANTAGES.get("grpo")(covs), rtol=1e-12)
    assert recall_rows[0].advantage == recall_rows[1].advantage > recall_rows[2].advantage
    assert paper_rows[0].advantage > paper_rows[1].advantage > paper_rows[2].advantage
    assert recall_stats["reward"] == pytest.approx(2 / 3)  # the logged reward is the run's: mean coverage


def test_grpo_snapshots_end_states_only_for_the_state_term(world: SimpleNamespace) -> None:
    w, ex = world, world.vehicle
    scripts = [lambda: ScriptedPolicy.gold(ex, w.tpl, w.tok), lambda: saying_done(w.tpl, w.tok)]
    paper = grpo_rollouts(w, RewardConfig(), scripts, ex)
    assert [r.final_state for r in paper] == [None, None]  # nothing reads them: none taken
    with_state = grpo_rollouts(w, variant("final_state"), scripts, ex)
    assert all(set(r.final_state or ()) == {"vehicle"} for r in with_state)
    assert with_state[0].final_state != with_state[1].final_state  # the gold drive changed the car


def run_eval(w: SimpleNamespace, reward: RewardConfig | None, cfg: EvalConfig) -> dict[str, Any]:
    """The in-domain eval of a scripted model: balances with a junk call, vehicle gold, abstention
    answered without a call."""
    examples = [w.balances, w.vehicle, w.abstain]
    scripts = {sample_seed(0, "bank-balances", 0): lambda: gold_plus_junk(w.balances, w.tpl, w.tok),
               sample_seed(0, "vehicle-drive", 0): lambda: ScriptedPolicy.gold(w.vehicle, w.tpl, w.tok),
               sample_seed(0, "abstain-joke", 0): lambda: saying_done(w.tpl, w.tok)}

    async def go() -> dict[str, Any]:
        async with MCPPool.from_spec(["banking", "vehicle"], "inprocess") as pool:
            kw = {} if reward is None else {"reward": reward}
            return await evaluate(ScriptedEngine(lambda seed: scripts[seed]()), pool, examples, w.tpl,  # type: ignore[arg-type]
                                  w.tok, EPISODE, cfg, seed=0, **kw)

    return asyncio.run(go())


def test_eval_scores_on_the_yardstick_and_reports_the_runs_reward(world: SimpleNamespace) -> None:
    cfg = EvalConfig(max_new_tokens=512)
    plain, recall = run_eval(world, None, cfg), run_eval(world, RECALL, cfg)
    tool = recall["tool"]
    assert tool["n"] == 2 and recall["no_call"]["n"] == 1
    # `reward` is the paper's whatever the run trained on ...
    assert tool["reward"] == plain["tool"]["reward"]
    paper = sum(DEFAULT_WEIGHTS[c] * tool[c] for c in PAPER_COMPONENTS)
    assert tool["reward"] == pytest.approx(paper) and tool["reward"] < 1.3  # the junk call costs val and name
    assert tool["cov"] == 1.0 and tool["final_state_match"] == 1.0  # balances read nothing in; drive is gold
    # ... and `train_reward` the run's own (recall-only: coverage), only where it differs
    assert tool["train_reward"] == tool["cov"] == 1.0
    assert recall["no_call"]["train_reward"] == recall["no_call"]["reward"] == 1.0  # abstention rule in both
    assert "train_reward" not in plain["tool"] and "train_reward" not in plain["no_call"]
    assert list(tool)[:4] == ["n", "reward", "reward_se", "train_reward"]
    assert {k: v for k, v in tool.items() if k != "train_reward"} == plain["tool"]
    assert recall["samples"] == plain["samples"]  # the samples' reward is the yardstick's too


def test_eval_takes_end_states_for_a_state_reward_without_final_state_match(world: SimpleNamespace) -> None:
    """``eval.final_state=false`` and a run whose reward has the ``state`` term: the eval still
    snapshots (the run's reward reads them) but reports no final-state match."""
    res = run_eval(world, variant("final_state"), EvalConfig(max_new_tokens=512, final_state=False))
    tool = res["tool"]
    assert tool["final_state_match"] is None
    # both end in the gold replay's state (state term 1, weight 0.5): without the end states it would be 0
    assert tool["train_reward"] == pytest.approx(tool["reward"] + 0.5)


def test_launcher_evaluates_an_ablation_on_the_yardstick(run_copy: Path) -> None:
    """``reward.variant=recall_only``: the eval stage scores every model on the paper's reward and
    on the run's; both reach eval/<model>.json, eval/summary.json, the printed table and report.md."""
    from prove_jax.launch import eval_table, main
    from tests.rl.conftest import base_overrides

    main([*base_overrides(run_copy), "stages=[eval]", "reward.variant=recall_only", "eval.limit=3",
          "eval.max_new_tokens=24"])
    table = json.loads((run_copy / "eval" / "summary.json").read_text())
    assert list(table) == ["initial", "sft"]
    for name, row in table.items():
        tool = json.loads((run_copy / "eval" / f"{name}.json").read_text())["tool"]
        assert tool["train_reward"] == pytest.approx(tool["cov"])  # recall-only = coverage
        assert tool["reward"] == pytest.approx(sum(DEFAULT_WEIGHTS[c] * tool[c] for c in PAPER_COMPONENTS))
        assert row["tool_train_reward"] == tool["train_reward"] and row["tool_reward"] == tool["reward"]
    lines = eval_table(table)
    assert "train reward" in lines[1] and any(line.strip().startswith("train reward:") for line in lines)
    assert "train_reward" in (run_copy / "eval" / "report.md").read_text()
