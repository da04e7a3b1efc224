"""Per-family chat renderers: Qwen2.5, SmolLM2, Qwen3 (thinking on/off) and Granite-4.1.

Each renderer turns OpenAI-style messages + tool schemas into the exact text the family's
official chat template produces (checked id-for-id against ``transformers`` and the real
templates in ``tests/chat``), and also into the *pieces* the incremental transcript appends:
the generation prompt, one assistant body, a merged tool-results turn, a user turn. The pieces
are chosen so that ``render(history + new) == render(history) + piece`` wherever the official
template is prefix-stable (see :mod:`prove_jax.chat.transcript` for where it is not).

Messages are dicts: ``{"role": "system"|"user"|"tool", "content": str}`` and
``{"role": "assistant", "content": str|None, "tool_calls": [...], "reasoning_content": str}``
(``reasoning`` is accepted as an alias). A tool call is ``{"name", "arguments"}`` or the OpenAI
wrapper ``{"type": "function", "function": {"name", "arguments"}}``; ``arguments`` is a dict or a
JSON string. Tools are ``{"type": "function", "function": {name, description, parameters}}``
and are serialised like Jinja's ``tojson`` in transformers (``json.dumps``, ``ensure_ascii=False``,
default separators, key order kept).

This module is pure string manipulation: no tokenizer, no I/O. Which renderer a family name means
(and what a tokenizer of that family needs) is registered in :mod:`prove_jax.chat.families`.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Message = Mapping[str, Any]

QWEN25_DEFAULT_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
SMOLLM2_DEFAULT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"

_QWEN_TOOLS_HEAD = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
_QWEN_TOOLS_TAIL = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments "
    'within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, '
    '"arguments": <args-json-object>}\n</tool_call>'
)
_GRANITE_TOOLS_HEAD = (
    "You are a helpful assistant with access to the following tools. You may call one or more tools "
    "to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> "
    "XML tags:\n<tools>"
)
_GRANITE_TOOLS_TAIL = (
    "\n</tools>\n\nFor each tool call, return a json object with function name and arguments within "
    '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": '
    "<args-json-object>}\n</tool_call>. If a tool does not exist in the provided list of tools, notify "
    "the user that you do not have the ability to fulfill the request."
)


def tojson(value: Any) -> str:
    """transformers' Jinja ``tojson``: ``json.dumps`` without ASCII escaping or HTML escaping."""
    return json.dumps(value, ensure_ascii=False)


def text_of(message: Message) -> str:
    """A message's text content; ``None``/missing is empty (transformers drops ``None`` keys)."""
    content = message.get("content")
    if content is None:
        return ""
    if not isinstance(content, str):
        raise TypeError(f"message content must be str or None, got {type(content).__name__}")
    return content


def tool_calls_of(message: Message) -> list[tuple[str, Any]]:
    """``(name, arguments)`` of each call, unwrapping the OpenAI ``{"function": {...}}`` form."""
    out: list[tuple[str, Any]] = []
    for call in message.get("tool_calls") or ():
        fn = call.get("function") or call
        out.append((str(fn["name"]), fn.get("arguments", {})))
    return out


def reasoning_of(message: Message) -> str | None:
    """Explicit reasoning text of an assistant message (``reasoning_content`` or ``reasoning``)."""
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if isinstance(value, str):
            return value
    return None


def _has_role(messages: Sequence[Message], index: int, role: str) -> bool:
    return 0 <= index < len(messages) and messages[index].get("role") == role


