"""prove_jax/engine."""
