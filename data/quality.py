"""Language-quality figures of a built dataset: does it read like people, and is every gold call real?

Computed from the written records alone (plus live servers for the two state checks), so the card,
``benchmarks/bench_data_quality.py`` and the tests measure the same thing the same way:

* **description overlap** — gold calls whose user text (every user turn up to the call's) contains a
  run of >= 5 consecutive words of the called tool's description: a request copied from the docs;
* **param echo** — gold calls whose user text spells an argument as ``name: value`` / ``name value``
  (the parameter's name or its words, then the value), or leaks a snake_case parameter name;
* **distinct 4-grams** — distinct / total word 4-grams over all user turns (variety);
* **id in text** — user turns that state an internal id (one the domain's ``SPOKEN`` list does not
  name, nor a ``SELF`` parameter the system prompt gives);
* **label resolution** — entity labels the user was shown (``meta.mentions``) that resolve, through
  the domain's hidden discovery tools, to exactly the gold id (:func:`data.sampler.resolve_mention`);
* **no-op gold** — writing gold calls that, replayed on fresh sessions, leave the state unchanged
  (:meth:`data.validate.Validator.replay` compares snapshots around every write).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from data import intents
from data.catalog import Catalog, words
from data.sampler import LiveStateSampler, resolve_mention
from data.validate import ID_TOKEN

WORD = re.compile(r"[a-z0-9']+")


def _words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def runs(text: str, n: int = 5) -> set[tuple[str, ...]]:
    w = _words(text)
    return {tuple(w[i:i + n]) for i in range(len(w) - n + 1)}


def _calls(ex: dict[str, Any]):
    """(turn index, call) for every gold call, in turn order."""
    for ti, turn in enumerate(ex["turns"]):
        for g in turn["gold"]:
            for call in g["calls"]:
                yield ti, call


def _said(ex: dict[str, Any], ti: int) -> str:
    return " ".join(t["user"] for t in ex["turns"][: ti + 1])


def copies_description(catalog: Catalog, ex: dict[str, Any], ti: int, call: dict[str, Any]) -> bool:
    tool = catalog.tools.get(call["name"])
    return tool is not None and bool(runs(_said(ex, ti)) & runs(tool.description))


def _value_texts(value: Any) -> list[str]:
    if isinstance(value, bool):
        return ["yes", "no", "true", "false"]
    if isinstance(value, list):
        return [t for v in value for t in _value_texts(v)]
    if isinstance(value, dict) or value is None:
        return []
    text = str(value)
    out = [text]
    if isinstance(value, int | float) and not isinstance(value, bool):
        out.append(f"{value:,.2f}" if isinstance(value, float) else f"{value:,}")
    return [t for t in out if t]


def echoes_params(ex: dict[str, Any], ti: int, call: dict[str, Any]) -> bool:
    """``name: value`` / ``name value`` for any argument, or a snake_case parameter name, in the text."""
    text = ex["turns"][ti]["user"]
    low = text.lower()
    for p, value in call["arguments"].items():
        if "_" in p and re.search(rf"(?<![\w]){re.escape(p.lower())}(?![\w])", low):
            return True
        names = {p.lower(), " ".join(words(p))}
        w = [x for x in words(p) if x not in ("id", "ids")]
        if w:
            names.add(" ".join(w))
        for name in names:
            for v in _value_texts(value):
                pat = rf"(?<![\w]){re.escape(name)}\s*[:=]?\s*[\"'(]?\$?{re.escape(v.lower())}(?![\w])"
                if re.search(pat, low):
                    return True
    return False


def internal_ids(catalog: Catalog, ex: dict[str, Any], ti: int) -> list[str]:
    """Internal ids (per the domains' ``SPOKEN``/``SELF`` profile) the user turn ``ti`` states."""
    spoken: set[str] = set()
    for _, call in _calls(ex):
        tool = catalog.tools.get(call["name"])
        if tool is None:
            continue
        prof = intents.profile(tool.domain)
        for p, v in call["arguments"].items():
            t = tool.param_types.get(p)
            if p in prof.self_params or (t is not None and t in prof.spoken):
                spoken.update(str(x) for x in (v if isinstance(v, list) else [v]))
    return [tok for tok in ID_TOKEN.findall(ex["turns"][ti]["user"]) if tok not in spoken]


def measure(examples: list[dict[str, Any]], catalog: Catalog, *, sampler: LiveStateSampler | None = None,
            validator: Any = None) -> dict[str, Any]:
    """Every figure of the module docstring over ``examples`` (state checks only when given the means)."""
    n_calls = overlap = echo = 0
    turns = id_turns = 0
    grams: Counter[tuple[str, ...]] = Counter()
    mentions = resolved = 0
    unresolved: list[str] = []
    writes = noops = 0
    for ex in examples:
        for ti, call in _calls(ex):
            n_calls += 1
            overlap += copies_description(catalog, ex, ti, call)
            echo += echoes_params(ex, ti, call)
        for ti, turn in enumerate(ex["turns"]):
            turns += 1
            id_turns += bool(internal_ids(catalog, ex, ti))
            w = _words(turn["user"])
            grams.update(tuple(w[i:i + 4]) for i in range(len(w) - 3))
        if sampler is not None:
            for m in ex["meta"].get("mentions", []):
                mentions += 1
                if resolve_mention(sampler, ex["seed"], m):
                    resolved += 1
                elif len(unresolved) < 20:
                    unresolved.append(f"{ex['id']}:{m['label']}")
        if validator is not None and ex["turns"] and any(t["gold"] for t in ex["turns"]):
            rep = validator.replay(ex, f"quality:{ex['id']}", check_effects=True)
            writes += rep.writes
            noops += len(rep.noops)

    def rate(a: int, b: int) -> float:
        return round(a / b, 4) if b else 0.0

    out: dict[str, Any] = {
        "gold_calls": n_calls,
        "description_overlap_rate": rate(overlap, n_calls),
        "param_echo_rate": rate(echo, n_calls),
        "distinct_4gram_ratio": rate(len(grams), sum(grams.values())),
        "user_turns": turns,
        "id_in_text_rate": rate(id_turns, turns),
    }
    if sampler is not None:
        out.update(label_mentions=mentions, label_resolution_rate=rate(resolved, mentions) if mentions else 1.0,
                   unresolved_labels=unresolved)
    if validator is not None:
        out.update(gold_writes=writes, noop_gold_rate=rate(noops, writes))
    return out
