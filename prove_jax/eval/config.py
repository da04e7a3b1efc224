"""The eval's settings as the launcher composes them: ``EvalConfig`` (the ``eval:`` section) and
``BenchmarksConfig`` (``eval.benchmarks``), generated from the benchmark registry.

Light on purpose: :mod:`prove_jax.config` imports this module, so it reaches only the registry,
the registered entries (whose runners import their runtime lazily) and the settings dataclasses
(:mod:`prove_jax.eval.settings`) — never the engine, the servers or a benchmark's runtime.
``BenchmarksConfig`` holds one field per registered benchmark, named after it and holding that
benchmark's own settings, so the YAML reads ``eval.benchmarks.bfcl.limit`` and adding a benchmark
never edits this file.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from prove_jax.eval import benchmarks as _registered  # noqa: F401 - registers bfcl, tau2, teval
from prove_jax.eval.registry import all_benchmarks


def _enabled(self: Any) -> list[str]:
    """Names of the benchmarks these settings switch on, in registry order."""
    return [b.name for b in all_benchmarks() if getattr(self, b.name).enabled]


def _only(self: Any, *, url: bool) -> Any:
    """These settings with the benchmarks that need (``url=True``) or must not need an HTTP
    endpoint switched off — the in-process pass and the served pass of ``eval all``."""
    off = {b.name: dataclasses.replace(b.suite_default) for b in all_benchmarks()
           if b.wants_url(getattr(self, b.name)) != url}
    return dataclasses.replace(self, **off)


def _make_config() -> type:
    fields = [(b.name, b.settings, dataclasses.field(default_factory=functools.partial(dataclasses.replace,
                                                                                        b.suite_default)))
              for b in all_benchmarks()]
    namespace = {
        "__doc__": "Which external benchmarks to run and how: one section per registered benchmark "
                   f"({', '.join(b.name for b in all_benchmarks())}), each its own settings; all off by default.",
        "enabled": _enabled,
        "any": property(lambda self: bool(_enabled(self))),
        "local": lambda self: _only(self, url=False),
        "over_http": lambda self: _only(self, url=True),
    }
    return dataclasses.make_dataclass("BenchmarksConfig", fields, frozen=True, namespace=namespace,
                                      module=__name__)


BenchmarksConfig: Any = _make_config()


@dataclasses.dataclass(frozen=True)
class EvalConfig:
    """The in-domain eval (launcher ``eval:`` section; ``eval indomain`` / ``eval all`` flags)."""

    split: str = "test"  # held-out split of the dataset
    limit: int | None = None  # at most this many held-out examples (None: the whole split)
    max_new_tokens: int = 512  # per assistant turn (greedy)
    final_state: bool = True  # compare the servers' end state with the gold replay's (final_state_match)
    # external benchmarks run by the launcher's eval stage for every model (prove_jax.eval.suite)
    benchmarks: BenchmarksConfig = dataclasses.field(default_factory=BenchmarksConfig)
