"""The chat formats, one :class:`ChatFamily` registration each: the renderer class, the names it
answers to, how a tokenizer's chat template or vocabulary gives it away, and what a tiny BPE of
ours needs to speak it (control tokens, eos, pad, the Jinja template written beside it).

A model family names its chat format (``ModelFamily.chat_family``); several may share one (every
ChatML model could use ``qwen2.5``). A new format is one ``register_chat_family(ChatFamily(...))``
(here for a built-in one, or through :func:`prove_jax.family.register_family` from outside); no
other module of ``chat`` names a format: :func:`get_template`, :func:`detect_family`,
:func:`jinja_template` and the tiny tokenizer read the registry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from typing import overload

from prove_jax.chat.jinja import chatml_jinja, granite_jinja
from prove_jax.chat.templates import (
    QWEN25_DEFAULT_SYSTEM,
    SMOLLM2_DEFAULT_SYSTEM,
    ChatTemplate,
    Granite41Template,
    Qwen3Template,
    Qwen25Template,
    SmolLM2Template,
)


@dataclasses.dataclass(frozen=True)
class ChatFamily:
    """One chat format (see the module docstring).

    ``markers``: strings that all occur in this format's chat template text (and, for control
    tokens, in its tokenizer's vocabulary); :func:`detect_family` picks the registered format with
    the most markers present, so a refinement (Qwen3 = ChatML + ``<think>``) wins over its base.
    ``tiny_tokens``: ``(token, special)`` in id order, appended after a tiny BPE's merges as the
    real tokenizers do; ``special`` mirrors the real tokenizer (Qwen keeps its tool/think tags
    non-special so they survive ``skip_special_tokens``). ``eos``/``pad`` name two of them.
    ``jinja``: builds the ``chat_template`` string (rendering exactly like ``template``) that a
    tokenizer we write carries, so ``transformers``/vLLM render as we do.
    """

    name: str
    template: type[ChatTemplate]
    markers: tuple[str, ...]
    tiny_tokens: tuple[tuple[str, bool], ...]
    eos: str
    pad: str
    jinja: Callable[[], str]
    aliases: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        tokens = [t for t, _ in self.tiny_tokens]
        if self.template().family != self.name:
            raise ValueError(f"{self.template.__name__}.family is not {self.name!r}")
        if self.eos not in tokens or self.pad not in tokens or not self.markers:
            raise ValueError(f"chat family {self.name!r}: eos and pad must be tiny tokens, markers non-empty")

    def make(self, *, enable_thinking: bool = True) -> ChatTemplate:
        """A renderer; ``enable_thinking`` reaches formats that have the switch (Qwen3)."""
        fields = {f.name for f in dataclasses.fields(self.template)}
        return self.template(enable_thinking=enable_thinking) if "enable_thinking" in fields else self.template()


_REGISTRY: dict[str, ChatFamily] = {}


def _key(name: str) -> str:
    return name.lower().replace("_", "-")


def register_chat_family(family: ChatFamily) -> ChatFamily:
    """Add ``family``; its name and aliases must not be taken (a lookup must mean one format)."""
    taken = {_key(n) for f in _REGISTRY.values() for n in (f.name, *f.aliases)}
    clash = taken & {_key(n) for n in (family.name, *family.aliases)}
    if clash:
        raise ValueError(f"chat family {family.name!r}: {sorted(clash)} already registered")
    _REGISTRY[family.name] = family
    return family


def unregister_chat_family(name: str) -> None:
    """Remove a format (tests and plugins that registered one for a while)."""
    _REGISTRY.pop(name, None)


def chat_family(name: str) -> ChatFamily:
    """The registration called ``name`` or one of its aliases (case and ``_``/``-`` ignored)."""
    key = _key(name)
    for family in _REGISTRY.values():
        if key in {_key(n) for n in (family.name, *family.aliases)}:
            return family
    raise ValueError(f"unknown chat family {name!r}; expected one of {tuple(_REGISTRY)}")


def get_template(family: str, *, enable_thinking: bool = True) -> ChatTemplate:
    """Renderer for ``family`` (``qwen2.5``, ``qwen3``, ``granite-4.1``, ...; aliases accepted)."""
    return chat_family(family).make(enable_thinking=enable_thinking)


def jinja_template(family: str) -> str:
    """A Jinja chat template for ``family`` that renders exactly like our Python renderer
    (for Qwen3, ``enable_thinking`` is read from the template variables as usual)."""
    return chat_family(family).jinja()


def detect_family(chat_template: str | None, vocab_tokens: frozenset[str] | set[str] = frozenset()) -> str:
    """Guess the format from a tokenizer's chat template text, else from its added tokens: the
    registered format with the most markers, all present (ties: the earlier registration)."""
    for haystack in (chat_template or "", vocab_tokens):
        found = [f for f in _REGISTRY.values() if all(m in haystack for m in f.markers)]
        if found:
            return max(found, key=lambda f: len(f.markers)).name
    raise ValueError("cannot tell the chat family: no known role markers in template or vocabulary")


class _Names(Sequence[str]):
    """The registered format names, in registration order, read live."""

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return tuple(_REGISTRY)[index]

    def __len__(self) -> int:
        return len(_REGISTRY)

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(_REGISTRY))

    def __repr__(self) -> str:
        return repr(tuple(_REGISTRY))


FAMILIES: Sequence[str] = _Names()
"""The registered chat formats (a live view; tests parametrize over it)."""


# ---- the built-in formats ------------------------------------------------------------------------
_QWEN_TOKENS: tuple[tuple[str, bool], ...] = (
    ("<|endoftext|>", True),
    ("<|im_start|>", True),
    ("<|im_end|>", True),
    ("<tool_call>", False),
    ("</tool_call>", False),
    ("<tool_response>", False),
    ("</tool_response>", False),
    ("<think>", False),
    ("</think>", False),
)
_GRANITE_TOKENS: tuple[tuple[str, bool], ...] = (
    ("<|pad|>", True),
    ("<|end_of_text|>", True),
    ("<|start_of_role|>", True),
    ("<|end_of_role|>", True),
    ("<tool_call>", False),
    ("</tool_call>", False),
    ("<tool_response>", False),
    ("</tool_response>", False),
)

register_chat_family(ChatFamily(
    "qwen2.5", Qwen25Template, markers=("<|im_start|>",), tiny_tokens=_QWEN_TOKENS, eos="<|im_end|>",
    pad="<|endoftext|>", jinja=lambda: chatml_jinja(thinking=False, default_system=QWEN25_DEFAULT_SYSTEM),
    aliases=("qwen2", "qwen25", "qwen2-5"),
))
register_chat_family(ChatFamily(
    "qwen3", Qwen3Template, markers=("<|im_start|>", "<think>"), tiny_tokens=_QWEN_TOKENS, eos="<|im_end|>",
    pad="<|endoftext|>", jinja=lambda: chatml_jinja(thinking=True, default_system=None),
))
# SmolLM2 (an HF ``llama``): detected by its default system prompt, which its template writes and no
# other does; the tiny tokenizer mirrors its vocabulary (ChatML markers, no tool tags as tokens).
register_chat_family(ChatFamily(
    "smollm2", SmolLM2Template, markers=("<|im_start|>", SMOLLM2_DEFAULT_SYSTEM),
    tiny_tokens=(("<|endoftext|>", True), ("<|im_start|>", True), ("<|im_end|>", True)), eos="<|im_end|>",
    pad="<|endoftext|>", jinja=lambda: chatml_jinja(thinking=False, default_system=SMOLLM2_DEFAULT_SYSTEM),
    aliases=("smollm",),
))
register_chat_family(ChatFamily(
    "granite-4.1", Granite41Template, markers=("<|start_of_role|>",), tiny_tokens=_GRANITE_TOKENS,
    eos="<|end_of_text|>", pad="<|pad|>", jinja=granite_jinja, aliases=("granite", "granite4", "granite-4"),
))
