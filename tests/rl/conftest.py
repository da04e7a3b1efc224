"""Session fixtures for tests/rl: a tiny run directory with live-grounded examples, a tiny tokenizer
and a tiny policy warm-started by the real SFT stage (``launch`` with ``stages=[sft]``).

The examples are the hand-written live-grounded ones of tests/engine (sequential, parallel,
multi-turn and one per domain), so the SFT'd policy produces tool calls that sometimes succeed
and sometimes not: GRPO groups then have reward spread and the updates are real.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from data.writer import SplitWriter
from prove_jax.records import Example
from tests.conftest import once_per_session
from tests.engine import engine_testlib as lib

MODEL_INIT = {"hidden_size": 64, "intermediate_size": 128, "num_layers": 2, "num_heads": 4, "num_kv_heads": 2,
              "head_dim": 16, "initializer_range": 0.1, "max_position_embeddings": 8192}


def write_dataset(out: Path, splits: dict[str, list[Example | dict[str, Any]]]) -> Path:
    """JSONL + ArrayRecord splits of typed records or their dicts (a dict is written as given)."""
    for split, rows in splits.items():
        w = SplitWriter(out, split, len(rows), 64)
        for ex in rows:
            w.write(json.dumps(ex.to_dict() if isinstance(ex, Example) else ex))
        w.close()
    return out


def base_overrides(run: Path) -> list[str]:
    """Launch overrides of every test run over the fixture directory (in-process servers)."""
    return [f"out_dir={run}", f"data.dir={run / 'data'}", f"tokenizer.dir={run / 'tokenizer'}",
            "model.family=qwen3", f"model.init={json.dumps(MODEL_INIT)}", "env.backend=inprocess",
            f"env.domains={json.dumps(list(lib.DOMAINS))}", "view.mode=full", "progress=false",
            "engine.slots=8", "engine.max_chunk=256", "episode.max_tokens=2048", "engine.max_len=2048"]


@pytest.fixture(scope="session")
def live() -> dict[str, Any]:
    return asyncio.run(lib.live_data(lib.DOMAINS))


@pytest.fixture(scope="session")
def sft_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run directory after the SFT stage (data/, tokenizer/, sft/ with its final checkpoint),
    built once for all test workers; tests that write into a run use ``run_copy``."""
    from prove_jax.launch import main

    def make(run: Path) -> Path:
        live = request.getfixturevalue("live")
        lib.build_tokenizer(live, run / "tokenizer")
        examples = lib.gold_examples(live) + lib.domain_examples(live)
        write_dataset(run / "data", {"train": examples, "test": examples[:4]})
        main([*base_overrides(run), "stages=[sft]", "sft.epochs=100", "sft.max_steps=24", "sft.rows_per_step=9",
              "sft.rows_per_micro=9", "sft.optim.lr=0.01", "sft.optim.warmup_steps=3", "sft.optim.decay_steps=100",
              "checkpoint.every=100"])
        assert (run / "sft" / "summary.json").exists()
        return run

    return once_per_session(tmp_path_factory, "rl_run", make)


@pytest.fixture()
def run_copy(sft_run: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "run"
    shutil.copytree(sft_run, dst)
    return dst
