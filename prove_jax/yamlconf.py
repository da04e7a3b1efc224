"""The strict config parser every concern shares: dataclasses <- YAML <- ``dotted.key=value``.

    cfg = load(LaunchConfig, "configs/runs/tiny_cpu.yaml", ["grpo.steps=3", "env.backend=stdio"])

Unknown keys are errors that name the key (a typo must never fall back to a default); values are
checked against the field's type (``distractor_rate=lots`` fails, ``n_procs=true`` fails, ``3`` is
accepted for a float); a dataclass's own ``__post_init__`` checks run at load time too, and their
errors name the section. YAML files may start from others with ``include: [path, ...]`` (relative
to the including file; later entries and the file itself win). Mappings merge key by key, except
fields declared ``dataclasses.field(..., metadata=REPLACE)``: a mapping that is one value (e.g.
``env.urls``: which servers to call) is replaced whole, so an included file's entries never
leak into a file that sets its own.

Paths: a field declared with ``RELATIVE`` metadata holds a path that, written in a YAML file,
resolves against *that file's* directory (an included file's against its own); a field declared
``BASE_DIR`` is set to the directory of the file that declares its section (a section that resolves
its own paths, e.g. a byo server's argv). Dotted overrides are not in a file: they resolve against
the working directory, as command-line paths do.

A section whose class defines ``from_dict`` (and ``to_dict``) is built by it instead of field by
field: its YAML is that constructor's input, e.g. ``reward: {variant: recall_only, disable:
[eff]}`` for ``rewards.RewardConfig``, whose named presets are not fields. Such a section starts
empty (its own defaults apply), and a loaded config writes it back through ``to_dict``.

Pure: imports only ``yaml``, so ``data/`` and ``rewards/`` configs go through the same parser
without importing the training side.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import os
import re
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml

T = TypeVar("T")

REPLACE = {"merge": "replace"}
"""Field metadata: a later file or override replaces this mapping whole instead of merging into it."""

RELATIVE = {"path": "relative"}
"""Field metadata: a relative path given in a YAML file resolves against the file's directory."""
BASE_DIR = {"path": "base_dir"}
"""Field metadata: set to the directory of the YAML file that declares the section (when unset)."""

Paths = frozenset[tuple[str, ...]]
PathFields = dict[tuple[str, ...], str]
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")  # package:..., hf:..., http://: not file paths


_SCIENTIFIC = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


class ConfigError(ValueError):
    """A config file or override that does not fit the config dataclasses."""


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _built_by_from_dict(tp: Any) -> bool:
    """A section class with its own ``from_dict`` (see the module docstring)."""
    return isinstance(tp, type) and dataclasses.is_dataclass(tp) and callable(getattr(tp, "from_dict", None))


