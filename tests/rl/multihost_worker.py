"""One process of the multi-host train-step test (``tests/rl/test_multihost.py``).

``python tests/rl/multihost_worker.py --process-id I --num-processes N --port P --out FILE``

Every process builds the same tiny model on a global ``fsdp=2,tensor=2`` mesh, takes its own
shard of each step's rows (``rows[I::N]``), and runs two GRPO optimizer steps through the real
:class:`~prove_jax.rl.step.Trainer` and :func:`~prove_jax.rl.batch.micro_batches`: with N=2 the
processes must agree on micro-batch shapes and global token counts and exchange gradients over
gloo, exactly what a multi-host run does. The train state (params and Adam moments) is then
gathered and process 0 writes it to ``FILE`` (.npz) with each step's metrics and counts
(``FILE`` with suffix .json).

The JAX distributed runtime is started by the launcher's own start-up code
(:func:`prove_jax.pipeline.distributed.maybe_initialize`) before anything touches a backend; the
caller sets ``JAX_PLATFORMS=cpu`` and the per-process device count in ``XLA_FLAGS``.
``--rows-shard K --rows-shards M`` override which rows this process takes (default: I of N): the
test's single-process run over one shard's rows shows that the split is visible in the result.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
STEPS = 2
ROWS_PER_STEP = 8  # global rows per optimizer step
GLOBAL_ROWS_PER_MICRO = 4
MESH = "fsdp=2,tensor=2"


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--process-id", type=int, required=True)
    p.add_argument("--num-processes", type=int, required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--rows-shard", type=int, default=None)
    p.add_argument("--rows-shards", type=int, default=None)
    return p.parse_args(argv)


def _gather(x: Any) -> Any:
    """The global value of one array, on every process (a collective: all processes call it)."""
    import numpy as np
    from jax.experimental import multihost_utils

    if x.is_fully_addressable:
        return np.asarray(x)
    return np.asarray(multihost_utils.process_allgather(x, tiled=True))


def weight_sync_check(trainer: Any, host_params: list[Any]) -> dict[str, Any]:
    """The trained params through ``WeightSync`` to a bf16 engine on this process's devices,
    compared with the gathered f32 params cast on host (bit for bit)."""
    import jax
    import numpy as np

    from prove_jax.engine.weights import WeightSync

    sync = WeightSync(trainer.model_config, trainer.params, dtype="bfloat16")
    engine = jax.tree.leaves(sync(trainer.params))
    local = set(jax.local_devices())
    return {**sync.describe(), "local_only": all(x.sharding.device_set <= local for x in engine),
            "mismatched": int(sum(np.count_nonzero(np.asarray(e) != h.astype(e.dtype))
                                  for e, h in zip(engine, host_params, strict=True)))}


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    sys.path.insert(0, str(REPO))  # run as a script: make `prove_jax` and `tests` importable

    from prove_jax.config import DistributedConfig
    from prove_jax.pipeline.distributed import maybe_initialize

    n, i = args.num_processes, args.process_id
    maybe_initialize(DistributedConfig(auto=False, coordinator=f"localhost:{args.port}", num_processes=n,
                                       process_id=i))

    import jax
    import numpy as np

    from prove_jax.checkpoint import flatten
    from prove_jax.models import init_model, make_mesh
    from prove_jax.rl.batch import length_buckets, micro_batches
    from prove_jax.rl.losses import LossConfig
    from prove_jax.rl.objectives import GRPOObjective
    from prove_jax.rl.step import OptimConfig, Trainer
    from tests.rl.rl_testlib import random_rows, tiny_config

    assert jax.process_count() == n and jax.process_index() == i, (jax.process_count(), jax.process_index())
    assert jax.device_count() == 4, jax.devices()
    shard = i if args.rows_shard is None else args.rows_shard
    shards = n if args.rows_shards is None else args.rows_shards

    mesh = make_mesh(MESH)
    optim = OptimConfig(lr=3e-3, warmup_steps=0, decay_steps=10, weight_decay=0.01, clip_norm=1.0)
    trainer = Trainer(init_model(tiny_config(), seed=0, mesh=mesh), optim,
                      GRPOObjective(LossConfig(kl_coef=0.05)), reference=True)
    buckets = length_buckets(256, 64)
    steps: list[dict[str, Any]] = []
    for k in range(STEPS):
        rows = random_rows(ROWS_PER_STEP, seed=100 + k)[shard::shards]  # fresh rows every step
        mbs, plan = micro_batches(rows, max(1, GLOBAL_ROWS_PER_MICRO // n), buckets)
        metrics = trainer.step(mbs, trainer.denominators(plan.tokens, plan.seqs))
        steps.append({"metrics": metrics, "tokens": plan.tokens, "seqs": plan.seqs, "local_rows": len(rows),
                      "micro_batches": len(mbs), "lengths": list(plan.lengths)})

    flat, _ = flatten(trainer.state)
    host = {name: _gather(x) for name, x in flat.items()}
    sharded = sum(1 for x in flat.values() if not x.is_fully_addressable)
    sync = weight_sync_check(trainer, [host[k] for k in flatten(trainer.state)[0] if k.startswith("params.")])
    if jax.process_index() == 0:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        np.savez(args.out, **host)
        args.out.with_suffix(".json").write_text(json.dumps({
            "processes": jax.process_count(), "devices": jax.device_count(),
            "distributed": jax.distributed.is_initialized(),
            "collectives": jax.config.jax_cpu_collectives_implementation,
            "local_devices": jax.local_device_count(), "non_addressable_leaves": sharded, "steps": steps,
            "weight_sync": sync}))


if __name__ == "__main__":
    main()
