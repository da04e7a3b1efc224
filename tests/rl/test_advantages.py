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


@pytest.mark.parametrize("name", ["grpo", "dr_grpo", "rloo"])
def test_constant_groups_are_dropped_or_zero(name: str) -> None:
    groups = [np.array([0.3, 0.3, 0.3]), np.array([0.0, 1.0, 0.0])]
    dropped, n_const = group_advantages(groups, name, drop_constant=True)
    assert n_const == 1 and dropped[0] is None and dropped[1] is not None
    kept, _ = group_advantages(groups, name, drop_constant=False)
    assert kept[0] is not None and np.array_equal(kept[0], np.zeros(3))  # exact zeros, not 0/eps noise
    np.testing.assert_allclose(kept[1], dropped[1])
    assert abs(float(np.sum(kept[1]))) < 1e-9  # every estimator is zero-mean over a group


def test_unknown_estimator_names_the_choices() -> None:
    with pytest.raises(KeyError, match="dr_grpo"):
        group_advantages([np.array([0.0, 1.0])], "gae")
