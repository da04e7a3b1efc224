"""Train a small byte-level BPE tokenizer that speaks a target family's chat format.

The tiny CPU default run cannot use a real 150k-entry vocabulary (the embedding table alone would
dominate a 2-core budget), but it must exercise the *same* chat machinery as the real models:
role markers, ``<tool_call>`` tags and stop tokens must be single ids so the transcript, the
stop logic and the parser behave exactly as with Qwen/Granite. So we train a byte-level BPE
(like both real families: any byte sequence round-trips) on the run's own corpus and append the
family's control tokens as added tokens after the BPE vocabulary — the same layout as the real
tokenizers, where added tokens follow the merges. Which tokens, and the eos/pad among them, are
the format's registration (:class:`~prove_jax.chat.families.ChatFamily`).

Determinism: BPE training has no randomness; given the same corpus, ``vocab_size`` and ``seed``
the output files are byte-identical. ``seed`` only fixes a permutation of the corpus, so callers
that build the corpus from a seeded sampler can pass it through for the record.
"""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Iterable
from pathlib import Path

from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

from prove_jax.chat.families import chat_family
from prove_jax.chat.tokenizer import CONFIG_FILE, TOKENIZER_FILE


def family_tokens(family: str) -> list[str]:
    """The control tokens a tiny tokenizer of ``family`` has as single ids, in id order."""
    return [tok for tok, _ in chat_family(family).tiny_tokens]


def train_tiny_tokenizer(
    family: str,
    corpus_texts: Iterable[str],
    vocab_size: int = 1024,
    *,
    out_dir: str | Path | None = None,
    seed: int = 0,
    min_frequency: int = 2,
) -> Path:
    """Train a byte-level BPE of at most ``vocab_size`` ids (control tokens included) and write
    ``tokenizer.json`` + ``tokenizer_config.json`` (eos, pad, no BOS, chat template) to
    ``out_dir`` (a fresh temporary directory when ``None``). Returns the directory.

    Control-token strings are blanked out of the corpus before training so no merges are wasted
    on them (they are matched as whole added tokens at encode time anyway).
    """
    layout = chat_family(family)
    fam = layout.name
    added = layout.tiny_tokens
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    bpe_size = vocab_size - len(added)
    if bpe_size < len(alphabet):
        raise ValueError(f"vocab_size must be at least {len(alphabet) + len(added)} for family {fam}")

    texts = list(corpus_texts)
    random.Random(seed).shuffle(texts)
    for tok, _ in added:
        texts = [t.replace(tok, " ") for t in texts]

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=bpe_size,
        min_frequency=min_frequency,
        show_progress=False,
        initial_alphabet=alphabet,
        special_tokens=[],
    )
    tok.train_from_iterator(texts, trainer=trainer)
    for content, special in added:
        token = AddedToken(content, special=special, normalized=False, lstrip=False, rstrip=False)
        if special:
            tok.add_special_tokens([token])
        else:
            tok.add_tokens([token])

    root = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix=f"tiny_tok_{fam}_"))
    root.mkdir(parents=True, exist_ok=True)
    tok.save(str(root / TOKENIZER_FILE))
    decoder = tok.get_added_tokens_decoder()
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": None,
        "add_bos_token": False,
        "eos_token": layout.eos,
        "pad_token": layout.pad,
        "unk_token": None,
        "clean_up_tokenization_spaces": False,
        "model_max_length": 131072,
        "added_tokens_decoder": {
            str(i): {
                "content": t.content,
                "special": t.special,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "single_word": False,
            }
            for i, t in sorted(decoder.items())
        },
        "chat_template": layout.jinja(),
    }
    (root / CONFIG_FILE).write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return root
