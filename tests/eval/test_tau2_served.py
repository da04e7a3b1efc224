"""``eval all --tau2-domains``: the policy is served in-process on a local port, tau2's CLI reaches it
through litellm-style llm args, and its results land in the one report.

tau2 itself is not installed here; a stand-in ``tau2`` package (run through our judge shim, as
the real one would be) makes one real chat request to the agent endpoint per trial with the
model name and ``api_base`` it was given, and scores a trial 1 when the endpoint answered. This
tests our wiring (serve -> CLI args -> shim -> results -> summary -> report), not tau2.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.eval.test_tau2 import _fake_tau2_package

STAND_IN_CLI = '''
import json, sys, urllib.request
from pathlib import Path
from tau2.evaluator import evaluator_nl_assertions as ev

def main():
    argv = sys.argv[1:]
    arg = lambda name: argv[argv.index(name) + 1]
    domain, save_to, trials = arg("--domain"), Path(arg("--save-to")), int(arg("--num-trials"))
    model = arg("--agent-llm").removeprefix("openai/")
    base = json.loads(arg("--agent-llm-args"))["api_base"]
    sims, seen = [], []
    for trial in range(trials):
        body = json.dumps({"model": model, "max_tokens": 8, "temperature": 0,
                           "messages": [{"role": "user", "content": "Hi, I need to change my flight."}]}).encode()
        req = urllib.request.Request(base + "/chat/completions", data=body, headers={"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=120) as resp:
            ok = resp.status == 200 and "choices" in json.loads(resp.read())
        seen.append(ok)
        sims.append({"id": f"s{trial}", "task_id": "t1", "trial": trial, "termination_reason": "user_stop",
                     "reward_info": {"reward": 1.0 if ok else 0.0}})
    save_to.mkdir(parents=True, exist_ok=True)
    (save_to / "results.json").write_text(json.dumps({
        "info": {"num_trials": trials, "environment_info": {"domain_name": domain},
                 "agent_info": {"llm": arg("--agent-llm")}, "user_info": {"llm": arg("--user-llm")}},
        "tasks": [{"id": "t1"}], "simulations": sims}))
    (save_to / "seen.json").write_text(json.dumps({"ok": seen, "judge": ev.DEFAULT_LLM_NL_ASSERTIONS,
                                                   "judge_base": ev.DEFAULT_LLM_NL_ASSERTIONS_ARGS.get("api_base")}))
'''


def test_eval_all_serves_the_policy_to_tau2(tiny_policy_dir: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from prove_jax.eval.__main__ import main

    monkeypatch.setenv("PYTHONPATH", str(_fake_tau2_package(tmp_path / "site", STAND_IN_CLI)))
    out = tmp_path / "report"
    main(["all", "--model", str(tiny_policy_dir), "--name", "tiny", "--no-bfcl", "--tau2-domains", "airline",
          "--tau2-runner", "tau2-cli", "--tau2-trials", "2", "--tau2-python", sys.executable, "--dtype", "float32", "--slots", "2",
          "--max-len", "512", "--max-chunk", "128", "--out", str(out)])
    tau2_dir = out / "tiny" / "tau2"
    seen = json.loads((tau2_dir / "airline" / "seen.json").read_text())
    assert seen["ok"] == [True, True]  # the served policy answered each trial's request
    assert seen["judge"] == "openai/tiny" and seen["judge_base"].startswith("http://127.0.0.1:")
    row = json.loads((out / "report.json").read_text())["rows"][0]
    assert row["tau2"]["domains"]["airline"]["pass^1"] == 100.0 and row["tau2"]["avg"] == 100.0
    assert row["headline"]["tau2_avg"] == 1.0 and row["tau2"]["comparable_to_leaderboard"] is False
    md = (out / "report.md").read_text()
    assert "| tiny | – | 100.0 | – | – |" in md and "NOT comparable" in md
