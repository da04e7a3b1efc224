"""``python -m prove_jax.export --checkpoint DIR --out HF_DIR [--step N] [--dtype bfloat16] [--peft DIR]``.

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
import json
from pathlib import Path

import jax

from prove_jax.chat import jinja_template
from prove_jax.checkpoint import STAGES_NEWEST_FIRST, load_checkpoint, resolve_checkpoint_dir
from prove_jax.model_record import ModelRecord, write_record
from prove_jax.models import Model, save_hf
from prove_jax.models.lora import has_adapters, merge_lora, save_peft

__all__ = ["STAGES_NEWEST_FIRST", "export_checkpoint", "export_model", "main", "resolve_checkpoint_dir"]


def export_model(model: Model, record: ModelRecord, out: str | Path, *, source_dir: str | Path,
                 dtype: str | None = None, peft_dir: str | Path | None = None, base_dir: str | Path = "") -> Path:
    """``save_hf`` of ``model`` (side files copied from ``source_dir``) plus its ``model.json``:
    the config as stored (``param_dtype`` = the written dtype), chat family and special ids.

    A model carrying LoRA adapters is written merged (``W + (alpha/r) B A``, a QLoRA base
    dequantised: a plain HF model, served and loaded like any other); ``peft_dir`` also writes
    the adapters alone as a PEFT directory whose ``base_model_name_or_path`` is ``base_dir`` (the
    HF directory of the base they were trained on)."""
    if has_adapters(model):
        if peft_dir:
            save_peft(model, peft_dir, base_model_name_or_path=str(base_dir))
        model = merge_lora(model)
    elif peft_dir:
        raise SystemExit(f"--peft {peft_dir}: the model carries no LoRA adapters")
    record = dataclasses.replace(record, lora=None, base_dir="")  # an HF directory is a plain model
    out = Path(save_hf(model, out, source_dir=source_dir, dtype=dtype or None))
    if jax.process_index() == 0:
        write_tool_template(out, record.chat_family)
    config = record.config.replace(param_dtype=dtype) if dtype else record.config
    write_record(out, dataclasses.replace(record, config=config))
    return out


def write_tool_template(directory: Path, chat_family: str) -> bool:
    """Give ``directory`` the chat template the model was trained with when its own cannot render
    tools. SmolLM2's template is bare ChatML with no tools section, so we train it on our Hermes
    rendering (``chat.templates.SmolLM2Template``); an export that kept the bare template would
    prompt a transformers/vLLM user's tool calls in a format the model never saw. A template that
    has a tools section (Qwen's, Granite's) is the family's own and stays. Returns whether it wrote."""
    path = directory / "tokenizer_config.json"
    if not path.exists():
        return False
    config = json.loads(path.read_text(encoding="utf-8"))
    side = directory / "chat_template.jinja"
    current = config.get("chat_template") or (side.read_text(encoding="utf-8") if side.exists() else None)
    if isinstance(current, str) and "tools" in current:
        return False
    config["chat_template"] = jinja_template(chat_family)
    path.write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    side.unlink(missing_ok=True)
    return True


def export_checkpoint(checkpoint: str | Path, out: str | Path, *, step: int | None = None,
                      dtype: str | None = None, mesh: str | None = None, peft_dir: str | Path | None = None) -> Path:
    """Write checkpoint ``step`` (default: the newest) of ``checkpoint`` as an HF directory at ``out``.

    ``dtype`` sets the stored weight dtype (default: the params' own); ``mesh`` overrides the
    training mesh the params are restored onto (``""``: one device), for exporting on a machine
    with a different device count. A LoRA checkpoint exports merged, and with ``peft_dir`` its
    adapters as well (their base: the checkpoint's ``base/``). Returns ``out``.
    """
    loaded = load_checkpoint(checkpoint, step=step, mesh=mesh)  # SystemExit naming what is wrong
    base = loaded.directory / loaded.record.base_dir if loaded.record.lora else ""
    return export_model(loaded.model, loaded.record, out, source_dir=loaded.tokenizer_dir, dtype=dtype,
                        peft_dir=peft_dir, base_dir=base)


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(prog="python -m prove_jax.export", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", required=True, help="a stage's checkpoints/ dir, a stage dir or a run dir")
    parser.add_argument("--out", required=True, help="the HF directory to write")
    parser.add_argument("--step", type=int, default=None, help="checkpoint step (default: the newest)")
    parser.add_argument("--dtype", default=None, help="stored weight dtype, e.g. bfloat16 (default: the params')")
    parser.add_argument("--mesh", default=None,
                        help="mesh to restore onto, e.g. 'fsdp=4' or '' for one device (default: the training mesh)")
    parser.add_argument("--peft", default=None,
                        help="a LoRA checkpoint: also write its adapters as a PEFT directory here")
    args = parser.parse_args(argv)
    out = export_checkpoint(args.checkpoint, args.out, step=args.step, dtype=args.dtype, mesh=args.mesh,
                            peft_dir=args.peft)
    if jax.process_index() == 0:
        print(f"exported {args.checkpoint} -> {out}")
    return out


if __name__ == "__main__":
    main()
