"""Public scoring entry points: one rollout (:func:`score`) or a GRPO group (:func:`score_group`).

Both are pure (no I/O, no env/engine/server imports). ``score(example, calls, config=None)``
returns a flat ``dict[str, float]``::

    total       weighted sum (Eq. 5) of the enabled components — or, for an abstention example
                (no gold call), the abstention reward itself: 1 if no call was made, else 0
    val cov eff name arg
                the five paper components, always reported (also when switched off in the total)
                so ablation runs still log and plot them
    abstain     the abstention reward (only meaningful where is_abstention == 1; 0 otherwise)
    state       final-state agreement — present only when enabled or snapshots were given
    <custom>    any other enabled registry component
    is_abstention, n_calls, n_gold, budget
                bookkeeping for logs (floats, so a whole dict converts to arrays)
    total_raw   present when ``group_normalize`` is on: the un-normalised weighted sum

For abstention examples the other components are still reported (R_val and R_name of the calls
made, R_cov = R_eff = R_arg = 0 since there is no gold), but they do not enter the total.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from prove_jax.records import CallRecord, Example, Rollout
from prove_jax.rewards.components import REGISTRY, ComponentFn, analyse, budget
from prove_jax.rewards.config import PAPER_COMPONENTS, RewardConfig
from prove_jax.rewards.plan import ExamplePlan, prepare

_DEFAULT = RewardConfig()
_Resolved = tuple[tuple[tuple[str, ComponentFn], ...], tuple[tuple[str, float], ...]]


def _as_config(config: RewardConfig | Mapping[str, Any] | None) -> RewardConfig:
    if config is None:
        return _DEFAULT
    if isinstance(config, RewardConfig):
        return config
    return RewardConfig.from_dict(config)


def _resolve(cfg: RewardConfig, with_state: bool) -> _Resolved:
    """(components to compute, (name, weight) pairs summed into the total) for ``cfg``."""
    names = list(PAPER_COMPONENTS)
    for name in cfg.components:
        if name not in names:
            names.append(name)
    if with_state and "state" not in names:
        names.append("state")
    report = tuple((name, REGISTRY.get(name)) for name in names)
    weighted = tuple((name, cfg.weights[name]) for name in cfg.components)
    return report, weighted


def _score_one(
    plan: ExamplePlan,
    calls: Sequence[Any] | None,
    cfg: RewardConfig,
    resolved: _Resolved,
    final_state: Mapping[str, Any] | None,
    gold_final_state: Mapping[str, Any] | None,
) -> dict[str, float]:
    if not isinstance(calls, Sequence) or isinstance(calls, str | bytes):
        # A generator/iterator of calls is materialised; anything else (None, a dict...) is no call.
        calls = list(calls) if isinstance(calls, Iterator) else ()
    ep = analyse(plan, calls)
    ep.final_state = final_state
    ep.gold_final_state = gold_final_state
    report, weighted = resolved
    out: dict[str, float] = {"total": 0.0}
    for name, fn in report:
        out[name] = fn(plan, ep, cfg)
    if plan.is_abstention:
        total = 1.0 if ep.n_calls == 0 else 0.0
        out["abstain"] = total
    else:
        out["abstain"] = 0.0
        total = 0.0
        for name, weight in weighted:
            total += weight * out[name]
    out["total"] = total
    if cfg.group_normalize:
        out["total_raw"] = total
    out["is_abstention"] = 1.0 if plan.is_abstention else 0.0
    out["n_calls"] = float(ep.n_calls)
    out["n_gold"] = float(plan.n_gt)
    out["budget"] = float(budget(plan.n_gt, cfg.beta))
    return out


def score(
    example: Example | Mapping[str, Any] | ExamplePlan,
    calls: Sequence[CallRecord | Mapping[str, Any]],
    config: RewardConfig | Mapping[str, Any] | None = None,
    *,
    final_state: Mapping[str, Any] | None = None,
    gold_final_state: Mapping[str, Any] | None = None,
) -> dict[str, float]:
    """Score one rollout against its Example record (prove_paper.md §3; keys in the module doc).

    Args:
        example: the Example record (Contract 2: a :class:`prove_jax.records.Example` or its dict)
            or a prepared :class:`ExamplePlan`. Its plan is cached by identity, so scoring many
            rollouts of one record is cheap.
        calls: the Rollout's calls in order across turns: :class:`prove_jax.records.CallRecord` records
            or dicts with ``name``, ``arguments`` (dict), ``executed_ok``; ``parsed_ok`` /
            ``schema_ok`` / ``turn`` / ``result`` optional (``parsed_ok: False`` fails level 2; the
            others are not read). Malformed entries never raise.
        config: a :class:`RewardConfig`, a plain dict for :meth:`RewardConfig.from_dict`, or
            ``None`` for the paper's reward.
        final_state / gold_final_state: ``{server: snapshot}`` maps for the optional ``state``
            term (the rollout's end state and the gold replay's end state).
    """
    cfg = _as_config(config)
    with_state = final_state is not None or gold_final_state is not None
    return _score_one(prepare(example), calls, cfg, _resolve(cfg, with_state), final_state, gold_final_state)


def score_group(
    example: Example | Mapping[str, Any] | ExamplePlan,
    group: Sequence[Sequence[CallRecord | Mapping[str, Any]]],
    config: RewardConfig | Mapping[str, Any] | None = None,
    *,
    final_states: Sequence[Mapping[str, Any] | None] | None = None,
    gold_final_state: Mapping[str, Any] | None = None,
) -> list[dict[str, float]]:
    """Score every rollout of one GRPO group (same example): one plan, one config resolution.

    With ``config.group_normalize`` (GDPO-style), each enabled component is z-scored across the
    group, ``(x - mean) / (std + norm_eps)`` with the population std, and ``total`` becomes the
    weighted sum of those z-scores (a component constant over the group contributes 0);
    ``total_raw`` keeps the un-normalised sum and the component values stay raw. For an
    abstention example the normalised quantity is ``abstain`` (weight 1).
    """
    cfg = _as_config(config)
    if final_states is not None and len(final_states) != len(group):
        raise ValueError(f"final_states has {len(final_states)} entries for a group of {len(group)}")
    plan = prepare(example)
    with_state = final_states is not None or gold_final_state is not None
    resolved = _resolve(cfg, with_state)
    results = [
        _score_one(plan, calls, cfg, resolved, final_states[i] if final_states is not None else None,
                   gold_final_state)
        for i, calls in enumerate(group)
    ]
    if cfg.group_normalize and results:
        _normalise(results, [("abstain", 1.0)] if plan.is_abstention else list(resolved[1]), cfg.norm_eps)
    return results


def _normalise(results: list[dict[str, float]], weighted: list[tuple[str, float]], eps: float) -> None:
    totals = [0.0] * len(results)
    n = len(results)
    for name, weight in weighted:
        values = [r[name] for r in results]
        mean = sum(values) / n
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / n)
        for i, v in enumerate(values):
            totals[i] += weight * (v - mean) / (std + eps)
    for r, t in zip(results, totals, strict=True):
        r["total"] = t


def score_rollouts(
    example: Example | Mapping[str, Any] | ExamplePlan,
    rollouts: Sequence[Rollout | Mapping[str, Any]],
    config: RewardConfig | Mapping[str, Any] | None = None,
    *,
    gold_final_state: Mapping[str, Any] | None = None,
) -> list[dict[str, float]]:
    """:func:`score_group` over Rollout records (Contract 3: :class:`prove_jax.records.Rollout` records
    or dicts with ``calls`` and optionally ``final_state``): reads their calls and end states."""
    parts = [(r.calls, r.final_state) if isinstance(r, Rollout) else (r.get("calls") or (), r.get("final_state"))
             for r in rollouts]
    states = [s for _, s in parts]
    return score_group(
        example,
        [c for c, _ in parts],
        config,
        final_states=states if any(s is not None for s in states) else None,
        gold_final_state=gold_final_state,
    )
