"""The Grain prompt loader: a fresh order every epoch, disjoint process shards, exact resume."""

from __future__ import annotations

from pathlib import Path

import pytest

from prove_jax.env.view import ToolView
from prove_jax.loaders import load_split, prompt_batches
from prove_jax.records import Example
from tests.rl.conftest import write_dataset


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ex = [{"id": f"x{i}", "kind": "abstention" if i % 5 == 0 else "conversation", "servers": ["banking"],
           "seed": i, "system": "s", "tools": [{"type": "function", "function": {"name": f"t{j}"}} for j in range(4)],
           "turns": [{"user": "u", "gold": [] if i % 5 == 0 else [{"step": 0, "calls": [{"name": "t1", "arguments": {}}],
                                                                   "depends_on": []}],
                      "reply": "r"}],
           "complexity": {"n_calls": int(i % 5 != 0), "n_steps": int(i % 5 != 0), "n_turns": 1, "n_servers": 1},
           "meta": {"slot": i}} for i in range(20)]
    return write_dataset(tmp_path_factory.mktemp("loader"), {"train": ex, "test": ex[:3]})


def ids(batch: list[Example]) -> list[str]:
    return [e.id for e in batch]


def test_every_epoch_is_a_new_permutation(data: Path) -> None:
    it = prompt_batches(data, "train", 5, seed=3, process_index=0, process_count=1)
    epochs = [[i for _ in range(4) for i in ids(next(it))] for _ in range(2)]
    assert sorted(epochs[0]) == sorted(epochs[1]) == sorted(f"x{i}" for i in range(20))
    assert epochs[0] != epochs[1]
    it2 = prompt_batches(data, "train", 5, seed=4, process_index=0, process_count=1)
    assert ids(next(it2)) != epochs[0][:5]


def test_processes_get_disjoint_shards_of_one_order(data: Path) -> None:
    shards = [prompt_batches(data, "train", 2, seed=0, process_index=p, process_count=2) for p in range(2)]
    got = [[i for _ in range(5) for i in ids(next(s))] for s in shards]
    assert not set(got[0]) & set(got[1]) and len(set(got[0]) | set(got[1])) == 20


def test_state_resumes_exactly_and_view_and_kinds_apply(data: Path) -> None:
    view = ToolView(mode="compact", others=1)
    it = prompt_batches(data, "train", 3, seed=1, view=view, kinds=("conversation",), process_index=0, process_count=1)
    next(it)
    state = it.get_state()
    want = [ids(next(it)) for _ in range(3)]
    again = prompt_batches(data, "train", 3, seed=1, view=view, kinds=("conversation",), process_index=0,
                           process_count=1)
    again.set_state(state)
    assert [ids(next(again)) for _ in range(3)] == want
    batch = next(again)
    assert all(type(e) is Example and e.kind == "conversation" and len(e.tools) == 2 for e in batch)
    assert len(load_split(data, "test")) == 3 and len(load_split(data, "test", limit=2)) == 2
    first = load_split(data, "test")[0]  # typed at the boundary, every field kept (meta in extras)
    assert first.id == "x0" and first.extras == {"meta": {"slot": 0}} and first.to_dict()["meta"] == {"slot": 0}


def test_a_malformed_record_fails_at_the_loader_naming_it(tmp_path: Path) -> None:
    bad = {"id": "broken-1", "kind": "conversation", "servers": ["banking"], "seed": 0, "tools": [], "system": "",
           "turns": [{"user": "u", "gold": [], "reply": "r"}]}  # no complexity
    data = write_dataset(tmp_path, {"train": [bad]})
    with pytest.raises(ValueError, match=r"Example 'broken-1': missing required field 'complexity'"):
        load_split(data, "train")
