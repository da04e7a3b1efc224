"""Synthesis over the three third-party servers of the byo run configs (their committed fixtures):
every kind, replay-valid on fresh sessions, the quality bars, bounded rejects, one seed one dataset."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
from pathlib import Path
from typing import Any

import pytest

from data.byo.realise import SOFT_FAIL, canonical, realise, study
from data.byo.synth import ByoBuildResult, replay, synthesise
from data.config import SynthConfig
from prove_jax.config import LaunchConfig, load
from prove_jax.env.byo import ByoBackend, ServerSpec
from prove_jax.env.byo.seeding import read_seed_calls
from prove_jax.env.pool import MCPPool
from prove_jax.records import KINDS, Example

ROOT = Path(__file__).resolve().parents[2]
CFG = SynthConfig(n_conversation=4, n_clarification=2, n_abstention_irrelevance=2, irrelevance_rate=0.125,
                  splits=(0.6, 0.2, 0.2))
REJECTS = {"duplicate_jaccard", "no_successful_call", "nothing_to_ask", "replay_error", "replay_mismatch",
           "replay_schema"}


def spec_of(run: str) -> ServerSpec:
    (spec,) = load(LaunchConfig, ROOT / "configs" / "runs" / f"byo_{run}.yaml").env.byo
    return spec


@pytest.fixture(scope="module", params=["memory", "filesystem", "git"])
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
          monkeypatch_module: Any) -> tuple[ServerSpec, ByoBuildResult, Path]:
    tmp = tmp_path_factory.mktemp(request.param)
    spec = spec_of(request.param)
    return spec, synthesise(tmp / "data", [spec], seed=0, cfg=CFG, run_dir=tmp / "run"), tmp


@pytest.fixture(scope="module")
def monkeypatch_module() -> Any:
    import os

    old = os.getcwd()
    os.chdir(ROOT)  # the configs name their fixtures relative to the repository
    yield
    os.chdir(old)


def _examples(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for s in ("train", "validation", "test") for line in (out / f"{s}.jsonl").open()]


def test_every_kind_and_the_build_layout(built: tuple[ServerSpec, ByoBuildResult, Path]) -> None:
    spec, res, tmp = built
    out = tmp / "data"
    exs = _examples(out)
    assert {ex["kind"] for ex in exs} == set(KINDS)
    assert res.stats["kinds"] == {"abstention": 1, "clarification": 2, "conversation": 4, "irrelevance": 1}
    assert all(Example.from_dict(ex).to_dict() == ex for ex in exs)  # the typed record, byte for byte
    assert sorted(p.name for p in (out / "arrayrecord").iterdir())[0].startswith("test-")
    assert (out / "stats.json").exists() and "user's own MCP servers" in (out / "README.md").read_text()
    for ex in exs:
        assert ex["servers"] == [spec.name]
        hidden = set(ex["meta"].get("hidden", []))
        visible = {t["function"]["name"] for t in ex["tools"]}
        assert not hidden & visible
        assert all(c["name"] in visible for t in ex["turns"] for g in t["gold"] for c in g["calls"])
        if ex["kind"] in ("abstention", "irrelevance"):
            assert all(not t["gold"] for t in ex["turns"])
        if ex["kind"] == "abstention":
            assert ex["meta"]["requested"][0]["name"] in hidden
        if ex["kind"] == "clarification":  # the assistant asks before any call that needs the answer
            assert ex["turns"][0]["reply"].rstrip().endswith("?") and len(ex["turns"]) == 2


def test_the_knobs_with_one_server(built: tuple[ServerSpec, ByoBuildResult, Path]) -> None:
    """Enums stripped on exactly the configured count; no distractors (one server: nothing to draw
    from), and the stats and card say so with the achieved rates."""
    _, res, tmp = built
    exs = _examples(tmp / "data")
    stripped = [ex for ex in exs if ex["meta"]["enum_stripped"]]
    assert len(stripped) == round(CFG.enum_strip_rate * len(exs)) > 0
    assert all('"enum"' not in json.dumps(ex["tools"]) for ex in stripped)
    assert CFG.distractor_rate > 0 and all(ex["meta"]["distractors"] == [] for ex in exs)
    assert res.stats["knob_rates"]["distractors"] == 0.0
    assert res.stats["knob_rates"]["enum_stripping"] == round(len(stripped) / len(exs), 4)
    assert "With one server there are no distractors" in (tmp / "data" / "README.md").read_text()


def test_quality_bars_and_bounded_rejects(built: tuple[ServerSpec, ByoBuildResult, Path]) -> None:
    _, res, tmp = built
    q = res.stats["quality"]
    assert q["description_overlap_rate"] <= 0.05 and q["param_echo_rate"] <= 0.10
    rej = res.stats["rejections"]
    assert set(rej) <= REJECTS, rej
    assert sum(v for k, v in rej.items() if k.startswith("replay")) <= 2, rej  # realised calls reproduce
    assert q["rejection_rate"] < 0.7 and res.slots <= 60
    descs = " ".join(t["function"]["description"] for t in _examples(tmp / "data")[0]["tools"]).lower()
    said = " ".join(t["user"] for ex in _examples(tmp / "data") for t in ex["turns"]).lower()
    assert ": /workspace" not in said and "path:" not in said and descs[:60] not in said


def test_every_example_replays_on_a_fresh_pool(built: tuple[ServerSpec, ByoBuildResult, Path]) -> None:
    """Independent of the build's own filter: a new pool (new session directories) gives each gold
    call the recorded result — read back from the first run's replay of the same calls."""
    spec, _, tmp = built

    async def go() -> list[str]:
        reasons = []
        async with MCPPool({spec.name: ByoBackend(spec, tmp / "again")}) as pool:
            for ex in _examples(tmp / "data")[:5]:
                calls = [c for _, c in sorted(((g["step"], c) for t in ex["turns"] for g in t["gold"]
                                               for c in g["calls"]), key=lambda x: x[0])]
                if not calls:
                    continue
                async with pool.episode([spec.name], seed=0) as ep:
                    results = [(await ep.call(c["name"], c["arguments"])).text for c in calls]
                reasons.append(await replay(pool, _Model(spec), ex, results))
                bad = [*results[:-1], results[-1] + " tampered"]
                assert await replay(pool, _Model(spec), ex, bad) == "replay_mismatch"
        return reasons

    reasons = asyncio.run(go())
    assert reasons and set(reasons) == {""}


