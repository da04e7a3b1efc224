"""Token-exact, append-only transcripts of multi-turn tool-use episodes (DESIGN Contract 3).

An RL rollout must train on *exactly* the ids the model saw and produced. Re-rendering the
conversation with the chat template and re-tokenizing it is wrong twice over: the sampled ids
need not be the canonical tokenization of their own text (BPE is many-to-one), and Qwen3's
template drops earlier turns' reasoning once a new user query arrives, so a re-render is not
even a prefix of what the model saw. :class:`Transcript` therefore only ever *appends*:

* the opening context (system + tools + first user turn) is rendered once;
* :meth:`Transcript.start_assistant` appends the generation prompt;
* :meth:`Transcript.append_generated` appends the sampled ids verbatim (loss mask 1, with their
  log-probs); the model's stop token (``<|im_end|>`` / ``<|end_of_text|>``) is part of them;
* :meth:`Transcript.append_tool_results` / :meth:`Transcript.append_user` append the next turn,
  prefixed with the separator (``"\\n"``) the template writes after the stop token.

**Suffix property.** Let ``H`` be the messages so far and ``N`` the new tool or user messages.
Each appended chunk is the text ``render(H + N, gen_prompt)[len(render(H)):]``, re-split so that
the separator after the model's stop token is owned by the *next* chunk. Every boundary between
chunks we encode has a control token on one side (the model's ``<|im_end|>``/``<|end_of_text|>``
before our separator, or the ``<|im_start|>``/``<|start_of_role|>`` that opens our next chunk),
and tokenizers split on added tokens before pre-tokenizing or merging, so encoding the chunks
separately gives the same ids as encoding the whole render. The one boundary that is not at a control token is generation prompt → model output
(``…assistant\n`` | ``Sure``): there the ids are the model's own, and they equal the render's
tokenization whenever the model produced the canonical tokenization of its text (the tests use
such turns). Hence ``transcript.tokens == encode(render(messages))`` in that case — tested
against ``transformers.apply_chat_template`` for Qwen2.5, Qwen3 and Granite-4.1.

**Where equality cannot hold, by design:**

1. Sampled ids that are not the canonical tokenization (always possible): we keep the sampled
   ids, which is what the model actually conditioned on.
2. Qwen3: the official render shows a think block only for assistant turns after the last user
   query that have reasoning or are the final message. So a new user query makes earlier
   reasoning disappear from the render, and with ``enable_thinking=False`` every non-final turn
   loses the empty ``<think>\n\n</think>\n\n`` its generation prompt contained. The transcript
   keeps what the model saw (intended: the policy gradient must be taken on the context the
   sampler used). Every appended chunk still equals the *tail* of the full render at that point.
3. A turn cut off by the token budget: the model never emitted its stop token, so the transcript
   closes the turn with the template's stop token, unmasked (the model "sees" a closed turn).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prove_jax.chat.templates import ChatTemplate, Message
from prove_jax.chat.tokenizer import ChatTokenizer


@dataclass(frozen=True)
class Span:
    """A contiguous run of transcript ids belonging to one turn piece.

    ``kind`` is one of ``context`` (opening render), ``prompt`` (generation prompt),
    ``generated`` (model ids), ``assistant`` (teacher-forced assistant body), ``close`` (stop
    token added after a truncated turn), ``tool`` and ``user``.
    """

    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class SpecialIds:
    """Ids the rollout engine needs: when to stop a turn and what ends a tool call.

    ``tool_call_open``/``tool_call_close`` are ``None`` where the format writes its tool tags as
    plain text (several tokens: SmolLM2's vocabulary has no ``<tool_call>``); the parser reads text.
    """

    end_of_turn: int
    stop_ids: tuple[int, ...]
    tool_call_open: int | None
    tool_call_close: int | None
    pad: int | None
    vocab_size: int


def special_ids(template: ChatTemplate, tokenizer: ChatTokenizer) -> SpecialIds:
    """Resolve the template's control tokens to ids; fails loudly if a required one is missing
    or not a single token (a mismatched tokenizer/template pair would silently corrupt turns).
    The tool tags get ids only where the template requires them as tokens (its ``control_tokens``)."""
    controls = template.control_tokens
    for tok in controls:
        tokenizer.token_id(tok)  # raises KeyError if absent
    stops = tuple(dict.fromkeys(t for t in (tokenizer.maybe_token_id(s) for s in template.stop_tokens) if t is not None))
    return SpecialIds(
        end_of_turn=tokenizer.token_id(template.end_of_turn),
        stop_ids=stops,
        tool_call_open=tokenizer.token_id(template.tool_call_open) if template.tool_call_open in controls else None,
        tool_call_close=tokenizer.token_id(template.tool_call_close) if template.tool_call_close in controls else None,
        pad=tokenizer.pad_id,
        vocab_size=len(tokenizer),
    )


@dataclass
class Transcript:
    """Append-only ids + loss mask + log-probs of one episode (parallel lists of equal length).

    Not thread-safe; one per episode. ``loss_mask`` is True exactly on ids the model generated
    (or, for SFT, on teacher-forced assistant bodies appended with ``train=True``).
    """

    template: ChatTemplate
    tokenizer: ChatTokenizer
    tokens: list[int] = field(default_factory=list)
    loss_mask: list[bool] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    _assistant_open: bool = False
    _owe_separator: bool = False
    _special_cache: SpecialIds | None = None

    # ---- construction -----------------------------------------------------------------------
    @classmethod
    def start(
        cls,
        template: ChatTemplate,
        tokenizer: ChatTokenizer,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> Transcript:
        """Begin with the full render of ``messages`` (system, tools, first user turn, any prior
        history), all unmasked. The render is the only one ever done for this episode."""
        self = cls(template=template, tokenizer=tokenizer)
        self._special()  # validate the tokenizer/template pairing once, up front
        if messages or tools:
            self._push("context", template.render(messages, tools))
        return self

    # ---- appends ----------------------------------------------------------------------------
    def start_assistant(self) -> list[int]:
        """Append the generation prompt and return its ids (the engine then samples)."""
        if self._assistant_open:
            raise RuntimeError("an assistant turn is already open; append_generated first")
        ids = self._push("prompt", self._pending() + self.template.generation_prompt())
        self._assistant_open = True
        return ids

    def append_generated(self, ids: Sequence[int], logprobs: Sequence[float] | None = None) -> None:
        """Append sampled ids verbatim (mask 1). May be called repeatedly for one turn (streaming);
        the turn ends when an id in the stop set arrives, which must then be the last id."""
        if not self._assistant_open:
            raise RuntimeError("no open assistant turn; call start_assistant first")
        ids = [int(i) for i in ids]
        if logprobs is not None and len(logprobs) != len(ids):
            raise ValueError(f"{len(logprobs)} logprobs for {len(ids)} ids")
        stops = set(self._special().stop_ids)
        for k, tid in enumerate(ids[:-1]):
            if tid in stops:
                raise ValueError(f"stop id {tid} at position {k} is not the last generated id")
        start = len(self.tokens)
        self.tokens.extend(ids)
        self.loss_mask.extend([True] * len(ids))
        self.logprobs.extend([float(x) for x in logprobs] if logprobs is not None else [0.0] * len(ids))
        self._add_span("generated", start)
        if ids and ids[-1] in stops:
            if ids[-1] != self._special().end_of_turn:  # e.g. Qwen <|endoftext|>: close the turn properly
                self._push("close", self.template.end_of_turn)
            self._assistant_open = False
            self._owe_separator = True

    def append_assistant(self, message: Message, *, train: bool = True) -> list[int]:
        """Teacher-force a whole assistant turn (SFT / oracle policy): generation prompt
        (unmasked) + the template's body for ``message`` through the stop token (masked iff
        ``train``). Returns the body ids."""
        if not self._assistant_open:
            self.start_assistant()
        ids = self._push("assistant", self.template.assistant_body(message), train=train)
        self._assistant_open = False
        self._owe_separator = True
        return ids

    def close_assistant(self) -> list[int]:
        """Close a turn the model did not finish (token budget): append the stop token, unmasked.
        No-op (returns ``[]``) when no turn is open. Called implicitly by the appends below."""
        if not self._assistant_open:
            return []
        ids = self._push("close", self.template.end_of_turn)
        self._assistant_open = False
        self._owe_separator = True
        return ids

    def append_tool_results(self, contents: Sequence[str]) -> list[int]:
        """Append all results of the last assistant turn as one merged user turn (in call order)
        and return the appended ids. Each result is the tool's text (JSON or an error message)."""
        self.close_assistant()
        return self._push("tool", self._pending() + self.template.tool_results_turn(list(contents)))

    def append_user(self, text: str) -> list[int]:
        """Append a new user turn and return its ids."""
        self.close_assistant()
        return self._push("user", self._pending() + self.template.turn("user", text))

    def append_system(self, text: str) -> list[int]:
        """Append a system turn mid-conversation (an instruction injected between turns)."""
        self.close_assistant()
        return self._push("user", self._pending() + self.template.turn("system", text))

    def fork(self) -> Transcript:
        """An independent copy (e.g. one per GRPO sample after rendering the shared prompt once;
        the context render + encode is the most expensive step of an episode)."""
        return Transcript(
            template=self.template,
            tokenizer=self.tokenizer,
            tokens=list(self.tokens),
            loss_mask=list(self.loss_mask),
            logprobs=list(self.logprobs),
            spans=list(self.spans),
            _assistant_open=self._assistant_open,
            _owe_separator=self._owe_separator,
            _special_cache=self._special_cache,
        )

    # ---- views ------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def assistant_open(self) -> bool:
        """True between :meth:`start_assistant` and the end of the generated turn."""
        return self._assistant_open

    def generated_spans(self) -> list[Span]:
        """Spans of model-generated (and teacher-forced) assistant ids, in order."""
        return [s for s in self.spans if s.kind in ("generated", "assistant")]

    def decode(self, start: int = 0, end: int | None = None) -> str:
        """Text of ``tokens[start:end]`` with control tokens kept (for parsing and debugging)."""
        return self.tokenizer.decode(self.tokens[start:end])

    def as_arrays(self) -> tuple[Any, Any, Any]:
        """``(tokens int32[T], loss_mask bool[T], logprobs float32[T])`` as numpy arrays."""
        import numpy as np

        return (
            np.asarray(self.tokens, dtype=np.int32),
            np.asarray(self.loss_mask, dtype=bool),
            np.asarray(self.logprobs, dtype=np.float32),
        )

    # ---- internals --------------------------------------------------------------------------
    def _special(self) -> SpecialIds:
        if self._special_cache is None:
            self._special_cache = special_ids(self.template, self.tokenizer)
        return self._special_cache

    def _pending(self) -> str:
        sep = self.template.turn_separator if self._owe_separator else ""
        self._owe_separator = False
        return sep

    def _push(self, kind: str, text: str, *, train: bool = False) -> list[int]:
        ids = self.tokenizer.encode(text)
        start = len(self.tokens)
        self.tokens.extend(ids)
        self.loss_mask.extend([train] * len(ids))
        self.logprobs.extend([0.0] * len(ids))
        self._add_span(kind, start)
        return ids

    def _add_span(self, kind: str, start: int) -> None:
        if len(self.tokens) > start:
            self.spans.append(Span(kind, start, len(self.tokens)))
