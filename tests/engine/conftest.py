"""Session fixtures for tests/engine: live discovery data, tiny tokenizer, tiny model, one sampler.

The sampler (with its compiled programs and KV cache) is shared by every single-device test so
the directory compiles one decode program and a few prefill buckets in total.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from prove_jax.chat import ChatTokenizer, special_ids
from prove_jax.engine import EngineConfig, Sampler
from prove_jax.models import Model
from tests.engine import engine_testlib as lib

#: Shared by the single-device tests (buckets 32..256 -> at most 4 prefill programs + 1 decode).
ENGINE = EngineConfig(slots=4, max_len=1536, min_chunk=32, max_chunk=256, prefill_rows=2)


@pytest.fixture(scope="session")
def live() -> dict[str, Any]:
    return asyncio.run(lib.live_data(lib.DOMAINS))


@pytest.fixture(scope="session")
def tokenizer(live: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> ChatTokenizer:
    return lib.build_tokenizer(live, tmp_path_factory.mktemp("tiny_tok"))


@pytest.fixture(scope="session")
def template() -> Any:
    return lib.template()


@pytest.fixture(scope="session")
def special(template: Any, tokenizer: ChatTokenizer) -> Any:
    return special_ids(template, tokenizer)


@pytest.fixture(scope="session")
def model(tokenizer: ChatTokenizer) -> Model:
    return lib.tiny_model(len(tokenizer))


@pytest.fixture(scope="session")
def sampler(model: Model, special: Any) -> Sampler:
    return Sampler(model, ENGINE, stop_ids=special.stop_ids, vocab_limit=special.vocab_size)
