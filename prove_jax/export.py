"""``python -m prove_jax.export --checkpoint DIR --out HF_DIR [--step N] [--dtype bfloat16]``.

Turns a training stage's Orbax checkpoint into a transformers-loadable directory (safetensors,
config.json, the run's tokenizer files). ``DIR`` may be the stage's ``checkpoints/`` directory,
the stage directory (``runs/x/grpo``) or the run directory (``runs/x``: its GRPO checkpoints if
there are any, else its SFT ones).

The checkpoint describes itself (``model.json`` and its copied tokenizer files:
:mod:`prove_jax.model_record`), so nothing else is needed — no launch config, and not the HF
directory a run started from, which may since have moved: the model is built abstractly from the
recorded config and the params are restored straight into their target shardings. The initial HF
weights are never read: for an 8B model that would double the export's host memory and time for
values that are overwritten at once. Checkpoints written before ``model.json`` existed still
export through the launch config in their metadata. The export directory gets its own
``model.json`` (the stored dtype, the chat family, the special-token ids), so serving it needs
no detection either. The launcher's ``export`` stage calls :func:`export_checkpoint` too, so both
paths write the same directory.

Paths are taken from the checkpoint's location, not the stored ``out_dir``: a run directory that
was copied off a pod, or launched with a relative ``out_dir`` from another working directory,
still finds its own files.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import jax

from prove_jax.checkpoint import STAGES_NEWEST_FIRST, load_checkpoint, resolve_checkpoint_dir
from prove_jax.model_record import ModelRecord, write_record
from prove_jax.models import Model, save_hf

__all__ = ["STAGES_NEWEST_FIRST", "export_checkpoint", "export_model", "main", "resolve_checkpoint_dir"]


def export_model(model: Model, record: ModelRecord, out: str | Path, *, source_dir: str | Path,
                 dtype: str | None = None) -> Path:
    """``save_hf`` of ``model`` (side files copied from ``source_dir``) plus its ``model.json``:
    the config as stored (``param_dtype`` = the written dtype), chat family and special ids."""
    out = Path(save_hf(model, out, source_dir=source_dir, dtype=dtype or None))
    config = record.config.replace(param_dtype=dtype) if dtype else record.config
    write_record(out, dataclasses.replace(record, config=config))
    return out


def export_checkpoint(checkpoint: str | Path, out: str | Path, *, step: int | None = None,
                      dtype: str | None = None, mesh: str | None = None) -> Path:
    """Write checkpoint ``step`` (default: the newest) of ``checkpoint`` as an HF directory at ``out``.

    ``dtype`` sets the stored weight dtype (default: the params' own); ``mesh`` overrides the
    training mesh the params are restored onto (``""``: one device), for exporting on a machine
    with a different device count. Returns ``out``.
    """
    loaded = load_checkpoint(checkpoint, step=step, mesh=mesh)  # SystemExit naming what is wrong
    return export_model(loaded.model, loaded.record, out, source_dir=loaded.tokenizer_dir, dtype=dtype)


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(prog="python -m prove_jax.export", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", required=True, help="a stage's checkpoints/ dir, a stage dir or a run dir")
    parser.add_argument("--out", required=True, help="the HF directory to write")
    parser.add_argument("--step", type=int, default=None, help="checkpoint step (default: the newest)")
    parser.add_argument("--dtype", default=None, help="stored weight dtype, e.g. bfloat16 (default: the params')")
    parser.add_argument("--mesh", default=None,
                        help="mesh to restore onto, e.g. 'fsdp=4' or '' for one device (default: the training mesh)")
    args = parser.parse_args(argv)
    out = export_checkpoint(args.checkpoint, args.out, step=args.step, dtype=args.dtype, mesh=args.mesh)
    if jax.process_index() == 0:
        print(f"exported {args.checkpoint} -> {out}")
    return out


if __name__ == "__main__":
    main()
