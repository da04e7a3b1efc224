"""One tiny build per test session (the expensive part), shared by the data tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from data.build import BuildResult, build
from data.writer import SPLITS
from tests.conftest import once_per_session


def load_examples(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for split in SPLITS for line in (out / f"{split}.jsonl").read_text().splitlines()]


@pytest.fixture(scope="session")
def graph_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One graph cache for all workers: the tiny build below fills it, and later builds read it."""
    return once_per_session(tmp_path_factory, "graph-cache", lambda out: out)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory, graph_cache: Path) -> BuildResult:
    return once_per_session(tmp_path_factory, "tiny-seed0", lambda out: build(
        out, seed=0, size="tiny", workers=2, cache_dir=graph_cache, progress=False))


@pytest.fixture(scope="session")
def examples(tiny: BuildResult) -> list[dict[str, Any]]:
    return load_examples(tiny.out)
