"""``python -m prove_jax.convert --gguf FILE --out HF_DIR [--dtype float32|bfloat16|float16]``.

Exit status 2 with a one-line reason when the file cannot be converted (unsupported architecture,
pre-tokenizer or quantisation type): the reason names what the file has and what is supported.
"""

from __future__ import annotations

import argparse
import sys

from prove_jax.convert import ARCHITECTURES, DTYPES, GGUFConversionError, convert_gguf
from prove_jax.convert.gguf_to_hf import DEFAULT_SHARD_BYTES


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m prove_jax.convert",
        description="Dequantise a GGUF file into a Hugging Face directory (safetensors, config.json, "
        f"tokenizer files). Architectures: {', '.join(sorted(ARCHITECTURES))}.",
    )
    p.add_argument("--gguf", required=True, help="the .gguf file")
    p.add_argument("--out", required=True, help="output directory (created; old model*.safetensors removed)")
    p.add_argument("--dtype", choices=DTYPES, default="float32",
                   help="weight dtype written; float32 (default) keeps the dequantised values exactly")
    p.add_argument("--max-shard-gb", type=float, default=DEFAULT_SHARD_BYTES / 1024**3,
                   help="split model.safetensors into shards of at most this many GiB (default %(default)s)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    try:
        convert_gguf(args.gguf, args.out, dtype=args.dtype, max_shard_bytes=int(args.max_shard_gb * 1024**3),
                     progress=not args.no_progress, log=print)
    except (GGUFConversionError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
