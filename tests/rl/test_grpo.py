"""GRPO over live MCP rollouts: a real stage run, a server dying mid-step, SIGKILL + resume."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import jax
import numpy as np
from flax import nnx

from prove_jax.checkpoint import Checkpointer, load_checkpoint
from prove_jax.launch import main
from prove_jax.records import Example
from prove_jax.rl.batch import length_buckets
from tests.conftest import subprocess_env
from tests.rl.conftest import base_overrides

GRPO = ["stages=[grpo]", "grpo.prompts_per_step=3", "grpo.group_size=4", "grpo.rows_per_micro=4",
        "grpo.sampling.max_new_tokens=96", "grpo.optim.lr=0.002", "grpo.loss.kl_coef=0.01",
        "grpo.dynamic_sampling=false"]  # one batch per step (the default run refills; tests/rl/test_refill.py)
TIMING = ("time/", "speed/", "host_share")


def _rows(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "grpo" / "metrics.jsonl").read_text().splitlines()]


def _params(stage_dir: Path, like: Any) -> list[np.ndarray]:
    ck = Checkpointer(stage_dir / "checkpoints")
    try:
        return [np.asarray(x) for x in jax.tree.leaves(ck.restore_params(like))]
    finally:
        ck.close()


def test_grpo_stage_updates_the_policy_from_live_rollouts(run_copy: Path) -> None:
    from prove_jax.config import LaunchConfig, load
    from prove_jax.pipeline.context import Run

    main([*base_overrides(run_copy), *GRPO, "grpo.steps=2"])
    summary = json.loads((run_copy / "grpo" / "summary.json").read_text())
    rows = _rows(run_copy)
    assert summary["steps"] == 2 and len(rows) == 2 and summary["start_from"] == "sft"
    for r in rows:
        assert r["episodes"] == 12 and r["failed_episodes"] == 0
        assert 0.0 <= r["reward/cov"] <= 1.0 and r["calls_per_episode"] > 0
        assert 0.0 <= r["reward/abstain"] <= 1.0  # the no-call term is in the total, so it is logged
        assert r["time/rollout_device"] > 0 and r["time/update"] >= 0 and 0 < r["host_share"] < 1
    updated = [r for r in rows if r["rows"] > 0]
    assert updated, "the SFT'd policy's groups should have reward spread"
    assert all(np.isfinite(r["pg_loss"]) and r["kl"] >= 0 for r in updated)
    # on-policy: learner and sampler agree up to kernel numerics (cached decode vs full forward)
    assert all(r["abs_log_ratio"] < 1e-3 for r in updated), [r["abs_log_ratio"] for r in updated]
    assert summary["compiled_programs"] <= 1 + len(length_buckets(2048))
    like = nnx.split(Run(load(LaunchConfig, None, base_overrides(run_copy))).initial_model())[1]
    before, after = _params(run_copy / "sft", like), _params(run_copy / "grpo", like)
    assert any(not np.array_equal(a, b) for a, b in zip(before, after, strict=True))
    assert (run_copy / "grpo" / "grpo_reward.png").stat().st_size > 1000
    assert list((run_copy / "grpo" / "tb").iterdir())  # TensorBoard event file


def test_async_rollouts_are_one_step_stale(run_copy: Path) -> None:
    """Off-policy mode: step t+1's rollouts are sampled while step t updates, with the params from
    before that update. The first step is on-policy; later ones show the staleness in the
    learner/sampler log-ratio, and the loop still trains and logs every step."""
    main([*base_overrides(run_copy), *GRPO, "grpo.steps=3", "grpo.async_rollouts=true", "grpo.loss.tis_cap=2.0"])
    rows = _rows(run_copy)
    assert len(rows) == 3 and json.loads((run_copy / "grpo" / "summary.json").read_text())["steps"] == 3
    updated = [r for r in rows if r["rows"] > 0]
    assert len(updated) >= 2 and rows[0]["rows"] > 0
    assert rows[0]["abs_log_ratio"] < 1e-3
    assert all(r["abs_log_ratio"] > 1e-2 for r in rows[1:] if r["rows"] > 0), [r["abs_log_ratio"] for r in rows]


def test_a_server_dying_mid_step_fails_only_its_episodes(run_copy: Path) -> None:
    """Banking runs as a stdio subprocess that is SIGKILLed at its first tool call of step 0: those
    episodes fail and are excluded (and counted); the vehicle episodes train; the pool restarts
    banking and step 1 runs whole."""
    from prove_jax.config import LaunchConfig, load
    from prove_jax.env import MCPPool
    from prove_jax.env.backends import InProcessBackend, StdioBackend
    from prove_jax.loaders import load_split
    from prove_jax.pipeline.context import Run
    from prove_jax.rl.grpo import GRPOContext, train_grpo
    from prove_jax.rl.loop import StageRunner
    from prove_jax.rl.objectives import GRPOObjective
    from prove_jax.rl.step import Trainer

    cfg = load(LaunchConfig, None, [*base_overrides(run_copy), *GRPO, "grpo.steps=2", "grpo.prompts_per_step=2"])
    run = Run(cfg)
    examples = [e for e in load_split(run.data_dir, "train") if e.id in ("bank-balances", "vehicle-drive")]

    class Fixed:
        def __init__(self) -> None:
            self.state = 0

        def __next__(self) -> list[Example]:
            self.state += 1
            return examples

        def get_state(self) -> dict[str, int]:
            return {"n": self.state}

        def set_state(self, s: dict[str, int]) -> None:
            self.state = s["n"]

    trainer = Trainer(load_checkpoint(run.stage_dir("sft"), config=run.model_config()).model, cfg.grpo.optim,
                      GRPOObjective(cfg.grpo.loss), reference=True)
    banking = StdioBackend("banking", n_procs=1)
    killed: list[int] = []
    dead = asyncio.Event()
    original = banking.call

    async def call(*args: Any, **kw: Any) -> Any:
        if not killed and args[2] != "banking_server_info" and not str(args[2]).startswith("banking_session"):
            killed.append(0)  # claimed before awaiting: episodes reach here together (whole decode blocks)
            pid = json.loads((await original(args[0], "probe", 0, "banking_server_info", {})).text)["pid"]
            os.kill(pid, signal.SIGKILL)
            killed[0] = pid
            dead.set()
        elif killed:
            await dead.wait()  # a call racing the kill reaches the dead server, as a later one would
        return await original(*args, **kw)

    banking.call = call  # type: ignore[method-assign]
    # The SFT'd policy may make no banking call at all: the end-of-episode snapshot is a call every
    # banking episode makes after the kill, so each of them meets the dead server (an episode that
    # never touches it again loses nothing and does not fail).
    episode = dataclasses.replace(run.episode_config(), snapshots=True)

    async def go() -> dict[str, Any]:
        async with MCPPool({"banking": banking, "vehicle": InProcessBackend("vehicle")}, call_timeout_s=20) as pool:
            ctx = GRPOContext(trainer, run.engine(trainer.model()), pool, run.template, run.tokenizer,
                              episode, cfg.reward, 2048)
            runner = StageRunner("grpo", run_copy / "grpo_kill", trainer, 2, config={}, progress=False)
            try:
                return await train_grpo(ctx, cfg.grpo, Fixed(), runner, seed=0)
            finally:
                runner.close()

    summary = asyncio.run(go())
    rows = [json.loads(x) for x in (run_copy / "grpo_kill" / "metrics.jsonl").read_text().splitlines()]
    assert killed and summary["failed_episodes"] == rows[0]["failed_episodes"] == 4  # the banking group
    assert rows[0]["groups"] == 1 and rows[0]["episodes"] == 8
    assert rows[1]["failed_episodes"] == 0 and rows[1]["groups"] == 2  # restarted server, whole step


def _launch(run: Path, *extra: str) -> subprocess.Popen[bytes]:
    # A process this test kills may be cut mid-way through writing a compilation-cache entry: each
    # launch compiles into a throw-away cache of its own (tests/conftest.py subprocess_env)
    env = subprocess_env(Path(tempfile.mkdtemp(prefix="jax_cache_", dir=run.parent)), XLA_FLAGS="", JAX_PLATFORMS="cpu")
    return subprocess.Popen([sys.executable, "-m", "prove_jax.launch", *base_overrides(run), *GRPO, "grpo.steps=4",
                             "checkpoint.every=1", *extra], env=env, cwd=Path(__file__).resolve().parents[2],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _wait_for(cond: Any, proc: subprocess.Popen[bytes], timeout: float = 400) -> None:
    deadline = time.time() + timeout
    while not cond() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.2)
    assert proc.poll() is None, "the run ended before the signal could be sent"


def test_sigterm_then_sigkill_mid_grpo_then_resume_equals_an_uninterrupted_run(sft_run: Path, tmp_path: Path
                                                                              ) -> None:
    """Run b is stopped by SIGTERM after its first step (clean checkpoint, exit 143, no done
    marker), resumed, SIGKILLed right after a later checkpoint, resumed again: its metrics and
    final params equal run a's, which ran straight through (checkpoint.every=1 in both)."""
    import shutil

    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(sft_run, a)
    shutil.copytree(sft_run, b)
    whole, victim = _launch(a), _launch(b)
    metrics, ck = b / "grpo" / "metrics.jsonl", b / "grpo" / "checkpoints"
    _wait_for(lambda: metrics.exists() and metrics.read_text().count("\n") >= 1, victim)
    victim.send_signal(signal.SIGTERM)
    assert victim.wait(timeout=300) == 143
    stopped_at = len(_rows(b))
    assert 1 <= stopped_at < 4 and not (b / "grpo" / "summary.json").exists()
    second = Checkpointer(ck)
    assert second.latest_step() == stopped_at
    second.close()
    victim = _launch(b)
    _wait_for(lambda: (ck / str(stopped_at + 1)).exists(), victim)
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    killed_at = len(_rows(b))
    assert stopped_at < killed_at < 4
    resumed = _launch(b)
    assert resumed.wait(timeout=600) == 0, resumed.stderr.read().decode()[-3000:] if resumed.stderr else ""
    assert whole.wait(timeout=600) == 0, whole.stderr.read().decode()[-3000:] if whole.stderr else ""
    ra, rb = _rows(a), _rows(b)
    assert len(ra) == len(rb) == 4
    for x, y in zip(ra, rb, strict=True):
        assert {k: v for k, v in x.items() if not k.startswith(TIMING)} == \
               {k: v for k, v in y.items() if not k.startswith(TIMING)}
    assert any(r["rows"] > 0 for r in ra[2:]), "the steps after the kill must train"
    for r in (a, b):
        ck = Checkpointer(r / "grpo" / "checkpoints")
        assert ck.latest_step() == 4
        ck.close()
    from prove_jax.config import LaunchConfig, load
    from prove_jax.pipeline.context import Run

    like = nnx.split(Run(load(LaunchConfig, None, base_overrides(a))).initial_model())[1]
    for x, y in zip(_params(a / "grpo", like), _params(b / "grpo", like), strict=True):
        np.testing.assert_array_equal(x, y)
