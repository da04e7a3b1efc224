"""``python -m prove_jax.eval``'s policies and subcommands: ``--policy oracle`` where a benchmark
has no oracle (BFCL's, 800/800 through this CLI, is tests/eval/test_bfcl.py's oracle test), and
``indomain`` (the held-out eval of a dataset on its own, with a tiny model)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from prove_jax.eval.__main__ import main


@pytest.mark.parametrize("argv", [
    ["teval", "--policy", "oracle", "--data", "d", "--embedder", "e"],
    ["indomain", "--policy", "oracle", "--data", "d"],
    ["all", "--policy", "oracle"],
    ["bfcl", "--policy", "oracle", "--model", "m"],
])
def test_oracle_refusals_say_why(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    msg = str(exc.value.code)
    assert "oracle" in msg and ("bfcl" in msg or "replaces --model" in msg)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A held-out split: one no-call example, then two tool examples on live banking/vehicle worlds."""
    from tests.engine import engine_testlib as lib
    from tests.rl.conftest import write_dataset

    live = asyncio.run(lib.live_data(lib.DOMAINS))
    _, vehicle, balances = lib.gold_examples(live)
    abstain = {**balances.to_dict(), "id": "abstain-joke", "kind": "abstention",
               "turns": [{"user": "Tell me a joke about banks.", "gold": [], "reply": "I can only help with accounts."}],
               "complexity": {"n_calls": 0, "n_steps": 0, "n_turns": 1, "n_servers": 1}}
    return write_dataset(tmp_path_factory.mktemp("indomain") / "data", {"test": [abstain, balances, vehicle]})


def test_indomain_subcommand(dataset: Path, tiny_policy_dir: Path, tmp_path: Path) -> None:
    res: dict[str, Any] = main([
        "indomain", "--model", str(tiny_policy_dir), "--data", str(dataset), "--limit", "2", "--max-new-tokens", "8",
        "--dtype", "float32", "--slots", "2", "--max-len", "8192", "--max-chunk", "256", "--out", str(tmp_path),
        "--name", "tiny"])
    assert res["model"] == "tiny" and res["n_examples"] == 2  # --limit: the first two of the split
    assert res["tool"]["n"] == 1 and res["no_call"]["n"] == 1
    assert set(res["by_kind"]) == {"abstention", "conversation"}
    # a no-call example scores by the abstention rule: reward 1 exactly when no call was made (= success)
    assert res["no_call"]["reward"] == res["no_call"]["success"] in (0.0, 1.0)
    assert res["no_call"]["success"] == (res["no_call"]["calls_per_episode"] == 0)
    assert res["tool"]["final_state_match"] in (0.0, 1.0)
    assert json.loads((tmp_path / "tiny" / "in_domain.json").read_text()) == json.loads(json.dumps(res))
