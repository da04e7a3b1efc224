"""Dynamic sampling (DAPO): refill a GRPO step until it holds enough informative groups.

A group whose rewards are all equal has zero advantage everywhere and teaches nothing; neither
does one whose episodes mostly failed. Dropping them (``drop_constant_groups``) can leave a step
with few or no groups to learn from, and as the policy improves more prompts become all-solved.
With ``GRPOConfig.dynamic_sampling``, :func:`refill` draws more prompts from the loader, rolls
them out and scores them, round after round, until the step holds ``target`` informative groups
(``target``: this process's prompts per step) or ``max_rounds`` refill rounds were spent; then
the step trains on at most ``target`` informative groups.

Which groups the update sees: every group drawn (constant and failed ones included, so the
step's statistics - reward, constant and failed counts - describe everything sampled, and
``drop_constant_groups`` still decides whether constant ones enter the loss), except the
informative groups beyond the first ``target`` (only the last round can overshoot): those are
set aside as *surplus* (dumped, not trained on), so no step trains on more informative groups
than a full batch.

Termination: each round draws one loader batch and counts, whatever it yields, so at most
``max_rounds`` extra batches are drawn per step. A prompt whose example is already in the step
(a small dataset wraps around within one step) is drawn but not rolled out again
(``resampled_duplicates``): two groups with one ``group_id`` would be scored as one.

Resume: the refill draws through the same loader iterator (``next(loader)``), and the loop
reads ``loader.get_state()`` for a step's checkpoint only once that step's batch, refills
included, is complete; a resumed run so continues after the last prompt the step consumed and
neither repeats nor skips a refill's prompts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

from prove_jax.records import Example, Rollout
from prove_jax.rewards import RewardConfig, score_rollouts
from prove_jax.rl.advantages import is_constant
from prove_jax.rl.dump import RolloutScore

REFILL_COUNTS = ("resampled_prompts", "resampled_duplicates", "refill_rounds", "informative_groups",
                 "surplus_groups")
"""The step metrics a refill adds (counts: summed over processes)."""


def informative_groups(examples: Sequence[Example], rollouts: Sequence[Rollout], reward: RewardConfig,
                       scored: MutableMapping[Rollout, RolloutScore] | None = None) -> list[str]:
    """The ids of the groups that would get a non-zero advantage: at least two live (non-failed)
    episodes whose totals are not all equal (the rule ``rollouts_to_rows`` applies). The scores
    computed go into ``scored`` (advantage ``None``) when given, for the dump."""
    by_group: dict[str, list[Rollout]] = {}
    for r in rollouts:
        by_group.setdefault(r.group_id, []).append(r)
    out = []
    for ex in examples:
        live = [r for r in by_group.get(ex.id, []) if not r.failed]
        if len(live) < 2:
            continue
        scores = score_rollouts(ex, live, reward)
        if scored is not None:
            scored.update((r, RolloutScore(s)) for r, s in zip(live, scores, strict=True))
        if not is_constant([s["total"] for s in scores]):
            out.append(ex.id)
    return out


@dataclasses.dataclass
class Refill:
    """What one step's refill did, and the groups it set aside."""

    rounds: int = 0
    resampled: int = 0
    duplicates: int = 0
    informative: int = 0
    round_of: dict[str, int] = dataclasses.field(default_factory=dict)  # example id -> round drawn in
    surplus: list[tuple[Example, list[Rollout]]] = dataclasses.field(default_factory=list)

    def metrics(self) -> dict[str, float]:
        values = (self.resampled, self.duplicates, self.rounds, self.informative, len(self.surplus))
        return {k: float(v) for k, v in zip(REFILL_COUNTS, values, strict=True)}


Generate = Callable[[list[Example]], Awaitable[dict[str, Any]]]
"""Rollouts of some prompts: a batch dict with ``rollouts``, ``wall``, ``device``, ``generated``."""


async def refill(batch: dict[str, Any], draw: Callable[[], list[Example]], generate: Generate,
                 reward: RewardConfig, *, target: int, max_rounds: int) -> dict[str, Any]:
    """``batch`` (a step's rollouts: ``examples``, ``rollouts``, ``scored``, timings) refilled
    until it holds ``target`` informative groups or ``max_rounds`` rounds were drawn (see the
    module docstring). Returns the step's batch: the groups to train on, timings summed over all
    rounds, and ``refill`` (a :class:`Refill`)."""
    scored: dict[Rollout, RolloutScore] = batch.setdefault("scored", {})
    examples, rollouts = list(batch["examples"]), list(batch["rollouts"])
    wall, device, generated = batch["wall"], batch["device"], batch["generated"]
    info = Refill(round_of={e.id: 0 for e in examples})
    good = informative_groups(examples, rollouts, reward, scored)
    while len(good) < target and info.rounds < max_rounds:
        info.rounds += 1
        fresh = []
        for ex in draw():
            if ex.id in info.round_of:
                info.duplicates += 1
                continue
            info.round_of[ex.id] = info.rounds
            fresh.append(ex)
        if not fresh:
            continue
        more = await generate(fresh)
        info.resampled += len(fresh)
        examples += fresh
        rollouts += more["rollouts"]
        wall, device, generated = wall + more["wall"], device + more["device"], generated + more["generated"]
        good += informative_groups(fresh, more["rollouts"], reward, scored)
    extra = set(good[target:])
    info.informative = len(good) - len(extra)
    kept = [e for e in examples if e.id not in extra]
    info.surplus = [(e, [r for r in rollouts if r.group_id == e.id]) for e in examples if e.id in extra]
    return {**batch, "examples": kept, "rollouts": [r for r in rollouts if r.group_id not in extra],
            "wall": wall, "device": device, "generated": generated, "scored": scored, "refill": info}
