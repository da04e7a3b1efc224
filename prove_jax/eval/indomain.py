"""In-domain evaluation: greedy episodes on held-out Example records against the live servers.

Reported separately for examples that need tools (``conversation``, ``clarification``) and for
no-call examples (``abstention``, ``irrelevance``): an untrained model already scores 1 on the
latter by saying nothing, so a single mean would flatter it. Per group and per kind:

* ``reward`` (``reward_se``: the standard error of that mean) and each component under
  :data:`YARDSTICK`, the paper's reward, whatever reward a run trained on; ``train_reward`` —
  the run's own reward (``evaluate(..., reward=)``), only when that differs from the yardstick
  (an ablation such as ``reward.variant=recall_only``);
* ``success`` (and ``success_se``) — tool examples: every gold call matched with all its
  argument values (``cov == arg == 1``) within the call budget (``eff == 0``); no-call
  examples: no call made;
* ``parsed_call_fraction`` — assistant turns containing at least one parsed ``<tool_call>``;
* ``calls_per_episode``, ``tool_error_rate`` (calls not executed successfully);
* ``final_state_match`` — the servers' end state equals the gold replay's (snapshots compared
  after the same seed; the gold trajectory is replayed with the scripted policy).

Rollouts are scored by :func:`prove_jax.rewards.score_rollouts`, the function GRPO scores its
groups with, here once per reward config (each greedy rollout is a group of one).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from prove_jax.chat import ChatTemplate, ChatTokenizer
from prove_jax.engine import Engine, SamplingConfig
from prove_jax.env import EpisodeConfig, MCPPool, ScriptedPolicy, run_episode, run_rollouts
from prove_jax.eval.config import EvalConfig
from prove_jax.eval.stats import mean_se
from prove_jax.records import NO_CALL_KINDS, TOOL_KINDS, Example, Rollout
from prove_jax.rewards import PAPER_COMPONENTS, RewardConfig, score_rollouts, state_agreement

YARDSTICK = RewardConfig()
"""The paper's reward: the common yardstick every run is evaluated on, whatever it trained on, so
runs with different rewards (the ablations) are compared on one scale. ``reward`` and its
components in a summary are always this; a run's own reward is ``train_reward`` beside it."""


@dataclasses.dataclass(frozen=True)
class Scored:
    """One greedy rollout with what the eval reads of it.

    ``reward``: the :data:`YARDSTICK` scores (``total`` and the components); ``train_reward``: the
    run's own reward total when its config differs from the yardstick (un-normalised: a greedy
    rollout has no group), else ``None``; ``state_match``: the servers ended in the gold replay's
    state (``None``: not compared)."""

    rollout: Rollout
    reward: Mapping[str, float]
    train_reward: float | None = None
    state_match: bool | None = None


def success(rollout: Rollout, comps: Mapping[str, float]) -> bool:
    """``rollout`` solved its example, judged on its yardstick components ``comps``."""
    if rollout.kind in NO_CALL_KINDS or not rollout.n_gold_calls:
        return not rollout.calls
    return comps["cov"] >= 1.0 and comps["arg"] >= 1.0 and comps["eff"] >= 0.0


def score_eval(examples: Sequence[Example], rollouts: Sequence[Rollout],
               reward: RewardConfig = YARDSTICK,
               gold_states: Sequence[Mapping[str, Any] | None] | None = None) -> list[Scored]:
    """Score each rollout (``examples[i]``'s) on the yardstick and, when ``reward`` differs from
    it, on the run's own reward; ``gold_states`` (the gold replays' end states) feed a ``state``
    term and the final-state match (compared only where both end states exist)."""
    own = reward if reward != YARDSTICK else None
    golds = list(gold_states) if gold_states is not None else [None] * len(rollouts)
    out = []
    for ex, r, g in zip(examples, rollouts, golds, strict=True):
        yard = score_rollouts(ex, [r], YARDSTICK, gold_final_state=g)[0]
        train = None
        if own is not None:
            s = score_rollouts(ex, [r], own, gold_final_state=g)[0]
            train = float(s.get("total_raw", s["total"]))
        final = r.final_state
        match = None if final is None or g is None else state_agreement(final, g) >= 1.0
        out.append(Scored(r, yard, train, match))
    return out


def _turns_with_calls(rollout: Rollout) -> int:
    return len({c.assistant_turn for c in rollout.calls})