def _coerce(value: Any, tp: Any, where: str) -> Any:
    """Check/convert ``value`` to ``tp`` (dataclasses, lists, dicts, unions, scalars)."""
    origin = typing.get_origin(tp)
    if _built_by_from_dict(tp):
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a mapping for {tp.__name__}, got {value!r}")
        return checked(where, tp.from_dict, value)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a mapping for {tp.__name__}, got {value!r}")
        return build(tp, value, where)
    if origin is list:
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        (item,) = typing.get_args(tp)[:1] or (Any,)
        return [_coerce(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_coerce(v, args[0], f"{where}[{i}]") for i, v in enumerate(value))
        if args and len(args) != len(value):
            raise ConfigError(f"{where}: expected {len(args)} values, got {value!r}")
        return tuple(_coerce(v, a, f"{where}[{i}]") for i, (v, a) in enumerate(zip(value, args or [Any] * len(value),
                                                                                    strict=True)))
    if origin in (dict, collections.abc.Mapping):
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
    if tp is float and isinstance(value, str) and _SCIENTIFIC.fullmatch(value.strip()):
        return float(value)  # YAML 1.1 reads "1e-5" (no dot) as a string
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
    return checked(where or cls.__name__, cls, **kwargs)


def checked[R](where: str, fn: Callable[..., R], *args: Any, **kw: Any) -> R:
    """``fn(*args, **kw)`` with its ValueError/TypeError/KeyError turned into a ConfigError that
    names ``where`` (a dataclass's own checks, a config built from a section)."""
    try:
        return fn(*args, **kw)
    except ConfigError:
        raise
    except (ValueError, TypeError, KeyError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        raise ConfigError(f"{where}: {msg}") from exc


def to_dict(cfg: Any) -> dict[str, Any]:
    """A config as plain data (sections built by ``from_dict`` written by their ``to_dict``)."""
    return {f.name: _plain(getattr(cfg, f.name)) for f in dataclasses.fields(cfg)}


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return value.to_dict() if _built_by_from_dict(type(value)) else to_dict(value)
    if isinstance(value, list | tuple):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _defaults(cfg: Any) -> dict[str, Any]:
    """What a load starts from: ``cfg``'s values, with sections built by ``from_dict`` empty."""
    hints = _hints(type(cfg))
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cfg):
        value = getattr(cfg, f.name)
        if _built_by_from_dict(hints[f.name]):
            out[f.name] = {}
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            out[f.name] = _defaults(value)
        else:
            out[f.name] = _plain(value)
    return out


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


def replaced_paths(cls: type, prefix: tuple[str, ...] = ()) -> Paths:
    """Key paths of ``cls``'s fields (nested dataclasses included) declared with ``REPLACE``."""
    out: set[tuple[str, ...]] = set()
    hints = _hints(cls)
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        if f.metadata.get("merge") == "replace":
            out.add((*prefix, f.name))
        elif dataclasses.is_dataclass(tp) and isinstance(tp, type) and not _built_by_from_dict(tp):
            out |= replaced_paths(tp, (*prefix, f.name))
    return frozenset(out)


def path_fields(cls: type, prefix: tuple[str, ...] = ()) -> PathFields:
    """Key paths of ``cls``'s ``RELATIVE``/``BASE_DIR`` fields (``*`` stands for each item of a list
    of sections, e.g. ``("env", "byo", "*", "base_dir")``)."""
    out: PathFields = {}
    hints = _hints(cls)
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        if f.metadata.get("path"):
            out[(*prefix, f.name)] = f.metadata["path"]
        elif dataclasses.is_dataclass(tp) and isinstance(tp, type) and not _built_by_from_dict(tp):
            out |= path_fields(tp, (*prefix, f.name))
        elif typing.get_origin(tp) is list:
            (item,) = typing.get_args(tp) or (None,)
            if dataclasses.is_dataclass(item) and isinstance(item, type) and not _built_by_from_dict(item):
                out |= path_fields(item, (*prefix, f.name, "*"))
    return out


def anchor_paths(data: dict[str, Any], fields: PathFields, base: Path) -> None:
    """Resolve ``data``'s path fields (see :func:`path_fields`) against ``base``, in place."""
    for key_path, kind in fields.items():
        _anchor(data, key_path, kind, base)


def _anchor(node: Any, key_path: tuple[str, ...], kind: str, base: Path) -> None:
    head, rest = key_path[0], key_path[1:]
    if head == "*":
        for item in node if isinstance(node, list) else []:
            _anchor(item, rest, kind, base)
        return
    if not isinstance(node, dict):
        return
    if rest:
        if head in node:
            _anchor(node[head], rest, kind, base)
        return
    value = node.get(head)
    if kind == "base_dir" and not value:
        node[head] = str(base)
    elif isinstance(value, str) and value and not Path(value).is_absolute() and not _SCHEME.match(value):
        node[head] = os.path.normpath(base / value)


def read_yaml(path: str | Path, _seen: tuple[Path, ...] = (), replace: Paths = frozenset(),
              paths: PathFields | None = None) -> dict[str, Any]:
    """A YAML mapping with its ``include:`` files merged underneath it; ``paths`` (from
    :func:`path_fields`) are resolved against the directory of the file that gives them."""
    path = Path(path).resolve()
    if path in _seen:
        raise ConfigError(f"{path}: include cycle")
    try:
        loaded = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc})") from exc
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path}: top level must be a mapping")
    includes = loaded.pop("include", None) or []
    if isinstance(includes, str):
        includes = [includes]
    if paths:
        anchor_paths(loaded, paths, path.parent)
    data: dict[str, Any] = {}
    for inc in includes:
        merge(data, read_yaml(path.parent / inc, (*_seen, path), replace, paths), replace)
    merge(data, loaded, replace)
    return data


def load[T](cls: type[T], path: str | Path | None = None, overrides: list[str] | None = None) -> T:
    """Defaults ← YAML file (with its includes) ← dotted overrides, validated against ``cls``."""
    data: dict[str, Any] = _defaults(cls())
    replace = replaced_paths(cls)
    if path is not None:
        merge(data, read_yaml(path, replace=replace, paths=path_fields(cls)), replace)
    for override in overrides or []:
        apply_override(data, override)
    return build(cls, data)


def merge(base: dict[str, Any], extra: dict[str, Any], replace: Paths = frozenset(),
          _at: tuple[str, ...] = ()) -> None:
    """Merge ``extra`` into ``base`` in place, recursively for mappings on both sides, except at the
    key paths in ``replace`` (see :func:`replaced_paths`), which take ``extra``'s value whole."""
    for key, value in extra.items():
        path = (*_at, key)
        if isinstance(value, dict) and isinstance(base.get(key), dict) and path not in replace:
            merge(base[key], value, replace, path)
        else:
            base[key] = value
