"""Advantage estimators against hand-computed values; constant groups contribute nothing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from prove_jax.rl.advantages import ADVANTAGES, group_advantages


def test_grpo_is_mean_and_sample_std_normalised() -> None:
    r = np.array([1.0, 0.0, 0.5, 0.5])
    # mean 0.5; sample variance = (0.25 + 0.25 + 0 + 0) / 3 = 1/6
    std = math.sqrt(1 / 6)
    np.testing.assert_allclose(ADVANTAGES.get("grpo")(r, 0.0), [0.5 / std, -0.5 / std, 0.0, 0.0], rtol=1e-12)


def test_dr_grpo_only_centres() -> None:
    np.testing.assert_allclose(ADVANTAGES.get("dr_grpo")(np.array([0.2, 0.8, 0.5])), [-0.3, 0.3, 0.0], atol=1e-12)


def test_rloo_subtracts_the_mean_of_the_others() -> None:
    r = np.array([1.0, 0.0, 0.0, 0.5])
    # sample 0: 1 - (0 + 0 + 0.5)/3 = 5/6; sample 3: 0.5 - 1/3 = 1/6
    np.testing.assert_allclose(ADVANTAGES.get("rloo")(r), [5 / 6, -0.5, -0.5, 1 / 6], atol=1e-12)


def test_reinforce_pp_centres_per_group_and_scales_by_the_batch_std() -> None:
    groups = [np.array([1.0, 0.0, 0.5]), np.array([0.0, 0.0, 1.0])]
    # centred: group 1 (mean 1/2) -> [1/2, -1/2, 0]; group 2 (mean 1/3) -> [-1/3, -1/3, 2/3]
    # sum of squares over the 6 rows: 1/4 + 1/4 + 0 + 1/9 + 1/9 + 4/9 = 7/6; ddof=1 -> var = 7/6 / 5 = 7/30
    std = math.sqrt(7 / 30)
    advs, n_const = group_advantages(groups, "reinforce_pp", eps=0.0)
    assert n_const == 0
    np.testing.assert_allclose(advs[0], [0.5 / std, -0.5 / std, 0.0], rtol=1e-12)
    np.testing.assert_allclose(advs[1], [-1 / 3 / std, -1 / 3 / std, 2 / 3 / std], rtol=1e-12)
    # not per-group: GRPO would scale group 1 by its own std sqrt(1/4) = 1/2
    assert not np.allclose(advs[0], ADVANTAGES.get("grpo")(groups[0], 0.0))


def test_reinforce_pp_batch_std_counts_only_rows_left_in_the_batch() -> None:
    groups = [np.array([1.0, 0.0, 0.5]), np.array([0.3, 0.3, 0.3]), np.array([0.0, 0.0, 1.0])]
    dropped, n_const = group_advantages(groups, "reinforce_pp", drop_constant=True, eps=0.0)
    assert n_const == 1 and dropped[1] is None
    std6 = math.sqrt(7 / 6 / 5)  # the 6 rows of the two varying groups (previous test)
    np.testing.assert_allclose(dropped[0], [0.5 / std6, -0.5 / std6, 0.0], rtol=1e-12)
    kept, n_const = group_advantages(groups, "reinforce_pp", drop_constant=False, eps=0.0)
    assert n_const == 1 and kept[1] is not None and np.array_equal(kept[1], np.zeros(3))
    std9 = math.sqrt(7 / 6 / 8)  # the constant group's three zeros join: 9 rows, ddof=1
    np.testing.assert_allclose(kept[0], [0.5 / std9, -0.5 / std9, 0.0], rtol=1e-12)
    np.testing.assert_allclose(kept[2], [-1 / 3 / std9, -1 / 3 / std9, 2 / 3 / std9], rtol=1e-12)
    all_constant, n = group_advantages([np.array([1.0, 1.0])], "reinforce_pp", drop_constant=False)
    assert n == 1 and np.array_equal(all_constant[0], np.zeros(2))


@pytest.mark.parametrize("name", ["grpo", "dr_grpo", "rloo", "reinforce_pp"])
def test_constant_groups_are_dropped_or_zero(name: str) -> None:
    groups = [np.array([0.3, 0.3, 0.3]), np.array([0.0, 1.0, 0.0])]
    dropped, n_const = group_advantages(groups, name, drop_constant=True)
    assert n_const == 1 and dropped[0] is None and dropped[1] is not None
    kept, _ = group_advantages(groups, name, drop_constant=False)
    assert kept[0] is not None and np.array_equal(kept[0], np.zeros(3))  # exact zeros, not 0/eps noise
    if name in ADVANTAGES:  # per group: another group's fate cannot matter (reinforce_pp: tested above)
        np.testing.assert_allclose(kept[1], dropped[1])
    assert abs(float(np.sum(kept[1]))) < 1e-9  # every estimator is zero-mean over a group


def test_unknown_estimator_names_the_choices() -> None:
    with pytest.raises(KeyError, match=r"dr_grpo.*reinforce_pp"):
        group_advantages([np.array([0.0, 1.0])], "gae")
