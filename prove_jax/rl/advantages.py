"""Advantage estimators over GRPO groups: pure functions of the rewards, by name.

A per-group estimator (:data:`ADVANTAGES`) maps the rewards ``r[0..G-1]`` of the G samples of one
prompt to one advantage per sample (the same value for every token of that sample):

* ``grpo``    — ``(r - mean) / (std + eps)``; std with ``ddof=1`` as verl/TRL compute it (the
  paper trained with verl);
* ``dr_grpo`` — ``r - mean`` (Dr. GRPO: the std division re-weights easy and hard prompts and is
  dropped; pair it with the ``seq_sum_token_norm`` aggregation);
* ``rloo``    — ``r_i - mean_{j != i} r_j`` = ``G / (G - 1) * (r_i - mean)`` (leave-one-out).

A batch-level estimator (:data:`BATCH_ADVANTAGES`) needs every group of the step at once:

* ``reinforce_pp`` — REINFORCE++-baseline: ``(r - group mean) / (std + eps)`` with the std
  (``ddof=1``) of those centred rewards over every row of the batch, not per group. The group
  mean is the baseline (per prompt); the batch std only sets the scale, so a prompt whose samples
  differ little keeps small advantages instead of being blown up to unit scale as GRPO's per-group
  std does (the difficulty bias Dr. GRPO removes), while the step's advantages stay at unit scale
  whatever the reward's range. verl and OpenRLHF whiten over tokens (each row weighted by its
  length, then re-centred); here the std is over rows, as every estimator here is per sequence.

A group whose rewards are all equal carries no signal: every estimator gives it zero advantage.
:func:`group_advantages` then either drops it from the batch (``drop_constant=True``: no compute
spent on rows with zero gradient) or keeps it (its rows still count in the loss denominators and
the KL term). For ``reinforce_pp`` the batch std is over the rows that stay in the batch: a
dropped group's rows are not in it, a kept constant group's zeros are. Per-component (GDPO) normalisation happens before this, in
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
BATCH_ADVANTAGES = Registry("batch advantage estimator")
"""Estimators over the whole batch: ``fn(groups, eps) -> one array per group``."""

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


@BATCH_ADVANTAGES.register("reinforce_pp")
def reinforce_pp(groups: Sequence[np.ndarray], eps: float = 1e-6) -> list[np.ndarray]:
    """Group-mean baseline, batch-std scale (REINFORCE++-baseline; see the module docstring)."""
    centred = [np.asarray(g, np.float64) - np.mean(g) for g in groups]
    flat = np.concatenate(centred) if centred else np.zeros(0)
    if flat.size < 2:
        return [np.zeros_like(c) for c in centred]
    std = float(flat.std(ddof=1))
    return [c / (std + eps) for c in centred]


def estimator_names() -> list[str]:
    """Every advantage estimator a config may name (per-group and batch-level)."""
    return sorted([*ADVANTAGES.names(), *BATCH_ADVANTAGES.names()])


def check_estimator(name: str) -> None:
    """Raise ``KeyError`` naming the choices unless ``name`` is an estimator: a config checks
    this at load time, not after the first step's rollouts."""
    if name not in ADVANTAGES and name not in BATCH_ADVANTAGES:
        raise KeyError(f"unknown advantage estimator {name!r}; choose from {estimator_names()}")


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
    a constant group gets exact zeros (not ``0 / eps`` noise) and stays in the batch. A
    batch-level estimator sees the groups that stay in the batch (constant ones as their zeros).
    """
    check_estimator(estimator)
    rs = [np.asarray(g, np.float64) for g in groups]
    constant = [is_constant(r) for r in rs]
    out: list[np.ndarray | None] = [None] * len(rs)
    kept = [i for i, c in enumerate(constant) if not (c and drop_constant)]
    if estimator in BATCH_ADVANTAGES:
        # a kept constant group enters as exact zeros (a spread below CONSTANT_TOL is no signal),
        # so it comes back as exact zeros and adds zeros to the batch std
        advs = BATCH_ADVANTAGES.get(estimator)([np.zeros_like(rs[i]) if constant[i] else rs[i] for i in kept], eps)
    else:
        fn = ADVANTAGES.get(estimator)
        advs = [np.zeros_like(rs[i]) if constant[i] else fn(rs[i], eps) for i in kept]
    for i, a in zip(kept, advs, strict=True):
        out[i] = np.asarray(a, np.float64)
    return out, sum(constant)
