#!/usr/bin/env bash
# Run on EVERY worker of a TPU pod slice (same command, same config), e.g.
#   gcloud compute tpus tpu-vm ssh $TPU --zone=$ZONE --worker=all \
#     --command="cd prove_jax && launch/tpu_pod.sh --config configs/runs/qwen3_8b_prove.yaml model.hf_dir=/models/Qwen3-8B"
# PROVE_JAX_DISTRIBUTED=1 makes the launcher call jax.distributed.initialize() before any work;
# JAX finds the coordinator and this worker's process id from the TPU metadata itself.
# Every worker then loads its shard of the prompts, runs its own MCP servers (env.backend stdio or
# inprocess) and its own rollout engine on its local chips, and joins the sharded train step.
# out_dir must be on storage every worker sees (GCS FUSE / NFS): checkpoints are written by all
# workers (their own shards), the metrics and summaries by worker 0.
set -euo pipefail
cd "$(dirname "$0")/.."
export JAX_PLATFORMS=tpu
export PROVE_JAX_DISTRIBUTED=1
exec .venv/bin/python -m prove_jax.launch "$@"