def summarize(scored: Sequence[Scored]) -> dict[str, Any]:
    """Aggregate metrics of a set of scored greedy rollouts (see the module docstring)."""
    if not scored:
        return {"n": 0}
    rollouts = [s.rollout for s in scored]
    n_calls = sum(len(r.calls) for r in rollouts)
    turns = sum(max(1, r.n_assistant_turns) for r in rollouts)
    matched = [s.state_match for s in scored if s.state_match is not None]
    reward, reward_se = mean_se([float(s.reward["total"]) for s in scored])
    succ, succ_se = mean_se([float(success(s.rollout, s.reward)) for s in scored])
    out: dict[str, Any] = {"n": len(rollouts), "reward": reward, "reward_se": reward_se}
    trained = [s.train_reward for s in scored if s.train_reward is not None]
    if trained:
        out["train_reward"] = float(np.mean(trained))
    out.update({
        **{c: float(np.mean([s.reward[c] for s in scored])) for c in PAPER_COMPONENTS},
        "success": succ, "success_se": succ_se,
        "parsed_call_fraction": sum(_turns_with_calls(r) for r in rollouts) / turns,
        "calls_per_episode": n_calls / len(rollouts),
        "tool_error_rate": sum(1 for r in rollouts for c in r.calls if not c.executed_ok) / max(1, n_calls),
        "parse_errors_per_episode": sum(len(r.parse_errors) for r in rollouts) / len(rollouts),
        "final_state_match": float(np.mean(matched)) if matched else None,
        "failed_episodes": sum(1 for r in rollouts if r.failed),
        "gold_calls_per_episode": sum(r.n_gold_calls for r in rollouts) / len(rollouts),
    })
    return out


def needs_end_states(cfg: EvalConfig, reward: RewardConfig = YARDSTICK) -> bool:
    """Whether the eval reads the servers' end states (rollouts' snapshots and the gold replays'):
    for the final-state match, or for a run whose own reward has the ``state`` term."""
    return cfg.final_state or reward.reads_final_state


async def gold_final_states(examples: Sequence[Example], pool: MCPPool, template: ChatTemplate,
                            tokenizer: ChatTokenizer, episode: EpisodeConfig) -> list[dict[str, Any] | None]:
    cfg = dataclasses.replace(episode, snapshots=True, max_tokens=10**9)
    ros = await asyncio.gather(*(run_episode(ex, ScriptedPolicy.gold(ex, template, tokenizer), pool, template,
                                             tokenizer, cfg) for ex in examples))
    return [r.final_state for r in ros]


async def evaluate(engine: Engine, pool: MCPPool, examples: Sequence[Example], template: ChatTemplate,
                   tokenizer: ChatTokenizer, episode: EpisodeConfig, cfg: EvalConfig, *, seed: int = 0,
                   gold_states: Sequence[dict[str, Any] | None] | None = None,
                   reward: RewardConfig = YARDSTICK) -> dict[str, Any]:
    """Greedy episodes of every example; returns ``{"tool": ..., "no_call": ..., "by_kind": ...}``.

    ``engine`` must be running (``async with engine``) with the params to evaluate.
    ``gold_states`` (:func:`gold_final_states` of ``examples``) saves replaying the gold
    trajectories again when several models are evaluated on the same examples. ``reward`` is
    the run's own reward config: scored beside the :data:`YARDSTICK` (``train_reward``) when it
    differs from it, never instead of it.
    """
    end_states = needs_end_states(cfg, reward)
    ep_cfg = dataclasses.replace(episode, snapshots=end_states)
    sampling = SamplingConfig(temperature=0.0, max_new_tokens=cfg.max_new_tokens)
    rollouts = await run_rollouts(engine, pool, examples, template, tokenizer, n_samples=1, sampling=sampling,
                                  config=ep_cfg, seed=seed)
    gold = None
    if end_states:
        gold = gold_states if gold_states is not None else await gold_final_states(examples, pool, template,
                                                                                   tokenizer, episode)
    scored = score_eval(examples, rollouts, reward, gold)
    if not cfg.final_state:  # end states taken for the reward's ``state`` term only: no match reported
        scored = [dataclasses.replace(s, state_match=None) for s in scored]

    def pick(kinds: Sequence[str]) -> list[Scored]:
        return [s for s in scored if s.rollout.kind in kinds]

    kinds = sorted({r.kind for r in rollouts})
    return {
        "tool": summarize(pick(TOOL_KINDS)),
        "no_call": summarize(pick(NO_CALL_KINDS)),
        "by_kind": {k: summarize(pick((k,))) for k in kinds},
        "n_examples": len(rollouts),
        # per tool example, for paired comparisons of models evaluated on the same examples
        "tool_rewards": {s.rollout.example_id: float(s.reward["total"]) for s in pick(TOOL_KINDS)},
        "samples": [_sample(s) for s in scored[:3]],
    }


def _sample(s: Scored) -> dict[str, Any]:
    r = s.rollout
    return {"example_id": r.example_id, "kind": r.kind, "reward": float(s.reward["total"]),
            "calls": [{"name": c.name, "arguments": c.arguments, "executed_ok": c.executed_ok}
                      for c in r.calls[:6]], "finish": r.finish}
