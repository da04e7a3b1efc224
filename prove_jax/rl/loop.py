"""What every training stage does around its steps: resume, log, checkpoint, stop on SIGTERM.

:class:`StageRunner` is shared by SFT and GRPO so both resume the same way:

* ``start(data_iter)`` restores the newest checkpoint of the stage directory, if any: the train
  state into the trainer (in its shardings), the Grain iterator state, the metrics rows (the
  JSONL is rewritten to exactly those rows); returns the step to continue from;
* ``end_step(...)`` writes the step's metrics row (JSONL + TensorBoard), advances the progress
  bar and saves a checkpoint when one is due, or at once when SIGTERM arrived (then it returns
  True and the stage stops cleanly; rerunning the same command continues from there);
* ``finish(...)`` saves the final checkpoint, waits for pending async saves and draws the PNGs.

A ``step`` here is one iteration of the stage's loop (one batch); the trainer's own counters say
how many optimizer updates were applied and how many were skipped as non-finite.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jax

from prove_jax.checkpoint import CheckpointConfig, Checkpointer
from prove_jax.metrics import MetricsWriter, plot_curves
from prove_jax.rl.step import Trainer


class StageRunner:
    def __init__(
        self,
        stage: str,
        out: str | Path,
        trainer: Trainer,
        total_steps: int,
        *,
        checkpoint: CheckpointConfig | None = None,
        config: Mapping[str, Any] | None = None,
        panels: Mapping[str, Sequence[str]] | None = None,
        progress: bool = True,
    ) -> None:
        self.stage = stage
        self.out = Path(out)
        self.trainer = trainer
        self.total_steps = total_steps
        self.config = dict(config or {})
        self.panels = dict(panels or {})
        self.primary = jax.process_index() == 0
        self.ckpt = Checkpointer(self.out / "checkpoints", checkpoint)
        self.metrics = MetricsWriter(self.out, stage, enabled=self.primary)
        self.progress = progress and self.primary
        self.preempted = False
        self._data_state: Any = None
        self._bar: Any = None
        self._old_handler: Any = None

    # ---- lifecycle ------------------------------------------------------------------------------
    def start(self, data_iter: Any | None = None) -> int:
        """Restore the newest checkpoint (if any) and return the first step to run."""
        step = 0
        if self.ckpt.latest_step() is not None:
            state, meta, step = self.ckpt.restore(self.trainer.state)
            self.trainer.state = state
            self._data_state = meta.get("data")
            if data_iter is not None and meta.get("data") is not None:
                data_iter.set_state(meta["data"])
            self.metrics.restart(meta.get("metrics") or [])
        else:
            self.metrics.restart([])
        self._install_sigterm()
        if self.progress:
            from tqdm import tqdm

            self._bar = tqdm(total=self.total_steps, initial=step, desc=self.stage, unit="step", dynamic_ncols=True)
        return step

    def end_step(self, step: int, row: Mapping[str, Any], *, data_state: Any = None,
                 postfix: Mapping[str, Any] | None = None) -> bool:
        """Log step ``step`` (0-based; ``step + 1`` steps are now done); True means stop now.

        ``data_state`` is the loader state a resume must continue from (taken before any
        prefetch of later batches)."""
        self.metrics.write(step, row)
        done = step + 1
        if self._bar is not None:
            self._bar.update(1)
            if postfix:
                self._bar.set_postfix({k: f"{v:.3g}" if isinstance(v, float) else v for k, v in postfix.items()},
                                      refresh=False)
        self._data_state = data_state
        if self.preempted or self.ckpt.due(done):
            self.save(done, data_state, force=self.preempted)
        return self.preempted

    def save(self, done: int, data_state: Any, *, force: bool = True) -> None:
        meta = {"stage": self.stage, "step": done, "data": data_state,
                "metrics": self.metrics.rows, "config": self.config, "saved_at": time.time()}
        self.ckpt.save(done, self.trainer.state, meta, force=force)
        if self.preempted:
            self.ckpt.wait()

    def finish(self, done: int, *, data_state: Any = None, title: str = "") -> list[Path]:
        """Final checkpoint (``data_state`` defaults to the last step's), plots, cleanup."""
        self.save(done, data_state if data_state is not None else self._data_state, force=True)
        self.ckpt.wait()
        if self._bar is not None:
            self._bar.close()
        self.metrics.close()
        self._restore_sigterm()
        pngs: list[Path] = []
        if self.primary:
            for name, keys in self.panels.items():
                p = plot_curves(self.metrics.rows, self.out / f"{self.stage}_{name}.png", {name: keys},
                                title or self.stage)
                if p is not None:
                    pngs.append(p)
        return pngs

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.ckpt.close()
        self._restore_sigterm()

    # ---- SIGTERM ------------------------------------------------------------------------------
    def _install_sigterm(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return

        def handler(signum: int, frame: Any) -> None:
            self.preempted = True

        self._old_handler = signal.signal(signal.SIGTERM, handler)

    def _restore_sigterm(self) -> None:
        if self._old_handler is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self._old_handler)
            self._old_handler = None
