#!/usr/bin/env bash
# One host: `launch/local.sh [--config FILE] [key=value ...]` (same arguments as python -m prove_jax.launch).
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python -m prove_jax.launch "$@"
