"""τ²-bench (sierra-research/tau2-bench) through its own CLI, against our served policy, as pass^k.

``python -m prove_jax.eval tau2`` is the native harness on the ``tau2-*-mcp-eval`` wheels
(:mod:`prove_jax.eval.tau2_run`, offline); this module, ``python -m prove_jax.eval.tau2``, is the
recipe for a tau2 install of your own, and the suite's (``eval all --tau2-domains``) runner.
We never vendor or install tau2; this module drives its ``tau2 run`` CLI and reads the results
file it writes. Target: tau2 v1.x (``--task-split-name`` and ``--auto-resume`` need v1.0+).

Recipe
------
1. Install tau2 yourself from its repository (it is NOT the ``tau2`` package on PyPI) into a
   Python >= 3.12 environment — this venv, or another one given with ``--tau2-python``::

       git clone https://github.com/sierra-research/tau2-bench && pip install -e ./tau2-bench

   An editable install finds the domain data in the clone; otherwise set ``TAU2_DATA_DIR`` (or
   ``--tau2-data-dir``) to the clone's ``data`` directory.
2. Serve the trained policy (and, if you like, a separate user-simulator model) over the OpenAI
   API: ``python -m prove_jax.serve --model RUN_DIR --port 8000 --served-model-name agent``.
   ``launch/tau2.sh`` does steps 2–3 and stops the servers afterwards.
3. Run ``python -m prove_jax.eval.tau2 --out-dir OUT --agent-base-url http://127.0.0.1:8000/v1
   [--user-model user --user-base-url http://127.0.0.1:8001/v1]``. Each domain runs as its own
   ``tau2 run`` subprocess; models reach the servers through litellm's OpenAI-compatible
   provider (model ``openai/<served name>``, llm args ``{"api_base": ..., "api_key": "EMPTY"}``).
   Results land in ``OUT/<domain>/results.json``; the summary in ``OUT/tau2.json``.

Who plays whom. The user simulator defaults to the policy's own endpoint (give ``--user-model`` /
``--user-base-url`` for a separate one); the judge defaults to the user simulator. A model given
without a base URL goes through tau2's own provider routing (e.g. OpenAI's gpt-4.1).

The judge. Retail tasks score natural-language assertions with an LLM whose model tau2
hard-codes (``tau2.config.DEFAULT_LLM_NL_ASSERTIONS``; no CLI flag). When the judge is not tau2's
default we run tau2 through a small generated shim (``OUT/_tau2_judge_shim.py``) that imports
tau2, points that setting (and its llm args) at the judge, then calls tau2's own CLI ``main``.
tau2 parses the judge's reply as JSON: a judge model that does not answer in JSON makes those
simulations fail. litellm logs "model isn't mapped yet" for served names (cost only; harmless).

Scores. pass^k per task is C(successes, k) / C(trials, k), averaged over tasks, success = reward
within 1e-6 of 1; like tau2 we cap k at the fewest trials any task has. A simulation tau2 gave
up on after its retries (``infrastructure_error``: a crash, our server refusing a too-long
prompt, a dropped connection) counts as a failed trial by default (``--infra-errors fail``);
tau2's code means to drop them (``exclude``), but with pandas >= 3 its own printout counts them
as failures. Numbers are percent. "avg" is the mean pass^1 over the domains summarised (the
paper's "τ² avg" when those are airline, retail and telecom). With a local user simulator or
judge, fewer than 4 trials, or not the full ``base`` split, scores are NOT comparable to the
public leaderboard (gpt-4.1 as user simulator and judge, 4 trials) and the summary says so.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import inspect
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from prove_jax.cli import add_dataclass_args, dataclass_from_args
from prove_jax.eval.settings import LEADERBOARD_TRIALS, PAPER_DOMAINS, Tau2Config, flag_field
from prove_jax.eval.tau2_results import (  # noqa: F401 - re-exported: tau2.read_results etc.
    INFRA_ERROR,
    SUCCESS_TOL,
    Simulation,
    Tau2Results,
    find_results,
    is_successful,
    pass_hat_k,
    read_results,
    summarize_domain,
)

TAU2_DEFAULT_LLM = "gpt-4.1-2025-04-14"  # tau2.config: DEFAULT_LLM_AGENT/USER/NL_ASSERTIONS
SHIM_NAME = "_tau2_judge_shim.py"
SUMMARY_NAME = "tau2.json"


def litellm_model(name: str, base_url: str | None) -> str:
    """The litellm model string: OpenAI-compatible endpoints go through the ``openai/`` provider."""
    if base_url is None or name.startswith("openai/"):
        return name
    return f"openai/{name}"


def llm_args(base_url: str | None, temperature: float, api_key: str = "EMPTY") -> dict[str, Any]:
    args: dict[str, Any] = {"temperature": temperature}
    if base_url is not None:
        args.update(api_base=base_url, api_key=api_key)
    return args


def judge_spec(cfg: Tau2Config) -> dict[str, Any] | None:
    model, url = cfg.judge()
    if model is None:
        return None
    return {"model": litellm_model(model, url), "llm_args": llm_args(url, 0.0, cfg.api_key)}


# ---- the judge shim (runs inside tau2's interpreter: stdlib only, no prove_jax import) ----------


def patch_judge(modules: list, model: str, judge_args: dict) -> list[str]:
    """Point tau2's NL-assertion judge at ``model`` with ``judge_args`` in every given module.

    tau2 reads ``DEFAULT_LLM_NL_ASSERTIONS`` / ``DEFAULT_LLM_NL_ASSERTIONS_ARGS`` from
    ``tau2.config`` and imports them by name into its evaluator, so each module holding them is
    patched; the args dict is also updated in place so every reference to it sees the change.
    Returns the names of the modules patched.
    """
    patched = []
    for mod in modules:
        hit = False
        if hasattr(mod, "DEFAULT_LLM_NL_ASSERTIONS"):
            mod.DEFAULT_LLM_NL_ASSERTIONS = model
            hit = True
        old = getattr(mod, "DEFAULT_LLM_NL_ASSERTIONS_ARGS", None)
        if isinstance(old, dict):
            old.clear()
            old.update(judge_args)
            hit = True
        elif old is not None:
            mod.DEFAULT_LLM_NL_ASSERTIONS_ARGS = dict(judge_args)
            hit = True
        if hit:
            patched.append(getattr(mod, "__name__", repr(mod)))
    return patched


_SHIM_MAIN = '''

def _main():
    import importlib
    spec = json.loads(sys.argv[1])
    import tau2.cli
    import tau2.config
    try:
        importlib.import_module("tau2.evaluator.evaluator_nl_assertions")
    except ImportError:
        pass
    if spec is not None:
        mods = [m for n, m in list(sys.modules.items()) if n == "tau2" or n.startswith("tau2.")]
        done = patch_judge(mods, spec["model"], spec["llm_args"])
        if "tau2.config" not in done:
            sys.exit("prove_jax tau2 shim: tau2.config has no DEFAULT_LLM_NL_ASSERTIONS; "
                     "this tau2 version is not supported")
        print(f"prove_jax tau2 shim: NL-assertion judge -> {spec['model']} (patched {done})",
              file=sys.stderr, flush=True)
    sys.argv = ["tau2", *sys.argv[2:]]
    tau2.cli.main()


if __name__ == "__main__":
    _main()
'''


def shim_source() -> str:
    """Source of the judge shim: ``python SHIM '<judge json>' run --domain ...``."""
    head = '"""Generated by prove_jax.eval.tau2: run tau2\'s CLI with the NL-assertion judge redirected."""\n'
    return head + "import json\nimport sys\n\n\n" + inspect.getsource(patch_judge) + _SHIM_MAIN


