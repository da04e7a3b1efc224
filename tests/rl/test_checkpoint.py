"""Orbax checkpoints of the train state: exact round trip into the target shardings, params alone,
keep-last-K, the metadata (data iterator state, metrics rows) and an interrupted save."""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np
from flax import nnx

from prove_jax.checkpoint import CheckpointConfig, Checkpointer, flatten
from prove_jax.models import init_model, make_mesh
from prove_jax.rl.batch import length_buckets, micro_batches
from prove_jax.rl.objectives import SFTObjective
from prove_jax.rl.step import OptimConfig, Trainer
from tests.rl.rl_testlib import random_rows, tiny_config


def _trainer(seed: int, mesh: object = None) -> Trainer:
    return Trainer(init_model(tiny_config(), seed=seed, mesh=mesh), OptimConfig(lr=1e-3), SFTObjective())


def _step(tr: Trainer, seed: int) -> None:
    mbs, p = micro_batches(random_rows(4, seed=seed), 4, length_buckets(256, 64), fields=("tokens", "loss_mask"))
    tr.step(mbs, tr.denominators(p.tokens, p.seqs))


def test_round_trip_keep_last_and_params_only(tmp_path: Path) -> None:
    mesh = make_mesh("fsdp=4,tensor=2")
    tr = _trainer(0, mesh)
    ck = Checkpointer(tmp_path / "ck", CheckpointConfig(every=1, keep=2))
    for k in range(1, 4):
        _step(tr, k)
        assert ck.save(k, tr.state, {"data": {"next_index": k}, "metrics": [{"step": k - 1}]})
    ck.wait()
    assert ck.manager.all_steps() == [2, 3]  # keep-last-K
    fresh = _trainer(7, mesh)  # different values, same structure and shardings
    state, meta, step = ck.restore(fresh.state)
    assert step == 3 and meta["data"] == {"next_index": 3}
    want, _ = flatten(jax.device_get(tr.state))
    got, _ = flatten(state)
    assert want.keys() == got.keys()
    for k in want:
        np.testing.assert_array_equal(np.asarray(got[k]), np.asarray(want[k]), err_msg=k)
        assert got[k].sharding == flatten(fresh.state)[0][k].sharding, k
    params = ck.restore_params(nnx.split(init_model(tiny_config(), seed=9, mesh=mesh))[1])
    for a, b in zip(jax.tree.leaves(params), jax.tree.leaves(tr.params), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    ck.close()


def test_a_save_that_never_finished_is_not_the_latest(tmp_path: Path) -> None:
    tr = _trainer(0)
    ck = Checkpointer(tmp_path / "ck", CheckpointConfig(every=1, keep=3, async_save=False))
    ck.save(1, tr.state, {"metrics": []})
    ck.close()
    # a save killed midway leaves an uncommitted temporary directory behind
    partial = tmp_path / "ck" / "2.orbax-checkpoint-tmp-123"
    partial.mkdir()
    (partial / "state").mkdir()
    ck2 = Checkpointer(tmp_path / "ck", CheckpointConfig(every=1, keep=3))
    assert ck2.latest_step() == 1
    ck2.close()
