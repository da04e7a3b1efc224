"""The wiring of one run, built once from the :class:`LaunchConfig`: paths, the tokenizer and chat
template, the mesh, the starting model, the MCP pool and engines, and the caps those need.

What a run *produces* lives elsewhere: a checkpoint describes and loads itself
(:func:`prove_jax.checkpoint.load_model`, ``model.json``), the transcript caps are derived by
:mod:`prove_jax.rl.caps`, JSON files go through :mod:`prove_jax.io_util`. ``Run`` only says which
directory, section or factory each stage gets.

Output layout of a run (``out_dir``)::

    data/         synthesized dataset (unless data.dir is given)
    tokenizer/    tiny BPE trained on live conversations (unless tokenizer.dir / model.hf_dir)
    caps.json     transcript caps derived from the train split's gold transcripts
    sft/ grpo/    checkpoints/ (+ model.json, tokenizer/), metrics.jsonl, tb/, PNGs, summary.json
                  (the stage's done marker)
    eval/         <model>.json per evaluated model, summary.json
    hf/           the exported transformers-loadable model (+ model.json)
    summary.json  the run's printed summary
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jax
import numpy as np
from flax import nnx

from prove_jax.chat import ChatTemplate, ChatTokenizer, get_template, special_ids
from prove_jax.config import LaunchConfig, to_dict
from prove_jax.engine import Engine, EngineConfig, Sampler
from prove_jax.engine.weights import MeshSpec, WeightSync, engine_mesh_spec
from prove_jax.env import EpisodeConfig, MCPPool
from prove_jax.env.byo.seeding import read_seed_calls
from prove_jax.model_record import ModelRecord, ModelSpec, default_chat_family, describe
from prove_jax.models import Model, init_model, load_hf, make_mesh
from prove_jax.models.config import ModelConfig
from prove_jax.models.lora import apply_lora

if TYPE_CHECKING:
    from prove_jax.rl.caps import CapsPolicy, TranscriptCaps

__all__ = ["Run"]


class Run:
    def __init__(self, cfg: LaunchConfig) -> None:
        self.cfg = cfg
        self.out = Path(cfg.out_dir)
        self.out.mkdir(parents=True, exist_ok=True)

    # ---- paths ----------------------------------------------------------------------------------
    @property
    def data_dir(self) -> Path:
        return Path(self.cfg.data.dir) if self.cfg.data.dir else self.out / "data"

    @property
    def spec(self) -> ModelSpec:
        """The launch config's model section (what it means: ModelSpec)."""
        return self.cfg.model

    @property
    def tokenizer_dir(self) -> Path:
        return self.spec.tokenizer_path(self.out, self.cfg.tokenizer.dir)

    def stage_dir(self, stage: str) -> Path:
        return self.out / stage

    @property
    def config_dict(self) -> dict[str, Any]:
        return to_dict(self.cfg)

    # ---- chat -----------------------------------------------------------------------------------
    @cached_property
    def tokenizer(self) -> ChatTokenizer:
        return ChatTokenizer.from_dir(self.tokenizer_dir)

    @cached_property
    def template(self) -> ChatTemplate:
        return get_template(self.spec.chat_family(lambda: self.tokenizer, self.cfg.tokenizer.dir), enable_thinking=False)

    def template_for_family(self) -> ChatTemplate:
        """The template before any tokenizer exists (the tokenizer stage renders its corpus)."""
        return get_template(default_chat_family(self.cfg.model.family), enable_thinking=False)

    # ---- model ----------------------------------------------------------------------------------
    @cached_property
    def mesh(self) -> Any:
        return make_mesh(self.cfg.model.mesh) if self.cfg.model.mesh else None

    def model_config(self) -> ModelConfig:
        """The architecture and runtime options this launch trains and evaluates with."""
        return self.spec.model_config(lambda: self.tokenizer)

    def initial_model(self) -> Model:
        """The starting point of training: the HF checkpoint, or a seeded random init."""
        m = self.cfg.model
        if m.hf_dir:
            return load_hf(m.hf_dir, self.mesh, dtype=m.dtype, param_dtype=m.param_dtype, remat=m.remat,
                           scan_layers=m.scan_layers, attention_impl=m.attention_impl)
        return init_model(self.model_config(), seed=m.seed, mesh=self.mesh)

    def trained_model(self, start: Model) -> Model:
        """What a training stage optimises from ``start`` (a plain model: the GRPO stage merges a
        LoRA SFT checkpoint first): ``start`` itself, or with ``lora`` on, fresh adapters over it
        (``start`` is then the frozen base, QLoRA-quantised if asked)."""
        return apply_lora(start, self.cfg.lora) if self.cfg.lora.enabled else start

    def model_record(self, model: Model) -> ModelRecord:
        """What a stage's checkpoints say about ``model`` (``model.json``, the plain model: a
        LoRA stage's base): its config, this run's chat template and special ids, the training
        mesh, where the weights started and, with ``lora`` on, the adapters' settings."""
        record = describe(model.config, self.template, self.tokenizer, train_mesh=self.cfg.model.mesh,
                          origin=self.spec.origin)
        return dataclasses.replace(record, lora=self.cfg.lora) if self.cfg.lora.enabled else record

    def engine_model(self, trainer: Any) -> tuple[Model, WeightSync | None]:
        """The model the rollout engine decodes with, and the sync that brings it new weights.

        The engine holds its weights in ``engine.param_dtype`` (default ``model.dtype``) laid out
        by ``engine.mesh`` (default: :meth:`engine_mesh_spec`, a layout for decode). One process with the trainer's dtype and
        layout: the trainer's own model and buffers (``None``: nothing to transfer). Otherwise a
        :class:`~prove_jax.engine.weights.WeightSync`: one on-device cast + reshard per update.
        Several processes: every process runs its own engine (its own episodes and schedule) on
        its local devices, each with a whole engine-dtype copy gathered by device collectives.

        With LoRA the engine always gets merged weights (``W + (alpha/r) B A`` in its dtype, a
        QLoRA base dequantised), made inside the sync's one program: a decode step then reads
        plain dense weights instead of adding rank-r products (and dequantising) at every token.
        """
        sync = WeightSync(trainer.model_config, trainer.sync_source, dtype=self.engine_param_dtype,
                          mesh=self.engine_mesh_spec(trainer.model_config), merge=trainer.merge_fn())
        if sync.zero_copy:
            return trainer.model(), None
        return sync.engine_model(trainer.sync_source), sync

    def eval_sync(self, model: Model) -> WeightSync | None:
        """The eval's engine weights for ``model``, as the rollouts' engine holds them (its dtype,
        per-layer KV caches, its layout); None when that is the model itself (the tiny default) or
        when several processes evaluate one globally sharded model in lockstep."""
        if jax.process_count() > 1:
            return None
        sync = WeightSync(model.config, nnx.split(model)[1], dtype=self.engine_param_dtype,
                          mesh=self.engine_mesh_spec(model.config))
        return None if sync.zero_copy else sync

    def engine_mesh_spec(self, config: ModelConfig) -> MeshSpec:
        """``engine.mesh``, or (empty) the decode layout over this process's devices
        (:func:`~prove_jax.engine.weights.decode_layout`: tensor parallel, data over the rest)."""
        return engine_mesh_spec(self.cfg.engine.mesh, config, jax.local_device_count())

    @property
    def engine_param_dtype(self) -> str:
        """The rollout engine's weight dtype: ``engine.param_dtype``, else the compute dtype."""
        return self.cfg.engine.param_dtype or self.cfg.model.dtype

    # ---- environment ----------------------------------------------------------------------------
    def pool(self) -> MCPPool:
        try:
            # a byo server seeded through its write tools starts from the state its dataset was built on
            return MCPPool.from_config(self.cfg.env, self.out / "byo", read_seed_calls(self.data_dir))
        except ValueError as exc:  # env.urls missing a domain: the user's to fix, not a traceback
            raise SystemExit(str(exc)) from None

    # ---- caps ------------------------------------------------------------------------------------
    def caps_policy(self) -> CapsPolicy:
        from prove_jax.rl.caps import CapsPolicy

        ep, eng = self.cfg.episode, self.cfg.engine
        return CapsPolicy(max_tokens=ep.max_tokens, engine_max_len=eng.max_len, length_margin=ep.length_margin,
                          max_tokens_limit=ep.max_tokens_limit, chunk=eng.max_chunk)

    def caps(self, gold_lengths: Sequence[int] | None = None) -> TranscriptCaps:
        """Transcript cap and engine ``max_len`` (:func:`prove_jax.rl.caps.transcript_caps`),
        cached in ``caps.json``; derived from ``gold_lengths`` (the SFT stage's replay) or, when
        none are given, from a replay of the train split's gold calls on this run's pool."""
        from prove_jax.rl.caps import GOLD_LIMIT, UNCAPPED, measure_gold_lengths, transcript_caps

        def replay() -> Sequence[int]:
            if gold_lengths is not None:
                return gold_lengths
            from prove_jax.loaders import load_split

            examples = load_split(self.data_dir, self.cfg.data.train_split, self.cfg.view, limit=GOLD_LIMIT)
            return measure_gold_lengths(examples, self.pool, self.template, self.tokenizer,
                                        self.episode_config(max_tokens=UNCAPPED))

        return transcript_caps(self.out / "caps.json", self.caps_policy(), gold_lengths=replay,
                               max_position=lambda: self.model_config().max_position_embeddings)

    def episode_config(self, *, max_tokens: int | None = None) -> EpisodeConfig:
        """The run's episode section with its transcript cap resolved (``max_tokens`` or the caps)."""
        return dataclasses.replace(self.cfg.episode,
                                   max_tokens=max_tokens if max_tokens is not None else self.caps().max_tokens)

    def engine_config(self) -> EngineConfig:
        """The run's engine section with ``max_len`` resolved from the caps (``slots: 0`` was sized at
        start-up, by the launcher)."""
        return dataclasses.replace(self.cfg.engine, max_len=self.caps().max_len)

    def sampler(self, model: Model) -> Sampler:
        sp = special_ids(self.template, self.tokenizer)
        return Sampler(model, self.engine_config(), stop_ids=sp.stop_ids, vocab_limit=sp.vocab_size)

    def engine(self, model_or_sampler: Model | Sampler) -> Engine:
        sampler = model_or_sampler if isinstance(model_or_sampler, Sampler) else self.sampler(model_or_sampler)
        return Engine(sampler, self.engine_config())

    def model_summary(self, model: Model) -> dict[str, Any]:
        c = model.config
        n = sum(int(np.prod(x.shape)) for x in jax.tree.leaves(nnx.state(model)))
        return {"family": c.family, "params": n, "hidden_size": c.hidden_size, "layers": c.num_layers,
                "vocab_size": c.vocab_size, "dtype": c.dtype, "param_dtype": c.param_dtype,
                "mesh": self.cfg.model.mesh or "single device"}

