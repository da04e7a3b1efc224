"""Rebuilding ``tokenizer.json`` (and its config files) from a GGUF's tokenizer metadata.

A GGUF stores a byte-level BPE (``tokenizer.ggml.model == "gpt2"``) as its parts: the vocabulary
(``tokens``, already spelled in the GPT-2 byte alphabet, ``Ġ`` for space), the ``merges`` in rank
order, a ``token_type`` per id, the bos/eos/pad/unk ids and ``add_bos_token``. What it does not
store is the *pre-tokenizer* — the regex that cuts text into words before BPE — only its name,
``tokenizer.ggml.pre``. llama.cpp hard-codes a regex per name, so we do the same for the names
our architectures use (:data:`PRE_TOKENIZERS`) and refuse the others: a wrong split gives other
ids for the same text, silently.

The pieces are put together with the ``tokenizers`` library (no transformers at run time):

* every token keeps its id (the vocabulary maps token -> id exactly as stored, so added tokens
  already have their ids and adding them does not grow the vocabulary);
* ``CONTROL`` tokens (type 3: ``<|im_start|>``, ``<|endoftext|>``) become special added tokens,
  ``USER_DEFINED`` ones (type 4: ``<tool_call>``, ``<think>``) plain added tokens — matched whole
  in text, but kept by ``decode(skip_special_tokens=True)``, as in the original HF tokenizers;
* Qwen2's original tokenizer NFC-normalises text first, so the ``qwen2`` pre-tokenizer does too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

from prove_jax.convert.reader import GGUFConversionError, GGUFFile

CONTROL, USER_DEFINED = 3, 4
"""llama.cpp token types (``gguf.TokenType``) that are added tokens in a Hugging Face tokenizer."""

_LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


@dataclass(frozen=True)
class PreTokenizer:
    """How one ``tokenizer.ggml.pre`` name cuts text, as llama.cpp implements it."""

    split: str | None
    """A regex (isolated matches) applied before the byte mapping; None = GPT-2's own regex."""
    digits: bool = False
    """Every digit is its own word first (StarCoder-style vocabularies: SmolLM)."""
    nfc: bool = False
    ignore_merges: bool = False
    """A word that is itself a token is taken whole, without BPE (llama.cpp's Llama-3 setting)."""
    add_bos: bool = False
    """llama.cpp's default for ``add_bos_token`` when the file does not say."""

    def build(self) -> Any:
        if self.split is None:
            byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
            return pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level]) \
                if self.digits else byte_level
        return pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(self.split), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])


_GPT2 = PreTokenizer(split=None)
_SMOLLM = PreTokenizer(split=None, digits=True)
_LLAMA3 = PreTokenizer(split=_LLAMA3_SPLIT, ignore_merges=True, add_bos=True)
_QWEN2 = PreTokenizer(split=_QWEN2_SPLIT, nfc=True)

PRE_TOKENIZERS: dict[str, PreTokenizer] = {
    "gpt-2": _GPT2,
    "gpt2": _GPT2,
    "smollm": _SMOLLM,
    "starcoder": _SMOLLM,
    "refact": _SMOLLM,
    "llama-bpe": _LLAMA3,
    "llama3": _LLAMA3,
    "llama-v3": _LLAMA3,
    "qwen2": _QWEN2,
    "deepseek-r1-qwen": _QWEN2,
}
"""``tokenizer.ggml.pre`` -> split rule, from llama.cpp's ``llama-vocab.cpp`` (same regexes as the
original ``tokenizer.json`` of those models)."""


@dataclass(frozen=True)
class TokenizerFiles:
    """What a Hugging Face directory holds for a tokenizer."""

    tokenizer: Tokenizer
    config: dict[str, Any]
    """``tokenizer_config.json``."""
    special_tokens_map: dict[str, Any]


def _pre_tokenizer(g: GGUFFile) -> PreTokenizer:
    name = g.get("tokenizer.ggml.pre", "default")
    rule = PRE_TOKENIZERS.get(name)
    if rule is None:
        raise GGUFConversionError(
            f"{g.path.name}: pre-tokenizer {name!r} (tokenizer.ggml.pre) is not supported; "
            f"supported: {sorted(PRE_TOKENIZERS)}"
        )
    return rule


def _vocab(tokens: list[str]) -> dict[str, int]:
    vocab: dict[str, int] = {}
    for i, tok in enumerate(tokens):
        if tok in vocab:
            raise GGUFConversionError(f"token {tok!r} appears twice in the vocabulary (ids {vocab[tok]} and {i})")
        vocab[tok] = i
    return vocab


