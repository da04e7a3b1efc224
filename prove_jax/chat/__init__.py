"""prove_jax/chat."""
