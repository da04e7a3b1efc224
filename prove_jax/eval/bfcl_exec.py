"""BFCL's executor and checker, run in worker processes (this module never imports JAX).

bfcl-eval executes calls with Python ``eval()`` on instances it caches in the *module globals* of
``multi_turn_utils`` (keyed by model name, entry id and class). Both facts decide the design:

* the calls a policy writes are run in spawned worker processes, never in the trainer's or the
  server's process;
* an entry's steps must reach the worker that holds its instances, so the driver pins each
  entry to one worker (one single-process pool per worker);
* each rollout uses a model name of its own (``rollout_name``), and the worker deletes that
  rollout's cached instances once the entry is scored, so no state leaks between rollouts and
  memory stays flat over 800 entries.

Everything here is bfcl-eval's own code path: ``execute_multi_turn_func_call`` for the steps,
``multi_turn_checker`` for the verdict, with the eval runner's pre-processing (force-terminated
entries fail; steps that decode to no call are dropped).
"""

from __future__ import annotations

import os
from typing import Any


def _utils() -> Any:
    if not os.environ.get("BFCL_PROJECT_ROOT"):
        raise RuntimeError("BFCL_PROJECT_ROOT must be set before bfcl_eval is imported (it creates "
                           "result/ score/ .file_locks/ there)")
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils

    return multi_turn_utils


def execute(calls: list[str], entry: dict[str, Any], rollout_name: str) -> list[str]:
    """Run one step's calls on the rollout's instances; returns one result string per call."""
    category = entry["id"].rsplit("_", 1)[0]
    results, _ = _utils().execute_multi_turn_func_call(
        calls, entry["initial_config"], entry["involved_classes"], rollout_name, entry["id"],
        long_context="long_context" in category or "composite" in category, is_evaL_run=False)
    return [str(r) for r in results]


def forget(rollout_name: str) -> int:
    """Drop every instance cached for ``rollout_name`` (inference, ``_eval`` and ground-truth
    copies); returns how many were dropped."""
    import re

    mod = _utils()
    prefix = re.sub(r"[-./:]", "_", rollout_name) + "_"
    names = [k for k in vars(mod) if k.startswith(prefix) and k.endswith("_instance")]
    for k in names:
        delattr(mod, k)
    return len(names)


def check(turns: list[list[list[str]]], ground_truth: list[list[str]], entry: dict[str, Any],
          rollout_name: str) -> dict[str, Any]:
    """bfcl-eval's verdict on one entry: ``{"valid": bool, "error_type": str | None, "error": ...}``.

    ``turns`` is ``[turn][step][call string]`` with one list per turn the policy played.
    """
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import is_empty_execute_response

    category = entry["id"].rsplit("_", 1)[0]
    try:
        if len(turns) != len(ground_truth):  # the eval runner's force-terminated rule
            return {"valid": False, "error_type": "multi_turn:force_terminated",
                    "error": f"{len(turns)} turns played, {len(ground_truth)} expected"}
        decoded = [[step for step in turn if not is_empty_execute_response(step)] for turn in turns]
        out = multi_turn_checker(decoded, ground_truth, entry, category, rollout_name)
        return {"valid": bool(out.get("valid")), "error_type": out.get("error_type"),
                "error": out.get("error_message") if not out.get("valid") else None}
    finally:
        forget(rollout_name)
