"""Configs: small dataclasses per concern, loaded from YAML, overridden with ``dotted.key=value``.

    cfg = load(LaunchConfig, "configs/runs/tiny_cpu.yaml", ["env.backend=stdio", "env.n_procs=2"])

Each concern owns its own dataclass (``EnvConfig`` here; models, rollout, GRPO… add theirs), and a run
config composes them. Unknown keys are errors (a typo must not silently fall back to a default), and
override values are parsed as YAML scalars then checked against the field's type.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from pathlib import Path
from typing import Any, TypeVar

import yaml

T = TypeVar("T")


class ConfigError(ValueError):
    """A config file or override that does not fit the config dataclasses."""


@dataclasses.dataclass
class EnvConfig:
    """Where tool calls go: which servers, over which transport, with what limits."""

    domains: list[str] = dataclasses.field(
        default_factory=lambda: ["banking", "calendar", "email", "filesystem", "shopping", "vehicle"]
    )
    backend: str = "inprocess"  # inprocess | inprocess-mcp | stdio | http
    n_procs: int = 1  # stdio: server processes per domain
    urls: dict[str, list[str]] = dataclasses.field(default_factory=dict)  # http: domain -> URLs
    call_timeout_s: float = 10.0
    max_concurrent_episodes: int = 256


@dataclasses.dataclass
class DemoConfig:
    """The server/pool demo that ``launch`` runs until the trainer stages exist."""

    episodes: int = 60
    calls_per_episode: int = 8
    concurrency: int = 12


@dataclasses.dataclass
class LaunchConfig:
    """A run: a name, an output directory, a seed, the stages to run and each concern's config."""

    name: str = "tiny_cpu"
    out_dir: str = "runs/tiny_cpu"
    seed: int = 0
    stages: list[str] = dataclasses.field(default_factory=lambda: ["demo"])
    env: EnvConfig = dataclasses.field(default_factory=EnvConfig)
    demo: DemoConfig = dataclasses.field(default_factory=DemoConfig)


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _coerce(value: Any, tp: Any, where: str) -> Any:
    """Check/convert ``value`` to ``tp`` (dataclasses, lists, dicts, unions, scalars)."""
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a mapping for {tp.__name__}, got {value!r}")
        return build(tp, value, where)
    if origin in (list, tuple):
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        (item,) = typing.get_args(tp)[:1] or (Any,)
        return [_coerce(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a mapping, got {value!r}")
        _, vt = typing.get_args(tp) or (Any, Any)
        return {str(k): _coerce(v, vt, f"{where}.{k}") for k, v in value.items()}
    if origin in (typing.Union, types.UnionType):
        for option in typing.get_args(tp):
            if option is type(None) and value is None:
                return None
            try:
                return _coerce(value, option, where)
            except ConfigError:
                continue
        raise ConfigError(f"{where}: {value!r} does not fit {tp}")
    if tp is Any:
        return value
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if tp in (int, float) and isinstance(value, bool):
        raise ConfigError(f"{where}: expected {tp.__name__}, got a boolean")
    if isinstance(tp, type) and not isinstance(value, tp):
        raise ConfigError(f"{where}: expected {tp.__name__}, got {value!r}")
    return value


def build[T](cls: type[T], data: dict[str, Any], where: str = "") -> T:
    """Instantiate ``cls`` from a mapping, recursively; unknown keys are errors."""
    hints = _hints(cls)
    unknown = set(data) - set(hints)
    if unknown:
        raise ConfigError(f"{where or cls.__name__}: unknown key(s) {sorted(unknown)}; known: {sorted(hints)}")
    kwargs = {k: _coerce(v, hints[k], f"{where}.{k}" if where else k) for k, v in data.items()}
    return cls(**kwargs)


def to_dict(cfg: Any) -> dict[str, Any]:
    return dataclasses.asdict(cfg)


def apply_override(data: dict[str, Any], override: str) -> None:
    """``a.b.c=value`` into a nested dict (value parsed as YAML: ``3``, ``true``, ``[a, b]``)."""
    if "=" not in override:
        raise ConfigError(f"override {override!r} is not of the form key=value")
    key, raw = override.split("=", 1)
    parts = key.strip().split(".")
    node = data
    for part in parts[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ConfigError(f"override {override!r}: {part} is not a section")
    node[parts[-1]] = yaml.safe_load(raw) if raw.strip() else ""


def load[T](cls: type[T], path: str | Path | None = None, overrides: list[str] | None = None) -> T:
    """Defaults ← YAML file ← dotted overrides, validated against ``cls``."""
    data: dict[str, Any] = to_dict(cls())
    if path is not None:
        loaded = yaml.safe_load(Path(path).read_text()) or {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path}: top level must be a mapping")
        _merge(data, loaded)
    for override in overrides or []:
        apply_override(data, override)
    return build(cls, data)


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> None:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict) and key not in ("urls",):
            _merge(base[key], value)
        else:
            base[key] = value
