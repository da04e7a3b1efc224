"""τ²-bench recipe: results parsing, pass^k, the ``tau2 run`` argv, the judge shim, orchestration.

No tau2 is installed and nothing leaves the machine. Results fixtures follow tau2 v1.x's
``Results`` model (``src/tau2/data_model/simulation.py``); the expected pass^k values below are
worked out by hand from C(successes, k) / C(trials, k).
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from prove_jax.eval import tau2 as t2

# Every flag of `tau2 run` in tau2 v1.0.1's src/tau2/cli.py that our command may use.
TAU2_RUN_FLAGS = {
    "--domain", "--num-trials", "--agent", "--agent-llm", "--agent-llm-args", "--user", "--user-llm",
    "--user-llm-args", "--task-set-name", "--task-split-name", "--task-ids", "--num-tasks", "--max-steps",
    "--max-errors", "--timeout", "--save-to", "--max-concurrency", "--seed", "--log-level", "--auto-resume",
}


# ---- fixtures in tau2's results format ----------------------------------------------------------


def _sim(task_id: str, trial: int, reward: float | None, reason: str = "user_stop") -> dict[str, Any]:
    reward_info = None if reward is None else {
        "reward": reward, "db_check": {"db_match": reward == 1.0, "db_reward": float(reward == 1.0)},
        "env_assertions": None, "action_checks": None, "nl_assertions": None, "communicate_checks": None,
        "reward_basis": ["DB", "NL_ASSERTION"], "reward_breakdown": {"DB": reward, "NL_ASSERTION": 1.0},
        "info": None}
    return {
        "id": f"sim-{task_id}-{trial}-{reason}", "task_id": task_id, "timestamp": "2026-01-01T00:00:00",
        "start_time": "2026-01-01T00:00:00", "end_time": "2026-01-01T00:01:00", "duration": 60.0,
        "termination_reason": reason, "agent_cost": 0.0, "user_cost": 0.0, "reward_info": reward_info,
        "messages": [{"role": "assistant", "content": "Hi! How can I help you?", "turn_idx": 0}],
        "trial": trial, "seed": 300 + trial, "mode": "half_duplex",
    }


def _results(domain: str, sims: list[dict[str, Any]], num_trials: int = 4,
             task_ids: list[str] | None = None) -> dict[str, Any]:
    ids = task_ids if task_ids is not None else sorted({s["task_id"] for s in sims})
    return {
        "timestamp": "2026-01-01T00:00:00",
        "info": {
            "git_commit": "fc0055d", "num_trials": num_trials, "max_steps": 200, "max_errors": 10, "seed": 300,
            "user_info": {"implementation": "user_simulator", "llm": "openai/user",
                          "llm_args": {"temperature": 0.0}, "global_simulation_guidelines": "..."},
            "agent_info": {"implementation": "llm_agent", "llm": "openai/agent", "llm_args": {"temperature": 0.0}},
            "environment_info": {"domain_name": domain, "policy": "...", "tool_defs": None},
        },
        "tasks": [{"id": i, "description": None, "user_scenario": {"instructions": "..."},
                   "evaluation_criteria": {"actions": [], "reward_basis": ["DB"]}} for i in ids],
        "simulations": sims,
    }


def _mixed() -> list[dict[str, Any]]:
    """4 tasks, 4 trials; task 3 is missing trial 3, so k stops at 3.

    task 0: 1 1 1 1           -> s=4/4: pass^1 1,   pass^2 1,   pass^3 1
    task 1: 1 .9999999 0 .99  -> s=2/4: pass^1 1/2, pass^2 1/6, pass^3 0
    task 2: 0 0 0 0           -> s=0/4: 0, 0, 0
    task 3: 1 1 0 (missing)   -> s=2/3: pass^1 2/3, pass^2 1/3, pass^3 0
    mean: pass^1 (1 + 1/2 + 2/3)/4 = 13/24, pass^2 (1 + 1/6 + 1/3)/4 = 3/8, pass^3 1/4
    """
    rows = {"0": [1.0, 1.0, 1.0, 1.0], "1": [1.0, 0.9999999, 0.0, 0.99], "2": [0.0] * 4, "3": [1.0, 1.0, 0.0]}
    return [_sim(t, i, r) for t, rs in rows.items() for i, r in enumerate(rs)]


def _write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


# ---- results and pass^k -----------------------------------------------------------------------


def test_pass_hat_k_by_hand() -> None:
    assert t2.pass_hat_k(4, 2, 1) == pytest.approx(0.5)
    assert t2.pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)
    assert t2.pass_hat_k(4, 3, 3) == pytest.approx(0.25)
    assert t2.pass_hat_k(4, 1, 2) == 0.0
    with pytest.raises(ValueError):
        t2.pass_hat_k(3, 2, 4)


def test_success_tolerance() -> None:
    assert t2.is_successful(0.9999999) and t2.is_successful(1.0000005)
    assert not t2.is_successful(0.99) and not t2.is_successful(None)


def test_read_results_fields(tmp_path: Path) -> None:
    res = t2.read_results(_write(tmp_path / "retail" / "results.json", _results("retail", _mixed())))
    assert res.domain == "retail" and res.num_trials == 4 and res.agent_llm == "openai/agent"
    assert len(res.simulations) == 15 and res.task_ids == ["0", "1", "2", "3"]
    s = res.simulations[5]
    assert (s.task_id, s.trial, s.reward, s.termination_reason) == ("1", 1, 0.9999999, "user_stop")


def test_summarize_domain_mixed_by_hand(tmp_path: Path) -> None:
    res = t2.read_results(_write(tmp_path / "r.json", _results("retail", _mixed())))
    s = t2.summarize_domain(res)
    assert list(s["pass_hat_k"]) == ["1", "2", "3"]  # the missing trial caps k at 3
    assert [k for k in s if k.startswith("pass^")] == ["pass^1", "pass^2", "pass^3"]  # flat keys too
    assert s["pass^1"] == pytest.approx(100 * 13 / 24)
    assert s["pass_hat_k"]["2"] == pytest.approx(100 * 3 / 8)
    assert s["pass_hat_k"]["3"] == pytest.approx(25.0)
    assert (s["n_tasks"], s["n_simulations"], s["missing_simulations"]) == (4, 15, 1)
    assert any("fewer than 4 trials" in w for w in s["warnings"])


def test_summarize_domain_full_trials(tmp_path: Path) -> None:
    """a: 1 1 1 0 (pass^k .75 .5 .25 0); b: all 1 -> 87.5 75 62.5 50."""
    sims = [_sim("a", i, r) for i, r in enumerate([1.0, 1.0, 1.0, 0.0])] + [_sim("b", i, 1.0) for i in range(4)]
    s = t2.summarize_domain(t2.read_results(_write(tmp_path / "r.json", _results("airline", sims))))
    assert s["pass_hat_k"] == pytest.approx({"1": 87.5, "2": 75.0, "3": 62.5, "4": 50.0})
    assert s["missing_simulations"] == 0 and s["warnings"] == []


def test_infrastructure_errors_fail_or_excluded(tmp_path: Path) -> None:
    """a: 1 1 1 infra; b: 1 1 1 agent_error (no reward_info: a failure either way).

    fail:    a 3/4, b 3/4            -> pass^1 75, pass^4 0
    exclude: a 3/3, b 3/4, k <= 3    -> pass^1 (1 + 3/4)/2 = 87.5, pass^3 (1 + 1/4)/2 = 62.5
    """
    sims = [_sim("a", i, 1.0) for i in range(3)] + [_sim("a", 3, None, "infrastructure_error")]
    sims += [_sim("b", i, 1.0) for i in range(3)] + [_sim("b", 3, None, "agent_error")]
    res = t2.read_results(_write(tmp_path / "r.json", _results("telecom", sims)))
    fail = t2.summarize_domain(res)
    assert fail["pass_hat_k"] == pytest.approx({"1": 75.0, "2": 50.0, "3": 25.0, "4": 0.0})
    assert fail["n_infrastructure_errors"] == 1 and fail["n_simulations"] == 8
    assert any("counted as failures" in w for w in fail["warnings"])
    excl = t2.summarize_domain(res, infra_errors="exclude")
    assert excl["pass_hat_k"] == pytest.approx({"1": 87.5, "2": 75.0, "3": 62.5})
    assert excl["n_simulations"] == 7
    assert excl["termination_reasons"] == {"agent_error": 1, "infrastructure_error": 1, "user_stop": 6}
    with pytest.raises(ValueError):
        t2.summarize_domain(res, infra_errors="ignore")


def test_tasks_without_simulations_reported(tmp_path: Path) -> None:
    data = _results("airline", [_sim("a", 0, 1.0)], num_trials=1, task_ids=["a", "b"])
    s = t2.summarize_domain(t2.read_results(_write(tmp_path / "r.json", data)))
    assert s["pass^1"] == 100.0 and s["tasks_without_simulations"] == ["b"]


def test_read_results_dir_format_index(tmp_path: Path) -> None:
    data = _results("retail", [], num_trials=2)
    data["simulation_index"] = [{"id": "x", "task_id": "7", "trial": 0, "reward": 1.0, "termination_reason": "user_stop"},
                                {"id": "y", "task_id": "7", "trial": 1, "reward": 0.0, "termination_reason": "max_steps"}]
    res = t2.read_results(_write(tmp_path / "d" / "results.json", data).parent)
    assert [(s.task_id, s.reward) for s in res.simulations] == [("7", 1.0), ("7", 0.0)]
    assert t2.summarize_domain(res)["pass^1"] == 50.0


def test_read_results_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no tau2 results"):
        t2.read_results(tmp_path / "nope.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not JSON"):
        t2.read_results(tmp_path / "bad.json")
    with pytest.raises(ValueError, match="no 'simulations'"):
        t2.read_results(_write(tmp_path / "other.json", {"foo": 1}))
    data = _results("retail", [_sim("a", 0, 1.0)])
    data["simulations"].append({"trial": 1})
    with pytest.raises(ValueError, match="simulation 1"):
        t2.read_results(_write(tmp_path / "r.json", data))


def test_find_results_v1_dir_and_v0_file(tmp_path: Path) -> None:
    assert t2.find_results(tmp_path / "airline") is None
    _write(tmp_path / "old.json", {})
    assert t2.find_results(tmp_path / "old") == tmp_path / "old.json"
    _write(tmp_path / "airline" / "results.json", {})
    assert t2.find_results(tmp_path / "airline") == tmp_path / "airline" / "results.json"


# ---- the command --------------------------------------------------------------------------------


def _flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_command_local_endpoints(tmp_path: Path) -> None:
    cfg = t2.Tau2Config(agent_model="agent", agent_base_url="http://127.0.0.1:8000/v1", user_model="user",
                        user_base_url="http://127.0.0.1:8001/v1", num_trials=4, max_concurrency=8)
    argv = t2.tau2_command(cfg, "retail", tmp_path / "retail")
    # judge defaults to the user simulator, so tau2 runs through the shim
    assert argv[:2] == [sys.executable, str(tmp_path / t2.SHIM_NAME)]
    assert json.loads(argv[2]) == {"model": "openai/user", "llm_args": {
        "temperature": 0.0, "api_base": "http://127.0.0.1:8001/v1", "api_key": "EMPTY"}}
    assert argv[3] == "run"
    assert _flag(argv, "--domain") == "retail"
    assert _flag(argv, "--agent-llm") == "openai/agent"
    assert json.loads(_flag(argv, "--agent-llm-args")) == {
        "temperature": 0.0, "api_base": "http://127.0.0.1:8000/v1", "api_key": "EMPTY"}
    assert _flag(argv, "--user-llm") == "openai/user"
    assert json.loads(_flag(argv, "--user-llm-args"))["api_base"] == "http://127.0.0.1:8001/v1"
    assert (_flag(argv, "--num-trials"), _flag(argv, "--task-split-name"), _flag(argv, "--seed")) == ("4", "base", "300")
    assert _flag(argv, "--max-concurrency") == "8" and _flag(argv, "--save-to") == str(tmp_path / "retail")
    assert "--auto-resume" not in argv and "--num-tasks" not in argv
    assert {a for a in argv if a.startswith("--")} <= TAU2_RUN_FLAGS


def test_command_hosted_models_and_options(tmp_path: Path) -> None:
    cfg = t2.Tau2Config(agent_model="gpt-4.1", agent_base_url=None, tau2_executable="/opt/tau2",
                        num_tasks=5, task_ids=("3", "4"), resume=True, task_split="test")
    argv = t2.tau2_command(cfg, "airline", tmp_path / "airline")
    assert argv[:2] == ["/opt/tau2", "run"]  # no local judge: tau2's own CLI
    assert _flag(argv, "--agent-llm") == "gpt-4.1" and json.loads(_flag(argv, "--agent-llm-args")) == {"temperature": 0.0}
    assert _flag(argv, "--num-tasks") == "5" and argv[argv.index("--task-ids") + 1:][:2] == ["3", "4"]
    assert "--auto-resume" in argv and _flag(argv, "--task-split-name") == "test"
    assert {a for a in argv if a.startswith("--")} <= TAU2_RUN_FLAGS
    py = t2.tau2_command(t2.Tau2Config(agent_base_url=None, tau2_python="/env/bin/python"), "mock", tmp_path / "m")
    assert py[:4] == ["/env/bin/python", "-m", "tau2.cli", "run"]


def test_user_and_judge_defaults() -> None:
    cfg = t2.Tau2Config(agent_model="agent", agent_base_url="http://h:1/v1")
    assert cfg.user() == ("agent", "http://h:1/v1") and cfg.judge() == ("agent", "http://h:1/v1")
    cfg = t2.Tau2Config(agent_base_url="http://h:1/v1", user_model="gpt-4.1-2025-04-14")
    assert cfg.judge() == (None, None) and t2.judge_spec(cfg) is None
    cfg = t2.Tau2Config(user_model="u", user_base_url="http://h:2/v1", judge_base_url="http://h:3/v1")
    assert cfg.judge() == ("u", "http://h:3/v1")
    assert t2.litellm_model("openai/x", "http://h") == "openai/x" and t2.litellm_model("Qwen/Q", "u") == "openai/Qwen/Q"


# ---- the judge shim -----------------------------------------------------------------------------


def test_patch_judge_on_fake_modules() -> None:
    config = types.ModuleType("tau2.config")
    config.DEFAULT_LLM_NL_ASSERTIONS = "gpt-4.1-2025-04-14"
    config.DEFAULT_LLM_NL_ASSERTIONS_ARGS = shared = {"temperature": 0.0}
    evaluator = types.ModuleType("tau2.evaluator.evaluator_nl_assertions")
    evaluator.DEFAULT_LLM_NL_ASSERTIONS = config.DEFAULT_LLM_NL_ASSERTIONS  # `from tau2.config import ...`
    evaluator.DEFAULT_LLM_NL_ASSERTIONS_ARGS = shared
    other = types.ModuleType("tau2.other")
    other.DEFAULT_LLM_AGENT = "gpt-4.1-2025-04-14"
    new_args = {"temperature": 0.0, "api_base": "http://127.0.0.1:8001/v1", "api_key": "EMPTY"}
    done = t2.patch_judge([config, evaluator, other], "openai/judge", new_args)
    assert done == ["tau2.config", "tau2.evaluator.evaluator_nl_assertions"]
    assert config.DEFAULT_LLM_NL_ASSERTIONS == evaluator.DEFAULT_LLM_NL_ASSERTIONS == "openai/judge"
    assert evaluator.DEFAULT_LLM_NL_ASSERTIONS_ARGS is shared and shared == new_args  # updated in place
    assert other.DEFAULT_LLM_AGENT == "gpt-4.1-2025-04-14" and not hasattr(other, "DEFAULT_LLM_NL_ASSERTIONS")


FAKE_TAU2_CLI = '''
import json, os, sys
from pathlib import Path
import tau2.config
from tau2.evaluator import evaluator_nl_assertions as ev

def main():
    argv = sys.argv[1:]
    seen = {"argv0": sys.argv[0], "judge": ev.DEFAULT_LLM_NL_ASSERTIONS,
            "judge_args": ev.DEFAULT_LLM_NL_ASSERTIONS_ARGS, "config_judge": tau2.config.DEFAULT_LLM_NL_ASSERTIONS}
    save_to = Path(argv[argv.index("--save-to") + 1])
    domain = argv[argv.index("--domain") + 1]
    Path(os.environ["FAKE_TAU2_SEEN"], domain + ".json").write_text(json.dumps({"argv": argv, **seen}))
    if domain == "retail":
        sys.exit("litellm.APIConnectionError: judge unreachable")
    save_to.mkdir(parents=True, exist_ok=True)
    (save_to / "results.json").write_text(os.environ["FAKE_TAU2_RESULTS_" + domain])
'''


def _fake_tau2_package(root: Path, cli: str = FAKE_TAU2_CLI) -> Path:
    """A stand-in `tau2` package (config, evaluator, ``cli``) with tau2's names for the judge settings."""
    pkg = root / "tau2"
    (pkg / "evaluator").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "config.py").write_text('DEFAULT_LLM_NL_ASSERTIONS = "gpt-4.1-2025-04-14"\n'
                                   'DEFAULT_LLM_NL_ASSERTIONS_ARGS = {"temperature": 0.0}\n')
    (pkg / "evaluator" / "__init__.py").write_text("")
    (pkg / "evaluator" / "evaluator_nl_assertions.py").write_text(
        "from tau2.config import DEFAULT_LLM_NL_ASSERTIONS, DEFAULT_LLM_NL_ASSERTIONS_ARGS\n")
    (pkg / "cli.py").write_text(cli)
    return root


