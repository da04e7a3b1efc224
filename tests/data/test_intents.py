"""Intent banks: every phrasing belongs to a registered tool, names only that tool's parameters, and
never copies the tool's description; every registered domain has a bank for all its user tools."""

from __future__ import annotations

import importlib
import inspect
import re

import pytest

import servers
from data import intents

SLOT = re.compile(r"\{(\w+)\}")
BANK, GOALS = intents.load()


def _tools(domain: str) -> dict:
    return importlib.import_module(f"servers.{domain}").domain.tools


def _runs(text: str, n: int = 5) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9']+", text.lower())
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


@pytest.mark.parametrize("domain", servers.DOMAINS)
def test_bank_slots_are_parameters_and_no_description_is_copied(domain: str) -> None:
    tools = _tools(domain)
    for name, spec in tools.items():
        entry = BANK.get(name)
        if entry is None:
            continue
        params = set(inspect.signature(spec.fn).parameters)
        described = _runs(spec.description)
        for kind in ("ask", "vague"):
            for phrase in entry.get(kind, []):
                assert set(SLOT.findall(phrase)) <= params, (name, phrase)
                assert not (_runs(phrase) & described), f"{name}: {phrase!r} copies its description"


@pytest.mark.parametrize("domain", servers.DOMAINS)
def test_goals_name_real_tools_and_their_parameters(domain: str) -> None:
    tools = _tools(domain)
    for goal in GOALS.get(domain, []):
        assert set(goal["tools"]) <= set(tools), goal
        assert goal["ask"], goal
        params = {p for t in goal["tools"] for p in inspect.signature(tools[t].fn).parameters}
        assert all(set(SLOT.findall(a)) <= params for a in goal["ask"]), goal


@pytest.mark.parametrize("domain", servers.DOMAINS)
def test_new_domains_have_full_banks(domain: str) -> None:
    """Every user tool has several phrasings, and common goals span several tools, so synthesis
    never falls back to generic wording for these domains."""
    users = [s.name for s in _tools(domain).values() if s.kind == "user"]
    for name in users:
        assert len(BANK.get(name, {}).get("ask", [])) >= 3 and len(BANK[name].get("vague", [])) >= 2, name
    assert len(GOALS[domain]) >= 6
    for goal in GOALS[domain]:
        assert len(goal["tools"]) >= 2 and len(goal["ask"]) >= 2, goal


def test_every_bank_entry_belongs_to_a_registered_tool() -> None:
    owned = {n for d in servers.DOMAINS for n in _tools(d)}
    modules = {m for m in GOALS}
    assert set(BANK) <= owned, sorted(set(BANK) - owned)
    assert modules <= set(servers.DOMAINS), sorted(modules - set(servers.DOMAINS))
