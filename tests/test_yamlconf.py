"""The config parser's include/merge rules (``prove_jax.yamlconf``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prove_jax.config import LaunchConfig, load
from prove_jax.yamlconf import ConfigError, replaced_paths


def test_included_mappings_merge_key_by_key_but_a_replace_field_is_taken_whole(tmp_path: Path) -> None:
    """``model.init`` from an included file merges with the including file's keys; ``env.urls``
    (declared REPLACE) from the including file replaces the included one, so a base file's servers
    never leak into a run that names its own."""
    (tmp_path / "base.yaml").write_text(
        "model:\n  init: {hidden_size: 64, num_layers: 4}\n"
        "env:\n  backend: http\n  urls: {banking: ['http://a/mcp'], crm: ['http://b/mcp']}\n")
    (tmp_path / "run.yaml").write_text(
        "include: base.yaml\nmodel:\n  init: {num_layers: 2}\nenv:\n  urls: {email: ['http://c/mcp']}\n")
    cfg = load(LaunchConfig, tmp_path / "run.yaml")
    assert (cfg.model.init["hidden_size"], cfg.model.init["num_layers"]) == (64, 2)
    assert cfg.env.urls == {"email": ["http://c/mcp"]}
    assert cfg.env.backend == "http"
    assert ("env", "urls") in replaced_paths(LaunchConfig) and ("model", "init") not in replaced_paths(LaunchConfig)


def test_an_include_cycle_and_an_unknown_key_are_errors(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("include: b.yaml\n")
    (tmp_path / "b.yaml").write_text("include: a.yaml\n")
    with pytest.raises(ConfigError, match="include cycle"):
        load(LaunchConfig, tmp_path / "a.yaml")
    (tmp_path / "c.yaml").write_text("env:\n  ulrs: {}\n")
    with pytest.raises(ConfigError, match="ulrs"):
        load(LaunchConfig, tmp_path / "c.yaml")


def test_a_from_dict_section_is_built_by_its_own_constructor(tmp_path: Path) -> None:
    """``reward`` is ``rewards.RewardConfig`` itself: its YAML is ``RewardConfig.from_dict``'s input
    (a named variant is no field), it starts empty so a variant is not overridden by the default's
    components, later files and overrides merge into it, and a loaded config writes it back in a
    form that loads to the same config."""
    from prove_jax.rewards import RewardConfig, variant
    from prove_jax.yamlconf import build, to_dict

    (tmp_path / "base.yaml").write_text("reward:\n  variant: recall_only\n")
    (tmp_path / "run.yaml").write_text("include: base.yaml\nreward:\n  beta: 0.0\n")
    cfg = load(LaunchConfig, tmp_path / "run.yaml")
    assert isinstance(cfg.reward, RewardConfig)
    assert cfg.reward == variant("recall_only").replace(beta=0.0)
    assert load(LaunchConfig, None, ["reward.variant=no_eff"]).reward == variant("no_eff")
    # what a run's summary records: the preset's name, or "custom" once a value differs from it
    assert (load(LaunchConfig, None, ["reward.variant=no_eff"]).reward.name, cfg.reward.name) == ("no_eff", "custom")
    assert load(LaunchConfig).reward == RewardConfig()
    assert build(LaunchConfig, to_dict(cfg)).reward == cfg.reward
    with pytest.raises(ConfigError, match=r"reward: .*unknown reward config key\(s\) \['varaint'\]"):
        load(LaunchConfig, None, ["reward.varaint=paper"])
    with pytest.raises(ConfigError, match="reward: unknown reward variant 'papr'"):
        load(LaunchConfig, None, ["reward.variant=papr"])


def test_engine_and_episode_sections_are_the_engine_and_driver_configs() -> None:
    """No mirror classes: the launch's ``engine`` and ``episode`` are ``EngineConfig`` and
    ``EpisodeConfig``, left unresolved (``slots: 0``, ``max_len``/``max_tokens: null``) for
    start-up to fill in; an engine refuses an unresolved config."""
    from prove_jax.engine import EngineConfig
    from prove_jax.env import EpisodeConfig

    cfg = load(LaunchConfig, None, ["engine.slots=0", "engine.share_prefixes=false", "episode.max_user_turns=2"])
    assert type(cfg.engine) is EngineConfig and type(cfg.episode) is EpisodeConfig
    assert (cfg.engine.slots, cfg.engine.max_len, cfg.engine.share_prefixes) == (0, None, False)
    assert (cfg.episode.max_tokens, cfg.episode.max_user_turns) == (None, 2)
    assert not cfg.engine.resolved
    with pytest.raises(ValueError, match="start-up sizes slots=0"):
        _ = cfg.engine.capacity
    with pytest.raises(ConfigError, match="engine: slots must be >= 0"):
        load(LaunchConfig, None, ["engine.slots=-1"])
