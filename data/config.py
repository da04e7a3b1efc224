"""Synthesis settings: the paper's mix and rates, in one dataclass with two presets.

Every number that shapes the dataset lives here so the card can print it and a run can override it
(``--set key=value`` on the CLI). The defaults are the paper's (§2 of reference/prove_paper.md);
``tiny`` keeps the same proportions at a few hundred examples so tests and the CPU default stay fast.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from prove_jax.yamlconf import apply_override, build, merge

PAPER_MIX = {"conversation": 10_895, "clarification": 1_500, "abstention_irrelevance": 1_122}
"""The paper's 13,517 examples. Abstention + irrelevance is one bucket there (806 When2Call + 316
xLAM-Irrelevance); we synthesise both against our own servers, irrelevance at 5 % of the total."""


@dataclass(frozen=True)
class LLMConfig:
    """An optional OpenAI-compatible endpoint (off unless ``base_url`` and ``model`` are set)."""

    base_url: str = ""
    model: str = ""
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.7
    timeout_s: float = 60.0

    @property
    def enabled(self) -> bool:
        return bool(self.base_url and self.model)


@dataclass(frozen=True)
class SynthConfig:
    """Sizes, rates and limits of one build."""

    n_conversation: int = PAPER_MIX["conversation"]
    n_clarification: int = PAPER_MIX["clarification"]
    n_abstention_irrelevance: int = PAPER_MIX["abstention_irrelevance"]
    irrelevance_rate: float = 0.05  # of all examples; the rest of the bucket is abstention
    # robustness knobs (fractions of all examples)
    distractor_rate: float = 0.40
    distractor_range: tuple[int, int] = (3, 8)
    enum_strip_rate: float = 0.30
    # information levels of conversations: complete / missing-required / minimal
    info_levels: tuple[float, float, float] = (0.6, 0.2, 0.2)
    # chains and turns
    chain_min: int = 2
    chain_max: int = 5
    chain_pool_per_domain: int = 600
    min_turns: int = 2
    max_turns: int = 3
    third_turn_rate: float = 0.35  # turn-decay: P(a third turn | room for one)
    cross_domain_rate: float = 0.15  # conversations whose chain spans two servers
    parallel_rate: float = 0.25  # read-only steps fanned out to 2-3 parallel calls when possible
    designed_failure_rate: float = 0.25  # conversations planned with one (~half of chains admit one)
    optional_arg_rate: float = 0.3
    lookup_rate: float = 0.9  # an internal-id entity is named, and looked up in gold, rather than given by id
    goal_rate: float = 0.3  # conversation chains drawn from the domain's multi-tool goals (data/intents)
    # live state
    world_pool: int = 8  # distinct world seeds (worlds are cached per process: keep <= 16)
    refresh_every: int = 50  # conversations per sampling-context version
    context_per_type: int = 16
    # validation
    max_replay_error_rate: float = 0.30
    strict_replay: bool = True  # programmatic teacher: every non-designed gold call must succeed
    dedup_threshold: float = 0.70
    # the episode's clip of tool results (EpisodeConfig.max_result_chars; the launcher copies it in):
    # a gold call may only copy a value shown inside it (data.clip); None: results are not clipped
    max_result_chars: int | None = None
    # byo synthesis budgets (data.byo.progress): once spent, it stops and writes what it has
    byo_max_sessions: int = 4000  # server sessions started (a process each, for a stdio server)
    byo_max_seconds: float = 600.0  # wall time of the whole synthesis
    overgenerate: float = 0.08
    # output
    splits: tuple[float, float, float] = (0.90, 0.05, 0.05)
    shard_size: int = 4096
    min_tool_examples: int = 5
    llm: LLMConfig = field(default_factory=LLMConfig)
    llm_classifier: bool = False
    llm_teacher: bool = False

    def __post_init__(self) -> None:
        rates = ("irrelevance_rate", "distractor_rate", "enum_strip_rate", "third_turn_rate", "cross_domain_rate",
                 "parallel_rate", "designed_failure_rate", "optional_arg_rate", "lookup_rate", "goal_rate", "max_replay_error_rate",
                 "dedup_threshold")
        for name in rates:
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        for name in ("n_conversation", "n_clarification", "n_abstention_irrelevance"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if not 1 <= self.distractor_range[0] <= self.distractor_range[1]:
            raise ValueError(f"distractor_range must be 1 <= low <= high, got {self.distractor_range}")
        if not 1 <= self.chain_min <= self.chain_max or not 1 <= self.min_turns <= self.max_turns:
            raise ValueError("need 1 <= chain_min <= chain_max and 1 <= min_turns <= max_turns")
        for name in ("info_levels", "splits"):
            v = getattr(self, name)
            if any(x < 0 for x in v) or abs(sum(v) - 1.0) > 1e-6:
                raise ValueError(f"{name} must be non-negative and sum to 1, got {v}")
        if self.n_irrelevance > self.n_abstention_irrelevance:
            # irrelevance is a share of *all* examples carved out of the abstention/irrelevance bucket:
            # past the bucket it would make n_abstention negative and the build's targets impossible
            raise ValueError(f"irrelevance_rate {self.irrelevance_rate} asks for {self.n_irrelevance} irrelevance examples "
                             f"of {self.total}, more than n_abstention_irrelevance ({self.n_abstention_irrelevance}): "
                             "lower irrelevance_rate or raise n_abstention_irrelevance")
        if self.world_pool < 1 or self.refresh_every < 1 or self.shard_size < 1 or self.context_per_type < 1:
            raise ValueError("world_pool, refresh_every, shard_size and context_per_type must be >= 1")

    @property
    def n_irrelevance(self) -> int:
        return round(self.irrelevance_rate * self.total)

    @property
    def n_abstention(self) -> int:
        return self.n_abstention_irrelevance - self.n_irrelevance

    @property
    def total(self) -> int:
        return self.n_conversation + self.n_clarification + self.n_abstention_irrelevance

    def targets(self) -> dict[str, int]:
        """Exact per-kind counts the build must deliver."""
        return {"conversation": self.n_conversation, "clarification": self.n_clarification,
                "abstention": self.n_abstention, "irrelevance": self.n_irrelevance}

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def preset(size: str) -> SynthConfig:
    """``paper`` (13,517 examples) or ``tiny`` (300, same proportions)."""
    if size == "paper":
        return SynthConfig()
    if size == "tiny":
        total = 300
        scale = total / sum(PAPER_MIX.values())
        n_clar = round(PAPER_MIX["clarification"] * scale)
        n_ai = round(PAPER_MIX["abstention_irrelevance"] * scale)
        return SynthConfig(n_conversation=total - n_clar - n_ai, n_clarification=n_clar,
                           n_abstention_irrelevance=n_ai, world_pool=4, refresh_every=20,
                           chain_pool_per_domain=200, shard_size=128)
    raise ValueError(f"unknown size {size!r}: expected tiny or paper")


def override(cfg: SynthConfig, assignments: list[str]) -> SynthConfig:
    """Apply ``key=value`` strings (``llm.model=...`` for the nested endpoint) through the project's
    strict parser: unknown keys and ill-typed values (``distractor_rate=lots``) are errors that
    name the key, and so are values the dataclass rejects."""
    data = cfg.to_dict()
    for item in assignments:
        apply_override(data, item)
    return build(SynthConfig, data)


def from_mapping(size: str, changes: dict[str, Any]) -> SynthConfig:
    """The ``size`` preset with ``changes`` (a nested mapping, e.g. a run config's ``data.synth``)."""
    data = preset(size).to_dict()
    merge(data, changes)
    return build(SynthConfig, data)
