"""Stateful MCP servers (the PROVE environments): a small kit plus one module per domain.

This package imports nothing from ``prove_jax`` or ``data``: each server is a standalone product.
"""

DOMAINS: tuple[str, ...] = ("banking", "calendar", "email", "filesystem", "shopping", "vehicle")
