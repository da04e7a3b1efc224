"""prove_jax.serve over real HTTP (uvicorn on 127.0.0.1) with the official ``openai`` client.

The policy is a tiny Qwen3 taught two replies (servelib.TAUGHT), so greedy answers are known:
a weather question yields a ``get_weather`` call, a greeting yields text.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from prove_jax.chat import Transcript
from prove_jax.serve import EngineChat, load_policy
from prove_jax.serve.app import build_app
from tests.serve.servelib import ENGINE, TAUGHT, TOOLS, serving

WEATHER = TAUGHT[0][0]
HELLO = TAUGHT[1][0]


@pytest.fixture(scope="module")
def policy(tiny_policy_dir: Path) -> Any:
    return load_policy(tiny_policy_dir, dtype="float32", name="tiny")


@pytest.fixture(scope="module")
def base_url(policy: Any) -> Iterator[str]:
    engine = policy.engine(ENGINE)
    app = build_app(engine, EngineChat(engine, policy.template, policy.tokenizer), "tiny")
    with serving(app) as url:
        yield url


@pytest.fixture(scope="module")
def client(base_url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base_url, api_key="EMPTY", max_retries=0)


def test_render_is_the_training_transcript(policy: Any) -> None:
    """A history in OpenAI wire form (string arguments with odd spacing, a tool message) renders
    to exactly the ids the episode driver builds for the same conversation."""
    chat = EngineChat(policy.engine(ENGINE), policy.template, policy.tokenizer)
    wire = [{"role": "system", "content": "Be brief."}, *WEATHER,
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
                "name": "get_weather", "arguments": '{ "city" :"Paris" }'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": '{"temp": 21}'}]
    tr = Transcript.start(policy.template, policy.tokenizer, wire[:2], TOOLS)
    tr.start_assistant()
    tr.append_generated(policy.tokenizer.encode(policy.template.format_tool_call("get_weather", {"city": "Paris"})
                                                + policy.template.end_of_turn))
    tr.append_tool_results(['{"temp": 21}'])
    tr.start_assistant()
    assert chat.render(wire, TOOLS).ids == tr.tokens


def test_tool_call_and_text_through_the_official_client(client: openai.OpenAI) -> None:
    r = client.chat.completions.create(model="tiny", messages=WEATHER, tools=TOOLS, max_tokens=64, temperature=0)
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.message.tool_calls
    assert call.type == "function" and call.id.startswith("call_")
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": "Paris"}
    assert r.usage.prompt_tokens > 100 and r.usage.completion_tokens > 5

    r = client.chat.completions.create(model="tiny", messages=HELLO, tools=TOOLS, max_tokens=64, temperature=0)
    assert r.choices[0].message.content == TAUGHT[1][1]["content"]
    assert r.choices[0].message.tool_calls is None and r.choices[0].finish_reason == "stop"

    assert [m.id for m in client.models.list().data] == ["tiny"]


def test_tool_choice(client: openai.OpenAI) -> None:
    """``none`` (or no tools at all): the call text comes back as content, unparsed; a named function is pre-filled
    into the turn (the taught model then drifts, so the block may be invalid — but it is that
    function's block); ``length`` when max_tokens cuts the turn."""
    r = client.chat.completions.create(model="tiny", messages=WEATHER, tools=TOOLS, tool_choice="none",
                                       max_tokens=64, temperature=0)
    assert r.choices[0].message.tool_calls is None and '"get_weather"' in r.choices[0].message.content
    chat = client.chat.completions.with_raw_response.create(
        model="tiny", messages=HELLO, tools=TOOLS, max_tokens=8, temperature=0,
        tool_choice={"type": "function", "function": {"name": "cd"}})
    assert chat.http_response.status_code == 200
    r = client.chat.completions.create(model="tiny", messages=WEATHER, max_tokens=64, temperature=0)
    assert r.choices[0].message.tool_calls is None  # no tools in the request: the text is returned whole
    assert r.choices[0].message.content.startswith("<tool_call>") and r.choices[0].finish_reason == "stop"
    r = client.chat.completions.create(model="tiny", messages=HELLO, tools=TOOLS, max_tokens=3, temperature=0)
    assert r.choices[0].finish_reason == "length" and r.usage.completion_tokens == 3


def test_streaming_matches_the_plain_reply(client: openai.OpenAI) -> None:
    deltas, finish = [], None
    for chunk in client.chat.completions.create(model="tiny", messages=HELLO, tools=TOOLS, max_tokens=64,
                                                temperature=0, stream=True):
        d = chunk.choices[0].delta
        deltas.append(d.content or "")
        finish = chunk.choices[0].finish_reason or finish
    assert len([d for d in deltas if d]) >= 2  # arrived in pieces, not as one block at the end
    assert "".join(deltas) == TAUGHT[1][1]["content"] and finish == "stop"

    calls, finish = [], None
    for chunk in client.chat.completions.create(model="tiny", messages=WEATHER, tools=TOOLS, max_tokens=64,
                                                temperature=0, stream=True):
        d = chunk.choices[0].delta
        calls += d.tool_calls or []
        assert not (d.content or "").strip().startswith("<tool_call>")  # the block never leaks as text
        finish = chunk.choices[0].finish_reason or finish
    assert finish == "tool_calls" and [c.function.name for c in calls] == ["get_weather"]
    assert json.loads(calls[0].function.arguments) == {"city": "Paris"}


def test_concurrent_requests_share_decode_steps(base_url: str) -> None:
    async def run() -> list[Any]:
        async with openai.AsyncOpenAI(base_url=base_url, api_key="EMPTY", max_retries=0) as c:
            return list(await asyncio.gather(*(
                c.chat.completions.create(model="tiny", messages=WEATHER if i % 2 == 0 else HELLO, tools=TOOLS,
                                          max_tokens=64, temperature=0) for i in range(8))))

    before = httpx.get(base_url.removesuffix("/v1") + "/health").json()
    replies = asyncio.run(run())
    after = httpx.get(base_url.removesuffix("/v1") + "/health").json()
    for i, r in enumerate(replies):
        if i % 2 == 0:
            (call,) = r.choices[0].message.tool_calls
            assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": "Paris"}
        else:
            assert r.choices[0].message.content == TAUGHT[1][1]["content"]
    tokens = sum(r.usage.completion_tokens for r in replies)
    steps = after["decode_steps"] - before["decode_steps"]
    assert after["peak_decode_rows"] >= 4  # several requests decoded in one engine step
    assert steps < tokens / 3, (steps, tokens)


def _post(base_url: str, path: str, body: Any, raw: bool = False) -> httpx.Response:
    # not httpx's 5 s default: a request may be the first of its sampling mode and compile its
    # programs (each mode is its own program: no device-side branch), which under a loaded
    # suite took longer
    if raw:
        return httpx.post(base_url + path, content=body, headers={"content-type": "application/json"}, timeout=120)
    return httpx.post(base_url + path, json=body, timeout=120)


@pytest.mark.parametrize(("body", "status", "param", "code"), [
    ({"model": "gpt-4", "messages": HELLO}, 404, "model", "model_not_found"),
    ({"model": "tiny", "messages": []}, 400, "messages", None),
    ({"model": "tiny", "messages": [{"role": "wizard", "content": "x"}]}, 400, "messages[0].role", None),
    ({"model": "tiny", "messages": [{"role": "user", "content": [{"type": "image_url"}]}]}, 400,
     "messages[0].content[0]", None),
    ({"model": "tiny", "messages": [*WEATHER, {"role": "assistant", "tool_calls": [{"function": {
        "name": "cd", "arguments": "{not json"}}]}]}, 400, "messages[1].tool_calls[0].function.arguments", None),
    ({"model": "tiny", "messages": HELLO, "tools": [{"type": "function", "function": {"description": "x"}}]}, 400,
     "tools[0].function.name", None),
    ({"model": "tiny", "messages": HELLO, "tools": TOOLS, "tool_choice": {"type": "function",
                                                                        "function": {"name": "nope"}}}, 400,
     "tool_choice.function.name", None),
    ({"model": "tiny", "messages": HELLO, "temperature": 5}, 400, "temperature", None),
    ({"model": "tiny", "messages": HELLO, "n": 3}, 400, "n", None),
    ({"model": "tiny", "messages": HELLO, "max_tokens": 0}, 400, "max_tokens", None),
    ({"model": "tiny", "messages": HELLO, "max_tokens": 5000}, 400, "max_tokens", "context_length_exceeded"),
    ({"model": "tiny", "messages": [{"role": "user", "content": "weather " * 2000}]}, 400, "messages",
     "context_length_exceeded"),
])
def test_bad_requests_get_openai_errors(base_url: str, body: Any, status: int, param: str, code: str | None) -> None:
    for stream in (False, True):
        r = _post(base_url, "/chat/completions", {**body, "stream": stream})
        assert r.status_code == status, r.text
        err = r.json()["error"]
        assert err["param"] == param and err["code"] == code and err["message"]
    # the server is unharmed
    assert _post(base_url, "/chat/completions", {"model": "tiny", "messages": HELLO, "max_tokens": 4}).status_code == 200


def test_malformed_bodies_and_routes(base_url: str, client: openai.OpenAI) -> None:
    r = _post(base_url, "/chat/completions", b"{nope", raw=True)
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]["message"]
    assert _post(base_url, "/chat/completions", [1, 2]).status_code == 400
    r = httpx.get(base_url + "/nothing/here")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    with pytest.raises(openai.NotFoundError) as info:
        client.chat.completions.create(model="other", messages=HELLO)
    assert info.value.body["code"] == "model_not_found"
    with pytest.raises(openai.BadRequestError, match=r"messages\[0\]\.role"):
        client.chat.completions.create(model="tiny", messages=[{"role": "robot", "content": "hi"}])


