"""Advantage estimators over GRPO groups: pure functions of one group's rewards, by name.

Every estimator maps the rewards ``r[0..G-1]`` of the G samples of one prompt to one advantage
per sample (the same value for every token of that sample):

* ``grpo``    — ``(r - mean) / (std + eps)``; std with ``ddof=1`` as verl/TRL compute it (the
  paper trained with verl);
* ``dr_grpo`` — ``r - mean`` (Dr. GRPO: the std division re-weights easy and hard prompts and is
  dropped; pair it with the ``seq_sum_token_norm`` aggregation);
* ``rloo``    — ``r_i - mean_{j != i} r_j`` = ``G / (G - 1) * (r_i - mean)`` (leave-one-out).

A group whose rewards are all equal carries no signal: every estimator gives it zero advantage.
:func:`group_advantages` then either drops it from the batch (``drop_constant=True``: no compute
spent on rows with zero gradient) or keeps it (its rows still count in the loss denominators and
the KL term). Per-component (GDPO) normalisation happens before this, in
:func:`prove_jax.rewards.score_group` with ``group_normalize``.

Designed-failure gold calls (``expect_error``) are deliberately left in the reward's n_gt and
coverage: they are the same for every sample of a prompt, so they shift all G rewards of a group
alike and the group normalisation here cancels them. They must not be "fixed" by removing them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from prove_jax.rl.registry import Registry

ADVANTAGES = Registry("advantage estimator")

CONSTANT_TOL = 1e-9
"""Rewards closer than this count as equal (a group with a spread below it is constant)."""


@ADVANTAGES.register("grpo")
def grpo(rewards: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    r = np.asarray(rewards, np.float64)
    if r.size < 2:
        return np.zeros_like(r)
    return (r - r.mean()) / (r.std(ddof=1) + eps)


@ADVANTAGES.register("dr_grpo")
def dr_grpo(rewards: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    r = np.asarray(rewards, np.float64)
    return r - r.mean()


@ADVANTAGES.register("rloo")
def rloo(rewards: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    r = np.asarray(rewards, np.float64)
    g = r.size
    if g < 2:
        return np.zeros_like(r)
    return (r - (r.sum() - r) / (g - 1)).astype(np.float64)


def is_constant(rewards: np.ndarray, tol: float = CONSTANT_TOL) -> bool:
    r = np.asarray(rewards, np.float64)
    return bool(r.size == 0 or float(r.max() - r.min()) <= tol)


def group_advantages(
    groups: Sequence[np.ndarray],
    estimator: str = "grpo",
    *,
    drop_constant: bool = True,
    eps: float = 1e-6,
) -> tuple[list[np.ndarray | None], int]:
    """Advantages of every group; ``None`` for a group dropped because its rewards are constant.

    Returns ``(per-group advantages, number of constant groups)``. With ``drop_constant=False``
    a constant group gets exact zeros (not ``0 / eps`` noise) and stays in the batch.
    """
    fn = ADVANTAGES.get(estimator)
    out: list[np.ndarray | None] = []
    constant = 0
    for rewards in groups:
        r = np.asarray(rewards, np.float64)
        if is_constant(r):
            constant += 1
            out.append(None if drop_constant else np.zeros_like(r))
        else:
            out.append(np.asarray(fn(r, eps), np.float64))
    return out, constant
