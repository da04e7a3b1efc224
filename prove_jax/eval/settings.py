"""The settings of each external benchmark, apart from its runtime.

Each dataclass is the one definition of its benchmark's settings: the subcommand's flags, ``eval
all``'s ``--<benchmark>-*`` flags and the launcher's ``eval.benchmarks.<benchmark>`` section are
generated from it (:mod:`prove_jax.cli`). They live here, not beside their runners, because the
launcher's config composes them: importing the config must not import bfcl's executor, the τ²
subprocess driver or T-Eval's scorers (``tests/test_repo.py`` checks both the import table and
what ``import prove_jax.config`` actually loads). Stdlib only.
"""

from __future__ import annotations

import dataclasses
from typing import Any

# ---- BFCL Multi-Turn ------------------------------------------------------------------------------
CATEGORIES = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")
SHORT = {"multi_turn_base": "base", "multi_turn_miss_func": "miss_func", "multi_turn_miss_param": "miss_param",
         "multi_turn_long_context": "long_context"}


@dataclasses.dataclass(frozen=True)
class BfclConfig:
    """BFCL's settings: the ``bfcl`` subcommand's flags, ``eval all``'s ``--bfcl-*`` and the
    launcher's ``eval.benchmarks.bfcl`` (:mod:`prove_jax.cli` generates the flags from here)."""

    enabled: bool = False  # run it in the suite (eval all, the launcher's eval stage)
    categories: tuple[str, ...] = dataclasses.field(default=CATEGORIES, metadata={
        "choices": CATEGORIES, "help": "multi-turn categories to play"})
    limit: int | None = None  # first N entries of each category (None: all 200)
    max_tokens: int | None = 1024  # per assistant message
    temperature: float = 0.0  # sampling temperature of the policy (0: greedy)
    concurrency: int = 32  # entries in flight (the engine batches their requests)
    workers: int = 2  # executor processes
    step_timeout: float = 60.0  # seconds for one step's calls in the executor


# ---- τ²-bench -------------------------------------------------------------------------------------
PAPER_DOMAINS = ("airline", "retail", "telecom")
RUNNERS = ("native", "tau2-cli")
LEADERBOARD_TRIALS = 4


def flag_field(default: Any = None, **meta: Any) -> Any:
    """A field with command-line metadata (help, flag, aliases, choices) for :mod:`prove_jax.cli`."""
    return dataclasses.field(default=default, metadata=meta)


@dataclasses.dataclass
class Tau2Config:
    """One τ² evaluation. ``*_base_url`` None means tau2's own provider routing (e.g. OpenAI).

    The one definition of τ²'s settings: the ``tau2`` subcommand's flags, ``eval all``'s
    ``--tau2-*`` flags and the launcher's ``eval.benchmarks.tau2`` section are generated from it.
    """

    domains: tuple[str, ...] = PAPER_DOMAINS  # tau2 domains, one run each (in the suite, empty: off)
    runner: str = flag_field("native", choices=RUNNERS, help="the suite's τ²: native (offline, the tau2-*-mcp-eval "
                             "wheels: retail, airline; in-process, the policy its own user simulator unless a user "
                             "base URL is given) or tau2-cli (a tau2 install of your own, over HTTP)")
    max_tokens: int = 1024  # native: tokens per agent message (the user simulator's: at most 256)
    num_trials: int = flag_field(LEADERBOARD_TRIALS, aliases=("trials",), help="trials per task (leaderboard: 4)")
    agent_model: str = flag_field("agent", help="served name of the policy")
    agent_base_url: str | None = flag_field("http://127.0.0.1:8000/v1", help="'none': tau2's own provider routing")
    user_model: str | None = flag_field(help="user simulator (default: the agent's model and endpoint); a model given "
                                       "without a user base URL goes through tau2's own provider routing")
    user_base_url: str | None = flag_field(aliases=("user-url",), help="the user simulator's /v1 URL")
    judge_model: str | None = flag_field(help="NL-assertion judge (default: the user simulator); a model given without "
                                        "a judge base URL goes through tau2's own provider routing")
    judge_base_url: str | None = None  # the judge's /v1 URL
    max_concurrency: int = 4  # simulations in flight per domain (tau2 --max-concurrency)
    task_split: str = "base"  # tau2 --task-split-name: base (full) | test | train; telecom also small (20)
    num_tasks: int | None = None  # first N tasks per domain (None: all)
    task_ids: tuple[str, ...] = ()  # only these task ids
    max_steps: int = 200  # tau2 --max-steps per simulation
    max_errors: int = 10  # tau2 --max-errors per simulation
    seed: int = 300  # tau2 --seed
    temperature: float = 0.0  # agent and user sampling temperature
    api_key: str = flag_field("EMPTY", cli=False)  # sent to OpenAI-compatible endpoints (never a flag)
    tau2_executable: str = "tau2"  # the tau2 CLI (installed from its repository)
    tau2_python: str | None = None  # run tau2 as `PY -m tau2.cli` (or the judge shim) from another environment
    tau2_data_dir: str | None = None  # exported as TAU2_DATA_DIR
    resume: bool = False  # continue existing results (tau2 --auto-resume); otherwise they are an error
    infra_errors: str = flag_field("fail", choices=("fail", "exclude"), help="infrastructure_error simulations: "
                             "failed trials (fail) or dropped, as tau2's code intends (exclude)")
    domain_timeout_s: float | None = flag_field(flag="domain-timeout", help="seconds per domain")

    @property
    def enabled(self) -> bool:
        """Whether the suite runs τ² (``eval all``, the launcher): some domain is named."""
        return bool(self.domains)

    def user(self) -> tuple[str, str | None]:
        """(model, base_url) of the user simulator; unset: the agent's own model and endpoint."""
        if self.user_model is None and self.user_base_url is None:
            return self.agent_model, self.agent_base_url
        return self.user_model or self.agent_model, self.user_base_url

    def judge(self) -> tuple[str | None, str | None]:
        """(model, base_url) of the NL-assertion judge; (None, None) keeps tau2's default."""
        if self.judge_model is None and self.judge_base_url is None:
            model, url = self.user()
            return (model, url) if url is not None else (None, None)
        return self.judge_model or self.user()[0], self.judge_base_url


# ---- T-Eval ---------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class TevalConfig:
    """T-Eval's settings: the ``teval`` subcommand's flags, ``eval all``'s ``--teval-*`` and the
    launcher's ``eval.benchmarks.teval`` (the suite runs it when ``data`` is given)."""

    data: str | None = None  # directory holding T-Eval's JSON files
    embedder: str | None = None  # local sentence-embedding model dir (all-mpnet-base-v2; never downloaded)
    limit: int | None = None  # first N samples per file (None: all)
    subset: bool = False  # use the *_subset files
    concurrency: int = 32  # requests in flight (the engine batches them)

    @property
    def enabled(self) -> bool:
        """Whether the suite runs T-Eval: its data directory is given."""
        return bool(self.data)
