"""Command-line flags generated from a config dataclass, so each default and help text exists once.

A config dataclass (``EngineConfig``, ``Tau2Config``, a benchmark's settings) already holds every
default; hand-copied ``add_argument`` calls drifted from it (the engine's defaults lived in four
places, τ²'s settings in three). :func:`add_dataclass_args` turns the fields into flags and
:func:`dataclass_from_args` builds the dataclass back from the parsed namespace::

    add_dataclass_args(parser, EngineConfig, defaults=EngineConfig(slots=16), skip=("min_chunk",))
    cfg = dataclass_from_args(EngineConfig, parser.parse_args(), defaults=EngineConfig(slots=16),
                              skip=("min_chunk",))

Rules (one place, so every CLI reads the same way):

* field ``max_len`` -> ``--max-len``; with ``prefix="bfcl"`` -> ``--bfcl-max-len`` (a field already
  named ``bfcl_x`` gives ``--bfcl-x``, not ``--bfcl-bfcl-x``); a prefixed field named ``enabled``
  is the prefix itself (``--bfcl`` / ``--no-bfcl``). A field holding a dataclass recurses with its
  own name as the prefix, so ``BenchmarksConfig`` gives ``--bfcl-limit``, ``--tau2-domains``, ...
* the default is the value in ``defaults`` (an instance; default: the class's own defaults);
* types: ``bool`` -> ``--x`` / ``--no-x``; ``int``/``float``/``str``; ``X | None`` also takes
  ``none``; ``tuple[X, ...]``/``list[X]`` -> zero or more values;
* help comes from the field's ``metadata["help"]``, else the class docstring's bullet
  ``* ``name``: text``, else the field's trailing ``# comment`` in the class source;
* other ``metadata`` keys: ``flag`` (the name without dashes), ``aliases`` (more names),
  ``choices``, ``repeat`` (a sequence given as ``--x a --x b``), ``cli=False`` (never a flag).

``skip``/``only`` name fields, dotted for nested ones (``"tau2.agent_model"``). A field without a
default in the class and none in ``defaults`` is a required flag; so is one listed in ``required``.

:func:`add_engine_args` / :func:`engine_from_args` are the engine's flags for any entry point that
runs a policy: the entry point names only its overrides of ``EngineConfig``'s defaults.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import inspect
import io
import re
import tokenize
import types
import typing
from collections.abc import Callable, Collection, Mapping
from typing import Any

__all__ = ["add_dataclass_args", "add_engine_args", "dataclass_from_args", "engine_from_args", "field_help",
           "flag_name"]

_NONE = ("none", "null")


def flag_name(name: str, prefix: str = "", field: dataclasses.Field[Any] | None = None) -> str:
    """The flag of field ``name`` under ``prefix``, without the leading dashes."""
    if field is not None and field.metadata.get("flag"):
        base = str(field.metadata["flag"])
    else:
        base = name.replace("_", "-")
    if not prefix:
        return base
    p = prefix.replace("_", "-")
    if name == "enabled":
        return p
    return base if base.startswith(p + "-") else f"{p}-{base}"


def _dest(name: str, prefix: str, field: dataclasses.Field[Any]) -> str:
    return flag_name(name, prefix, field).replace("-", "_")


@functools.cache
def _helps(cls: type) -> Mapping[str, str]:
    """Per-field help of ``cls``: docstring bullets ``* ``name``: text`` and trailing comments."""
    out: dict[str, str] = {}
    try:
        src = inspect.getsource(cls)
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type == tokenize.COMMENT:
                m = re.match(r"\s*(\w+)\s*:", tok.line)
                if m and m.group(1) not in out:
                    out[m.group(1)] = tok.string.lstrip("#").strip()
    except (OSError, TypeError, tokenize.TokenError, IndentationError):
        pass  # a class built at run time has no source: docstring and metadata still count
    doc = inspect.cleandoc(cls.__doc__ or "")
    for m in re.finditer(r"^\*\s+((?:``\w+``(?:\s*/\s*)?)+):\s*(.+?)(?=^\s*$|^\*\s|\Z)", doc, re.M | re.S):
        text = " ".join(m.group(2).split()).replace("``", "")
        first = re.split(r"(?<=\.)\s", text, maxsplit=1)[0]  # a flag's help is the bullet's first sentence
        for name in re.findall(r"``(\w+)``", m.group(1)):
            out[name] = first
    return out


def field_help(cls: type, name: str) -> str | None:
    """The help text of field ``name`` of dataclass ``cls`` (see the module docstring)."""
    f = {f.name: f for f in dataclasses.fields(cls)}[name]
    return f.metadata.get("help") or _helps(cls).get(name)


def _unwrap(tp: Any) -> tuple[Any, bool]:
    """(type without ``None``, whether ``None`` is allowed)."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0], len(args) < len(typing.get_args(tp))
    return tp, False


def _scalar(tp: Any, optional: bool, where: str) -> Callable[[str], Any]:
    if tp not in (int, float, str):
        raise TypeError(f"{where}: no command-line form for type {tp!r} (mark it metadata={{'cli': False}})")

    def convert(text: str) -> Any:
        if optional and text.lower() in _NONE:
            return None
        return tp(text)

    convert.__name__ = tp.__name__  # argparse names the type in its error messages
    return convert


