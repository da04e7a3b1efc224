"""Run metrics: one JSONL row per step, TensorBoard scalars, PNG curves at the end of a stage.

``MetricsWriter(out_dir, stage)`` appends ``{"step": k, ...}`` rows to ``<out>/metrics.jsonl``
and the same scalars to TensorBoard event files under ``<out>/tb`` (tensorboardX: no TensorFlow).
:meth:`MetricsWriter.restart` rewrites the JSONL from a checkpoint's saved rows, so after a
resume the file holds exactly the rows of an uninterrupted run. :func:`plot_curves` draws the
PNGs (reward and its components, losses, time split) from the rows, each panel titled with what
it measures (:data:`MEANING`); a total is drawn next to every part of it the rows hold.
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


#: What each logged metric measures: plots title their panels with it, so a reader never has to
#: guess what a curve is (exact reward rules: prove_jax/rewards/components.py).
MEANING: dict[str, str] = {
    "reward": "total reward: weighted components on tool examples, the abstention term alone on no-call ones",
    "reward/val": "val: calls valid for the schema and executed (0-1)",
    "reward/cov": "cov: gold steps covered in dependency order (0-1)",
    "reward/eff": "eff: penalty for calls beyond the budget (<= 0)",
    "reward/name": "name: calls naming a gold tool (0-1)",
    "reward/arg": "arg: gold argument values matched (0-1)",
    "reward/abstain": "abstain: no call on a no-call example (0/1, that example's whole total)",
    "reward/state": "state: servers' end state agrees with the gold replay's (0-1)",
    "loss": "the loss optimised",
    "pg_loss": "policy-gradient loss",
    "kl": "KL to the reference",
    "clip_frac": "clipped-token fraction",
    "entropy": "entropy of sampled tokens",
    "calls_per_episode": "calls per episode",
    "tool_error_rate": "failed-call fraction",
    "parse_errors_per_episode": "unparsable calls per episode",
    "speed/tokens_per_s": "training tokens per second",
}
#: Terms that enter a total but that a run may not log: the figure then says the total holds more
#: than its plotted parts (a GRPO run that does not log ``reward/abstain``).
UNPLOTTED_PARTS: dict[str, tuple[str, ...]] = {"reward": ("reward/abstain",)}


def wrap_title(text: str, width: int = 48) -> str:
    """A panel title in lines of ``width``: the titles say what a number measures, so they are long."""
    import textwrap

    return "\n".join(textwrap.wrap(text, width)) or text


def _subplots(rows: Sequence[Mapping[str, Any]], panels: Mapping[str, Sequence[str]]
              ) -> list[tuple[str, list[str]]]:
    """(title, keys) per subplot. A panel holding a total ``K`` and parts ``K/x`` is drawn one
    subplot per term (they differ in scale and a reader must see each), with every ``K/x`` the
    rows hold (a part the panel forgot to list still enters the total); other panels stay one
    subplot titled with what each of its curves measures."""
    out: list[tuple[str, list[str]]] = []
    present = {k for r in rows for k in r}
    for name, ks in panels.items():
        live = [k for k in ks if k in present]
        if not live:
            continue
        totals = [k for k in live if any(p.startswith(k + "/") for p in present)]
        if totals:
            for total in totals:
                extra = sorted(p for p in present if p.startswith(total + "/") and p not in live)
                for k in [k for k in live if k == total or k.startswith(total + "/")] + extra:
                    out.append((MEANING.get(k, k), [k]))
            rest = [k for k in live if not any(k == t or k.startswith(t + "/") for t in totals)]
            if rest:
                out.append((f"{name}: " + ", ".join(MEANING.get(k, k) for k in rest), rest))
        else:
            out.append((f"{name}: " + ", ".join(MEANING.get(k, k) for k in live) if any(k in MEANING for k in live)
                        else name, live))
    return out


def curves_figure(rows: Sequence[Mapping[str, Any]], panels: Mapping[str, Sequence[str]], title: str) -> Any:
    """The matplotlib figure :func:`plot_curves` saves (None if no key has data)."""
    plots = _subplots(rows, panels)
    if not rows or not plots:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ncols = min(4, len(plots))
    nrows = -(-len(plots) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.2 * nrows), squeeze=False)
    for ax, (name, ks) in zip(axes.flat, plots, strict=False):
        for k in ks:
            pts = [(r["step"], r[k]) for r in rows if isinstance(r.get(k), int | float)]
            if pts:
                ax.plot(*zip(*pts, strict=True), label=k, lw=1.3)
        ax.set_title(wrap_title(name), fontsize=8)
        ax.set_xlabel("step", fontsize=8)
        ax.legend(fontsize=7)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(plots):]:
        ax.set_visible(False)
    present = {k for r in rows for k in r}
    missing = [p for total, parts in UNPLOTTED_PARTS.items() if total in present for p in parts if p not in present]
    if missing:
        fig.text(0.5, 0.005, f"not logged by this run, so not plotted, but part of the total: {', '.join(missing)}",
                 ha="center", va="bottom", fontsize=8, color="firebrick")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.04 if missing else 0, 1, 1))
    return fig


def plot_curves(rows: Sequence[Mapping[str, Any]], path: str | Path, panels: Mapping[str, Sequence[str]],
                title: str) -> Path | None:
    """The panels' curves against ``step`` as one PNG (see :func:`curves_figure`); None if no data."""
    fig = curves_figure(rows, panels, title)
    if fig is None:
        return None
    import matplotlib.pyplot as plt

    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
