"""Language quality of the tiny build, each figure bounded, and each measure shown catching a case
built to trip it (so a degrading generator or a broken metric fails here)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from data.catalog import get_catalog
from data.quality import copies_description, echoes_params, internal_ids, measure
from data.sampler import LiveStateSampler, resolve_mention
from data.validate import Validator


@pytest.fixture(scope="module")
def sampler() -> LiveStateSampler:
    return LiveStateSampler(get_catalog())


@pytest.fixture(scope="module")
def quality(examples: list[dict[str, Any]], sampler: LiveStateSampler) -> dict[str, Any]:
    catalog = get_catalog()
    return measure(examples, catalog, sampler=sampler, validator=Validator(catalog))


def test_user_turns_do_not_read_like_tool_docs(quality: dict[str, Any]) -> None:
    assert quality["gold_calls"] > 500
    assert quality["description_overlap_rate"] <= 0.05, quality
    assert quality["param_echo_rate"] <= 0.10, quality
    assert quality["distinct_4gram_ratio"] >= 0.6, quality


def test_named_entities_are_looked_up_and_their_labels_resolve(quality: dict[str, Any],
                                                               examples: list[dict[str, Any]]) -> None:
    """Every label shown to a user singles out its gold id through discovery, on every example; and
    naming (not ids) is the norm: labels are common and most user turns state no internal id."""
    assert quality["label_mentions"] >= 100, quality
    assert quality["label_resolution_rate"] == 1.0, quality["unresolved_labels"]
    assert quality["id_in_text_rate"] <= 0.45, quality
    looked_up = sum(1 for ex in examples for m in ex["meta"].get("mentions", [])
                    if any(m["label"] in t["user"] for t in ex["turns"]))
    assert looked_up == quality["label_mentions"]


def test_no_gold_write_is_a_no_op(quality: dict[str, Any]) -> None:
    assert quality["gold_writes"] > 300
    assert quality["noop_gold_rate"] == 0.0, quality


def test_rejections_are_bounded_on_a_fixed_seed(tiny: Any) -> None:
    """Validation may not quietly throw away a large share of what the generator makes."""
    rej = tiny.stats["rejections"]
    generated = tiny.stats["total"] + sum(rej.values())
    assert sum(rej.values()) / generated <= 0.12, rej
    for reason in ("ambiguous_label", "noop_gold_call", "replay_unexpected_error", "provenance_sensitive",
                   "ungrounded_user_id"):
        assert rej.get(reason, 0) / generated <= 0.03, (reason, rej)
    assert "quality" in tiny.stats and tiny.stats["quality"]["description_overlap_rate"] <= 0.05


def _conv(examples: list[dict[str, Any]], pred: Any) -> dict[str, Any]:
    return copy.deepcopy(next(e for e in examples if e["kind"] == "conversation" and pred(e)))


def test_metrics_catch_copied_docs_and_echoed_parameters(examples: list[dict[str, Any]]) -> None:
    catalog = get_catalog()
    ex = _conv(examples, lambda e: e["turns"][0]["gold"])
    call = ex["turns"][0]["gold"][0]["calls"][0]
    assert not copies_description(catalog, ex, 0, call)
    ex["turns"][0]["user"] += " " + catalog.tools[call["name"]].description
    assert copies_description(catalog, ex, 0, call)
    ex = _conv(examples, lambda e: e["turns"][0]["gold"] and e["turns"][0]["gold"][0]["calls"][0]["arguments"])
    call = ex["turns"][0]["gold"][0]["calls"][0]
    p, v = next(iter(call["arguments"].items()))
    assert not echoes_params(ex, 0, call) or p in ex["turns"][0]["user"]
    ex["turns"][0]["user"] += f" ({p.replace('_', ' ')}: {v})"
    assert echoes_params(ex, 0, call)


def test_internal_ids_are_told_from_spoken_ones(examples: list[dict[str, Any]]) -> None:
    catalog = get_catalog()
    ex = _conv(examples, lambda e: "banking" in e["servers"])
    before = internal_ids(catalog, ex, 0)
    ex["turns"][0]["user"] += " It's about ACC-0001."
    assert internal_ids(catalog, ex, 0) == [*before, "ACC-0001"]


def test_ambiguous_label_is_rejected(examples: list[dict[str, Any]], sampler: LiveStateSampler) -> None:
    """A label that fits several entities (or names another one) cannot stand in for an id."""
    ex = _conv(examples, lambda e: e["meta"].get("mentions"))
    m = ex["meta"]["mentions"][0]
    validator = Validator(get_catalog(), sampler=sampler)
    assert resolve_mention(sampler, ex["seed"], m) and validator.check(ex, "label-ok") is None
    full = sampler.full(m["domain"], ex["seed"])
    other = next(r for r in full.rows[m["type"]] if not r.ref and str(r.id) != str(m["id"]))
    wrong = dict(m, id=other.id)
    assert not resolve_mention(sampler, ex["seed"], wrong)
    ex["meta"]["mentions"][0] = wrong
    assert validator.check(ex, "label-bad") == "ambiguous_label"


def test_no_op_write_is_rejected(examples: list[dict[str, Any]]) -> None:
    """A write made a second time with the same arguments often changes nothing (a setting set to its
    own value): such a gold call teaches nothing, and the validator must drop the example."""
    catalog = get_catalog()
    validator = Validator(catalog)
    hits = 0
    for ex in examples:
        if ex["kind"] != "conversation" or ex["meta"]["failure"]:
            continue
        last = ex["turns"][-1]["gold"][-1]["calls"][-1] if ex["turns"][-1]["gold"] else None
        if last is None or catalog.tools[last["name"]].read_only:
            continue
        twice = copy.deepcopy(ex)
        twice["turns"][-1]["gold"][-1]["calls"].append(copy.deepcopy(last))
        rep = validator.replay(twice, f"twice:{ex['id']}")
        if rep.noops:
            assert rep.noops == [last["name"]] and not validator.replay(ex, f"once:{ex['id']}").noops
            assert validator.check(twice, f"twice2:{ex['id']}") == "noop_gold_call"
            hits += 1
    assert hits >= 3
