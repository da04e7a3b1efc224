"""Fixtures for tests/models: tiny random HF checkpoints of every supported family."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from models_testlib import FAMILIES, HFCase, build_case


@pytest.fixture(scope="session")
def hf_cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, HFCase]:
    """Built once per session: four tiny models saved as HF directories (qwen2 sharded)."""
    root = tmp_path_factory.mktemp("hf_tiny")
    return {name: build_case(name, root) for name in FAMILIES}
