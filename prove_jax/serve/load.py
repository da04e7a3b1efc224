"""Load a policy to serve or evaluate: an HF directory or a training checkpoint, plus its chat side.

``DIR`` may be

* an HF directory (``config.json`` + safetensors + tokenizer files): :func:`load_hf`, the family
  template detected from its chat template and added tokens (thinking off, as in training);
* a training run, stage or ``checkpoints/`` directory: the params of its newest (or ``step``)
  checkpoint restored straight into their shardings, with the run's tokenizer and template —
  the same model the launcher's eval stage scores, with no export in between.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from prove_jax.chat import ChatTemplate, ChatTokenizer, detect_family, get_template, special_ids
from prove_jax.engine import Engine, EngineConfig, Sampler


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


def _is_hf_dir(path: Path) -> bool:
    return (path / "config.json").exists() and any(path.glob("*.safetensors"))


def load_policy(path: str | Path, *, step: int | None = None, dtype: str = "bfloat16", mesh: str | None = None,
                name: str | None = None, enable_thinking: bool = False) -> LoadedPolicy:
    """Load ``path`` (see the module docstring). ``mesh`` is a mesh spec such as ``"fsdp=4"``
    (default: one device for HF dirs, the training mesh for checkpoints)."""
    import jax.numpy as jnp

    from prove_jax.models import load_hf, make_mesh

    p = Path(path).expanduser().resolve()
    if not p.exists():
        raise SystemExit(f"--model {path}: no such directory")
    if _is_hf_dir(p):
        tok = ChatTokenizer.from_dir(p)
        family = detect_family(tok.chat_template, tok.added_tokens)
        model = load_hf(p, make_mesh(mesh) if mesh else None, dtype=jnp.dtype(dtype))
        return LoadedPolicy(model, tok, get_template(family, enable_thinking=enable_thinking), str(p),
                            name or p.name)
    from prove_jax.checkpoint import Checkpointer
    from prove_jax.export import _launch_config, _mesh, resolve_checkpoint_dir
    from prove_jax.pipeline.context import Run, restore_model

    ckpt_dir = resolve_checkpoint_dir(p)  # SystemExit naming what was looked at
    ckpt = Checkpointer(ckpt_dir)
    try:
        chosen = ckpt.latest_step() if step is None else step
        if chosen is None or chosen not in ckpt.manager.all_steps():
            raise SystemExit(f"{ckpt_dir} has no step {chosen} (steps: {ckpt.manager.all_steps()})")
        run = Run(_launch_config(ckpt.read_meta(chosen), ckpt_dir, chosen))
        model = restore_model(run.model_config(), ckpt, chosen, _mesh(run, mesh))
    finally:
        ckpt.close()
    template = get_template(run.template.family, enable_thinking=enable_thinking)  # type: ignore[arg-type]
    stage = ckpt_dir.parent.name
    return LoadedPolicy(model, run.tokenizer, template, f"{ckpt_dir}@{chosen}",
                        name or f"{ckpt_dir.parent.parent.name}-{stage}-{chosen}")
