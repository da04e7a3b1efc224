"""prove_jax: PROVE (Programmatic Rewards On Verified Environments) in pure JAX."""

__version__ = "0.1.0"