def test_shim_source_is_self_contained() -> None:
    src = t2.shim_source()
    assert "import prove_jax" not in src and "from prove_jax" not in src  # runs in tau2's env
    assert "def patch_judge(" in src
    compile(src, "shim", "exec")


def test_shim_refuses_a_tau2_without_the_judge_setting(tmp_path: Path) -> None:
    root = _fake_tau2_package(tmp_path / "site")
    (root / "tau2" / "config.py").write_text("DEFAULT_LLM_AGENT = 'x'\n")
    (root / "tau2" / "evaluator" / "evaluator_nl_assertions.py").write_text("")
    shim = tmp_path / t2.SHIM_NAME
    shim.write_text(t2.shim_source())
    spec = json.dumps({"model": "openai/j", "llm_args": {}})
    r = subprocess.run([sys.executable, str(shim), spec, "run"], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(root)})
    assert r.returncode != 0 and "not supported" in r.stderr


# ---- orchestration (stand-ins: these test OUR orchestration only, not tau2) ----------------------


def test_run_tau2_through_shim_with_stand_in_tau2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stand-in `tau2` package run through the generated judge shim (tests our orchestration only).

    airline and telecom write results; retail exits non-zero and must be recorded as failed while
    the others are still summarised; the shim must have redirected the judge before tau2's main ran.
    """
    _fake_tau2_package(tmp_path / "site")
    seen = tmp_path / "seen"
    seen.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    monkeypatch.setenv("FAKE_TAU2_SEEN", str(seen))
    full = [_sim("a", i, 1.0) for i in range(4)] + [_sim("b", i, r) for i, r in enumerate([1.0, 0.0, 0.0, 0.0])]
    monkeypatch.setenv("FAKE_TAU2_RESULTS_airline", json.dumps(_results("airline", full)))
    monkeypatch.setenv("FAKE_TAU2_RESULTS_telecom", json.dumps(_results("telecom", _mixed())))
    cfg = t2.Tau2Config(agent_base_url="http://127.0.0.1:8000/v1", user_model="user",
                        user_base_url="http://127.0.0.1:8001/v1", tau2_python=sys.executable)
    summary = t2.run_tau2(cfg, tmp_path / "out")

    assert set(summary["domains"]) == {"airline", "telecom"}
    fail = summary["failed_domains"]["retail"]
    assert fail["returncode"] == 1 and "judge unreachable" in fail["stderr_tail"]
    assert summary["domains"]["airline"]["pass^1"] == pytest.approx(62.5)  # (1 + 1/4) / 2
    assert summary["domains"]["telecom"]["pass^1"] == pytest.approx(100 * 13 / 24)
    assert summary["avg"] == pytest.approx((62.5 + 100 * 13 / 24) / 2)
    assert summary["avg_domains"] == ["airline", "telecom"] and not summary["avg_is_paper_tau2_avg"]
    assert summary["judge"] == {"model": "user", "base_url": "http://127.0.0.1:8001/v1", "local": True}
    assert summary["user_simulator"]["local"] and summary["comparable_to_leaderboard"] is False
    assert "NOT comparable" in summary["note"] and "judge is user (local)" in summary["note"]
    assert json.loads((tmp_path / "out" / "tau2.json").read_text())["avg"] == summary["avg"]

    got = json.loads((seen / "airline.json").read_text())
    assert got["judge"] == got["config_judge"] == "openai/user"
    assert got["judge_args"]["api_base"] == "http://127.0.0.1:8001/v1"
    assert got["argv0"] == "tau2" and got["argv"][0] == "run"
    assert got["argv"][got["argv"].index("--save-to") + 1] == str((tmp_path / "out" / "airline").resolve())
    assert (tmp_path / "out" / "airline.log").exists()


def _stand_in_executable(tmp_path: Path) -> Path:
    exe = tmp_path / "tau2"
    exe.write_text(f"#!{sys.executable}\n" + '''
import json, os, sys
from pathlib import Path
argv = sys.argv[1:]
domain = argv[argv.index("--domain") + 1]
save_to = Path(argv[argv.index("--save-to") + 1])
if domain == "retail":
    print("Traceback: boom", file=sys.stderr)
    sys.exit(3)
if domain == "telecom":
    sys.exit(0)  # exits cleanly but writes nothing
save_to.mkdir(parents=True, exist_ok=True)
(save_to / "results.json").write_text(os.environ["FAKE_RESULTS"])
if domain == "mock":
    sys.exit("interrupted half-way")  # partial results and a non-zero exit: still a failure
''')
    exe.chmod(0o755)
    return exe


def test_run_tau2_stand_in_executable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stand-in `tau2` executable (tests our orchestration only): a crash, a silent no-results exit."""
    sims = [_sim("a", i, 1.0) for i in range(2)]
    monkeypatch.setenv("FAKE_RESULTS", json.dumps(_results("airline", sims, num_trials=2)))
    cfg = t2.Tau2Config(agent_model="gpt-4.1-2025-04-14", agent_base_url=None, num_trials=2,
                        domains=("airline", "retail", "telecom", "mock"),
                        tau2_executable=str(_stand_in_executable(tmp_path)))
    summary = t2.run_tau2(cfg, tmp_path / "out")
    assert summary["domains"]["airline"]["pass_hat_k"] == {"1": 100.0, "2": 100.0}
    assert summary["failed_domains"]["retail"]["returncode"] == 3
    assert "boom" in summary["failed_domains"]["retail"]["stderr_tail"]
    assert summary["failed_domains"]["telecom"]["error"] == "tau2 left no results file"
    assert summary["failed_domains"]["mock"]["returncode"] == 1 and list(summary["domains"]) == ["airline"]
    assert summary["judge"]["local"] is False
    assert summary["not_comparable_because"] == ["2 trial(s), the leaderboard uses 4"]
    # existing results are neither clobbered nor silently resumed, and the summary stays
    before = (tmp_path / "out" / "tau2.json").read_text()
    with pytest.raises(FileExistsError, match="--resume"):
        t2.run_tau2(cfg, tmp_path / "out")
    assert (tmp_path / "out" / "tau2.json").read_text() == before
    assert t2.run_tau2(dataclasses.replace(cfg, resume=True), tmp_path / "out")["domains"]["airline"]


