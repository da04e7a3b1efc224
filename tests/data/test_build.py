"""The tiny build end to end: replayable gold, grounded user turns, exact mix and knob rates,
Grain-readable shards, byte-identical output for a seed."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import servers
from data.build import build
from data.catalog import get_catalog
from data.config import preset
from data.validate import ID_TOKEN, Validator
from data.writer import SPLITS, shard_paths

from .conftest import load_examples


def _digest(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*")) if p.is_file()}


def test_exact_mix_unique_ids_and_record_shape(examples: list[dict[str, Any]]) -> None:
    cfg = preset("tiny")
    assert Counter(ex["kind"] for ex in examples) == Counter(cfg.targets())
    ids = [ex["id"] for ex in examples]
    assert len(set(ids)) == len(ids) == cfg.total
    catalog = get_catalog()
    assert set(catalog.domains) == set(servers.DOMAINS)
    assert {s for ex in examples for s in ex["servers"]} == set(servers.DOMAINS)  # the tiny build spans all 20
    for ex in examples:
        assert ex["servers"] and all(s in catalog.domains for s in ex["servers"])
        assert isinstance(ex["seed"], int)
        assert ex["system"] and "2026-06-01" in ex["system"] and "User:" in ex["system"]
        names = [t["function"]["name"] for t in ex["tools"]]
        assert len(names) == len(set(names))
        steps = [g for t in ex["turns"] for g in t["gold"]]
        assert [g["step"] for g in steps] == list(range(len(steps)))  # global, increasing across turns
        for g in steps:
            assert all(d < g["step"] for d in g["depends_on"])
            assert all(c["name"] in names for c in g["calls"])
        cx = ex["complexity"]
        assert cx == {"n_calls": sum(len(g["calls"]) for g in steps), "n_steps": len(steps),
                      "n_turns": len(ex["turns"]), "n_servers": len(ex["servers"])}
        if ex["kind"] in ("abstention", "irrelevance"):
            assert not steps and len(ex["turns"]) == 1
        else:
            assert steps and 2 <= len(ex["turns"]) <= 3


def test_every_example_replays_on_fresh_sessions(examples: list[dict[str, Any]]) -> None:
    validator = Validator(get_catalog())
    designed = 0
    for ex in examples:
        rep = validator.replay(ex, f"test:{ex['id']}")
        assert rep.unexpected == [], (ex["id"], rep.unexpected)
        designed += sum(1 for t in ex["turns"] for g in t["gold"] for c in g["calls"] if c.get("expect_error"))
    assert designed > 0  # designed failures exist and replay as failures


def test_user_turns_mention_only_entities_of_the_initial_state(examples: list[dict[str, Any]]) -> None:
    validator = Validator(get_catalog())
    mentioned = 0
    for ex in examples:
        domains = sorted(set(ex["servers"]) | set(ex["meta"]["source_domains"]))
        state = " ".join(validator.snapshot(d, ex["seed"]) for d in domains)
        for turn in ex["turns"]:
            for token in ID_TOKEN.findall(turn["user"]):
                mentioned += 1
                assert token in state, (ex["id"], token)
    assert mentioned > 100


def test_sensitive_arguments_come_from_the_conversation(examples: list[dict[str, Any]]) -> None:
    validator = Validator(get_catalog())
    checked = 0
    for ex in examples:
        rep = validator.replay(ex, f"prov:{ex['id']}")
        assert validator.provenance(ex, rep) == []
        checked += sum(1 for t in ex["turns"] for g in t["gold"] for c in g["calls"]
                       if get_catalog().tools[c["name"]].sensitive)
    assert checked > 10


def test_knob_rates_within_three_points(examples: list[dict[str, Any]], tiny: Any) -> None:
    n = len(examples)
    cfg = preset("tiny")
    rates = {
        "distractors": sum(1 for ex in examples if ex["meta"]["distractors"]) / n,
        "enum_stripping": sum(1 for ex in examples if ex["meta"]["enum_stripped"]) / n,
        "irrelevance": sum(1 for ex in examples if ex["kind"] == "irrelevance") / n,
    }
    assert abs(rates["distractors"] - cfg.distractor_rate) <= 0.03
    assert abs(rates["enum_stripping"] - cfg.enum_strip_rate) <= 0.03
    assert abs(rates["irrelevance"] - cfg.irrelevance_rate) <= 0.03
    assert tiny.stats["knob_rates"]["distractors"] == pytest.approx(rates["distractors"], abs=1e-3)
    convs = [ex for ex in examples if ex["kind"] == "conversation"]
    levels = Counter(ex["meta"]["info_level"] for ex in convs)
    for level, target in zip(("complete", "missing", "minimal"), cfg.info_levels, strict=True):
        assert abs(levels[level] / len(convs) - target) <= 0.03, levels


def test_knobs_do_what_they_say(examples: list[dict[str, Any]]) -> None:
    catalog = get_catalog()
    for ex in examples:
        names = {t["function"]["name"] for t in ex["tools"]}
        for d in ex["meta"]["distractors"]:
            assert d in names and catalog.tools[d].domain not in ex["servers"]
            assert catalog.tools[d].domain not in ex["meta"]["source_domains"]
        assert 3 <= len(ex["meta"]["distractors"]) <= 8 or not ex["meta"]["distractors"]
        has_enum = '"enum"' in json.dumps(ex["tools"])
        if ex["meta"]["enum_stripped"]:
            assert not has_enum
        for hidden in ex["meta"].get("hidden", []):
            assert hidden not in names
        if ex["kind"] == "irrelevance":
            assert not set(ex["meta"]["source_domains"]) & {catalog.tools[n].domain for n in names} or not ex["meta"]["chain"]


def test_multi_server_parallel_and_recovery_examples_exist(examples: list[dict[str, Any]]) -> None:
    assert sum(1 for ex in examples if len(ex["servers"]) > 1) >= 10
    assert any(len(g["calls"]) > 1 for ex in examples for t in ex["turns"] for g in t["gold"])
    recoveries = Counter((ex["meta"].get("failure") or {}).get("recovery") for ex in examples)
    assert recoveries["retry"] > 0 and recoveries["give_up"] + recoveries["alternative"] > 0


def test_text_varies_for_the_same_tool(examples: list[dict[str, Any]]) -> None:
    """The same first tool is asked for in different words across conversations."""
    firsts: dict[str, set[str]] = {}
    for ex in examples:
        if ex["kind"] != "conversation" or not ex["turns"][0]["gold"]:
            continue
        name = ex["turns"][0]["gold"][0]["calls"][0]["name"]
        opener = re.sub(r"[A-Z]{2,}-\S+|\d+", "#", ex["turns"][0]["user"])[:40]
        firsts.setdefault(name, set()).add(opener)
    varied = [n for n, s in firsts.items() if len(s) >= 2]
    assert len(varied) >= 10


def test_shards_read_back_with_grain(tiny: Any, examples: list[dict[str, Any]]) -> None:
    import grain.python as grain

    total = 0
    for split in SPLITS:
        paths = shard_paths(tiny.out, split)
        assert paths
        source = grain.ArrayRecordDataSource(paths)
        lines = (tiny.out / f"{split}.jsonl").read_text().splitlines()
        assert len(source) == len(lines) == tiny.stats["splits"][split]
        assert json.loads(source[0]) == json.loads(lines[0])
        assert json.loads(source[len(source) - 1])["id"] == json.loads(lines[-1])["id"]
        total += len(source)
    assert total == len(examples)


def test_card_reports_the_build(tiny: Any) -> None:
    card = (tiny.out / "README.md").read_text()
    for heading in ("Splits and kinds", "Examples per server", "Knobs", "Tool coverage", "Rejections"):
        assert heading in card
    for fig in ("chain_length", "turns", "calls_per_example", "per_domain", "tool_coverage"):
        assert (tiny.out / "figures" / f"{fig}.png").read_bytes()[:4] == b"\x89PNG"
    stats = json.loads((tiny.out / "stats.json").read_text())
    assert stats["total"] == sum(stats["splits"].values()) == preset("tiny").total
    assert set(stats["tool_coverage"]) == set(get_catalog().tools)


def test_same_seed_is_byte_identical_and_another_seed_differs(tiny: Any, tmp_path: Path, graph_cache: Path) -> None:
    """Rebuilt through the CLI in a fresh interpreter with another hash seed and one worker instead
    of two: neither set iteration order nor the worker count may change a byte."""
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-m", "data.build", "--out", str(tmp_path / "again"), "--seed", "0",
                    "--size", "tiny", "--workers", "1", "--cache-dir", str(graph_cache), "--no-progress"],
                   check=True, env=env, cwd=Path(__file__).resolve().parents[2], capture_output=True)
    assert _digest(tmp_path / "again") == _digest(tiny.out)
    other = build(tmp_path / "other", seed=1, size="tiny", workers=2, cache_dir=graph_cache, progress=False)
    assert other.graph_cache["hits"] == len(get_catalog().domains)  # the graph was read from disk
    assert (other.out / "train.jsonl").read_bytes() != (tiny.out / "train.jsonl").read_bytes()
    assert {ex["seed"] for ex in load_examples(other.out)}.isdisjoint({ex["seed"] for ex in load_examples(tiny.out)})
