"""Shared pytest setup.

XLA_FLAGS must be set before JAX is imported anywhere, so sharding tests can build meshes over 8
simulated CPU devices; the persistent compilation cache keeps repeated runs of the suite fast.
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

_CACHE = Path(__file__).resolve().parent.parent / ".jax_cache"
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(_CACHE))
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.5")


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def tiny_policy_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An HF directory with a tiny random Qwen3 and its tokenizer (tests/serve/servelib.py)."""
    from tests.serve.servelib import build_policy_dir

    return build_policy_dir(tmp_path_factory.mktemp("policy"))