class _Model:
    """What :func:`replay` reads of a server model."""

    def __init__(self, spec: ServerSpec) -> None:
        self.spec = spec
        self.name = spec.name


def test_one_seed_one_dataset(built: tuple[ServerSpec, ByoBuildResult, Path]) -> None:
    spec, res, tmp = built
    if spec.name != "memory":
        pytest.skip("one server is enough (the suite's budget)")
    again = synthesise(tmp / "again_data", [spec], seed=0, cfg=CFG, run_dir=tmp / "again_run")
    assert again.stats == res.stats
    for split in ("train", "validation", "test"):
        assert (tmp / "data" / f"{split}.jsonl").read_bytes() == (tmp / "again_data" / f"{split}.jsonl").read_bytes()


def test_a_rewritten_state_file_is_not_a_write_and_an_error_in_text_is_not_a_read() -> None:
    before = '"{\\"name\\": \\"A\\", \\"type\\": \\"entity\\"}\\n{\\"name\\": \\"B\\"}"'
    after = '"{\\"name\\":\\"B\\"}\\n{\\"type\\":\\"entity\\",\\"name\\":\\"A\\"}"'
    assert canonical(before) == canonical(after)
    assert canonical(before) != canonical('"{\\"name\\": \\"A\\"}"')
    assert SOFT_FAIL.search("docs/x.md: Error - ENOENT: no such file") and SOFT_FAIL.search("No matches found")
    assert not SOFT_FAIL.search("Weekly sync\nAttendees: Ana")



