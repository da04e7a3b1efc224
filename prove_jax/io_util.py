"""Small JSON file helpers shared by the launcher, checkpoints, export and evaluation.

They live here, below everything else of ours (no imports but JAX for the process index), so a
low layer (``checkpoint``, ``export``) can write a JSON file without importing the launcher's run
context (``pipeline.context`` re-exports them for older call sites).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jax


def write_json(path: Path, obj: Any) -> None:
    """Write ``obj`` as indented JSON from process 0 only (every process holds the same value on a
    multi-host run), atomically: a reader sees the whole file or none, so a stage's done marker is
    either complete or absent."""
    if jax.process_index() != 0:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, default=str))
    tmp.replace(path)


def read_json(path: Path) -> Any:
    """The parsed JSON of ``path`` (the counterpart of :func:`write_json`)."""
    return json.loads(path.read_text())
