"""Clip-aware synthesis: a gold call may only use a value the model saw.

The episode driver shows the model each tool result clipped to ``EpisodeConfig.max_result_chars``
(``text[:limit]`` plus a "[truncated N characters]" note; :func:`visible` is that prefix). An
example whose gold call copies a value that an earlier result held only *past* the clip asks the
model for something it was never shown: ``list_members`` returns 487 characters, the id the next
call needs sits at character 421, the model sees 400.

:func:`clipped_refs` finds such values in a finished example: every scalar of a gold call's
arguments (strings of 3+ characters, numbers of 3+ digits; shorter ones occur everywhere) that no
user turn up to the call's turn (nor the system prompt) states, that an earlier result holds, and
that no earlier result holds inside its clip. Both synthesis paths drop those examples and count
them (``rejections.clipped_value`` in ``stats.json``): the kit's validator (:mod:`data.validate`)
and the byo synthesis (:mod:`data.byo.synth`), which also never offers a value past the clip to its
binder (:func:`data.byo.realise.realise`), so a chain is realised on what the model will see.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

MIN_CHARS = 3


def visible(text: str, limit: int | None) -> str:
    """What the model sees of a result: the episode driver's clip without its note."""
    return text if limit is None or len(text) <= limit else text[:limit]


def forms(value: Any) -> list[str]:
    """How a scalar can appear in text (as itself, or JSON-escaped inside a JSON result); empty for
    a value too short to tell apart from any other text."""
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int | float):
        s = str(value)
        return [s] if len(s.lstrip("-").replace(".", "")) >= MIN_CHARS else []
    if isinstance(value, str) and len(value) >= MIN_CHARS:
        escaped = json.dumps(value)[1:-1]
        return [value] if escaped == value else [value, escaped]
    return []


def scalars(args: Any, where: str = "") -> Iterator[tuple[str, Any]]:
    """(argument path, scalar) for every leaf of a call's arguments."""
    if isinstance(args, dict):
        for k, v in args.items():
            yield from scalars(v, f"{where}.{k}" if where else str(k))
    elif isinstance(args, list):
        for i, v in enumerate(args):
            yield from scalars(v, f"{where}[{i}]")
    else:
        yield where, args


def ordered_calls(turns: Sequence[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """(turn index, call) in the order gold runs them: by step id, then turn (as replay does)."""
    steps = sorted(((g["step"], ti, g) for ti, t in enumerate(turns) for g in t["gold"]), key=lambda x: (x[0], x[1]))
    return [(ti, c) for _, ti, g in steps for c in g["calls"]]


def clipped_refs(turns: Sequence[dict[str, Any]], outputs: Sequence[str], limit: int | None,
                 system: str = "") -> list[str]:
    """``tool.arg=value`` for each gold value only an earlier result past its clip holds; ``outputs``
    are the results of :func:`ordered_calls` in that order (one per call)."""
    if limit is None:
        return []
    calls = ordered_calls(turns)
    if len(outputs) != len(calls):
        raise ValueError(f"{len(outputs)} results for {len(calls)} gold calls")
    bad: list[str] = []
    for k, (ti, call) in enumerate(calls):
        said = system + "\n" + "\n".join(t["user"] for t in turns[: ti + 1])
        earlier = outputs[:k]
        for where, value in scalars(call["arguments"]):
            fs = forms(value)
            if not fs or any(f in said for f in fs):
                continue
            in_full = any(f in o for o in earlier for f in fs)
            if in_full and not any(f in visible(o, limit) for o in earlier for f in fs):
                bad.append(f"{call['name']}.{where}={value}")
    return bad


def seen(value: Any, text: str, limit: int | None) -> bool:
    """Whether a value taken from ``text`` lies inside its clip (a short value: always)."""
    fs = forms(value)
    return not fs or limit is None or any(f in visible(text, limit) for f in fs)
