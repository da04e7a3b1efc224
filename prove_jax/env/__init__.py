"""Environments: the asyncio MCP host pool (and, with the engine, the episode driver)."""

from prove_jax.env.backends import (
    CallResult,
    HttpBackend,
    InProcessBackend,
    StdioBackend,
    ToolHints,
    make_backend,
)
from prove_jax.env.episode import (
    EnginePolicy,
    EpisodeConfig,
    Policy,
    ScriptedPolicy,
    run_episode,
    run_rollouts,
    sample_seed,
)
from prove_jax.env.pool import EnvConfig, Episode, MCPPool, PoolStats, ToolNameCollision

__all__ = [
    "CallResult",
    "EnginePolicy",
    "EnvConfig",
    "Episode",
    "EpisodeConfig",
    "HttpBackend",
    "InProcessBackend",
    "MCPPool",
    "Policy",
    "PoolStats",
    "ScriptedPolicy",
    "StdioBackend",
    "ToolHints",
    "ToolNameCollision",
    "make_backend",
    "run_episode",
    "run_rollouts",
    "sample_seed",
]
