"""Environments: the asyncio MCP host pool (and, with the engine, the episode driver)."""

from prove_jax.env.backends import CallResult, HttpBackend, InProcessBackend, StdioBackend, make_backend
from prove_jax.env.pool import Episode, MCPPool, PoolStats, ToolNameCollision

__all__ = [
    "CallResult",
    "Episode",
    "HttpBackend",
    "InProcessBackend",
    "MCPPool",
    "PoolStats",
    "StdioBackend",
    "ToolNameCollision",
    "make_backend",
]
