"""Tiny GGUF files written the way llama.cpp's ``convert_hf_to_gguf.py`` writes them.

The reference is a tiny random transformers model plus a tiny byte-level BPE (the project's
``train_tiny_tokenizer``); :func:`write_gguf` stores them with ``gguf.GGUFWriter`` under llama.cpp's
names (``gguf``'s own ``TensorNameMap``, not the converter's table), permuting q/k rows for
``llama`` exactly as llama.cpp does, quantising 2-D weights to Q8_0 when asked and padding the
vocabulary with ``[PAD{i}]`` (type UNUSED) up to the embedding rows. Converting such a file back
must give the reference's tensors, logits and token ids.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gguf
import numpy as np
import torch
import transformers
from tokenizers import Tokenizer

from prove_jax.chat import train_tiny_tokenizer

ARCHS = ("llama", "qwen2", "qwen3")
CORPUS = [
    "<|im_start|>user\nWhat is the capital of France? Answer in one word.<|im_end|>\n",
    "<|im_start|>assistant\nParis is the capital and largest city of France.<|im_end|>\n",
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
    "The quick brown fox jumps over the lazy dog. 1234567890 numbers 3.14159 and 2024.",
    "Unicode: café naïve façade über 日本語 emoji 🎉 — dashes, tabs\tand\nnewlines.",
    "don't won't I'm you'll they've we'd it's SHOUTING lowercase MixedCase",
    "def f(x):\n\n    return x  \n\n\n    # indented  code\n\tpass\r\n",
] * 8
PRE = {"llama": "llama-bpe", "qwen2": "qwen2", "qwen3": "gpt-2"}
"""``tokenizer.ggml.pre`` per tiny file: what real files of the family say, except qwen3's, which
names the split the tiny tokenizer was trained with (GPT-2's), so ids can be compared with it."""
PAD_ROWS = 5
"""Embedding rows beyond the tokenizer (Qwen pads its vocabulary; llama.cpp adds [PAD{i}] tokens)."""


def tiny_tokenizer_dir(root: Path) -> Path:
    return train_tiny_tokenizer("qwen3", CORPUS, vocab_size=420, out_dir=root)


LLAMA3_ROPE = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
               "original_max_position_embeddings": 8192}
"""Llama 3.1's RoPE scaling; with head_dim 32 and theta 5e4 two frequencies fall in the smoothed band."""


def tiny_model(arch: str, vocab_size: int, seed: int = 0) -> Any:
    """A random float32 transformers model with every weight drawn (norms around 1), eager attention.

    ``llama3rope`` is a ``llama`` with Llama 3.1-style RoPE scaling (written as ``rope_freqs``).
    """
    common = dict(vocab_size=vocab_size, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256)
    if arch == "llama":  # GQA, untied, q/k/v/o biases: the permutation applies to the q/k biases too
        cfg = transformers.LlamaConfig(**common, rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=False,
                                       attention_bias=True)
    elif arch == "llama3rope":  # head_dim 32 != hidden / heads, tied, no biases
        cfg = transformers.LlamaConfig(**common, head_dim=32, rms_norm_eps=1e-5, tie_word_embeddings=True,
                                       rope_parameters={"rope_theta": 50000.0, **LLAMA3_ROPE})
    elif arch == "qwen2":  # tied embeddings (no output.weight in the file)
        cfg = transformers.Qwen2Config(**common, rms_norm_eps=1e-6, rope_theta=1e6, tie_word_embeddings=True)
    elif arch == "qwen3":  # head_dim != hidden / heads: only attention.key_length / the shapes say it
        cfg = transformers.Qwen3Config(**common, head_dim=32, rms_norm_eps=1e-6, rope_theta=1e6,
                                       tie_word_embeddings=False)
    else:
        raise KeyError(arch)
    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=torch.float32, attn_implementation="eager")
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(1 + 0.1 * torch.randn_like(p) if "norm" in name else 0.1 * torch.randn_like(p))
    return model.eval()


