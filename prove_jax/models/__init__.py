"""prove_jax/models."""