def test_git_commits_what_git_add_staged_and_lists_branches_by_a_probed_mode(tmp_path: Path,
                                                                           monkeypatch_module: Any) -> None:
    """mcp-server-git: ``git_commit`` fails on the fixture (nothing staged) and its error names
    ``git_add``, which is tried next, then the commit again; ``git_branch``'s ``branch_type`` takes
    'local'/'remote'/'all', stated only in its description, so synthesis probes generic mode words."""
    spec = spec_of("git")

    async def go() -> tuple[dict[tuple[str, str], list[str]], list[list[str]], list[dict[str, Any]]]:
        async with MCPPool({spec.name: ByoBackend(spec, tmp_path / "run")}) as pool:
            model = await study(pool, spec)
            commits = [await realise(pool, model, "git_commit", 2, random.Random(k)) for k in range(2)]
            branch = await realise(pool, model, "git_branch", 1, random.Random(0))
        return model.options, [[s.tool for s in c.steps] for c in commits], [s.binding.args for s in branch.steps]

    options, chains, branch_args = asyncio.run(go())
    assert set(options[("git_branch", "branch_type")]) == {"all", "local"}  # 'remote' is not a generic word
    assert ["git_add", "git_commit"] in chains, chains
    assert branch_args and branch_args[0]["branch_type"] in ("all", "local") and branch_args[0]["repo_path"] == "/workspace"


def test_an_empty_fixture_is_seeded_once_through_the_servers_write_tools(tmp_path: Path, monkeypatch_module: Any
                                                                        ) -> None:
    """The memory server with no seed: synthesis creates entities through its own write tools, the
    dataset carries those calls, and a fresh pool built from the run config plus the dataset's calls
    (as the launcher's later stages build theirs) replays every example; without them it cannot."""
    cfg = load(LaunchConfig, ROOT / "configs" / "runs" / "byo_memory.yaml")
    spec = dataclasses.replace(cfg.env.byo[0], seed="")
    res = synthesise(tmp_path / "data", [spec], seed=0, cfg=CFG, run_dir=tmp_path / "run")
    seeds = read_seed_calls(tmp_path / "data")[spec.name]
    assert seeds and res.stats["byo"][spec.name]["seed_calls"] == len(seeds)
    assert {c.tool for c in seeds} <= {"create_entities", "create_relations", "add_observations"}
    names = {e["name"] for c in seeds if c.tool == "create_entities" for e in c.args["entities"]}
    exs = _examples(tmp_path / "data")
    assert {ex["kind"] for ex in exs} == set(KINDS)
    assert not [k for k in res.stats["rejections"] if k.startswith("replay")], res.stats["rejections"]
    said = " ".join(t["user"] + t["reply"] for ex in exs for t in ex["turns"])
    assert any(n in said for n in names), (names, said[:300])  # examples are about the seeded state
    env = dataclasses.replace(cfg.env, byo=[spec], byo_dir=str(tmp_path / "again"))

    async def go(seeded: bool) -> list[tuple[bool, list[str]]]:
        """Per example with gold calls: whether every call succeeded, and the results."""
        out = []
        async with MCPPool.from_config(env, seed_calls={spec.name: seeds} if seeded else None) as pool:
            for ex in exs:
                calls = [c for _, c in sorted(((g["step"], c) for t in ex["turns"] for g in t["gold"]
                                               for c in g["calls"]), key=lambda x: x[0])]
                if calls:
                    async with pool.episode([spec.name], seed=0) as ep:
                        res = [await ep.call(c["name"], c["arguments"]) for c in calls]
                    out.append((not any(r.is_error for r in res), [r.text for r in res]))
        return out

    with_seed, without = asyncio.run(go(True)), asyncio.run(go(False))
    assert with_seed and all(ok for ok, _ in with_seed)
    assert without != with_seed  # the seeded state is what the examples are about