def _walk(cls: type, prefix: str, path: str, only: Collection[str] | None, skip: Collection[str]
          ) -> list[tuple[str, dataclasses.Field[Any], Any, str, str]]:
    """(dotted path, field, type, prefix, dest) of every flag ``cls`` gives, nested ones included."""
    hints = typing.get_type_hints(cls)
    rows = []
    for f in dataclasses.fields(cls):
        dotted = f"{path}{f.name}"
        if not f.init or f.metadata.get("cli", True) is False or dotted in skip:
            continue
        tp = hints[f.name]
        if dataclasses.is_dataclass(tp) and isinstance(tp, type):
            sub = f"{prefix}_{f.name}" if prefix else f.name
            rows += _walk(tp, sub, f"{dotted}.", only, skip)
            continue
        if only is not None and dotted not in only:
            continue
        rows.append((dotted, f, tp, prefix, _dest(f.name, prefix, f)))
    return rows


def _lookup(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def _default(cls: type, defaults: Any, dotted: str, f: dataclasses.Field[Any]) -> Any:
    if defaults is not None:
        return _lookup(defaults, dotted)
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def add_dataclass_args(parser: argparse.ArgumentParser | Any, cls: type, *, defaults: Any = None, prefix: str = "",
                       only: Collection[str] | None = None, skip: Collection[str] = (),
                       required: Collection[str] = ()) -> list[str]:
    """Add one flag per field of dataclass ``cls`` to ``parser`` (or an argument group); returns
    the flags added. See the module docstring for the naming, typing and help rules."""
    flags = []
    for dotted, f, tp, pre, dest in _walk(cls, prefix, "", only, skip):
        owner = _owner(cls, dotted)
        default = _default(cls, defaults, dotted, f)
        kw: dict[str, Any] = {"dest": dest}
        text = field_help(owner, f.name) or ""
        base, optional = _unwrap(tp)
        origin = typing.get_origin(base)
        if base is bool:
            kw.update(action=argparse.BooleanOptionalAction)
        elif origin in (tuple, list):
            item = (typing.get_args(base) or (str,))[0]
            kw["type"] = _scalar(item, False, dotted)
            if f.metadata.get("repeat"):
                kw["action"] = "append"
            else:
                kw["nargs"] = "*"
        else:
            kw.update(type=_scalar(base, optional, dotted))
        if "choices" in f.metadata:
            kw["choices"] = list(f.metadata["choices"])
        if "metavar" in f.metadata:
            kw["metavar"] = f.metadata["metavar"]
        if default is dataclasses.MISSING or dotted in required:
            kw["required"] = True
        else:
            kw["default"] = list(default) if isinstance(default, tuple) else default
            if "default" not in text:
                text = f"{text} (default: {_show(default)})".strip()
        if f.metadata.get("repeat"):
            kw["default"] = None  # argparse appends to a given default; None means "not given"
        names = [flag_name(f.name, pre, f), *(flag_name(a, pre) for a in f.metadata.get("aliases", ()))]
        parser.add_argument(*(f"--{n}" for n in names), help=text.replace("%", "%%") or None, **kw)
        flags.append(f"--{names[0]}")
    return flags


def _show(v: Any) -> str:
    if isinstance(v, tuple | list):
        return " ".join(map(str, v)) or "none"
    return str(v)


def _owner(cls: type, dotted: str) -> type:
    """The dataclass that declares the (possibly nested) field ``dotted``."""
    hints = typing.get_type_hints(cls)
    head, _, rest = dotted.partition(".")
    return _owner(hints[head], rest) if rest else cls


def dataclass_from_args(cls: type, args: argparse.Namespace, *, defaults: Any = None, prefix: str = "",
                        only: Collection[str] | None = None, skip: Collection[str] = ()) -> Any:
    """``cls`` built from the flags :func:`add_dataclass_args` added (same ``prefix``/``only``/
    ``skip``/``defaults``); fields without a flag keep ``defaults``' values (or the class's)."""
    values: dict[str, Any] = {}
    for dotted, f, tp, _, dest in _walk(cls, prefix, "", only, skip):
        v = getattr(args, dest)
        if v is None and f.metadata.get("repeat"):
            v = _default(cls, defaults, dotted, f)
        base, _ = _unwrap(tp)
        if v is not None and typing.get_origin(base) is tuple:
            v = tuple(v)
        values[dotted] = v
    return _build(cls, defaults, "", values)


def _build(cls: type, base: Any, path: str, values: Mapping[str, Any]) -> Any:
    hints = typing.get_type_hints(cls)
    kw: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        dotted = f"{path}{f.name}"
        tp = hints[f.name]
        if dataclasses.is_dataclass(tp) and isinstance(tp, type) and any(k.startswith(dotted + ".") for k in values):
            kw[f.name] = _build(tp, getattr(base, f.name) if base is not None else None, f"{dotted}.", values)
        elif dotted in values:
            kw[f.name] = values[dotted]
    return dataclasses.replace(base, **kw) if base is not None else cls(**kw)


# ---- the engine's flags (eval now; serve and bench_serve can switch to these) ----------------------
ENGINE_DERIVED = ("min_chunk",)  # follows --max-chunk (min(default, max_chunk)), so a small chunk stays valid


def add_engine_args(parser: argparse.ArgumentParser | Any, defaults: Any) -> list[str]:
    """Flags for every ``EngineConfig`` field but ``min_chunk``, defaulting to ``defaults`` (an
    ``EngineConfig``: an entry point's few overrides of the engine's own defaults)."""
    from prove_jax.engine.config import EngineConfig

    return add_dataclass_args(parser, EngineConfig, defaults=defaults, skip=ENGINE_DERIVED)


def engine_from_args(args: argparse.Namespace, defaults: Any) -> Any:
    """The ``EngineConfig`` of :func:`add_engine_args`' flags (same ``defaults``)."""
    from prove_jax.engine.config import EngineConfig

    base = dataclasses.replace(defaults, max_chunk=args.max_chunk, min_chunk=min(defaults.min_chunk, args.max_chunk))
    return dataclass_from_args(EngineConfig, args, defaults=base, skip=ENGINE_DERIVED)