@dataclass(frozen=True)
class ChatTemplate(ABC):
    """Renderer for one family; subclasses fill in the role markup and tool-call formatting.

    ``end_of_turn`` is the token that closes every turn and that the model emits to stop;
    ``turn_separator`` is the text the template writes after it, which the model does *not*
    generate and the transcript therefore adds (unmasked) before the next turn.
    """

    family: str = ""
    end_of_turn: str = ""
    turn_separator: str = "\n"
    tool_call_open: str = "<tool_call>"
    tool_call_close: str = "</tool_call>"
    tool_response_open: str = "<tool_response>"
    tool_response_close: str = "</tool_response>"
    role_markers: tuple[str, ...] = ()

    # ---- family-specific markup -------------------------------------------------------------
    @abstractmethod
    def role_header(self, role: str) -> str:
        """Text opening a turn of ``role`` (for ChatML also the newline after the role)."""

    @abstractmethod
    def system_text(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None) -> str | None:
        """Body of the leading system turn, or ``None`` when the template emits none."""

    def format_arguments(self, arguments: Any) -> str:
        """How a call's ``arguments`` are written inside a ``<tool_call>``: a JSON string raw (it
        already is JSON), anything else through ``tojson``."""
        return arguments if isinstance(arguments, str) else tojson(arguments)

    def generation_prompt(self) -> str:
        """Text that opens the assistant turn the model is asked to write."""
        return self.role_header("assistant")

    @property
    def control_tokens(self) -> tuple[str, ...]:
        """Strings the renderer writes that must be single tokens of the tokenizer."""
        return (*self.role_markers, self.end_of_turn, self.tool_call_open, self.tool_call_close)

    @property
    def stop_tokens(self) -> tuple[str, ...]:
        """Tokens at which sampling of an assistant turn stops (first = the template's own)."""
        return (self.end_of_turn,)

    # ---- shared building blocks -------------------------------------------------------------
    def format_tool_call(self, name: str, arguments: Any) -> str:
        """One ``<tool_call>`` block, byte-identical to what the family's template writes."""
        return (
            f'{self.tool_call_open}\n{{"name": "{name}", "arguments": {self.format_arguments(arguments)}}}'
            f"\n{self.tool_call_close}"
        )

    def _calls_text(self, content: str, message: Message) -> str:
        blocks = [self.format_tool_call(n, a) for n, a in tool_calls_of(message)]
        if not blocks:
            return ""
        return ("\n" if content else "") + "\n".join(blocks)

    def turn(self, role: str, content: str) -> str:
        """A complete non-assistant turn including the trailing separator."""
        return f"{self.role_header(role)}{content}{self.end_of_turn}{self.turn_separator}"

    def tool_results_turn(self, contents: Sequence[str]) -> str:
        """All consecutive tool results merged into one user turn (how every family renders them)."""
        if not contents:
            raise ValueError("tool_results_turn needs at least one result")
        blocks = "".join(f"\n{self.tool_response_open}\n{c}\n{self.tool_response_close}" for c in contents)
        return f"{self.role_header('user').rstrip(chr(10))}{blocks}{self.end_of_turn}{self.turn_separator}"

    def assistant_body(self, message: Message) -> str:
        """What the model writes after :meth:`generation_prompt` for ``message``, through the
        end-of-turn token (the teacher-forced target for SFT)."""
        content = text_of(message)
        return content + self._calls_text(content, message) + self.end_of_turn

    def _assistant_turn(self, messages: Sequence[Message], index: int) -> str:
        return self.generation_prompt() + self.assistant_body(messages[index]) + self.turn_separator

    def render(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]] | None = None,
        *,
        add_generation_prompt: bool = False,
    ) -> str:
        """Full render of a conversation, equal to the official template's output."""
        parts: list[str] = []
        system = self.system_text(messages, tools)
        if system is not None:
            parts.append(self.turn("system", system))
        for i, msg in enumerate(messages):
            role = msg.get("role")
            if role == "user" or (role == "system" and i > 0):
                parts.append(self.turn(str(role), text_of(msg)))
            elif role == "assistant":
                parts.append(self._assistant_turn(messages, i))
            elif role == "tool":
                if not _has_role(messages, i - 1, "tool"):
                    parts.append(self.role_header("user").rstrip("\n"))
                parts.append(f"\n{self.tool_response_open}\n{text_of(msg)}\n{self.tool_response_close}")
                if not _has_role(messages, i + 1, "tool"):
                    parts.append(self.end_of_turn + self.turn_separator)
        if add_generation_prompt:
            parts.append(self.generation_prompt())
        return "".join(parts)