# ---- the command --------------------------------------------------------------------------------


def tau2_command(cfg: Tau2Config, domain: str, save_to: str | Path, shim: str | Path | None = None) -> list[str]:
    """The argv of ``tau2 run`` for one domain (flags as in tau2's ``src/tau2/cli.py``).

    ``save_to`` should be absolute: tau2 joins it under ``DATA_DIR/simulations`` and an absolute
    path wins, so results go to ``<save_to>/results.json``. With a judge to redirect the command
    goes through the shim (default ``<save_to>/../_tau2_judge_shim.py``), which needs a Python.
    """
    user_model, user_url = cfg.user()
    spec = judge_spec(cfg)
    if spec is not None:
        py = cfg.tau2_python or sys.executable
        prefix = [py, str(shim or Path(save_to).parent / SHIM_NAME), json.dumps(spec)]
    elif cfg.tau2_python:
        prefix = [cfg.tau2_python, "-m", "tau2.cli"]
    else:
        prefix = [cfg.tau2_executable]
    argv = [
        *prefix, "run",
        "--domain", domain,
        "--agent-llm", litellm_model(cfg.agent_model, cfg.agent_base_url),
        "--agent-llm-args", json.dumps(llm_args(cfg.agent_base_url, cfg.temperature, cfg.api_key)),
        "--user-llm", litellm_model(user_model, user_url),
        "--user-llm-args", json.dumps(llm_args(user_url, cfg.temperature, cfg.api_key)),
        "--num-trials", str(cfg.num_trials),
        "--task-split-name", cfg.task_split,
        "--max-steps", str(cfg.max_steps),
        "--max-errors", str(cfg.max_errors),
        "--max-concurrency", str(cfg.max_concurrency),
        "--seed", str(cfg.seed),
        "--save-to", str(save_to),
    ]
    if cfg.num_tasks is not None:
        argv += ["--num-tasks", str(cfg.num_tasks)]
    if cfg.task_ids:
        argv += ["--task-ids", *cfg.task_ids]
    if cfg.resume:
        argv.append("--auto-resume")
    return argv


