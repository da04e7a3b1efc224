"""Chat policies: the JAX engine in this process (:class:`EngineChat`) or any OpenAI-compatible
URL (:class:`OpenAIChat`), both behind :class:`~prove_jax.serve.protocol.ChatClient`.

:class:`EngineChat` is the whole model side of ``prove_jax.serve`` (the HTTP layer only moves
JSON): the family template renders messages and tools exactly as training did
(:meth:`Transcript.start` then the generation prompt — the same render, the same tokens), the
engine samples the turn in whatever slot is free (so concurrent requests share decode steps:
continuous batching), and the training parser turns ``<tool_call>`` blocks into OpenAI
``tool_calls``. ``tool_choice`` that forces a call is honoured by pre-filling the start of the
block (``<tool_call>`` and, for a named function, ``{"name": "f", "arguments": ``) after the
generation prompt: the model then has to write a call.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import httpx

from prove_jax.chat import ChatTemplate, ChatTokenizer, Transcript, parse_tool_calls
from prove_jax.chat.toolcall import DEFAULT_END_MARKERS, THINK_OPEN
from prove_jax.engine import Engine, Generation, SamplingConfig
from prove_jax.serve.messages import (
    RequestError,
    forced_name,
    openai_tool_calls,
    to_template_messages,
    validate_tools,
)
from prove_jax.serve.protocol import ChatReply


@dataclasses.dataclass
class Prompt:
    """A rendered request: the ids to prefill and the text pre-filled into the assistant turn."""

    ids: list[int]
    prefix: str = ""
    parse_calls: bool = True


def _finish(gen_finish: str, has_calls: bool) -> str:
    if gen_finish == "stop":
        return "tool_calls" if has_calls else "stop"
    return "length"


def _cut_at_stop(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    """``text`` up to the first of the ``stop`` strings (OpenAI ``stop``), and whether one hit."""
    cuts = [i for i in (text.find(s) for s in stop if s) if i >= 0]
    return (text[: min(cuts)], True) if cuts else (text, False)


class EngineChat:
    """A :class:`ChatClient` over a running :class:`Engine` (``async with engine`` is the caller's)."""

    def __init__(self, engine: Engine, template: ChatTemplate, tokenizer: ChatTokenizer) -> None:
        self.engine = engine
        self.template = template
        self.tokenizer = tokenizer
        self.max_len = engine.config.max_len
        self._markers = (template.tool_call_open, THINK_OPEN, template.end_of_turn, *DEFAULT_END_MARKERS)
        # texts of the stop tokens: never part of a completion's text (held back while streaming)
        self._stop_texts = tuple(tokenizer.decode([t]) for t in sorted(engine.stop_ids))

    # ---- rendering --------------------------------------------------------------------------
    def render(self, messages: Any, tools: Any = None, tool_choice: Any = "auto") -> Prompt:
        """Validate and render a chat request (raises :class:`RequestError`)."""
        msgs = to_template_messages(messages)
        tool_list = validate_tools(tools)
        forced = forced_name(tool_choice, tool_list)
        try:
            tr = self._transcript(msgs, tool_list)
        except (TypeError, KeyError, ValueError) as exc:  # a message the template cannot render
            raise RequestError(f"messages cannot be rendered by the {self.template.family} template: {exc}",
                               param="messages") from None
        tr.start_assistant()
        ids = list(tr.tokens)
        prefix = ""
        if forced is True:
            prefix = f"{self.template.tool_call_open}\n"
        elif isinstance(forced, str):
            prefix = f'{self.template.tool_call_open}\n{{"name": "{forced}", "arguments": '
        if prefix:
            ids = ids + self.tokenizer.encode(prefix)
        # Without tools there are no tool_calls (as OpenAI and vLLM): the text comes back whole, so a
        # benchmark that scores raw text (T-Eval) sees the same string in-process and over HTTP.
        return Prompt(ids=ids, prefix=prefix, parse_calls=forced is not False and bool(tool_list))

    def _transcript(self, msgs: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Transcript:
        """The conversation built the way the episode driver builds it: the opening (everything
        before the first assistant message) rendered once, then each later message appended.

        Not one full render: Qwen3's template drops the empty think block of earlier assistant
        turns in a full render, while every turn the policy generated in training followed the
        generation prompt that holds it. Appending reproduces the trained-on ids exactly."""
        head = next((i for i, m in enumerate(msgs) if m["role"] in ("assistant", "tool")), len(msgs))
        tr = Transcript.start(self.template, self.tokenizer, msgs[:head], tools)
        i = head
        while i < len(msgs):
            m = msgs[i]
            if m["role"] == "assistant":
                tr.append_assistant(m, train=False)
            elif m["role"] == "tool":
                j = i
                while j < len(msgs) and msgs[j]["role"] == "tool":
                    j += 1
                tr.append_tool_results([t["content"] for t in msgs[i:j]])
                i = j
                continue
            elif m["role"] == "user":
                tr.append_user(m["content"])
            else:
                tr.append_system(m["content"])
            i += 1
        return tr

    def budget(self, n_prompt: int, max_tokens: int | None) -> int:
        """Tokens the turn may generate; :class:`RequestError` when the context does not fit."""
        room = self.max_len - n_prompt
        if room < 1:
            raise RequestError(f"This model's maximum context length is {self.max_len} tokens, but the messages "
                               f"take {n_prompt} tokens", param="messages", code="context_length_exceeded")
        if max_tokens is None:
            return room
        if max_tokens > room:
            raise RequestError(f"This model's maximum context length is {self.max_len} tokens; the messages take "
                               f"{n_prompt} and max_tokens asks for {max_tokens} more", param="max_tokens",
                               code="context_length_exceeded")
        return max_tokens

    # ---- generation -------------------------------------------------------------------------
    async def _generate(self, ids: list[int], max_new: int, temperature: float, top_p: float, seed: int | None,
                        on_token: Any = None) -> Generation:
        sampling = SamplingConfig(temperature=temperature, top_p=top_p, max_new_tokens=max_new)
        seed = random.getrandbits(32) if seed is None else seed
        async with self.engine.session(seed) as sess:
            return await sess.generate(ids, sampling, stream=0, on_token=on_token)

    def _text(self, gen: Generation) -> str:
        ids = gen.ids[:-1] if gen.finish == "stop" and gen.ids else gen.ids
        return self.tokenizer.decode(ids)

    def reply(self, prompt: Prompt, gen: Generation, stop: Sequence[str] = ()) -> ChatReply:
        """Turn a generation into a reply: parse calls (unless ``tool_choice`` was ``none``)."""
        text, hit = _cut_at_stop(prompt.prefix + self._text(gen), stop)
        finish = "stop" if hit else gen.finish
        if prompt.parse_calls:
            parsed = parse_tool_calls(text)
            calls = openai_tool_calls(parsed)
            return ChatReply(content=parsed.content, tool_calls=calls, finish_reason=_finish(finish, bool(calls)),
                             text=text, reasoning=parsed.reasoning, invalid_calls=len(parsed.errors),
                             prompt_tokens=len(prompt.ids), completion_tokens=len(gen.ids))
        return ChatReply(content=text.strip(), tool_calls=[], finish_reason=_finish(finish, False), text=text,
                         prompt_tokens=len(prompt.ids), completion_tokens=len(gen.ids))

    async def chat(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None = None,
                   *, tool_choice: str | Mapping[str, Any] = "auto", max_tokens: int | None = None,
                   temperature: float = 0.0, top_p: float = 1.0, seed: int | None = 0,
                   stop: Sequence[str] = ()) -> ChatReply:
        prompt = self.render(messages, tools, tool_choice)
        gen = await self._generate(prompt.ids, self.budget(len(prompt.ids), max_tokens), temperature, top_p, seed)
        return self.reply(prompt, gen, stop)

    async def _deltas(self, ids: list[int], budget: int, temperature: float, top_p: float, seed: int | None,
                      visible: Any) -> AsyncIterator[str | Generation]:
        """Text deltas while the turn is sampled — each the growth of ``visible(text so far)``, the
        part that is final whatever comes next — then the :class:`Generation`."""
        got: list[int] = []
        arrived = asyncio.Event()

        def on_token(tid: int) -> None:
            got.append(tid)
            arrived.set()

        task = asyncio.ensure_future(self._generate(ids, budget, temperature, top_p, seed, on_token))
        sent = ""
        try:
            while not task.done():
                waiter = asyncio.ensure_future(arrived.wait())
                await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                arrived.clear()
                safe = visible(self.tokenizer.decode(got))
                if len(safe) > len(sent) and safe.startswith(sent):
                    yield safe[len(sent):]
                    sent = safe
            gen = task.result()
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        yield gen

    async def chat_stream(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None = None,
                          *, tool_choice: str | Mapping[str, Any] = "auto", max_tokens: int | None = None,
                          temperature: float = 0.0, top_p: float = 1.0, seed: int | None = 0,
                          stop: Sequence[str] = ()) -> AsyncIterator[str | ChatReply]:
        """Content deltas (``str``) as tokens arrive, then the final :class:`ChatReply`.

        Text is held back while it could still turn into a tool-call block, a think block, a stop
        string or an incomplete UTF-8 character, so the deltas concatenate to the reply's
        ``content``; the calls come whole in the final reply (their arguments are only valid JSON
        once the block is closed). A forced call (``tool_choice``) streams no text."""
        prompt = self.render(messages, tools, tool_choice)
        budget = self.budget(len(prompt.ids), max_tokens)
        markers = (*self._markers, *stop)

        def visible(text: str) -> str:
            return "" if prompt.prefix else _hold_back(text, markers).strip()

        sent = ""
        async for item in self._deltas(prompt.ids, budget, temperature, top_p, seed, visible):
            if isinstance(item, str):
                sent += item
                yield item
            else:
                reply = self.reply(prompt, item, stop)
        if reply.content.startswith(sent) and len(reply.content) > len(sent):
            yield reply.content[len(sent):]
        yield reply

    def _encode_prompt(self, prompt: str | Sequence[int]) -> list[int]:
        ids = self.tokenizer.encode(prompt) if isinstance(prompt, str) else [int(i) for i in prompt]
        if not ids:
            raise RequestError("prompt must not be empty", param="prompt")
        return ids

    async def complete(self, prompt: str | Sequence[int], *, max_tokens: int | None = 16, temperature: float = 1.0,
                       top_p: float = 1.0, seed: int | None = None, stop: Sequence[str] = ()
                       ) -> tuple[str, str, int, int]:
        """Raw completion (``/v1/completions``): ``(text, finish_reason, prompt_tokens, completion_tokens)``.
        The prompt is encoded as given: no template is applied (the client rendered it)."""
        ids = self._encode_prompt(prompt)
        gen = await self._generate(ids, self.budget(len(ids), max_tokens), temperature, top_p, seed)
        text, hit = _cut_at_stop(self._text(gen), stop)
        return text, "stop" if hit or gen.finish == "stop" else "length", len(ids), len(gen.ids)

    async def complete_stream(self, prompt: str | Sequence[int], *, max_tokens: int | None = 16,
                              temperature: float = 1.0, top_p: float = 1.0, seed: int | None = None,
                              stop: Sequence[str] = ()) -> AsyncIterator[str | tuple[str, str, int, int]]:
        """Text deltas of a raw completion as tokens arrive (held back only at a possible stop string
        or an incomplete character), then the :meth:`complete` tuple."""
        ids = self._encode_prompt(prompt)
        budget = self.budget(len(ids), max_tokens)
        markers = (*stop, *self._stop_texts)
        sent = ""
        async for item in self._deltas(ids, budget, temperature, top_p, seed, lambda t: _hold_back(t, markers)):
            if isinstance(item, str):
                sent += item
                yield item
            else:
                text, hit = _cut_at_stop(self._text(item), stop)
                if text.startswith(sent) and len(text) > len(sent):
                    yield text[len(sent):]
                yield text, "stop" if hit or item.finish == "stop" else "length", len(ids), len(item.ids)


def _hold_back(text: str, markers: Sequence[str]) -> str:
    """The prefix of ``text`` before the first of ``markers`` and before any suffix that could still
    grow into one, without a trailing incomplete UTF-8 character (decoded as U+FFFD)."""
    cut = len(text)
    for marker in markers:
        if not marker:
            continue
        i = text.find(marker)
        if i >= 0:
            cut = min(cut, i)
        else:
            for k in range(min(len(marker) - 1, len(text)), 0, -1):
                if text.endswith(marker[:k]):
                    cut = min(cut, len(text) - k)
                    break
    head = text[:cut]
    while head.endswith("\ufffd"):
        head = head[:-1]
    return head


class OpenAIChat:
    """A :class:`ChatClient` over an OpenAI-compatible ``/v1`` URL (``prove_jax.serve``, vLLM, ...).

    Uses a pooled ``httpx.AsyncClient``; close it with ``await client.aclose()`` or ``async with``.
    """

    def __init__(self, base_url: str, model: str, *, api_key: str = "EMPTY", timeout: float = 600.0,
                 max_connections: int = 256) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        self.http = httpx.AsyncClient(base_url=self.base_url, timeout=timeout, limits=limits,
                                      headers={"Authorization": f"Bearer {api_key}"})

    async def __aenter__(self) -> OpenAIChat:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.http.aclose()

    async def chat(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None = None,
                   *, tool_choice: str | Mapping[str, Any] = "auto", max_tokens: int | None = None,
                   temperature: float = 0.0, top_p: float = 1.0, seed: int | None = 0,
                   stop: Sequence[str] = ()) -> ChatReply:
        body: dict[str, Any] = {"model": self.model, "messages": list(messages), "temperature": temperature,
                                "top_p": top_p}
        if tools:
            body["tools"], body["tool_choice"] = list(tools), tool_choice
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if seed is not None:
            body["seed"] = seed
        if stop:
            body["stop"] = list(stop)
        resp = await self.http.post("/chat/completions", json=body)
        if resp.status_code != 200:
            raise RuntimeError(f"{self.base_url}/chat/completions answered {resp.status_code}: {resp.text[:500]}")
        data = resp.json()
        choice = data["choices"][0]
        msg = choice.get("message") or {}
        usage = data.get("usage") or {}
        return ChatReply(content=msg.get("content") or "", tool_calls=list(msg.get("tool_calls") or []),
                         finish_reason=choice.get("finish_reason") or "stop", text=msg.get("content") or "",
                         reasoning=msg.get("reasoning_content"),
                         prompt_tokens=int(usage.get("prompt_tokens", 0)),
                         completion_tokens=int(usage.get("completion_tokens", 0)))
