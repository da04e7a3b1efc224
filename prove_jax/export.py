"""``python -m prove_jax.export --checkpoint DIR --out HF_DIR [--step N] [--dtype bfloat16]``.

Turns a training stage's Orbax checkpoint into a transformers-loadable directory (safetensors,
config.json, the run's tokenizer files). ``DIR`` may be the stage's ``checkpoints/`` directory,
the stage directory (``runs/x/grpo``) or the run directory (``runs/x``: its GRPO checkpoints if
there are any, else its SFT ones).

Every checkpoint's metadata carries the full launch config that trained it, so nothing else is
needed: the model's structure comes from that config (the HF config.json of ``model.hf_dir``, or
the random-init config with the run tokenizer's vocab), is built abstractly, and the params are
restored straight into their target shardings. The initial HF weights are never read: for an 8B
model that would double the export's host memory and time for values that are overwritten at
once. The launcher's ``export`` stage calls :func:`export_checkpoint` too, so both paths write the
same directory.

Paths are taken from the checkpoint's location, not the stored ``out_dir``: a run directory that
was copied off a pod, or launched with a relative ``out_dir`` from another working directory,
still finds its own tokenizer.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

import jax

STAGES_NEWEST_FIRST = ("grpo", "sft")
"""When ``DIR`` is a run directory, the stage whose checkpoint is exported (the last one trained)."""


def _has_checkpoint(directory: Path) -> bool:
    """A committed Orbax step directory (an integer name; Orbax's temporary ones are not)."""
    return directory.is_dir() and any(p.is_dir() and p.name.isdigit() for p in directory.iterdir())


def resolve_checkpoint_dir(path: str | Path) -> Path:
    """The ``checkpoints/`` directory that ``path`` (checkpoints, stage or run dir) designates.

    Raises SystemExit naming what was looked at, so a wrong path fails before JAX starts work.
    """
    p = Path(path).resolve()
    candidates = [p, p / "checkpoints", *(p / s / "checkpoints" for s in STAGES_NEWEST_FIRST)]
    for c in candidates:
        if _has_checkpoint(c):
            return c
    looked = ", ".join(str(c) for c in candidates)
    raise SystemExit(f"no checkpoint found under {p} (looked in {looked})")


def _launch_config(meta: dict[str, Any], ckpt_dir: Path, step: int) -> Any:
    """The LaunchConfig stored in a checkpoint's meta, with ``out_dir`` set to the run directory
    the checkpoint actually sits in (``<run>/<stage>/checkpoints``)."""
    from prove_jax.config import ConfigError, LaunchConfig
    from prove_jax.yamlconf import build

    stored = meta.get("config")
    if not stored:
        raise SystemExit(f"checkpoint {ckpt_dir} step {step} has no launch config in its metadata "
                         "(meta['config']); it was not written by a training stage and cannot be exported")
    try:
        cfg = build(LaunchConfig, stored)
    except ConfigError as exc:
        raise SystemExit(f"checkpoint {ckpt_dir} step {step}: its stored config does not parse: {exc}") from None
    return dataclasses.replace(cfg, out_dir=str(ckpt_dir.parent.parent))


def _mesh(run: Any, mesh: str | None) -> Any:
    """The training mesh (the params' target layout) unless ``mesh`` overrides it ("" = one device)."""
    from prove_jax.models import make_mesh

    spec = run.cfg.model.mesh if mesh is None else mesh
    if not spec:
        return None
    try:
        return make_mesh(spec)
    except ValueError as exc:
        raise SystemExit(f"cannot build the mesh {spec!r} on this machine ({exc}); pass --mesh "
                         "(e.g. --mesh '' for one device)") from None


def restore_checkpoint(checkpoint: str | Path, *, step: int | None = None, mesh: str | None = None
                       ) -> tuple[Any, Any, Path, int]:
    """``(run, model, checkpoints_dir, step)`` for checkpoint ``step`` (default: the newest) of
    ``checkpoint`` (a run, stage or ``checkpoints/`` directory): the model built from the launch
    config stored in the checkpoint, params restored straight into their shardings. Shared by
    the export and by ``prove_jax.serve`` / ``prove_jax.eval`` loading a training checkpoint."""
    from prove_jax.checkpoint import Checkpointer
    from prove_jax.pipeline.context import Run, restore_model

    ckpt_dir = resolve_checkpoint_dir(checkpoint)
    ckpt = Checkpointer(ckpt_dir)
    try:
        chosen = ckpt.latest_step() if step is None else step
        if chosen is None:
            raise SystemExit(f"no checkpoint found in {ckpt_dir}")
        if chosen not in ckpt.manager.all_steps():
            raise SystemExit(f"{ckpt_dir} has no step {chosen} (steps: {ckpt.manager.all_steps()})")
        run = Run(_launch_config(ckpt.read_meta(chosen), ckpt_dir, chosen))
        model = restore_model(run.model_config(), ckpt, chosen, _mesh(run, mesh))
    finally:
        ckpt.close()
    return run, model, ckpt_dir, chosen


def export_checkpoint(checkpoint: str | Path, out: str | Path, *, step: int | None = None,
                      dtype: str | None = None, mesh: str | None = None) -> Path:
    """Write checkpoint ``step`` (default: the newest) of ``checkpoint`` as an HF directory at ``out``.

    ``dtype`` sets the stored weight dtype (default: the params' own); ``mesh`` overrides the
    training mesh the params are restored onto (``""``: one device), for exporting on a machine
    with a different device count. Returns ``out``.
    """
    from prove_jax.models import save_hf

    run, model, _, _ = restore_checkpoint(checkpoint, step=step, mesh=mesh)
    return save_hf(model, out, source_dir=run.tokenizer_dir, dtype=dtype or None)


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