def llama_cpp_rope_freqs(cfg: Any) -> np.ndarray:
    """llama.cpp's ``LlamaModel.generate_extra_tensors`` for ``rope_type == "llama3"``, step by step."""
    rope = cfg.rope_parameters
    base, dim = rope["rope_theta"], cfg.head_dim
    freqs = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    factor, low, high = rope["factor"], rope["low_freq_factor"], rope["high_freq_factor"]
    old_context_len = 8192  # llama.cpp reads a top-level key Llama 3 configs lack: always the default
    low_wavelen, high_wavelen = old_context_len / low, old_context_len / high
    out = []
    for freq in freqs.tolist():
        wavelen = 2 * math.pi / freq
        if wavelen < high_wavelen:
            out.append(1.0)
        elif wavelen > low_wavelen:
            out.append(factor)
        else:
            smooth = (old_context_len / wavelen - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


def llama_cpp_permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """llama.cpp's ``LlamaModel.permute``: each head's rows ``[half0 | half1]`` interleaved."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def _token_table(tok_dir: Path, n_rows: int) -> tuple[list[str], list[int], list[str]]:
    """(tokens by id, llama.cpp token types, merges) of a tokenizer.json, padded to ``n_rows``."""
    tok = Tokenizer.from_file(str(tok_dir / "tokenizer.json"))
    vocab = tok.get_vocab(with_added_tokens=True)
    tokens = [""] * len(vocab)
    for t, i in vocab.items():
        tokens[i] = t
    specials = {t.content: t.special for t in tok.get_added_tokens_decoder().values()}
    types = [int(gguf.TokenType.NORMAL) if t not in specials else
             int(gguf.TokenType.CONTROL if specials[t] else gguf.TokenType.USER_DEFINED) for t in tokens]
    for i in range(len(tokens), n_rows):
        tokens.append(f"[PAD{i}]")
        types.append(int(gguf.TokenType.UNUSED))
    merges = json.loads((tok_dir / "tokenizer.json").read_text())["model"]["merges"]
    merges = [m if isinstance(m, str) else " ".join(m) for m in merges]
    return tokens, types, merges


def write_gguf(model: Any, arch: str, tok_dir: Path, path: Path, *, quant: str = "F32",
               tensor_types: dict[str, str] | None = None, rope_freqs: np.ndarray | None = None) -> Path:
    """Write ``model`` + the tokenizer at ``tok_dir`` as llama.cpp would (see the module docstring).

    ``tensor_types`` overrides the storage type of single llama.cpp tensors (e.g. ``"F64"``), and
    ``rope_freqs`` the RoPE divisors, to test the converter's refusals.
    """
    cfg = model.config
    if arch == "llama3rope":
        arch, rope_freqs = "llama", llama_cpp_rope_freqs(cfg) if rope_freqs is None else rope_freqs
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name(f"tiny-{arch}")
    w.add_block_count(cfg.num_hidden_layers)
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_rope_freq_base(float(cfg.rope_parameters["rope_theta"]))
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    if arch == "qwen3":
        w.add_key_length(cfg.head_dim)
        w.add_value_length(cfg.head_dim)
    w.add_file_type(gguf.LlamaFileType.ALL_F32 if quant == "F32" else gguf.LlamaFileType.MOSTLY_Q8_0)

    tokens, types, merges = _token_table(tok_dir, cfg.vocab_size)
    tok_cfg = json.loads((tok_dir / "tokenizer_config.json").read_text())
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(PRE[arch])
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_eos_token_id(tokens.index(tok_cfg["eos_token"]))
    w.add_pad_token_id(tokens.index(tok_cfg["pad_token"]))
    if arch == "llama":  # llama.cpp's Llama-3 style: a bos, added to every sequence
        w.add_bos_token_id(tokens.index("<|endoftext|>"))
        w.add_add_bos_token(True)
    else:
        w.add_add_bos_token(False)
    w.add_chat_template(tok_cfg["chat_template"])

    if rope_freqs is not None:
        w.add_tensor("rope_freqs.weight", rope_freqs.astype(np.float32))
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH[arch.upper()], cfg.num_hidden_layers)
    for hf_name, t in model.state_dict().items():
        if hf_name == "lm_head.weight" and cfg.tie_word_embeddings:
            continue
        name = names.get_name(hf_name, try_suffixes=(".weight", ".bias"))
        assert name is not None, hf_name
        arr = t.detach().numpy().astype(np.float32)
        if arch == "llama" and ".q_proj." in hf_name:
            arr = llama_cpp_permute(arr, cfg.num_attention_heads)
        elif arch == "llama" and ".k_proj." in hf_name:
            arr = llama_cpp_permute(arr, cfg.num_key_value_heads)
        kind = (tensor_types or {}).get(name, quant if arr.ndim == 2 else "F32")
        if kind == "F32":
            w.add_tensor(name, arr)
        elif kind == "F64":
            w.add_tensor(name, arr.astype(np.float64))
        else:
            qtype = gguf.GGMLQuantizationType[kind]
            w.add_tensor(name, gguf.quants.quantize(arr, qtype), raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@dataclass
class TinyCase:
    arch: str
    quant: str
    model: Any
    tok_dir: Path
    gguf: Path


def build_case(arch: str, quant: str, root: Path, tok_dir: Path) -> TinyCase:
    n_tok = Tokenizer.from_file(str(tok_dir / "tokenizer.json")).get_vocab_size(with_added_tokens=True)
    model = tiny_model(arch, n_tok + PAD_ROWS)
    path = write_gguf(model, arch, tok_dir, root / f"tiny-{arch}-{quant}.gguf", quant=quant)
    return TinyCase(arch, quant, model, tok_dir, path)


def logits(model: Any, ids: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return model(torch.from_numpy(ids)).logits.numpy()
