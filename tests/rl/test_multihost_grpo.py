"""GRPO end to end on two JAX processes (CPU, gloo), through the real launcher.

``python -m prove_jax.launch stages=[grpo] distributed.num_processes=2 ...`` runs twice in two
processes of 2 CPU devices each (``multihost_grpo_worker.py`` wraps the launcher with observing
checks), over the SFT'd tiny policy of ``conftest.sft_run``:

1. two steps: each process plays its prompts through its own in-process MCP pool and engine; the
   train step is sharded over the 4 devices of both; after every update the trainer's f32 params
   reach each process's bf16 engine through ``WeightSync`` (one on-device program, gloo
   collectives across the processes), and the worker asserts the engine equals the trainer's
   params cast to bf16, on its own devices only; a checkpoint after every step;
2. the same command with ``grpo.steps=3``: the stage resumes from the step-2 checkpoint and runs
   step 3 alone (the first two metrics rows are the restored ones);
3. the updates themselves: the rows both processes trained on at steps 1 and 2 (recorded by the
   worker) are replayed in this one process over a 4-device mesh from the same SFT params; its
   params and metrics equal the live two-process steps' (checkpoints 1 and 2, metrics rows) to f32
   tolerance, and process 0's rows alone give another gradient (process 1's rows took part).
"""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import jax
import numpy as np
import optax
import pytest

from prove_jax.checkpoint import Checkpointer, abstract, restore_model
from prove_jax.launch import parse
from prove_jax.models import make_mesh
from prove_jax.pipeline.context import Run
from prove_jax.rl.batch import length_buckets, micro_batches
from prove_jax.rl.objectives import GRPOObjective
from prove_jax.rl.step import Trainer
from tests.conftest import subprocess_env
from tests.rl.conftest import base_overrides
from tests.rl.multihost_grpo_worker import load_rows
from tests.rl.test_multihost import _free_port

WORKER = Path(__file__).with_name("multihost_grpo_worker.py")
REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 480  # per launch of both processes (2 CPU cores shared by every process)
MESH = "fsdp=2,tensor=2"
GRPO = ["stages=[grpo]", f"model.mesh={MESH}", "engine.param_dtype=bfloat16", "engine.slots=4",
        "grpo.prompts_per_step=2", "grpo.group_size=4", "grpo.rows_per_micro=4", "grpo.sampling.max_new_tokens=48",
        "grpo.optim.lr=0.002", "grpo.optim.weight_decay=0.01", "grpo.loss.kl_coef=0.01",
        "grpo.drop_constant_groups=false", "grpo.dynamic_sampling=false", "checkpoint.every=1", "checkpoint.keep=5"]
TIMING = ("time/", "speed/", "host_share")


def _launch_pair(run: Path, record: Path, tag: str, steps: int) -> None:
    """Both processes of one launcher command; fails with the log of a process that fails."""
    port = _free_port()
    procs = []
    for i in range(2):  # concurrent processes: a compilation cache each (tests/conftest.py subprocess_env)
        env = subprocess_env(f"multihost-grpo-p{i}", JAX_PLATFORMS="cpu", XLA_FLAGS="")  # devices: local_devices
        args = [*base_overrides(run), *GRPO, f"grpo.steps={steps}", "distributed.num_processes=2",
                f"distributed.coordinator=localhost:{port}", f"distributed.process_id={i}",
                "distributed.local_devices=2"]
        log = open(record / f"{tag}.{i}.log", "wb")  # noqa: SIM115 - the child keeps its own descriptor
        procs.append(subprocess.Popen([sys.executable, str(WORKER), "--record", str(record), "--tag", tag, "--", *args],
                                      cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT))
        log.close()
    deadline = time.monotonic() + TIMEOUT_S
    try:
        for i, p in enumerate(procs):
            rc = p.wait(timeout=max(1.0, deadline - time.monotonic()))
            if rc != 0:
                pytest.fail(f"{tag} process {i} exited with {rc}:\n"
                            f"{(record / f'{tag}.{i}.log').read_text(errors='replace')[-5000:]}")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def _worker(record: Path, tag: str, i: int) -> dict[str, Any]:
    return json.loads((record / f"worker.{tag}.{i}.json").read_text())


def _metrics(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "grpo" / "metrics.jsonl").read_text().splitlines()]


def _replay(run: Path, record: Path) -> tuple[Any, list[list[np.ndarray]], list[dict[str, float]], float]:
    """The live run's two updates, redone by one process over 4 devices from the recorded rows of
    both processes: the params' restore target, the params (host) and metrics after each step,
    and a control (the second step's gradient norm from process 0's rows alone)."""
    cfg = parse([*base_overrides(run), *GRPO])  # the launcher's config: tiny_cpu.yaml + overrides
    g = cfg.grpo
    mesh = make_mesh(MESH, devices=jax.devices()[:4])
    ck = Checkpointer(run / "sft" / "checkpoints")
    try:
        model = restore_model(Run(cfg).model_config(), ck, ck.latest_step(), mesh)
    finally:
        ck.close()
    trainer = Trainer(model, g.optim, GRPOObjective(g.loss, g.sampling.temperature), reference=g.loss.kl_coef > 0)
    buckets = length_buckets(cfg.episode.max_tokens or 2048)
    like = abstract(trainer.params)
    params: list[list[np.ndarray]] = []
    metrics: list[dict[str, float]] = []
    control = 0.0
    for step in range(2):
        rows = [load_rows(record / f"rows.first.{step}.{i}.npz") for i in range(2)]
        if step == 1:
            mbs, plan = micro_batches(rows[0], g.rows_per_micro, buckets)
            control = float(optax.tree.norm(trainer.gradients(mbs, trainer.denominators(plan.tokens, plan.seqs))
                                            ["grads"]))
        mbs, plan = micro_batches(rows[0] + rows[1], 2 * g.rows_per_micro, buckets)
        metrics.append(trainer.step(mbs, trainer.denominators(plan.tokens, plan.seqs)))
        params.append([np.asarray(x) for x in jax.tree.leaves(trainer.params)])  # the next step donates them
    return like, params, metrics, control


