"""What every stage of a run needs, built once from the :class:`LaunchConfig`: paths, the tokenizer
and chat template, the mesh, models, the MCP pool, engines, episode caps and the tool view.

Output layout of a run (``out_dir``)::

    data/         synthesized dataset (unless data.dir is given)
    tokenizer/    tiny BPE trained on live conversations (unless tokenizer.dir / model.hf_dir)
    caps.json     transcript caps derived from the train split's gold transcripts
    sft/ grpo/    checkpoints/, metrics.jsonl, tb/, PNGs, summary.json (the stage's done marker)
    eval/         <model>.json per evaluated model, summary.json
    hf/           the exported transformers-loadable model
    summary.json  the run's printed summary
"""

from __future__ import annotations

import asyncio
import json
import math
from functools import cached_property
from pathlib import Path
from typing import Any

import jax
import numpy as np
from flax import nnx

from prove_jax.chat import ChatTemplate, ChatTokenizer, detect_family, get_template, special_ids
from prove_jax.config import LaunchConfig, to_dict
from prove_jax.engine import Engine, EngineConfig, Sampler
from prove_jax.engine.weights import WeightSync
from prove_jax.env import EpisodeConfig, MCPPool, make_backend
from prove_jax.models import Model, init_model, load_hf, make_mesh
from prove_jax.models.config import FAMILY_CLASSES, ModelConfig

CHAT_FAMILY = {"qwen2": "qwen2.5", "qwen3": "qwen3", "granite": "granite-4.1"}
VOCAB_MULTIPLE = 64  # random-init embedding tables are padded like real checkpoints' (never sampled)


