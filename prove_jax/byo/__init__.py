"""Tools for a user's own MCP servers: ``python -m prove_jax.byo check CONFIG`` (:mod:`.check`)."""
