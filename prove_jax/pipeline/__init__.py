"""The launcher's stages and the run context they share (``python -m prove_jax.launch``)."""
