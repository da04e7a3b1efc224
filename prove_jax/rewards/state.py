"""Optional final-state term (ours; the paper's reward never looks at server state).

The episode driver snapshots every opened server at the end of a rollout when asked
(``EpisodeConfig.snapshots``; Contract 3 ``final_state``) and, separately, after replaying the gold
calls on a fresh session with the same seed. The reward package stays pure: both snapshot maps are *inputs* here.

Measure — micro-averaged top-level agreement, in [0, 1]:

* inputs are ``{server: snapshot}``; a snapshot given as a JSON string is parsed (a string that
  is not JSON is compared as a plain string);
* a dict snapshot contributes one *entry* per top-level key in the union of both sides' keys; an
  entry agrees when the key is on both sides with JSON-equal values (``json_eq``);
* a non-dict snapshot (list, scalar) is a single entry; a server present on one side only, or a
  dict on one side against a non-dict on the other, contributes all its entries as disagreements;
* score = agreeing entries / all entries; no entries at all (both sides empty) → 1.0, since the
  two states are identical; a missing side (``None``) → 0.0, since nothing was verified.

Top-level entries are the natural unit for our servers' snapshots (``accounts``, ``orders``,
``cart`` …): a rollout that performs one of three required writes earns partial credit instead of
the all-or-nothing hash equality τ² uses.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from prove_jax.rewards.schema import json_eq


def _parse(snapshot: Any) -> Any:
    if isinstance(snapshot, str | bytes):
        try:
            return json.loads(snapshot)
        except ValueError:
            return snapshot
    return snapshot


def _entries(snapshot: Any) -> int:
    return len(snapshot) if isinstance(snapshot, Mapping) else 1


def state_agreement(final_state: Mapping[str, Any] | None, gold_final_state: Mapping[str, Any] | None) -> float:
    """Fraction of top-level snapshot entries on which the two states agree (see module doc)."""
    if not isinstance(final_state, Mapping) or not isinstance(gold_final_state, Mapping):
        return 0.0
    total = 0
    agree = 0
    for server in final_state.keys() | gold_final_state.keys():
        if server not in final_state or server not in gold_final_state:
            total += _entries(_parse(final_state.get(server, gold_final_state.get(server))))
            continue
        ours = _parse(final_state[server])
        gold = _parse(gold_final_state[server])
        if isinstance(ours, Mapping) and isinstance(gold, Mapping):
            for key in ours.keys() | gold.keys():
                total += 1
                if key in ours and key in gold and json_eq(ours[key], gold[key]):
                    agree += 1
        elif isinstance(ours, Mapping) or isinstance(gold, Mapping):  # dict vs non-dict: all differ
            total += max(_entries(ours), _entries(gold))
        else:
            total += 1
            agree += json_eq(ours, gold)
    return agree / total if total else 1.0
