"""What the main job shows: the launcher's in-domain table says what each column measures, and the
GRPO reward figure plots every term of the total (or says which one it could not), each panel
titled with what it measures. Numbers are the same as before: only labels were added."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prove_jax.launch import EVAL_LEGEND, _fmt, eval_table, print_summary
from prove_jax.metrics import MEANING, curves_figure, plot_curves

TABLE = {n: {"tool_reward": tr, "tool_reward_se": tr / 10, "tool_success": 0.0, "parsed_call_fraction": p, "calls_per_episode": c,
             "final_state_match": 1 / 14, "no_call_reward": nc, "n_tool": 14, "n_no_call": 6}
         for n, tr, p, c, nc in (("initial", 0.1, 0.0, 0.0, 1.0), ("sft", 0.4, 0.5, 1.2, 0.5),
                                 ("grpo", 0.5, 0.6, 1.1, 0.75))}


def test_eval_table_names_the_examples_and_explains_every_column() -> None:
    lines = eval_table(TABLE)
    assert "tool examples (n=14)" in lines[0] and "no-call (n=6)" in lines[0]
    header = lines[1]
    for col, _ in EVAL_LEGEND:
        assert col in header  # every column is explained ...
        assert any(line.strip().startswith(f"{col}:") for line in lines[2:])  # ... in a legend line
    legend = " ".join(lines)
    assert "abstention term" in legend and "read-only" in legend and "within the call budget" in legend
    # the rows are the numbers of summary.json, the standard error beside the tool reward
    assert lines[2] == "initial         0.100  0.010    0.000   0.000    0.000  0.071           1.000"
    assert lines[2:5] == [f"{n:<9}{_fmt(r['tool_reward']):>12}{_fmt(r['tool_reward_se']):>7}"
                          f"{_fmt(r['tool_success']):>9}{_fmt(r['parsed_call_fraction']):>8}{_fmt(r['calls_per_episode']):>9}"
                          f"{_fmt(r['final_state_match']):>7}{_fmt(r['no_call_reward']):>16}" for n, r in TABLE.items()]


def test_eval_table_shows_the_runs_own_reward_beside_the_yardstick_only_when_present() -> None:
    assert "train reward" not in " ".join(eval_table(TABLE))
    ablation = {n: {**r, "tool_train_reward": r["tool_reward"] / 2} for n, r in TABLE.items()}
    lines = eval_table(ablation)
    assert lines[1].index("tool reward") < lines[1].index("train reward") < lines[1].index("success")
    assert lines[2] == "initial         0.100  0.010        0.050    0.000   0.000    0.000  0.071           1.000"
    assert lines[1].index("tool reward") < lines[1].index(" se ") < lines[1].index("train reward")
    legend = {line.split(":")[0].strip(): line for line in lines[5:]}
    assert "paper's reward" in legend["tool reward"] and "own training reward" in legend["train reward"]


def test_print_summary_prints_the_legend(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    class FakeRun:
        out = tmp_path

        def stage_dir(self, name: str) -> Path:
            return tmp_path / name

    summary = {"name": "t", "stages": {"eval": TABLE}, "seconds": {"eval": 1.0}, "total_seconds": 1.0,
               "tool_view": "full"}
    print_summary(FakeRun(), summary)
    out = capsys.readouterr().out
    assert all(f"  {line}" in out for line in eval_table(TABLE))


GRPO_PANEL = {"reward": ["reward", "reward/val", "reward/cov", "reward/eff", "reward/name", "reward/arg"]}


def _rows(with_abstain: bool) -> list[dict[str, Any]]:
    rows = []
    for step in range(3):
        r: dict[str, Any] = {"step": step, "reward": 0.25, **{k: 0.0 for k in GRPO_PANEL["reward"][1:]},
                             "pg_loss": 0.1, "kl": 0.01}
        if with_abstain:
            r["reward/abstain"] = 0.25 / 0.3  # no-call examples' whole total
        rows.append(r)
    return rows


def test_reward_figure_plots_every_term_of_the_total_titled() -> None:
    import matplotlib.pyplot as plt

    fig = curves_figure(_rows(with_abstain=True), GRPO_PANEL, "grpo")
    try:
        axes = [ax for ax in fig.axes if ax.get_visible()]
        plotted = [ax.get_lines()[0].get_label() for ax in axes]
        assert plotted == [*GRPO_PANEL["reward"], "reward/abstain"]  # abstain is drawn though not listed
        for ax, key in zip(axes, plotted, strict=True):
            assert ax.get_title().replace("\n", " ") == MEANING[key]
        assert not any("not logged" in t.get_text() for t in fig.texts)  # nothing of the total is missing
    finally:
        plt.close(fig)


def test_reward_figure_says_what_it_could_not_plot() -> None:
    import matplotlib.pyplot as plt

    fig = curves_figure(_rows(with_abstain=False), GRPO_PANEL, "grpo")
    try:
        assert len([ax for ax in fig.axes if ax.get_visible()]) == 6
        assert any("reward/abstain" in t.get_text() and "not logged" in t.get_text() for t in fig.texts)
    finally:
        plt.close(fig)


def test_other_panels_stay_one_plot_titled_with_their_curves(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    fig = curves_figure(_rows(False), {"loss": ["pg_loss", "kl", "entropy"]}, "grpo")
    try:
        (ax,) = [ax for ax in fig.axes if ax.get_visible()]
        assert [ln.get_label() for ln in ax.get_lines()] == ["pg_loss", "kl"]
        assert ax.get_title().replace("\n", " ") == "loss: policy-gradient loss, KL to the reference"
    finally:
        plt.close(fig)
    assert plot_curves(_rows(False), tmp_path / "r.png", GRPO_PANEL, "grpo") == tmp_path / "r.png"
    assert (tmp_path / "r.png").stat().st_size > 0
    assert plot_curves(_rows(False), tmp_path / "none.png", {"x": ["missing"]}, "t") is None
