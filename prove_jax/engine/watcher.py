"""The engine's watcher thread: it waits for dispatched programs in order, brings their outputs to
the host and hands them to the event loop, and measures the device's busy and idle time on the
way (``scheduler.py`` dispatches; this reads back)."""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from typing import Any

import jax
import numpy as np

from prove_jax.engine.sampler import StepOut


class Watcher:
    """Background thread: waits for dispatched programs in FIFO order, transfers their outputs to
    numpy and resolves an asyncio future; accumulates device busy/idle time on the way."""

    def __init__(self, loop: asyncio.AbstractEventLoop, stats: Any) -> None:  # EngineStats: busy/idle seconds
        self.loop = loop
        self.stats = stats
        self.q: queue.SimpleQueue[tuple[Any, float, asyncio.Future[Any]] | None] = queue.SimpleQueue()
        self.last_done: float | None = None
        self.thread = threading.Thread(target=self._run, name="engine-watcher", daemon=True)
        self.thread.start()

    def submit(self, out: jax.Array, t_dispatch: float) -> asyncio.Future[Any]:
        fut: asyncio.Future[Any] = self.loop.create_future()
        self.q.put((out, t_dispatch, fut))
        return fut

    def close(self) -> None:
        self.q.put(None)
        self.thread.join(timeout=30)

    def _run(self) -> None:
        while (item := self.q.get()) is not None:
            out, t_dispatch, fut = item
            try:
                host = StepOut.unpack(np.asarray(out))
                err: BaseException | None = None
            except BaseException as exc:  # surfaced to the scheduler, never lost in the thread
                host, err = None, exc
            done = time.perf_counter()
            start = t_dispatch if self.last_done is None else max(t_dispatch, self.last_done)
            if self.last_done is not None:
                self.stats.device_idle_s += max(0.0, t_dispatch - self.last_done)
            self.stats.device_busy_s += max(0.0, done - start)
            self.last_done = done
            try:
                self.loop.call_soon_threadsafe(_resolve, fut, host, err)
            except RuntimeError:  # the event loop is gone (engine torn down mid-run)
                return


def _resolve(fut: asyncio.Future[Any], value: Any, err: BaseException | None) -> None:
    if fut.done():
        return
    if err is not None:
        fut.set_exception(err)
    else:
        fut.set_result(value)