def test_run_tau2_missing_executable(tmp_path: Path) -> None:
    cfg = t2.Tau2Config(domains=("mock",), agent_base_url=None, tau2_executable=str(tmp_path / "no-tau2"))
    fail = t2.run_tau2(cfg, tmp_path / "out")["failed_domains"]["mock"]
    assert fail["returncode"] is None and "could not start" in fail["stderr_tail"]


def test_main_summarize_only(tmp_path: Path) -> None:
    _write(tmp_path / "airline" / "results.json", _results("airline", [_sim("a", 0, 1.0)], num_trials=1))
    rc = t2.main(["--out-dir", str(tmp_path), "--summarize-only", "--num-trials", "1", "--domains", "airline",
                  "retail"])
    summary = json.loads((tmp_path / "tau2.json").read_text())
    assert rc == 1 and summary["domains"]["airline"]["pass^1"] == 100.0
    assert "no tau2 results" in summary["failed_domains"]["retail"]["error"]
    # a second pass keeps who played user/judge from the first summary, not from the CLI defaults
    summary["config"].update(user_model="sim", user_base_url="http://h:9/v1")
    (tmp_path / "tau2.json").write_text(json.dumps(summary))
    t2.main(["--out-dir", str(tmp_path), "--summarize-only", "--domains", "airline"])
    again = json.loads((tmp_path / "tau2.json").read_text())
    assert again["user_simulator"] == again["judge"] == {"model": "sim", "base_url": "http://h:9/v1", "local": True}
    assert again["config"]["num_trials"] == 1 and list(again["domains"]) == ["airline"]