def _merges(raw: list[str]) -> list[tuple[str, str]]:
    pairs = [tuple(m.split(" ")) for m in raw]
    bad = [m for m, p in zip(raw, pairs, strict=True) if len(p) != 2]
    if bad:
        raise GGUFConversionError(f"merge {bad[0]!r} is not two space-separated tokens")
    return pairs  # type: ignore[return-value]


def _post_processor(bos: str | None, eos: str | None, add_bos: bool, add_eos: bool, ids: dict[str, int]) -> Any:
    """Byte-level offsets, plus bos/eos around each sequence when the model wants them."""
    byte_level = processors.ByteLevel(trim_offsets=False)
    pre = [bos] if add_bos and bos else []
    post = [eos] if add_eos and eos else []
    if not pre and not post:
        return byte_level
    single = " ".join([*pre, "$A:0", *post])
    pair = " ".join([single, *(f"{t}:1" for t in pre), "$B:1", *(f"{t}:1" for t in post)])
    specials = [(t, ids[t]) for t in dict.fromkeys(pre + post)]
    return processors.Sequence([byte_level, processors.TemplateProcessing(single=single, pair=pair,
                                                                            special_tokens=specials)])


def build_tokenizer(g: GGUFFile, model_max_length: int) -> TokenizerFiles:
    """The tokenizer the file describes, and its ``tokenizer_config.json``/``special_tokens_map.json``."""
    kind = g.get("tokenizer.ggml.model")
    if kind != "gpt2":
        raise GGUFConversionError(
            f"{g.path.name}: tokenizer model {kind!r} (tokenizer.ggml.model) is not supported; "
            "supported: ['gpt2'] (byte-level BPE)"
        )
    rule = _pre_tokenizer(g)
    tokens: list[str] = g.require("tokenizer.ggml.tokens")
    types: list[int] = g.get("tokenizer.ggml.token_type") or [1] * len(tokens)
    vocab = _vocab(tokens)

    tok = Tokenizer(models.BPE(vocab=vocab, merges=_merges(g.require("tokenizer.ggml.merges")),
                               dropout=None, unk_token=None, fuse_unk=False, byte_fallback=False,
                               ignore_merges=rule.ignore_merges))
    if rule.nfc:
        tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = rule.build()
    tok.decoder = decoders.ByteLevel()
    added = [(i, t, ty == CONTROL) for i, (t, ty) in enumerate(zip(tokens, types, strict=True))
             if ty in (CONTROL, USER_DEFINED)]
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for _, t, s in added if s])
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for _, t, s in added if not s])

    def named(key: str) -> str | None:
        i = g.get(f"tokenizer.ggml.{key}")
        return tokens[i] if i is not None and 0 <= i < len(tokens) else None

    bos, eos, pad, unk = named("bos_token_id"), named("eos_token_id"), named("padding_token_id"), named("unknown_token_id")
    add_bos = bool(g.get("tokenizer.ggml.add_bos_token", rule.add_bos))
    add_eos = bool(g.get("tokenizer.ggml.add_eos_token", False))
    tok.post_processor = _post_processor(bos, eos, add_bos, add_eos, vocab)

    config: dict[str, Any] = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": bos,
        "eos_token": eos,
        "pad_token": pad,
        "unk_token": unk,
        "add_bos_token": add_bos,
        "add_eos_token": add_eos,
        "clean_up_tokenization_spaces": False,
        "model_max_length": model_max_length,
        "added_tokens_decoder": {
            str(i): {"content": t, "special": s, "lstrip": False, "rstrip": False, "normalized": False,
                     "single_word": False}
            for i, t, s in added
        },
    }
    template = _chat_template(g)
    if template is not None:
        config["chat_template"] = template
    specials = {k: v for k, v in (("bos_token", bos), ("eos_token", eos), ("pad_token", pad), ("unk_token", unk))
                if v is not None}
    return TokenizerFiles(tok, config, specials)


def _chat_template(g: GGUFFile) -> str | list[dict[str, str]] | None:
    """``tokenizer.chat_template``, plus any named variants (``tokenizer.chat_template.tool_use``)
    in transformers' list form, which keeps the default under the name ``default``."""
    default = g.get("tokenizer.chat_template")
    prefix = "tokenizer.chat_template."
    named = {k[len(prefix):]: g.get(k) for k in g.metadata_keys() if k.startswith(prefix) and k != prefix + "names"}
    if not named:
        return default
    out = [{"name": "default", "template": default}] if default is not None else []
    return out + [{"name": n, "template": t} for n, t in sorted(named.items())]
