#!/usr/bin/env bash
# Run on EVERY worker of a TPU pod slice, e.g.
#   gcloud compute tpus tpu-vm ssh $TPU --worker=all --command="cd prove_jax && launch/tpu_pod.sh --config configs/runs/X.yaml"
# JAX discovers the pod topology itself; prove_jax.launch calls jax.distributed.initialize() when it
# sees more than one process (trainer stages). MCP servers run per host (backend=stdio|inprocess).
set -euo pipefail
cd "$(dirname "$0")/.."
export JAX_PLATFORMS=tpu
exec .venv/bin/python -m prove_jax.launch "$@"
