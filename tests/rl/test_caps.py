"""Transcript caps (``prove_jax.rl.caps``): fixed caps need no replay, derived caps follow the
longest gold transcript (margin, whole prefill chunks, the limit and the model's context) and are
cached in ``caps.json`` in the layout earlier runs wrote, so later stages and resumes reuse them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prove_jax.rl.caps import CapsPolicy, TranscriptCaps, completed_lengths, derive_caps, transcript_caps
from tests.rl.rl_testlib import crafted_rollout

GOLD = [100, 300, 1000, 420]


def _never() -> list[int]:
    raise AssertionError("not needed: the caps are fixed or cached")


def _no_position() -> int:
    raise AssertionError("not needed: the caps are fixed or cached")


def test_derived_cap_is_longest_times_margin_in_whole_chunks_within_bounds() -> None:
    caps = derive_caps(GOLD, CapsPolicy(), max_position=32768)
    assert caps == TranscriptCaps(max_tokens=1280, max_len=1280, derived=1, gold_longest=1000, gold_median=360,
                                  gold_p90=826, gold_transcripts=4)  # ceil(1000 * 1.25 / 256) * 256
    assert derive_caps(GOLD, CapsPolicy(engine_max_len=4096), 32768).max_len == 4096  # the engine may hold more
    assert derive_caps(GOLD, CapsPolicy(engine_max_len=512), 32768).max_len == 1280  # never less than the cap
    assert derive_caps(GOLD, CapsPolicy(length_margin=1.0, chunk=128), 32768).max_tokens == 1024
    assert derive_caps(GOLD, CapsPolicy(max_tokens_limit=1024), 32768).max_tokens == 1024
    assert derive_caps(GOLD, CapsPolicy(), max_position=1100).max_tokens == 1100


def test_fixed_caps_need_neither_replay_nor_model(tmp_path: Path) -> None:
    path = tmp_path / "caps.json"
    caps = transcript_caps(path, CapsPolicy(max_tokens=2048), gold_lengths=_never, max_position=_no_position)
    assert caps.to_json() == {"max_tokens": 2048, "max_len": 2048, "derived": 0}
    fixed = transcript_caps(path, CapsPolicy(max_tokens=2048, engine_max_len=4096), gold_lengths=_never,
                            max_position=_no_position)
    assert fixed.max_len == 4096 and not path.exists()


def test_derived_caps_are_written_once_then_read_back(tmp_path: Path) -> None:
    path = tmp_path / "caps.json"
    first = transcript_caps(path, CapsPolicy(), gold_lengths=lambda: GOLD, max_position=lambda: 32768)
    assert json.loads(path.read_text()) == {"max_tokens": 1280, "max_len": 1280, "derived": 1, "gold_longest": 1000,
                                            "gold_median": 360, "gold_p90": 826, "gold_transcripts": 4}
    assert list(json.loads(path.read_text())) == ["max_tokens", "max_len", "derived", "gold_longest", "gold_median",
                                                  "gold_p90", "gold_transcripts"]  # the layout runs already have
    again = transcript_caps(path, CapsPolicy(), gold_lengths=_never, max_position=_no_position)
    assert again == first


def test_failed_replays_do_not_count_towards_the_cap() -> None:
    rollouts = [crafted_rollout(length=7), crafted_rollout(length=900, failed=True, finish="env_failed"),
                crafted_rollout(length=3)]
    assert completed_lengths(rollouts) == [7, 3]
    with pytest.raises(ValueError):
        derive_caps(completed_lengths(rollouts[1:2]), CapsPolicy(), 32768)  # nothing completed: no cap to derive