@pytest.mark.slow
def test_two_process_grpo_syncs_engines_on_device_checkpoints_and_resumes(sft_run: Path, tmp_path: Path) -> None:
    run, record = tmp_path / "run", tmp_path / "record"
    shutil.copytree(sft_run, run)
    record.mkdir()

    _launch_pair(run, record, "first", steps=2)
    first = [_worker(record, "first", i) for i in range(2)]
    summary = json.loads((run / "grpo" / "summary.json").read_text())
    assert summary["steps"] == 2 and summary["start_from"] == "sft"
    assert summary["weight_sync"]["mode"] == "one program" and summary["weight_sync"]["processes"] == 2
    n_params = summary["weight_sync"]["bytes"] // 2
    for w in first:
        assert (w["processes"], w["devices"], len(w["local_devices"]), w["collectives"]) == (2, 4, 2, "gloo")
        assert w["engines"] == 1 and [c["step"] for c in w["checks"]] == [0, 1]
        for c in w["checks"]:  # the worker already asserted equality; these say what it compared
            assert c["engine_dtypes"] == ["bfloat16"] and c["trainer_dtypes"] == ["float32"]
            assert c["mismatched_elements"] == 0 and c["engine_on_local_devices"]
            assert set(c["engine_devices"]) == set(w["local_devices"])
            assert c["buffers_live_after_sync"] is False  # the KV cache was released for the update
            assert c["weight_sync_bytes"] == 2 * n_params and c["time/weight_sync"] > 0
    rows = _metrics(run)
    assert len(rows) == 2
    for r in rows:  # both processes' pools played their prompts: 2 prompts x 4 samples in all
        assert r["episodes"] == 8 and r["failed_episodes"] == 0 and r["rows"] > 0
        assert r["weight_sync_bytes"] == 2 * n_params

    ck = Checkpointer(run / "grpo" / "checkpoints")
    assert ck.latest_step() == 2
    ck.close()

    _launch_pair(run, record, "again", steps=3)
    again = [_worker(record, "again", i) for i in range(2)]
    assert all([c["step"] for c in w["checks"]] == [2] for w in again), "the rerun must continue, not restart"
    assert all(c["mismatched_elements"] == 0 for w in again for c in w["checks"])
    resumed = _metrics(run)
    assert len(resumed) == 3 and resumed[:2] == rows
    assert json.loads((run / "grpo" / "summary.json").read_text())["steps"] == 3

    # Both updates, replayed in one process over 4 devices from the rows both processes used.
    like, replayed, metrics, control = _replay(run, record)
    # Step 2's metrics are taken at params that already differ by reduction order (below), and
    # abs_log_ratio is a small mean of differences of log-probs: 1e-4 relative (1.3e-5 measured).
    for k in range(2):
        assert {m: pytest.approx(v, rel=1e-4, abs=1e-7) for m, v in metrics[k].items()} == \
            {m: rows[k][m] for m in metrics[k]}, k
    # Process 1's rows took part in the live update: without them the gradient differs.
    assert abs(control - rows[1]["grad_norm"]) > 1e-3 * rows[1]["grad_norm"], (control, rows[1]["grad_norm"])
    ck = Checkpointer(run / "grpo" / "checkpoints")
    try:
        live = [[np.asarray(x) for x in jax.tree.leaves(ck.restore_params(like, k))] for k in (1, 2, 3)]
    finally:
        ck.close()
    # f32: reduction order differs (2 processes x 2 devices vs 4 devices). Where a gradient is at the
    # level of that noise (a vocabulary row no token of the batch uses), Adam's m / sqrt(v) makes it a
    # step of arbitrary size up to ~lr: measured one lm_head element at 1.1e-5 (0.6 % of lr) with
    # T-1-token forwards and at 7.0e-5 (3.5 % of lr) with whole-bucket ones. So such elements are
    # held to what Adam can move them ((k + 1) steps of lr), and their number is what is bounded:
    # every other element agrees within 1e-6, which a wrong sync or a missing process's rows break.
    lr = parse([*base_overrides(run), *GRPO]).grpo.optim.lr
    for k, (mine, theirs) in enumerate(zip(replayed, live, strict=False)):
        off = 0
        for a, b in zip(mine, theirs, strict=True):
            np.testing.assert_allclose(a, b, rtol=0, atol=(k + 1) * lr)
            off += int(np.count_nonzero(np.abs(a - b) > 1e-6))
        assert off <= 1e-4 * sum(a.size for a in mine), off
    # The params changed at every step, so no engine could equal its trainer by staying put.
    for a, b in itertools.pairwise(live):
        assert any(not np.array_equal(x, y) for x, y in zip(a, b, strict=True))
