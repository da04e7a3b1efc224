"""Clip-aware synthesis (:mod:`data.clip`): a gold call may only use a value the model saw — in a
user turn, or inside the clipped text (``max_result_chars``) of an earlier result. Checked on a
hand-made record, on the kit's validator, and on a byo synthesis over a real stdio server whose
listing puts the last ids past the clip."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import data.byo.realise as realise_mod
from data.byo.synth import synthesise
from data.clip import clipped_refs, visible
from data.config import SynthConfig
from prove_jax.env.byo import ServerSpec

ROSTER = Path(__file__).resolve().parent / "byo_servers" / "roster.py"
sys.path.insert(0, str(ROSTER.parent))
import roster  # noqa: E402

LISTING = json.dumps({"members": roster.MEMBERS})
LIMIT = 400
PAST = [m["member_id"] for m in roster.MEMBERS if LISTING.index(m["member_id"]) + len(m["member_id"]) > LIMIT]


def _record(user: str, member_id: str) -> dict[str, Any]:
    return {"system": "", "turns": [{"user": user, "reply": "", "gold": [
        {"step": 0, "depends_on": [], "calls": [{"name": "list_members", "arguments": {}}]},
        {"step": 1, "depends_on": [0], "calls": [{"name": "get_member", "arguments": {"member_id": member_id}}]}]}]}


def test_a_value_past_the_clip_is_flagged_unless_stated_or_shown() -> None:
    assert PAST == ["mbr-7403", "mbr-7420"] and len(LISTING) > LIMIT
    outputs = [LISTING, "{}"]
    assert clipped_refs(_record("Show the last member.", "mbr-7420")["turns"], outputs, LIMIT) == \
        ["get_member.member_id=mbr-7420"]
    assert clipped_refs(_record("Show the first member.", "mbr-7301")["turns"], outputs, LIMIT) == []
    assert clipped_refs(_record("Show member mbr-7420.", "mbr-7420")["turns"], outputs, LIMIT) == [], "stated"
    assert clipped_refs(_record("Show the last member.", "mbr-7420")["turns"], outputs, 600) == [], "not clipped"
    assert clipped_refs(_record("x", "mbr-7420")["turns"], outputs, None) == []
    assert visible(LISTING, LIMIT) == LISTING[:LIMIT]


def test_the_kit_validator_drops_a_clipped_reference() -> None:
    """A kit example (crm): list the leads, then move the listing's last lead on. Kept unclipped or
    with the id inside the clip; ``clipped_value`` with the clip just before the id."""
    from data.catalog import get_catalog
    from data.validate import Validator

    catalog = get_catalog(("crm",))
    text, err = catalog.call("crm", "list_crm_leads", {}, "clip-probe", 0)
    catalog.close("crm", "clip-probe", 0)
    target = next(lead for lead in reversed(json.loads(text)["leads"]) if "contacted" in lead["allowed_next_statuses"])
    at = text.index(target["lead_id"])
    assert not err and at > 2000
    gold = [{"step": 0, "depends_on": [], "calls": [{"name": "list_crm_leads", "arguments": {}}]},
            {"step": 1, "depends_on": [0], "calls": [{"name": "update_crm_lead_status",
                                                      "arguments": {"lead_id": target["lead_id"], "status": "contacted"}}]}]
    ex = {"id": "clip", "kind": "conversation", "servers": ["crm"], "seed": 0, "system": "", "meta": {},
          "tools": [{"type": "function", "function": {"name": n, "description": "", "parameters": catalog.tools[n].schema}}
                    for n in ("list_crm_leads", "update_crm_lead_status")],
          "turns": [{"user": "Mark the last lead of the list as contacted.", "reply": "", "gold": gold}]}
    assert Validator(catalog, max_result_chars=None).check(ex, "a") is None
    assert Validator(catalog, max_result_chars=at + len(target["lead_id"])).check(ex, "b") is None
    assert Validator(catalog, max_result_chars=at).check(ex, "c") == "clipped_value"


def _roster(tmp: Path) -> ServerSpec:
    return ServerSpec(name="roster", command=["{python}", str(ROSTER)], warm=0)


CFG = SynthConfig(n_conversation=3, n_clarification=0, n_abstention_irrelevance=0, splits=(0.5, 0.25, 0.25),
                  max_result_chars=LIMIT, dedup_threshold=1.0)


def _used_past_the_clip(out: Path) -> list[str]:
    """Gold get_member ids that lie past the clip of the listing and that no user turn states."""
    bad = []
    for split in ("train", "validation", "test"):
        for line in (out / f"{split}.jsonl").open():
            ex = json.loads(line)
            said = " ".join(t["user"] for t in ex["turns"])
            for t in ex["turns"]:
                for g in t["gold"]:
                    for c in g["calls"]:
                        v = c["arguments"].get("member_id")
                        if v in PAST and v not in said:
                            bad.append(v)
    return bad


def _copied(out: Path) -> int:
    return sum(1 for s in ("train", "validation", "test") for line in (out / f"{s}.jsonl").open()
               if '"get_member"' in line and '"list_members"' in line)


def test_byo_synthesis_realises_on_what_the_model_sees(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """(Its stderr also shows each phase's closing line, with counts and time: data.byo.progress.)"""
    res = synthesise(tmp_path / "data", [_roster(tmp_path)], seed=0, cfg=CFG, run_dir=tmp_path / "run")
    closing = [x for x in re.split(r"[\r\n]", capfd.readouterr().err) if re.search(r" in \d+\.\ds$", x)]
    for phase, counts in (("byo roster: probing: ", r"^\d+ calls, \d+ edges"),
                          ("byo roster: state sampling: ", r"^\d+ calls, 8 live entities"),
                          ("byo: realising: ", r"^\d+ slots, \d+ examples realised, \d+ kept after dedup"),
                          ("byo: replay: ", r"^\d+ examples replayed on fresh sessions, \d+ valid")):
        line = next((x for x in closing if x.startswith(phase)), "")
        assert re.search(counts, line.removeprefix(phase)), (phase, closing)
    assert _used_past_the_clip(tmp_path / "data") == []
    assert res.stats["clip"]["hidden_values"] > 0, "the ids past the clip were offered to the binder"
    assert _copied(tmp_path / "data") > 0, "chains still copy ids the model sees"
    stats = json.loads((tmp_path / "data" / "stats.json").read_text())
    assert stats["clip"]["max_result_chars"] == LIMIT


def test_byo_synthesis_drops_what_the_binder_lets_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A binder blind to the clip (every value offered): the examples that copy a hidden id are
    dropped and counted, none is kept."""
    monkeypatch.setattr(realise_mod, "visible_values",
                        lambda model, text, origin, tool, base: realise_mod.values_of(text, origin, tool, base))
    res = synthesise(tmp_path / "data", [_roster(tmp_path)], seed=0, cfg=CFG, run_dir=tmp_path / "run")
    assert _used_past_the_clip(tmp_path / "data") == []
    assert res.stats["rejections"].get("clipped_value", 0) > 0
    assert res.stats["clip"]["dropped_examples"] == res.stats["rejections"]["clipped_value"]
