"""Fixtures for tests/convert: tiny GGUF files of every supported architecture, converted once."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from prove_jax.convert import convert_gguf
from tests.convert.gguf_testlib import ARCHS, TinyCase, build_case, tiny_tokenizer_dir

QUANTS = ("F32", "Q8_0")


@pytest.fixture(scope="session")
def tiny_tok_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_tokenizer_dir(tmp_path_factory.mktemp("tiny_tok"))


@pytest.fixture(scope="session")
def tiny_cases(tmp_path_factory: pytest.TempPathFactory, tiny_tok_dir: Path) -> dict[tuple[str, str], TinyCase]:
    """(arch, quant) -> a tiny model written as GGUF, as llama.cpp would write it."""
    root = tmp_path_factory.mktemp("tiny_gguf")
    return {(a, q): build_case(a, q, root, tiny_tok_dir) for a in ARCHS for q in QUANTS}


@pytest.fixture(scope="session")
def converted(tmp_path_factory: pytest.TempPathFactory,
              tiny_cases: dict[tuple[str, str], TinyCase]) -> dict[tuple[str, str], Path]:
    """(arch, quant) -> the Hugging Face directory our converter wrote for that file."""
    root = tmp_path_factory.mktemp("tiny_hf")
    return {key: convert_gguf(case.gguf, root / f"{key[0]}-{key[1]}", progress=False)
            for key, case in tiny_cases.items()}
