"""Load a policy to serve or evaluate: an HF directory or a training checkpoint, plus its chat side.

``DIR`` may be

* an HF directory (``config.json`` + safetensors + tokenizer files): loaded in ``dtype``, its chat
  family taken from its ``model.json`` (an export of ours) or detected from its chat template and
  added tokens (a model from elsewhere), thinking off as in training;
* a training run, stage or ``checkpoints/`` directory: the params of its newest (or ``step``)
  checkpoint restored straight into their shardings, with the tokenizer and template recorded
  beside them — the same model the launcher's eval stage scores, with no export in between.

Both go through :func:`prove_jax.checkpoint.load_model`: a directory describes itself, so neither
needs a launch config or the HF directory a run started from.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from prove_jax.chat import ChatTemplate, ChatTokenizer, special_ids
from prove_jax.checkpoint import load_model
from prove_jax.engine import Engine, EngineConfig, Sampler
from prove_jax.models.lora import has_adapters, merge_lora


@dataclasses.dataclass
class LoadedPolicy:
    """A model with the tokenizer and template it was trained with."""

    model: Any
    tokenizer: ChatTokenizer
    template: ChatTemplate
    source: str
    name: str

    def engine(self, config: EngineConfig) -> Engine:
        sp = special_ids(self.template, self.tokenizer)
        return Engine(Sampler(self.model, config, stop_ids=sp.stop_ids, vocab_limit=sp.vocab_size), config)


def load_policy(path: str | Path, *, step: int | None = None, dtype: str = "bfloat16", mesh: str | None = None,
                name: str | None = None, enable_thinking: bool = False) -> LoadedPolicy:
    """Load ``path`` (see the module docstring). ``mesh`` is a mesh spec such as ``"fsdp=4"``
    (default: one device for HF dirs, the training mesh for checkpoints). ``dtype`` applies to HF
    dirs; a checkpoint keeps the dtypes its run trained with."""
    p = Path(path).expanduser().resolve()
    if not p.exists():
        raise SystemExit(f"--model {path}: no such directory")
    loaded = load_model(p, step=step, mesh=mesh, dtype=dtype)  # SystemExit naming what is wrong
    # a LoRA checkpoint decodes merged: one dense matmul per projection, no dequantisation per step
    model = merge_lora(loaded.model) if has_adapters(loaded.model) else loaded.model
    return LoadedPolicy(model, loaded.tokenizer, loaded.record.template(enable_thinking=enable_thinking),
                        loaded.source, name or loaded.name)
