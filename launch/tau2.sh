#!/usr/bin/env bash
# τ²-bench for a trained policy: serve it, run tau2 on every domain, write OUT/tau2.json.
#
#   launch/tau2.sh AGENT_MODEL_DIR OUT_DIR [USER_MODEL_DIR] [-- extra `prove_jax.eval.tau2` args]
#
# Prerequisite: tau2 installed by you from https://github.com/sierra-research/tau2-bench (not the
# PyPI package of that name) into this venv, or set TAU2_PYTHON to the Python of the env that has it.
#
# Starts `python -m prove_jax.serve` for AGENT_MODEL_DIR on AGENT_PORT (served as "agent"); with
# USER_MODEL_DIR also a user-simulator server on USER_PORT (served as "user"), otherwise the policy
# plays the user too. The NL-assertion judge follows the user simulator. Both servers are killed on
# exit, however the script ends. Scores from local user simulators/judges are NOT comparable to
# the tau2 leaderboard; the summary records that.
#
# Environment (defaults): AGENT_PORT (8000), USER_PORT (8001), HOST (127.0.0.1),
#   SERVE_ARGS ("--max-len 32768 --slots 16": tau2 conversations are long),
#   READY_TIMEOUT seconds to wait for /v1/models (1800), TAU2_PYTHON, TAU2_DATA_DIR.
# Example: launch/tau2.sh runs/grpo/final out/tau2 -- --num-trials 4 --max-concurrency 16
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[[ $# -ge 2 ]] || usage
AGENT_DIR=$1 OUT=$2
shift 2
USER_DIR=""
if [[ $# -gt 0 && $1 != "--" ]]; then USER_DIR=$1; shift; fi
[[ $# -gt 0 && $1 == "--" ]] && shift

PY=${PYTHON:-.venv/bin/python}
HOST=${HOST:-127.0.0.1}
AGENT_PORT=${AGENT_PORT:-8000}
USER_PORT=${USER_PORT:-8001}
READY_TIMEOUT=${READY_TIMEOUT:-1800}
read -r -a SERVE_EXTRA <<< "${SERVE_ARGS:---max-len 32768 --slots 16}"
mkdir -p "$OUT"

PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

serve() {  # serve MODEL_DIR PORT NAME: start in its own process group, wait for /v1/models
  local dir=$1 port=$2 name=$3 log="$OUT/serve_$3.log"
  setsid "$PY" -m prove_jax.serve --model "$dir" --host "$HOST" --port "$port" \
    --served-model-name "$name" "${SERVE_EXTRA[@]}" >"$log" 2>&1 &
  PIDS+=($!)
  local pid=$! t=0
  until curl -sf "http://$HOST:$port/v1/models" >/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null; then echo "server $name died; see $log" >&2; tail -n 20 "$log" >&2; exit 1; fi
    if (( t >= READY_TIMEOUT )); then echo "server $name not ready after ${READY_TIMEOUT}s; see $log" >&2; exit 1; fi
    sleep 5; t=$((t + 5))
  done
  echo "serving $dir as $name on http://$HOST:$port/v1" >&2
}

serve "$AGENT_DIR" "$AGENT_PORT" agent
ARGS=(--out-dir "$OUT" --agent-model agent --agent-base-url "http://$HOST:$AGENT_PORT/v1")
if [[ -n $USER_DIR ]]; then
  serve "$USER_DIR" "$USER_PORT" user
  ARGS+=(--user-model user --user-base-url "http://$HOST:$USER_PORT/v1")
fi
[[ -n ${TAU2_PYTHON:-} ]] && ARGS+=(--tau2-python "$TAU2_PYTHON")
[[ -n ${TAU2_DATA_DIR:-} ]] && ARGS+=(--tau2-data-dir "$TAU2_DATA_DIR")

"$PY" -m prove_jax.eval.tau2 "${ARGS[@]}" "$@"