def _endpoint(model: str | None, url: str | None) -> dict[str, Any]:
    return {"model": model or TAU2_DEFAULT_LLM, "base_url": url, "local": url is not None}


def summarize(results: Mapping[str, Tau2Results], cfg: Tau2Config,
              failed: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Our report: per-domain pass^k, the mean pass^1 ("avg") and who played user and judge."""
    domains = {d: summarize_domain(r, cfg.infra_errors) for d, r in results.items()}
    scored = [d for d, s in domains.items() if s["pass^1"] is not None]
    user, judge = _endpoint(*cfg.user()), _endpoint(*cfg.judge())
    reasons = []
    if user["local"] or user["model"] != TAU2_DEFAULT_LLM:
        reasons.append(f"user simulator is {user['model']}" + (" (local)" if user["local"] else ""))
    if judge["local"] or judge["model"] != TAU2_DEFAULT_LLM:
        reasons.append(f"NL-assertion judge is {judge['model']}" + (" (local)" if judge["local"] else ""))
    if cfg.num_trials < LEADERBOARD_TRIALS:
        reasons.append(f"{cfg.num_trials} trial(s), the leaderboard uses {LEADERBOARD_TRIALS}")
    if cfg.task_split != "base" or cfg.num_tasks is not None or cfg.task_ids:
        reasons.append("not the full task set (split 'base', all tasks)")
    return {
        "benchmark": "tau2-bench",
        "scale": "percent",
        "domains": domains,
        "failed_domains": dict(failed or {}),
        "avg": sum(domains[d]["pass^1"] for d in scored) / len(scored) if scored else None,
        "avg_domains": scored,
        "avg_is_paper_tau2_avg": sorted(scored) == sorted(PAPER_DOMAINS),
        "agent": _endpoint(cfg.agent_model, cfg.agent_base_url),
        "user_simulator": user,
        "judge": judge,
        "comparable_to_leaderboard": not reasons,
        "not_comparable_because": reasons,
        "note": ("NOT comparable to the tau2 leaderboard: " + "; ".join(reasons)) if reasons else
                "tau2 defaults for user simulator and judge, 4 trials, full task set",
        "config": dataclasses.asdict(cfg),
    }


# ---- running ----------------------------------------------------------------------------------


def _pump(stream: TextIO, sinks: Sequence[TextIO], tail: collections.deque[str] | None) -> None:
    for line in iter(stream.readline, ""):
        for s in sinks:  # keep draining whatever a sink does, or tau2 blocks on a full pipe
            with contextlib.suppress(OSError, ValueError):
                s.write(line)
                s.flush()
        if tail is not None:
            tail.append(line)
    stream.close()


def run_subprocess(argv: Sequence[str], log_path: Path, env: Mapping[str, str] | None = None,
                   timeout: float | None = None, tail_lines: int = 40) -> tuple[int, str]:
    """Run ``argv``, streaming stdout/stderr to ours and to ``log_path``; (exit code, stderr tail)."""
    tail: collections.deque[str] = collections.deque(maxlen=tail_lines)
    with open(log_path, "w", encoding="utf-8") as log:
        proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace",
                                env=dict(env) if env else None, start_new_session=True)
        assert proc.stdout is not None and proc.stderr is not None
        pumps = [threading.Thread(target=_pump, args=(proc.stdout, [sys.stdout, log], None), daemon=True),
                 threading.Thread(target=_pump, args=(proc.stderr, [sys.stderr, log], tail), daemon=True)]
        for t in pumps:
            t.start()
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _stop(proc)
            rc = -9
            tail.append(f"[prove_jax] killed after {timeout}s\n")
        for t in pumps:
            t.join(timeout=10)
    return rc, "".join(tail)


def _refuse_existing(cfg: Tau2Config, out_dir: Path) -> None:
    existing = [str(p) for d in cfg.domains if (p := find_results(out_dir / d)) is not None]
    if existing and not cfg.resume:
        raise FileExistsError(f"tau2 results already exist: {', '.join(existing)}; pass --resume to continue "
                              "them, --summarize-only to re-read them, or use a fresh --out-dir")


def run_tau2(cfg: Tau2Config, out_dir: str | Path) -> dict[str, Any]:
    """Run every domain (one ``tau2 run`` each), summarise the ones that produced results.

    A domain that exits non-zero or leaves no readable results file is recorded under
    ``failed_domains`` with its exit code and stderr tail; the others still run. Writes and
    returns the summary (``out_dir/tau2.json``). Existing results are continued only with
    ``cfg.resume``; otherwise nothing runs and FileExistsError names them.
    """
    out_dir = Path(out_dir).resolve()
    _refuse_existing(cfg, out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    shim = out_dir / SHIM_NAME
    if judge_spec(cfg) is not None:
        shim.write_text(shim_source())
    env = dict(os.environ)
    if cfg.tau2_data_dir:
        env["TAU2_DATA_DIR"] = str(cfg.tau2_data_dir)
    results: dict[str, Tau2Results] = {}
    failed: dict[str, dict[str, Any]] = {}
    for domain in cfg.domains:
        save_to = out_dir / domain
        argv = tau2_command(cfg, domain, save_to, shim)
        print(f"[tau2] {domain}: {' '.join(argv)}", file=sys.stderr, flush=True)
        t0 = time.time()
        try:
            rc, err = run_subprocess(argv, out_dir / f"{domain}.log", env, cfg.domain_timeout_s)
        except OSError as e:  # e.g. no tau2 executable
            rc, err = None, f"could not start {argv[0]!r}: {e}"
        path = find_results(save_to)
        record: dict[str, Any] = {"returncode": rc, "stderr_tail": err, "seconds": round(time.time() - t0, 1)}
        if rc != 0 or path is None:
            failed[domain] = {**record, "error": "tau2 failed" if rc else "tau2 left no results file"}
            continue
        try:
            results[domain] = read_results(path)
        except (OSError, ValueError) as e:
            failed[domain] = {**record, "error": str(e)}
    summary = summarize(results, cfg, failed)
    (out_dir / SUMMARY_NAME).write_text(json.dumps(summary, indent=2) + "\n")
    return summary


# ---- serving (optional; launch/tau2.sh does the same in shell) --------------------------------


def wait_ready(base_url: str, timeout: float, proc: subprocess.Popen[Any] | None = None,
               poll: float = 0.25) -> None:
    """Block until ``GET {base_url}/models`` answers 200; raise if ``proc`` dies or time runs out."""
    deadline = time.monotonic() + timeout
    while True:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server for {base_url} exited with code {proc.returncode} before it was ready")
        try:
            with urllib.request.urlopen(f"{base_url.rstrip('/')}/models", timeout=5) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{base_url}/models not ready after {timeout}s")
        time.sleep(poll)


def _stop(proc: subprocess.Popen[Any], grace: float = 30.0) -> None:
    """Stop a process we started in its own session (and its children), TERM then KILL."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def start_server(model_dir: str, port: int, name: str, host: str = "127.0.0.1", timeout: float = 1800.0,
                 extra_args: Sequence[str] = (), log_path: str | Path | None = None,
                 command: Sequence[str] | None = None) -> subprocess.Popen[Any]:
    """Start ``python -m prove_jax.serve`` and wait until it is ready (``command`` overrides argv)."""
    argv = list(command) if command is not None else [
        sys.executable, "-m", "prove_jax.serve", "--model", model_dir, "--host", host, "--port", str(port),
        "--served-model-name", name, *extra_args]
    log = open(log_path, "w") if log_path else subprocess.DEVNULL  # noqa: SIM115 (lives with the server)
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        wait_ready(f"http://{host}:{port}/v1", timeout, proc)
    except BaseException:
        _stop(proc)
        raise
    return proc


