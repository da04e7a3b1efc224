"""GRPO's rollout dump: what a line holds, the write/read round trip, resume, process 0, the inspect CLI."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pytest

from prove_jax.inspect import main as inspect_main
from prove_jax.records import CallRecord, ParseError, Rollout
from prove_jax.rewards import RewardConfig
from prove_jax.rl.dump import (
    RESULT_CHARS,
    RolloutDump,
    RolloutDumper,
    RolloutScore,
    dump_path,
    dumped_steps,
    read_dump,
    rollout_dumper,
)
from prove_jax.rl.grpo import GRPOConfig, rollouts_to_rows
from tests.rl.rl_testlib import crafted_rollout
from tests.rl.test_grpo_rows import call, example


class IdsAsText:
    """A tokenizer stand-in: ids decode to ``<id>`` words (so the decoded span is visible)."""

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = False) -> str:
        return " ".join(f"<{i}>" for i in ids)


def rollout(ex_id: str, k: int, calls: list[CallRecord], **kw: object) -> Rollout:
    return crafted_rollout(ex_id, calls, length=20 + k, sample_idx=k, **kw)


def step_batch() -> tuple[list, list[Rollout], dict[Rollout, RolloutScore]]:
    """e1: reward spread (trained); e2: all zero (constant, dropped); e3: one live episode (failed)."""
    exs = [example("e1"), example("e2"), example("e3")]
    long_result = CallRecord("put", {"id": "A"}, True, True, 0, 0, False, "x" * (RESULT_CHARS + 50), "tool")
    ros = [rollout("e1", 0, [call("get")], parse_errors=(ParseError(0, 0, "bad json"),)), rollout("e1", 1, []),
           rollout("e1", 2, [long_result]),
           rollout("e1", 3, [call("get")], failed=True, finish="env_failed", failure="banking died"),
           rollout("e2", 0, []), rollout("e2", 1, []),
           rollout("e3", 0, [call("get")]), rollout("e3", 1, [], failed=True, finish="env_failed"),
           ]
    scored: dict[Rollout, RolloutScore] = {}
    rollouts_to_rows(exs, ros, RewardConfig(), GRPOConfig(group_size=4), scored=scored)
    return exs, ros, scored


def test_rollouts_to_rows_reports_each_rollouts_score_and_advantage() -> None:
    exs, ros, scored = step_batch()
    rows, _ = rollouts_to_rows(exs, ros, RewardConfig(), GRPOConfig(group_size=4))
    np.testing.assert_allclose([scored[r].advantage for r in ros[:3]], [row.advantage for row in rows])
    assert all(scored[r].advantage is None for r in ros[4:6])  # the constant group was dropped
    assert ros[3] not in scored and ros[6] not in scored  # failed / too few live: never scored
    assert scored[ros[0]].scores["total"] > scored[ros[1]].scores["total"]
    kept: dict[Rollout, RolloutScore] = {}
    rollouts_to_rows(exs, ros, RewardConfig(), GRPOConfig(group_size=4, drop_constant_groups=False), scored=kept)
    assert [kept[r].advantage for r in ros[4:6]] == [0.0, 0.0]


def test_a_step_is_written_and_read_back_equal(tmp_path: Path) -> None:
    exs, ros, scored = step_batch()
    dumper = RolloutDumper(tmp_path, IdsAsText())
    written = dumper.lines(4, exs, ros, scored, rounds={"e3": 2})
    n = dumper.write(4, exs, ros, scored, rounds={"e3": 2})
    path = dump_path(tmp_path, 4)
    assert path == tmp_path / "rollouts" / "step_4.jsonl" and n == path.stat().st_size == dumper.bytes_written
    back = read_dump(path)
    assert back == written and len(back) == len(ros)
    by = {(x.group_id, x.sample_idx): x for x in back}
    first = by[("e1", 0)]
    assert first.step == 4 and first.prompt == "u" and first.group_status == "trained" and first.round == 0
    assert first.transcript == IdsAsText().decode(range(ros[0].opening, len(ros[0].tokens)))  # after the opening
    assert first.reward == pytest.approx(scored[ros[0]].scores["total"]) and first.advantage > 0
    assert {"val", "cov", "eff", "name", "arg", "abstain"} <= set(first.components) and "total" not in first.components
    assert first.calls[0].name == "get" and first.parse_errors[0].reason == "bad json"
    assert first.n_tokens == 20 and first.n_generated == 5 and first.opening == 10
    cut = by[("e1", 2)].calls[0]
    assert len(cut.result) < RESULT_CHARS + 50 and cut.result.startswith("x" * RESULT_CHARS) and "more chars" in cut.result
    dead = by[("e1", 3)]
    assert dead.failed and dead.failure == "banking died" and dead.reward is None and dead.advantage is None
    assert {by[("e2", k)].group_status for k in (0, 1)} == {"constant"} and by[("e2", 0)].advantage is None
    assert by[("e3", 0)].group_status == "failed" and by[("e3", 0)].round == 2
    assert [json.loads(line)["sample_idx"] for line in path.read_text().splitlines()][:4] == [0, 1, 2, 3]


def test_surplus_groups_are_dumped_after_the_batch_without_advantage(tmp_path: Path) -> None:
    exs, ros, scored = step_batch()
    extra = example("e9")
    extra_ros = [rollout("e9", 0, [call("get")]), rollout("e9", 1, [])]
    scored.update({r: RolloutScore({"total": float(i == 0)}) for i, r in enumerate(extra_ros)})
    lines = RolloutDumper(tmp_path, IdsAsText()).lines(0, exs, ros, scored, surplus=[(extra, extra_ros)])
    assert [x.group_id for x in lines[-2:]] == ["e9", "e9"]
    assert {x.group_status for x in lines[-2:]} == {"surplus"} and all(x.advantage is None for x in lines[-2:])
    assert lines[-2].reward == 1.0


def test_gdpo_lines_keep_the_raw_reward_and_the_normalised_total(tmp_path: Path) -> None:
    exs, ros, _ = step_batch()
    scored: dict[Rollout, RolloutScore] = {}
    rollouts_to_rows(exs, ros, RewardConfig(group_normalize=True), GRPOConfig(group_size=4), scored=scored)
    line = RolloutDumper(tmp_path, IdsAsText()).lines(0, exs[:1], ros[:4], scored)[0]
    assert line.reward == pytest.approx(scored[ros[0]].scores["total_raw"])
    assert line.components["total"] == pytest.approx(scored[ros[0]].scores["total"]) != line.reward


def test_a_resumed_run_deletes_the_dumps_of_the_steps_it_reruns(tmp_path: Path) -> None:
    exs, ros, scored = step_batch()
    dumper = RolloutDumper(tmp_path, IdsAsText())
    for s in range(4):
        dumper.write(s, exs, ros, scored)
    assert dumped_steps(tmp_path) == [0, 1, 2, 3]
    assert dumper.start(2) == [2, 3] and dumped_steps(tmp_path) == [0, 1]
    dumper.write(2, exs[:1], ros[:4], scored)  # the rerun's step replaces the old file
    assert {x.group_id for x in read_dump(dump_path(tmp_path, 2))} == {"e1"}


def test_only_process_0_dumps_and_only_when_asked(tmp_path: Path) -> None:
    exs, ros, scored = step_batch()
    RolloutDumper(tmp_path, IdsAsText()).write(0, exs, ros, scored)
    assert rollout_dumper(True, tmp_path, IdsAsText(), 1, start=0) is None
    assert rollout_dumper(False, tmp_path, IdsAsText(), 0, start=0) is None
    assert dumped_steps(tmp_path) == [0]  # a process that does not dump deletes nothing either
    assert isinstance(rollout_dumper(True, tmp_path, IdsAsText(), 0, start=0), RolloutDumper)
    assert dumped_steps(tmp_path) == []  # the stage's own dumper clears the steps it will write
    assert GRPOConfig().dump_rollouts


def test_a_line_missing_a_field_is_refused_naming_it(tmp_path: Path) -> None:
    exs, ros, scored = step_batch()
    d = RolloutDumper(tmp_path, IdsAsText()).lines(0, exs, ros, scored)[0].to_dict()
    del d["advantage"]
    with pytest.raises(ValueError, match="advantage"):
        RolloutDump.from_dict(d)
    d = RolloutDumper(tmp_path, IdsAsText()).lines(0, exs, ros, scored)[0].to_dict()
    d["calls"][0]["executed_ok"] = "yes"
    with pytest.raises(ValueError, match=r"calls\[0\]\.executed_ok"):
        RolloutDump.from_dict(d)
    d["calls"][0].update(executed_ok=False, error_kind=3)
    with pytest.raises(ValueError, match=r"calls\[0\]\.error_kind"):
        RolloutDump.from_dict(d)
    d["calls"][0]["error_kind"] = "tool"
    d["group_status"] = "odd"
    with pytest.raises(ValueError, match="group_status"):
        RolloutDump.from_dict(d)


def test_inspect_prints_the_groups_calls_rewards_and_advantages(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                                ) -> None:
    exs, ros, scored = step_batch()
    stage = tmp_path / "run" / "grpo"
    RolloutDumper(stage, IdsAsText()).write(3, exs, ros, scored)
    assert inspect_main([str(tmp_path / "run"), "--step", "3"]) == 0
    out = capsys.readouterr().out
    for gid in ("e1", "e2", "e3"):
        assert f"== group {gid}" in out
    assert "user: u" in out and "✓ t0/a0 get({\"id\": \"A\"})" in out and "✗ t0/a0 put(" in out and "[tool]" in out
    r0, a0 = scored[ros[0]].scores["total"], scored[ros[0]].advantage
    assert f"reward={r0:.3f} adv={a0:+.3f}" in out and "adv=- finish" in out  # dropped group: no advantage
    assert "FAILED: banking died" in out and "parse error t0/a0: bad json" in out and "transcript" not in out
    assert inspect_main([str(tmp_path / "run"), "--step", "3", "--group", "e2", "--full"]) == 0
    out = capsys.readouterr().out
    assert "== group e2" in out and "== group e1" not in out and "| <10> <11>" in out
    assert inspect_main([str(tmp_path / "run"), "--step", "3", "--limit", "1"]) == 0
    assert capsys.readouterr().out.count("== group") == 1
    assert inspect_main([str(tmp_path / "run"), "--step", "7"]) == 2
    assert "dumped steps: 3..3" in capsys.readouterr().err
