"""One process of the multi-host GRPO test (``tests/rl/test_multihost_grpo.py``).

``python tests/rl/multihost_grpo_worker.py --record DIR --tag NAME -- <launcher overrides>``

Runs the real launcher (``prove_jax.launch.main`` with the given dotted overrides, which include
``stages=[grpo]`` and ``distributed.*``) in this process, with three observation-only wrappers
around our own code (each calls the original and changes nothing):

* ``Run.engine`` remembers the engine the grpo stage builds;
* ``StageRunner.end_step`` checks, after every step (the weight sync has run by then), that this
  process's engine holds exactly the trainer's params cast to the engine dtype, on this process's
  devices only: both are gathered to host numpy here, in the test, never in the run. A mismatch
  raises, so the process exits non-zero;
* ``rl.ppo.micro_batches`` (GRPO's update batches through it) saves the rows this process trains on at each step
  (``DIR/rows.NAME.<call>.<process>.npz``) for the test's one-process replay of the update.

Every process writes ``DIR/worker.NAME.<process>.json``: the steps it ran and what each check found.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import signal
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def parse(argv: list[str] | None) -> tuple[argparse.Namespace, list[str]]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--record", type=Path, required=True)
    p.add_argument("--tag", required=True)
    p.add_argument("overrides", nargs="*")
    args = p.parse_args(argv)
    return args, list(args.overrides)


def save_rows(path: Path, rows: list[Any]) -> None:
    """Rows as flat arrays (ragged lengths kept in ``lengths``)."""
    import numpy as np

    cat = (lambda f, dt: np.concatenate([np.asarray(getattr(r, f), dt) for r in rows])  # noqa: E731
           if rows else np.zeros((0,), dt))
    np.savez(path, lengths=np.array([len(r) for r in rows], np.int64), tokens=cat("tokens", np.int32),
             loss_mask=cat("loss_mask", bool), sample_logprobs=cat("sample_logprobs", np.float32),
             advantages=np.array([r.advantage for r in rows], np.float32))


def load_rows(path: Path) -> list[Any]:
    """The inverse of :func:`save_rows` (used by the test)."""
    import numpy as np

    from prove_jax.rl.batch import Row

    with np.load(path) as f:
        ends = np.cumsum(f["lengths"])
        starts = ends - f["lengths"]
        return [Row(f["tokens"][a:b], f["loss_mask"][a:b], f["sample_logprobs"][a:b], float(adv))
                for a, b, adv in zip(starts, ends, f["advantages"], strict=True)]


def _host(x: Any) -> Any:
    """The global value of one array on this process (a collective when it spans processes)."""
    import numpy as np
    from jax.experimental import multihost_utils

    return np.asarray(x) if x.is_fully_addressable else np.asarray(multihost_utils.process_allgather(x, tiled=True))


def main(argv: list[str] | None = None) -> None:
    args, overrides = parse(argv)
    sys.path.insert(0, str(REPO))  # run as a script: make `prove_jax` and `tests` importable
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # `kill -USR1 <pid>`: where a hung worker is

    from prove_jax.launch import main as launch
    from prove_jax.launch import parse as parse_launch
    from prove_jax.pipeline.distributed import maybe_initialize

    maybe_initialize(parse_launch(overrides).distributed)  # what launch() does first (then a no-op)

    import jax
    import numpy as np

    import prove_jax.rl.ppo as ppo_mod
    from prove_jax.pipeline.context import Run
    from prove_jax.rl.loop import StageRunner

    pid = jax.process_index()
    engines: list[Any] = []
    checks: list[dict[str, Any]] = []
    calls = {"micro_batches": 0}

    run_engine = Run.engine

    def engine(self: Run, model_or_sampler: Any) -> Any:
        eng = run_engine(self, model_or_sampler)
        engines.append(eng)
        return eng

    end_step = StageRunner.end_step

    def checked_end_step(self: StageRunner, step: int, row: Any, **kw: Any) -> bool:
        sampler = engines[-1].sampler
        local = set(jax.local_devices())
        eng = jax.tree.leaves(sampler.params)
        trainer = [_host(x) for x in jax.tree.leaves(self.trainer.params)]  # collective: all processes
        on_local = all(x.is_fully_addressable and x.sharding.device_set <= local for x in eng)
        dtypes = sorted({str(x.dtype) for x in eng})
        diffs = [int(np.count_nonzero(np.asarray(e) != t.astype(e.dtype))) for e, t in zip(eng, trainer, strict=True)]
        checks.append({"step": step, "engine_dtypes": dtypes, "trainer_dtypes": sorted({str(t.dtype) for t in trainer}),
                       "mismatched_elements": int(sum(diffs)), "engine_on_local_devices": on_local,
                       "engine_devices": sorted({d.id for x in eng for d in x.sharding.device_set}),
                       "buffers_live_after_sync": sampler.buffers_live,
                       "weight_sync_bytes": row.get("weight_sync_bytes"), "time/weight_sync": row.get("time/weight_sync"),
                       "episodes_here": row.get("episodes")})
        assert on_local, f"step {step}: the engine's weights are not (only) on this process's devices"
        assert sum(diffs) == 0, f"step {step}: the engine's weights differ from the trainer's in {sum(diffs)} elements"
        return end_step(self, step, row, **kw)

    micro_batches = ppo_mod.micro_batches

    def recording_micro_batches(rows: Any, *a: Any, **kw: Any) -> Any:
        save_rows(args.record / f"rows.{args.tag}.{calls['micro_batches']}.{pid}.npz", list(rows))
        calls["micro_batches"] += 1
        return micro_batches(rows, *a, **kw)

    Run.engine = engine  # type: ignore[method-assign]
    StageRunner.end_step = checked_end_step  # type: ignore[method-assign]
    ppo_mod.micro_batches = recording_micro_batches  # type: ignore[assignment]
    args.record.mkdir(parents=True, exist_ok=True)
    summary = launch(overrides)
    (args.record / f"worker.{args.tag}.{pid}.json").write_text(json.dumps({
        "process": pid, "processes": jax.process_count(), "local_devices": [d.id for d in jax.local_devices()],
        "devices": jax.device_count(), "collectives": jax.config.jax_cpu_collectives_implementation,
        "engines": len(engines), "checks": checks, "grpo": summary["stages"].get("grpo", {})}, default=str))


if __name__ == "__main__":
    main()
