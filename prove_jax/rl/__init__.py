"""prove_jax/rl."""
