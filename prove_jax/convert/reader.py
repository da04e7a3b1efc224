"""Reading a GGUF file: its metadata as Python values and its tensors as float32 arrays.

A GGUF keeps everything a Hugging Face directory spreads over several files in one place: the
architecture's hyper-parameters and the tokenizer as ``key -> value`` metadata (llama.cpp's key
names, e.g. ``llama.block_count``, ``tokenizer.ggml.tokens``) and the weights as (often
quantised) tensors under llama.cpp's tensor names. This module only *reads*; what those keys and
names mean for a given architecture lives in :mod:`prove_jax.convert.arch` and
:mod:`prove_jax.convert.tokenizer`.

Dequantisation is ``gguf.quants.dequantize`` (llama.cpp's own reference code in numpy), which
returns float32 for every type it knows. Whether the file's types are all known is checked up
front (:meth:`GGUFFile.check_tensor_types`), so an unsupported quantisation fails before any output
is written, naming the type and a tensor that uses it.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

try:
    from gguf import GGMLQuantizationType, GGUFReader, ReaderTensor
    from gguf.quants import dequantize
except ImportError as err:  # only the converter needs it: say so instead of a bare ModuleNotFoundError
    raise ImportError("prove_jax.convert needs the gguf package (llama.cpp's gguf-py): pip install gguf") from err


class GGUFConversionError(ValueError):
    """The file cannot be converted: the message says what it has and what is supported."""


_MISSING = object()


class GGUFFile:
    """One GGUF file, memory-mapped: metadata on demand, tensors by llama.cpp name.

    Metadata values are decoded only when asked for, because the tokenizer arrays (vocabulary,
    merges) are large and most keys are read once.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"no GGUF file at {self.path}")
        self._reader = GGUFReader(self.path)
        self._cache: dict[str, Any] = {}

    # ---- metadata ----------------------------------------------------------------------------------
    def metadata_keys(self) -> list[str]:
        return list(self._reader.fields)

    def __contains__(self, key: str) -> bool:
        return key in self._reader.fields

    def get(self, key: str, default: Any = None) -> Any:
        """The value of metadata ``key`` (str, int, float, bool or a list of them), or ``default``."""
        if key not in self._cache:
            field = self._reader.fields.get(key)
            self._cache[key] = _MISSING if field is None else field.contents()
        value = self._cache[key]
        return default if value is _MISSING else value

    def require(self, key: str) -> Any:
        value = self.get(key, _MISSING)
        if value is _MISSING:
            raise GGUFConversionError(f"{self.path.name}: metadata key {key!r} is missing")
        return value

    @cached_property
    def arch(self) -> str:
        """``general.architecture``: llama.cpp's name of the model family (``llama``, ``qwen2``...)."""
        return str(self.require("general.architecture"))

    # ---- tensors -----------------------------------------------------------------------------------
    @cached_property
    def tensors(self) -> dict[str, ReaderTensor]:
        """llama.cpp tensor name -> tensor, in file order."""
        return {t.name: t for t in self._reader.tensors}

    def shape(self, name: str) -> tuple[int, ...]:
        """The tensor's shape in numpy (row-major, Hugging Face) order.

        GGUF stores dimensions fastest-first (``ne0`` = columns), so this is the stored shape
        reversed: a ``[out, in]`` linear weight is stored as ``(in, out)``.
        """
        return tuple(int(d) for d in reversed(self.tensors[name].shape.tolist()))

    def check_tensor_types(self) -> None:
        """Fail before any work if ``gguf`` cannot dequantise one of the file's tensor types.

        Each distinct type is tried on a single row of the first tensor that uses it, which costs
        nothing and asks ``gguf`` itself rather than a list of ours that would go stale.
        """
        seen: set[GGMLQuantizationType] = set()
        for t in self.tensors.values():
            if t.tensor_type in seen:
                continue
            seen.add(t.tensor_type)
            try:
                dequantize(t.data[:1], t.tensor_type)
            except NotImplementedError as err:
                raise GGUFConversionError(
                    f"{self.path.name}: tensor {t.name!r} is stored as {t.tensor_type.name}, which the "
                    f"installed gguf package cannot dequantise ({err}); re-quantise the model to a "
                    "supported type (F32, F16, BF16, Q4_0/Q4_1/Q5_0/Q5_1/Q8_0 or a K-quant)"
                ) from err

    def dequantized(self, name: str) -> np.ndarray:
        """The tensor as a float32 array in Hugging Face order, owning its memory (not the mmap)."""
        t = self.tensors[name]
        arr = dequantize(t.data, t.tensor_type)
        shape = self.shape(name)
        if int(np.prod(arr.shape)) != int(np.prod(shape)):
            raise GGUFConversionError(f"{name}: dequantised {arr.shape}, expected {shape}")
        return np.array(arr, dtype=np.float32, copy=True).reshape(shape)
