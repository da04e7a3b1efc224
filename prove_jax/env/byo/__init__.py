"""Bring your own MCP server: any stdio command or HTTP URL as a pool backend with private state per
session (``ServerSpec`` -> ``ByoBackend``; ``env.byo`` in a run's YAML)."""

from prove_jax.env.byo.backend import ByoBackend, ByoStartError, Session
from prove_jax.env.byo.spec import PINNED_ENV, Rewrite, ServerSpec

__all__ = ["PINNED_ENV", "ByoBackend", "ByoStartError", "Rewrite", "ServerSpec", "Session"]
