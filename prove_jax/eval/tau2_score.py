"""τ²-bench's reward, reproduced from its published definition (``tau2.evaluator``), JAX- and I/O-free.

A trial that did not end with the agent or the user stopping (too many steps, too many tool
errors, an environment failure) gets 0. Otherwise each component of the task's ``reward_basis``
is checked and the reward is their product:

* ``DB``: the final DB equals the DB a fresh copy reaches when the task's expected actions are
  replayed on it (failures of an expected action ignored, as τ² does); τ² compares hashes of the
  two DBs, we compare a hash of each DB's canonical JSON.
* ``COMMUNICATE``: every ``communicate_info`` string occurs, case-folded, in some assistant text
  message with its commas removed (τ²'s substring check); no strings: 1.
* ``NL_ASSERTION``: an LLM judge decides each assertion; without a judge it is not scored, and the
  reward is over the other components (``reward``); with one, ``reward_nl`` includes it. The two
  are reported separately.
* ``ACTION`` / ``ENV_ASSERTION``: no retail or airline task uses them; a task that does is refused.

A success is a reward within 1e-6 of 1; pass^k of a task is C(successes, k) / C(trials, k), averaged
over tasks (:func:`prove_jax.eval.tau2_results.pass_hat_k`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from prove_jax.eval.tau2_results import is_successful, pass_hat_k

STOPPED = ("agent_stop", "user_stop")
SCORED_BASES = {"DB", "COMMUNICATE", "NL_ASSERTION"}


def communicate_checks(infos: Sequence[str], assistant_texts: Iterable[str]) -> list[bool]:
    """Per ``communicate_info`` string: whether an assistant text holds it (τ²'s check)."""
    texts = [t.lower().replace(",", "") for t in assistant_texts if t]
    return [any(s.lower() in t for t in texts) for s in infos]


@dataclasses.dataclass
class TrialScore:
    """One trial's τ² reward and its parts (``None``: not checked)."""

    reward: float  # over the basis without NL_ASSERTION (or with it when judged: then == reward_nl)
    termination: str
    db_match: bool | None = None
    communicate: list[bool] = dataclasses.field(default_factory=list)
    nl: list[bool] | None = None  # the judge's verdicts, when a judge ran
    reward_nl: float | None = None  # with NL_ASSERTION, when a judge ran
    reasons: list[str] = dataclasses.field(default_factory=list)  # why below 1

    @property
    def success(self) -> bool:
        return is_successful(self.reward)


def score_trial(basis: Sequence[str], termination: str, final_db_hash: str | None, gold_db_hash: str | None,
                infos: Sequence[str], assistant_texts: Sequence[str], nl: list[bool] | None = None) -> TrialScore:
    """The reward of one trial (see the module docstring)."""
    unknown = sorted(set(basis) - SCORED_BASES)
    if unknown:
        raise ValueError(f"reward_basis {unknown} is not reproduced here (no retail/airline task uses it)")
    out = TrialScore(1.0, termination)
    if final_db_hash is not None and gold_db_hash is not None:  # reported for every trial, scored for stopped ones
        out.db_match = final_db_hash == gold_db_hash
    out.communicate = communicate_checks(infos, assistant_texts)
    if termination not in STOPPED:
        out.reward, out.reasons = 0.0, [f"ended by {termination}"]
        return out
    parts: dict[str, float] = {}
    if "DB" in basis:
        parts["DB"] = 1.0 if out.db_match else 0.0
        if not out.db_match:
            out.reasons.append("final DB differs from the expected actions' DB" if out.db_match is False
                               else "no final DB to compare")
    if "COMMUNICATE" in basis:
        parts["COMMUNICATE"] = 1.0 if all(out.communicate) else 0.0
        missed = [s for s, ok in zip(infos, out.communicate, strict=True) if not ok]
        if missed:
            out.reasons.append(f"not communicated: {missed}")
    reward = 1.0
    for v in parts.values():
        reward *= v
    out.reward = reward
    if nl is not None:
        out.nl = list(nl)
        nl_reward = 1.0 if all(nl) else 0.0
        out.reward_nl = reward * (nl_reward if "NL_ASSERTION" in basis else 1.0)
    return out


def summarize_trials(trials: Mapping[str, Sequence[TrialScore]]) -> dict[str, Any]:
    """pass^k for k = 1 .. the fewest trials of any task (fractions), the mean reward, the tasks
    below 1 with their reasons, and the same over ``reward_nl`` when every trial was judged."""
    if not trials:
        return {"tasks": 0, "pass_1": None, "pass_hat_k": {}, "avg_reward": None, "below_1": {}}
    max_k = min(len(v) for v in trials.values())

    def pass_k(get: Any) -> dict[str, float]:
        return {str(k): sum(pass_hat_k(len(v), sum(is_successful(get(t)) for t in v), k)
                            for v in trials.values()) / len(trials) for k in range(1, max_k + 1)}

    flat = [t for v in trials.values() for t in v]
    out: dict[str, Any] = {"tasks": len(trials), "trials": len(flat)}
    out["pass_hat_k"] = pass_k(lambda t: t.reward)
    out["pass_1"] = out["pass_hat_k"]["1"]
    out["avg_reward"] = sum(t.reward for t in flat) / len(flat)
    out["below_1"] = {tid: sorted({r for t in v if not t.success for r in t.reasons} or {"reward < 1"})
                      for tid, v in trials.items() if not all(t.success for t in v)}
    out["db_match"] = sum(bool(t.db_match) for t in flat) / len(flat)
    out["terminations"] = {r: sum(t.termination == r for t in flat) for r in sorted({t.termination for t in flat})}
    if all(t.reward_nl is not None for t in flat):
        out["nl"] = {"pass_hat_k": pass_k(lambda t: t.reward_nl),
                     "assertions_met": _mean([x for t in flat for x in t.nl or []])}
    return out


def _mean(xs: Sequence[bool]) -> float | None:
    return sum(xs) / len(xs) if xs else None


# ---- the NL-assertion judge (optional) --------------------------------------------------------------
JUDGE_SYSTEM = """You grade a customer-service conversation against a list of assertions about the agent.
For each assertion decide from the transcript alone whether the agent's behaviour satisfies it.
Answer with JSON only, one object: {"results": [{"assertion": "<text>", "met": true|false}, ...]}
in the order the assertions are given."""


def judge_messages(transcript: Sequence[Mapping[str, Any]], assertions: Sequence[str]) -> list[dict[str, str]]:
    lines = []
    for m in transcript:
        if m.get("role") in ("user", "assistant") and m.get("content"):
            lines.append(f"{m['role']}: {m['content']}")
        for c in m.get("tool_calls") or []:
            lines.append(f"assistant (tool call): {c['function']['name']}({c['function']['arguments']})")
        if m.get("role") == "tool":
            lines.append(f"tool: {m.get('content')}")
    body = "Transcript:\n" + "\n".join(lines) + "\n\nAssertions:\n" + "\n".join(f"- {a}" for a in assertions)
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": body}]


def parse_judge(text: str, n: int) -> list[bool]:
    """The judge's verdicts; a reply that is not the JSON asked for counts every assertion unmet."""
    start, end = text.find("{"), text.rfind("}")
    try:
        results = json.loads(text[start:end + 1])["results"]
        verdicts = [r["met"] is True for r in results]
    except (ValueError, KeyError, TypeError):
        return [False] * n
    return verdicts if len(verdicts) == n else [False] * n
