"""prove_jax/rewards."""