def write_json(path: Path, obj: Any) -> None:
    if jax.process_index() != 0:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, default=str))
    tmp.replace(path)  # atomic: a stage's done marker is either complete or absent


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())


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
    def tokenizer_dir(self) -> Path:
        if self.cfg.tokenizer.dir:
            return Path(self.cfg.tokenizer.dir)
        if self.cfg.model.hf_dir:
            return Path(self.cfg.model.hf_dir)
        return self.out / "tokenizer"

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
        family = CHAT_FAMILY[self.cfg.model.family]
        if self.cfg.tokenizer.dir or self.cfg.model.hf_dir:
            family = detect_family(self.tokenizer.chat_template, self.tokenizer.added_tokens)
        return get_template(family, enable_thinking=False)

    def template_for_family(self) -> ChatTemplate:
        """The template before any tokenizer exists (the tokenizer stage renders its corpus)."""
        return get_template(CHAT_FAMILY[self.cfg.model.family], enable_thinking=False)

    # ---- model ----------------------------------------------------------------------------------
    @cached_property
    def mesh(self) -> Any:
        return make_mesh(self.cfg.model.mesh) if self.cfg.model.mesh else None

    def model_config(self) -> ModelConfig:
        m = self.cfg.model
        runtime: dict[str, Any] = {"dtype": m.dtype, "param_dtype": m.param_dtype, "remat": m.remat,
                                   "scan_layers": m.scan_layers, "attention_impl": m.attention_impl}
        if m.hf_dir:
            return ModelConfig.from_hf_dir(m.hf_dir, **runtime)
        tok = self.tokenizer
        vocab = math.ceil(len(tok) / VOCAB_MULTIPLE) * VOCAB_MULTIPLE
        init: dict[str, Any] = {"initializer_range": 0.02, "tie_word_embeddings": False, **m.init}
        init.pop("vocab_size", None)  # a random init uses the run's tokenizer (init's is the checkpoint's)
        return FAMILY_CLASSES[m.family](vocab_size=vocab, eos_token_id=tok.eos_id, pad_token_id=tok.pad_id,
                                        **init, **runtime)

    def initial_model(self) -> Model:
        """The starting point of training: the HF checkpoint, or a seeded random init."""
        m = self.cfg.model
        if m.hf_dir:
            return load_hf(m.hf_dir, self.mesh, dtype=m.dtype, param_dtype=m.param_dtype, remat=m.remat,
                           scan_layers=m.scan_layers, attention_impl=m.attention_impl)
        return init_model(self.model_config(), seed=m.seed, mesh=self.mesh)

    def model_from_checkpoint(self, stage: str, step: int | None = None) -> Model:
        """The model with the params of ``stage``'s checkpoint (default: its newest)."""
        from prove_jax.checkpoint import Checkpointer

        ckpt = Checkpointer(self.stage_dir(stage) / "checkpoints")
        try:
            chosen = ckpt.latest_step() if step is None else step
            if chosen is None:
                raise FileNotFoundError(f"no checkpoint in {ckpt.directory}")
            return restore_model(self.model_config(), ckpt, chosen, self.mesh)
        finally:
            ckpt.close()

    def engine_model(self, trainer: Any) -> tuple[Model, WeightSync | None]:
        """The model the rollout engine decodes with, and the sync that brings it new weights.

        The engine holds its weights in ``engine.param_dtype`` (default ``model.dtype``) laid out
        by ``engine.mesh`` (default ``model.mesh``). One process with the trainer's dtype and
        layout: the trainer's own model and buffers (``None``: nothing to transfer). Otherwise a
        :class:`~prove_jax.engine.weights.WeightSync`: one on-device cast + reshard per update.
        Several processes: every process runs its own engine (its own episodes and schedule) on
        its local devices, each with a whole engine-dtype copy gathered by device collectives.
        """
        eng = self.cfg.engine
        sync = WeightSync(trainer.model_config, trainer.params, dtype=self.engine_param_dtype,
                          mesh=eng.mesh or self.cfg.model.mesh or None)
        if sync.zero_copy:
            return trainer.model(), None
        return sync.engine_model(trainer.params), sync

    @property
    def engine_param_dtype(self) -> str:
        """The rollout engine's weight dtype: ``engine.param_dtype``, else the compute dtype."""
        return self.cfg.engine.param_dtype or self.cfg.model.dtype

    # ---- environment ----------------------------------------------------------------------------
    def pool(self) -> MCPPool:
        env = self.cfg.env
        if env.backend == "http":
            missing = [d for d in env.domains if d not in env.urls]
            if missing:
                raise SystemExit(f"env.urls has no URLs for {missing}")
            return MCPPool({d: make_backend(d, "http", urls=env.urls[d]) for d in env.domains},
                           call_timeout_s=env.call_timeout_s, max_concurrent_episodes=env.max_concurrent_episodes)
        kw: dict[str, Any] = {"call_timeout_s": env.call_timeout_s,
                              "max_concurrent_episodes": env.max_concurrent_episodes}
        if env.backend == "stdio":
            kw["n_procs"] = env.n_procs
        return MCPPool.from_spec(env.domains, env.backend, **kw)

    # ---- caps ------------------------------------------------------------------------------------
    def caps(self, gold_lengths: list[int] | None = None) -> dict[str, int]:
        """Transcript cap (``max_tokens``) and engine ``max_len``, derived once from the train
        split's gold transcripts unless set explicitly; cached in ``caps.json``."""
        path = self.out / "caps.json"
        ep, eng = self.cfg.episode, self.cfg.engine
        if ep.max_tokens is not None:
            return {"max_tokens": ep.max_tokens, "max_len": eng.max_len or ep.max_tokens, "derived": 0}
        if path.exists():
            return read_json(path)
        if gold_lengths is None:
            gold_lengths = asyncio.run(self.gold_lengths())
        chunk = self.cfg.engine.max_chunk
        longest = int(max(gold_lengths))
        cap = math.ceil(longest * ep.length_margin / chunk) * chunk
        cap = min(cap, ep.max_tokens_limit, self.model_config().max_position_embeddings)
        caps = {"max_tokens": cap, "max_len": max(eng.max_len or cap, cap), "derived": 1,
                "gold_longest": longest, "gold_median": int(np.median(gold_lengths)),
                "gold_p90": int(np.percentile(gold_lengths, 90)), "gold_transcripts": len(gold_lengths)}
        write_json(path, caps)
        return caps

    async def gold_lengths(self, limit: int = 2000) -> list[int]:
        from prove_jax.loaders import load_split
        from prove_jax.rl.sft import gold_rollouts

        examples = load_split(self.data_dir, self.cfg.data.train_split, self.cfg.view, limit=limit)
        async with self.pool() as pool:
            ros = await gold_rollouts(examples, pool, self.template, self.tokenizer,
                                      self.episode_config(max_tokens=10**9))
        return [len(r["tokens"]) for r in ros if not r["failed"]]

    def episode_config(self, *, max_tokens: int | None = None) -> EpisodeConfig:
        ep = self.cfg.episode
        return EpisodeConfig(max_user_turns=ep.max_user_turns, max_assistant_turns=ep.max_assistant_turns,
                             max_tokens=max_tokens if max_tokens is not None else self.caps()["max_tokens"],
                             max_result_chars=ep.max_result_chars)

    def engine_config(self) -> EngineConfig:
        return self.cfg.engine.to_engine(self.caps()["max_len"])

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



def restore_model(config: ModelConfig, ckpt: Any, step: int, mesh: Any) -> Model:
    """A model of ``config`` with the params of checkpoint ``step``, each restored directly into
    its sharding on ``mesh``: no initial weights are loaded and nothing passes through one device."""
    from prove_jax.models import abstract_model, state_shardings

    graphdef, abstract_state = nnx.split(abstract_model(config, mesh))
    shardings = state_shardings(abstract_state, mesh, config.sharding_rules)
    like = jax.tree.map(lambda a, s: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=s), abstract_state, shardings)
    return nnx.merge(graphdef, ckpt.restore_params(like, step))
