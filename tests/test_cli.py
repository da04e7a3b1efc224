"""prove_jax.cli: flags generated from a config dataclass — each default and help text exists once."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from prove_jax.cli import add_dataclass_args, dataclass_from_args, field_help, flag_name


@dataclasses.dataclass(frozen=True)
class Inner:
    """Settings of a nested section.

    * ``level``: how hard it tries. More text that is not the flag's help.
    """

    enabled: bool = False  # run it
    level: int = 3
    inner_tag: str = "x"  # already carries the prefix


@dataclasses.dataclass(frozen=True)
class Outer:
    path: str  # required: no default
    limit: int | None = None  # first N (None: all)
    rate: float = 0.5  # a rate
    names: tuple[str, ...] = ("a", "b")  # some names
    shout: bool = True  # louder
    mode: str = dataclasses.field(default="fast", metadata={"choices": ("fast", "slow"), "help": "how"})
    timeout_s: float | None = dataclasses.field(default=None, metadata={"flag": "timeout", "aliases": ("wait",)})
    tags: tuple[str, ...] = dataclasses.field(default=(), metadata={"repeat": True})
    secret: str = dataclasses.field(default="k", metadata={"cli": False})
    inner: Inner = dataclasses.field(default_factory=Inner)


def _parser(**kw: object) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(exit_on_error=False)
    add_dataclass_args(p, Outer, **kw)  # type: ignore[arg-type]
    return p


def test_defaults_round_trip_and_come_only_from_the_dataclass() -> None:
    args = _parser().parse_args(["--path", "p"])
    assert dataclass_from_args(Outer, args) == Outer(path="p")


def test_types_names_and_nested_sections() -> None:
    args = _parser().parse_args([
        "--path", "p", "--limit", "7", "--rate", "2", "--names", "c", "--no-shout", "--mode", "slow", "--wait", "1.5",
        "--tags", "t1", "--tags", "t2", "--inner", "--inner-level", "9", "--inner-tag", "y"])
    assert dataclass_from_args(Outer, args) == Outer(
        path="p", limit=7, rate=2.0, names=("c",), shout=False, mode="slow", timeout_s=1.5, tags=("t1", "t2"),
        inner=Inner(enabled=True, level=9, inner_tag="y"))
    assert dataclass_from_args(Outer, _parser().parse_args(["--path", "p", "--limit", "none", "--names"])) == Outer(
        path="p", limit=None, names=())


def test_refusals_name_the_flag() -> None:
    p = _parser()
    for bad in (["--limit", "3"], ["--path", "p", "--mode", "medium"], ["--path", "p", "--secret", "s"]):
        with pytest.raises((argparse.ArgumentError, SystemExit)):
            p.parse_args(bad)


def test_flag_rules() -> None:
    assert flag_name("max_len") == "max-len"
    assert flag_name("limit", "bfcl") == "bfcl-limit"
    assert flag_name("enabled", "bfcl") == "bfcl"  # --bfcl / --no-bfcl
    assert flag_name("tau2_python", "tau2") == "tau2-python"  # not --tau2-tau2-python


def test_help_from_metadata_docstring_and_comments() -> None:
    assert field_help(Outer, "mode") == "how"
    assert field_help(Outer, "limit") == "first N (None: all)"
    assert field_help(Inner, "level") == "how hard it tries."  # a docstring bullet's first sentence
    assert field_help(Inner, "enabled") == "run it"
    text = _parser().format_help()
    assert "first N (None: all)" in text and "(default: 0.5)" in text


def test_defaults_instance_skip_and_only() -> None:
    base = Outer(path="q", rate=0.25, inner=Inner(level=1))
    p = argparse.ArgumentParser()
    add_dataclass_args(p, Outer, defaults=base, skip=("names", "inner.inner_tag"))
    args = p.parse_args([])
    assert not hasattr(args, "names") and not hasattr(args, "inner_tag")
    assert dataclass_from_args(Outer, args, defaults=base, skip=("names", "inner.inner_tag")) == base
    q = argparse.ArgumentParser()
    add_dataclass_args(q, Outer, defaults=base, only=("rate",), prefix="o")
    assert dataclass_from_args(Outer, q.parse_args(["--o-rate", "3"]), defaults=base, only=("rate",), prefix="o") \
        == dataclasses.replace(base, rate=3.0)


def test_eval_engine_flags_come_from_engine_config() -> None:
    """Every EngineConfig field (but the derived min_chunk and the run-only weight dtype/layout,
    ``cli: False``) is an eval flag; untouched flags give exactly eval's engine, and a small
    --max-chunk still makes a valid engine."""
    from prove_jax.cli import ENGINE_DERIVED
    from prove_jax.engine.config import EngineConfig
    from prove_jax.eval.__main__ import EVAL_ENGINE, engine_config, parse

    args = parse(["bfcl", "--policy", "oracle"])
    assert engine_config(args) == EVAL_ENGINE
    for f in dataclasses.fields(EngineConfig):
        if f.metadata.get("cli", True):
            assert hasattr(args, f.name) == (f.name not in ENGINE_DERIVED), f.name
    # eval's own --mesh lays out the model it loads; it never reaches the engine's run-only field
    assert engine_config(parse(["bfcl", "--policy", "oracle", "--mesh", "fsdp=2"])).mesh == ""
    small = engine_config(parse(["bfcl", "--model", "m", "--max-chunk", "16", "--slots", "2"]))
    assert (small.min_chunk, small.max_chunk, small.slots, small.max_len) == (16, 16, 2, EVAL_ENGINE.max_len)


def test_tau2_cli_is_its_config() -> None:
    """The tau2 subcommand's defaults are Tau2Config's, every setting but the API key is a flag,
    and the flags scripts use keep their names."""
    from prove_jax.eval import tau2

    args = tau2.parse_args(["--out-dir", "o"])
    assert tau2.config_from_args(args) == tau2.Tau2Config()
    flags = {f.name for f in dataclasses.fields(tau2.Tau2Config)} - {"api_key", "domain_timeout_s"}
    assert flags <= set(vars(args)) and "api_key" not in vars(args)
    cfg = tau2.config_from_args(tau2.parse_args([
        "--out", "o", "--domain-timeout", "9", "--agent-base-url", "none", "--task-ids", "a", "b",
        "--infra-errors", "exclude", "--resume", "--tau2-python", "/py"]))
    assert (cfg.domain_timeout_s, cfg.agent_base_url, cfg.task_ids, cfg.infra_errors, cfg.resume, cfg.tau2_python) \
        == (9.0, None, ("a", "b"), "exclude", True, "/py")
