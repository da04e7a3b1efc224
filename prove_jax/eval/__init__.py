"""prove_jax/eval."""
