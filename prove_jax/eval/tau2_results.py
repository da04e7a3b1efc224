"""τ²-bench results files -> pass^k (the scoring half of :mod:`prove_jax.eval.tau2`).

Reads the ``results.json`` tau2 writes (fields of tau2's ``Results`` / ``SimulationRun``:
``tasks[].id``, ``simulations[].task_id / trial / termination_reason / reward_info.reward``)
and computes pass^k per domain as ``tau2.metrics.agent_metrics`` defines it.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

SUCCESS_TOL = 1e-6  # tau2.metrics.agent_metrics.is_successful
INFRA_ERROR = "infrastructure_error"  # tau2 TerminationReason: the simulation raised after retries


# ---- results --------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Simulation:
    task_id: str
    trial: int | None
    reward: float | None  # None: tau2 recorded no reward_info (counts as a failure)
    termination_reason: str


@dataclasses.dataclass
class Tau2Results:
    path: Path
    simulations: list[Simulation]
    task_ids: list[str]  # every task of the run (``tasks``), simulated or not
    num_trials: int | None
    domain: str | None
    agent_llm: str | None
    user_llm: str | None


def find_results(save_to: str | Path) -> Path | None:
    """Where tau2 wrote its results for ``--save-to save_to`` (v1.x: a dir; v0.x: ``.json``)."""
    save_to = Path(save_to)
    for p in (save_to / "results.json", Path(f"{save_to}.json")):
        if p.is_file():
            return p
    return None


def _simulation(raw: Any, where: str) -> Simulation:
    if not isinstance(raw, Mapping) or "task_id" not in raw:
        raise ValueError(f"{where}: not a tau2 simulation (no task_id)")
    reward = raw.get("reward")  # dir-format simulation_index entries carry the reward directly
    if "reward_info" in raw:
        info = raw["reward_info"]
        reward = info.get("reward") if isinstance(info, Mapping) else None
    if reward is not None and not isinstance(reward, (int, float)):
        raise ValueError(f"{where}: reward {reward!r} is not a number")
    return Simulation(task_id=str(raw["task_id"]), trial=raw.get("trial"),
                      reward=None if reward is None else float(reward),
                      termination_reason=str(raw.get("termination_reason") or "unknown"))


def read_results(path: str | Path) -> Tau2Results:
    """Parse a tau2 ``Results`` file (``results.json``): json format, or dir format's index."""
    path = Path(path)
    if path.is_dir():
        path = path / "results.json"
    if not path.is_file():
        raise FileNotFoundError(f"no tau2 results file at {path}")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not JSON ({e})") from e
    if not isinstance(data, Mapping) or not ("simulations" in data or "simulation_index" in data):
        keys = sorted(data) if isinstance(data, Mapping) else type(data).__name__
        raise ValueError(f"{path}: not a tau2 results file (no 'simulations'; found {keys})")
    raws = data.get("simulations") or []
    if not raws and data.get("simulation_index"):  # dir format: sims in simulations/*.json
        raws = data["simulation_index"]
    sims = [_simulation(r, f"{path}: simulation {i}") for i, r in enumerate(raws)]
    info = data.get("info") or {}
    env, agent, user = (info.get(k) or {} for k in ("environment_info", "agent_info", "user_info"))
    tasks = [str(t["id"]) for t in data.get("tasks") or [] if isinstance(t, Mapping) and "id" in t]
    return Tau2Results(path=path, simulations=sims, task_ids=tasks, num_trials=info.get("num_trials"),
                       domain=env.get("domain_name"), agent_llm=agent.get("llm"), user_llm=user.get("llm"))


def is_successful(reward: float | None) -> bool:
    return reward is not None and abs(reward - 1.0) <= SUCCESS_TOL


def pass_hat_k(num_trials: int, success_count: int, k: int) -> float:
    """pass^k of one task: the chance that k trials drawn without replacement all succeed."""
    if not 0 < k <= num_trials:
        raise ValueError(f"need 0 < k <= trials, got k={k}, trials={num_trials}")
    if not 0 <= success_count <= num_trials:
        raise ValueError(f"success count {success_count} outside [0, {num_trials}]")
    return math.comb(success_count, k) / math.comb(num_trials, k)


def summarize_domain(res: Tau2Results, infra_errors: str = "fail") -> dict[str, Any]:
    """pass^k (percent) for k = 1 .. fewest trials of any task, with counts and warnings.

    Flat keys ``"pass^1"`` .. ``"pass^K"`` (what report tables read) and the same values as
    ``"pass_hat_k": {"1": .., "K": ..}``.

    ``infra_errors``: "fail" counts ``infrastructure_error`` simulations as failed trials,
    "exclude" drops them.
    """
    if infra_errors not in ("fail", "exclude"):
        raise ValueError(f"infra_errors must be 'fail' or 'exclude', not {infra_errors!r}")
    n_infra = sum(s.termination_reason == INFRA_ERROR for s in res.simulations)
    evaluated = [s for s in res.simulations if infra_errors == "fail" or s.termination_reason != INFRA_ERROR]
    by_task: dict[str, list[Simulation]] = collections.defaultdict(list)
    for s in evaluated:
        by_task[s.task_id].append(s)
    warnings: list[str] = []
    if n_infra:
        warnings.append(f"{n_infra} simulation(s) ended in infrastructure_error ("
                        + ("counted as failures" if infra_errors == "fail" else "excluded") + "); see the tau2 log")
    out: dict[str, Any] = {"n_tasks": len(by_task), "n_simulations": len(evaluated),
                           "n_infrastructure_errors": n_infra, "infra_errors": infra_errors,
                           "num_trials": res.num_trials, "results": str(res.path)}
    if not by_task:
        return {**out, "pass^1": None, "pass_hat_k": {}, "avg_reward": None,
                "warnings": [*warnings, "no evaluated simulations"]}
    min_trials = min(len(v) for v in by_task.values())
    max_k = min(min_trials, res.num_trials or min_trials)
    expected = res.num_trials or max(len(v) for v in by_task.values())
    short = {t: len(v) for t, v in by_task.items() if len(v) < expected}
    if short:
        warnings.append(f"{len(short)} task(s) have fewer than {expected} trials: pass^k uses each task's "
                        f"own count and k stops at {max_k}")
    unsimulated = sorted(set(res.task_ids) - set(by_task))
    if unsimulated:
        warnings.append(f"{len(unsimulated)} task(s) have no evaluated simulation and are not scored")
    pass_k = {str(k): 100.0 * sum(pass_hat_k(len(v), sum(is_successful(s.reward) for s in v), k)
                                  for v in by_task.values()) / len(by_task)
              for k in range(1, max_k + 1)}
    rewards = [s.reward or 0.0 for s in evaluated]
    reasons = collections.Counter(s.termination_reason for s in res.simulations)
    return {**out, **{f"pass^{k}": v for k, v in pass_k.items()}, "pass_hat_k": pass_k,
            "avg_reward": sum(rewards) / len(rewards),
            "missing_simulations": sum(expected - n for n in short.values()),
            "tasks_without_simulations": unsimulated, "termination_reasons": dict(sorted(reasons.items())),
            "agent_llm": res.agent_llm, "user_llm": res.user_llm, "warnings": warnings}