# ---- serving ------------------------------------------------------------------------------------


STAND_IN_SERVER = '''
import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.end_headers()
        self.wfile.write(b'{"data": []}')
    def log_message(self, *a):
        pass
open(sys.argv[2], "w").write(str(os.getpid()))
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
'''


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_served_waits_for_readiness_and_always_stops(tmp_path: Path) -> None:
    port, pidfile = _free_port(), tmp_path / "pid"
    cmd = [sys.executable, "-c", STAND_IN_SERVER, str(port), str(pidfile)]
    with pytest.raises(KeyboardInterrupt), t2.served("unused", port, "agent", command=cmd, timeout=30) as url:
        assert url == f"http://127.0.0.1:{port}/v1"
        t2.wait_ready(url, timeout=1)  # already up
        raise KeyboardInterrupt
    with pytest.raises(ProcessLookupError):
        os.kill(int(pidfile.read_text()), 0)


def test_start_server_fails_fast_when_server_dies() -> None:
    with pytest.raises(RuntimeError, match="exited with code 2"):
        t2.start_server("unused", _free_port(), "agent", command=[sys.executable, "-c", "raise SystemExit(2)"],
                        timeout=30)


def test_launch_script_is_valid_bash() -> None:
    script = Path(__file__).resolve().parents[2] / "launch" / "tau2.sh"
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
    text = script.read_text()
    assert "trap" in text and "prove_jax.serve" in text and "prove_jax.eval.tau2" in text