@dataclass(frozen=True)
class Qwen25Template(ChatTemplate):
    """Qwen2.5-Instruct ChatML with the Qwen default system prompt.

    Deliberate deviation: the official template always applies ``tojson`` to ``arguments``, so an
    OpenAI-style JSON *string* would be written double-encoded (``"{\\"city\\": …}"``) and teach the
    model to emit strings. Like Qwen3 and Granite we write such a string raw instead; with dict
    arguments (what the rest of prove_jax passes) the output is identical to the official template.
    """

    family: str = "qwen2.5"
    end_of_turn: str = "<|im_end|>"
    role_markers: tuple[str, ...] = ("<|im_start|>",)
    default_system: str = QWEN25_DEFAULT_SYSTEM
    """The system turn written when the conversation has none (a ChatML variant may change it)."""

    def role_header(self, role: str) -> str:
        return f"<|im_start|>{role}\n"

    @property
    def stop_tokens(self) -> tuple[str, ...]:
        return ("<|im_end|>", "<|endoftext|>")

    def system_text(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None) -> str:
        base = text_of(messages[0]) if _has_role(messages, 0, "system") else self.default_system
        if not tools:
            return base
        lines = "".join("\n" + tojson(t) for t in tools)
        return f"{base}\n\n{_QWEN_TOOLS_HEAD}{lines}{_QWEN_TOOLS_TAIL}"


@dataclass(frozen=True)
class SmolLM2Template(Qwen25Template):
    """SmolLM2-Instruct: ChatML with SmolLM's own default system prompt.

    Without tools this *is* SmolLM2's template (``tests/chat``, ``tests/engine/test_smollm2.py``:
    token-identical to ``apply_chat_template``). SmolLM2's template has no tools section and no
    tool-call syntax, so with tools we write Qwen2.5's Hermes section and ``<tool_call>`` blocks:
    the ChatML dialect our parser, synthesized data and SFT already speak, so a SmolLM2 trained
    here learns the same format every other ChatML policy does. Its vocabulary has no
    ``<tool_call>`` token: the tags are plain text (several tokens each), which the text parser
    reads the same way, so only the role markers and ``<|im_end|>`` must be single tokens.
    """

    family: str = "smollm2"
    default_system: str = SMOLLM2_DEFAULT_SYSTEM

    @property
    def control_tokens(self) -> tuple[str, ...]:
        return (*self.role_markers, self.end_of_turn)


