"""Replay validation, provenance of secrets, grounding of ids, Jaccard dedup (paper §3.2 step 5).

* **Replay** — every example's gold calls run again, in step order, on freshly reset sessions of the
  example's servers. Schema errors (a name not in the visible tools, arguments that do not fit the
  visible schema) and execution errors count; empty results do not; a call marked
  ``expect_error`` counts as an error only if it *succeeds*. Drop when the error rate exceeds 30 %;
  with ``strict`` (the programmatic teacher, which executed every call while writing the example)
  any unexpected error drops it, because it means the example is not reproducible.
* **Effect** — a writing gold call (not read-only, not a designed failure) that leaves the state
  exactly as it was (a ``replace_in_file`` with 0 replacements, a setting set to its own value) is a
  no-op: the example teaches a call that does nothing, so it is dropped.
* **Labels** — every entity label a user turn shows (``meta.mentions``) must single out exactly the
  gold id among the entities the domain's discovery tools list (:func:`data.sampler.resolve_mention`).
* **Provenance** — a sensitive argument (``x-sensitive`` in the schema: PINs, passwords, card
  numbers) must appear verbatim in an earlier-or-current user turn or in an earlier tool output.
* **Clip** — a gold value copied from an earlier result must lie inside the clip the model is shown
  (``max_result_chars``; :func:`data.clip.clipped_refs`).
* **Grounding** — every entity id a user turn mentions exists in the initial state of the servers.
* **Dedup** — Jaccard similarity of gold-call sets (name + arguments) >= 0.70 to an earlier kept
  example drops the later one (exact: prefix filtering with a frequency order, then verification).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator

from data.catalog import Catalog
from data.clip import clipped_refs
from data.sampler import LiveStateSampler, resolve_mention

ID_TOKEN = re.compile(r"(?<![\w/.-])[A-Z]{2,6}-[A-Z0-9]+(?:-[A-Z0-9]+)*(?![\w-])")


@dataclass
class Replay:
    n_calls: int = 0
    schema_errors: int = 0
    exec_errors: int = 0
    unexpected: list[str] = field(default_factory=list)
    outputs: list[tuple[int, str]] = field(default_factory=list)  # (turn, output text) in call order
    writes: int = 0  # writing calls whose effect was checked
    noops: list[str] = field(default_factory=list)  # those that changed nothing

    @property
    def error_rate(self) -> float:
        return (self.schema_errors + self.exec_errors) / self.n_calls if self.n_calls else 0.0


class Validator:
    """Checks one finished example against live servers."""

    def __init__(self, catalog: Catalog, *, max_error_rate: float = 0.3, strict: bool = True,
                 sampler: LiveStateSampler | None = None, max_result_chars: int | None = None) -> None:
        self.catalog = catalog
        self.max_result_chars = max_result_chars
        self.sampler = sampler
        self.max_error_rate = max_error_rate
        self.strict = strict
        self._snapshots: dict[tuple[str, int], str] = {}
        self._validators: dict[str, Draft202012Validator] = {}

    def snapshot(self, domain: str, seed: int) -> str:
        key = (domain, seed)
        if key not in self._snapshots:
            session = f"snapshot:{domain}:{seed}"
            self._snapshots[key] = self.catalog.snapshot(domain, session, seed)
            self.catalog.close(domain, session, seed)
        return self._snapshots[key]

    def replay(self, ex: dict[str, Any], tag: str, check_effects: bool = True) -> Replay:
        visible = {t["function"]["name"]: t["function"]["parameters"] for t in ex["tools"]}
        seed = ex["seed"]
        sessions = {d: f"replay:{tag}:{d}" for d in ex["servers"]}
        for d, s in sessions.items():
            self.catalog.reset(d, s, seed)
        out = Replay()
        steps = sorted(((g["step"], ti, g) for ti, t in enumerate(ex["turns"]) for g in t["gold"]), key=lambda x: x[0])
        try:
            for _, ti, g in steps:
                for call in g["calls"]:
                    out.n_calls += 1
                    name, args = call["name"], call["arguments"]
                    if name not in visible or not self._fits(name, visible[name], args):
                        out.outputs.append((ti, ""))
                        out.schema_errors += 1
                        out.unexpected.append(f"schema:{name}")
                        continue
                    domain = self.catalog.tools[name].domain
                    if domain not in sessions:
                        out.outputs.append((ti, ""))
                        out.exec_errors += 1
                        out.unexpected.append(f"server_not_opened:{name}")
                        continue
                    tool = self.catalog.tools[name]
                    effect = check_effects and not tool.read_only and not call.get("expect_error")
                    before = self.catalog.state(domain, sessions[domain], seed) if effect else None
                    text, err = self.catalog.call(domain, name, args, sessions[domain], seed)
                    out.outputs.append((ti, text))
                    if err != bool(call.get("expect_error")):
                        out.exec_errors += 1
                        out.unexpected.append(f"{'error' if err else 'unexpected_success'}:{name}")
                    elif effect:
                        out.writes += 1
                        if self.catalog.state(domain, sessions[domain], seed) == before:
                            out.noops.append(name)
        finally:
            for d, s in sessions.items():
                self.catalog.close(d, s, seed)
        return out

    def _fits(self, name: str, schema: dict[str, Any], args: Any) -> bool:
        key = json.dumps(schema, sort_keys=True)
        validator = self._validators.get(key)
        if validator is None:
            validator = self._validators[key] = Draft202012Validator(schema)
        return validator.is_valid(args)

    def provenance(self, ex: dict[str, Any], replay: Replay) -> list[str]:
        """Sensitive values not traceable to an earlier user turn or tool output."""
        bad = []
        outputs_before: list[str] = []
        seen_outputs = iter(replay.outputs)
        for ti, turn in enumerate(ex["turns"]):
            said = " ".join(t["user"] for t in ex["turns"][: ti + 1])
            for g in sorted(turn["gold"], key=lambda g: g["step"]):
                for call in g["calls"]:
                    tool = self.catalog.tools.get(call["name"])
                    for p in tool.sensitive if tool else ():
                        value = call["arguments"].get(p)
                        if value is not None and str(value) not in said and not any(str(value) in o for o in outputs_before):
                            bad.append(f"{call['name']}.{p}")
                    nxt = next(seen_outputs, None)
                    if nxt is not None:
                        outputs_before.append(nxt[1])
        return bad

    def unresolved_labels(self, ex: dict[str, Any]) -> list[str]:
        """Labels shown to the user that do not single out their gold id
        (:func:`data.sampler.resolve_mention`)."""
        assert self.sampler is not None
        return [m["label"] for m in ex["meta"].get("mentions", [])
                if not resolve_mention(self.sampler, ex["seed"], m)]

    def ungrounded_ids(self, ex: dict[str, Any]) -> list[str]:
        domains = sorted(set(ex["servers"]) | set(ex.get("meta", {}).get("source_domains", [])))
        state = " ".join(self.snapshot(d, ex["seed"]) for d in domains)
        return sorted({tok for t in ex["turns"] for tok in ID_TOKEN.findall(t["user"]) if tok not in state})

    def check(self, ex: dict[str, Any], tag: str) -> str | None:
        """The rejection reason, or None when the example is kept."""
        rep = self.replay(ex, tag)
        if rep.error_rate > self.max_error_rate:
            return "replay_error_rate"
        if self.strict and rep.unexpected:
            return "replay_unexpected_error"
        if rep.noops:
            return "noop_gold_call"
        if self.sampler is not None and self.unresolved_labels(ex):
            return "ambiguous_label"
        if self.provenance(ex, rep):
            return "provenance_sensitive"
        if clipped_refs(ex["turns"], [o for _, o in rep.outputs], self.max_result_chars, ex.get("system", "")):
            return "clipped_value"
        if self.ungrounded_ids(ex):
            return "ungrounded_user_id"
        return None


def jaccard_dedup(item_sets: list[list[str]], threshold: float = 0.7) -> list[int | None]:
    """For each set, the index of an earlier *kept* set with Jaccard >= threshold (None: keep it)."""
    freq: Counter[str] = Counter(x for s in item_sets for x in set(s))
    index: dict[str, list[int]] = {}
    kept: dict[int, set[str]] = {}
    result: list[int | None] = []
    for i, items in enumerate(item_sets):
        s = sorted(set(items), key=lambda x: (freq[x], x))
        n = len(s)
        if n == 0:
            result.append(None)
            continue
        prefix = s[: n - math.ceil(threshold * n) + 1]
        mine = set(s)
        dup = None
        cands = sorted({j for x in prefix for j in index.get(x, ())})
        for j in cands:
            other = kept[j]
            m = len(other)
            if m < threshold * n or n < threshold * m:
                continue
            inter = len(mine & other)
            if inter / (n + m - inter) >= threshold:
                dup = j
                break
        result.append(dup)
        if dup is None:
            kept[i] = mine
            for x in prefix:
                index.setdefault(x, []).append(i)
    return result


def jaccard(a: list[str], b: list[str]) -> float:
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa | sb else 1.0
