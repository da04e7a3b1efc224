"""The benchmark registry: each external benchmark is one :class:`Benchmark` entry, by name.

Adding a benchmark used to touch five places (its module, ``BenchmarksConfig``, ``run_benchmarks``,
the CLI flags, the report). Now it is its module plus one :func:`register` call (in
:mod:`prove_jax.eval.benchmarks`) naming

* its settings dataclass — nested in ``BenchmarksConfig`` under the benchmark's name (YAML
  ``eval.benchmarks.<name>``), its flags generated from it (``eval <name> --limit``; ``eval all
  --<name>-limit``) by :mod:`prove_jax.cli`, its ``enabled`` attribute saying whether the suite runs it;
* its runner ``run(settings, ctx) -> result dict`` over any :class:`~prove_jax.serve.ChatClient`;
* its report parts: the headline column (Table 3), a detail section, and how its numbers are put
  on fractions.

The in-domain eval is not an entry: it needs the engine and live MCP servers, not a chat client.
Unknown names fail with the list of choices, as every registry here does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

Result = dict[str, Any]
Rows = Sequence[tuple[str, Mapping[str, Any]]]  # (model name, that model's result of one benchmark)


@dataclasses.dataclass(frozen=True)
class RunContext:
    """Where a runner sends its requests and writes its files (the same for every benchmark)."""

    client: Any  # a ChatClient, or for an oracle a factory giving one per benchmark item
    name: str  # the model's display name (result files, bfcl's model directory)
    out_dir: Path  # this benchmark's own directory
    url: str | None = None  # the same policy over HTTP, for benchmarks that need a URL (τ²)
    served_name: str | None = None  # the model name at ``url``
    progress: bool = True


@dataclasses.dataclass(frozen=True)
class Benchmark:
    """One benchmark: how to configure, run and report it (see the module docstring)."""

    name: str  # results key, YAML section, CLI subcommand and flag prefix
    title: str  # one line: the subcommand's help
    settings: type  # its settings dataclass; must have an ``enabled`` attribute (field or property)
    suite_default: Any  # the settings the suite starts from (the benchmark switched off)
    run: Callable[[Any, RunContext], Awaitable[Result]]
    headline: tuple[str, str, Callable[[Mapping[str, Any]], float | None]]  # (key, column, fraction of a result)
    section: Callable[[Rows], list[str]]  # the report's detail section (markdown lines) for these rows
    normalise: Callable[[Mapping[str, Any]], Result] = dict  # the result with headline numbers as fractions
    brief: Callable[[Mapping[str, Any]], Result] = dict  # what the subcommand prints (one JSON line)
    needs_url: bool | Callable[[Any], bool] = False  # reaches the policy over HTTP only (run after serving the
    # engine); a callable decides from the benchmark's settings (τ²: only its tau2-CLI runner does)
    cli_default: Any = None  # the command line's defaults (eval <name>, eval all; None: suite_default)
    cli_skip: tuple[str, ...] = ("enabled",)  # settings without a flag in the subcommand
    suite_skip: tuple[str, ...] = ()  # settings without a flag in ``eval all`` (the suite sets them)
    required: tuple[str, ...] = ()  # flags the subcommand requires
    prepare: Callable[[Path], object] | None = None  # called with ``--out`` before any model is loaded
    oracle: Callable[[], Any] | None = None  # a client (or per-item factory) that replays the ground truth
    main: Callable[[list[str]], int] | None = None  # a subcommand of its own (τ²: the tau2 CLI recipe)

    def wants_url(self, settings: Any) -> bool:
        """Whether these settings of the benchmark reach the policy over HTTP only."""
        return self.needs_url(settings) if callable(self.needs_url) else self.needs_url

    @property
    def cli_defaults(self) -> Any:
        """The settings the command line starts from (``cli_default``, else ``suite_default``)."""
        return self.cli_default if self.cli_default is not None else self.suite_default


BENCHMARKS: dict[str, Benchmark] = {}


def register(bench: Benchmark) -> Benchmark:
    """Add ``bench``; a name registered twice is an error (it would shadow a config section)."""
    if bench.name in BENCHMARKS:
        raise ValueError(f"benchmark {bench.name!r} is registered twice")
    if not dataclasses.is_dataclass(bench.settings) or not hasattr(bench.suite_default, "enabled"):
        raise TypeError(f"benchmark {bench.name!r}: settings must be a dataclass with an `enabled` attribute")
    BENCHMARKS[bench.name] = bench
    return bench


def get(name: str) -> Benchmark:
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise KeyError(f"unknown benchmark {name!r}; choose from {names()}") from None


def names() -> list[str]:
    """Registered names, in registration order (the report's column order)."""
    return list(BENCHMARKS)


def all_benchmarks() -> list[Benchmark]:
    """Registered benchmarks, in registration order."""
    return list(BENCHMARKS.values())
