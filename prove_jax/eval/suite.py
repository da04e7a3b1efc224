"""The external benchmarks of one policy, run with one call (``eval all`` and the launcher's eval stage).

Which benchmarks run and how is a ``BenchmarksConfig`` (:mod:`prove_jax.eval.config`, generated
from the registry). :func:`run_benchmarks` takes any :class:`~prove_jax.serve.ChatClient` (the engine in-process, or
a URL) and runs each enabled benchmark into its own subdirectory; one that needs an HTTP endpoint
(τ²) gets the URL of the same policy, which for an in-process engine the caller serves on a local
port (:func:`served`). A failing benchmark is recorded (``{"error": ...}``) without losing the others.
"""

from __future__ import annotations

import contextlib
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from prove_jax.eval.registry import RunContext, all_benchmarks
from prove_jax.serve.protocol import ChatClient


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
