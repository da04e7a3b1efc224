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
