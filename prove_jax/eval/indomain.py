"""In-domain evaluation: greedy episodes on held-out Example records against the live servers.

Reported separately for examples that need tools (``conversation``, ``clarification``) and for
no-call examples (``abstention``, ``irrelevance``): an untrained model already scores 1 on the
latter by saying nothing, so a single mean would flatter it. Per group and per kind:

* ``reward`` and each component (the paper's reward, whatever reward a run trained on);
* ``success`` — tool examples: every gold call matched with all its argument values
  (``cov == arg == 1``) within the call budget (``eff == 0``); no-call examples: no call made;
* ``parsed_call_fraction`` — assistant turns containing at least one parsed ``<tool_call>``;
* ``calls_per_episode``, ``tool_error_rate`` (calls not executed successfully);
* ``final_state_match`` — the servers' end state equals the gold replay's (snapshots compared
  after the same seed; the gold trajectory is replayed with the scripted policy).
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
from prove_jax.eval.suite import BenchmarksConfig
from prove_jax.rewards import state_agreement

TOOL_KINDS = ("conversation", "clarification")
NO_CALL_KINDS = ("abstention", "irrelevance")
COMPONENTS = ("val", "cov", "eff", "name", "arg")


def success(rollout: Mapping[str, Any]) -> bool:
    comps = rollout["reward_components"]
    if rollout.get("kind") in NO_CALL_KINDS or not rollout.get("n_gold_calls"):
        return not rollout["calls"]
    return comps["cov"] >= 1.0 and comps["arg"] >= 1.0 and comps["eff"] >= 0.0


def _turns_with_calls(rollout: Mapping[str, Any]) -> int:
    return len({c.get("assistant_turn") for c in rollout["calls"]})


def summarize(rollouts: Sequence[Mapping[str, Any]], state_match: Sequence[bool | None]) -> dict[str, Any]:
    """Aggregate metrics of a set of greedy rollouts (see the module docstring)."""
    if not rollouts:
        return {"n": 0}
    n_calls = sum(len(r["calls"]) for r in rollouts)
    turns = sum(max(1, r["n_assistant_turns"]) for r in rollouts)
    matched = [m for m in state_match if m is not None]
    out: dict[str, Any] = {
        "n": len(rollouts),
        "reward": float(np.mean([r["reward"] for r in rollouts])),
        **{c: float(np.mean([r["reward_components"][c] for r in rollouts])) for c in COMPONENTS},
        "success": float(np.mean([success(r) for r in rollouts])),
        "parsed_call_fraction": sum(_turns_with_calls(r) for r in rollouts) / turns,
        "calls_per_episode": n_calls / len(rollouts),
        "tool_error_rate": sum(1 for r in rollouts for c in r["calls"] if not c["executed_ok"]) / max(1, n_calls),
        "parse_errors_per_episode": sum(len(r["parse_errors"]) for r in rollouts) / len(rollouts),
        "final_state_match": float(np.mean(matched)) if matched else None,
        "failed_episodes": sum(1 for r in rollouts if r["failed"]),
        "gold_calls_per_episode": sum(r.get("n_gold_calls") or 0 for r in rollouts) / len(rollouts),
    }
    return out


@dataclasses.dataclass(frozen=True)
class EvalConfig:
    """The in-domain eval (launcher ``eval:`` section; ``eval indomain`` / ``eval all`` flags)."""

    split: str = "test"  # held-out split of the dataset
    limit: int | None = None  # at most this many held-out examples (None: the whole split)
    max_new_tokens: int = 512  # per assistant turn (greedy)
    final_state: bool = True  # compare the servers' end state with the gold replay's (final_state_match)
    # external benchmarks run by the launcher's eval stage for every model (prove_jax.eval.suite)
    benchmarks: BenchmarksConfig = dataclasses.field(default_factory=BenchmarksConfig)


async def gold_final_states(examples: Sequence[Mapping[str, Any]], pool: MCPPool, template: ChatTemplate,
                            tokenizer: ChatTokenizer, episode: EpisodeConfig) -> list[dict[str, Any] | None]:
    cfg = dataclasses.replace(episode, snapshots=True, score=False, max_tokens=10**9)
    ros = await asyncio.gather(*(run_episode(ex, ScriptedPolicy.gold(ex, template, tokenizer), pool, template,
                                             tokenizer, cfg) for ex in examples))
    return [r["final_state"] for r in ros]


async def evaluate(engine: Engine, pool: MCPPool, examples: Sequence[Mapping[str, Any]], template: ChatTemplate,
                   tokenizer: ChatTokenizer, episode: EpisodeConfig, cfg: EvalConfig, *, seed: int = 0,
                   gold_states: Sequence[dict[str, Any] | None] | None = None) -> dict[str, Any]:
    """Greedy episodes of every example; returns ``{"tool": ..., "no_call": ..., "by_kind": ...}``.

    ``engine`` must be running (``async with engine``) with the params to evaluate.
    ``gold_states`` (:func:`gold_final_states` of ``examples``) saves replaying the gold
    trajectories again when several models are evaluated on the same examples.
    """
    ep_cfg = dataclasses.replace(episode, score=True, snapshots=cfg.final_state)
    sampling = SamplingConfig(temperature=0.0, max_new_tokens=cfg.max_new_tokens)
    rollouts = await run_rollouts(engine, pool, examples, template, tokenizer, n_samples=1, sampling=sampling,
                                  config=ep_cfg, seed=seed)
    if cfg.final_state:
        gold = gold_states if gold_states is not None else await gold_final_states(examples, pool, template,
                                                                                   tokenizer, episode)
        match: list[bool | None] = [None if r["final_state"] is None or g is None
                                    else state_agreement(r["final_state"], g) >= 1.0
                                    for r, g in zip(rollouts, gold, strict=True)]
    else:
        match = [None] * len(rollouts)

    def pick(kinds: Sequence[str]) -> tuple[list[Mapping[str, Any]], list[bool | None]]:
        idx = [i for i, r in enumerate(rollouts) if r.get("kind") in kinds]
        return [rollouts[i] for i in idx], [match[i] for i in idx]

    kinds = sorted({str(r.get("kind")) for r in rollouts})
    return {
        "tool": summarize(*pick(TOOL_KINDS)),
        "no_call": summarize(*pick(NO_CALL_KINDS)),
        "by_kind": {k: summarize(*pick((k,))) for k in kinds},
        "n_examples": len(rollouts),
        "samples": [_sample(r) for r in rollouts[:3]],
    }


def _sample(r: Mapping[str, Any]) -> dict[str, Any]:
    return {"example_id": r["example_id"], "kind": r.get("kind"), "reward": r["reward"],
            "calls": [{"name": c["name"], "arguments": c["arguments"], "executed_ok": c["executed_ok"]}
                      for c in r["calls"][:6]], "finish": r["finish"]}
