"""One tiny build per test session (the expensive part), shared by the data tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from data.build import BuildResult, build
from data.writer import SPLITS


def load_examples(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for split in SPLITS for line in (out / f"{split}.jsonl").read_text().splitlines()]


@pytest.fixture(scope="session")
def graph_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("graph-cache")


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory, graph_cache: Path) -> BuildResult:
    out = tmp_path_factory.mktemp("tiny-seed0")
    return build(out, seed=0, size="tiny", workers=2, cache_dir=graph_cache, progress=False)


@pytest.fixture(scope="session")
def examples(tiny: BuildResult) -> list[dict[str, Any]]:
    return load_examples(tiny.out)
