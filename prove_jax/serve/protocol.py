"""What every evaluation talks to: a chat policy that takes OpenAI-style messages and tools.

Benchmarks (BFCL, T-Eval, the in-domain report) and the HTTP server all speak this one small
interface, so a policy can be the JAX engine in the same process (:class:`EngineChat`) or any
OpenAI-compatible endpoint (:class:`OpenAIChat`, e.g. ``prove_jax.serve`` on another host, or
vLLM) without the benchmark knowing which. Messages and tool calls use the OpenAI wire format:
an assistant call is ``{"id", "type": "function", "function": {"name", "arguments": <JSON
string>}}``; tools are ``{"type": "function", "function": {"name", "description", "parameters"}}``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Protocol


@dataclasses.dataclass
class ChatReply:
    """One assistant message as a policy produced it.

    ``content`` is the text outside tool-call blocks and reasoning; ``tool_calls`` are the parsed
    calls in OpenAI form (malformed blocks are not calls: they stay out of ``tool_calls`` and
    are counted in ``invalid_calls``); ``finish_reason`` is ``tool_calls``, ``stop`` or
    ``length``; ``text`` is the raw decoded turn.
    """

    content: str
    tool_calls: list[dict[str, Any]]
    finish_reason: str
    text: str = ""
    reasoning: str | None = None
    invalid_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def message(self) -> dict[str, Any]:
        """The reply as an assistant message to append to the conversation."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            msg["tool_calls"] = self.tool_calls
        return msg


class ChatClient(Protocol):
    """A chat policy. ``temperature == 0`` is greedy; ``seed`` makes sampling reproducible."""

    async def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        *,
        tool_choice: str | Mapping[str, Any] = "auto",
        max_tokens: int | None = None,
        temperature: float = 0.0,
        top_p: float = 1.0,
        seed: int = 0,
    ) -> ChatReply: ...
