"""GGUF -> Hugging Face directory: the whole conversion, one tensor at a time.

The output is an ordinary transformers checkpoint directory — ``model.safetensors`` (or shards plus
``model.safetensors.index.json``), ``config.json``, ``generation_config.json``, ``tokenizer.json``,
``tokenizer_config.json`` (with the chat template) and ``special_tokens_map.json`` — so every
loader that reads a Hugging Face directory (ours, transformers, vLLM) can use a model that is
only published as GGUF.

Output dtype: **float32 by default**, because it is lossless. Dequantised values are
``scale * q (+ min)`` computed in float32 by ``gguf``; F16/BF16 tensors widen exactly. float32
therefore holds exactly what the GGUF holds, and matches what transformers' own GGUF loader builds
bit for bit. ``bfloat16`` (what training here runs in) halves the size but rounds every weight to
8 mantissa bits *on top of* the quantisation error; ``float16`` rounds less but has a narrow range.
Both are offered for when disk matters more than exactness.

Memory: tensors are dequantised shard by shard (``max_shard_bytes``), so the peak is about one
shard plus the memory-mapped GGUF, whatever the model size.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import save_file
from tqdm.auto import tqdm

from prove_jax.convert.arch import (
    SKIPPED_TENSORS,
    arch_spec,
    generation_config,
    hf_config,
    hf_tensor,
    hf_tensor_name,
)
from prove_jax.convert.reader import GGUFConversionError, GGUFFile
from prove_jax.convert.tokenizer import build_tokenizer

DTYPES = ("float32", "bfloat16", "float16")
SINGLE_FILE = "model.safetensors"
INDEX_FILE = "model.safetensors.index.json"
DEFAULT_SHARD_BYTES = 2 * 1024**3


def _np_dtype(name: str) -> np.dtype:
    if name not in DTYPES:
        raise ValueError(f"dtype {name!r} is not one of {DTYPES}")
    if name == "bfloat16":
        import ml_dtypes  # numpy's bfloat16 (installed with jax); safetensors writes it as BF16

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _plan_shards(g: GGUFFile, names: list[str], itemsize: int, max_bytes: int) -> list[list[str]]:
    """Greedy split in file order from shapes alone; a tensor bigger than the limit is a shard alone."""
    shards: list[list[str]] = [[]]
    size = 0
    for name in names:
        nbytes = int(np.prod(g.shape(name))) * itemsize
        if shards[-1] and size + nbytes > max_bytes:
            shards.append([])
            size = 0
        shards[-1].append(name)
        size += nbytes
    return shards


def _write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def convert_gguf(
    gguf_path: str | Path,
    out_dir: str | Path,
    *,
    dtype: str = "float32",
    max_shard_bytes: int = DEFAULT_SHARD_BYTES,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> Path:
    """Write the Hugging Face directory of ``gguf_path`` to ``out_dir`` and return it.

    Everything that can be rejected (architecture, tokenizer, tensor types, tensor names, RoPE
    variant) is checked before the first file is written.
    """
    g = GGUFFile(gguf_path)
    spec = arch_spec(g)
    if int(g.get("split.count", 1)) > 1:  # the other parts' tensors would be silently missing
        raise GGUFConversionError(f"{g.path.name} is part 1 of a {g.get('split.count')}-part split GGUF; merge "
                                  "the parts first (llama.cpp: llama-gguf-split --merge)")
    target = _np_dtype(dtype)
    config = hf_config(g, dtype)
    tokenizer = build_tokenizer(g, model_max_length=int(config["max_position_embeddings"]))
    g.check_tensor_types()
    names = [n for n in g.tensors if n not in SKIPPED_TENSORS]
    for name in names:
        hf_tensor_name(name)  # raises on a tensor we cannot place, before anything is written

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for old in (*out.glob("model*.safetensors"), out / INDEX_FILE):
        old.unlink(missing_ok=True)  # a previous conversion's shards would be loaded alongside
    shards = _plan_shards(g, names, target.itemsize, max_shard_bytes)
    n_heads, n_kv = int(config["num_attention_heads"]), int(config["num_key_value_heads"])
    weight_map: dict[str, str] = {}
    total = 0
    with tqdm(total=len(names), desc=f"dequantising {g.path.name}", unit="tensor", disable=not progress) as bar:
        for k, shard in enumerate(shards, start=1):
            fname = SINGLE_FILE if len(shards) == 1 else f"model-{k:05d}-of-{len(shards):05d}.safetensors"
            arrays: dict[str, np.ndarray] = {}
            for name in shard:
                hf_name, arr = hf_tensor(g, spec, name, n_heads, n_kv)
                arrays[hf_name] = arr.astype(target)
                weight_map[hf_name] = fname
                total += arrays[hf_name].nbytes
                bar.update(1)
            save_file(arrays, str(out / fname), metadata={"format": "pt"})
            del arrays  # one shard in memory at a time
    if len(shards) > 1:
        _write_json(out / INDEX_FILE, {"metadata": {"total_size": total}, "weight_map": weight_map})

    _write_json(out / "config.json", config)
    _write_json(out / "generation_config.json", generation_config(g))
    tokenizer.tokenizer.save(str(out / "tokenizer.json"))
    _write_json(out / "tokenizer_config.json", tokenizer.config)
    _write_json(out / "special_tokens_map.json", tokenizer.special_tokens_map)
    if log is not None:
        log(f"{g.path.name} ({spec.gguf_arch}, {len(names)} tensors) -> {out} as {dtype}, "
            f"{len(shards)} shard(s), {total / 1e6:.1f} MB")
    return out


__all__ = ["DTYPES", "GGUFConversionError", "convert_gguf"]
