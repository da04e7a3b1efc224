"""Load a policy to serve or evaluate: an HF directory or a training checkpoint, plus its chat side.

``DIR`` may be

* an HF directory (``config.json`` + safetensors + tokenizer files): :func:`load_hf`, the family
  template detected from its chat template and added tokens (thinking off, as in training);
* a training run, stage or ``checkpoints/`` directory: the params of its newest (or ``step``)
  checkpoint restored straight into their shardings, with the run's tokenizer and template —
  the same model the launcher's eval stage scores, with no export in between.
"""

from __future__ import annotations

import argparse
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
    (default: one device for HF dirs, the training mesh for checkpoints). ``dtype`` applies to HF
    dirs; a checkpoint keeps the dtypes its run trained with."""
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
    from prove_jax.export import restore_checkpoint

    run, model, ckpt_dir, chosen = restore_checkpoint(p, step=step, mesh=mesh)  # SystemExit naming what is wrong
    template = get_template(run.template.family, enable_thinking=enable_thinking)  # type: ignore[arg-type]
    return LoadedPolicy(model, run.tokenizer, template, f"{ckpt_dir}@{chosen}",
                        name or f"{ckpt_dir.parent.parent.name}-{ckpt_dir.parent.name}-{chosen}")


def add_engine_args(p: argparse.ArgumentParser, *, slots: int = 16, max_len: int = 8192) -> None:
    """The engine-shape flags every entry point that serves or evaluates a policy takes."""
    p.add_argument("--slots", type=int, default=slots,
                   help="concurrent sequences (decode batch rows; KV cache = slots x max-len)")
    p.add_argument("--max-len", type=int, default=max_len, help="most tokens of prompt + completion")
    p.add_argument("--max-chunk", type=int, default=512, help="longest prefill chunk (power of two)")
    p.add_argument("--prefill-rows", type=int, default=4, help="rows prefilled together in one call")
    p.add_argument("--decode-block", type=int, default=8, help="decode steps per compiled program")


def engine_config(args: argparse.Namespace) -> EngineConfig:
    """The :class:`EngineConfig` of :func:`add_engine_args`' flags."""
    return EngineConfig(slots=args.slots, max_len=args.max_len, max_chunk=args.max_chunk,
                        min_chunk=min(32, args.max_chunk), prefill_rows=args.prefill_rows,
                        decode_block=args.decode_block)

