"""A thin tokenizer over ``tokenizers.Tokenizer``, loaded from a local Hugging Face directory.

Why not ``transformers.AutoTokenizer``: the runtime must not import transformers or torch
(DESIGN.md, Layering). The Rust ``tokenizers`` library reads the same ``tokenizer.json`` and gives
the same ids; ``tokenizer_config.json`` only adds which strings are eos/pad and the chat template,
which we read ourselves. Tests check the ids against ``transformers`` on the real Qwen3 tokenizer.

Both target families add no BOS (Qwen ``bos_token: null``; Granite ``add_bos_token: false``), so
:meth:`ChatTokenizer.encode` never adds special tokens; chat-control tokens written *in the text*
(``<|im_start|>``, ``<tool_call>`` …) are matched as single added tokens, exactly as
``apply_chat_template(..., tokenize=True)`` does.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer

TOKENIZER_FILE = "tokenizer.json"
CONFIG_FILE = "tokenizer_config.json"


def _token_str(value: Any) -> str | None:
    """tokenizer_config stores special tokens either as a string or as an AddedToken dict."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return value["content"]
    return None


class ChatTokenizer:
    """Encode/decode text with a chat model's tokenizer; knows its eos/pad and chat template.

    ``len(tok)`` counts the base vocabulary plus added tokens (what ``len()`` of a transformers
    tokenizer returns). Model embedding tables are often padded beyond it (Qwen3: 151936 rows vs
    151669 ids), and the sampler must mask logits of ids ``>= len(tok)``.
    """

    def __init__(self, tokenizer: Tokenizer, config: dict[str, Any] | None = None) -> None:
        self._tok = tokenizer
        self.config: dict[str, Any] = dict(config or {})
        self.eos_token: str | None = _token_str(self.config.get("eos_token"))
        self.pad_token: str | None = _token_str(self.config.get("pad_token"))
        template = self.config.get("chat_template")
        self.chat_template: str | None = template if isinstance(template, str) else None
        added = self._tok.get_added_tokens_decoder()
        self.special_tokens: frozenset[str] = frozenset(t.content for t in added.values() if t.special)
        self.added_tokens: frozenset[str] = frozenset(t.content for t in added.values())

    @classmethod
    def from_dir(cls, path: str | Path) -> ChatTokenizer:
        """Load ``tokenizer.json`` (+ ``tokenizer_config.json`` if present) from a directory."""
        root = Path(path)
        tok = Tokenizer.from_file(str(root / TOKENIZER_FILE))
        cfg_path = root / CONFIG_FILE
        config = json.loads(cfg_path.read_text(encoding="utf-8")) if cfg_path.exists() else {}
        template_file = root / "chat_template.jinja"  # newer HF layout keeps the template beside
        if "chat_template" not in config and template_file.exists():
            config["chat_template"] = template_file.read_text(encoding="utf-8")
        return cls(tok, config)

    @property
    def backend(self) -> Tokenizer:
        """The underlying ``tokenizers.Tokenizer`` (for batch encoding in hot loops)."""
        return self._tok

    def __len__(self) -> int:
        return self._tok.get_vocab_size(with_added_tokens=True)

    @property
    def vocab_size(self) -> int:
        """Number of valid ids (same as ``len``); embedding tables may have more rows."""
        return len(self)

    def encode(self, text: str) -> list[int]:
        """Ids of ``text`` with no BOS/EOS added; control tokens in the text become single ids."""
        return self._tok.encode(text, add_special_tokens=False).ids

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """Batch form of :meth:`encode` (parallel in Rust)."""
        return [e.ids for e in self._tok.encode_batch(list(texts), add_special_tokens=False)]

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = False) -> str:
        """Text of ``ids``. Keep special tokens by default: the tool-call parser needs the tags
        (Qwen's ``<tool_call>`` is a non-special added token and survives either way)."""
        return self._tok.decode(list(ids), skip_special_tokens=skip_special_tokens)

    def id_to_token(self, token_id: int) -> str | None:
        """The token string of an id, or ``None`` when out of range."""
        return self._tok.id_to_token(token_id)

    def token_id(self, token: str) -> int:
        """Id of a token that must exist as a single vocabulary entry (raises ``KeyError``)."""
        tid = self._tok.token_to_id(token)
        if tid is None:
            raise KeyError(f"{token!r} is not a single token of this tokenizer")
        return tid

    def maybe_token_id(self, token: str) -> int | None:
        """Id of ``token`` if it is a single vocabulary entry, else ``None``."""
        return self._tok.token_to_id(token)

    @property
    def eos_id(self) -> int | None:
        """Id of ``eos_token`` from tokenizer_config (Qwen: ``<|im_end|>``)."""
        return self.maybe_token_id(self.eos_token) if self.eos_token else None

    @property
    def pad_id(self) -> int | None:
        """Id of ``pad_token`` from tokenizer_config (Qwen: ``<|endoftext|>``)."""
        return self.maybe_token_id(self.pad_token) if self.pad_token else None

    def save(self, path: str | Path) -> Path:
        """Write ``tokenizer.json`` and ``tokenizer_config.json`` to ``path`` (for HF export)."""
        root = Path(path)
        root.mkdir(parents=True, exist_ok=True)
        self._tok.save(str(root / TOKENIZER_FILE))
        (root / CONFIG_FILE).write_text(json.dumps(self.config, indent=2, ensure_ascii=False), encoding="utf-8")
        return root
