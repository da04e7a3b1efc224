"""The external benchmarks of one policy, run with one call (``eval all`` and the launcher's eval stage).

:class:`BenchmarksConfig` is generated from the registry (:mod:`prove_jax.eval.benchmarks`): one
field per benchmark, named after it and holding that benchmark's own settings dataclass, so the
YAML reads ``eval.benchmarks.bfcl.limit`` and adding a benchmark never edits this file.
:func:`run_benchmarks` takes any :class:`~prove_jax.serve.ChatClient` (the engine in-process, or
a URL) and runs each enabled benchmark into its own subdirectory; one that needs an HTTP endpoint
(τ²) gets the URL of the same policy, which for an in-process engine the caller serves on a local
port (:func:`served`). A failing benchmark is recorded (``{"error": ...}``) without losing the others.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from prove_jax.eval import benchmarks as _registered  # noqa: F401 - registers bfcl, tau2, teval
from prove_jax.eval.registry import RunContext, all_benchmarks
from prove_jax.serve.protocol import ChatClient


def _enabled(self: Any) -> list[str]:
    """Names of the benchmarks these settings switch on, in registry order."""
    return [b.name for b in all_benchmarks() if getattr(self, b.name).enabled]


def _only(self: Any, *, url: bool) -> Any:
    """These settings with the benchmarks that need (``url=True``) or must not need an HTTP
    endpoint switched off — the in-process pass and the served pass of ``eval all``."""
    off = {b.name: dataclasses.replace(b.suite_default) for b in all_benchmarks() if b.needs_url != url}
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


@contextlib.contextmanager
def served(engine: Any, chat: Any, name: str) -> Iterator[str]:
    """Serve ``engine`` over HTTP on a free local port for the duration (τ² needs a URL). The app's
    lifespan owns the engine, so use this *instead of* ``async with engine``."""
    from prove_jax.serve.app import build_app, serve_in_thread

    with serve_in_thread(build_app(engine, chat, name), timeout_s=600) as url:
        yield url


async def run_benchmarks(client: ChatClient, name: str, out_dir: str | Path, cfg: Any, *,
                         url: str | None = None, served_name: str | None = None, progress: bool = True
                         ) -> dict[str, Any]:
    """Run the benchmarks ``cfg`` (a :class:`BenchmarksConfig`) enables for ``client``; returns
    ``{name: result}`` for the ones run. ``url``/``served_name``: where a benchmark that needs
    HTTP (τ²) reaches the same policy."""
    out = Path(out_dir)
    results: dict[str, Any] = {}
    for bench in all_benchmarks():
        settings = getattr(cfg, bench.name)
        if settings.enabled:
            ctx = RunContext(client=client, name=name, out_dir=out / bench.name, url=url, served_name=served_name,
                             progress=progress)
            results[bench.name] = await _guard(bench.run(settings, ctx))
    return results


async def _guard(coro: Any) -> dict[str, Any]:
    try:
        return dict(await coro)
    except (Exception, SystemExit) as exc:
        return {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc(limit=6)}