@contextlib.contextmanager
def served(model_dir: str, port: int, name: str, **kw: Any) -> Iterator[str]:
    """Serve ``model_dir`` for the duration of the block; yields its base URL; always stops it."""
    proc = start_server(model_dir, port, name, **kw)
    try:
        yield f"http://{kw.get('host', '127.0.0.1')}:{port}/v1"
    finally:
        _stop(proc)


# ---- CLI ----------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Tau2Cli:
    """What the ``tau2`` subcommand does besides :class:`Tau2Config`: where results go and which
    servers it starts itself (``--model DIR`` serves the policy for the run)."""

    out_dir: str = flag_field(dataclasses.MISSING, aliases=("out",),
                        help="results go to OUT/<domain>/, the summary to OUT/tau2.json")
    summarize_only: bool = False  # only re-read OUT/<domain>/results.json
    serve_agent: str | None = flag_field(aliases=("model",), metavar="MODEL_DIR", help="start prove_jax.serve for it")
    agent_port: int = 8000  # port of the agent server started for --serve-agent
    serve_user: str | None = flag_field(metavar="MODEL_DIR", help="start a user-simulator server for it")
    user_port: int = 8001  # port of the user-simulator server
    serve_args: str = ""  # extra prove_jax.serve arguments, one string


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m prove_jax.eval.tau2", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_dataclass_args(p, Tau2Cli)
    add_dataclass_args(p, Tau2Config)
    return p.parse_args(argv)


