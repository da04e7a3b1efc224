"""Run metrics: one JSONL row per step, TensorBoard scalars, PNG curves at the end of a stage.

``MetricsWriter(out_dir, stage)`` appends ``{"step": k, ...}`` rows to ``<out>/metrics.jsonl``
and the same scalars to TensorBoard event files under ``<out>/tb`` (tensorboardX: no TensorFlow).
:meth:`MetricsWriter.restart` rewrites the JSONL from a checkpoint's saved rows, so after a
resume the file holds exactly the rows of an uninterrupted run. :func:`plot_curves` draws the
PNGs (reward and its components, losses, time split) from the rows.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


class MetricsWriter:
    def __init__(self, out_dir: str | Path, stage: str, *, tensorboard: bool = True, enabled: bool = True) -> None:
        self.out = Path(out_dir)
        self.stage = stage
        self.enabled = enabled
        self.rows: list[dict[str, Any]] = []
        self.path = self.out / "metrics.jsonl"
        self._tb: Any = None
        if enabled:
            self.out.mkdir(parents=True, exist_ok=True)
            if tensorboard:
                from tensorboardX import SummaryWriter

                self._tb = SummaryWriter(str(self.out / "tb"), flush_secs=10)

    def restart(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Start over from ``rows`` (a checkpoint's): rewrite the JSONL to exactly them."""
        self.rows = [dict(r) for r in rows]
        if self.enabled:
            self.path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in self.rows))

    def write(self, step: int, values: Mapping[str, Any]) -> dict[str, Any]:
        row = {"step": int(step), **{k: _plain(v) for k, v in values.items()}}
        self.rows.append(row)
        if self.enabled:
            with self.path.open("a") as f:
                f.write(json.dumps(row, sort_keys=True) + "\n")
            if self._tb is not None:
                for k, v in row.items():
                    if k != "step" and isinstance(v, int | float) and math.isfinite(v):
                        self._tb.add_scalar(f"{self.stage}/{k}", v, step)
        return row

    def close(self) -> None:
        if self._tb is not None:
            self._tb.close()
            self._tb = None


def _plain(v: Any) -> Any:
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v


def plot_curves(rows: Sequence[Mapping[str, Any]], path: str | Path, panels: Mapping[str, Sequence[str]],
                title: str) -> Path | None:
    """One subplot per panel, each with the listed keys against ``step``; None if no data."""
    keys = [k for ks in panels.values() for k in ks]
    if not rows or not any(k in r for r in rows for k in keys):
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    live = {name: ks for name, ks in panels.items() if any(k in r for r in rows for k in ks)}
    fig, axes = plt.subplots(1, len(live), figsize=(4.2 * len(live), 3.2), squeeze=False)
    for ax, (name, ks) in zip(axes[0], live.items(), strict=True):
        for k in ks:
            pts = [(r["step"], r[k]) for r in rows if isinstance(r.get(k), int | float)]
            if pts:
                ax.plot(*zip(*pts, strict=True), label=k, lw=1.3)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("step", fontsize=8)
        ax.legend(fontsize=7)
        ax.tick_params(labelsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
