"""The external benchmarks of one policy, run with one call (``eval all`` and the launcher's eval stage).

:func:`run_benchmarks` takes any :class:`~prove_jax.serve.ChatClient` (the engine in-process, or
a URL) and runs what :class:`BenchmarksConfig` enables: BFCL Multi-Turn (bfcl-eval must be
installed), T-Eval (when its data directory is given) and τ²-bench (when the ``tau2`` CLI is
configured; it needs an HTTP endpoint, so with an in-process engine the caller serves the same
engine on a local port — see :func:`served`). Each benchmark writes into its own subdirectory and
a failing one is recorded (``{"error": ...}``) without losing the others.
"""

from __future__ import annotations

import contextlib
import dataclasses
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from prove_jax.serve.protocol import ChatClient


@dataclasses.dataclass(frozen=True)
class BenchmarksConfig:
    """Which external benchmarks to run and how much of each (``None`` / empty: all / off)."""

    bfcl: bool = False
    bfcl_limit: int | None = None  # entries per category (None: all 200)
    bfcl_categories: tuple[str, ...] = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param",
                                        "multi_turn_long_context")
    bfcl_max_tokens: int = 1024
    teval_data: str | None = None  # directory holding T-Eval's JSON files
    teval_embedder: str | None = None  # local sentence-embedding model dir (all-mpnet-base-v2)
    teval_limit: int | None = None
    tau2_domains: tuple[str, ...] = ()  # e.g. (airline, retail, telecom); empty: off
    tau2_trials: int = 4
    tau2_user_url: str | None = None  # the user simulator's /v1 URL (default: the policy's own)
    tau2_user_model: str | None = None
    tau2_num_tasks: int | None = None
    tau2_executable: str = "tau2"  # the user's tau2 CLI (installed from its repository)
    tau2_python: str | None = None  # or run it as `PY -m tau2.cli` from another environment
    concurrency: int = 32

    @property
    def any(self) -> bool:
        return bool(self.bfcl or self.teval_data or self.tau2_domains)


@contextlib.contextmanager
def served(engine: Any, chat: Any, name: str) -> Iterator[str]:
    """Serve ``engine`` over HTTP on a free local port for the duration (τ² needs a URL). The app's
    lifespan owns the engine, so use this *instead of* ``async with engine``."""
    from prove_jax.serve.app import build_app, serve_in_thread

    with serve_in_thread(build_app(engine, chat, name), timeout_s=600) as url:
        yield url


async def run_benchmarks(client: ChatClient, name: str, out_dir: str | Path, cfg: BenchmarksConfig, *,
                         url: str | None = None, served_name: str | None = None, progress: bool = True
                         ) -> dict[str, Any]:
    """Run the enabled benchmarks for ``client``; returns ``{"bfcl": ..., "teval": ..., "tau2": ...}``
    (only the ones run). ``url``/``served_name``: where τ² reaches the same policy over HTTP."""
    out = Path(out_dir)
    results: dict[str, Any] = {}
    if cfg.bfcl:
        from prove_jax.eval import bfcl

        bcfg = bfcl.BfclConfig(categories=cfg.bfcl_categories, limit=cfg.bfcl_limit,
                               max_tokens=cfg.bfcl_max_tokens, concurrency=cfg.concurrency)
        results["bfcl"] = await _guard(bfcl.evaluate(client, out / "bfcl", name, bcfg, progress=progress))
    if cfg.teval_data:
        from prove_jax.eval.teval import build_embedder, run_teval

        async def teval() -> dict[str, Any]:
            if not cfg.teval_embedder:
                raise ValueError("T-Eval needs teval_embedder: a local all-mpnet-base-v2 directory")
            return await run_teval(client, cfg.teval_data, out_dir=out / "teval",
                                   embedder=build_embedder(cfg.teval_embedder), limit=cfg.teval_limit,
                                   concurrency=cfg.concurrency)

        results["teval"] = await _guard(teval())
    if cfg.tau2_domains:
        import asyncio

        from prove_jax.eval import tau2

        async def run_tau2() -> dict[str, Any]:
            if url is None:
                raise ValueError("τ² needs the policy over HTTP (serve it, or pass --url)")
            tcfg = tau2.Tau2Config(domains=tuple(cfg.tau2_domains), num_trials=cfg.tau2_trials,
                                   agent_model=served_name or name, agent_base_url=url,
                                   user_model=cfg.tau2_user_model or served_name or name,
                                   user_base_url=cfg.tau2_user_url or url, num_tasks=cfg.tau2_num_tasks,
                                   tau2_executable=cfg.tau2_executable, tau2_python=cfg.tau2_python)
            return await asyncio.to_thread(tau2.run_tau2, tcfg, out / "tau2")

        results["tau2"] = await _guard(run_tau2())
    return results


async def _guard(coro: Any) -> dict[str, Any]:
    try:
        return dict(await coro)
    except (Exception, SystemExit) as exc:
        return {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc(limit=6)}