def config_from_args(a: argparse.Namespace) -> Tau2Config:
    return dataclass_from_args(Tau2Config, a)


def summarize_dir(cfg: Tau2Config, out_dir: str | Path) -> dict[str, Any]:
    """Re-read ``out_dir/<domain>`` results (no tau2 run) and rewrite ``out_dir/tau2.json``.

    Who played agent, user and judge (and trials, split) is taken from the previous summary's
    ``config`` when there is one — tau2's results do not record the judge — else from ``cfg``.
    """
    out_dir = Path(out_dir)
    with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
        old = json.loads((out_dir / SUMMARY_NAME).read_text())["config"]
        keep = ("agent_model", "agent_base_url", "user_model", "user_base_url", "judge_model", "judge_base_url",
                "num_trials", "task_split", "num_tasks")
        cfg = dataclasses.replace(cfg, **{k: old[k] for k in keep if k in old},
                                  task_ids=tuple(old.get("task_ids") or ()))
    results, failed = {}, {}
    for d in cfg.domains:
        try:
            results[d] = read_results(find_results(out_dir / d) or out_dir / d / "results.json")
        except (OSError, ValueError) as e:
            failed[d] = {"returncode": None, "error": str(e), "stderr_tail": ""}
    summary = summarize(results, cfg, failed)
    (out_dir / SUMMARY_NAME).write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def _print_table(summary: Mapping[str, Any]) -> None:
    for d, s in summary["domains"].items():
        ks = "  ".join(f"pass^{k} {v:5.1f}" for k, v in s["pass_hat_k"].items())
        print(f"{d:10s} tasks {s['n_tasks']:4d}  sims {s['n_simulations']:4d}  {ks}")
    for d, f in summary["failed_domains"].items():
        print(f"{d:10s} FAILED (exit {f.get('returncode')}): {f.get('error')}")
    if summary["avg"] is not None:
        print(f"avg pass^1 over {', '.join(summary['avg_domains'])}: {summary['avg']:.1f}")
    if not summary["comparable_to_leaderboard"]:
        print("NOT comparable to the tau2 leaderboard: " + "; ".join(summary["not_comparable_because"]))


def main(argv: Sequence[str] | None = None) -> int:
    a = parse_args(argv)
    cfg = config_from_args(a)
    if a.summarize_only:
        summary = summarize_dir(cfg, a.out_dir)
    else:
        try:
            _refuse_existing(cfg, Path(a.out_dir))  # before starting any server
        except FileExistsError as e:
            print(e, file=sys.stderr)
            return 2
        with contextlib.ExitStack() as stack:
            extra = a.serve_args.split()
            Path(a.out_dir).mkdir(parents=True, exist_ok=True)
            if a.serve_agent:
                url = stack.enter_context(served(a.serve_agent, a.agent_port, cfg.agent_model, extra_args=extra,
                                                 log_path=Path(a.out_dir) / "serve_agent.log"))
                cfg = dataclasses.replace(cfg, agent_base_url=url)
            if a.serve_user:
                name = cfg.user_model or "user"
                url = stack.enter_context(served(a.serve_user, a.user_port, name, extra_args=extra,
                                                 log_path=Path(a.out_dir) / "serve_user.log"))
                cfg = dataclasses.replace(cfg, user_model=name, user_base_url=url)
            summary = run_tau2(cfg, a.out_dir)
    _print_table(summary)
    print(f"wrote {Path(a.out_dir) / SUMMARY_NAME}")
    return 1 if summary["failed_domains"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
