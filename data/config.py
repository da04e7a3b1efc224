"""Synthesis settings: the paper's mix and rates, in one dataclass with two presets.

Every number that shapes the dataset lives here so the card can print it and a run can override it
(``--set key=value`` on the CLI). The defaults are the paper's (§2 of reference/prove_paper.md);
``tiny`` keeps the same proportions at a few hundred examples so tests and the CPU default stay fast.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

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
    # live state
    world_pool: int = 8  # distinct world seeds (worlds are cached per process: keep <= 16)
    refresh_every: int = 50  # conversations per sampling-context version
    context_per_type: int = 16
    # validation
    max_replay_error_rate: float = 0.30
    strict_replay: bool = True  # programmatic teacher: every non-designed gold call must succeed
    dedup_threshold: float = 0.70
    overgenerate: float = 0.08
    # output
    splits: tuple[float, float, float] = (0.90, 0.05, 0.05)
    shard_size: int = 4096
    min_tool_examples: int = 5
    llm: LLMConfig = field(default_factory=LLMConfig)
    llm_classifier: bool = False
    llm_teacher: bool = False

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
    """Apply ``key=value`` strings (values parsed as YAML scalars/lists)."""
    import yaml

    changes: dict[str, Any] = {}
    llm_changes: dict[str, Any] = {}
    names = {f.name for f in dataclasses.fields(cfg)}
    for item in assignments:
        key, sep, raw = item.partition("=")
        if not sep:
            raise ValueError(f"override {item!r} is not key=value")
        value = yaml.safe_load(raw)
        if key.startswith("llm."):
            llm_changes[key[4:]] = value
        elif key in names:
            current = getattr(cfg, key)
            changes[key] = tuple(value) if isinstance(current, tuple) else value
        else:
            raise ValueError(f"unknown setting {key!r}")
    if llm_changes:
        changes["llm"] = dataclasses.replace(cfg.llm, **llm_changes)
    return dataclasses.replace(cfg, **changes)
