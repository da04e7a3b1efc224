"""Safetensors reading (mmap, slice by slice) and streaming sharded writing.

Reading uses ``safetensors.safe_open`` (mmap) and ``get_slice`` so only the bytes of the
requested shard are touched.  Touched pages of a mapping count toward the process RSS until the
file is unmapped, so a handle is closed again after ``reopen_bytes`` have been read through it:
host memory stays near one copy of the weights even for 5 GB checkpoint shards.

Writing streams one tensor at a time into a file whose header is computed up front from shapes
alone: an exporter never holds more than one (gathered) tensor in host memory.  The format is the
documented safetensors layout (u64 little-endian header size, JSON header padded with spaces to
8 bytes, raw little-endian data), with ``__metadata__ = {"format": "pt"}`` as transformers expects.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import ml_dtypes  # noqa: F401  (registers bfloat16 with numpy so safetensors can return it)
import numpy as np
from safetensors import safe_open

INDEX_FILE = "model.safetensors.index.json"
SINGLE_FILE = "model.safetensors"

_ST_DTYPES: dict[str, str] = {
    "float32": "F32",
    "bfloat16": "BF16",
    "float16": "F16",
    "float64": "F64",
    "int64": "I64",
    "int32": "I32",
    "int16": "I16",
    "int8": "I8",
    "uint8": "U8",
    "bool": "BOOL",
}


class CheckpointReader:
    """Key -> (file, shape) index over a HF directory, with slice reads through safe_open."""

    def __init__(self, path: str | Path, reopen_bytes: int = 128 * 1024**2) -> None:
        self.root = Path(path)
        self.reopen_bytes = reopen_bytes
        index = self.root / INDEX_FILE
        if index.exists():
            with open(index) as f:
                weight_map: dict[str, str] = json.load(f)["weight_map"]
            files = sorted(set(weight_map.values()))
        else:
            files = sorted(p.name for p in self.root.glob("*.safetensors"))
            if not files:
                raise FileNotFoundError(f"no *.safetensors (or {INDEX_FILE}) in {self.root}")
        self.file_of: dict[str, str] = {}
        self.shape: dict[str, tuple[int, ...]] = {}
        self.dtype: dict[str, str] = {}
        for name in files:
            with safe_open(self.root / name, framework="numpy") as f:
                for key in f.keys():  # noqa: SIM118  (safe_open handles are not iterable)
                    if key in self.file_of:
                        raise ValueError(f"tensor {key!r} appears in both {self.file_of[key]} and {name}")
                    sl = f.get_slice(key)
                    self.file_of[key] = name
                    self.shape[key] = tuple(sl.get_shape())
                    self.dtype[key] = sl.get_dtype()
        self._handle: Any = None
        self._handle_file: str | None = None
        self._handle_bytes = 0

    def keys(self) -> list[str]:
        return list(self.file_of)

    def _open(self, name: str) -> Any:
        if self._handle_file != name or self._handle_bytes > self.reopen_bytes:
            self.close()
            self._handle = safe_open(self.root / name, framework="numpy").__enter__()
            self._handle_file, self._handle_bytes = name, 0
        return self._handle

    def read(self, key: str, slices: Sequence[slice] | None = None) -> np.ndarray:
        """``tensor[slices]`` as a fresh numpy array (the whole tensor when ``slices`` is None)."""
        handle = self._open(self.file_of[key])
        sl = handle.get_slice(key)
        out = np.asarray(sl[tuple(slices)] if slices is not None else sl[:])
        self._handle_bytes += out.nbytes
        return out

    def close(self) -> None:
        """Unmap the current file (its touched pages leave this process's RSS)."""
        if self._handle is not None:
            self._handle.__exit__(None, None, None)
        self._handle, self._handle_file, self._handle_bytes = None, None, 0

    def __enter__(self) -> CheckpointReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def st_dtype(dtype: np.dtype | str) -> str:
    name = np.dtype(dtype).name
    if name not in _ST_DTYPES:
        raise ValueError(f"dtype {name} cannot be written to safetensors here")
    return _ST_DTYPES[name]


TensorSpec = tuple[str, tuple[int, ...], np.dtype, Callable[[], np.ndarray]]
"""(name, shape, dtype, producer): the producer is called once, when the tensor is written."""


def plan_shards(specs: Sequence[TensorSpec], max_shard_bytes: int) -> list[list[TensorSpec]]:
    """Greedy split in order; a single tensor larger than the limit gets a shard of its own."""
    shards: list[list[TensorSpec]] = [[]]
    size = 0
    for spec in specs:
        nbytes = int(np.prod(spec[1])) * np.dtype(spec[2]).itemsize
        if shards[-1] and size + nbytes > max_shard_bytes:
            shards.append([])
            size = 0
        shards[-1].append(spec)
        size += nbytes
    return shards


def write_safetensors(
    path: str | Path, specs: Iterable[TensorSpec], metadata: dict[str, str] | None = None
) -> int:
    """Stream tensors into one safetensors file; returns the number of data bytes written."""
    specs = list(specs)
    header: dict[str, Any] = {"__metadata__": metadata or {"format": "pt"}}
    offset = 0
    for name, shape, dtype, _ in specs:
        nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
        header[name] = {
            "dtype": st_dtype(dtype),
            "shape": list(shape),
            "data_offsets": [offset, offset + nbytes],
        }
        offset += nbytes
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        for name, shape, dtype, produce in specs:
            arr = np.ascontiguousarray(produce(), dtype=np.dtype(dtype))
            if tuple(arr.shape) != tuple(shape):
                raise ValueError(f"{name}: produced shape {arr.shape}, planned {shape}")
            f.write(arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes())
    return offset


def write_sharded(
    directory: str | Path, specs: Sequence[TensorSpec], max_shard_bytes: int, write: bool = True
) -> dict[str, Any]:
    """Write ``model-0000k-of-0000n.safetensors`` + ``model.safetensors.index.json``.

    With ``write=False`` the producers are still called (multi-host gathers are collective and
    every process must take part) but no file is written.
    """
    directory = Path(directory)
    shards = plan_shards(specs, max_shard_bytes)
    n = len(shards)
    weight_map: dict[str, str] = {}
    total = 0
    for k, shard in enumerate(shards, start=1):
        fname = f"model-{k:05d}-of-{n:05d}.safetensors"
        if write:
            total += write_safetensors(directory / fname, shard)
        else:
            for spec in shard:
                spec[3]()
        for spec in shard:
            weight_map[spec[0]] = fname
    index = {
        "metadata": {
            "total_size": total,
            "total_parameters": int(sum(int(np.prod(s[1])) for s in specs)),
        },
        "weight_map": weight_map,
    }
    if write:
        with open(directory / INDEX_FILE, "w") as f:
            json.dump(index, f, indent=2)
    return index