@dataclass(frozen=True)
class Qwen3Template(ChatTemplate):
    """Qwen3 (hybrid thinking) ChatML: no default system prompt, ``<think>`` blocks.

    ``enable_thinking=False`` pre-fills an empty ``<think>\\n\\n</think>\\n\\n`` in the generation
    prompt, so the model answers directly; with ``True`` the model opens ``<think>`` itself.
    In a full render, reasoning is shown only for assistant turns after the last real user query
    (and an empty think block for the final turn); earlier reasoning is dropped. That makes the
    template *not* prefix-stable across user turns, which is why RL transcripts are built by
    appending ids (see :mod:`prove_jax.chat.transcript`).
    """

    family: str = "qwen3"
    end_of_turn: str = "<|im_end|>"
    role_markers: tuple[str, ...] = ("<|im_start|>",)
    enable_thinking: bool = True

    def role_header(self, role: str) -> str:
        return f"<|im_start|>{role}\n"

    @property
    def control_tokens(self) -> tuple[str, ...]:
        return (*super().control_tokens, "<think>", "</think>", self.tool_response_open, self.tool_response_close)

    @property
    def stop_tokens(self) -> tuple[str, ...]:
        return ("<|im_end|>", "<|endoftext|>")

    def generation_prompt(self) -> str:
        empty_think = "" if self.enable_thinking else "<think>\n\n</think>\n\n"
        return self.role_header("assistant") + empty_think

    def system_text(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None) -> str | None:
        has_system = _has_role(messages, 0, "system")
        if not tools:
            return text_of(messages[0]) if has_system else None
        lines = "".join("\n" + tojson(t) for t in tools)
        prefix = text_of(messages[0]) + "\n\n" if has_system else ""
        return f"{prefix}{_QWEN_TOOLS_HEAD}{lines}{_QWEN_TOOLS_TAIL}"

    @staticmethod
    def split_think(message: Message) -> tuple[str, str]:
        """``(reasoning, content)``: explicit reasoning, else a ``<think>`` block inside content."""
        content = text_of(message)
        reasoning = reasoning_of(message)
        if reasoning is not None:
            return reasoning, content
        if "</think>" in content:
            head, _, _ = content.partition("</think>")
            reasoning = head.rstrip("\n").split("<think>")[-1].lstrip("\n")
            return reasoning, content.split("</think>")[-1].lstrip("\n")
        return "", content

    @staticmethod
    def last_query_index(messages: Sequence[Message]) -> int:
        """Index of the last user message that is a real query (not wrapped tool responses)."""
        for i in range(len(messages) - 1, -1, -1):
            msg = messages[i]
            content = msg.get("content")
            wrapped = isinstance(content, str) and content.startswith("<tool_response>") and content.endswith(
                "</tool_response>"
            )
            if msg.get("role") == "user" and isinstance(content, str) and not wrapped:
                return i
        return len(messages) - 1

    def think_block(self, reasoning: str) -> str:
        """The reasoning block as the template writes it (newline-trimmed reasoning)."""
        return f"<think>\n{reasoning.strip(chr(10))}\n</think>\n\n"

    def assistant_body(self, message: Message) -> str:
        reasoning, content = self.split_think(message)
        calls = self._calls_text(content, message)
        if not self.enable_thinking:  # the empty think block is already in the generation prompt
            return content.lstrip("\n") + calls + self.end_of_turn
        return self.think_block(reasoning) + content.lstrip("\n") + calls + self.end_of_turn

    def _assistant_turn(self, messages: Sequence[Message], index: int) -> str:
        reasoning, content = self.split_think(messages[index])
        head = self.role_header("assistant")
        show_think = index > self.last_query_index(messages) and (index == len(messages) - 1 or reasoning)
        body = self.think_block(reasoning) + content.lstrip("\n") if show_think else content
        calls = self._calls_text(content, messages[index])
        return head + body + calls + self.end_of_turn + self.turn_separator


@dataclass(frozen=True)
class Granite41Template(ChatTemplate):
    """Granite 4.1 role markup ``<|start_of_role|>r<|end_of_role|>…<|end_of_text|>``.

    The 4.1 template emits a system turn only when a system message or tools are given (no
    default system prompt); tools go after the user's system text. No ``<think>`` support.
    ``documents`` (RAG) are not supported: prove_jax never passes them.
    """

    family: str = "granite-4.1"
    end_of_turn: str = "<|end_of_text|>"
    role_markers: tuple[str, ...] = ("<|start_of_role|>", "<|end_of_role|>")

    def role_header(self, role: str) -> str:
        return f"<|start_of_role|>{role}<|end_of_role|>"

    def system_text(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None) -> str | None:
        tools_text = ""
        if tools:
            tools_text = _GRANITE_TOOLS_HEAD + "".join("\n" + tojson(t) for t in tools) + _GRANITE_TOOLS_TAIL
        if _has_role(messages, 0, "system"):
            system = text_of(messages[0])
            if tools_text:
                system += "\n\n" + tools_text
        else:
            system = tools_text
        return system or None
