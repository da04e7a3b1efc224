"""A byo synthesis says what each phase did and how long it took, and stops at its budgets, naming
the knob, with what it made so far (the roster server, official SDK over stdio)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from data.byo.synth import synthesise
from data.config import SynthConfig
from prove_jax.env.byo import ServerSpec

ROSTER = Path(__file__).resolve().parent / "byo_servers" / "roster.py"
CFG = SynthConfig(n_conversation=40, n_clarification=0, n_abstention_irrelevance=0, irrelevance_rate=0.0,
                  splits=(0.5, 0.25, 0.25))


def _lines(err: str) -> list[str]:
    """The closing lines on stderr (what the phase did, then how long it took), bars left out."""
    return [x for x in re.split(r"[\r\n]", err) if re.search(r" in \d+\.\ds$", x)]


def _spec() -> ServerSpec:
    return ServerSpec(name="roster", command=["{python}", str(ROSTER)], warm=0)


def test_the_session_budget_stops_it_naming_its_knob_and_writes_what_it_made(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """(Each phase's closing line is checked in tests/data/test_clip.py, on a full synthesis.)"""
    cfg = dataclasses.replace(CFG, byo_max_sessions=8)
    res = synthesise(tmp_path / "data", [_spec()], seed=0, cfg=cfg, run_dir=tmp_path / "run")
    err = capfd.readouterr().err
    budget = res.stats["budget"]
    assert "data.synth.byo_max_sessions=8" in budget["spent"] and budget["slots_not_run"] > 0
    assert 8 <= res.timings["sessions_started"] <= 8 + 4 + 1, "slots in flight finish; no new one starts"
    assert "session budget spent" in err and "data.synth.byo_max_sessions=8" in err
    assert 0 < res.stats["total"] < 40, "what was made is written"
    assert json.loads((tmp_path / "data" / "stats.json").read_text())["budget"] == budget


def test_the_time_budget_stops_probing_and_names_its_knob(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    cfg = dataclasses.replace(CFG, byo_max_seconds=0.0)
    res = synthesise(tmp_path / "data", [_spec()], seed=0, cfg=cfg, run_dir=tmp_path / "run")
    err = capfd.readouterr().err
    probing = next(x for x in _lines(err) if x.startswith("byo roster: probing: "))
    assert "stopped early: time budget spent" in probing and "data.synth.byo_max_seconds=0" in probing
    assert res.stats["byo"]["roster"]["probe_calls"] == 0 and res.stats["total"] == 0
