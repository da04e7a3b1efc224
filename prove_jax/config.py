"""The run config: one small dataclass per concern, composed by :class:`LaunchConfig`.

    cfg = load(LaunchConfig, "configs/runs/tiny_cpu.yaml", ["grpo.steps=3", "env.backend=stdio"])

Every concern keeps its own dataclass where it lives, and the launch composes those very classes
(``env.EpisodeConfig``, ``engine.EngineConfig``, ``rewards.RewardConfig``, ``rl.GRPOConfig``,
``rl.SFTConfig``, ``env.ToolView``, ``checkpoint.CheckpointConfig``, ``eval.EvalConfig``, ...);
the sections defined here only say where inputs come from (data, tokenizer, model) and the
launcher's own switches. :func:`check` then
builds what the sections describe (the synthesis config, the reward config, the model config, the
mesh) so a bad value fails before any work starts, naming its key. The parser is
:mod:`prove_jax.yamlconf` (the same one ``data/`` uses).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from prove_jax.checkpoint import CheckpointConfig
from prove_jax.engine.config import EngineConfig
from prove_jax.env.episode import EpisodeConfig
from prove_jax.env.pool import EnvConfig, MCPPool
from prove_jax.env.view import ToolView
from prove_jax.eval.config import EvalConfig
from prove_jax.model_record import ModelSpec
from prove_jax.models.lora import LoraConfig
from prove_jax.plan.config import PlanConfig
from prove_jax.rewards.config import RewardConfig
from prove_jax.rl.grpo import GRPOConfig
from prove_jax.rl.sft import SFTConfig
from prove_jax.yamlconf import RELATIVE, ConfigError, apply_override, build, checked, load, read_yaml, to_dict

__all__ = ["ConfigError", "LaunchConfig", "apply_override", "build", "check", "load", "read_yaml", "to_dict"]

TINY_INIT = {"hidden_size": 128, "intermediate_size": 384, "num_layers": 3, "num_heads": 4, "num_kv_heads": 2,
             "head_dim": 32, "rope_theta": 1e6, "max_position_embeddings": 32768}
"""The default ``model.init``: the tiny CPU model (a random init over the run's own tokenizer)."""

STAGES = ("synth", "tokenizer", "sft", "grpo", "eval", "export", "demo")


@dataclasses.dataclass
class DataConfig:
    """The Example records: an existing dataset directory, or a synthesis into ``<out_dir>/data``."""

    dir: str = dataclasses.field(default="", metadata=RELATIVE)  # inputs resolve against the YAML (yamlconf)
    size: str = "tiny"  # tiny | paper
    seed: int = 0
    synth: dict[str, Any] = dataclasses.field(default_factory=dict)  # SynthConfig fields
    train_split: str = "train"  # (the held-out split is eval.split)


@dataclasses.dataclass
class TokenizerConfig:
    """A real model's tokenizer directory, or a tiny BPE trained on the run's own conversations."""

    dir: str = dataclasses.field(default="", metadata=RELATIVE)
    vocab_size: int = 3000
    corpus_examples: int = 400  # training examples whose live conversations form the corpus


@dataclasses.dataclass
class ExportConfig:
    dir: str = ""  # default <out_dir>/hf
    dtype: str = ""  # stored weight dtype (default: the params' own)
    peft_dir: str = ""  # a LoRA run's adapters as a PEFT directory (default <out_dir>/hf_peft); hf/ is merged


@dataclasses.dataclass
class DistributedConfig:
    """Multi-process runs: ``jax.distributed.initialize`` is called when ``num_processes > 1``
    (explicit coordinator) or when ``auto`` and the launcher environment (SLURM, TPU pod,
    ``JAX_COORDINATOR_ADDRESS``) describes several processes."""

    auto: bool = True
    coordinator: str = ""
    num_processes: int = 1
    process_id: int = -1
    local_devices: int = 0  # CPU only: devices per process (0: leave as is)


@dataclasses.dataclass
class DemoConfig:
    """The server/pool demo (random policy over live servers)."""

    episodes: int = 60
    calls_per_episode: int = 8
    concurrency: int = 12


@dataclasses.dataclass
class LaunchConfig:
    """A run: name, output directory, seed, the stages to run and each concern's config.

    Paths: what a run reads (``data.dir``, ``tokenizer.dir``, ``model.hf_dir``/``gguf``, every path of
    an ``env.byo`` entry) resolves against the YAML file that gives it; what it writes (``out_dir``,
    ``export.dir``, ``env.byo_dir``) against the working directory, so a run lands where it is launched.
    """

    name: str = "tiny_cpu"
    out_dir: str = "runs/tiny_cpu"
    seed: int = 0
    stages: list[str] = dataclasses.field(default_factory=lambda: ["synth", "tokenizer", "sft", "grpo", "eval",
                                                                    "export"])
    progress: bool = True
    data: DataConfig = dataclasses.field(default_factory=DataConfig)
    view: ToolView = dataclasses.field(default_factory=ToolView)
    tokenizer: TokenizerConfig = dataclasses.field(default_factory=TokenizerConfig)
    model: ModelSpec = dataclasses.field(default_factory=lambda: ModelSpec(init=dict(TINY_INIT)))
    lora: LoraConfig = dataclasses.field(default_factory=LoraConfig)  # rank 0: full fine-tuning
    # a run derives its transcript cap (max_tokens: null) and engine max_len (null) from the data
    episode: EpisodeConfig = dataclasses.field(default_factory=lambda: EpisodeConfig(max_tokens=None))
    engine: EngineConfig = dataclasses.field(default_factory=lambda: EngineConfig(slots=16, max_len=None))
    env: EnvConfig = dataclasses.field(default_factory=EnvConfig)
    sft: SFTConfig = dataclasses.field(default_factory=SFTConfig)
    grpo: GRPOConfig = dataclasses.field(default_factory=GRPOConfig)
    reward: RewardConfig = dataclasses.field(default_factory=RewardConfig)  # YAML: RewardConfig.from_dict
    checkpoint: CheckpointConfig = dataclasses.field(default_factory=CheckpointConfig)
    eval: EvalConfig = dataclasses.field(default_factory=EvalConfig)
    export: ExportConfig = dataclasses.field(default_factory=ExportConfig)
    distributed: DistributedConfig = dataclasses.field(default_factory=DistributedConfig)
    demo: DemoConfig = dataclasses.field(default_factory=DemoConfig)
    plan: PlanConfig = dataclasses.field(default_factory=PlanConfig)


def check(cfg: LaunchConfig) -> None:
    """Build everything the sections describe, so bad values fail now, naming their key."""
    unknown = [s for s in cfg.stages if s not in STAGES]
    if unknown:
        raise ConfigError(f"stages: unknown stage(s) {unknown}; known: {list(STAGES)}")
    if cfg.data.size not in ("tiny", "paper"):
        raise ConfigError(f"data.size: expected tiny or paper, got {cfg.data.size!r}")
    from data.config import from_mapping

    checked("data.synth", from_mapping, cfg.data.size, cfg.data.synth)
    # backends are built, not started: names, URLs and byo seed fixtures checked
    checked("env", MCPPool.from_config, cfg.env, Path(cfg.out_dir) / "byo")
    blind = [s.name for s in cfg.env.byo if not s.snapshot]
    if blind and cfg.reward.reads_final_state:  # a user's server has no end state unless it says how
        raise ConfigError(f"reward: the final-state term needs a snapshot command; byo server(s) {blind} "
                          "give none (set env.byo[].snapshot, or leave the term off)")
    if blind and "eval" in cfg.stages and cfg.eval.final_state:
        raise ConfigError(f"eval.final_state: byo server(s) {blind} give no snapshot command "
                          "(set env.byo[].snapshot, or eval.final_state: false)")
    from prove_jax.models.config import FAMILY_CLASSES, check_attention_impl
    from prove_jax.models.sharding import parse_mesh_spec

    if cfg.model.family not in FAMILY_CLASSES:
        raise ConfigError(f"model.family: expected one of {sorted(FAMILY_CLASSES)}, got {cfg.model.family!r}")
    if cfg.model.gguf:
        from prove_jax.convert import resolve_gguf

        try:
            resolve_gguf(cfg.model.gguf)
        except FileNotFoundError as exc:
            raise ConfigError(f"model.gguf: {exc}") from None
    elif not cfg.model.hf_dir:
        checked("model.init", FAMILY_CLASSES[cfg.model.family], dtype=cfg.model.dtype,
              param_dtype=cfg.model.param_dtype, remat=cfg.model.remat, **{**cfg.model.init, "vocab_size": 256})
    checked("model.attention_impl", check_attention_impl, cfg.model.attention_impl)
    checked("model.mesh", parse_mesh_spec, cfg.model.mesh)
    e = cfg.engine
    checked("engine.mesh", parse_mesh_spec, e.mesh)
    from prove_jax.models.kernels import KERNELS

    if e.kernel not in KERNELS:
        raise ConfigError(f"engine.kernel: expected one of {KERNELS}, got {e.kernel!r}")
    if e.paged and e.pages and e.max_len is not None and e.pages * e.page_len < e.max_len:
        raise ConfigError(f"engine.pages ({e.pages} pages of {e.page_len} tokens) cannot hold one episode of "
                          f"engine.max_len={e.max_len} tokens: raise engine.pages (0 = slots x pages per row)")
    if e.param_dtype:
        import jax.numpy as jnp

        if not jnp.issubdtype(checked("engine.param_dtype", jnp.dtype, e.param_dtype), jnp.floating):
            raise ConfigError(f"engine.param_dtype: expected a float dtype, got {e.param_dtype!r}")
    cap = cfg.episode.max_tokens or cfg.episode.max_tokens_limit  # the derived cap is at most the limit
    if cfg.grpo.overlong == "soft_penalty" and cap is not None and cfg.grpo.overlong_buffer >= cap:
        raise ConfigError(f"grpo.overlong_buffer ({cfg.grpo.overlong_buffer}) must be below the transcript cap "
                          f"({cap}: episode.max_tokens or max_tokens_limit) for grpo.overlong=soft_penalty")
    if cfg.episode.max_tokens is not None and e.max_len is not None and e.max_len < cfg.episode.max_tokens:
        raise ConfigError(f"engine.max_len ({e.max_len}) must be >= episode.max_tokens ({cfg.episode.max_tokens})")
