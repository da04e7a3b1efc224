"""PROVE programmatic rewards (prove_paper.md §3), pure Python, no I/O.

Entry point (DESIGN.md "Public entry points")::

    prove_jax.rewards.score(example, calls, config=None) -> {"total", "val", "cov", "eff", "name", "arg", ...}

``score_group`` scores a whole GRPO group against one precomputed :class:`ExamplePlan`;
``RewardConfig`` / ``variant`` select weights and ablations; ``REGISTRY`` holds the component
functions by name. Records may be typed (``prove_jax.records.Example`` / ``Rollout`` /
``CallRecord``, what the rest of the project passes) or the plain dicts of the contracts (the
public API keeps accepting those). Layering: this package imports nothing from env, engine,
servers or models; of ours only ``prove_jax.records`` (stdlib and numpy).
"""

from prove_jax.rewards.components import (
    REGISTRY,
    ComponentRegistry,
    Episode,
    analyse,
    budget,
    r_abstain,
    r_arg,
    r_cov,
    r_eff,
    r_name,
    r_state,
    r_val,
    register_component,
)
from prove_jax.rewards.config import DEFAULT_WEIGHTS, PAPER_COMPONENTS, VARIANTS, RewardConfig, variant
from prove_jax.rewards.plan import ExamplePlan, clear_cache, prepare
from prove_jax.rewards.schema import compile_tool_schema, json_eq
from prove_jax.rewards.score import score, score_group, score_rollouts
from prove_jax.rewards.state import state_agreement

__all__ = [
    "DEFAULT_WEIGHTS",
    "PAPER_COMPONENTS",
    "REGISTRY",
    "VARIANTS",
    "ComponentRegistry",
    "Episode",
    "ExamplePlan",
    "RewardConfig",
    "analyse",
    "budget",
    "clear_cache",
    "compile_tool_schema",
    "json_eq",
    "prepare",
    "r_abstain",
    "r_arg",
    "r_cov",
    "r_eff",
    "r_name",
    "r_state",
    "r_val",
    "register_component",
    "score",
    "score_group",
    "score_rollouts",
    "state_agreement",
    "variant",
]