def test_completions(client: openai.OpenAI, policy: Any) -> None:
    prompt = policy.template.render(HELLO, TOOLS, add_generation_prompt=True)
    r = client.completions.create(model="tiny", prompt=prompt, max_tokens=64, temperature=0)
    assert r.choices[0].text == TAUGHT[1][1]["content"] and r.choices[0].finish_reason == "stop"
    r = client.completions.create(model="tiny", prompt=[prompt, prompt], max_tokens=12, temperature=0,
                                  stop=["there"])
    assert [c.text for c in r.choices] == ["Hello ", "Hello "]
    assert all(c.finish_reason == "stop" for c in r.choices)
    ids = policy.tokenizer.encode(prompt)
    r = client.completions.create(model="tiny", prompt=ids, max_tokens=64, temperature=0)
    assert r.choices[0].text == TAUGHT[1][1]["content"] and r.usage.prompt_tokens == len(ids)


def test_completions_stream_token_by_token(client: openai.OpenAI, policy: Any) -> None:
    prompt = policy.template.render(HELLO, TOOLS, add_generation_prompt=True)
    pieces: dict[int, list[str]] = {0: [], 1: []}
    finish: dict[int, str] = {}
    for chunk in client.completions.create(model="tiny", prompt=[prompt, prompt], max_tokens=64, temperature=0,
                                           stream=True, stop=["help"]):
        for c in chunk.choices:
            pieces[c.index].append(c.text)
            if c.finish_reason:
                finish[c.index] = c.finish_reason
    for i in (0, 1):
        assert "".join(pieces[i]) == "Hello there, how can I " and finish[i] == "stop"
        assert len([p for p in pieces[i] if p]) >= 2  # streamed in pieces as tokens arrived
    whole = "".join(c.choices[0].text for c in client.completions.create(
        model="tiny", prompt=prompt, max_tokens=64, temperature=0, stream=True))
    assert whole == TAUGHT[1][1]["content"]  # the stop token's text never leaks into the stream
