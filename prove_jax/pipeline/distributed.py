"""Multi-process start-up: ``jax.distributed.initialize`` when a run spans several processes.

Called by the launcher before anything touches a JAX backend. Three ways in:

* explicit: ``distributed.num_processes > 1`` with ``coordinator`` and ``process_id`` (tests, or
  any launcher that passes them);
* environment (``distributed.auto``): ``JAX_COORDINATOR_ADDRESS`` + ``JAX_NUM_PROCESSES`` +
  ``JAX_PROCESS_ID`` (what ``launch/slurm_gpu.sbatch`` exports), SLURM with several tasks, or
  ``PROVE_JAX_DISTRIBUTED=1`` (what ``launch/tpu_pod.sh`` exports on every TPU VM worker) —
  JAX's own cluster detection then fills in the coordinator and process ids;
* otherwise a single process: nothing to do.

On CPU the collectives go through gloo (``jax_cpu_collectives_implementation``), which is how
the two-process tests run on one machine.
"""

from __future__ import annotations

import os

import jax

from prove_jax.config import DistributedConfig


def _env_processes() -> int:
    for key in ("JAX_NUM_PROCESSES", "SLURM_NTASKS"):
        if os.environ.get(key, "").isdigit():
            return int(os.environ[key])
    hosts = os.environ.get("TPU_WORKER_HOSTNAMES", "")
    return len([h for h in hosts.split(",") if h]) or 1


def maybe_initialize(cfg: DistributedConfig) -> bool:
    """Initialize the JAX distributed runtime if this run has several processes; True if it did."""
    if jax.distributed.is_initialized():
        return False
    explicit = cfg.num_processes > 1
    asked = os.environ.get("PROVE_JAX_DISTRIBUTED") == "1"
    if not explicit and not (cfg.auto and (_env_processes() > 1 or asked)):
        if cfg.local_devices:
            jax.config.update("jax_num_cpu_devices", cfg.local_devices)
        return False
    platforms = os.environ.get("JAX_PLATFORMS", "")
    if platforms in ("", "cpu"):
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        if cfg.local_devices:
            jax.config.update("jax_num_cpu_devices", cfg.local_devices)
    if explicit:
        if not cfg.coordinator or cfg.process_id < 0:
            raise SystemExit("distributed.num_processes > 1 needs distributed.coordinator and distributed.process_id")
        jax.distributed.initialize(coordinator_address=cfg.coordinator, num_processes=cfg.num_processes,
                                   process_id=cfg.process_id)
    else:
        coord = os.environ.get("JAX_COORDINATOR_ADDRESS")
        if coord and os.environ.get("JAX_PROCESS_ID", "").isdigit():
            jax.distributed.initialize(coordinator_address=coord, num_processes=_env_processes(),
                                       process_id=int(os.environ["JAX_PROCESS_ID"]))
        else:
            jax.distributed.initialize()  # SLURM / TPU pod: JAX's cluster detection
    return True
