"""prove_jax/env."""
