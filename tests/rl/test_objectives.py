"""The objectives read the loss mask (only model-generated targets count) and SFT rows are filtered."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from prove_jax.models import init_model, sequence_logprobs
from prove_jax.records import Rollout
from prove_jax.rl.losses import Denominators
from prove_jax.rl.objectives import SFTObjective
from prove_jax.rl.sft import gold_rows
from tests.rl.rl_testlib import crafted_rollout, tiny_config


def test_sft_loss_is_the_nll_of_masked_targets_only() -> None:
    model = init_model(tiny_config(), seed=0)
    rng = np.random.default_rng(0)
    tokens = jnp.asarray(rng.integers(0, 200, (2, 24)), jnp.int32)
    mask = np.zeros((2, 24), bool)
    mask[0, 5:9] = mask[1, 12:20] = True  # assistant spans; everything else is prompt/tool/user
    batch = {"tokens": tokens, "loss_mask": jnp.asarray(mask)}
    den = Denominators(jnp.float32(mask[:, 1:].sum()), jnp.float32(2))
    loss, _ = SFTObjective()(model, None, batch, den)
    pos = jnp.broadcast_to(jnp.arange(24, dtype=jnp.int32), (2, 24))
    lp = np.asarray(sequence_logprobs(model, tokens, pos))
    assert float(loss) == pytest.approx(-lp[mask[:, 1:]].mean(), rel=1e-5)
    # tokens that are neither targets nor context of a target do not matter
    changed = tokens.at[1, 21:].set(3)
    assert float(SFTObjective()(model, None, {**batch, "tokens": changed}, den)[0]) == pytest.approx(float(loss))


def test_gold_rows_leave_out_failed_too_long_and_unfinished_transcripts() -> None:
    def ro(n: int, failed: bool = False, finish: str = "done") -> Rollout:
        return crafted_rollout(length=n, failed=failed, finish=finish)

    rows, dropped = gold_rows([ro(10), ro(50), ro(10, failed=True), ro(10, finish="token_cap"), ro(20)], 40)
    assert [len(r) for r in rows] == [10, 20]
    assert dropped == {"failed": 1, "too_long": 1, "truncated": 1}
